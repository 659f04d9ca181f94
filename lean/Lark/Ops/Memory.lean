import Lark.Value
import Lark.Ops.Int
import Lark.Ops.Float

/-!
# Memory

State spaces (`model::ops::Space`), atomic operations (`AtomOp`) and the memory a phase works on.

A phase of a block sees two memories, global and the block's shared memory; `.local` memory is
private to a thread and lives in its `ThreadState`. Memory is a function from locations to values,
unbounded: whether an access stays inside a buffer is the separate property `InBounds`
(`Lark.Props`). A location holds a whole value at the address where it was stored: an access of
`n` bytes at address `a` reads or writes the cell at `a`. Accesses that partially overlap a cell
of another width are outside what the model describes (the interpreter tracks bytes); the race
property is stated on byte ranges, which is stronger than the cell view needs.

A thread's run records what it did to memory as a list of `Access`es, oldest first;
`applyLog m L` is the memory after the accesses `L`. The frame lemmas here are the vocabulary of
`Lark.Theorems.PhaseOrder`.
-/

namespace Lark

/-- State spaces (`model::ops::Space`). -/
inductive Space where
  | global | shared | «local» | const | param | generic
  deriving DecidableEq, Repr

/-- Atomic read-modify-write operations (`model::ops::AtomOp`). -/
inductive AtomOp where
  | add | min | max | inc | dec | and | or | xor | exch | cas
  deriving DecidableEq, Repr

/-- The memories a phase of a block shares: global memory and the block's shared memory. -/
inductive Region where
  | global | shared
  deriving DecidableEq, Repr

/-- A memory cell: a region and a byte address (for `shared`, the offset in the block's shared
memory). -/
structure Loc where
  region : Region
  addr : BitVec 64
  deriving DecidableEq, Repr

/-- The memory a phase works on (global and one block's shared memory). -/
abbrev Mem := Loc → Value

/-- `m` with location `l` set to `v`. -/
def update (m : Mem) (l : Loc) (v : Value) : Mem :=
  fun l' => if l' = l then v else m l'

theorem update_apply (m : Mem) (l l' : Loc) (v : Value) :
    update m l v l' = if l' = l then v else m l' := rfl

/-- Read over write at the written location. -/
theorem update_same (m : Mem) (l : Loc) (v : Value) : update m l v l = v := by
  rw [update_apply]
  exact if_pos rfl

/-- Read over write at another location. -/
theorem update_other (m : Mem) {l l' : Loc} (v : Value) (h : l' ≠ l) : update m l v l' = m l' := by
  rw [update_apply, if_neg h]

/-- One access to shared or global memory, as a thread's run records it. -/
inductive Access where
  /-- A load of `bytes` bytes at `loc`. -/
  | read (loc : Loc) (bytes : Nat)
  /-- A store of `v`, `bytes` bytes wide, at `loc`. -/
  | write (loc : Loc) (bytes : Nat) (v : Value)
  /-- An atomic read-modify-write at `loc` that left `v` there. -/
  | atomic (loc : Loc) (bytes : Nat) (v : Value)
  deriving Repr

namespace Access

/-- Where the access lands. -/
def loc : Access → Loc
  | .read l _ => l
  | .write l _ _ => l
  | .atomic l _ _ => l

/-- How many bytes it covers. -/
def bytes : Access → Nat
  | .read _ n => n
  | .write _ n _ => n
  | .atomic _ n _ => n

/-- Does it change memory (stores and atomics)? -/
def isWrite : Access → Bool
  | .read _ _ => false
  | .write _ _ _ => true
  | .atomic _ _ _ => true

/-- Is it an atomic? -/
def isAtomic : Access → Bool
  | .atomic _ _ _ => true
  | _ => false

end Access

/-- The memory after one access. -/
def applyAccess (m : Mem) : Access → Mem
  | .read _ _ => m
  | .write l _ v => update m l v
  | .atomic l _ v => update m l v

/-- The memory after a list of accesses, oldest first. -/
def applyLog : Mem → List Access → Mem
  | m, [] => m
  | m, a :: rest => applyLog (applyAccess m a) rest

theorem applyLog_nil (m : Mem) : applyLog m [] = m := rfl

theorem applyLog_cons (m : Mem) (a : Access) (rest : List Access) :
    applyLog m (a :: rest) = applyLog (applyAccess m a) rest := rfl

/-- `Touches L l`: some access of `L` lands on `l`. -/
inductive Touches : List Access → Loc → Prop where
  | head {a : Access} {rest : List Access} {l : Loc} : a.loc = l → Touches (a :: rest) l
  | tail {a : Access} {rest : List Access} {l : Loc} : Touches rest l → Touches (a :: rest) l

/-- `WritesTo L l`: some store or atomic of `L` lands on `l`. -/
inductive WritesTo : List Access → Loc → Prop where
  | head {a : Access} {rest : List Access} {l : Loc} :
      a.isWrite = true → a.loc = l → WritesTo (a :: rest) l
  | tail {a : Access} {rest : List Access} {l : Loc} : WritesTo rest l → WritesTo (a :: rest) l

/-- Two memories agree on every location a log touches. -/
def AgreeOn (L : List Access) (m m' : Mem) : Prop := ∀ l, Touches L l → m' l = m l

/-- The atomic update: the value an atomic leaves, from the old value and the operands
(`x`, and `c` for `cas`), on integers (the interpreter's integer branch). -/
def evalAtomInt {w : Nat} (op : AtomOp) (signed : Bool) (o x c : BitVec w) : BitVec w :=
  match op with
  | .add => o + x
  | .min => evalBin (if signed then BinOp.minS else BinOp.minU) o x
  | .max => evalBin (if signed then BinOp.maxS else BinOp.maxU) o x
  | .inc => if BitVec.ule x o then 0 else o + 1
  | .dec => if o = 0 ∨ BitVec.ult x o then x else o - 1
  | .and => o &&& x
  | .or => o ||| x
  | .xor => o ^^^ x
  | .exch => x
  | .cas => if o = x then c else o

/-- The atomic update on exact floats; `none` for operations the interpreter does not model on
floats (and for `cas`, which compares bit patterns). -/
def evalAtomFloat (op : AtomOp) (o x : FloatVal) : Option FloatVal :=
  match op with
  | .add => some (FloatVal.add o x)
  | .min => some (FloatVal.min o x)
  | .max => some (FloatVal.max o x)
  | .exch => some x
  | _ => none

end Lark
