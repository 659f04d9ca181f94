//! The machine: launch setup, block scheduling, and one instruction at a time.

// Errors end a run, so their size costs nothing worth boxing for.
#![allow(clippy::result_large_err)]

use super::float::{FloatFormat, FloatVal, Rounding};
use super::hardware::{self, FloatArithmetic};
use super::memory::{BufferId, GlobalLoc, Memory, Region, Value, LOCAL_BASE, MAX_BUFFERS, SHARED_BASE, SLOT, WINDOW};
use super::observe::{At, CollectiveLane, Observer, Place};
use super::{AccessEvent, AccessKind, Arg, InstRef, InterpError, Launch, Trace, VarPlacement, Whereabouts};
use crate::cfg::{BlockId, LoopId, Term};
use crate::ops::*;
use crate::Kernel;
use ptx::types::{type_bits, type_class, TypeClass};
use std::collections::HashMap;

type R<T> = Result<T, InterpError>;

#[derive(Clone, Debug, PartialEq)]
enum Status {
    Running,
    /// At a `bar.sync`.
    Barrier,
    /// At a warp collective; `mask` is its member mask (`None` for `activemask`).
    Collective {
        mask: Option<u32>,
    },
    Exited,
}

struct Thread {
    tid: [u32; 3],
    linear: u32,
    regs: Vec<Value>,
    block: BlockId,
    idx: usize,
    status: Status,
    phase: u32,
    iters: Vec<(LoopId, u64)>,
    local: Vec<Region>,
}

impl Thread {
    fn pc(&self) -> InstRef {
        (self.block, self.idx)
    }

    fn reg(&self, r: RegId) -> Value {
        self.regs.get(r as usize).cloned().unwrap_or(Value::Bits(0))
    }

    /// A register's value as `width`-bit integer bits ([`Value::bits`]), without copying it:
    /// read for most operands, every guard and every branch.
    fn bits(&self, r: RegId, width: u32) -> u64 {
        match self.regs.get(r as usize) {
            Some(Value::Bits(b)) => b & mask(width),
            Some(v) => v.bits(width),
            None => 0,
        }
    }

    /// A predicate register's value.
    fn flag(&self, r: RegId) -> bool {
        self.bits(r, 1) != 0
    }

    fn set(&mut self, r: RegId, v: Value) {
        if let Some(slot) = self.regs.get_mut(r as usize) {
            *slot = v;
        }
    }
}

struct BlockState {
    ctaid: [u32; 3],
    threads: Vec<Thread>,
    shared: Vec<Region>,
}

/// A slot of the shared or local window.
struct Slot {
    size: u64,
    names: Vec<String>,
}

struct Machine<'a> {
    k: &'a Kernel,
    l: &'a Launch,
    mem: &'a mut Memory,
    params: Vec<Vec<u8>>,
    /// The address `VarAddr(v)` evaluates to.
    var_addr: Vec<u64>,
    shared_slots: Vec<Slot>,
    local_slots: Vec<Slot>,
    nests: Vec<Vec<LoopId>>,
    /// Per block, the loop headers it jumps back to (it is their latch) and their loops.
    back: Vec<Vec<(BlockId, LoopId)>>,
    trace: Trace,
    /// Where discarded out-of-bounds accesses go when the launch asks to continue past them.
    scratch: Region,
    obs: Option<&'a mut dyn Observer>,
    /// Where the current instruction's accesses landed (only kept for an observer).
    places: Vec<Place>,
}

enum Flow {
    Next,
    Wait(Status),
    Exit,
}

/// A resolved memory location.
#[derive(Clone, Copy)]
enum Target {
    Global {
        buffer: usize,
        offset: u64,
    },
    Shared {
        slot: usize,
        offset: u64,
    },
    Local {
        slot: usize,
        offset: u64,
    },
    /// An out-of-bounds access the launch chose to survive: reads see zeros, writes vanish.
    Discard,
}

pub(super) fn execute<'a>(k: &'a Kernel, l: &'a Launch, mem: &'a mut Memory, obs: Option<&'a mut dyn Observer>) -> (Trace, Result<(), InterpError>) {
    let mut m = match Machine::new(k, l, mem, obs) {
        Ok(m) => m,
        Err(e) => return (Trace::default(), Err(e)),
    };
    let r = m.run_all();
    (m.trace, r)
}

fn bad<T>(msg: impl Into<String>) -> R<T> {
    Err(InterpError::BadLaunch(msg.into()))
}

