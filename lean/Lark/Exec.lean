import Lark.Kernel

/-!
# Execution

The execution model of ARCHITECTURE.md ("The execution model"), as `model::interp` runs it:

* **Instruction.** `stepThread` decodes what one thread does next into a `Step` that does not
  depend on memory: a pure state change, a load (with the continuation that receives the loaded
  values), a store, an atomic, or a stop (the thread waits at a barrier or a warp collective,
  exits, or faults). `runStep` is the only place where memory is read or written.
* **Thread.** `runThread env fuel` runs one thread, at most `fuel` steps, until it stops. It
  returns the new thread state and the log of its accesses; a thread still `running` afterwards
  ran out of fuel.
* **Phase.** `runPhase env fuel order` runs every thread of a block, one after another in `order`,
  each until it stops; the memory after a thread is `applyLog` of its log.
  `Lark.Theorems.PhaseOrder` proves that when the threads' accesses do not conflict, the result
  does not depend on `order`: running threads one at a time is faithful.
* **Block.** `blockLoop` alternates phases with what happens between them: completing a warp
  collective whose lanes have all arrived, releasing a barrier that every thread of the block
  waits at (same instruction, same loop iterations; `bar.red` also hands every thread its
  reduction, `barrierEffect`), or reporting divergence.
* **Kernel.** `runKernel` runs the blocks one after another in grid order (x fastest), each with
  zeroed shared memory, threading global memory through. Its result is an `Option`: `none` when
  `fuel` ran out, so termination is a theorem about fuel (`Lark.Props.Terminates`), never an
  assumption.

Differences from the interpreter: exact floats are never rounded (see `Lark.Value`); when several
collectives could complete at once, they complete one per round, so a run with two independent
faults may report another one first; `%clock` is not modelled.
-/

namespace Lark

/-- Everything an instruction of a thread may consult besides the thread and memory. -/
structure Env where
  kernel : Kernel
  launch : Launch
  inputs : Inputs
  ideal : Ideal
  /-- `%ctaid` of the block being run. -/
  ctaid : Dim3

/-- Computations that may fault. -/
abbrev ExecM := Except Fault

/-- What one thread does next, before memory is consulted. -/
inductive Step where
  /-- A change of the thread's own state (registers, local memory, position). -/
  | next (t : ThreadState)
  /-- Loads of `(location, bytes)`; the continuation receives the values read, in order. -/
  | load (reqs : List (Loc × Nat)) (k : List Value → ThreadState)
  /-- Stores of `(location, bytes, value)`, in order, then the state `t`. -/
  | store (writes : List (Loc × Nat × Value)) (t : ThreadState)
  /-- An atomic at `loc`: from the old value, the value left there and the next state. -/
  | atomic (loc : Loc) (bytes : Nat) (k : Value → Value × ThreadState)
  /-- The thread's run for this phase ends (it waits, exits or faults). -/
  | stop (t : ThreadState)

/-! ## Operands -/

/-- A value as integer bits of width `w`, or the fault of an integer use of an exact float. -/
def asBits (w : Nat) (v : Value) : ExecM (BitVec w) :=
  match v.toBits w with
  | some b => pure b
  | none => throw .floatAsBits

/-- A value as a predicate. -/
def asBool (v : Value) : ExecM Bool :=
  match v.toBool with
  | some b => pure b
  | none => throw .floatAsBits

/-- Integer operations are defined for widths 1 to 64, as in the interpreter. -/
def checkWidth (bits : Nat) : ExecM Unit :=
  if 1 ≤ bits ∧ bits ≤ 64 then pure () else throw (.unsupported "integer operations wider than 64 bits")

/-- The value of a special register. -/
def specialValue (env : Env) (t : ThreadState) : Special → ExecM Nat
  | .tid d => pure (t.tid.get d)
  | .ntid d => pure (env.launch.block.get d)
  | .ctaid d => pure (env.ctaid.get d)
  | .nctaid d => pure (env.launch.grid.get d)
  | .laneId => pure (t.linear % 32)
  | .warpId => pure (t.linear / 32)
  | .timer => throw (.unsupported "timer registers (%clock, %globaltimer)")

/-- `bits` bits of parameter `index` from byte `offset` on. -/
def paramValue (env : Env) (index offset bits : Nat) : ExecM Nat :=
  match listGet? env.kernel.params index, listGet? env.inputs.args index with
  | some p, some arg =>
    if offset + (bits + 7) / 8 ≤ p.bytes then pure ((arg / 2 ^ (8 * offset)) % 2 ^ bits)
    else throw (.badLaunch ("reads past the end of parameter " ++ toString index))
  | _, _ => throw (.badLaunch ("no argument for parameter " ++ toString index))

