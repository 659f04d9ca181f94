//! Exhaustive enumeration for concrete launches: the fast path and the exact oracle.
//!
//! When the interface fixes the launch geometry and every parameter an access depends on, the
//! thread domain is finite and small: each access's instances (thread, loop iterations, byte
//! offset) can be listed by evaluating its path condition and address, and collisions found with
//! a hash map. This answers most real kernels in microseconds, without the solver, and exactly.
//! A load from a buffer whose contents the interface fixes is a function of its offset and is
//! evaluated too. Anything else that is not a function of thread ids and loop counters (another
//! loaded value, a havocked register, an unbounded loop), or a read outside fixed contents that
//! a counted point depends on, makes the enumerator decline, and the SMT path takes over.

use crate::ctx::Ctx;
use crate::fixed::FixedLoad;
use crate::query::ThreadId;
use crate::witness::{MemoryCell, Witness, WitnessThread};
use model::cfg::{BlockId, LoopId};
use model::expr::{ExprId, Exprs, Node, Sym, BOOL};
use model::ops::*;
use model::phases::IterRel;
use model::symbolic::Access;
use std::collections::{HashMap, HashSet};

/// Loop iterations enumerated at most per loop.
const MAX_ITERATIONS: u64 = 1 << 12;
/// Points (thread × iteration vector) enumerated at most per access.
const MAX_POINTS: usize = 1 << 19;
/// Threads enumerated at most per check; past this the solver is faster.
const MAX_THREADS: u64 = 1 << 20;

/// Expressions compiled to a straight-line program over their DAG, for fast repeated
/// evaluation: operands are slot indices, so a run is one pass over a vector.
pub struct Program {
    ins: Vec<Ins>,
    slot: HashMap<ExprId, usize>,
    /// Loads from fixed buffers, with the slot of their offset and of their value.
    loads: Vec<(FixedLoad, usize, usize)>,
    /// The instructions of each [`Stage`], in program order: an instruction reads only
    /// instructions of its stage or an earlier one, so a run may start at any stage.
    stages: [Vec<usize>; STAGES],
    /// Unique per program: an [`Eval`] holding another program's values is run in full.
    id: u64,
}

/// The next [`Program::id`].
static NEXT_PROGRAM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What an instruction's value depends on, coarsest first: the launch's sizes (and constants),
/// the block, the thread, the loop counters. An enumeration walks blocks, then threads, then
/// iterations, and re-evaluates only the stages the step changed (see [`Program::run_from`]):
/// most of an offset or a path condition is the same for every iteration of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Launch = 0,
    Block = 1,
    Thread = 2,
    Iteration = 3,
}

const STAGES: usize = 4;

fn stage_of(s: Sym) -> Stage {
    match s {
        Sym::Special(Special::Ntid(_) | Special::Nctaid(_)) => Stage::Launch,
        Sym::Special(Special::Ctaid(_)) => Stage::Block,
        Sym::Counter(_) => Stage::Iteration,
        _ => Stage::Thread,
    }
}

/// The values of a program's nodes after a run, and which of them depend on a read outside
/// fixed contents (whose value nothing fixes). Without loads nothing is poisoned and `poison`
/// stays empty.
#[derive(Default)]
pub struct Eval {
    pub vals: Vec<u64>,
    poison: Vec<bool>,
    /// The program whose values these are (see [`Program::run_from`]).
    of: Option<u64>,
}

impl Eval {
    pub fn poisoned(&self, slot: usize) -> bool {
        self.poison.get(slot).copied().unwrap_or(false)
    }
}

/// One node with its operands resolved to slots.
enum Ins {
    Const(u64),
    Sym(Sym, u64),
    Bin(BinOp, usize, usize, u32),
    Un(UnOp, usize, u32),
    Ext(usize, u32, u32, bool),
    Cmp(CmpOp, usize, usize, u32),
    Not(usize),
    And(usize, usize),
    Or(usize, usize),
    Xor(usize, usize),
    Ite(usize, usize, usize),
    /// The value of fixed load `n` at the offset in the slot.
    Load(usize, usize),
}

impl Ins {
    /// The slots this instruction reads.
    fn reads(&self) -> [Option<usize>; 3] {
        match *self {
            Ins::Const(_) | Ins::Sym(..) => [None; 3],
            Ins::Un(_, a, _) | Ins::Ext(a, ..) | Ins::Not(a) | Ins::Load(_, a) => [Some(a), None, None],
            Ins::Bin(_, a, b, _) | Ins::Cmp(_, a, b, _) | Ins::And(a, b) | Ins::Or(a, b) | Ins::Xor(a, b) => [Some(a), Some(b), None],
            Ins::Ite(c, a, b) => [Some(c), Some(a), Some(b)],
        }
    }
}

/// Concrete values of the symbols a program may mention.
#[derive(Clone)]
pub struct Env {
    pub ntid: [u64; 3],
    pub nctaid: [u64; 3],
    pub tid: [u64; 3],
    pub ctaid: [u64; 3],
    pub k: Vec<u64>,
}

impl Env {
    fn sym(&self, s: Sym) -> u64 {
        match s {
            Sym::Special(Special::Tid(d)) => self.tid[d as usize],
            Sym::Special(Special::Ntid(d)) => self.ntid[d as usize],
            Sym::Special(Special::Ctaid(d)) => self.ctaid[d as usize],
            Sym::Special(Special::Nctaid(d)) => self.nctaid[d as usize],
            Sym::Special(Special::LaneId) => self.linear() & 31,
            Sym::Special(Special::WarpId) => self.linear() >> 5,
            Sym::Counter(l) => self.k.get(l as usize).copied().unwrap_or(0),
            _ => 0,
        }
    }

    pub fn linear(&self) -> u64 {
        self.tid[0] + self.ntid[0] * (self.tid[1] + self.ntid[1] * self.tid[2])
    }
}

fn evaluable(s: Sym) -> bool {
    matches!(s, Sym::Special(Special::Tid(_) | Special::Ntid(_) | Special::Ctaid(_) | Special::Nctaid(_) | Special::LaneId | Special::WarpId) | Sym::Counter(_))
}

/// A program for `roots` in the context of a check: loads from fixed buffers are evaluated.
pub fn program(ctx: &Ctx, roots: &[ExprId]) -> Option<Program> {
    Program::new(&ctx.l.exprs, roots, &|s| crate::fixed::fixed_load(ctx.k, ctx.l, ctx.bind, s))
}

