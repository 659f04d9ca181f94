import Lark.Value

/-!
# Warp collectives

`shfl.sync`, `vote.sync`, `bar.warp.sync` and `activemask` (`model::ops::ShflMode`, `VoteMode`):
which lane a shuffle reads and what a vote returns. When a collective completes — every lane named
by its member mask waits at the same instruction in the same loop iterations with the same mask —
is decided by the block semantics in `Lark.Exec`; a mask naming a lane that does not arrive is
divergence (`Fault.warpDivergence`).
-/

namespace Lark

/-- Shuffle modes (`model::ops::ShflMode`). -/
inductive ShflMode where
  | up | down | bfly | idx
  deriving DecidableEq, Repr

/-- Vote modes (`model::ops::VoteMode`). -/
inductive VoteMode where
  | all | any | uni | ballot
  deriving DecidableEq, Repr

/-- The lane a shuffle reads and its validity predicate, for the reading lane `lane`, the lane
operand `b` and the clamp operand `c` (PTX ISA `shfl.sync`; the interpreter's `complete`). An
invalid source makes the lane read its own value. -/
def shflSource (mode : ShflMode) (lane b c : Nat) : Nat × Bool :=
  let b := b % 32
  let cval := c % 32
  let seg := (c / 256) % 32
  let notSeg := 31 ^^^ seg
  let maxLane := (lane &&& seg) ||| (cval &&& notSeg)
  let minLane := lane &&& seg
  let r : Nat × Bool :=
    match mode with
    | .up => (lane - b, decide (b ≤ lane ∧ maxLane ≤ lane - b))
    | .down => (lane + b, decide (lane + b ≤ maxLane))
    | .bfly => (lane ^^^ b, decide ((lane ^^^ b) ≤ maxLane))
    | .idx => (minLane ||| (b &&& notSeg), decide ((minLane ||| (b &&& notSeg)) ≤ maxLane))
  if r.2 then (r.1, true) else (lane, false)

/-- The result of a vote from each member's lane and predicate. -/
def voteResult (mode : VoteMode) (xs : List (Nat × Bool)) : Nat :=
  match mode with
  | .ballot => xs.foldl (fun acc x => if x.2 then acc ||| 2 ^ x.1 else acc) 0
  | .all => if xs.all (fun x => x.2) then 1 else 0
  | .any => if xs.any (fun x => x.2) then 1 else 0
  | .uni => if xs.all (fun x => x.2) || xs.all (fun x => !x.2) then 1 else 0

end Lark