/-- An operand's value; `bits` is the width read from a parameter. -/
def operand (env : Env) (t : ThreadState) (o : Operand) (bits : Nat) : ExecM Value :=
  match o with
  | .reg r => pure (t.regs r)
  | .imm v => pure (.bits (BitVec.ofNat 64 v))
  | .special s => do
    let v ← specialValue env t s
    pure (.bits (BitVec.ofNat 64 v))
  | .varAddr v => pure (.bits (env.inputs.varAddr v))
  | .param index offset => do
    let v ← paramValue env index offset bits
    pure (.bits (BitVec.ofNat 64 v))
  | .notReg r => do
    let b ← asBool (t.regs r)
    pure (Value.ofBool (!b))

/-- An operand as `w`-bit integer bits. -/
def operandBits (env : Env) (t : ThreadState) (o : Operand) (w : Nat) : ExecM (BitVec w) := do
  let v ← operand env t o w
  asBits w v

/-- An operand as a predicate. -/
def operandBool (env : Env) (t : ThreadState) (o : Operand) : ExecM Bool := do
  let v ← operand env t o 1
  asBool v

/-- The byte address `[base + offset]`, wrapping. -/
def address (env : Env) (t : ThreadState) (a : Address) : ExecM (BitVec 64) := do
  let b ← operandBits env t a.base 64
  pure (b + BitVec.ofInt 64 a.offset)

/-! ## Address resolution -/

/-- Generic addresses of `.shared` variables start here (`model::interp::SHARED_BASE`). -/
def sharedBase : Nat := 2 ^ 50
/-- Generic addresses of `.local` variables start here (`LOCAL_BASE`). -/
def localBase : Nat := 2 ^ 51
/-- Size of the shared and local windows (`WINDOW`). -/
def windowSize : Nat := 2 ^ 32

/-- Is `a` inside the window starting at `base`? -/
def inWindow (base : Nat) (a : BitVec 64) : Bool :=
  decide (base ≤ a.toNat ∧ a.toNat < base + windowSize)

/-- The offset of `a` in the window at `base` (an address below the window is already an offset,
as a 32-bit shared address is). -/
def windowOffset (base : Nat) (a : BitVec 64) : BitVec 64 :=
  if inWindow base a then BitVec.ofNat 64 (a.toNat - base) else a

/-- Where an access lands: shared or global memory, or the thread's local memory. -/
inductive Target where
  | mem (loc : Loc)
  | thread (addr : BitVec 64)

/-- Resolves an access of state space `space` at address `a` (generic addresses by window). -/
def resolve (space : Space) (a : BitVec 64) : ExecM Target :=
  match space with
  | .global => pure (.mem ⟨.global, a⟩)
  | .const => pure (.mem ⟨.global, a⟩)
  | .shared => pure (.mem ⟨.shared, windowOffset sharedBase a⟩)
  | Space.«local» => pure (.thread (windowOffset localBase a))
  | .generic =>
    if inWindow sharedBase a then pure (.mem ⟨.shared, windowOffset sharedBase a⟩)
    else if inWindow localBase a then pure (.thread (windowOffset localBase a))
    else pure (.mem ⟨.global, a⟩)
  | .param => throw (.unsupported "accesses to the param space through an address")

/-- All targets in shared or global memory. -/
def allMem : List Target → Option (List Loc)
  | [] => some []
  | .mem l :: rest => (allMem rest).map (fun ls => l :: ls)
  | .thread _ :: _ => none

/-- All targets in the thread's local memory. -/
def allThread : List Target → Option (List (BitVec 64))
  | [] => some []
  | .thread a :: rest => (allThread rest).map (fun addrs => a :: addrs)
  | .mem _ :: _ => none

/-- The element addresses of a vector access. -/
def elemAddrs (base : BitVec 64) (elemBytes n : Nat) : List (BitVec 64) :=
  (List.range n).map (fun k => base + BitVec.ofNat 64 (k * elemBytes))

/-- The targets of a vector access. -/
def targets (space : Space) (base : BitVec 64) (elemBytes n : Nat) : ExecM (List Target) :=
  (elemAddrs base elemBytes n).mapM (resolve space)

/-! ## Instructions -/

/-- Sets `dst` to the combined predicate and `dstNeg` to that of its negation (`setp`'s
`p|q` form). -/
def setPredPair (t : ThreadState) (dst : RegId) (dstNeg : Option RegId) (r : Bool)
    (c : Option (BoolOp × Bool)) : ThreadState :=
  let f : Bool → Bool := fun x =>
    match c with
    | some (op, cv) => evalBool op x cv
    | none => x
  let t1 := t.setReg dst (Value.ofBool (f r))
  match dstNeg with
  | some n => t1.setReg n (Value.ofBool (f (!r)))
  | none => t1