impl Program {
    /// Compiles `roots`; `None` if they mention a symbol that has no concrete value (`fixed`
    /// gives the loads that have one for each offset).
    pub fn new(x: &Exprs, roots: &[ExprId], fixed: &dyn Fn(Sym) -> Option<FixedLoad>) -> Option<Program> {
        let mut order = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut fixed_of: HashMap<ExprId, FixedLoad> = HashMap::new();
        // Iterative post-order so children come before parents; a fixed load's offset counts as
        // its child.
        let mut stack: Vec<(ExprId, bool)> = roots.iter().map(|&r| (r, false)).collect();
        while let Some((e, expanded)) = stack.pop() {
            if expanded {
                order.push(e);
                continue;
            }
            if !seen.insert(e) {
                continue;
            }
            let mut offset = None;
            if let Node::Var { sym, .. } = x.node(e) {
                if !evaluable(*sym) {
                    let load = fixed(*sym)?;
                    offset = Some(load.offset);
                    fixed_of.insert(e, load);
                }
            }
            stack.push((e, true));
            for c in x.children(e).into_iter().chain(offset) {
                if !seen.contains(&c) {
                    stack.push((c, false));
                }
            }
        }
        let slot: HashMap<ExprId, usize> = order.iter().enumerate().map(|(i, &e)| (e, i)).collect();
        let mut loads = Vec::new();
        let ins = order
            .iter()
            .map(|&e| match *x.node(e) {
                Node::Const { value, .. } => Ins::Const(value),
                Node::Bool(b) => Ins::Const(b as u64),
                Node::Var { .. } if fixed_of.contains_key(&e) => {
                    let load = fixed_of.remove(&e).expect("present");
                    let offset = slot[&load.offset];
                    loads.push((load, offset, slot[&e]));
                    Ins::Load(loads.len() - 1, offset)
                }
                Node::Var { sym, bits } => Ins::Sym(sym, if bits == BOOL { 1 } else { mask(bits) }),
                Node::Bin { op, a, b, bits } => Ins::Bin(op, slot[&a], slot[&b], bits),
                Node::Un { op, a, bits } => Ins::Un(op, slot[&a], bits),
                Node::Ext { a, from, to, signed } => Ins::Ext(slot[&a], from, to, signed),
                Node::Cmp { op, a, b } => Ins::Cmp(op, slot[&a], slot[&b], x.bits(a)),
                Node::Not(a) => Ins::Not(slot[&a]),
                Node::And(a, b) => Ins::And(slot[&a], slot[&b]),
                Node::Or(a, b) => Ins::Or(slot[&a], slot[&b]),
                Node::Xor(a, b) => Ins::Xor(slot[&a], slot[&b]),
                Node::Ite { c, a, b } => Ins::Ite(slot[&c], slot[&a], slot[&b]),
            })
            .collect::<Vec<Ins>>();
        let mut stage_at: Vec<Stage> = Vec::with_capacity(ins.len());
        let mut stages: [Vec<usize>; STAGES] = Default::default();
        for (i, instruction) in ins.iter().enumerate() {
            let reads = instruction.reads();
            let own = match instruction {
                Ins::Sym(sym, _) => stage_of(*sym),
                _ => Stage::Launch,
            };
            let stage = reads.iter().flatten().map(|&r| stage_at[r]).fold(own, Stage::max);
            stage_at.push(stage);
            stages[stage as usize].push(i);
        }
        Some(Program { ins, slot, loads, stages, id: NEXT_PROGRAM.fetch_add(1, std::sync::atomic::Ordering::Relaxed) })
    }

    /// What a block contributes to everything this program evaluates per thread: the slots of
    /// the launch and block stages that a thread or iteration stage reads, and the roots
    /// computed at those stages. `None` for a program with loads (their poison is not kept
    /// per stage).
    fn block_frontier(&self, roots: &[ExprId]) -> Option<Vec<usize>> {
        if !self.loads.is_empty() {
            return None;
        }
        let early: HashSet<usize> = self.stages[Stage::Launch as usize].iter().chain(&self.stages[Stage::Block as usize]).copied().collect();
        let late = self.stages[Stage::Thread as usize].iter().chain(&self.stages[Stage::Iteration as usize]);
        let mut frontier: Vec<usize> = late.flat_map(|&i| self.ins[i].reads()).flatten().filter(|r| early.contains(r)).collect();
        frontier.extend(roots.iter().map(|r| self.slot[r]).filter(|r| early.contains(r)));
        frontier.sort_unstable();
        frontier.dedup();
        Some(frontier)
    }

    /// Evaluates every node; read results with `get`.
    pub fn run(&self, env: &Env, ev: &mut Eval) {
        self.run_from(env, ev, Stage::Launch);
    }

    /// Evaluates the nodes of `from` and later stages, keeping the values `ev` holds for the
    /// earlier ones: those of the last run of this program, whose launch, block, thread (as
    /// far as `from` keeps them) must be `env`'s. An `ev` that holds no values of this program
    /// is run in full.
    /// Evaluates the launch and block stages only (a program without loads).
    fn run_through_block(&self, env: &Env, ev: &mut Eval) {
        ev.of = None;
        ev.vals.resize(self.ins.len(), 0);
        for stage in &self.stages[..=Stage::Block as usize] {
            for &i in stage {
                ev.vals[i] = self.value(i, env, &ev.vals);
            }
        }
    }

    pub fn run_from(&self, env: &Env, ev: &mut Eval, from: Stage) {
        let from = if ev.of == Some(self.id) { from } else { Stage::Launch };
        ev.of = Some(self.id);
        ev.vals.resize(self.ins.len(), 0);
        if self.loads.is_empty() {
            ev.poison.clear();
            for stage in &self.stages[from as usize..] {
                for &i in stage {
                    ev.vals[i] = self.value(i, env, &ev.vals);
                }
            }
        } else {
            ev.poison.resize(self.ins.len(), false);
            for stage in &self.stages[from as usize..] {
                for &i in stage {
                    let (v, p) = self.value_with_loads(i, env, &ev.vals, &ev.poison);
                    ev.vals[i] = v;
                    ev.poison[i] = p;
                }
            }
        }
    }

    /// Node `i`'s value from the values of the nodes before it.
    fn value(&self, i: usize, env: &Env, vals: &[u64]) -> u64 {
        match self.ins[i] {
            Ins::Const(v) => v,
            Ins::Sym(s, m) => env.sym(s) & m,
            Ins::Bin(op, a, b, bits) => eval_bin(op, vals[a], vals[b], bits),
            Ins::Un(op, a, bits) => eval_un(op, vals[a], bits),
            Ins::Ext(a, from, to, signed) => eval_ext(vals[a], from, to, signed),
            Ins::Cmp(op, a, b, bits) => eval_cmp(op, vals[a], vals[b], bits) as u64,
            Ins::Not(a) => 1 - vals[a],
            Ins::And(a, b) => vals[a] & vals[b],
            Ins::Or(a, b) => vals[a] | vals[b],
            Ins::Xor(a, b) => vals[a] ^ vals[b],
            Ins::Ite(c, a, b) => {
                if vals[c] == 1 {
                    vals[a]
                } else {
                    vals[b]
                }
            }
            Ins::Load(..) => unreachable!("programs with loads run in value_with_loads"),
        }
    }

