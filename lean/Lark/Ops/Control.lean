import Lark.Value

/-!
# Control

Barriers (`model::ops::BarrierKind`, and the reduction of `bar.red`), special registers
(`model::ops::Special`) and the 3-D extents of a launch.
-/

namespace Lark

/-- `bar.sync` waits for the whole block; `bar.arrive` signals without waiting. -/
inductive BarrierKind where
  | sync | arrive
  deriving DecidableEq, Repr

/-- The block-wide reduction of `bar.red` (`model::ops::BarRedOp`): the number of threads whose
predicate holds, whether it holds in all of them, whether it holds in any. -/
inductive BarRedOp where
  | popc | and | or
  deriving DecidableEq, Repr

/-- The result of `bar.red` from the predicates of the block's threads (`eval_bar_red`). -/
def barRedResult (op : BarRedOp) (ps : List Bool) : Nat :=
  match op with
  | .popc => (ps.filter (fun p => p)).length
  | .and => if ps.all (fun p => p) then 1 else 0
  | .or => if ps.any (fun p => p) then 1 else 0

/-- Special registers; dimensions are 0 = x, 1 = y, 2 = z (`model::ops::Special`). -/
inductive Special where
  | tid (d : Nat)
  | ntid (d : Nat)
  | ctaid (d : Nat)
  | nctaid (d : Nat)
  | laneId
  | warpId
  /-- `%clock`, `%globaltimer`, ...: not modelled (their values differ run to run). -/
  | timer
  deriving DecidableEq, Repr

/-- A 3-D extent or index (grid, block, `%tid`, `%ctaid`). -/
structure Dim3 where
  x : Nat
  y : Nat
  z : Nat
  deriving DecidableEq, Repr

/-- Component `d` (0 = x, 1 = y, anything else = z, as the interpreter clamps it). -/
def Dim3.get (v : Dim3) (d : Nat) : Nat :=
  if d = 0 then v.x else if d = 1 then v.y else v.z

/-- Number of points of the extent. -/
def Dim3.count (v : Dim3) : Nat := v.x * v.y * v.z

end Lark