/-- The optional `.and`/`.or`/`.xor` operand of `setp`. -/
def combineWith (env : Env) (t : ThreadState) : Option (BoolOp × Operand) → ExecM (Option (BoolOp × Bool))
  | none => pure none
  | some (op, o) => do
    let c ← operandBool env t o
    pure (some (op, c))

/-- The value an atomic leaves, from the old value and its operands; `none` when not modelled. -/
def atomNew (op : AtomOp) (isFloat signed : Bool) (w : Nat) (old : Value) (xs : List Value) : Option Value :=
  if isFloat && op != .cas then
    match xs with
    | x :: _ => (evalAtomFloat op (old.toFloat w) (x.toFloat w)).map Value.float
    | [] => none
  else
    match old.toBits w, xs with
    | some o, x :: rest =>
      match x.toBits w, (match rest with | c :: _ => c.toBits w | [] => some 0) with
      | some xv, some cv => some (Value.ofBitVec (evalAtomInt op signed o xv cv))
      | _, _ => none
    | _, _ => none

/-- Waits at a warp collective with the evaluated member mask. -/
def waitCollective (env : Env) (t : ThreadState) (mask : Operand) : ExecM Step := do
  let m ← operandBits env t mask 32
  pure (.stop { t with status := .atCollective (some m.toNat) })

/-- What one instruction does (`exec` in the interpreter). -/
def execOp (env : Env) (t : ThreadState) : Op → ExecM Step
  | .mov dst src bits => do
    let v ← operand env t src bits
    pure (.next ((t.setReg dst (v.maskTo bits)).advance))
  | .bin dst op a b bits => do
    checkWidth bits
    let x ← operandBits env t a bits
    let y ← operandBits env t b bits
    pure (.next ((t.setReg dst (Value.ofBitVec (evalBin op x y))).advance))
  | .un dst op a bits => do
    checkWidth bits
    let x ← operandBits env t a bits
    pure (.next ((t.setReg dst (Value.ofBitVec (evalUn op x))).advance))
  | .ext dst a fromBits toBits signed => do
    checkWidth fromBits
    checkWidth toBits
    let x ← operandBits env t a fromBits
    pure (.next ((t.setReg dst (Value.ofBitVec (evalExt toBits signed x))).advance))
  | .setp dst dstNeg cmp a b bits combine => do
    checkWidth bits
    let x ← operandBits env t a bits
    let y ← operandBits env t b bits
    let c ← combineWith env t combine
    pure (.next ((setPredPair t dst dstNeg (evalCmp cmp x y) c).advance))
  | .fSetp dst dstNeg cmp a b bits combine => do
    let x ← operand env t a bits
    let y ← operand env t b bits
    let c ← combineWith env t combine
    match evalFloatCmp cmp (x.toFloat bits) (y.toFloat bits) with
    | some r => pure (.next ((setPredPair t dst dstNeg r c).advance))
    | none => throw (.unsupported "unknown float comparison")
  | .selp dst a b cond bits => do
    let c ← operandBool env t cond
    let v ← operand env t (if c then a else b) bits
    pure (.next ((t.setReg dst (v.maskTo bits)).advance))
  | .pred dst op a b => do
    let x ← operandBool env t a
    let y ← operandBool env t b
    pure (.next ((t.setReg dst (Value.ofBool (evalBool op x y))).advance))
  | .predNot dst a => do
    let x ← operandBool env t a
    pure (.next ((t.setReg dst (Value.ofBool (!x))).advance))
  | .float dst op args bits => do
    let vs ← args.mapM (fun a => operand env t a bits)
    match evalFloat env.ideal op (vs.map (fun v => v.toFloat bits)) with
    | some r => pure (.next ((t.setReg dst (.float r)).advance))
    | none => throw (.unsupported "this float operation is not modelled")
  | .cvt dst a fromTy toTy rnd sat => do
    let x ← operand env t a ((typeBits? fromTy).getD 32)
    match evalCvt x fromTy toTy rnd sat with
    | some v => pure (.next ((t.setReg dst v).advance))
    | none => throw (.unsupported ("cvt from " ++ fromTy ++ " to " ++ toTy))
  | .ld dsts space addr elemBytes => do
    if 8 < elemBytes then throw (.unsupported "accesses wider than 64 bits")
    let base ← address env t addr
    let ts ← targets space base elemBytes dsts.length
    let w := 8 * elemBytes
    match allMem ts, allThread ts with
    | some locs, _ =>
      pure (.load (locs.map (fun l => (l, elemBytes)))
        (fun vals => (t.setRegs dsts (vals.map (fun v => v.maskTo w))).advance))
    | none, some addrs =>
      pure (.next ((t.setRegs dsts (addrs.map (fun a => (t.localMem a).maskTo w))).advance))
    | none, none => throw (.unsupported "a vector access spanning two state spaces")
  | .st srcs space addr elemBytes => do
    if 8 < elemBytes then throw (.unsupported "accesses wider than 64 bits")
    let base ← address env t addr
    let w := 8 * elemBytes
    let vs ← srcs.mapM (fun s => operand env t s w)
    let ts ← targets space base elemBytes srcs.length
    match allMem ts, allThread ts with
    | some locs, _ =>
      pure (.store ((locs.zip vs).map (fun p => (p.1, elemBytes, p.2.maskTo w))) t.advance)
    | none, some addrs =>
      pure (.next ((addrs.zip vs).foldl (fun acc p => acc.setLocal p.1 (p.2.maskTo w)) t).advance)
    | none, none => throw (.unsupported "a vector access spanning two state spaces")
  | .atom dst space op addr args bytes isFloat signed => do
    if 8 < bytes then throw (.unsupported "atomics wider than 64 bits")
    let w := 8 * bytes
    let need := if op = .cas then 2 else 1
    if args.length < need then throw (.unsupported "an atomic with too few operands")
    let xs ← (args.take need).mapM (fun a => operand env t a w)
    let at_ ← address env t addr
    let tgt ← resolve space at_
    let finish : Value → Value × ThreadState := fun old =>
      match atomNew op isFloat signed w old xs with
      | some nv =>
        (nv, (match dst with
          | some d => t.setReg d old
          | none => t).advance)
      | none => (old, { t with status := .faulted (.unsupported "this atomic is not modelled") })
    match tgt with
    | .mem loc => pure (.atomic loc bytes finish)
    | .thread a =>
      let r := finish (t.localMem a)
      pure (.next (r.2.setLocal a r.1))
  | .bar kind _ =>
    match kind with
    | .sync => pure (.stop { t with status := .atBarrier })
    | .arrive => pure (.next t.advance)
  | .barRed _ _ _ _ => pure (.stop { t with status := .atBarrier })
  | .warpSync mask => waitCollective env t mask
  | .shfl _ _ _ _ _ _ mask => waitCollective env t mask
  | .vote _ _ _ mask => waitCollective env t mask
  | .activeMask _ => pure (.stop { t with status := .atCollective none })
  | .fence => pure (.next t.advance)
  | .bra _ => pure (.next t.advance)
  | .ret => pure (.stop { t with status := .exited })
  | .exit => pure (.stop { t with status := .exited })
  | .unsupported opcode reason => throw (.unsupported (opcode ++ ": " ++ reason))

