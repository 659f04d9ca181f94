import Lark.Exec
import Lark.Props
import Lark.Reference

/-!
# A kernel's buffers and its reference's tensors

How the obligations LARK emits tie a kernel's global memory to a reference's tensors at one
shape, and what a segment leaves in shared memory at a barrier (`SharedAgree`). A tensor
argument of the reference lives in a kernel buffer: element `i` is the cell at byte
`base + bytes * i`. For a float tensor the cell holds the element's exact value; for an
integer tensor (indices, counts) it holds the element's bits.

Parameter `p`'s buffer starts at `base p`, the address the launch passes for that parameter.
-/

namespace Lark

/-- Where a reference input lives: tensor argument `arg`, `count` elements of `bytes` bytes from
the address of parameter `param`; `float` for floating-point tensors. -/
structure InputBinding where
  arg : Nat
  param : Nat
  count : Nat
  bytes : Nat
  float : Bool
  deriving Repr

/-- The cell of element `i` of a buffer at `base`. -/
def cellAt (base bytes i : Nat) : BitVec 64 := BitVec.ofNat 64 (base + bytes * i)

/-- Global memory holds the reference's inputs `x` where the bindings say. -/
def InputsHold (global : BitVec 64 → Value) (base : Nat → Nat) (x : Nat → Nat → Rat)
    (ins : List InputBinding) : Prop :=
  ∀ b, b ∈ ins → ∀ i, i < b.count →
    if b.float then global (cellAt (base b.param) b.bytes i) = .float (.finite (x b.arg i))
    else ∃ n : Int, x b.arg i = (n : Rat) ∧
      global (cellAt (base b.param) b.bytes i) = .bits (BitVec.ofInt 64 n)

/-- One output element: byte `offset` of the buffer of parameter `param` must hold the value of
reference node `node`. -/
structure OutputCell where
  param : Nat
  offset : Nat
  node : Nat
  deriving Repr

/-- Global memory `g` holds, at every output cell, the exact value of its reference node. -/
def OutputsAgree (g : BitVec 64 → Value) (base : Nat → Nat) (value : Nat → Rat)
    (outs : List OutputCell) : Prop :=
  ∀ o, o ∈ outs → g (BitVec.ofNat 64 (base o.param + o.offset)) = .float (.finite (value o.node))

/-- Appending cells: agreement on each part is agreement on both. -/
theorem OutputsAgree.append {g : BitVec 64 → Value} {base : Nat → Nat} {value : Nat → Rat}
    {xs ys : List OutputCell} (hx : OutputsAgree g base value xs) (hy : OutputsAgree g base value ys) :
    OutputsAgree g base value (xs ++ ys) := by
  intro o ho
  cases List.mem_append.mp ho with
  | inl h => exact hx o h
  | inr h => exact hy o h

/-- One shared-memory cell at a barrier: byte `offset` of shared variable `var`, in block `block`
(linear index), must hold the value of node `node` once the block has passed `phase` barriers. -/
structure SharedCell where
  var : Nat
  offset : Nat
  block : Nat
  phase : Nat
  node : Nat
  deriving Repr

/-- The location of byte `offset` of shared variable `v` (as `extents` places the variable). -/
def sharedLoc (inputs : Inputs) (v offset : Nat) : Loc :=
  { region := .shared, addr := windowOffset sharedBase (inputs.varAddr v) + BitVec.ofNat 64 offset }

/-- Whenever a block of the run passes the barrier a cell names, the cell holds the exact value of
its node: what a segment ending at that barrier leaves in shared memory. -/
def SharedAgree (inputs : Inputs) (snaps : List Snapshot) (value : Nat → Rat)
    (cells : List SharedCell) : Prop :=
  ∀ c, c ∈ cells → ∀ s, s ∈ snaps → s.block = c.block → s.phase = c.phase →
    s.mem (sharedLoc inputs c.var c.offset) = .float (.finite (value c.node))

/-- Buffers `(param, bytes)`: each starts at an address aligned to 256 bytes (as `cudaMalloc`
returns), ends below `2 ^ 64`, and no two overlap. -/
def BuffersApart (base : Nat → Nat) (bufs : List (Nat × Nat)) : Prop :=
  (∀ b, b ∈ bufs → base b.1 % 256 = 0 ∧ base b.1 + b.2 ≤ 2 ^ 64) ∧
  ∀ b c, b ∈ bufs → c ∈ bufs → b.1 ≠ c.1 → base b.1 + b.2 ≤ base c.1 ∨ base c.1 + c.2 ≤ base b.1

/-- Shared variables `(v, bytes, align)`: each lies inside the shared window, aligned, and no two
overlap (as the compiler lays them out; the launch may place them anywhere that satisfies this). -/
def SharedApart (inputs : Inputs) (vars : List (Nat × Nat × Nat)) : Prop :=
  (∀ v, v ∈ vars →
    sharedBase ≤ (inputs.varAddr v.1).toNat ∧
    (inputs.varAddr v.1).toNat + v.2.1 ≤ sharedBase + windowSize ∧
    (inputs.varAddr v.1).toNat % v.2.2 = 0) ∧
  ∀ v w, v ∈ vars → w ∈ vars → v.1 ≠ w.1 →
    (inputs.varAddr v.1).toNat + v.2.1 ≤ (inputs.varAddr w.1).toNat ∨
    (inputs.varAddr w.1).toNat + w.2.1 ≤ (inputs.varAddr v.1).toNat

end Lark