impl<'a> Machine<'a> {
    fn new(k: &'a Kernel, l: &'a Launch, mem: &'a mut Memory, obs: Option<&'a mut dyn Observer>) -> R<Machine<'a>> {
        if l.grid.contains(&0) || l.block.contains(&0) {
            return bad(format!("grid {:?} and block {:?} must be at least 1 in every dimension", l.grid, l.block));
        }
        let threads = l.block.iter().map(|&d| d as u64).product::<u64>();
        if threads > 1024 || l.block[2] > 64 {
            return bad(format!("block {:?} has {threads} threads; at most 1024 (and z at most 64)", l.block));
        }
        if let Some(req) = k.reqntid {
            if req != [l.block[0] as u64, l.block[1] as u64, l.block[2] as u64] {
                return bad(format!("the kernel requires blocks of {req:?} threads (.reqntid), launched with {:?}", l.block));
            }
        }
        if let Some(bs) = &l.blocks {
            if let Some(b) = bs.iter().find(|b| (0..3).any(|d| b[d] >= l.grid[d])) {
                return bad(format!("block {b:?} is outside the grid {:?}", l.grid));
            }
        }
        if l.args.len() != k.params.len() {
            return bad(format!("`{}` takes {} parameter(s), {} argument(s) given", k.name, k.params.len(), l.args.len()));
        }
        let mut params = Vec::new();
        for (p, a) in k.params.iter().zip(&l.args) {
            let size = p.bytes as usize;
            let image = match a {
                Arg::Scalar(v) => {
                    if size > 8 {
                        return bad(format!("parameter `{}` is {size} bytes: pass `Arg::Bytes`", p.name));
                    }
                    v.to_le_bytes()[..size].to_vec()
                }
                Arg::Buffer(id) => {
                    if id.0 as usize >= mem.len() {
                        return bad(format!("argument for `{}` names buffer {} but memory has {}", p.name, id.0, mem.len()));
                    }
                    if size > 8 {
                        return bad(format!("parameter `{}` is {size} bytes, not a pointer", p.name));
                    }
                    Memory::base(*id).to_le_bytes()[..size].to_vec()
                }
                Arg::Bytes(b) => {
                    if b.len() != size {
                        return bad(format!("parameter `{}` is {size} bytes, {} given", p.name, b.len()));
                    }
                    b.clone()
                }
            };
            params.push(image);
        }
        // Variables.
        let mut var_addr = vec![0u64; k.vars.len()];
        let mut shared_slots: Vec<Slot> = Vec::new();
        let mut local_slots: Vec<Slot> = Vec::new();
        let mut dynamic_slot: Option<usize> = None;
        let mut trace = Trace::default();
        for (i, v) in k.vars.iter().enumerate() {
            match v.space {
                Space::Shared => {
                    let slot = match v.size {
                        Some(size) => {
                            shared_slots.push(Slot { size, names: vec![v.name.to_string()] });
                            shared_slots.len() - 1
                        }
                        None => *dynamic_slot.get_or_insert_with(|| {
                            shared_slots.push(Slot { size: l.dynamic_shared_bytes, names: Vec::new() });
                            shared_slots.len() - 1
                        }),
                    };
                    if v.size.is_none() {
                        shared_slots[slot].names.push(v.name.to_string());
                    }
                    var_addr[i] = SHARED_BASE + slot as u64 * SLOT;
                    trace.shared_vars.push(VarPlacement {
                        var: i as VarId,
                        name: v.name.to_string(),
                        offset: slot as u64 * SLOT,
                        size: shared_slots[slot].size,
                    });
                }
                Space::Local => {
                    let size = v.size.unwrap_or(0);
                    local_slots.push(Slot { size, names: vec![v.name.to_string()] });
                    let slot = local_slots.len() - 1;
                    var_addr[i] = LOCAL_BASE + slot as u64 * SLOT;
                    trace.local_vars.push(VarPlacement { var: i as VarId, name: v.name.to_string(), offset: slot as u64 * SLOT, size });
                }
                Space::Global | Space::Const | Space::Generic | Space::Param => {
                    let id = match mem.find(&v.name) {
                        Some(id) => id,
                        None if v.initialized => {
                            return bad(format!(
                                "`{}` has an initializer the interpreter cannot read: add a buffer named `{}` with its contents",
                                v.name, v.name
                            ));
                        }
                        None => mem.add_zeroed(v.name.to_string(), v.size.unwrap_or(0)),
                    };
                    var_addr[i] = Memory::base(id);
                }
            }
        }
        if shared_slots.len() as u64 > WINDOW / SLOT || local_slots.len() as u64 > WINDOW / SLOT {
            return bad("too many .shared or .local variables (at most 256 each)");
        }
        if let Some(s) = shared_slots.iter().chain(&local_slots).find(|s| s.size > SLOT) {
            return bad(format!("`{}` is {} bytes; the interpreter allows at most {SLOT}", s.names.join("`, `"), s.size));
        }
        if mem.len() > MAX_BUFFERS {
            return bad(format!("{} buffers; at most {MAX_BUFFERS}", mem.len()));
        }
        if let Some(id) = mem.ids().find(|&id| mem.buffer_len(id) > super::BUFFER_STRIDE) {
            return bad(format!("buffer `{}` is larger than {} bytes", mem.name(id), super::BUFFER_STRIDE));
        }
        let cfg = &k.cfg;
        let nests = (0..cfg.blocks.len()).map(|b| cfg.loop_nest(b as BlockId)).collect();
        let mut back = vec![Vec::new(); cfg.blocks.len()];
        for (i, lp) in cfg.loops.iter().enumerate() {
            for &latch in &lp.latches {
                if let Some(edges) = back.get_mut(latch as usize) {
                    edges.push((lp.header, i as LoopId));
                }
            }
        }
        Ok(Machine { k, l, mem, params, var_addr, shared_slots, local_slots, nests, back, trace, scratch: Region::zeroed(64), obs, places: Vec::new() })
    }

    fn run_all(&mut self) -> R<()> {
        let l = self.l;
        let blocks: Vec<[u32; 3]> = match &l.blocks {
            Some(b) => b.clone(),
            None => {
                let mut v = Vec::new();
                for z in 0..l.grid[2] {
                    for y in 0..l.grid[1] {
                        for x in 0..l.grid[0] {
                            v.push([x, y, z]);
                        }
                    }
                }
                v
            }
        };
        for ctaid in blocks {
            self.run_block(ctaid)?;
            self.trace.blocks_run.push(ctaid);
            if let Some(o) = self.obs.as_deref_mut() {
                o.block_done(ctaid);
            }
        }
        Ok(())
    }

    fn new_block(&self, ctaid: [u32; 3]) -> BlockState {
        let [bx, by, bz] = self.l.block;
        let mut threads = Vec::with_capacity((bx * by * bz) as usize);
        for z in 0..bz {
            for y in 0..by {
                for x in 0..bx {
                    threads.push(Thread {
                        tid: [x, y, z],
                        linear: x + y * bx + z * bx * by,
                        regs: vec![Value::Bits(0); self.k.regs.len()],
                        block: self.k.cfg.entry,
                        idx: 0,
                        status: Status::Running,
                        phase: 0,
                        iters: self.nests.get(self.k.cfg.entry as usize).map_or(Vec::new(), |n| n.iter().map(|&l| (l, 0)).collect()),
                        local: self.local_slots.iter().map(|s| Region::zeroed(s.size)).collect(),
                    });
                }
            }
        }
        BlockState { ctaid, threads, shared: self.shared_slots.iter().map(|s| Region::zeroed(s.size)).collect() }
    }

    fn run_block(&mut self, ctaid: [u32; 3]) -> R<()> {
        let mut blk = self.new_block(ctaid);
        loop {
            for t in 0..blk.threads.len() {
                if blk.threads[t].status == Status::Running {
                    self.run_thread(&mut blk, t)?;
                }
            }
            // Every thread waits or has exited. Complete what collectives we can.
            if self.complete_collectives(&mut blk)? {
                continue;
            }
            if let Some(t) = blk.threads.iter().position(|th| matches!(th.status, Status::Collective { .. })) {
                return Err(self.warp_error(&blk, t, "lanes named by the member mask never arrive at this instruction"));
            }
            let Some(first) = blk.threads.iter().position(|th| th.status == Status::Barrier) else {
                return Ok(()); // all exited
            };
            let key = (blk.threads[first].pc(), blk.threads[first].iters.clone());
            let same = |th: &Thread| th.status == Status::Barrier && th.pc() == key.0 && th.iters == key.1;
            if blk.threads.iter().all(same) {
                self.barrier_effect(&mut blk, key.0)?;
                for th in &mut blk.threads {
                    th.status = Status::Running;
                    th.phase += 1;
                    th.idx += 1;
                }
                if let Some(o) = self.obs.as_deref_mut() {
                    o.barrier_released(ctaid, key.0, blk.threads[first].phase);
                }
                continue;
            }
            let arrived = blk.threads.iter().filter(|th| same(th)).map(|th| th.tid).collect();
            let missing = blk.threads.iter().filter(|th| !same(th)).map(|th| (th.tid, self.whereabouts(th))).collect();
            return Err(InterpError::BarrierDivergence { block: ctaid, inst: key.0, line: self.line(key.0), iterations: key.1, arrived, missing });
        }
    }

    /// What a released barrier does besides releasing: `bar.red` gives every thread the
    /// reduction of the threads' predicates (their registers still hold what they had when they
    /// arrived).
    fn barrier_effect(&self, blk: &mut BlockState, at: InstRef) -> R<()> {
        let Some(inst) = self.k.cfg.blocks.get(at.0 as usize).and_then(|b| b.insts.get(at.1)) else { return Ok(()) };
        let Op::BarRed { dst, op, pred, .. } = &inst.op else { return Ok(()) };
        let mut holding = 0u64;
        for t in 0..blk.threads.len() {
            match self.operand(blk.ctaid, &blk.threads[t], pred, 1) {
                Ok(v) => holding += u64::from(v.bool()),
                Err(reason) => return Err(self.unsupported(blk, t, inst, reason)),
            }
        }
        let r = eval_bar_red(*op, holding, blk.threads.len() as u64);
        for th in &mut blk.threads {
            th.set(*dst, Value::Bits(r));
        }
        Ok(())
    }

    fn line(&self, at: InstRef) -> Option<u32> {
        let b = self.k.cfg.blocks.get(at.0 as usize)?;
        match b.insts.get(at.1) {
            Some(i) => i.line,
            None => b.term_line,
        }
    }

    fn whereabouts(&self, th: &Thread) -> Whereabouts {
        let (inst, line, iterations) = (th.pc(), self.line(th.pc()), th.iters.clone());
        match th.status {
            Status::Exited => Whereabouts::Exited,
            Status::Barrier => Whereabouts::AtBarrier { inst, line, iterations },
            Status::Collective { mask } => Whereabouts::AtCollective { inst, line, iterations, mask },
            Status::Running => Whereabouts::Running,
        }
    }

    fn step(&mut self, ctaid: [u32; 3], th: &Thread) -> R<()> {
        self.trace.steps += 1;
        // Polling the budget costs a clock read: do it every few thousand steps (microseconds).
        if self.trace.steps.is_multiple_of(4096) {
            if let Err(stop) = self.l.budget.check() {
                return Err(InterpError::Stopped(stop));
            }
        }
        if self.trace.steps > self.l.step_limit {
            return Err(InterpError::StepLimit { limit: self.l.step_limit, block: ctaid, thread: th.tid, inst: th.pc(), line: self.line(th.pc()) });
        }
        Ok(())
    }

    /// Moves `th` to the start of block `to`, keeping its loop counters: loops are nested, so the
    /// loops of both blocks are the common prefix of their nests (outermost first), those keep
    /// their counts (the one whose back edge this is counts one more), and the loops entered
    /// start at 0. Updated in place: this runs on every edge of every thread.
    fn goto(&self, th: &mut Thread, to: BlockId) {
        let back = self.back.get(th.block as usize).and_then(|edges| edges.iter().find(|(header, _)| *header == to)).map(|&(_, l)| l);
        let nest = &self.nests[to as usize];
        let kept = th.iters.iter().zip(nest).take_while(|((l, _), m)| l == *m).count();
        th.iters.truncate(kept);
        if let Some(entry) = th.iters.iter_mut().find(|(l, _)| Some(*l) == back) {
            entry.1 += 1;
        }
        th.iters.extend(nest[kept..].iter().map(|&l| (l, 0)));
        th.block = to;
        th.idx = 0;
    }

    /// Runs one thread until it waits or exits.
    fn run_thread(&mut self, blk: &mut BlockState, t: usize) -> R<()> {
        let k = self.k;
        loop {
            self.step(blk.ctaid, &blk.threads[t])?;
            let th = &mut blk.threads[t];
            let Some(b) = k.cfg.blocks.get(th.block as usize) else {
                th.status = Status::Exited;
                return Ok(());
            };
            if let Some(inst) = b.insts.get(th.idx) {
                if let Some((g, negated)) = inst.guard {
                    let executes = th.flag(g) != negated;
                    if let Some(o) = self.obs.as_deref_mut() {
                        let at = At { ctaid: blk.ctaid, tid: th.tid, linear: th.linear };
                        o.guard(&at, th.pc(), inst, g, executes);
                    }
                    if !executes {
                        th.idx += 1;
                        continue;
                    }
                }
                let flow = if self.obs.is_some() { self.exec_observed(blk, t, inst)? } else { self.exec(blk, t, inst)? };
                match flow {
                    Flow::Next => blk.threads[t].idx += 1,
                    Flow::Wait(s) => {
                        blk.threads[t].status = s;
                        return Ok(());
                    }
                    Flow::Exit => {
                        blk.threads[t].status = Status::Exited;
                        return Ok(());
                    }
                }
            } else {
                match b.term {
                    Term::Goto(n) => self.goto(th, n),
                    Term::Branch { cond, negated, taken, fallthrough } => {
                        let value = th.flag(cond);
                        let is_taken = value != negated;
                        if let Some(o) = self.obs.as_deref_mut() {
                            let at = At { ctaid: blk.ctaid, tid: th.tid, linear: th.linear };
                            o.branch(&at, cond, value, b.term_line);
                        }
                        let to = if is_taken { taken } else { fallthrough };
                        self.goto(th, to)
                    }
                    Term::Return => {
                        th.status = Status::Exited;
                        return Ok(());
                    }
                }
            }
        }
    }

    fn special(&self, ctaid: [u32; 3], th: &Thread, s: Special) -> u64 {
        let d = |i: u8| (i as usize).min(2);
        (match s {
            Special::Tid(i) => th.tid[d(i)],
            Special::Ntid(i) => self.l.block[d(i)],
            Special::Ctaid(i) => ctaid[d(i)],
            Special::Nctaid(i) => self.l.grid[d(i)],
            Special::LaneId => th.linear % 32,
            Special::WarpId => th.linear / 32,
            Special::Timer => return self.trace.steps,
        }) as u64
    }

    /// An operand's value; `bits` is the width read from a parameter.
    fn operand(&self, ctaid: [u32; 3], th: &Thread, o: &Operand, bits: u32) -> Result<Value, String> {
        Ok(match o {
            Operand::Reg(r) => th.reg(*r),
            Operand::Imm(v) => Value::Bits(*v),
            Operand::Special(s) => Value::Bits(self.special(ctaid, th, *s)),
            Operand::VarAddr(v) => Value::Bits(self.var_addr.get(*v as usize).copied().unwrap_or(0)),
            Operand::NotReg(r) => Value::Bits(!th.reg(*r).bool() as u64),
            Operand::Param { index, offset } => {
                let Some(img) = self.params.get(*index as usize) else { return Err(format!("no parameter {index}")) };
                let n = bits.div_ceil(8) as usize;
                let start = *offset as usize;
                if start + n > img.len() {
                    return Err(format!("reads bytes {start}..{} of parameter {index}, which has {} bytes", start + n, img.len()));
                }
                Value::Bits(img[start..start + n].iter().rev().fold(0u64, |acc, &b| (acc << 8) | b as u64) & mask(bits))
            }
        })
    }

    /// An operand's value as `bits`-wide integer bits: [`Machine::operand`] then
    /// [`Value::bits`], without copying a register's value (most operands of a replay).
    fn operand_bits(&self, ctaid: [u32; 3], th: &Thread, o: &Operand, bits: u32) -> Result<u64, String> {
        match o {
            Operand::Reg(r) => Ok(th.bits(*r, bits)),
            Operand::Imm(v) => Ok(v & mask(bits)),
            _ => self.operand(ctaid, th, o, bits).map(|v| v.bits(bits)),
        }
    }

    fn unsupported(&self, blk: &BlockState, t: usize, inst: &Inst, reason: impl Into<String>) -> InterpError {
        let th = &blk.threads[t];
        let opcode = match &inst.op {
            Op::Unsupported { opcode, .. } => opcode.to_string(),
            op => format!("{op:?}").split([' ', '{', '(']).next().unwrap_or("?").to_lowercase(),
        };
        InterpError::Unsupported { block: blk.ctaid, thread: th.tid, inst: th.pc(), line: inst.line, opcode, reason: reason.into() }
    }

    /// `exec`, telling the observer what the instruction read, set and touched.
    fn exec_observed(&mut self, blk: &mut BlockState, t: usize, inst: &Inst) -> R<Flow> {
        let th = &blk.threads[t];
        let (at, pc) = (At { ctaid: blk.ctaid, tid: th.tid, linear: th.linear }, th.pc());
        let bits = inst.op.operand_bits();
        let operands: Vec<Value> = inst.op.operands().iter().map(|o| self.operand(blk.ctaid, th, o, bits).unwrap_or(Value::Bits(0))).collect();
        self.places.clear();
        let flow = self.exec(blk, t, inst)?;
        // A collective completes later, for all its lanes at once (see `complete`).
        if !matches!(flow, Flow::Wait(Status::Collective { .. })) {
            let th = &blk.threads[t];
            let results: Vec<(RegId, Value)> = inst.op.destinations().into_iter().map(|r| (r, th.reg(r))).collect();
            let places = std::mem::take(&mut self.places);
            if let Some(o) = self.obs.as_deref_mut() {
                o.executed(&at, pc, inst, &operands, &results, &places);
            }
            self.places = places;
        }
        Ok(flow)
    }

    fn exec(&mut self, blk: &mut BlockState, t: usize, inst: &Inst) -> R<Flow> {
        let ctaid = blk.ctaid;
        macro_rules! val {
            ($o:expr, $bits:expr) => {
                match self.operand(ctaid, &blk.threads[t], $o, $bits) {
                    Ok(v) => v,
                    Err(reason) => return Err(self.unsupported(blk, t, inst, reason)),
                }
            };
        }
        macro_rules! bits {
            ($o:expr, $bits:expr) => {
                match self.operand_bits(ctaid, &blk.threads[t], $o, $bits) {
                    Ok(v) => v,
                    Err(reason) => return Err(self.unsupported(blk, t, inst, reason)),
                }
            };
        }
        macro_rules! set {
            ($r:expr, $v:expr) => {{
                let v = $v;
                blk.threads[t].set($r, v)
            }};
        }
        let widths_ok = match &inst.op {
            Op::Bin { bits, .. } | Op::Un { bits, .. } | Op::Setp { bits, .. } => (1..=64).contains(bits),
            Op::Ext { from, to, .. } => (1..=64).contains(from) && (1..=64).contains(to),
            _ => true,
        };
        if !widths_ok {
            return Err(self.unsupported(blk, t, inst, "integer operations wider than 64 bits are not modelled"));
        }
        match &inst.op {
            Op::Mov { dst, src, bits } => {
                let v = match val!(src, *bits) {
                    Value::Bits(b) => Value::Bits(b & mask(*bits)),
                    f => f,
                };
                set!(*dst, v);
            }
            Op::Bin { dst, op, a, b, bits } => {
                let (x, y) = (bits!(a, *bits), bits!(b, *bits));
                set!(*dst, Value::Bits(eval_bin(*op, x, y, *bits)));
            }
            Op::Un { dst, op, a, bits } => {
                let x = bits!(a, *bits);
                set!(*dst, Value::Bits(eval_un(*op, x, *bits)));
            }
            Op::Ext { dst, a, from, to, signed } => {
                let x = bits!(a, *from);
                set!(*dst, Value::Bits(eval_ext(x, *from, *to, *signed)));
            }
            Op::Setp { dst, dst_neg, cmp, a, b, bits, combine } => {
                let (x, y) = (bits!(a, *bits), bits!(b, *bits));
                let r = eval_cmp(*cmp, x, y, *bits);
                let c = match combine {
                    Some((op, c)) => Some((*op, bits!(c, 1) != 0)),
                    None => None,
                };
                self.set_pred_pair(&mut blk.threads[t], *dst, *dst_neg, r, c);
            }
            Op::FSetp { dst, dst_neg, cmp, a, b, bits, combine } => {
                let (x, y) = (val!(a, *bits), val!(b, *bits));
                let o = match self.hardware_floats().then(|| hardware::compare(&x, &y, *bits)).flatten() {
                    Some(o) => o,
                    None => x.float(*bits).compare(&y.float(*bits)),
                };
                use std::cmp::Ordering::*;
                let r = match cmp {
                    FloatCmp::Eq => o == Some(Equal),
                    FloatCmp::Ne => o.is_some() && o != Some(Equal),
                    FloatCmp::Lt => o == Some(Less),
                    FloatCmp::Le => matches!(o, Some(Less | Equal)),
                    FloatCmp::Gt => o == Some(Greater),
                    FloatCmp::Ge => matches!(o, Some(Greater | Equal)),
                    FloatCmp::Other => return Err(self.unsupported(blk, t, inst, "unknown float comparison")),
                };
                let c = match combine {
                    Some((op, c)) => Some((*op, bits!(c, 1) != 0)),
                    None => None,
                };
                self.set_pred_pair(&mut blk.threads[t], *dst, *dst_neg, r, c);
            }
            Op::Selp { dst, a, b, cond, bits } => {
                let v = if bits!(cond, 1) != 0 { val!(a, *bits) } else { val!(b, *bits) };
                let v = match v {
                    Value::Bits(x) => Value::Bits(x & mask(*bits)),
                    f => f,
                };
                set!(*dst, v);
            }
            Op::Pred { dst, op, a, b } => {
                let (x, y) = (bits!(a, 1) != 0, bits!(b, 1) != 0);
                set!(*dst, Value::Bits(bool_op(*op, x, y) as u64));
            }
            Op::PredNot { dst, a } => {
                let x = bits!(a, 1) != 0;
                set!(*dst, Value::Bits(!x as u64));
            }
            Op::Float { dst, op, args, bits } => {
                let need = match op {
                    FloatOp::Add | FloatOp::Sub | FloatOp::Mul | FloatOp::Div | FloatOp::Min | FloatOp::Max => 2,
                    FloatOp::Fma => 3,
                    _ => 1,
                };
                if args.len() < need {
                    return Err(self.unsupported(blk, t, inst, format!("needs {need} operands")));
                }
                // On the stack: this runs for every float instruction of every thread.
                let mut vs = [Value::Bits(0), Value::Bits(0), Value::Bits(0)];
                for (slot, a) in vs.iter_mut().zip(&args[..need]) {
                    *slot = val!(a, *bits);
                }
                let vs = &vs[..need];
                if let Some(v) = self.hardware_floats().then(|| hardware::float_op(*op, vs, *bits)).flatten() {
                    set!(*dst, v);
                    return Ok(Flow::Next);
                }
                let xs: Vec<FloatVal> = vs.iter().map(|v| v.float(*bits)).collect();
                let r = match op {
                    FloatOp::Add => xs[0].add(&xs[1]),
                    FloatOp::Sub => xs[0].sub(&xs[1]),
                    FloatOp::Mul => xs[0].mul(&xs[1]),
                    FloatOp::Div => xs[0].div(&xs[1]),
                    FloatOp::Fma => xs[0].fma(&xs[1], &xs[2]),
                    FloatOp::Neg => xs[0].neg(),
                    FloatOp::Abs => xs[0].abs(),
                    FloatOp::Min => xs[0].min(&xs[1]),
                    FloatOp::Max => xs[0].max(&xs[1]),
                    FloatOp::Rcp => xs[0].recip(),
                    FloatOp::Sqrt => xs[0].sqrt(),
                    FloatOp::Rsqrt => xs[0].via_f64(|x| 1.0 / x.sqrt()),
                    FloatOp::Ex2 => xs[0].via_f64(f64::exp2),
                    FloatOp::Lg2 => xs[0].via_f64(f64::log2),
                    FloatOp::Sin => xs[0].via_f64(f64::sin),
                    FloatOp::Cos => xs[0].via_f64(f64::cos),
                    FloatOp::Tanh => xs[0].via_f64(f64::tanh),
                    FloatOp::Erf => xs[0].via_f64(crate::math::erf),
                    FloatOp::Other => return Err(self.unsupported(blk, t, inst, "this float operation is not modelled by the interpreter")),
                };
                set!(*dst, Value::exact(r.normalize(FloatFormat::for_bits(*bits))));
            }
            Op::Cvt { dst, a, from, to, rnd, sat } => {
                let fb = type_bits(from).unwrap_or(32);
                let x = val!(a, fb);
                match cvt(&x, from, to, rnd.as_deref(), *sat, self.hardware_floats()) {
                    Ok(v) => set!(*dst, v),
                    Err(reason) => return Err(self.unsupported(blk, t, inst, reason)),
                }
            }
            Op::Ld { dsts, space, addr, elem_bytes } => {
                if *elem_bytes > 8 {
                    return Err(self.unsupported(blk, t, inst, "accesses wider than 64 bits are not modelled"));
                }
                let base = self.address(blk, t, inst, addr)?;
                for (k, d) in dsts.iter().enumerate() {
                    let at = base.wrapping_add(k as u64 * *elem_bytes as u64);
                    let target = self.access(blk, t, inst, *space, at, *elem_bytes, AccessKind::Read)?;
                    let v = self.region(blk, t, target).load(target_offset(target), *elem_bytes);
                    set!(*d, v);
                }
            }
            Op::St { srcs, space, addr, elem_bytes } => {
                if *elem_bytes > 8 {
                    return Err(self.unsupported(blk, t, inst, "accesses wider than 64 bits are not modelled"));
                }
                let base = self.address(blk, t, inst, addr)?;
                // On the stack for up to four elements (`st.v4`): this runs for every store.
                let mut small = [Value::Bits(0), Value::Bits(0), Value::Bits(0), Value::Bits(0)];
                let mut large = Vec::new();
                let vals: &mut [Value] = if srcs.len() <= small.len() {
                    &mut small[..srcs.len()]
                } else {
                    large.resize(srcs.len(), Value::Bits(0));
                    &mut large
                };
                for (slot, s) in vals.iter_mut().zip(srcs) {
                    *slot = val!(s, elem_bytes * 8);
                }
                for (k, v) in vals.iter().enumerate() {
                    let at = base.wrapping_add(k as u64 * *elem_bytes as u64);
                    let target = self.access(blk, t, inst, *space, at, *elem_bytes, AccessKind::Write)?;
                    let bits = self.region(blk, t, target).write(target_offset(target), *elem_bytes, v);
                    if self.l.recording.records(blk.threads[t].pc()) && !matches!(target, Target::Discard) {
                        if let Some(e) = self.trace.accesses.last_mut() {
                            e.written = Some(bits);
                        }
                    }
                }
            }
            Op::Atom { dst, space, op, addr, args, bytes, float, signed } => {
                if *bytes > 8 {
                    return Err(self.unsupported(blk, t, inst, "atomics wider than 64 bits are not modelled"));
                }
                let need = if *op == AtomOp::Cas { 2 } else { 1 };
                if args.len() < need {
                    return Err(self.unsupported(blk, t, inst, format!("needs {need} operand(s)")));
                }
                let w = bytes * 8;
                let mut xs = Vec::with_capacity(need);
                for a in &args[..need] {
                    xs.push(val!(a, w));
                }
                let at = self.address(blk, t, inst, addr)?;
                let target = self.access(blk, t, inst, *space, at, *bytes, AccessKind::Atomic)?;
                let old = self.region(blk, t, target).load(target_offset(target), *bytes);
                // The float atomics that compute, as the hardware rounds them when the launch asks.
                let native = match op {
                    AtomOp::Add => Some(FloatOp::Add),
                    AtomOp::Min => Some(FloatOp::Min),
                    AtomOp::Max => Some(FloatOp::Max),
                    _ => None,
                };
                let rounded = native.filter(|_| *float && self.hardware_floats()).and_then(|f| hardware::float_op(f, &[old.clone(), xs[0].clone()], w));
                let new = if let Some(v) = rounded {
                    v
                } else if *float {
                    let (o, x) = (old.float(w), xs[0].float(w));
                    match op {
                        AtomOp::Add => Value::exact(o.add(&x).normalize(FloatFormat::for_bits(w))),
                        AtomOp::Min => Value::exact(o.min(&x)),
                        AtomOp::Max => Value::exact(o.max(&x)),
                        AtomOp::Exch => xs[0].clone(),
                        AtomOp::Cas => {
                            if old.bits(w) == xs[0].bits(w) {
                                xs[1].clone()
                            } else {
                                old.clone()
                            }
                        }
                        _ => return Err(self.unsupported(blk, t, inst, "this float atomic is not modelled")),
                    }
                } else {
                    let (o, x) = (old.bits(w), xs[0].bits(w));
                    Value::Bits(match op {
                        AtomOp::Add => eval_bin(BinOp::Add, o, x, w),
                        AtomOp::Min => eval_bin(if *signed { BinOp::MinS } else { BinOp::MinU }, o, x, w),
                        AtomOp::Max => eval_bin(if *signed { BinOp::MaxS } else { BinOp::MaxU }, o, x, w),
                        AtomOp::Inc => {
                            if o >= x {
                                0
                            } else {
                                o + 1
                            }
                        }
                        AtomOp::Dec => {
                            if o == 0 || o > x {
                                x
                            } else {
                                o - 1
                            }
                        }
                        AtomOp::And => o & x,
                        AtomOp::Or => o | x,
                        AtomOp::Xor => o ^ x,
                        AtomOp::Exch => x,
                        AtomOp::Cas => {
                            if o == x {
                                xs[1].bits(w)
                            } else {
                                o
                            }
                        }
                    })
                };
                self.region(blk, t, target).write(target_offset(target), *bytes, &new);
                if let Some(d) = dst {
                    set!(*d, old);
                }
            }
            Op::Bar { kind: BarrierKind::Sync, .. } | Op::BarRed { .. } => return Ok(Flow::Wait(Status::Barrier)),
            Op::Bar { kind: BarrierKind::Arrive, .. } => {}
            Op::WarpSync { mask } | Op::Shfl { mask, .. } | Op::Vote { mask, .. } => {
                let m = bits!(mask, 32) as u32;
                return Ok(Flow::Wait(Status::Collective { mask: Some(m) }));
            }
            Op::ActiveMask { .. } => return Ok(Flow::Wait(Status::Collective { mask: None })),
            Op::Fence | Op::Bra { .. } => {}
            Op::Ret | Op::Exit => return Ok(Flow::Exit),
            Op::Unsupported { reason, .. } => return Err(self.unsupported(blk, t, inst, reason.clone())),
        }
        Ok(Flow::Next)
    }

    fn hardware_floats(&self) -> bool {
        self.l.float_arithmetic == FloatArithmetic::Hardware
    }

    fn set_pred_pair(&self, th: &mut Thread, dst: RegId, dst_neg: Option<RegId>, r: bool, combine: Option<(BoolOp, bool)>) {
        let f = |x: bool| match combine {
            Some((op, c)) => bool_op(op, x, c),
            None => x,
        };
        let (p, q) = (f(r), f(!r));
        th.set(dst, Value::Bits(p as u64));
        if let Some(n) = dst_neg {
            th.set(n, Value::Bits(q as u64));
        }
    }

    fn address(&self, blk: &BlockState, t: usize, inst: &Inst, a: &Address) -> R<u64> {
        match self.operand(blk.ctaid, &blk.threads[t], &a.base, 64) {
            Ok(v) => Ok(v.bits(64).wrapping_add(a.offset as u64)),
            Err(reason) => Err(self.unsupported(blk, t, inst, reason)),
        }
    }

    /// Resolves an access, checks its bounds and records it.
    #[allow(clippy::too_many_arguments)]
    fn access(&mut self, blk: &BlockState, t: usize, inst: &Inst, space: Space, addr: u64, bytes: u32, kind: AccessKind) -> R<Target> {
        let th = &blk.threads[t];
        let (space, recorded, target) = self.resolve(space, addr, bytes);
        // Built only when kept: most accesses of a long replay are neither recorded nor out of
        // bounds, and the event's copy of the loop iterations is an allocation.
        let event = || AccessEvent {
            block: blk.ctaid,
            thread: th.tid,
            inst: th.pc(),
            space,
            addr: recorded,
            bytes,
            kind,
            phase: th.phase,
            iterations: th.iters.clone(),
            line: inst.line,
            written: None,
        };
        match target {
            Ok(target) => {
                if self.l.recording.records(th.pc()) {
                    self.trace.accesses.push(event());
                }
                if self.obs.is_some() {
                    self.places.push(place_of(target));
                }
                Ok(target)
            }
            Err(Some((region, region_size, offset))) => {
                if self.l.continue_past_out_of_bounds {
                    self.trace.out_of_bounds.push(event());
                    self.scratch = Region::zeroed(64);
                    if self.obs.is_some() {
                        self.places.push(Place::Discarded);
                    }
                    return Ok(Target::Discard);
                }
                Err(InterpError::OutOfBounds { access: event(), region, region_size, offset })
            }
            Err(None) => Err(self.unsupported(blk, t, inst, format!("accesses to the {} space through an address are not modelled", space.name()))),
        }
    }

    /// The space an access resolves to, the address to record, and the location (or, when out
    /// of bounds, the nearest region's name, size and the offset from its start).
    #[allow(clippy::type_complexity)]
    fn resolve(&self, space: Space, addr: u64, bytes: u32) -> (Space, u64, Result<Target, Option<(String, u64, i64)>>) {
        let in_window = |base: u64| addr >= base && addr - base < WINDOW;
        match space {
            Space::Generic if in_window(SHARED_BASE) => self.resolve(Space::Shared, addr, bytes),
            Space::Generic if in_window(LOCAL_BASE) => self.resolve(Space::Local, addr, bytes),
            Space::Generic => self.resolve(Space::Global, addr, bytes),
            Space::Global | Space::Const => match self.mem.locate(addr, bytes) {
                GlobalLoc::In { buffer, offset } => (space, addr, Ok(Target::Global { buffer, offset })),
                GlobalLoc::Outside { nearest: Some((i, size, offset)) } => (space, addr, Err(Some((self.mem.buffer_name(i).to_string(), size, offset)))),
                GlobalLoc::Outside { nearest: None } => (space, addr, Err(Some(("no buffer".into(), 0, addr as i64)))),
            },
            Space::Shared | Space::Local => {
                let (base, slots) = if space == Space::Shared { (SHARED_BASE, &self.shared_slots) } else { (LOCAL_BASE, &self.local_slots) };
                let off = if in_window(base) {
                    addr - base
                } else if addr < WINDOW {
                    addr
                } else {
                    let off = addr.wrapping_sub(base);
                    let total = slots.iter().map(|s| s.size).sum();
                    return (space, off, Err(Some((format!("{} memory", space.name()), total, off as i64))));
                };
                let (slot, inner) = ((off / SLOT) as usize, off % SLOT);
                match slots.get(slot) {
                    Some(s) if inner + bytes as u64 <= s.size => {
                        let target = if space == Space::Shared { Target::Shared { slot, offset: inner } } else { Target::Local { slot, offset: inner } };
                        (space, off, Ok(target))
                    }
                    Some(s) => (space, off, Err(Some((s.names.join("`/`"), s.size, inner as i64)))),
                    None => {
                        // Beyond the last variable: report against the last one.
                        let total = slots.iter().map(|s| s.size).sum();
                        match slots.last() {
                            Some(s) => {
                                let last = (slots.len() - 1) as u64 * SLOT;
                                (space, off, Err(Some((s.names.join("`/`"), s.size, off.wrapping_sub(last) as i64))))
                            }
                            None => (space, off, Err(Some((format!("{} memory", space.name()), total, off as i64)))),
                        }
                    }
                }
            }
            Space::Param => (space, addr, Err(None)),
        }
    }

    fn region<'b>(&'b mut self, blk: &'b mut BlockState, t: usize, target: Target) -> &'b mut Region {
        match target {
            Target::Global { buffer, .. } => self.mem.region(buffer),
            Target::Shared { slot, .. } => &mut blk.shared[slot],
            Target::Local { slot, .. } => &mut blk.threads[t].local[slot],
            Target::Discard => &mut self.scratch,
        }
    }

    /// Completes every collective whose members have all arrived; true if any did.
    fn complete_collectives(&mut self, blk: &mut BlockState) -> R<bool> {
        let mut progressed = false;
        for t in 0..blk.threads.len() {
            if !matches!(blk.threads[t].status, Status::Collective { .. }) {
                continue;
            }
            if let Some(members) = self.collective_group(blk, t)? {
                self.complete(blk, &members)?;
                progressed = true;
            }
        }
        Ok(progressed)
    }

    /// The threads of `t`'s collective if all have arrived, `None` if some may still arrive.
    fn collective_group(&self, blk: &BlockState, t: usize) -> R<Option<Vec<usize>>> {
        let th = &blk.threads[t];
        let Status::Collective { mask } = th.status else { return Ok(None) };
        let (warp, lane) = (th.linear / 32, th.linear % 32);
        let same = |o: &Thread| matches!(o.status, Status::Collective { .. }) && o.pc() == th.pc() && o.iters == th.iters;
        let lin = |j: u32| (warp * 32 + j) as usize;
        let Some(m) = mask else {
            // activemask: the lanes of the warp at this instruction.
            return Ok(Some((0..32).map(lin).filter(|&i| i < blk.threads.len() && same(&blk.threads[i])).collect()));
        };
        if m & (1 << lane) == 0 {
            return Err(self.warp_error(blk, t, super::OUTSIDE_OWN_MASK));
        }
        let mut members = Vec::new();
        for j in 0..32 {
            if m & (1 << j) == 0 {
                continue;
            }
            let Some(o) = blk.threads.get(lin(j)) else {
                return Err(self.warp_error(blk, t, format!("the member mask names lane {j}, which is not a thread of the block")));
            };
            match &o.status {
                // PTX (sm_70+): a collective waits for the *non-exited* threads of its mask, so
                // a lane that has left the kernel simply takes no part (a reader of its value
                // is caught in `complete`).
                Status::Exited => continue,
                Status::Collective { mask: m2 } if same(o) => {
                    if *m2 != Some(m) {
                        return Err(self.warp_error(blk, t, format!("lane {j} arrives with a different member mask")));
                    }
                    members.push(lin(j));
                }
                _ => return Ok(None),
            }
        }
        Ok(Some(members))
    }

    fn warp_error(&self, blk: &BlockState, t: usize, reason: impl Into<String>) -> InterpError {
        let th = &blk.threads[t];
        let mask = match th.status {
            Status::Collective { mask: Some(m) } => m,
            _ => 0,
        };
        let warp = th.linear / 32;
        let mut arrived = Vec::new();
        let mut missing = Vec::new();
        for j in 0..32u32 {
            if mask & (1 << j) == 0 {
                continue;
            }
            match blk.threads.get((warp * 32 + j) as usize) {
                None => missing.push((j, Whereabouts::NoSuchThread)),
                Some(o) if matches!(o.status, Status::Collective { .. }) && o.pc() == th.pc() && o.iters == th.iters => arrived.push(j),
                Some(o) => missing.push((j, self.whereabouts(o))),
            }
        }
        InterpError::WarpDivergence { block: blk.ctaid, warp, inst: th.pc(), line: self.line(th.pc()), mask, arrived, missing, reason: reason.into() }
    }

    /// Performs a collective for its members (in lane order) and lets them go on.
    fn complete(&mut self, blk: &mut BlockState, members: &[usize]) -> R<()> {
        let Some(&first) = members.first() else { return Ok(()) };
        let pc = blk.threads[first].pc();
        let k = self.k;
        let Some(inst) = k.cfg.blocks[pc.0 as usize].insts.get(pc.1) else { return Ok(()) };
        let ctaid = blk.ctaid;
        let lanes: Vec<u32> = members.iter().map(|&i| blk.threads[i].linear % 32).collect();
        // For shuffles: the lane (linear index in the block) each member read its value from.
        let mut sources: Vec<Option<u32>> = vec![None; members.len()];
        let eval = |m: &Machine, blk: &BlockState, i: usize, o: &Operand, bits: u32| -> R<Value> {
            m.operand(ctaid, &blk.threads[i], o, bits).map_err(|reason| m.unsupported(blk, i, inst, reason))
        };
        match &inst.op {
            Op::ActiveMask { dst } => {
                let all = lanes.iter().fold(0u64, |acc, l| acc | 1 << l);
                for &i in members {
                    blk.threads[i].set(*dst, Value::Bits(all));
                }
            }
            Op::Vote { dst, mode, pred, .. } => {
                let mut ps = Vec::new();
                for &i in members {
                    ps.push(eval(self, blk, i, pred, 1)?.bool());
                }
                let ballot = lanes.iter().zip(&ps).filter(|(_, p)| **p).fold(0u64, |acc, (l, _)| acc | 1 << l);
                let r = match mode {
                    VoteMode::Ballot => ballot,
                    VoteMode::All => ps.iter().all(|p| *p) as u64,
                    VoteMode::Any => ps.iter().any(|p| *p) as u64,
                    VoteMode::Uni => (ps.iter().all(|p| *p) || ps.iter().all(|p| !*p)) as u64,
                };
                for &i in members {
                    blk.threads[i].set(*dst, Value::Bits(r));
                }
            }
            Op::Shfl { dst, pred_dst, mode, src, lane, clamp, .. } => {
                let mut srcs: HashMap<u32, Value> = HashMap::new();
                for (&i, &l) in members.iter().zip(&lanes) {
                    let v = match eval(self, blk, i, src, 32)? {
                        Value::Bits(b) => Value::Bits(b & mask(32)),
                        f => f,
                    };
                    srcs.insert(l, v);
                }
                let mut results = Vec::new();
                for (&i, &l) in members.iter().zip(&lanes) {
                    let b = (eval(self, blk, i, lane, 32)?.bits(32) & 0x1f) as i64;
                    let c = eval(self, blk, i, clamp, 32)?.bits(32);
                    let (cval, seg) = ((c & 0x1f) as i64, ((c >> 8) & 0x1f) as i64);
                    let li = l as i64;
                    let max_lane = (li & seg) | (cval & !seg);
                    let min_lane = li & seg;
                    let (j, pval) = match mode {
                        ShflMode::Up => (li - b, li - b >= max_lane),
                        ShflMode::Down => (li + b, li + b <= max_lane),
                        ShflMode::Bfly => (li ^ b, (li ^ b) <= max_lane),
                        ShflMode::Idx => {
                            let j = min_lane | (b & !seg);
                            (j, j <= max_lane)
                        }
                    };
                    let j = if pval { j } else { li };
                    let Some(v) = srcs.get(&(j as u32)) else {
                        let exited = blk.threads.get((blk.threads[i].linear - l + j as u32) as usize).is_some_and(|o| matches!(o.status, Status::Exited));
                        let why = if exited { "which has exited (the value it would read is undefined)" } else { "which is not in the member mask" };
                        return Err(self.warp_error(blk, i, format!("lane {l} reads lane {j}, {why}")));
                    };
                    let at = members.iter().position(|&x| x == i).unwrap_or(0);
                    sources[at] = Some(blk.threads[i].linear - l + j as u32);
                    results.push((i, v.clone(), pval));
                }
                for (i, v, p) in results {
                    blk.threads[i].set(*dst, v);
                    if let Some(pd) = pred_dst {
                        blk.threads[i].set(*pd, Value::Bits(p as u64));
                    }
                }
            }
            _ => {} // bar.warp.sync
        }
        if let Some(o) = self.obs.as_deref_mut() {
            let dsts = inst.op.destinations();
            let lanes: Vec<CollectiveLane> = members
                .iter()
                .zip(&sources)
                .map(|(&i, src)| {
                    let th = &blk.threads[i];
                    CollectiveLane { at: At { ctaid, tid: th.tid, linear: th.linear }, results: dsts.iter().map(|&r| (r, th.reg(r))).collect(), source: *src }
                })
                .collect();
            o.collective(pc, inst, &lanes);
        }
        for &i in members {
            let th = &mut blk.threads[i];
            th.status = Status::Running;
            th.idx += 1;
        }
        Ok(())
    }
}