/-- An instruction with its guard: a guard that does not hold skips it. -/
def stepInst (env : Env) (t : ThreadState) (inst : Inst) : ExecM Step :=
  match inst.guard with
  | some (g, negated) => do
    let b ← asBool (t.regs g)
    if b == negated then pure (.next t.advance) else execOp env t inst.op
  | none => execOp env t inst.op

/-- The loops of the CFG that contain block `b`, by loop id. -/
def loopsOf (cfg : Cfg) (b : BlockId) : List Nat :=
  ((List.range cfg.loops.length).zip cfg.loops).filterMap
    (fun p => if p.2.blocks.contains b then some p.1 else none)

/-- Moves a thread along the edge to block `target`, counting loop iterations as the interpreter's
`goto` does: a back edge of a loop increments its counter, entering a loop starts it at 0. -/
def goto (cfg : Cfg) (t : ThreadState) (target : BlockId) : ThreadState :=
  let isBack : Nat → Bool := fun l =>
    match listGet? cfg.loops l with
    | some lp => lp.header == target && lp.latches.contains t.block
    | none => false
  let iters := (loopsOf cfg target).map (fun l =>
    match t.iters.find? (fun p => p.1 == l) with
    | some p => (l, if isBack l then p.2 + 1 else p.2)
    | none => (l, 0))
  { t with block := target, idx := 0, iters := iters }

/-- A block's terminator. -/
def stepTerm (cfg : Cfg) (t : ThreadState) : Term → Step
  | .goto b => .next (goto cfg t b)
  | .branch cond negated taken fallthrough =>
    match (t.regs cond).toBool with
    | some c => .next (goto cfg t (if c != negated then taken else fallthrough))
    | none => .stop { t with status := .faulted .floatAsBits }
  | Term.«return» => .stop { t with status := .exited }