    /// [`Program::value`] for programs that read fixed buffers: a read outside the contents
    /// has no value, and what depends on it is poisoned, except where it cannot matter (the
    /// other side of a false conjunct, the branch an `ite` does not take).
    fn value_with_loads(&self, i: usize, env: &Env, vals: &[u64], poison: &[bool]) -> (u64, bool) {
        match self.ins[i] {
            Ins::Const(v) => (v, false),
            Ins::Sym(s, m) => (env.sym(s) & m, false),
            Ins::Bin(op, a, b, bits) => (eval_bin(op, vals[a], vals[b], bits), poison[a] || poison[b]),
            Ins::Un(op, a, bits) => (eval_un(op, vals[a], bits), poison[a]),
            Ins::Ext(a, from, to, signed) => (eval_ext(vals[a], from, to, signed), poison[a]),
            Ins::Cmp(op, a, b, bits) => (eval_cmp(op, vals[a], vals[b], bits) as u64, poison[a] || poison[b]),
            Ins::Not(a) => (1 - vals[a], poison[a]),
            Ins::And(a, b) => {
                let decided = (!poison[a] && vals[a] == 0) || (!poison[b] && vals[b] == 0);
                (vals[a] & vals[b], !decided && (poison[a] || poison[b]))
            }
            Ins::Or(a, b) => {
                let decided = (!poison[a] && vals[a] == 1) || (!poison[b] && vals[b] == 1);
                (vals[a] | vals[b], !decided && (poison[a] || poison[b]))
            }
            Ins::Xor(a, b) => (vals[a] ^ vals[b], poison[a] || poison[b]),
            Ins::Ite(c, a, b) => {
                let taken = if vals[c] == 1 { a } else { b };
                (vals[taken], poison[c] || poison[taken])
            }
            Ins::Load(n, off) => match self.loads[n].0.value_at(vals[off]).filter(|_| !poison[off]) {
                Some(v) => (v, false),
                None => (0, true),
            },
        }
    }

    pub fn get(&self, vals: &[u64], e: ExprId) -> u64 {
        vals[self.slot[&e]]
    }

    /// The fixed-buffer cells the last run read (those inside the contents), for witnesses.
    pub fn cells_read(&self, ev: &Eval) -> Vec<MemoryCell> {
        let mut out: Vec<MemoryCell> = Vec::new();
        for (load, off, value) in &self.loads {
            if ev.poisoned(*value) {
                continue;
            }
            let cell = MemoryCell::new(load.buffer, ev.vals[*off] + load.skip, load.width, ev.vals[*value]);
            if !out.contains(&cell) {
                out.push(cell);
            }
        }
        out
    }

    /// The slot of a root, to read it repeatedly without a lookup.
    pub fn slot_of(&self, e: ExprId) -> usize {
        self.slot[&e]
    }
}

/// One execution of an access: by which thread, in which iterations, at which offset.
#[derive(Clone, Debug)]
pub struct Point {
    pub ctaid: [u64; 3],
    pub tid: [u64; 3],
    /// Counter values, indexed by loop id (0 for loops that do not matter); inline for kernels
    /// of up to 8 loops (an enumeration makes hundreds of thousands of points).
    pub k: Counters,
    pub offset: u64,
}

pub type Counters = smallvec::SmallVec<[u64; 8]>;

/// The launch, when the interface fixes it completely.
pub struct Launch {
    pub ntid: [u64; 3],
    pub nctaid: [u64; 3],
}

impl Launch {
    pub fn of(ctx: &Ctx) -> Option<Launch> {
        let ntid = ctx.bind.concrete_block()?;
        let g = ctx.bind.grid;
        let nctaid = [g[0].value()?, g[1].value()?, g[2].value()?];
        Some(Launch { ntid, nctaid })
    }

    pub fn threads_per_block(&self) -> u64 {
        self.ntid.iter().product()
    }

    /// The blocks to enumerate: all of them, or block 0 alone (when nothing depends on the
    /// block index); `None` when that is more threads than enumeration handles (the count is
    /// checked before anything is allocated: a legal grid can have 2^31 blocks).
    fn blocks_to_enumerate(&self, all: bool) -> Option<Vec<[u64; 3]>> {
        if !all {
            return (self.threads_per_block() <= MAX_THREADS).then(|| vec![[0, 0, 0]]);
        }
        let blocks = self.nctaid.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n))?;
        if blocks.checked_mul(self.threads_per_block())? > MAX_THREADS {
            return None;
        }
        Some(self.blocks().collect())
    }

    fn blocks(&self) -> impl Iterator<Item = [u64; 3]> + '_ {
        let n = self.nctaid;
        (0..n[2]).flat_map(move |z| (0..n[1]).flat_map(move |y| (0..n[0]).map(move |x| [x, y, z])))
    }

    fn threads(&self) -> impl Iterator<Item = [u64; 3]> + '_ {
        let n = self.ntid;
        (0..n[2]).flat_map(move |z| (0..n[1]).flat_map(move |y| (0..n[0]).map(move |x| [x, y, z])))
    }
}

/// The loops whose counters matter for a site at `block` with expressions `exprs`: enclosing
/// loops (enumerated), and loops before it (their exit iteration, from the exit fact).
struct SiteLoops {
    /// (loop, how its counter is chosen), in loop-id order (outer and earlier loops first).
    loops: Vec<(LoopId, Choice)>,
}

#[derive(Clone, Copy)]
enum Choice {
    /// Every iteration for which the loop's guard holds.
    Range(ExprId),
    /// The first iteration for which the exit fact holds.
    Exit(ExprId),
}

fn site_loops(ctx: &Ctx, block: BlockId, enclosing: &[LoopId], exprs: &[ExprId]) -> Option<SiteLoops> {
    let mut roots: Vec<ExprId> = exprs.to_vec();
    // Enclosing loops' guards can mention other counters too.
    for &l in enclosing {
        roots.push(ctx.l.loops.get(l as usize)?.as_ref()?.guard);
    }
    let facts = ctx.relevant_facts(block, &roots);
    let mut mentioned: Vec<LoopId> =
        roots.iter().flat_map(|&e| ctx.l.exprs.symbols(e)).filter_map(|s| if let Sym::Counter(l) = s { Some(l) } else { None }).collect();
    mentioned.extend(enclosing);
    mentioned.extend(facts.iter().map(|(l, _)| *l));
    for (_, f) in &facts {
        mentioned.extend(ctx.l.exprs.symbols(*f).into_iter().filter_map(|s| if let Sym::Counter(l) = s { Some(l) } else { None }));
    }
    mentioned.sort();
    mentioned.dedup();
    let mut loops: Vec<(LoopId, Choice)> = Vec::new();
    for l in mentioned {
        let guard = ctx.l.loops.get(l as usize)?.as_ref()?.guard;
        if enclosing.contains(&l) {
            loops.push((l, Choice::Range(guard)));
        } else if let Some((_, f)) = facts.iter().find(|(fl, _)| *fl == l) {
            loops.push((l, Choice::Exit(*f)));
        } else {
            loops.push((l, Choice::Range(guard)));
        }
    }
    Some(SiteLoops { loops })
}

