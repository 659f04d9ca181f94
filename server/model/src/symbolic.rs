//! Symbolic lifting: every register as an expression over thread ids, launch dimensions,
//! parameters, loop counters and loaded values; every memory access with its address, path
//! condition and enclosing loops.
//!
//! Loops are summarised, not unrolled. A probe pass runs the body once with each loop-carried
//! register as an unknown `Header` symbol and reads back what the latch hands to the next
//! iteration: `h + c` is an affine induction variable (`init + k*c`), `h >> c` and `h << c`
//! are geometric ones (`init >> k*c`), `h` is invariant, and anything else becomes a `Havoc`
//! symbol (any value), which over-approximates. The final pass then runs the body once with the
//! header values as functions of the loop counter `k` and records what it sees. Iteration `k` is
//! assumed reachable when `k == 0` or the loop's continue condition held at `k - 1`; this is
//! exact for the monotone tests real loops use and an over-approximation otherwise.

use crate::cfg::{BlockId, LoopId, Term};
use crate::expr::{ExprId, Exprs, Sym, BOOL};
use crate::ops::*;
use crate::Kernel;
use ptx::Span;
use std::collections::HashMap;

/// Width of loop counters.
pub const COUNTER_BITS: u32 = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Read,
    Write,
    Atomic(AtomOp),
}

impl AccessKind {
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Atomic(_) => "atomic",
        }
    }
}

/// The most arms an access through selected pointers is split into.
const MAX_POINTER_ARMS: usize = 4;

/// What an address points into, found from the pointer's provenance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Base {
    /// A declared variable (shared array, global variable).
    Var(VarId),
    /// The buffer a pointer parameter points to.
    Param(u32),
    /// The buffer a pointer held in a struct passed by value points to: the 8 bytes at
    /// `offset` of aggregate parameter `param` (`p.k_data` of a `Params` struct). Like pointer
    /// parameters, distinct pointers are taken to point into distinct buffers.
    Field { param: u32, offset: u32 },
}