/-- What thread `t` does next. A thread that is not running stops where it is. -/
def stepThread (env : Env) (t : ThreadState) : Step :=
  match t.status with
  | .running =>
    match listGet? env.kernel.cfg.blocks t.block with
    | none => .stop { t with status := .exited }
    | some blk =>
      match listGet? blk.insts t.idx with
      | some inst =>
        match stepInst env t inst with
        | .ok s => s
        | .error f => .stop { t with status := .faulted f }
      | none => stepTerm env.kernel.cfg t blk.term
  | _ => .stop t

/-! ## Threads and phases -/

/-- The stores of a `Step.store`, as accesses. -/
def writeLog (ws : List (Loc × Nat × Value)) : List Access :=
  ws.map (fun w => Access.write w.1 w.2.1 w.2.2)

/-- Performs one step against memory `m`, then continues with `run`. This is the only place
where a thread reads or writes shared or global memory. -/
def runStep (run : ThreadState → Mem → ThreadState × List Access) : Step → Mem → ThreadState × List Access
  | .next t, m => run t m
  | .load reqs k, m =>
    ((run (k (reqs.map (fun r => m r.1))) m).1,
      reqs.map (fun r => Access.read r.1 r.2) ++ (run (k (reqs.map (fun r => m r.1))) m).2)
  | .store ws t, m =>
    ((run t (applyLog m (writeLog ws))).1, writeLog ws ++ (run t (applyLog m (writeLog ws))).2)
  | .atomic loc bytes k, m =>
    ((run (k (m loc)).2 (update m loc (k (m loc)).1)).1,
      Access.atomic loc bytes (k (m loc)).1 :: (run (k (m loc)).2 (update m loc (k (m loc)).1)).2)
  | .stop t, _ => (t, [])

/-- Runs one thread for at most `fuel` steps until it stops; returns its state and its accesses.
Its effect on memory is `applyLog m` of the accesses. -/
def runThread (env : Env) : Nat → ThreadState → Mem → ThreadState × List Access
  | 0, t, _ => (t, [])
  | n + 1, t, m => runStep (fun t' m' => runThread env n t' m') (stepThread env t) m

/-- `ts` with thread `i` replaced by `t`. -/
def setThread (ts : Nat → ThreadState) (i : Nat) (t : ThreadState) : Nat → ThreadState :=
  fun j => if j = i then t else ts j

/-- Runs the threads `order` one after another, each with `run`, on memory `m`. -/
def runPhaseWith (run : ThreadState → Mem → ThreadState × List Access) :
    List Nat → (Nat → ThreadState) → Mem → (Nat → ThreadState) × Mem
  | [], ts, m => (ts, m)
  | i :: rest, ts, m =>
    runPhaseWith run rest (setThread ts i (run (ts i) m).1) (applyLog m (run (ts i) m).2)

/-- The accesses of each thread during `runPhaseWith run order ts m`, in running order. -/
def phaseLogs (run : ThreadState → Mem → ThreadState × List Access) :
    List Nat → (Nat → ThreadState) → Mem → List (Nat × List Access)
  | [], _, _ => []
  | i :: rest, ts, m =>
    (i, (run (ts i) m).2) ::
      phaseLogs run rest (setThread ts i (run (ts i) m).1) (applyLog m (run (ts i) m).2)

/-- A phase: every thread of `order` runs until it stops, one after another. -/
abbrev runPhase (env : Env) (fuel : Nat) : List Nat → (Nat → ThreadState) → Mem → (Nat → ThreadState) × Mem :=
  runPhaseWith (runThread env fuel)

/-! ## Blocks -/

/-- One access by one thread, as a kernel run records it. -/
structure Event where
  /-- Linear index of the block (`x + y * nctaid.x + z * nctaid.x * nctaid.y`). -/
  block : Nat
  /-- Linear index of the thread in its block. -/
  thread : Nat
  /-- Number of block barriers the thread had passed. -/
  phase : Nat
  access : Access

/-- Memory as a block left it when it passed a barrier: the segment specifications of shared
memory (`Lark.Agree.SharedAgree`) are about these. -/
structure Snapshot where
  /-- Linear index of the block. -/
  block : Nat
  /-- Number of block barriers the block has passed, this one included. -/
  phase : Nat
  mem : Mem

/-- The state of a block between phases. -/
structure BlockState where
  threads : Nat → ThreadState
  mem : Mem
  phase : Nat
  events : List Event
  /-- Memory at each barrier the block passed, in order. -/
  snapshots : List Snapshot