/// Enumerates the points of a site: every thread of `blocks` and iteration vector for which
/// `pc` holds, with the value of `value`. `None` if not enumerable.
fn enumerate_site(ctx: &Ctx, launch: &Launch, blocks: &[[u64; 3]], block: BlockId, enclosing: &[LoopId], pc: ExprId, value: ExprId) -> Option<Vec<Point>> {
    enumerate_site_with(ctx, launch, blocks, block, enclosing, pc, value, &[])
}

/// Like `enumerate_site`, also giving real values to the counters `extra` (expressions).
#[allow(clippy::too_many_arguments)]
fn enumerate_site_with(
    ctx: &Ctx,
    launch: &Launch,
    blocks: &[[u64; 3]],
    block: BlockId,
    enclosing: &[LoopId],
    pc: ExprId,
    value: ExprId,
    extra: &[ExprId],
) -> Option<Vec<Point>> {
    let started = std::time::Instant::now();
    let points = enumerate_points(ctx, launch, blocks, (block, enclosing), pc, value, extra, Keep::All);
    trace_enumerated(blocks.len(), started, || points.as_ref().map(|(p, _)| format!("{} points", p.len())));
    points.map(|(p, _)| p)
}

/// The trace line of an enumeration of `blocks` blocks started at `started`: what it found, or
/// `None` when the site is not enumerable (said only when tracing).
fn trace_enumerated(blocks: usize, started: std::time::Instant, found: impl FnOnce() -> Option<String>) {
    crate::trace::line(|| {
        let what = found().unwrap_or_else(|| "not enumerable".to_string());
        format!("enumerated {blocks} blocks: {what} ({:.0} ms)", started.elapsed().as_secs_f64() * 1e3)
    });
}

/// Which points an enumeration keeps.
#[derive(Clone, Copy)]
enum Keep {
    All,
    /// Only the first (in enumeration order) whose value is at least `limit`, or whose value
    /// plus `bytes` wraps around: an out-of-bounds instance. A bounds question needs no other,
    /// and keeping hundreds of thousands of points it does not need (128 bytes each) cost
    /// more than evaluating them (llm.c's tiled matmul: 0.4 M points per epilogue store).
    FirstOutside {
        limit: u64,
        bytes: u64,
    },
}

impl Keep {
    fn keeps(self, value: u64) -> bool {
        match self {
            Keep::All => true,
            Keep::FirstOutside { limit, bytes } => value.checked_add(bytes).is_none_or(|end| end > limit),
        }
    }

    fn done(self, kept: usize) -> bool {
        matches!(self, Keep::FirstOutside { .. }) && kept > 0
    }
}

/// [`enumerate_site_with`]'s work; `site` is the access's basic block and its enclosing loops.
/// The points `keep` keeps, and how many points there were.
#[allow(clippy::too_many_arguments)]
fn enumerate_points(
    ctx: &Ctx,
    launch: &Launch,
    blocks: &[[u64; 3]],
    (block, enclosing): (BlockId, &[LoopId]),
    pc: ExprId,
    value: ExprId,
    extra: &[ExprId],
    keep: Keep,
) -> Option<(Vec<Point>, usize)> {
    let mut roots = vec![pc, value];
    roots.extend(extra);
    // Counters the offsets of fixed loads mention matter too.
    let site = site_loops(ctx, block, enclosing, &with_load_offsets(ctx, &roots))?;
    // One small program per loop condition, so scanning iterations evaluates only what it needs.
    let mut levels = Vec::new();
    for &(l, c) in &site.loops {
        let (e, exit) = match c {
            Choice::Range(g) => (g, false),
            Choice::Exit(f) => (f, true),
        };
        levels.push(Level { lp: l, cond: e, exit, prog: program(ctx, &[e])? });
    }
    let main = program(ctx, &[pc, value])?;
    let filter = ThreadFilter::new(ctx, pc);
    let mut filter_vals = Eval::default();
    let nloops = ctx.k.cfg.loops.len();
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut vals = Eval::default();
    // The earliest stage of `main` whose symbols changed since it last ran: it runs only for
    // threads that reach an iteration, so a block's change is remembered until it does.
    let mut main_fresh = Stage::Launch;
    for (done, &b) in (1u128..).zip(blocks) {
        // A stopped budget makes the enumerator decline; the caller's next query reports why.
        if ctx.budget.check().is_err() {
            return None;
        }
        main_fresh = main_fresh.min(Stage::Block);
        let mut new_block = true;
        for t in launch.threads() {
            let mut env = Env { ntid: launch.ntid, nctaid: launch.nctaid, tid: t, ctaid: b, k: vec![0; nloops] };
            let excluded = filter.as_ref().is_some_and(|f| f.excludes(&env, &mut filter_vals, new_block));
            new_block = false;
            if excluded {
                continue;
            }
            let fresh = main_fresh.min(Stage::Thread);
            let mut walk = Walk { main: &main, pc: main.slot_of(pc), value: main.slot_of(value), vals: &mut vals, fresh, out: &mut out, keep, seen: &mut seen };
            let walked = walk.level(&levels, 0, &mut env);
            main_fresh = walk.fresh;
            if !walked {
                return None;
            }
            if keep.done(out.len()) {
                return Some((out, seen));
            }
            if seen > MAX_POINTS {
                return None;
            }
        }
        // Blocks of a grid mostly do the same work: once the blocks so far, four times over,
        // say the grid will pass the limit, the solver is asked now rather than after half of
        // the grid (llm.c's classifier: 256 blocks of 1024 threads, 0.2 s per access).
        if (seen as u128) * (blocks.len() as u128) > 4 * (MAX_POINTS as u128) * done {
            return None;
        }
    }
    Some((out, seen))
}

/// The conjuncts of a path condition that no loop counter reaches (through the offsets of
/// fixed loads too): a thread for which one of them is false never reaches the access, at
/// any iteration, so its loops need not be walked. (`if (threadIdx.x == 0)` around a store
/// inside a grid's loop: most threads of 256 blocks walked every iteration for nothing.)
struct ThreadFilter {
    prog: Program,
    conjuncts: Vec<usize>,
}

