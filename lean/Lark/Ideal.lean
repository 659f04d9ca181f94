import Lark.Value

/-!
# Ideal functions

The approximate and transcendental instructions (`ex2.approx`, `lg2.approx`, `sqrt.approx`,
`rsqrt.approx`, `sin.approx`, `cos.approx`, `tanh.approx`) are modelled by the *ideal* functions
they approximate. Those functions are not rational-valued, so the model does not define them:
everything that uses them takes an `I : Ideal`, a bundle of functions `Rat → Rat` together with
the identities the equivalence engine relies on. A theorem proved for every `I : Ideal` holds for
whatever functions satisfy those identities — it can use nothing else about `exp` or `sqrt`.

There is never a global `axiom`. A bundle of identities could be contradictory, and then every
theorem quantified over `I : Ideal` would be vacuous; `Ideal.degenerate` below is an explicit
instance, so `Ideal.nonempty` proves the identities consistent. That is also why the fields are
only identities that *have* a rational model: `sqrt x * sqrt x = x` or `log (exp x) = x` have no
solution over `Rat` (no rational squares to 2; no injective homomorphism from `(ℚ, +)` into
`(ℚ>0, ×)`), so stating them here would make `Ideal` empty. Approximation (how far
`ex2.approx` is from `2^x`) is out of scope, as rounding is (ARCHITECTURE.md, promise 6).
-/

namespace Lark

/-- The ideal functions behind the approximate instructions, with the identities proofs may use.
`ln2` is an abstract constant standing for `ln 2`; `ex2` and `lg2` are tied to `exp` and `log`
through it. -/
structure Ideal where
  /-- The natural exponential. -/
  exp : Rat → Rat
  /-- The natural logarithm (meaningful for positive arguments). -/
  log : Rat → Rat
  /-- The square root (meaningful for non-negative arguments). -/
  sqrt : Rat → Rat
  /-- The reciprocal square root (`rsqrt.approx`). -/
  rsqrt : Rat → Rat
  /-- `2 ^ x` (`ex2.approx`). -/
  ex2 : Rat → Rat
  /-- `log₂ x` (`lg2.approx`). -/
  lg2 : Rat → Rat
  /-- The hyperbolic tangent (`tanh.approx`). -/
  tanh : Rat → Rat
  /-- The error function (references such as GELU). -/
  erf : Rat → Rat
  /-- The sine (`sin.approx`). -/
  sin : Rat → Rat
  /-- The cosine (`cos.approx`). -/
  cos : Rat → Rat
  /-- An abstract stand-in for `ln 2`. -/
  ln2 : Rat
  /-- An abstract stand-in for `π` (references use it: `math.pi`, the tanh form of GELU). -/
  pi : Rat
  exp_zero : exp 0 = 1
  exp_add : ∀ a b, exp (a + b) = exp a * exp b
  exp_pos : ∀ x, 0 < exp x
  log_one : log 1 = 0
  log_mul : ∀ a b, 0 < a → 0 < b → log (a * b) = log a + log b
  ex2_def : ∀ x, ex2 x = exp (x * ln2)
  lg2_def : ∀ x, lg2 x = log x / ln2
  sqrt_nonneg : ∀ x, 0 ≤ sqrt x
  rsqrt_def : ∀ x, rsqrt x = 1 / sqrt x
  tanh_def : ∀ x, tanh x = (exp (2 * x) - 1) / (exp (2 * x) + 1)
  erf_neg : ∀ x, erf (-x) = -erf x
  sin_zero : sin 0 = 0
  cos_zero : cos 0 = 1

