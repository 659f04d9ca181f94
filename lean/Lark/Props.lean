import Lark.Exec

/-!
# Properties

The properties the engine checks, as `Prop`s about `runKernel` (ARCHITECTURE.md, "The execution
model"). Each quantifies over every amount of fuel with which the run finishes, so a property is
about the kernel, not about a fuel budget.

* `RaceFree`: no two different threads access the same byte in the same phase (for `.shared`:
  same block; for `.global`: any two threads of the launch, since blocks are unordered) with at
  least one write and not both atomic.
* `BarrierAligned`: no run stops with barrier or warp divergence (barriers and collectives are
  reached uniformly).
* `InBounds`: every access lies inside a declared extent.
* `Terminates`: some amount of fuel suffices.

The kernel, the ideal functions, the launch and the inputs are parameters: an obligation fixes the
launch and quantifies over the inputs it allows.
-/

namespace Lark

/-- The bytes of two accesses overlap, in the same memory. -/
def Overlap (a b : Access) : Prop :=
  a.loc.region = b.loc.region ∧
    a.loc.addr.toNat < b.loc.addr.toNat + b.bytes ∧ b.loc.addr.toNat < a.loc.addr.toNat + a.bytes

/-- Two events race: different threads, overlapping bytes, one writes, not both atomic, and nothing
orders them (same phase of the same block for shared memory; for global memory, the same phase of
one block or any phases of two blocks). -/
def Races (e₁ e₂ : Event) : Prop :=
  (e₁.block ≠ e₂.block ∨ e₁.thread ≠ e₂.thread) ∧
  Overlap e₁.access e₂.access ∧
  (e₁.access.isWrite = true ∨ e₂.access.isWrite = true) ∧
  ¬ (e₁.access.isAtomic = true ∧ e₂.access.isAtomic = true) ∧
  (match e₁.access.loc.region with
   | .shared => e₁.block = e₂.block ∧ e₁.phase = e₂.phase
   | .global => e₁.block ≠ e₂.block ∨ e₁.phase = e₂.phase)

/-- No run of the kernel has two racing accesses. -/
def RaceFree (k : Kernel) (I : Ideal) (l : Launch) (inputs : Inputs) : Prop :=
  ∀ fuel r, runKernel k I l inputs fuel = some r →
    ∀ e₁ e₂, e₁ ∈ r.events → e₂ ∈ r.events → ¬ Races e₁ e₂

/-- No run of the kernel stops with barrier or warp divergence. -/
def BarrierAligned (k : Kernel) (I : Ideal) (l : Launch) (inputs : Inputs) : Prop :=
  ∀ fuel r, runKernel k I l inputs fuel = some r →
    ∀ f, r.outcome = .error f → f.isDivergence = false

/-- A declared memory extent: `size` bytes from `base` in `region` (for `shared`, in every
block). -/
structure Extent where
  region : Region
  base : Nat
  size : Nat

/-- The access lies inside the extent. -/
def Extent.Contains (x : Extent) (a : Access) : Prop :=
  a.loc.region = x.region ∧ x.base ≤ a.loc.addr.toNat ∧ a.loc.addr.toNat + a.bytes ≤ x.base + x.size

/-- Every access of every run lies inside one of the declared extents. -/
def InBounds (extents : List Extent) (k : Kernel) (I : Ideal) (l : Launch) (inputs : Inputs) : Prop :=
  ∀ fuel r, runKernel k I l inputs fuel = some r →
    ∀ e, e ∈ r.events → ∃ x, x ∈ extents ∧ x.Contains e.access

/-- Some amount of fuel suffices for the kernel to finish (successfully or with a fault). -/
def Terminates (k : Kernel) (I : Ideal) (l : Launch) (inputs : Inputs) : Prop :=
  ∃ fuel r, runKernel k I l inputs fuel = some r

/-- The kernel finishes without a fault and leaves global memory `g`. -/
def Computes (k : Kernel) (I : Ideal) (l : Launch) (inputs : Inputs) (g : BitVec 64 → Value) : Prop :=
  ∃ fuel r, runKernel k I l inputs fuel = some r ∧ r.outcome = .ok g

/-! ## Open obligations

Statements the library does not prove yet (see `lean/README.md`). They are definitions, not
axioms: nothing depends on them.
-/

/-- More fuel never changes a finished run's result. -/
def FuelMonotone : Prop :=
  ∀ (k : Kernel) (I : Ideal) (l : Launch) (inputs : Inputs) (fuel : Nat) (r : KernelResult),
    runKernel k I l inputs fuel = some r → runKernel k I l inputs (fuel + 1) = some r

end Lark