impl ThreadFilter {
    fn new(ctx: &Ctx, pc: ExprId) -> Option<ThreadFilter> {
        let x: &Exprs = &ctx.l.exprs;
        let mut conjuncts = Vec::new();
        let mut stack = vec![pc];
        while let Some(e) = stack.pop() {
            match *x.node(e) {
                Node::And(a, b) => stack.extend([a, b]),
                _ => {
                    let per_thread = with_load_offsets(ctx, &[e]).iter().all(|&r| x.symbols(r).iter().all(|s| !matches!(s, Sym::Counter(_))));
                    if per_thread {
                        conjuncts.push(e);
                    }
                }
            }
        }
        if conjuncts.is_empty() {
            return None;
        }
        let prog = program(ctx, &conjuncts)?;
        let conjuncts = conjuncts.iter().map(|&e| prog.slot_of(e)).collect();
        Some(ThreadFilter { prog, conjuncts })
    }

    /// Whether a conjunct is false for `env`'s thread (a conjunct that reads outside a fixed
    /// buffer's contents excludes nothing). `new_block`: the block changed since the last call.
    fn excludes(&self, env: &Env, ev: &mut Eval, new_block: bool) -> bool {
        self.prog.run_from(env, ev, if new_block { Stage::Block } else { Stage::Thread });
        self.conjuncts.iter().any(|&c| ev.vals[c] == 0 && !ev.poisoned(c))
    }
}

struct Level {
    lp: LoopId,
    cond: ExprId,
    /// `cond` is an exit fact (take its first true iteration) rather than a guard (take all).
    exit: bool,
    prog: Program,
}

struct Walk<'a> {
    main: &'a Program,
    /// Slots of the path condition and the value in `main`.
    pc: usize,
    value: usize,
    vals: &'a mut Eval,
    /// The earliest stage of `main` whose symbols changed since its last run (see
    /// [`Program::run_from`]).
    fresh: Stage,
    out: &'a mut Vec<Point>,
    keep: Keep,
    /// Points found, kept or not.
    seen: &'a mut usize,
}

impl Walk<'_> {
    /// Walks the iterations of `levels[i..]`; false when the enumeration must decline (too many
    /// iterations, or a point that depends on a read outside fixed contents).
    fn level(&mut self, levels: &[Level], i: usize, env: &mut Env) -> bool {
        let Some(lv) = levels.get(i) else {
            self.main.run_from(env, self.vals, self.fresh);
            self.fresh = Stage::Iteration;
            if self.vals.poisoned(self.pc) {
                return false;
            }
            if self.vals.vals[self.pc] == 1 {
                if self.vals.poisoned(self.value) {
                    return false;
                }
                let offset = self.vals.vals[self.value];
                *self.seen += 1;
                if self.keep.keeps(offset) {
                    self.out.push(Point { ctaid: env.ctaid, tid: env.tid, k: Counters::from_slice(&env.k), offset });
                }
            }
            return true;
        };
        let mut vals = Eval::default();
        let cond = lv.prog.slot_of(lv.cond);
        for k in 0..MAX_ITERATIONS {
            env.k[lv.lp as usize] = k;
            // This level's program is new to this thread at its first iteration.
            lv.prog.run_from(env, &mut vals, if k == 0 { Stage::Launch } else { Stage::Iteration });
            if vals.poisoned(cond) {
                return false;
            }
            let holds = vals.vals[cond] == 1;
            match (lv.exit, holds) {
                (true, true) => return self.level(levels, i + 1, env),
                (true, false) => {}
                (false, false) => {
                    env.k[lv.lp as usize] = 0;
                    return true;
                }
                (false, true) => {
                    if !self.level(levels, i + 1, env) {
                        return false;
                    }
                }
            }
        }
        false
    }
}

/// Whether the values of `exprs` (through the offsets of fixed loads too) depend on the block.
fn mentions_ctaid(ctx: &Ctx, exprs: &[ExprId]) -> bool {
    let x: &Exprs = &ctx.l.exprs;
    with_load_offsets(ctx, exprs).iter().any(|&e| x.symbols(e).iter().any(|s| matches!(s, Sym::Special(Special::Ctaid(_)))))
}

fn with_load_offsets(ctx: &Ctx, roots: &[ExprId]) -> Vec<ExprId> {
    crate::fixed::with_load_offsets(ctx.k, ctx.l, ctx.bind, roots)
}

/// The cells of fixed buffers a point reads to compute `roots` (its path condition and offset):
/// the index values a witness relies on.
fn cells_read(ctx: &Ctx, launch: &Launch, p: &Point, roots: &[ExprId]) -> Vec<MemoryCell> {
    let Some(prog) = program(ctx, roots) else { return Vec::new() };
    let env = Env { ntid: launch.ntid, nctaid: launch.nctaid, tid: p.tid, ctaid: p.ctaid, k: p.k.to_vec() };
    let mut ev = Eval::default();
    prog.run(&env, &mut ev);
    prog.cells_read(&ev)
}

/// The witness of one or two points.
fn witness_of(launch: &Launch, points: &[&Point]) -> Witness {
    let threads = points
        .iter()
        .map(|p| WitnessThread {
            id: ThreadId { block: p.ctaid.map(|v| v as u32), thread: p.tid.map(|v| v as u32) },
            iterations: p.k.iter().enumerate().map(|(l, k)| (l as LoopId, *k)).collect(),
            offset: Some(p.offset),
        })
        .collect();
    Witness {
        grid: launch.nctaid.map(|v| v as u32),
        block: launch.ntid.map(|v| v as u32),
        params: Default::default(),
        threads,
        memory: vec![],
        missing_lane: None,
        fill: None,
        fields: Vec::new(),
    }
}

pub enum Decided {
    /// No instance: the property holds (for this pair / site).
    Holds,
    Witness(Witness),
}