/-- The thread indices of a block, in linear order. -/
def threadIds (env : Env) : List Nat := List.range env.launch.block.count

/-- Linear index of the current block. -/
def blockIndex (env : Env) : Nat :=
  env.ctaid.x + env.ctaid.y * env.launch.grid.x + env.ctaid.z * env.launch.grid.x * env.launch.grid.y

/-- Thread `i` at the start of the kernel: registers and local memory zero, at the entry. -/
def initThread (env : Env) (i : Nat) : ThreadState :=
  let bx := env.launch.block.x
  let byy := env.launch.block.y
  { tid := { x := i % bx, y := (i / bx) % byy, z := i / (bx * byy) }
    linear := i
    regs := fun _ => .bits 0
    localMem := fun _ => .bits 0
    block := env.kernel.cfg.entry
    idx := 0
    status := .running
    iters := (loopsOf env.kernel.cfg env.kernel.cfg.entry).map (fun l => (l, 0)) }

/-- Is the thread still running (out of fuel, at the end of a phase)? -/
def ThreadState.isRunning (t : ThreadState) : Bool :=
  match t.status with
  | .running => true
  | _ => false

/-- The thread's fault, if it faulted. -/
def ThreadState.fault? (t : ThreadState) : Option Fault :=
  match t.status with
  | .faulted f => some f
  | _ => none

/-- Is the thread waiting at a warp collective? -/
def ThreadState.atCollective (t : ThreadState) : Bool :=
  match t.status with
  | .atCollective _ => true
  | _ => false

/-- Has the thread exited? -/
def ThreadState.exited (t : ThreadState) : Bool :=
  match t.status with
  | .exited => true
  | _ => false

/-- Is the thread waiting at a block barrier? -/
def ThreadState.atBarrier (t : ThreadState) : Bool :=
  match t.status with
  | .atBarrier => true
  | _ => false

/-- Two threads wait at the same dynamic instance of an instruction. -/
def sameInstance (a b : ThreadState) : Bool :=
  decide (a.pc = b.pc) && decide (a.iters = b.iters)

/-- The instruction a thread is at. -/
def instAt (env : Env) (t : ThreadState) : Option Inst :=
  (listGet? env.kernel.cfg.blocks t.block).bind (fun blk => listGet? blk.insts t.idx)

/-- The members of thread `t`'s collective with member mask `mask` among lanes `lanes` of warp
`warp`: `some` when all have arrived, `none` while some may still arrive, a fault when the mask
names a lane that cannot arrive. -/
def gatherMembers (ts : Nat → ThreadState) (count warp mask : Nat) (t : ThreadState) :
    List Nat → ExecM (Option (List Nat))
  | [] => pure (some [])
  | j :: js =>
    if mask / 2 ^ j % 2 = 0 then gatherMembers ts count warp mask t js
    else
      let k := warp * 32 + j
      if count ≤ k then
        throw (.warpDivergence ("the member mask names lane " ++ toString j ++ ", which is not a thread of the block"))
      else
        let o := ts k
        match o.status with
        | .exited => throw (.warpDivergence ("the member mask names lane " ++ toString j ++ ", which has exited"))
        | .atCollective m2 =>
          if sameInstance o t then
            if m2 = some mask then do
              let rest ← gatherMembers ts count warp mask t js
              pure (rest.map (fun ks => k :: ks))
            else throw (.warpDivergence ("lane " ++ toString j ++ " arrives with a different member mask"))
          else pure none
        | _ => pure none

/-- The group of thread `i`'s collective if all its members have arrived. -/
def collectiveGroup (ts : Nat → ThreadState) (count i : Nat) : ExecM (Option (List Nat)) :=
  let t := ts i
  let warp := t.linear / 32
  match t.status with
  | .atCollective none =>
    pure (some ((List.range 32).filterMap (fun j =>
      let k := warp * 32 + j
      if decide (k < count) && (ts k).atCollective && sameInstance (ts k) t then some k else none)))
  | .atCollective (some mask) =>
    if mask / 2 ^ (t.linear % 32) % 2 = 0 then
      throw (.warpDivergence "the executing lane is not in its own member mask")
    else gatherMembers ts count warp mask t (List.range 32)
  | _ => pure none

/-- Sets register `dst` of every member to `v`. -/
def setRegAll (ts : Nat → ThreadState) (members : List Nat) (dst : RegId) (v : Value) : Nat → ThreadState :=
  members.foldl (fun acc k => setThread acc k ((acc k).setReg dst v)) ts

