import Lark.Value
import Lark.Ideal
import Lark.Ops.Int
import Lark.Ops.Float
import Lark.Ops.Memory
import Lark.Ops.Warp
import Lark.Ops.Control

/-!
# Kernels, launches and thread state

The lifted kernel as data, in the shape of `model::Kernel` and `model::cfg`, so that the Rust
crate `lean` can print any lowered kernel as a Lean term of `Lark.Kernel` (`lean::emit::kernel`).
Identifiers are numbers (`RegId`, `VarId`, `BlockId`, loop ids), exactly the indices the Rust
model uses; names survive as strings for the reader. Spans and `.loc`s are left out (they do not
change what a kernel does); each instruction keeps its source `line`.

Then the state a kernel runs in: the launch, the inputs, and the per-thread state (registers as a
function from register ids to values, private `.local` memory, position, loop iterations).
-/

namespace Lark

/-- Register ids: indices into `Kernel.regs`. -/
abbrev RegId := Nat
/-- Variable ids: indices into `Kernel.vars`. -/
abbrev VarId := Nat
/-- Block ids: indices into `Cfg.blocks`. -/
abbrev BlockId := Nat

/-- An instruction operand (`model::ops::Operand`). -/
inductive Operand where
  | reg (r : RegId)
  /-- An integer or raw float bit pattern, already truncated to the operand width. -/
  | imm (v : Nat)
  | special (s : Special)
  /-- The address of a module or kernel variable. -/
  | varAddr (v : VarId)
  /-- Bytes `offset ..` of kernel parameter `index` (`ld.param`'s source). -/
  | param (index offset : Nat)
  /-- A negated predicate (`!%p`). -/
  | notReg (r : RegId)
  deriving DecidableEq, Repr

/-- `[base + offset]`. -/
structure Address where
  base : Operand
  offset : Int
  deriving DecidableEq, Repr

/-- The model-level operation of one decoded instruction (`model::ops::Op`). -/
inductive Op where
  | mov (dst : RegId) (src : Operand) (bits : Nat)
  | bin (dst : RegId) (op : BinOp) (a b : Operand) (bits : Nat)
  | un (dst : RegId) (op : UnOp) (a : Operand) (bits : Nat)
  /-- Truncation, or zero- or sign-extension. -/
  | ext (dst : RegId) (a : Operand) (fromBits toBits : Nat) (signed : Bool)
  | setp (dst : RegId) (dstNeg : Option RegId) (cmp : CmpOp) (a b : Operand) (bits : Nat)
      (combine : Option (BoolOp × Operand))
  | fSetp (dst : RegId) (dstNeg : Option RegId) (cmp : FloatCmp) (a b : Operand) (bits : Nat)
      (combine : Option (BoolOp × Operand))
  | selp (dst : RegId) (a b cond : Operand) (bits : Nat)
  | pred (dst : RegId) (op : BoolOp) (a b : Operand)
  | predNot (dst : RegId) (a : Operand)
  | float (dst : RegId) (op : FloatOp) (args : List Operand) (bits : Nat)
  /-- Conversions involving a float type; `rnd` is the rounding modifier as written. -/
  | cvt (dst : RegId) (a : Operand) (fromTy toTy : String) (rnd : Option String) (sat : Bool)
  | ld (dsts : List RegId) (space : Space) (addr : Address) (elemBytes : Nat)
  | st (srcs : List Operand) (space : Space) (addr : Address) (elemBytes : Nat)
  | atom (dst : Option RegId) (space : Space) (op : AtomOp) (addr : Address) (args : List Operand)
      (bytes : Nat) (isFloat signed : Bool)
  | bar (kind : BarrierKind) (id : Operand)
  /-- `bar.red`: a block barrier at which every thread also receives, in `dst`, the reduction `op`
  of the threads' predicates `pred`. -/
  | barRed (dst : RegId) (op : BarRedOp) (pred id : Operand)
  | warpSync (mask : Operand)
  | shfl (dst : RegId) (predDst : Option RegId) (mode : ShflMode) (src lane clamp mask : Operand)
  | vote (dst : RegId) (mode : VoteMode) (pred mask : Operand)
  | activeMask (dst : RegId)
  /-- Memory fences: ordering only, no data effect. -/
  | fence
  /-- `bra`, handled by the CFG. -/
  | bra (target : String)
  | ret
  | exit
  /-- An instruction the model does not understand: running it is a fault. -/
  | unsupported (opcode reason : String)
  deriving Repr

/-- A decoded instruction with its guard (`@%p` or `@!%p`) and source line. -/
structure Inst where
  guard : Option (RegId × Bool)
  op : Op
  line : Option Nat
  deriving Repr

/-- How a basic block ends (`model::cfg::Term`). -/
inductive Term where
  | goto (b : BlockId)
  /-- `@%p bra taken` (or `@!%p`), falling through to `fallthrough` otherwise. -/
  | branch (cond : RegId) (negated : Bool) (taken fallthrough : BlockId)
  /-- `ret` or `exit`, or falling off the end of the body. -/
  | «return»
  deriving DecidableEq, Repr

/-- A basic block (`model::cfg::Block`). -/
structure Block where
  label : Option String
  insts : List Inst
  term : Term
  termLine : Option Nat
  deriving Repr

/-- A natural loop (`model::cfg::Loop`; membership as the list of member blocks). -/
structure Loop where
  header : BlockId
  blocks : List BlockId
  latches : List BlockId
  exits : List (BlockId × BlockId)
  parent : Option Nat
  depth : Nat
  deriving Repr

/-- The control-flow graph (`model::cfg::Cfg`, without the derived `preds`, `rpo`, `loop_of`). -/
structure Cfg where
  blocks : List Block
  entry : BlockId
  loops : List Loop
  deriving Repr

/-- A register's declaration. -/
structure RegInfo where
  name : String
  bits : Nat
  float : Bool
  deriving Repr

/-- A module or kernel variable (`.shared`, `.global`, `.const`, `.local`). -/
structure VarInfo where
  name : String
  space : Space
  /-- Size in bytes; `none` for `extern .shared` arrays sized at launch. -/
  size : Option Nat
  align : Nat
  initialized : Bool
  deriving Repr

/-- A kernel parameter. -/
structure ParamInfo where
  name : String
  ty : String
  bits : Nat
  bytes : Nat
  deriving Repr

/-- A kernel ready for analysis (`model::Kernel`). -/
structure Kernel where
  name : String
  regs : List RegInfo
  vars : List VarInfo
  params : List ParamInfo
  cfg : Cfg
  /-- `.reqntid`, if the kernel fixes its block shape. -/
  reqntid : Option Dim3
  deriving Repr

/-- The shape of a launch. -/
structure Launch where
  grid : Dim3
  block : Dim3
  /-- Size of the `extern .shared` arrays. -/
  dynamicSharedBytes : Nat

/-- What a launch is given: parameter values, where variables live, and global memory. -/
structure Inputs where
  /-- Each parameter's bytes as one little-endian number, in PTX parameter order (a pointer is
  its address). -/
  args : List Nat
  /-- The address `varAddr v` evaluates to. The interpreter places `.shared` variables at
  `2^50 + slot * 2^24` and global buffers at `2^44 + i * 2^36`; proofs may assume any layout. -/
  varAddr : VarId → BitVec 64
  /-- Global memory before the launch. -/
  global : BitVec 64 → Value