/// Races between accesses `i` and `j`, by enumeration. `None`: not enumerable.
pub fn race(ctx: &Ctx, launch: &Launch, i: usize, j: usize) -> Option<Decided> {
    let (a, b) = (&ctx.l.accesses[i], &ctx.l.accesses[j]);
    let (o1, o2) = (a.offset?, b.offset?);
    let shared = a.space == Space::Shared;
    let per_block = shared && !mentions_ctaid(ctx, &[a.pc, b.pc, o1, o2]);
    let blocks = launch.blocks_to_enumerate(!per_block)?;
    // Counters the phase relation compares must have their real values in the points, also
    // for loops an access comes after (their exit iteration).
    let counters: Vec<ExprId> = crate::races::phase_counters(ctx, &ctx.phases.same_phase(i, j))
        .into_iter()
        .chain(ctx.phases.same_warp_phase(i, j).map(|w| crate::races::phase_counters(ctx, &w)).unwrap_or_default())
        .chain(ctx.phases.same_masked_warp_phase(i, j).map(|w| crate::races::phase_counters(ctx, &w)).unwrap_or_default())
        .collect();
    let points_of = |n: usize, acc: &Access, off: ExprId| -> Option<std::sync::Arc<Vec<Point>>> {
        ctx.points
            .get_or_compute((n, !per_block, counters.clone()), || enumerate_site_with(ctx, launch, &blocks, acc.block, &acc.loops, acc.pc, off, &counters))
    };
    let p1 = points_of(i, a, o1)?;
    let p2 = points_of(j, b, o2)?;
    let phase = ctx.phases.same_phase(i, j);
    let warp_phase = ctx.phases.same_warp_phase(i, j);
    // Lanes that every masked warp sync's mask names are ordered by those syncs too: the masks
    // are evaluated for both threads (a mask this cannot evaluate leaves the pair to the solver).
    let masked = match ctx.phases.same_masked_warp_phase(i, j) {
        Some(m) if crate::races::masks_are_thread_functions(ctx) => Some((m, program(ctx, &ctx.phases.sync_masks)?)),
        _ => None,
    };
    let entry_progs: HashMap<LoopId, Program> = phase
        .iter()
        .chain(warp_phase.iter().flatten())
        .chain(masked.iter().flat_map(|(m, _)| m.iter()))
        .flatten()
        .filter_map(|r| match r {
            IterRel::NotEntered { lp, .. } => Some(*lp),
            _ => None,
        })
        .filter_map(|lp| Some((lp, program(ctx, &[ctx.l.loop_entry_pc.get(lp as usize)?.as_ref().copied()?])?)))
        .collect();
    // Points of the first access sorted by (block, offset) for shared memory (only threads of
    // one block share it) and by offset for global memory; each point of the second access
    // looks up the offsets whose byte range can overlap its own.
    let block_key = |c: [u64; 3]| if shared { c[0] + launch.nctaid[0] * (c[1] + launch.nctaid[1] * c[2]) } else { 0 };
    let mut sorted: Vec<(u64, u64, u32)> = p1.iter().enumerate().map(|(n, p)| (block_key(p.ctaid), p.offset, n as u32)).collect();
    sorted.sort_unstable();
    for (n, q) in p2.iter().enumerate() {
        if n % 4096 == 4095 && ctx.budget.check().is_err() {
            return None;
        }
        let bk = block_key(q.ctaid);
        let lo = q.offset.saturating_sub(a.bytes as u64 - 1);
        let hi = q.offset.saturating_add(b.bytes as u64 - 1);
        let start = sorted.partition_point(|&(k, o, _)| (k, o) < (bk, lo));
        for &(_, off, n) in sorted[start..].iter().take_while(|&&(k, o, _)| k == bk && o <= hi) {
            let p = &p1[n as usize];
            if off + (a.bytes as u64) <= q.offset || q.offset + (b.bytes as u64) <= off {
                continue;
            }
            if p.tid == q.tid && p.ctaid == q.ctaid {
                continue;
            }
            let same_block = p.ctaid == q.ctaid;
            if shared && !same_block {
                continue;
            }
            let linear = |t: [u64; 3]| t[0] + launch.ntid[0] * (t[1] + launch.ntid[1] * t[2]);
            let same_warp = linear(p.tid) >> 5 == linear(q.tid) >> 5;
            let rels = match (&masked, &warp_phase) {
                (Some((m, masks)), _) if same_warp && both_lanes_in_every_mask(ctx, launch, masks, p, q, linear(p.tid) & 31, linear(q.tid) & 31)? => m,
                (_, Some(w)) if same_warp => w,
                _ => &phase,
            };
            if !same_block || same_phase(ctx, launch, rels, &entry_progs, p, q)? {
                let mut w = witness_of(launch, &[p, q]);
                for cell in cells_read(ctx, launch, p, &[a.pc, o1]).into_iter().chain(cells_read(ctx, launch, q, &[b.pc, o2])) {
                    if !w.memory.contains(&cell) {
                        w.memory.push(cell);
                    }
                }
                return Some(Decided::Witness(w));
            }
        }
    }
    Some(Decided::Holds)
}

/// Whether lanes `lane_p` and `lane_q` are in every masked warp sync's mask as both `p` and
/// `q` compute it; `None` when a mask cannot be evaluated.
fn both_lanes_in_every_mask(ctx: &Ctx, launch: &Launch, masks: &Program, p: &Point, q: &Point, lane_p: u64, lane_q: u64) -> Option<bool> {
    for pt in [p, q] {
        let env = Env { ntid: launch.ntid, nctaid: launch.nctaid, tid: pt.tid, ctaid: pt.ctaid, k: pt.k.to_vec() };
        let mut ev = Eval::default();
        masks.run(&env, &mut ev);
        for &m in &ctx.phases.sync_masks {
            if ev.poisoned(masks.slot_of(m)) {
                return None;
            }
            let mask = masks.get(&ev.vals, m);
            if mask >> lane_p & 1 == 0 || mask >> lane_q & 1 == 0 {
                return Some(false);
            }
        }
    }
    Some(true)
}

fn same_phase(ctx: &Ctx, launch: &Launch, phase: &[Vec<IterRel>], entry: &HashMap<LoopId, Program>, p: &Point, q: &Point) -> Option<bool> {
    let _ = ctx;
    let k = |pt: &Point, l: LoopId| pt.k.get(l as usize).copied().unwrap_or(0);
    'conj: for conj in phase {
        for r in conj {
            let ok = match *r {
                IterRel::Eq(l) => k(p, l) == k(q, l),
                IterRel::Succ { lp, second: true } => k(q, lp) == k(p, lp) + 1,
                IterRel::Succ { lp, second: false } => k(p, lp) == k(q, lp) + 1,
                IterRel::Gt { lp, second: true } => k(q, lp) > k(p, lp),
                IterRel::Gt { lp, second: false } => k(p, lp) > k(q, lp),
                IterRel::Ge { lp, second: true } => k(q, lp) >= k(p, lp),
                IterRel::Ge { lp, second: false } => k(p, lp) >= k(q, lp),
                IterRel::Zero { lp, second } => k(if second { q } else { p }, lp) == 0,
                IterRel::Pos { lp, second } => k(if second { q } else { p }, lp) > 0,
                IterRel::NotEntered { lp, second } => {
                    let prog = entry.get(&lp)?;
                    let pt = if second { q } else { p };
                    let env = Env { ntid: launch.ntid, nctaid: launch.nctaid, tid: pt.tid, ctaid: pt.ctaid, k: pt.k.to_vec() };
                    let mut ev = Eval::default();
                    prog.run(&env, &mut ev);
                    let e = ctx.l.loop_entry_pc[lp as usize]?;
                    if ev.poisoned(prog.slot_of(e)) {
                        return None;
                    }
                    prog.get(&ev.vals, e) == 0
                }
            };
            if !ok {
                continue 'conj;
            }
        }
        return Some(true);
    }
    Some(false)
}