/-- The data effect of a completed collective on its members. -/
def collectiveEffect (env : Env) (ts : Nat → ThreadState) (members : List Nat) : Op → ExecM (Nat → ThreadState)
  | .activeMask dst =>
    let all := members.foldl (fun acc k => acc ||| 2 ^ ((ts k).linear % 32)) 0
    pure (setRegAll ts members dst (.bits (BitVec.ofNat 64 all)))
  | .vote dst mode pred _ => do
    let ps ← members.mapM (fun k => operandBool env (ts k) pred)
    let lanes := members.map (fun k => (ts k).linear % 32)
    pure (setRegAll ts members dst (.bits (BitVec.ofNat 64 (voteResult mode (lanes.zip ps)))))
  | .shfl dst predDst mode src lane clamp _ => do
    let srcs ← members.mapM (fun k => do
      let v ← operand env (ts k) src 32
      pure ((ts k).linear % 32, v.maskTo 32))
    let results ← members.mapM (fun k => do
      let b ← operandBits env (ts k) lane 32
      let c ← operandBits env (ts k) clamp 32
      let l := (ts k).linear % 32
      let jp := shflSource mode l b.toNat c.toNat
      match srcs.find? (fun s => s.1 == jp.1) with
      | some s => pure (k, s.2, jp.2)
      | none => throw (.warpDivergence ("lane " ++ toString l ++ " reads lane " ++ toString jp.1 ++ ", which is not in the member mask")))
    pure (results.foldl (fun acc r =>
      let t1 := (acc r.1).setReg dst r.2.1
      let t2 := match predDst with
        | some p => t1.setReg p (Value.ofBool r.2.2)
        | none => t1
      setThread acc r.1 t2) ts)
  | _ => pure ts

/-- Lets the members of a completed collective go on. -/
def releaseMembers (ts : Nat → ThreadState) (members : List Nat) : Nat → ThreadState :=
  fun k => if members.contains k then { ts k with status := .running, idx := (ts k).idx + 1 } else ts k