/-- A (useless but honest) model of every identity of `Ideal`: it shows they are consistent, so no
theorem over `I : Ideal` is vacuous. Each function is chosen so that its defining identity holds
by computation. -/
def Ideal.degenerate : Ideal where
  exp := fun _ => 1
  log := fun _ => 0
  sqrt := fun _ => 0
  rsqrt := fun _ => 1 / 0
  ex2 := fun _ => 1
  lg2 := fun _ => (0 : Rat) / 0
  tanh := fun _ => (1 - 1) / (1 + 1)
  erf := fun x => x
  sin := fun _ => 0
  cos := fun _ => 1
  ln2 := 0
  pi := 0
  exp_zero := rfl
  exp_add := fun _ _ => by
    first
    | (show (1 : Rat) = 1 * 1; decide +kernel)
    | exact (Rat.mul_one 1).symm
    | exact Rat.mul_one.symm
    | simp
  exp_pos := fun _ => by
    first
    | (show (0 : Rat) < 1; decide)
    | decide
    | exact (Rat.lt_iff 0 1).mpr (by decide)
  log_one := rfl
  log_mul := fun _ _ _ _ => by
    first
    | (show (0 : Rat) = 0 + 0; decide +kernel)
    | exact (Rat.add_zero 0).symm
    | exact Rat.add_zero.symm
    | simp
  ex2_def := fun _ => rfl
  lg2_def := fun _ => rfl
  sqrt_nonneg := fun _ => by
    first
    | exact Rat.le_refl
    | exact Rat.le_refl _
    | decide
  rsqrt_def := fun _ => rfl
  tanh_def := fun _ => rfl
  erf_neg := fun _ => rfl
  sin_zero := rfl
  cos_zero := rfl

/-- The identities of `Ideal` are consistent. -/
theorem Ideal.nonempty : Nonempty Ideal := ⟨Ideal.degenerate⟩

/-- A square root given at finitely many points: the value of the first entry `(x, v)` of the
table with `0 ≤ v`, else `0`. Only non-negative values are returned, whatever the table holds. -/
def Ideal.tableSqrt : List (Rat × Rat) → Rat → Rat
  | [], _ => 0
  | p :: rest, x => if x = p.1 ∧ 0 ≤ p.2 then p.2 else Ideal.tableSqrt rest x

/-- A table square root is never negative. -/
theorem Ideal.tableSqrt_nonneg (t : List (Rat × Rat)) (x : Rat) : 0 ≤ Ideal.tableSqrt t x := by
  induction t with
  | nil =>
    show (0 : Rat) ≤ 0
    first
    | exact Rat.le_refl
    | decide
  | cons p rest ih =>
    show 0 ≤ (if x = p.1 ∧ 0 ≤ p.2 then p.2 else Ideal.tableSqrt rest x)
    by_cases h : x = p.1 ∧ 0 ≤ p.2
    · rw [if_pos h]
      exact h.2
    · rw [if_neg h]
      exact ih

/-- A model of the `Ideal` laws with chosen values for the constants kernels write as literals:
`ln2` is `ln2Value`, `pi` is `piValue`, and `sqrt` is given at finitely many points by `sqrtTable`
(`Ideal.tableSqrt`); every other function is that of `Ideal.degenerate`. A generated module whose
kernel writes constants as literals (`1.4426950f` for `1 / ln 2`) assumes identities such as
`I.ln2 * c = 1` and proves them jointly satisfiable with this model, so that no obligation
assuming them is vacuous. Each law holds by computation, as for `Ideal.degenerate`. -/
def Ideal.withConstants (ln2Value piValue : Rat) (sqrtTable : List (Rat × Rat)) : Ideal where
  exp := fun _ => 1
  log := fun _ => 0
  sqrt := Ideal.tableSqrt sqrtTable
  rsqrt := fun x => 1 / Ideal.tableSqrt sqrtTable x
  ex2 := fun _ => 1
  lg2 := fun _ => (0 : Rat) / ln2Value
  tanh := fun _ => (1 - 1) / (1 + 1)
  erf := fun x => x
  sin := fun _ => 0
  cos := fun _ => 1
  ln2 := ln2Value
  pi := piValue
  exp_zero := rfl
  exp_add := fun _ _ => by
    first
    | (show (1 : Rat) = 1 * 1; decide +kernel)
    | exact (Rat.mul_one 1).symm
    | exact Rat.mul_one.symm
    | simp
  exp_pos := fun _ => by
    first
    | (show (0 : Rat) < 1; decide)
    | decide
    | exact (Rat.lt_iff 0 1).mpr (by decide)
  log_one := rfl
  log_mul := fun _ _ _ _ => by
    first
    | (show (0 : Rat) = 0 + 0; decide +kernel)
    | exact (Rat.add_zero 0).symm
    | exact Rat.add_zero.symm
    | simp
  ex2_def := fun _ => rfl
  lg2_def := fun _ => rfl
  sqrt_nonneg := fun x => Ideal.tableSqrt_nonneg sqrtTable x
  rsqrt_def := fun _ => rfl
  tanh_def := fun _ => rfl
  erf_neg := fun _ => rfl
  sin_zero := rfl
  cos_zero := rfl

end Lark