/// Out-of-bounds instances of access `i` against `size` bytes.
pub fn bounds(ctx: &Ctx, launch: &Launch, i: usize, size: u64) -> Option<Decided> {
    let a: &Access = &ctx.l.accesses[i];
    let off = a.offset?;
    let whole_grid = mentions_ctaid(ctx, &[a.pc, off]);
    let blocks = launch.blocks_to_enumerate(whole_grid)?;
    let keep = Keep::FirstOutside { limit: size, bytes: a.bytes as u64 };
    // The access's points, where a race question enumerated them already: apex's layer norm
    // enumerated each of its stores over 4096 blocks twice, 0.15-0.3 s each time.
    if let Some(points) = ctx.points.ready(i, whole_grid) {
        return Some(match points.iter().find(|p| keep.keeps(p.offset)) {
            Some(p) => Decided::Witness(witness_of(launch, &[p])),
            None => Decided::Holds,
        });
    }
    let started = std::time::Instant::now();
    let found = enumerate_points(ctx, launch, &blocks, (a.block, &a.loops), a.pc, off, &[], keep);
    trace_enumerated(blocks.len(), started, || found.as_ref().map(|(out, seen)| format!("{seen} points, {} out of bounds", out.len())));
    match found?.0.first() {
        Some(p) => Some(Decided::Witness(witness_of(launch, &[p]))),
        None => Some(Decided::Holds),
    }
}

/// Barrier divergence at a barrier with path condition `pc` inside `loops`.
/// One block of each class of `blocks` whose threads see the same values: blocks that agree on
/// every launch- and block-stage value the per-thread evaluation of `pc`, `value` and the
/// conditions of the loops around the site reads enumerate to the same points but for their
/// block index. A question about each block's own threads (does every thread reach this
/// barrier? every lane of the mask?) is answered for a class by any of its blocks: a row kernel
/// on 8192 rows asked it 8192 times (a thread's `row < rows` is all a block changes).
fn block_representatives(ctx: &Ctx, launch: &Launch, blocks: Vec<[u64; 3]>, site: (BlockId, &[LoopId]), pc: ExprId, value: ExprId) -> Vec<[u64; 3]> {
    if blocks.len() < 2 {
        return blocks;
    }
    let conditions: Option<Vec<ExprId>> = site_loops(ctx, site.0, site.1, &with_load_offsets(ctx, &[pc, value])).map(|s| {
        s.loops
            .iter()
            .map(|&(_, c)| match c {
                Choice::Range(g) => g,
                Choice::Exit(f) => f,
            })
            .collect()
    });
    let Some(mut roots) = conditions else { return blocks };
    roots.extend([pc, value]);
    let Some(prog) = program(ctx, &roots) else { return blocks };
    let Some(frontier) = prog.block_frontier(&roots) else { return blocks };
    let mut seen: HashSet<Vec<u64>> = HashSet::new();
    let mut ev = Eval::default();
    let nloops = ctx.k.cfg.loops.len();
    blocks
        .into_iter()
        .filter(|&b| {
            let env = Env { ntid: launch.ntid, nctaid: launch.nctaid, tid: [0; 3], ctaid: b, k: vec![0; nloops] };
            prog.run_through_block(&env, &mut ev);
            seen.insert(frontier.iter().map(|&i| ev.vals[i]).collect())
        })
        .collect()
}

pub fn barrier(ctx: &Ctx, launch: &Launch, block: BlockId, loops: &[LoopId], pc: ExprId) -> Option<Decided> {
    let blocks = launch.blocks_to_enumerate(mentions_ctaid(ctx, &[pc]))?;
    let zero = pc; // any expression works as the value; we only need the points
    for &b in &block_representatives(ctx, launch, blocks, (block, loops), pc, zero) {
        let points = enumerate_site(ctx, launch, &[b], block, loops, pc, zero)?;
        // Iteration vector (of the enclosing loops) → threads that reach the barrier there.
        let mut by_iter: HashMap<Vec<u64>, Vec<&Point>> = HashMap::new();
        for p in &points {
            by_iter.entry(loops.iter().map(|&l| p.k[l as usize]).collect()).or_default().push(p);
        }
        let n = launch.threads_per_block() as usize;
        for arrived in by_iter.values() {
            if arrived.len() < n {
                let p = arrived[0];
                let missing = launch.threads().find(|t| !arrived.iter().any(|q| q.tid == *t))?;
                let q = Point { ctaid: b, tid: missing, k: p.k.clone(), offset: 0 };
                return Some(Decided::Witness(witness_of(launch, &[p, &q])));
            }
        }
    }
    Some(Decided::Holds)
}

/// What the enumeration of a warp collective found.
pub enum WarpDecided {
    Holds,
    /// A lane its mask names does not arrive (`missing_lane` says which).
    Missing(Witness),
    /// The witness's thread runs the collective outside its own member mask.
    OutsideMask(Witness),
}