impl Base {
    /// The parameter that holds the pointer, for a buffer.
    pub fn param(self) -> Option<u32> {
        match self {
            Base::Param(p) | Base::Field { param: p, .. } => Some(p),
            Base::Var(_) => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    pub kind: AccessKind,
    pub space: Space,
    pub base: Option<Base>,
    /// Full byte address (64-bit).
    pub addr: ExprId,
    /// Byte offset from the base (64-bit), when the base is known.
    pub offset: Option<ExprId>,
    pub bytes: u32,
    /// Condition under which a thread performs this access.
    pub pc: ExprId,
    pub block: BlockId,
    pub inst: usize,
    /// Enclosing loops, outermost first.
    pub loops: Vec<LoopId>,
    pub span: Span,
    pub line: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BarrierSite {
    pub block: BlockId,
    pub inst: usize,
    pub pc: ExprId,
    pub loops: Vec<LoopId>,
    pub span: Span,
    pub line: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOpKind {
    Shfl,
    Vote,
    WarpSync,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WarpOpSite {
    pub kind: WarpOpKind,
    pub mask: ExprId,
    pub block: BlockId,
    pub inst: usize,
    pub pc: ExprId,
    pub loops: Vec<LoopId>,
    pub span: Span,
    pub line: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum IvKind {
    Invariant,
    Affine {
        step: ExprId,
    },
    Shr {
        amount: u64,
    },
    Shl {
        amount: u64,
    },
    /// Recomputed each iteration from the other induction variables (`rd = sext(col)` where
    /// `col` is affine, a 64-bit copy of a 32-bit loop index): its value is the latch's formula
    /// over their values in the previous iteration.
    Derived,
    Havoc,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LoopSummary {
    pub ivs: Vec<(RegId, IvKind, ExprId)>,
    /// Condition for iteration `k` to run, over the counter.
    pub guard: ExprId,
    /// Whether the continue condition could be stated (otherwise `guard` is `true`).
    pub bounded: bool,
    /// What an invariant of the loop's [`IvKind::Havoc`] registers is proved from (`None`
    /// when it has none, or no back edge).
    pub havoc_step: Option<HavocStep>,
}

/// One iteration of a loop, as the probe pass saw it, for its havoc registers: a fact that
/// holds of their entry values, and holds of their latch values whenever it held of the
/// header values and the latch was reached, holds at every iteration a thread runs (the
/// engine proves simple bounds so, as GPUVerify's Houdini does; see check's `invariants`).
#[derive(Clone, Debug, PartialEq)]
pub struct HavocStep {
    /// Each havoc register: its value on entering the loop, and its value at the latch over
    /// the iteration's [`Sym::Header`] symbols (what the next iteration starts with).
    pub regs: Vec<(RegId, ExprId, ExprId)>,
    /// Condition for an iteration to reach the latch and go on, over the `Header` symbols.
    pub latch_pc: ExprId,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UnsupportedSite {
    pub block: BlockId,
    pub inst: usize,
    /// When a thread reaches it (a guarded unsupported instruction, such as the check that a
    /// barrier's thread count is the block's size, is reached only when its guard holds).
    pub pc: ExprId,
    pub span: Span,
    pub line: Option<u32>,
    pub opcode: smol_str::SmolStr,
    pub reason: String,
}

#[derive(Clone, Debug)]
pub struct Lifted {
    pub exprs: Exprs,
    pub accesses: Vec<Access>,
    pub barriers: Vec<BarrierSite>,
    pub warp_ops: Vec<WarpOpSite>,
    pub loops: Vec<Option<LoopSummary>>,
    pub unsupported: Vec<UnsupportedSite>,
    /// Path condition of each block's entry (final pass); `None` if unreachable.
    pub block_pc: Vec<Option<ExprId>>,
    /// What a `Value` symbol came from, for explanations ("loaded from `idx`").
    pub value_origin: HashMap<(BlockId, u32), ValueOrigin>,
    /// For loops left through a single exit: after the loop, its counter names the iteration in
    /// which it was left. Code after such a loop is reached whenever the loop is (its path
    /// condition is the loop's entry condition), and this fact, `entered -> left at k`, ties
    /// the counter down for queries about code after the loop.
    pub exit_facts: Vec<(LoopId, ExprId)>,
    /// Proved facts about a loop's [`Sym::Havoc`] registers (`entered -> invariant`), which
    /// hold wherever those symbols appear (the engine adds them: see check's `invariants`).
    pub havoc_facts: Vec<(LoopId, ExprId)>,
    /// Condition for a thread to enter each loop (final pass), for loops reached.
    pub loop_entry_pc: Vec<Option<ExprId>>,
    /// Values the expressions above lose track of: the operands of instructions whose results
    /// become fresh [`Sym::Value`]s (float arithmetic, conversions, shuffles, votes, stored
    /// values) and the entry and latch values of loop registers summarised as [`Sym::Havoc`].
    /// With the sites' expressions they are everything the kernel's behaviour depends on
    /// (what [`crate::block_shape`] needs to know which thread indices a kernel reads).
    pub opaque_uses: Vec<ExprId>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ValueOrigin {
    Load { access: usize },
    Float,
    Shuffle,
    Vote,
    Other,
}

#[derive(Clone)]
struct State {
    regs: Vec<ExprId>,
    pc: ExprId,
}

/// Where a region's outgoing edges went.
#[derive(Default)]
struct RegionOut {
    /// States leaving the region, with their target block.
    exits: Vec<(BlockId, State)>,
    /// States taking a back edge to the region's header.
    back: Vec<State>,
}

struct Lifter<'k> {
    k: &'k Kernel,
    x: Exprs,
    /// True during the final pass of every enclosing loop: only then are sites recorded.
    recording: bool,
    out_accesses: Vec<Access>,
    out_barriers: Vec<BarrierSite>,
    out_warp: Vec<WarpOpSite>,
    out_unsupported: Vec<UnsupportedSite>,
    loops: Vec<Option<LoopSummary>>,
    block_pc: Vec<Option<ExprId>>,
    value_origin: HashMap<(BlockId, u32), ValueOrigin>,
    /// Registers written inside each loop.
    written: Vec<Vec<RegId>>,
    exit_facts: Vec<(LoopId, ExprId)>,
    loop_entry_pc: Vec<Option<ExprId>>,
    /// Per region, the reconvergence points of its blocks (see [`crate::reconverge`]).
    reconverge: HashMap<Option<LoopId>, HashMap<BlockId, BlockId>>,
    opaque_uses: Vec<ExprId>,
}

pub fn lift(k: &Kernel) -> Lifted {
    let nloops = k.cfg.loops.len();
    let mut written = vec![Vec::new(); nloops];
    for (l, lp) in k.cfg.loops.iter().enumerate() {
        let mut regs = std::collections::BTreeSet::new();
        for (b, blk) in k.cfg.blocks.iter().enumerate() {
            if lp.contains(b as BlockId) {
                for i in &blk.insts {
                    regs.extend(i.op.destinations());
                }
            }
        }
        written[l] = regs.into_iter().collect();
    }
    let mut l = Lifter {
        k,
        x: Exprs::new(),
        recording: true,
        out_accesses: Vec::new(),
        out_barriers: Vec::new(),
        out_warp: Vec::new(),
        out_unsupported: Vec::new(),
        loops: vec![None; nloops],
        block_pc: vec![None; k.cfg.blocks.len()],
        value_origin: HashMap::new(),
        written,
        exit_facts: Vec::new(),
        loop_entry_pc: vec![None; nloops],
        reconverge: HashMap::new(),
        opaque_uses: Vec::new(),
    };
    let zero_regs: Vec<ExprId> = k.regs.iter().map(|r| if r.bits == 1 { l.x.boolean(false) } else { l.x.konst(0, r.bits) }).collect();
    let pc = l.x.boolean(true);
    let entry = State { regs: zero_regs, pc };
    l.run_region(None, k.cfg.entry, entry);
    l.opaque_uses.sort_unstable();
    l.opaque_uses.dedup();
    Lifted {
        exprs: l.x,
        accesses: l.out_accesses,
        barriers: l.out_barriers,
        warp_ops: l.out_warp,
        loops: l.loops,
        unsupported: l.out_unsupported,
        block_pc: l.block_pc,
        value_origin: l.value_origin,
        exit_facts: l.exit_facts,
        havoc_facts: Vec::new(),
        loop_entry_pc: l.loop_entry_pc,
        opaque_uses: l.opaque_uses,
    }
}

impl Lifted {
    /// The pointer fields of structs passed by value some access addresses from, as
    /// `(parameter, byte offset)`: buffers of the kernel that are not parameters.
    pub fn pointer_fields(&self) -> std::collections::BTreeSet<(u32, u32)> {
        self.accesses
            .iter()
            .filter_map(|a| match a.base {
                Some(Base::Field { param, offset }) => Some((param, offset)),
                _ => None,
            })
            .collect()
    }

    /// The parameters some access addresses from: the kernel's buffers.
    pub fn pointer_params(&self) -> std::collections::BTreeSet<u32> {
        self.accesses
            .iter()
            .filter_map(|a| match a.base {
                Some(Base::Param(p)) => Some(p),
                _ => None,
            })
            .collect()
    }

    /// Replaces symbols by values everywhere (launch geometry and parameters the interface
    /// fixes), so the solver sees folded constants instead of equations to propagate.
    pub fn specialize(&mut self, map: &HashMap<Sym, ExprId>) {
        if map.is_empty() {
            return;
        }
        let x = &mut self.exprs;
        for a in &mut self.accesses {
            a.addr = x.subst(a.addr, map);
            a.offset = a.offset.map(|o| x.subst(o, map));
            a.pc = x.subst(a.pc, map);
        }
        for b in &mut self.barriers {
            b.pc = x.subst(b.pc, map);
        }
        // An unsupported instruction no thread reaches under these facts is no longer a region.
        self.unsupported.retain_mut(|u| {
            u.pc = x.subst(u.pc, map);
            x.as_bool(u.pc) != Some(false)
        });
        for w in &mut self.warp_ops {
            w.pc = x.subst(w.pc, map);
            w.mask = x.subst(w.mask, map);
        }
        for f in &mut self.exit_facts {
            f.1 = x.subst(f.1, map);
        }
        for e in self.loop_entry_pc.iter_mut().flatten() {
            *e = x.subst(*e, map);
        }
        for s in self.loops.iter_mut().flatten() {
            s.guard = x.subst(s.guard, map);
            for iv in &mut s.ivs {
                iv.2 = x.subst(iv.2, map);
            }
            if let Some(step) = &mut s.havoc_step {
                step.latch_pc = x.subst(step.latch_pc, map);
                for (_, init, next) in &mut step.regs {
                    *init = x.subst(*init, map);
                    *next = x.subst(*next, map);
                }
            }
        }
        for f in &mut self.havoc_facts {
            f.1 = x.subst(f.1, map);
        }
    }
}

impl Lifter<'_> {
    /// The innermost loop of `b` that is directly inside `region` (or `b`'s own block if none).
    fn node_loop(&self, region: Option<LoopId>, b: BlockId) -> Option<LoopId> {
        let nest = self.k.cfg.loop_nest(b);
        let depth = match region {
            None => 0,
            Some(r) => nest.iter().position(|&l| l == r).map_or(usize::MAX, |p| p + 1),
        };
        nest.get(depth).copied()
    }

    fn in_region(&self, region: Option<LoopId>, b: BlockId) -> bool {
        region.is_none_or(|r| self.k.cfg.loops[r as usize].contains(b))
    }

    /// Runs the blocks of `region` (the whole kernel, or one loop body) in topological order,
    /// summarising inner loops, starting at `start` with `init`.
    fn run_region(&mut self, region: Option<LoopId>, start: BlockId, init: State) -> RegionOut {
        let cfg = &self.k.cfg;
        let header = region.map(|r| cfg.loops[r as usize].header);
        let mut pending: HashMap<BlockId, Vec<State>> = HashMap::new();
        pending.insert(start, vec![init]);
        let mut out = RegionOut::default();
        let order: Vec<BlockId> = cfg.rpo.clone();
        let reconverge = self.reconverge.entry(region).or_insert_with(|| crate::reconverge::reconvergence(cfg, region)).clone();
        // The condition each block of this pass was entered with.
        let mut entry_pc: HashMap<BlockId, ExprId> = HashMap::new();
        for b in order {
            if !self.in_region(region, b) {
                continue;
            }
            let inner = self.node_loop(region, b);
            if let Some(l) = inner {
                if cfg.loops[l as usize].header != b {
                    continue; // inside an inner loop: handled by its summary
                }
            }
            let Some(incoming) = pending.remove(&b) else { continue };
            let mut state = self.merge(incoming);
            // Where branches reconverge, the condition is the one they split (exactly; see
            // `reconverge`), not the disjunction of the branch conditions.
            if let Some(&d) = reconverge.get(&b).filter(|_| b != start).and_then(|d| entry_pc.get(d)) {
                state.pc = d;
            }
            entry_pc.insert(b, state.pc);
            let produced: Vec<(BlockId, State)> = match inner {
                Some(l) => self.run_loop(l, state),
                None => self.run_block(b, state),
            };
            for (to, st) in produced {
                if Some(to) == header {
                    out.back.push(st);
                } else if !self.in_region(region, to) {
                    out.exits.push((to, st));
                } else {
                    pending.entry(to).or_default().push(st);
                }
            }
        }
        out
    }

    fn merge(&mut self, mut states: Vec<State>) -> State {
        if states.len() == 1 {
            return states.pop().unwrap();
        }
        let mut acc = states.pop().unwrap();
        while let Some(s) = states.pop() {
            for r in 0..acc.regs.len() {
                if acc.regs[r] != s.regs[r] {
                    acc.regs[r] = self.x.ite(s.pc, s.regs[r], acc.regs[r]);
                }
            }
            acc.pc = self.x.or(s.pc, acc.pc);
        }
        acc
    }

    fn run_loop(&mut self, l: LoopId, entry: State) -> Vec<(BlockId, State)> {
        let cfg = &self.k.cfg;
        let header = cfg.loops[l as usize].header;
        let written = self.written[l as usize].clone();

        // Probe pass: header values as unknowns, nothing recorded.
        let was_recording = self.recording;
        self.recording = false;
        let mut probe = entry.clone();
        for &r in &written {
            probe.regs[r as usize] = self.x.var(Sym::Header { lp: l, reg: r }, self.reg_bits(r));
        }
        probe.pc = self.x.boolean(true);
        let probe_out = self.run_region(Some(l), header, probe);
        let latch = if probe_out.back.is_empty() { None } else { Some(self.merge(probe_out.back)) };

        // Classify the loop-carried registers.
        let counter = self.x.var(Sym::Counter(l), COUNTER_BITS);
        let mut ivs = Vec::new();
        let mut header_map: HashMap<Sym, ExprId> = HashMap::new();
        let mut final_state = entry.clone();
        for &r in &written {
            let bits = self.reg_bits(r);
            let h = self.x.var(Sym::Header { lp: l, reg: r }, bits);
            let init = entry.regs[r as usize];
            let next = latch.as_ref().map(|s| s.regs[r as usize]);
            let kind = match next {
                None => IvKind::Invariant,
                Some(v) => self.classify(l, h, v),
            };
            let value = self.iv_value(&kind, init, counter, bits, l, r);
            ivs.push((r, kind, value));
            header_map.insert(Sym::Header { lp: l, reg: r }, value);
            final_state.regs[r as usize] = value;
        }
        if let Some(latch) = &latch {
            self.derive_from_other_ivs(l, counter, &entry, latch, &mut ivs, &mut header_map, &mut final_state);
            for (r, _, _) in ivs.iter().filter(|(_, k, _)| matches!(k, IvKind::Havoc)) {
                self.opaque_uses.extend([entry.regs[*r as usize], latch.regs[*r as usize]]);
            }
        }

        // Iteration k runs if k == 0 or the loop continued at k - 1.
        let (guard, bounded) = match &latch {
            Some(s) if self.is_invariant_except_headers(l, s.pc) => {
                let one = self.x.konst(1, COUNTER_BITS);
                let prev = self.x.bin(BinOp::Sub, counter, one);
                let mut prev_map = HashMap::new();
                for (r, kind, _) in &ivs {
                    let bits = self.reg_bits(*r);
                    let v = self.iv_value(kind, entry.regs[*r as usize], prev, bits, l, *r);
                    prev_map.insert(Sym::Header { lp: l, reg: *r }, v);
                }
                // An affine register's latch value at k - 1, `init + (k-1)*step + step`, is its
                // value at k (an identity modulo 2^bits for k >= 1, and k = 0 does not ask):
                // written so, the test shares its term with the accesses of iteration k instead
                // of leaving the solver to prove two products equal.
                let latch_at_k: HashMap<ExprId, ExprId> =
                    ivs.iter().filter(|(_, kind, _)| matches!(kind, IvKind::Affine { .. })).map(|(r, _, value)| (s.regs[*r as usize], *value)).collect();
                let cont_prev = self.x.subst_nodes(s.pc, &prev_map, latch_at_k);
                let zero = self.x.konst(0, COUNTER_BITS);
                let first = self.x.cmp(CmpOp::Eq, counter, zero);
                let mut guard = self.x.or(first, cont_prev);
                // Checking only iteration k-1 is exact for monotone tests as long as the
                // induction variables in the test do not wrap around; assume they do not (as
                // C++ and LLVM's `nsw` do), otherwise a wrapped value would look like a new
                // iteration.
                let in_test = self.x.symbols(s.pc);
                for (r, kind, value) in &ivs {
                    if let IvKind::Affine { step } = kind {
                        let h = Sym::Header { lp: l, reg: *r };
                        if in_test.contains(&h) {
                            let signed = self.compared_signed(s.pc, h);
                            let nw = self.no_wrap(entry.regs[*r as usize], *step, counter, *value, signed);
                            guard = self.x.and(guard, nw);
                        }
                    }
                }
                for nw in self.scaled_no_wrap(cont_prev, Sym::Counter(l)) {
                    guard = self.x.and(guard, nw);
                }
                for bound in self.not_equal_exit_bounds(l, counter, cont_prev, &ivs, &entry) {
                    guard = self.x.and(guard, bound);
                }
                (guard, true)
            }
            Some(_) => (self.x.boolean(true), false),
            None => {
                // No back edge reachable: only iteration 0.
                let zero = self.x.konst(0, COUNTER_BITS);
                (self.x.cmp(CmpOp::Eq, counter, zero), true)
            }
        };
        let _ = header_map;
        final_state.pc = self.x.and(entry.pc, guard);
        self.recording = was_recording;
        if self.recording {
            let havoc_step = latch.as_ref().and_then(|s| {
                let regs: Vec<(RegId, ExprId, ExprId)> = ivs
                    .iter()
                    .filter(|(r, kind, _)| matches!(kind, IvKind::Havoc) && self.reg_bits(*r) != BOOL)
                    .map(|(r, _, _)| (*r, entry.regs[*r as usize], s.regs[*r as usize]))
                    .collect();
                (!regs.is_empty()).then_some(HavocStep { regs, latch_pc: s.pc })
            });
            self.loops[l as usize] = Some(LoopSummary { ivs, guard, bounded, havoc_step });
            self.loop_entry_pc[l as usize] = Some(entry.pc);
        }
        let out = self.run_region(Some(l), header, final_state);
        let mut targets: Vec<BlockId> = out.exits.iter().map(|(t, _)| *t).collect();
        targets.sort();
        targets.dedup();
        if targets.len() != 1 {
            return out.exits;
        }
        let mut left = self.merge(out.exits.into_iter().map(|(_, s)| s).collect());
        let not_entered = self.x.not(entry.pc);
        let fact = self.x.or(not_entered, left.pc);
        if self.recording {
            self.exit_facts.push((l, fact));
        }
        left.pc = entry.pc;
        vec![(targets[0], left)]
    }

    /// Facts about iteration `k` from a latch test `v != B`, where `v` is an affine register
    /// `init + k*step` and `B` is loop-invariant: the guard states only that iteration k-1
    /// continued, but the loop stops at the first iteration whose value is `B`. When the
    /// distance `d` from `init` to `B` (modulo 2^bits, in the step's direction) is a non-zero
    /// multiple of `s = |step|`, that first iteration is `d / s`, so every iteration that runs
    /// has `k < d / s`. This is exact modular arithmetic (no assumption about wrapping), and it is
    /// what bounds the loops clang writes when it unrolls `for (i = 0; i < n; i++)` by four:
    /// `for (i = 0; i != (n & ~3); i += 4)`, and its remainder loop `for (r = n & 3; r != 0; r--)`.
    fn not_equal_exit_bounds(&mut self, l: LoopId, counter: ExprId, test: ExprId, ivs: &[(RegId, IvKind, ExprId)], entry: &State) -> Vec<ExprId> {
        use crate::expr::Node;
        let mut conjuncts = vec![test];
        let mut tests = Vec::new();
        while let Some(e) = conjuncts.pop() {
            match *self.x.node(e) {
                Node::And(a, b) => conjuncts.extend([a, b]),
                Node::Cmp { op: CmpOp::Ne, a, b } => tests.push((a, b)),
                _ => {}
            }
        }
        let mut bounds = Vec::new();
        for (side, bound) in tests.into_iter().flat_map(|(a, b)| [(a, b), (b, a)]) {
            if !self.is_invariant(l, bound) {
                continue;
            }
            // The tested side is an affine register, or its low bits (`cvt.u32.u64` of a 64-bit
            // counter: `trunc(init) + k*trunc(step)` modulo 2^32 is affine too).
            let affine = ivs.iter().find_map(|(r, kind, value)| {
                let IvKind::Affine { step } = kind else { return None };
                let c = self.x.as_const(*step)?;
                let init = entry.regs[*r as usize];
                if *value == side {
                    return Some((init, c, self.x.bits(side)));
                }
                match *self.x.node(side) {
                    Node::Ext { a, from, to, .. } if a == *value && to < from && to > BOOL => Some((init, c & crate::ops::mask(to), to)),
                    _ => None,
                }
            });
            let Some((init, c, bits)) = affine else { continue };
            let init = self.x.ext(init, bits, false);
            let negative = c >> (bits - 1) & 1 == 1;
            let (s, d) = if negative {
                (c.wrapping_neg() & crate::ops::mask(bits), self.x.bin(BinOp::Sub, init, bound))
            } else {
                (c, self.x.bin(BinOp::Sub, bound, init))
            };
            if s == 0 {
                continue;
            }
            let s_e = self.x.konst(s, bits);
            let rem = if s.is_power_of_two() {
                let low = self.x.konst(s - 1, bits);
                self.x.bin(BinOp::And, d, low)
            } else {
                self.x.bin(BinOp::RemU, d, s_e)
            };
            let zero = self.x.konst(0, bits);
            let divides = self.x.cmp(CmpOp::Eq, rem, zero);
            let nonzero = self.x.cmp(CmpOp::Ne, d, zero);
            let applies = self.x.and(divides, nonzero);
            // k < d / s, compared without wrapping (a product k*s could wrap past d).
            let first_stop = self.x.bin(BinOp::DivU, d, s_e);
            let wide = bits.max(COUNTER_BITS);
            let k = self.x.ext(counter, wide, false);
            let first_stop = self.x.ext(first_stop, wide, false);
            let before = self.x.cmp(CmpOp::LtU, k, first_stop);
            let not_applies = self.x.not(applies);
            bounds.push(self.x.or(not_applies, before));
        }
        bounds
    }

    /// `init + k*step` computed without wrapping, read as signed or as unsigned 64-bit numbers,
    /// equals the register's value.
    fn no_wrap(&mut self, init: ExprId, step: ExprId, k: ExprId, value: ExprId, signed: bool) -> ExprId {
        let bits = self.x.bits(value);
        if bits == BOOL || bits >= 64 {
            return self.x.boolean(true);
        }
        let k64 = self.x.ext(k, 64, false);
        let i = self.x.ext(init, 64, signed);
        // The step is added as a signed number either way (loops count down by adding -1).
        let st = self.x.ext(step, 64, true);
        let delta = self.x.bin(BinOp::Mul, k64, st);
        let exact = self.x.bin(BinOp::Add, i, delta);
        let actual = self.x.ext(value, 64, signed);
        self.x.cmp(CmpOp::Eq, exact, actual)
    }

    /// A loop test that compares a scaled induction variable with a signed comparison
    /// (PyTorch's `offset * ILP < size - last` in `int`, which clang writes `offset << 2`) is read
    /// as C++ reads it: the product does not overflow (the induction variable's own no-wrap fact
    /// does not cover it). Otherwise an `offset` near 2^30 makes `offset << 2` wrap to a small
    /// number that passes the test, the loop seems to run forever, and its accesses out of
    /// bounds (the ILP softmax stayed `uncertified` with its launch declared). One fact per
    /// constant multiple (`*c`, `<< c`) of a term that depends on the loop's counter (other than
    /// the bare counter), inside an operand of a signed comparison.
    fn scaled_no_wrap(&mut self, test: ExprId, counter: Sym) -> Vec<ExprId> {
        use crate::expr::Node;
        let mut scaled = Vec::new();
        let mut stack = vec![(test, false)];
        let mut seen = std::collections::HashSet::new();
        while let Some((e, in_signed)) = stack.pop() {
            if !seen.insert((e, in_signed)) {
                continue;
            }
            match *self.x.node(e) {
                Node::Cmp { op, a, b } => {
                    let signed = matches!(op, CmpOp::LtS | CmpOp::LeS | CmpOp::GtS | CmpOp::GeS);
                    stack.extend([(a, signed), (b, signed)]);
                    continue;
                }
                Node::Bin { op: op @ (BinOp::Mul | BinOp::Shl), a, b, bits } if in_signed && bits < 64 => {
                    let factor = match (op, self.x.node(b)) {
                        (BinOp::Shl, Node::Const { value, .. }) if *value < u64::from(bits) - 1 => Some(1i64 << value),
                        (BinOp::Mul, Node::Const { value, bits: cb }) => Some(crate::ops::sext(*value, *cb)),
                        _ => None,
                    };
                    // The counter scaled by the step is the induction variable's own product,
                    // which its no-wrap fact already covers.
                    let bare_counter = matches!(self.x.node(a), Node::Var { sym, .. } if *sym == counter);
                    if let Some(c) = factor.filter(|_| !bare_counter && self.x.symbols(a).contains(&counter)) {
                        scaled.push((e, a, c));
                    }
                }
                _ => {}
            }
            stack.extend(self.x.children(e).into_iter().map(|c| (c, in_signed)));
        }
        // As a range of the scaled term (`-2^31/c <= a <= (2^31-1)/c` for `int`): two
        // comparisons with constants, where an equation of 64-bit products made every question
        // through the loop's exit slower to decide.
        scaled
            .into_iter()
            .filter(|&(_, _, c)| c > 0)
            .map(|(e, a, c)| {
                let bits = self.x.bits(e);
                let (min, max) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
                let (lo, hi) = ((min / c as i128) as i64, (max / c as i128) as i64);
                let lo = self.x.konst(lo as u64, bits);
                let hi = self.x.konst(hi as u64, bits);
                let above = self.x.cmp(CmpOp::GeS, a, lo);
                let below = self.x.cmp(CmpOp::LeS, a, hi);
                self.x.and(above, below)
            })
            .collect()
    }

    /// Whether the loop test compares (an expression of) `h` with a signed comparison.
    fn compared_signed(&self, test: ExprId, h: Sym) -> bool {
        use crate::expr::Node;
        let mut stack = vec![test];
        let mut seen = std::collections::HashSet::new();
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            if let Node::Cmp { op, a, b } = *self.x.node(e) {
                let signed = matches!(op, CmpOp::LtS | CmpOp::LeS | CmpOp::GtS | CmpOp::GeS);
                if signed && (self.x.symbols(a).contains(&h) || self.x.symbols(b).contains(&h)) {
                    return true;
                }
            }
            stack.extend(self.x.children(e));
        }
        false
    }

    fn reg_bits(&self, r: RegId) -> u32 {
        let bits = self.k.regs[r as usize].bits;
        if bits == 1 {
            BOOL
        } else {
            bits
        }
    }

    fn classify(&mut self, l: LoopId, h: ExprId, next: ExprId) -> IvKind {
        use crate::expr::Node;
        if next == h {
            return IvKind::Invariant;
        }
        match self.x.node(next).clone() {
            Node::Bin { op: BinOp::Add, a, b, .. } if a == h && self.is_invariant(l, b) => IvKind::Affine { step: b },
            Node::Bin { op: BinOp::Add, a, b, .. } if b == h && self.is_invariant(l, a) => IvKind::Affine { step: a },
            // A loop that counts down by a size (`p -= blockDim.x`, llm.c's classifier walking a
            // row's packs from its end) steps by the size's negation; it was a havoc, and with it
            // every address derived from the counter, which the solver then placed past the row.
            Node::Bin { op: BinOp::Sub, a, b, .. } if a == h && self.is_invariant(l, b) => {
                let zero = self.x.konst(0, self.x.bits(b));
                IvKind::Affine { step: self.x.bin(BinOp::Sub, zero, b) }
            }
            Node::Bin { op: BinOp::LShr, a, b, .. } if a == h => match self.x.as_const(b) {
                Some(c) => IvKind::Shr { amount: c },
                None => IvKind::Havoc,
            },
            Node::Bin { op: BinOp::Shl, a, b, .. } if a == h => match self.x.as_const(b) {
                Some(c) => IvKind::Shl { amount: c },
                None => IvKind::Havoc,
            },
            _ => IvKind::Havoc,
        }
    }

    /// Upgrades havoc registers whose latch value is a formula over the loop's other (not havoc)
    /// induction variables and invariants to [`IvKind::Derived`]: at iteration `k > 0` the
    /// register holds that formula over their values at `k - 1` (the latch computes it from the
    /// header values of iteration `k - 1`), and its entry value at `k = 0`.
    #[allow(clippy::too_many_arguments)]
    fn derive_from_other_ivs(
        &mut self,
        l: LoopId,
        counter: ExprId,
        entry: &State,
        latch: &State,
        ivs: &mut [(RegId, IvKind, ExprId)],
        header_map: &mut HashMap<Sym, ExprId>,
        final_state: &mut State,
    ) {
        let exact: Vec<RegId> = ivs.iter().filter(|(_, k, _)| !matches!(k, IvKind::Havoc)).map(|(r, _, _)| *r).collect();
        if exact.len() == ivs.len() {
            return;
        }
        let one = self.x.konst(1, COUNTER_BITS);
        let prev = self.x.bin(BinOp::Sub, counter, one);
        let mut prev_map = HashMap::new();
        for (r, kind, _) in ivs.iter().filter(|(r, _, _)| exact.contains(r)) {
            let bits = self.reg_bits(*r);
            let v = self.iv_value(kind, entry.regs[*r as usize], prev, bits, l, *r);
            prev_map.insert(Sym::Header { lp: l, reg: *r }, v);
        }
        let zero = self.x.konst(0, COUNTER_BITS);
        let first = self.x.cmp(CmpOp::Eq, counter, zero);
        for (r, kind, value) in ivs.iter_mut().filter(|(_, k, _)| matches!(k, IvKind::Havoc)) {
            let next = latch.regs[*r as usize];
            let from_exact = self.x.symbols(next).into_iter().all(|s| match s {
                Sym::Header { lp, reg } if lp == l => exact.contains(&reg),
                s => !self.varies_in(l, s),
            });
            if !from_exact {
                continue;
            }
            let derived = self.x.subst(next, &prev_map);
            let v = self.x.ite(first, entry.regs[*r as usize], derived);
            *kind = IvKind::Derived;
            *value = v;
            header_map.insert(Sym::Header { lp: l, reg: *r }, v);
            final_state.regs[*r as usize] = v;
        }
    }

    fn iv_value(&mut self, kind: &IvKind, init: ExprId, k: ExprId, bits: u32, l: LoopId, r: RegId) -> ExprId {
        match kind {
            IvKind::Invariant => init,
            // Only `derive_from_other_ivs` knows a derived register's formula; elsewhere (the
            // previous iteration's values in the guard) it stays unknown, as before.
            IvKind::Derived | IvKind::Havoc => self.x.var(Sym::Havoc { lp: l, reg: r }, bits),
            IvKind::Affine { step } => {
                let kk = self.x.ext(k, bits, false);
                let delta = self.x.bin(BinOp::Mul, kk, *step);
                self.x.bin(BinOp::Add, init, delta)
            }
            IvKind::Shr { amount } | IvKind::Shl { amount } => {
                let kk = self.x.ext(k, bits, false);
                let amt = self.x.konst(*amount, bits);
                let sh = self.x.bin(BinOp::Mul, kk, amt);
                let op = if matches!(kind, IvKind::Shr { .. }) { BinOp::LShr } else { BinOp::Shl };
                self.x.bin(op, init, sh)
            }
        }
    }

    /// Whether a symbol takes a new value in each iteration of loop `l`.
    fn varies_in(&self, l: LoopId, s: Sym) -> bool {
        let inside = |lp: LoopId| {
            let mut cur = Some(lp);
            while let Some(c) = cur {
                if c == l {
                    return true;
                }
                cur = self.k.cfg.loops[c as usize].parent;
            }
            false
        };
        match s {
            Sym::Counter(lp) | Sym::Havoc { lp, .. } | Sym::Header { lp, .. } => inside(lp),
            Sym::Value { block, .. } => self.k.cfg.loops[l as usize].contains(block),
            _ => false,
        }
    }

    fn is_invariant(&self, l: LoopId, e: ExprId) -> bool {
        self.x.symbols(e).into_iter().all(|s| !self.varies_in(l, s))
    }

    /// Invariant apart from this loop's own header symbols (which the guard substitutes).
    fn is_invariant_except_headers(&self, l: LoopId, e: ExprId) -> bool {
        self.x.symbols(e).into_iter().all(|s| matches!(s, Sym::Header { lp, .. } if lp == l) || !self.varies_in(l, s))
    }

    // ----- one basic block -----------------------------------------------------------------

    fn run_block(&mut self, b: BlockId, mut st: State) -> Vec<(BlockId, State)> {
        if self.recording {
            self.block_pc[b as usize] = Some(match self.block_pc[b as usize] {
                Some(p) => self.x.or(p, st.pc),
                None => st.pc,
            });
        }
        let blk = &self.k.cfg.blocks[b as usize];
        for (idx, inst) in blk.insts.iter().enumerate() {
            self.step(b, idx, inst, &mut st);
        }
        match blk.term {
            Term::Goto(t) => vec![(t, st)],
            Term::Return => vec![],
            Term::Branch { cond, negated, taken, fallthrough } => {
                let mut c = st.regs[cond as usize];
                if self.x.bits(c) != BOOL {
                    let zero = self.x.konst(0, self.x.bits(c));
                    c = self.x.cmp(CmpOp::Ne, c, zero);
                }
                if negated {
                    c = self.x.not(c);
                }
                let nc = self.x.not(c);
                let t_pc = self.x.and(st.pc, c);
                let f_pc = self.x.and(st.pc, nc);
                let t = State { regs: st.regs.clone(), pc: t_pc };
                let f = State { regs: st.regs, pc: f_pc };
                if taken == fallthrough {
                    vec![(taken, State { regs: t.regs, pc: st.pc })]
                } else {
                    vec![(taken, t), (fallthrough, f)]
                }
            }
        }
    }

    fn operand(&mut self, st: &State, o: &Operand, bits: u32) -> ExprId {
        let e = match o {
            Operand::Reg(r) => st.regs[*r as usize],
            Operand::NotReg(r) => {
                let v = st.regs[*r as usize];
                let v = self.as_bool(v);
                return self.x.not(v);
            }
            Operand::Imm(v) => {
                if bits == BOOL {
                    return self.x.boolean(*v != 0);
                }
                return self.x.konst(*v, bits);
            }
            Operand::Special(s) => self.x.var(Sym::Special(*s), s.bits()),
            Operand::VarAddr(v) => self.x.var(Sym::VarBase(*v), 64),
            Operand::Param { index, offset } => {
                // Scalars keep their declared width so every use names the same symbol; byte-array
                // (struct) parameters are read field by field at the width of the load.
                let declared = self.k.params.get(*index as usize);
                let w = match declared {
                    Some(p) if p.bytes * 8 == p.bits => p.bits,
                    _ if bits == BOOL => 8,
                    _ => bits,
                };
                self.x.var(Sym::Param { index: *index, offset: *offset }, w)
            }
        };
        self.fit(e, bits)
    }

    /// Converts between widths (truncate / zero-extend) and between bool and bit-vectors, as
    /// PTX's untyped registers allow.
    fn fit(&mut self, e: ExprId, bits: u32) -> ExprId {
        let have = self.x.bits(e);
        if have == bits {
            return e;
        }
        if bits == BOOL {
            let zero = self.x.konst(0, have);
            return self.x.cmp(CmpOp::Ne, e, zero);
        }
        if have == BOOL {
            let one = self.x.konst(1, bits);
            let zero = self.x.konst(0, bits);
            return self.x.ite(e, one, zero);
        }
        self.x.ext(e, bits, false)
    }

    fn as_bool(&mut self, e: ExprId) -> ExprId {
        self.fit(e, BOOL)
    }

    fn fresh(&mut self, b: BlockId, idx: usize, elem: u32, bits: u32, origin: ValueOrigin) -> ExprId {
        self.value_origin.entry((b, idx as u32)).or_insert(origin);
        let w = if bits == 1 { BOOL } else { bits };
        if w == BOOL {
            let v = self.x.var(Sym::Value { block: b, inst: idx as u32, elem }, 8);
            let zero = self.x.konst(0, 8);
            return self.x.cmp(CmpOp::Ne, v, zero);
        }
        self.x.var(Sym::Value { block: b, inst: idx as u32, elem }, w)
    }

    fn set(&mut self, st: &mut State, guard: Option<ExprId>, r: RegId, v: ExprId) {
        let bits = self.reg_bits(r);
        let v = self.fit(v, bits);
        st.regs[r as usize] = match guard {
            None => v,
            Some(g) => self.x.ite(g, v, st.regs[r as usize]),
        };
    }

    fn step(&mut self, b: BlockId, idx: usize, inst: &Inst, st: &mut State) {
        let guard = inst.guard.map(|(r, neg)| {
            let v = st.regs[r as usize];
            let v = self.as_bool(v);
            if neg {
                self.x.not(v)
            } else {
                v
            }
        });
        let pc = match guard {
            Some(g) => self.x.and(st.pc, g),
            None => st.pc,
        };
        self.note_opaque_operands(st, &inst.op);
        match &inst.op {
            Op::Mov { dst, src, bits } => {
                let w = if self.reg_bits(*dst) == BOOL { BOOL } else { *bits };
                let v = self.operand(st, src, w);
                self.set(st, guard, *dst, v);
            }
            Op::Bin { dst, op, a, b: bb, bits } => {
                let x = self.operand(st, a, *bits);
                let y = self.operand(st, bb, *bits);
                let v = self.x.bin(*op, x, y);
                self.set(st, guard, *dst, v);
            }
            Op::Un { dst, op, a, bits } => {
                let x = self.operand(st, a, *bits);
                let v = self.x.un(*op, x);
                self.set(st, guard, *dst, v);
            }
            Op::Ext { dst, a, from, to, signed } => {
                let x = self.operand(st, a, *from);
                let v = self.x.ext(x, *to, *signed);
                self.set(st, guard, *dst, v);
            }
            Op::Setp { dst, dst_neg, cmp, a, b: bb, bits, combine } => {
                let x = self.operand(st, a, *bits);
                let y = self.operand(st, bb, *bits);
                let c = self.x.cmp(*cmp, x, y);
                self.set_pred_pair(st, guard, *dst, *dst_neg, c, combine.as_ref());
            }
            Op::FSetp { dst, dst_neg, combine, .. } => {
                let c = self.fresh(b, idx, 0, 1, ValueOrigin::Float);
                self.set_pred_pair(st, guard, *dst, *dst_neg, c, combine.as_ref());
            }
            Op::Selp { dst, a, b: bb, cond, bits } => {
                let x = self.operand(st, a, *bits);
                let y = self.operand(st, bb, *bits);
                let c = self.operand(st, cond, BOOL);
                let v = self.x.ite(c, x, y);
                self.set(st, guard, *dst, v);
            }
            Op::Pred { dst, op, a, b: bb } => {
                let x = self.operand(st, a, BOOL);
                let y = self.operand(st, bb, BOOL);
                let v = match op {
                    BoolOp::And => self.x.and(x, y),
                    BoolOp::Or => self.x.or(x, y),
                    BoolOp::Xor => self.x.xor(x, y),
                };
                self.set(st, guard, *dst, v);
            }
            Op::PredNot { dst, a } => {
                let x = self.operand(st, a, BOOL);
                let v = self.x.not(x);
                self.set(st, guard, *dst, v);
            }
            Op::Float { dst, bits, .. } => {
                let v = self.fresh(b, idx, 0, *bits, ValueOrigin::Float);
                self.set(st, guard, *dst, v);
            }
            Op::Cvt { dst, .. } => {
                let bits = self.k.regs[*dst as usize].bits;
                let v = self.fresh(b, idx, 0, bits, ValueOrigin::Float);
                self.set(st, guard, *dst, v);
            }
            Op::Ld { dsts, space, addr, elem_bytes } => {
                let id = self.record_access(b, idx, inst, st, pc, *space, addr, elem_bytes * dsts.len() as u32, AccessKind::Read);
                for (j, &d) in dsts.iter().enumerate() {
                    let bits = self.k.regs[d as usize].bits;
                    // A narrow load zero-extends into a wider register (signed ones are decoded
                    // as a load into a narrow temporary and a sign extension).
                    let mem_bits = elem_bytes * 8;
                    let v = if bits > mem_bits && bits != 1 {
                        let narrow = self.fresh(b, idx, j as u32, mem_bits, ValueOrigin::Load { access: id });
                        self.x.ext(narrow, bits, false)
                    } else {
                        self.fresh(b, idx, j as u32, bits, ValueOrigin::Load { access: id })
                    };
                    self.set(st, guard, d, v);
                }
            }
            Op::St { srcs, space, addr, elem_bytes } => {
                self.record_access(b, idx, inst, st, pc, *space, addr, elem_bytes * srcs.len() as u32, AccessKind::Write);
            }
            Op::Atom { dst, space, op, addr, bytes, .. } => {
                let id = self.record_access(b, idx, inst, st, pc, *space, addr, *bytes, AccessKind::Atomic(*op));
                if let Some(d) = dst {
                    let v = self.fresh(b, idx, 0, bytes * 8, ValueOrigin::Load { access: id });
                    self.set(st, guard, *d, v);
                }
            }
            Op::Bar { kind, .. } => {
                if *kind == BarrierKind::Sync && self.recording {
                    let loops = self.k.cfg.loop_nest(b);
                    self.out_barriers.push(BarrierSite { block: b, inst: idx, pc, loops, span: inst.span, line: inst.line });
                }
            }
            Op::BarRed { dst, .. } => {
                if self.recording {
                    let loops = self.k.cfg.loop_nest(b);
                    self.out_barriers.push(BarrierSite { block: b, inst: idx, pc, loops, span: inst.span, line: inst.line });
                }
                // The reduction is the same in every thread of the block; a value per thread
                // over-approximates it.
                let bits = self.k.regs[*dst as usize].bits;
                let v = self.fresh(b, idx, 0, bits, ValueOrigin::Vote);
                self.set(st, guard, *dst, v);
            }
            Op::WarpSync { mask } => {
                let m = self.operand(st, mask, 32);
                self.record_warp(WarpOpKind::WarpSync, m, b, idx, inst, pc);
            }
            Op::Shfl { dst, pred_dst, mask, .. } => {
                let m = self.operand(st, mask, 32);
                self.record_warp(WarpOpKind::Shfl, m, b, idx, inst, pc);
                let v = self.fresh(b, idx, 0, 32, ValueOrigin::Shuffle);
                self.set(st, guard, *dst, v);
                if let Some(p) = pred_dst {
                    let v = self.fresh(b, idx, 1, 1, ValueOrigin::Shuffle);
                    self.set(st, guard, *p, v);
                }
            }
            Op::Vote { dst, mask, .. } => {
                let m = self.operand(st, mask, 32);
                self.record_warp(WarpOpKind::Vote, m, b, idx, inst, pc);
                let bits = self.k.regs[*dst as usize].bits;
                let v = self.fresh(b, idx, 0, bits, ValueOrigin::Vote);
                self.set(st, guard, *dst, v);
            }
            Op::ActiveMask { dst } => {
                let v = self.fresh(b, idx, 0, 32, ValueOrigin::Other);
                self.set(st, guard, *dst, v);
            }
            Op::Fence | Op::Bra { .. } | Op::Ret | Op::Exit => {}
            Op::Unsupported { opcode, reason } => {
                if self.recording && self.x.as_bool(pc) != Some(false) {
                    self.out_unsupported.push(UnsupportedSite {
                        block: b,
                        inst: idx,
                        pc,
                        span: inst.span,
                        line: inst.line,
                        opcode: opcode.clone(),
                        reason: reason.clone(),
                    });
                }
            }
        }
    }

    /// Records the operands of an instruction whose result the model does not compute from
    /// them (see [`Lifted::opaque_uses`]). Operands of the instructions it does compute, and
    /// memory addresses (kept with each access), are visible in the expressions already.
    fn note_opaque_operands(&mut self, st: &State, op: &Op) {
        // Instructions whose results are expressions of their operands, and loads and
        // branches, whose operands end up in an access's address or a path condition.
        let transparent = matches!(
            op,
            Op::Mov { .. } | Op::Bin { .. } | Op::Un { .. } | Op::Ext { .. } | Op::Setp { .. } | Op::Selp { .. } | Op::Pred { .. } | Op::PredNot { .. }
        ) || matches!(op, Op::Ld { .. } | Op::Bra { .. } | Op::Ret | Op::Exit | Op::Fence);
        if transparent {
            return;
        }
        for o in op.operands() {
            let e = match o {
                Operand::Reg(r) | Operand::NotReg(r) => st.regs[*r as usize],
                Operand::Special(s) => self.x.var(Sym::Special(*s), s.bits()),
                _ => continue,
            };
            self.opaque_uses.push(e);
        }
    }

    fn set_pred_pair(&mut self, st: &mut State, guard: Option<ExprId>, dst: RegId, dst_neg: Option<RegId>, c: ExprId, combine: Option<&(BoolOp, Operand)>) {
        let (pos, neg) = match combine {
            None => (c, self.x.not(c)),
            Some((op, q)) => {
                let q = self.operand(st, q, BOOL);
                let nc = self.x.not(c);
                let f = |x: &mut Exprs, v: ExprId| match op {
                    BoolOp::And => x.and(v, q),
                    BoolOp::Or => x.or(v, q),
                    BoolOp::Xor => x.xor(v, q),
                };
                (f(&mut self.x, c), f(&mut self.x, nc))
            }
        };
        self.set(st, guard, dst, pos);
        if let Some(n) = dst_neg {
            self.set(st, guard, n, neg);
        }
    }

    fn record_warp(&mut self, kind: WarpOpKind, mask: ExprId, b: BlockId, idx: usize, inst: &Inst, pc: ExprId) {
        if self.recording {
            let loops = self.k.cfg.loop_nest(b);
            self.out_warp.push(WarpOpSite { kind, mask, block: b, inst: idx, pc, loops, span: inst.span, line: inst.line });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn record_access(
        &mut self,
        b: BlockId,
        idx: usize,
        inst: &Inst,
        st: &State,
        pc: ExprId,
        space: Space,
        addr: &Address,
        bytes: u32,
        kind: AccessKind,
    ) -> usize {
        let base_val = self.operand(st, &addr.base, 64);
        let off = self.x.konst(addr.offset as u64, 64);
        let full = self.x.bin(BinOp::Add, base_val, off);
        // An address that selects between two arrays (`i < n ? a[i] : b[i - n]`, which clang
        // writes as a `selp` of the two pointers) is one access per array, each under its
        // condition; an arm with no base stays untracked, under its own condition.
        let arms = match self.split_base(full) {
            Some(split) => vec![(full, pc, Some(split))],
            None => match self.pointer_arms(full, MAX_POINTER_ARMS) {
                Some(arms) if arms.len() > 1 => arms
                    .into_iter()
                    .map(|(cond, a)| {
                        let arm_pc = self.x.and(pc, cond);
                        let split = self.split_base(a);
                        (a, arm_pc, split)
                    })
                    .collect(),
                _ => vec![(full, pc, None)],
            },
        };
        let id = self.out_accesses.len();
        for (addr, pc, split) in arms {
            let (base, offset) = match split {
                Some((base, offset)) => (Some(base), Some(offset)),
                None => (None, None),
            };
            let space = match (space, base) {
                (Space::Generic, Some(Base::Var(v))) => self.k.vars[v as usize].space,
                (Space::Generic, Some(Base::Param(_))) => Space::Global,
                (s, _) => s,
            };
            if self.recording {
                let loops = self.k.cfg.loop_nest(b);
                self.out_accesses.push(Access { kind, space, base, addr, offset, bytes, pc, block: b, inst: idx, loops, span: inst.span, line: inst.line });
            }
        }
        id
    }

    /// The arms of an address that selects between pointers: `(condition, address)` pairs, the
    /// selects pushed out through sums and width changes (`ite(c, a, b) + o` is `a + o` when `c`,
    /// else `b + o`). `None` past `limit` arms.
    fn pointer_arms(&mut self, e: ExprId, limit: usize) -> Option<Vec<(ExprId, ExprId)>> {
        use crate::expr::Node;
        let t = self.x.boolean(true);
        let arms = match self.x.node(e).clone() {
            Node::Ite { c, a, b } if self.x.bits(a) == 64 || self.x.bits(a) == 32 => {
                let nc = self.x.not(c);
                let mut out = Vec::new();
                for (cond, side) in [(c, a), (nc, b)] {
                    for (inner, arm) in self.pointer_arms(side, limit)? {
                        let both = self.x.and(cond, inner);
                        out.push((both, arm));
                    }
                }
                out
            }
            Node::Bin { op: op @ (BinOp::Add | BinOp::Sub), a, b, .. } => {
                let left = self.pointer_arms(a, limit)?;
                if left.len() > 1 {
                    left.into_iter().map(|(c, x)| (c, self.x.bin(op, x, b))).collect()
                } else if op == BinOp::Add {
                    let right = self.pointer_arms(b, limit)?;
                    right.into_iter().map(|(c, y)| (c, self.x.bin(op, a, y))).collect()
                } else {
                    vec![(t, e)]
                }
            }
            Node::Ext { a, to, signed, .. } => {
                let inner = self.pointer_arms(a, limit)?;
                inner.into_iter().map(|(c, x)| (c, self.x.ext(x, to, signed))).collect()
            }
            _ => vec![(t, e)],
        };
        (arms.len() <= limit).then_some(arms)
    }

    /// Splits an address into its base (a variable or a pointer parameter) and a byte offset,
    /// when the base appears once as a summand.
    fn split_base(&mut self, e: ExprId) -> Option<(Base, ExprId)> {
        use crate::expr::Node;
        let base_of = |s: Sym, bits: u32, k: &Kernel| -> Option<Base> {
            match s {
                Sym::VarBase(v) => Some(Base::Var(v)),
                Sym::Param { index, offset: 0 } if k.params.get(index as usize).is_some_and(|p| p.bits == 64) => Some(Base::Param(index)),
                // Eight aligned bytes of a struct passed by value, read whole: a pointer field.
                Sym::Param { index, offset } if bits == 64 && offset % 8 == 0 && k.params.get(index as usize).is_some_and(|p| p.is_aggregate()) => {
                    Some(Base::Field { param: index, offset })
                }
                _ => None,
            }
        };
        match self.x.node(e).clone() {
            Node::Var { sym, bits } => base_of(sym, bits, self.k).map(|b| (b, self.x.konst(0, 64))),
            // A 64-bit field of a struct added to a pointer is an offset (`src + p.nb01`), not a
            // second pointer: a field is taken for a pointer only when nothing else is.
            Node::Bin { op: BinOp::Add, a, b, .. } => match (self.split_base(a), self.split_base(b)) {
                (Some((base, off)), None) => Some((base, self.x.bin(BinOp::Add, off, b))),
                (None, Some((base, off))) => Some((base, self.x.bin(BinOp::Add, a, off))),
                (Some((base, off)), Some((Base::Field { .. }, _))) if !matches!(base, Base::Field { .. }) => Some((base, self.x.bin(BinOp::Add, off, b))),
                (Some((Base::Field { .. }, _)), Some((base, off))) if !matches!(base, Base::Field { .. }) => Some((base, self.x.bin(BinOp::Add, a, off))),
                _ => None,
            },
            // A pointer minus an offset (clang's `(p + 8i) - 4i` for `p[i + 1]` after `p[2i]`).
            Node::Bin { op: BinOp::Sub, a, b, .. } => {
                let (base, off) = self.split_base(a)?;
                match self.split_base(b) {
                    Some((Base::Field { .. }, _)) if !matches!(base, Base::Field { .. }) => {}
                    Some(_) => return None,
                    None => {}
                }
                Some((base, self.x.bin(BinOp::Sub, off, b)))
            }
            // nvcc addresses shared memory with 32-bit registers (`mov.u32 %r1, smem`): look
            // through the width changes, keeping the offset at the width of the whole.
            Node::Ext { a, to, .. } => {
                let (base, off) = self.split_base(a)?;
                Some((base, self.x.ext(off, to, false)))
            }
            // clang merges stores to one array under a select of two addresses.
            Node::Ite { c, a, b } => {
                let (ba, oa) = self.split_base(a)?;
                let (bb, ob) = self.split_base(b)?;
                (ba == bb).then(|| (ba, self.x.ite(c, oa, ob)))
            }
            _ => None,
        }
    }
}