fn place_of(t: Target) -> Place {
    match t {
        Target::Global { buffer, offset } => Place::Global { buffer: BufferId(buffer as u32), offset },
        Target::Shared { slot, offset } => Place::Shared { slot: slot as u32, offset },
        Target::Local { slot, offset } => Place::Local { slot: slot as u32, offset },
        Target::Discard => Place::Discarded,
    }
}

fn target_offset(t: Target) -> u64 {
    match t {
        Target::Global { offset, .. } | Target::Shared { offset, .. } | Target::Local { offset, .. } => offset,
        Target::Discard => 0,
    }
}

fn bool_op(op: BoolOp, a: bool, b: bool) -> bool {
    match op {
        BoolOp::And => a && b,
        BoolOp::Or => a || b,
        BoolOp::Xor => a != b,
    }
}

/// A `cvt` with a float on at least one side.
/// With `hardware` floats the result stays bits (it is already rounded to its format).
fn cvt(x: &Value, from: &str, to: &str, rnd: Option<&str>, sat: bool, hardware: bool) -> Result<Value, String> {
    let (ff, ft) = (FloatFormat::from_type(from), FloatFormat::from_type(to));
    let is_float = |ty: &str| type_class(ty) == Some(TypeClass::Float);
    if (is_float(from) && ff.is_none()) || (is_float(to) && ft.is_none()) {
        return Err(format!("conversion between `{from}` and `{to}` is not modelled"));
    }
    let mode = rnd.and_then(Rounding::from_modifier);
    let decode = |fmt: FloatFormat| match x {
        Value::Float(f) => (**f).clone(),
        Value::Bits(b) => FloatVal::from_bits(b & mask(fmt.width()), fmt),
    };
    let finish = |v: FloatVal, ft: FloatFormat, mode: Rounding| -> Value {
        let mut v = v;
        if sat {
            v = match v.compare(&FloatVal::zero()) {
                None => FloatVal::zero(),
                Some(std::cmp::Ordering::Less) => FloatVal::zero(),
                _ => v.min(&FloatVal::from_int(1)),
            };
        }
        let bits = v.to_bits(ft, mode);
        match ft {
            FloatFormat::F16 | FloatFormat::BF16 => Value::Bits(bits),
            _ if hardware => Value::Bits(bits),
            _ => Value::exact(FloatVal::from_bits(bits, ft)),
        }
    };
    let tb = type_bits(to).unwrap_or(32);
    let fb = type_bits(from).unwrap_or(32);
    Ok(match (ff, ft) {
        (Some(ff), Some(ft)) => {
            let (mode, integral) = mode.unwrap_or((Rounding::NearestEven, false));
            let v = decode(ff);
            let v = if integral { v.round_to_integer(mode) } else { v };
            finish(v, ft, mode)
        }
        (None, Some(ft)) => {
            let (mode, _) = mode.unwrap_or((Rounding::NearestEven, false));
            let raw = x.bits(fb);
            let i = if type_class(from) == Some(TypeClass::Signed) { sext(raw, fb) as i128 } else { raw as i128 };
            finish(FloatVal::from_int(i), ft, mode)
        }
        (Some(ff), None) => {
            // PTX requires a rounding modifier here; without one, truncate as C does.
            let (mode, _) = mode.unwrap_or((Rounding::Zero, true));
            Value::Bits(decode(ff).to_int_bits(mode, tb, type_class(to) == Some(TypeClass::Signed)))
        }
        (None, None) => Value::Bits(eval_ext(x.bits(fb), fb, tb, type_class(from) == Some(TypeClass::Signed))),
    })
}