/-- Why a run stopped short (`model::interp::InterpError`, without the bookkeeping). -/
inductive Fault where
  /-- An instruction or operand the model does not define. -/
  | unsupported (what : String)
  /-- An integer use of an exact float value (see `Lark.Value`). -/
  | floatAsBits
  /-- Threads of a block wait at different barriers, or some exited while others wait. -/
  | barrierDivergence
  /-- A warp collective whose member mask names a lane that does not arrive. -/
  | warpDivergence (reason : String)
  /-- The launch does not fit the kernel. -/
  | badLaunch (what : String)
  deriving DecidableEq, Repr

/-- Barrier or warp divergence. -/
def Fault.isDivergence : Fault → Bool
  | .barrierDivergence => true
  | .warpDivergence _ => true
  | _ => false

/-- Where a thread is in its phase. -/
inductive Status where
  | running
  | atBarrier
  /-- At a warp collective, with its evaluated member mask (`none` for `activemask`). -/
  | atCollective (mask : Option Nat)
  | exited
  | faulted (f : Fault)
  deriving DecidableEq, Repr

/-- One thread's private state. -/
structure ThreadState where
  /-- `%tid`. -/
  tid : Dim3
  /-- Linear index in the block: `x + y * ntid.x + z * ntid.x * ntid.y`. -/
  linear : Nat
  regs : RegId → Value
  /-- The thread's `.local` memory. -/
  localMem : BitVec 64 → Value
  /-- The block being executed and the index of the next instruction in it (the terminator
  when past the last instruction). -/
  block : BlockId
  idx : Nat
  status : Status
  /-- For each enclosing loop, the back edges taken since entering it (`(loop, count)`). -/
  iters : List (Nat × Nat)

namespace ThreadState

/-- Sets a register. -/
def setReg (t : ThreadState) (r : RegId) (v : Value) : ThreadState :=
  { t with regs := fun r' => if r' = r then v else t.regs r' }

/-- Sets registers pairwise (as many as there are values). -/
def setRegs : ThreadState → List RegId → List Value → ThreadState
  | t, r :: rs, v :: vs => setRegs (t.setReg r v) rs vs
  | t, _, _ => t

/-- Writes the thread's `.local` memory. -/
def setLocal (t : ThreadState) (a : BitVec 64) (v : Value) : ThreadState :=
  { t with localMem := fun a' => if a' = a then v else t.localMem a' }

/-- Moves to the next instruction. -/
def advance (t : ThreadState) : ThreadState := { t with idx := t.idx + 1 }

/-- The position: block and instruction index. -/
def pc (t : ThreadState) : Nat × Nat := (t.block, t.idx)

end ThreadState

end Lark