/// Warp collective `pc` by enumeration: every lane its mask names arrives, and every lane that
/// runs it is in its mask. `None`: not enumerable.
pub fn warp(ctx: &Ctx, launch: &Launch, block: BlockId, loops: &[LoopId], pc: ExprId, mask_e: ExprId) -> Option<WarpDecided> {
    let blocks = launch.blocks_to_enumerate(mentions_ctaid(ctx, &[pc, mask_e]))?;
    let nthreads = launch.threads_per_block();
    for &b in &block_representatives(ctx, launch, blocks, (block, loops), pc, mask_e) {
        let points = enumerate_site(ctx, launch, &[b], block, loops, pc, mask_e)?;
        let mut live_threads: Option<Option<HashSet<u64>>> = None;
        let linear = |t: [u64; 3]| t[0] + launch.ntid[0] * (t[1] + launch.ntid[1] * t[2]);
        let iters = |p: &Point| -> Vec<u64> { loops.iter().map(|&l| p.k[l as usize]).collect() };
        // Per iteration vector, which threads of the block arrive (a bit per thread): a warp's
        // 32 arrivals are then one word, and each point is one lookup, not 32 (a quarter of a
        // million threads took seconds the other way).
        let words = (nthreads as usize).div_ceil(64);
        let mut arrived: HashMap<Vec<u64>, Vec<u64>> = HashMap::new();
        for p in &points {
            let t = linear(p.tid);
            arrived.entry(iters(p)).or_insert_with(|| vec![0; words])[(t / 64) as usize] |= 1 << (t % 64);
        }
        for p in &points {
            let base = linear(p.tid) & !31;
            let warp_bits = arrived.get(&iters(p)).map_or(0, |bits| bits[(base / 64) as usize] >> (base % 64) & 0xffff_ffff);
            // Lanes past the block's last thread never arrive: their bits stay 0.
            let mut missing = p.offset & 0xffff_ffff & !warp_bits;
            if missing != 0 {
                // PTX (sm_70+) waits only for the mask's non-exited lanes. A lane that reaches
                // no barrier and no collective anywhere leaves the kernel without waiting on
                // anything, so it is not a lane this collective can wait for.
                let live = match live_threads.get_or_insert_with(|| synchronising_threads(ctx, launch, b)) {
                    Some(live) => (0..32u64).filter(|j| base + j < nthreads && live.contains(&(base + j))).fold(0u64, |m, j| m | 1 << j),
                    None => 0xffff_ffff,
                };
                let past_end = (0..32u64).filter(|j| base + j >= nthreads).fold(0u64, |m, j| m | 1 << j);
                missing &= live | past_end;
            }
            if missing != 0 {
                let lane = missing.trailing_zeros() as u64;
                let other = base + lane;
                let t2 = [other % launch.ntid[0], (other / launch.ntid[0]) % launch.ntid[1], other / (launch.ntid[0] * launch.ntid[1])];
                let q = Point { ctaid: b, tid: t2, k: p.k.clone(), offset: 0 };
                let mut w = witness_of(launch, &[p, &q]);
                w.missing_lane = Some(lane as u32);
                return Some(WarpDecided::Missing(w));
            }
        }
        if let Some(p) = points.iter().find(|p| p.offset >> (linear(p.tid) & 31) & 1 == 0) {
            return Some(WarpDecided::OutsideMask(witness_of(launch, &[p])));
        }
    }
    Some(WarpDecided::Holds)
}

/// The threads of block `b` (linear ids) that reach at least one barrier or warp collective of
/// the kernel, in any iteration; `None` if a site is not enumerable (then every thread counts).
fn synchronising_threads(ctx: &Ctx, launch: &Launch, b: [u64; 3]) -> Option<HashSet<u64>> {
    let linear = |t: [u64; 3]| t[0] + launch.ntid[0] * (t[1] + launch.ntid[1] * t[2]);
    let barriers = ctx.l.barriers.iter().map(|s| (s.block, s.pc, &s.loops));
    let warp_ops = ctx.l.warp_ops.iter().map(|s| (s.block, s.pc, &s.loops));
    let mut live = HashSet::new();
    for (block, pc, loops) in barriers.chain(warp_ops) {
        for p in enumerate_site(ctx, launch, &[b], block, loops, pc, pc)? {
            live.insert(linear(p.tid));
        }
    }
    Some(live)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bounds enumeration keeps an instance whose end passes the size, or whose end wraps
    /// around, and stops at the first one; a plain enumeration keeps every point.
    #[test]
    fn a_bounds_enumeration_keeps_only_instances_out_of_bounds() {
        let keep = Keep::FirstOutside { limit: 16, bytes: 4 };
        assert!(!keep.keeps(12), "bytes 12..16 are in bounds");
        assert!(keep.keeps(13));
        assert!(keep.keeps(u64::MAX - 1), "an end that wraps around is out of bounds");
        assert!(!keep.done(0) && keep.done(1));
        assert!(Keep::All.keeps(u64::MAX) && !Keep::All.done(5));
    }

    /// A program run from a later stage, after only that stage's symbols changed, computes
    /// what a full run computes, in the order an enumeration walks (blocks, threads, iterations,
    /// with threads that skip their loops in between).
    #[test]
    fn a_run_from_a_stage_equals_a_full_run() {
        let mut x = Exprs::new();
        let ctaid = x.var(Sym::Special(Special::Ctaid(0)), 32);
        let ntid = x.var(Sym::Special(Special::Ntid(0)), 32);
        let tid = x.var(Sym::Special(Special::Tid(0)), 32);
        let k = x.var(Sym::Counter(0), 32);
        let row = x.bin(BinOp::Mul, ctaid, ntid);
        let global = x.bin(BinOp::Add, row, tid);
        let stride = x.konst(1024, 32);
        let step = x.bin(BinOp::Mul, k, stride);
        let offset = x.bin(BinOp::Add, global, step);
        let three = x.konst(3, 32);
        let one = x.konst(1, 32);
        let odd = x.bin(BinOp::And, tid, one);
        let zero = x.konst(0, 32);
        let even = x.cmp(CmpOp::Eq, odd, zero);
        let early = x.cmp(CmpOp::LtU, k, three);
        let pc = x.and(even, early);
        let prog = Program::new(&x, &[pc, offset], &|_| None).expect("no loads");
        let reference = |env: &Env, e: ExprId| {
            let sym = |s: Sym| Some(env.sym(s));
            x.eval(e, &sym, &mut HashMap::new()).unwrap()
        };
        // An evaluation that holds no values of this program (none yet, or another program's
        // of the same length) is run in full whatever stage it is asked from.
        let env = Env { ntid: [4, 1, 1], nctaid: [3, 1, 1], tid: [2, 0, 0], ctaid: [1, 0, 0], k: vec![1] };
        let twin = Program::new(&x, &[pc, offset], &|_| None).expect("no loads");
        let mut ev = Eval::default();
        twin.run(&Env { tid: [0, 0, 0], ctaid: [0, 0, 0], ..env.clone() }, &mut ev);
        prog.run_from(&env, &mut ev, Stage::Iteration);
        assert_eq!(prog.get(&ev.vals, offset), reference(&env, offset));
        let mut ev = Eval::default();
        let mut fresh = Stage::Launch;
        for block in 0..3 {
            fresh = fresh.min(Stage::Block);
            for thread in 0..4 {
                fresh = fresh.min(Stage::Thread);
                // Odd threads skip their loop: the program does not run for them.
                let iterations = if thread % 2 == 1 { 0 } else { 3 };
                for iteration in 0..iterations {
                    let env = Env { ntid: [4, 1, 1], nctaid: [3, 1, 1], tid: [thread, 0, 0], ctaid: [block, 0, 0], k: vec![iteration] };
                    prog.run_from(&env, &mut ev, fresh);
                    fresh = Stage::Iteration;
                    for e in [pc, offset] {
                        assert_eq!(prog.get(&ev.vals, e), reference(&env, e), "block {block} thread {thread} iteration {iteration}");
                    }
                }
            }
        }
    }
}
