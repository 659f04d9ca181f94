import Lark.Ideal

/-!
# References as scalar graphs

A PyTorch reference at one concrete shape, as LARK's `reference` crate lowers it: a list of scalar
nodes, each computed from input elements, constants or earlier nodes (`reference::Node`). The
graph is a DAG written in topological order, so shared sub-expressions (a row's sum, used by every
element of the row) appear once. `RGraph.values` evaluates every node in one pass, left to right;
nothing recurses, nothing needs fuel.

Values are exact rationals; the transcendental functions come from an `I : Ideal`, exactly as in
the kernel semantics, so a kernel and its reference are compared under the same ideal functions.
Integers are rationals with denominator 1 (`floorDiv` and `mod` are Python's, on rationals).

Differences from PyTorch, all deliberate (exact arithmetic is the contract): no rounding, no
overflow, and `a / 0` is `0` (Lean's `Rat` division) where PyTorch gives `±inf` or `nan` — a
theorem about a kernel that divides by zero says nothing useful, and LARK's engine reports such
inputs rather than relying on them. `π` is the `Ideal`'s abstract constant `I.pi`, as `ln 2` is
`I.ln2`.
-/

namespace Lark

/-- The comparisons of a reference (`reference::CmpOp`). -/
inductive RCmp where
  | eq
  | ne
  | lt
  | le
  | gt
  | ge
  deriving DecidableEq, Repr

/-- The non-rational unary functions of a reference (`reference::UnaryFn`). -/
inductive RFun where
  | exp
  | log
  | sqrt
  | rsqrt
  | tanh
  | erf
  | abs
  | sin
  | cos
  /-- `2 ^ x` as `ex2.approx` computes it (kernel values in shared-memory specifications). -/
  | ex2
  /-- `log₂ x` as `lg2.approx` computes it. -/
  | lg2
  deriving DecidableEq, Repr

/-- One scalar node. Operands are indices of earlier nodes of the same graph. -/
inductive RNode where
  /-- Element `index` (flat, row-major) of tensor argument number `arg` of the reference. -/
  | input (arg : Nat) (index : Nat)
  | const (q : Rat)
  /-- `π`, the abstract constant of the `Ideal`. -/
  | pi
  /-- Euler's number, `exp 1`. -/
  | e
  | add (a b : Nat)
  | sub (a b : Nat)
  | mul (a b : Nat)
  | div (a b : Nat)
  | neg (a : Nat)
  | pow (a : Nat) (k : Int)
  | unary (f : RFun) (a : Nat)
  | max (a b : Nat)
  | min (a b : Nat)
  /-- `1` when the comparison holds, else `0`. -/
  | cmp (op : RCmp) (a b : Nat)
  /-- `a` when `c ≠ 0`, else `b`. -/
  | select (c a b : Nat)
  | floorDiv (a b : Nat)
  | mod (a b : Nat)
  deriving Repr

/-- A reference's scalar graph. -/
abbrev RGraph := List RNode

/-- `q ^ n` for a natural exponent, by repeated multiplication. -/
def ratPow (q : Rat) : Nat → Rat
  | 0 => 1
  | n + 1 => ratPow q n * q

/-- `q ^ k` for an integer exponent (`q ^ (-n) = 1 / q ^ n`). -/
def ratZPow (q : Rat) (k : Int) : Rat :=
  match k with
  | .ofNat n => ratPow q n
  | .negSucc n => 1 / ratPow q (n + 1)

/-- `⌊q⌋` (the denominator of a `Rat` is positive). -/
def ratFloor (q : Rat) : Int := Int.fdiv q.num (q.den : Int)

/-- Python's `a // b` on rationals: `⌊a / b⌋`. -/
def ratFloorDiv (a b : Rat) : Rat := ((ratFloor (a / b) : Int) : Rat)

/-- Python's `a % b`: `a - ⌊a / b⌋ * b` (the sign of the divisor). -/
def ratMod (a b : Rat) : Rat := a - ratFloorDiv a b * b

/-- The value of a comparison, as a rational. -/
def RCmp.eval (op : RCmp) (a b : Rat) : Rat :=
  let holds : Bool :=
    match op with
    | .eq => decide (a = b)
    | .ne => !decide (a = b)
    | .lt => decide (a < b)
    | .le => decide (a ≤ b)
    | .gt => decide (b < a)
    | .ge => decide (b ≤ a)
  if holds then 1 else 0

/-- A unary function through the ideal functions. -/
def RFun.eval (I : Ideal) (f : RFun) (a : Rat) : Rat :=
  match f with
  | .exp => I.exp a
  | .log => I.log a
  | .sqrt => I.sqrt a
  | .rsqrt => I.rsqrt a
  | .tanh => I.tanh a
  | .erf => I.erf a
  | .abs => if a < 0 then -a else a
  | .sin => I.sin a
  | .cos => I.cos a
  | .ex2 => I.ex2 a
  | .lg2 => I.lg2 a

/-- The value of one node, given the values of the nodes before it (`prev`) and the inputs
(`x arg index`). An operand index past `prev` reads `0`; LARK never emits one. -/
def RNode.eval (I : Ideal) (x : Nat → Nat → Rat) (prev : Array Rat) : RNode → Rat
  | .input arg index => x arg index
  | .const q => q
  | .pi => I.pi
  | .e => I.exp 1
  | .add a b => prev.getD a 0 + prev.getD b 0
  | .sub a b => prev.getD a 0 - prev.getD b 0
  | .mul a b => prev.getD a 0 * prev.getD b 0
  | .div a b => prev.getD a 0 / prev.getD b 0
  | .neg a => -(prev.getD a 0)
  | .pow a k => ratZPow (prev.getD a 0) k
  | .unary f a => f.eval I (prev.getD a 0)
  | .max a b => if prev.getD a 0 < prev.getD b 0 then prev.getD b 0 else prev.getD a 0
  | .min a b => if prev.getD b 0 < prev.getD a 0 then prev.getD b 0 else prev.getD a 0
  | .cmp op a b => op.eval (prev.getD a 0) (prev.getD b 0)
  | .select c a b => if prev.getD c 0 = 0 then prev.getD b 0 else prev.getD a 0
  | .floorDiv a b => ratFloorDiv (prev.getD a 0) (prev.getD b 0)
  | .mod a b => ratMod (prev.getD a 0) (prev.getD b 0)

/-- The values of every node, in order. -/
def RGraph.values (I : Ideal) (x : Nat → Nat → Rat) (g : RGraph) : Array Rat :=
  g.foldl (fun acc n => acc.push (n.eval I x acc)) #[]

/-- The value of node `i`. -/
def RGraph.value (I : Ideal) (x : Nat → Nat → Rat) (g : RGraph) (i : Nat) : Rat :=
  (g.values I x).getD i 0

end Lark