/-- Completes the first collective (in thread order) whose members have all arrived. -/
def completeNext (env : Env) (ts : Nat → ThreadState) (count : Nat) : List Nat → ExecM (Option (Nat → ThreadState))
  | [] => pure none
  | i :: rest => do
    let group ← collectiveGroup ts count i
    match group with
    | some members =>
      match members, (members.head?.bind (fun k => instAt env (ts k))) with
      | _ :: _, some inst => do
        let ts' ← collectiveEffect env ts members inst.op
        pure (some (releaseMembers ts' members))
      | _, _ => completeNext env ts count rest
    | none => completeNext env ts count rest

/-- Releases a barrier every thread of the block waits at, at the same instruction in the same loop
iterations; `none` if they do not. -/
def releaseBarrier (ids : List Nat) (ts : Nat → ThreadState) : Option (Nat → ThreadState) :=
  match ids with
  | [] => none
  | first :: _ =>
    if ids.all (fun i => (ts i).atBarrier && sameInstance (ts i) (ts first)) then
      some (fun i => if ids.contains i then { ts i with status := .running, idx := (ts i).idx + 1 } else ts i)
    else none

/-- What a barrier every thread of the block waits at does besides releasing them: `bar.red`
sets `dst` in every thread to the reduction of the threads' predicates (`barRedResult`), read
from the threads as they arrived (`before`) and written into the released threads (`after`);
`bar.sync` does nothing else. -/
def barrierEffect (env : Env) (ids : List Nat) (before after : Nat → ThreadState) :
    ExecM (Nat → ThreadState) :=
  match (ids.head?.bind (fun k => instAt env (before k))).map (fun inst => inst.op) with
  | some (.barRed dst op pred _) => do
    let ps ← ids.mapM (fun k => operandBool env (before k) pred)
    pure (setRegAll after ids dst (.bits (BitVec.ofNat 64 (barRedResult op ps))))
  | _ => pure after

/-- The events of one phase. -/
def phaseEvents (env : Env) (phase : Nat) (logs : List (Nat × List Access)) : List Event :=
  logs.foldr (fun p acc =>
    p.2.map (fun a => ({ block := blockIndex env, thread := p.1, phase := phase, access := a } : Event)) ++ acc) []

/-- Runs a block: phases and what happens between them, for at most `rounds` rounds. `none` when
fuel ran out; otherwise the final state and the fault that stopped the block, if any. -/
def blockLoop (env : Env) (fuel : Nat) : Nat → BlockState → Option (BlockState × Option Fault)
  | 0, _ => none
  | n + 1, bs =>
    let ids := threadIds env
    let count := env.launch.block.count
    let logs := phaseLogs (runThread env fuel) ids bs.threads bs.mem
    let r := runPhase env fuel ids bs.threads bs.mem
    let bs' : BlockState :=
      { threads := r.1, mem := r.2, phase := bs.phase, events := bs.events ++ phaseEvents env bs.phase logs,
        snapshots := bs.snapshots }
    if ids.any (fun i => (bs'.threads i).isRunning) then none
    else
      match ids.find? (fun i => ((bs'.threads i).fault?).isSome) with
      | some i => some (bs', (bs'.threads i).fault?)
      | none =>
        match completeNext env bs'.threads count ids with
        | .error f => some (bs', some f)
        | .ok (some ts) => blockLoop env fuel n { bs' with threads := ts }
        | .ok none =>
          if ids.any (fun i => (bs'.threads i).atCollective) then
            some (bs', some (.warpDivergence "lanes named by the member mask never arrive at this instruction"))
          else if ids.all (fun i => (bs'.threads i).exited) then some (bs', none)
          else
            match releaseBarrier ids bs'.threads with
            | none => some (bs', some .barrierDivergence)
            | some ts =>
              match barrierEffect env ids bs'.threads ts with
              | .error f => some (bs', some f)
              | .ok ts' =>
                let snap : Snapshot := { block := blockIndex env, phase := bs'.phase + 1, mem := bs'.mem }
                blockLoop env fuel n
                  { bs' with threads := ts', phase := bs'.phase + 1, snapshots := bs'.snapshots ++ [snap] }

/-! ## Kernels -/

/-- The blocks of a grid in the order the interpreter runs them (x fastest, then y, then z). -/
def blockIds (g : Dim3) : List Dim3 :=
  (List.range g.z).foldr (fun z acc =>
    (List.range g.y).foldr (fun y acc' =>
      (List.range g.x).map (fun x => ({ x := x, y := y, z := z } : Dim3)) ++ acc') acc) []

/-- Why a launch does not fit a kernel, if it does not. -/
def launchProblem (k : Kernel) (l : Launch) (inputs : Inputs) : Option String :=
  if l.grid.x = 0 ∨ l.grid.y = 0 ∨ l.grid.z = 0 ∨ l.block.x = 0 ∨ l.block.y = 0 ∨ l.block.z = 0 then
    some "grid and block must be at least 1 in every dimension"
  else if 1024 < l.block.count ∨ 64 < l.block.z then
    some "at most 1024 threads per block (and z at most 64)"
  else if inputs.args.length ≠ k.params.length then
    some "one argument per kernel parameter"
  else
    match k.reqntid with
    | some r => if r = l.block then none else some "the block shape differs from .reqntid"
    | none => none

/-- The result of a kernel run: global memory at the end (or the fault that stopped it), every
access in the order they happened, and memory at every barrier a block passed. -/
structure KernelResult where
  outcome : Except Fault (BitVec 64 → Value)
  events : List Event
  snapshots : List Snapshot

/-- Runs the blocks in order, threading global memory. -/
def runBlocks (k : Kernel) (I : Ideal) (l : Launch) (inputs : Inputs) (fuel : Nat) :
    List Dim3 → (BitVec 64 → Value) → List Event → List Snapshot → Option KernelResult
  | [], g, evs, snaps => some { outcome := .ok g, events := evs, snapshots := snaps }
  | c :: rest, g, evs, snaps =>
    let env : Env := { kernel := k, launch := l, inputs := inputs, ideal := I, ctaid := c }
    let mem : Mem := fun loc =>
      match loc.region with
      | .global => g loc.addr
      | .shared => .bits 0
    let start : BlockState :=
      { threads := initThread env, mem := mem, phase := 0, events := [], snapshots := [] }
    match blockLoop env fuel fuel start with
    | none => none
    | some (bs, some f) =>
      some { outcome := .error f, events := evs ++ bs.events, snapshots := snaps ++ bs.snapshots }
    | some (bs, none) =>
      runBlocks k I l inputs fuel rest (fun a => bs.mem { region := .global, addr := a })
        (evs ++ bs.events) (snaps ++ bs.snapshots)

/-- The kernel's semantics: `none` when `fuel` (steps per thread per phase, and rounds per
block) ran out, otherwise the run's result. -/
def runKernel (k : Kernel) (I : Ideal) (l : Launch) (inputs : Inputs) (fuel : Nat) : Option KernelResult :=
  match launchProblem k l inputs with
  | some why => some { outcome := .error (.badLaunch why), events := [], snapshots := [] }
  | none => runBlocks k I l inputs fuel (blockIds l.grid) inputs.global [] []

end Lark
