//! Phases: which accesses can run between the same pair of barriers, and in which iterations.
//!
//! A phase starts at the kernel entry or at a `bar.sync` and extends over every path that does
//! not cross another barrier. Walking those paths, we track for each loop how the iteration of
//! the reached access relates to the iteration of the starting barrier: the same iteration, the
//! next one (the path took the loop's back edge once), a later one, or — for loops entered after
//! the start — the first iteration or a later one. Two accesses of threads in one block can be in
//! the same phase exactly when they are reachable from the same barrier instance; the relations
//! turn that into constraints between the two threads' loop counters (`k2 == k1 + 1` for a read
//! at the end of iteration `k` racing with a write at the start of iteration `k + 1`).

use crate::cfg::{BlockId, LoopId};
use crate::ops::{BarrierKind, Op};
use crate::symbolic::Lifted;
use crate::Kernel;
use std::collections::{BTreeSet, HashMap, HashSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rel {
    /// Same iteration as the starting barrier.
    Same,
    /// One iteration after the starting barrier.
    Next,
    /// Two or more iterations after.
    Later,
    /// First iteration of a loop entered after the start.
    Zero,
    /// A later iteration of a loop entered after the start.
    Pos,
    /// Not constrained.
    Any,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Start {
    Entry,
    /// A barrier at (block, instruction index).
    Barrier(BlockId, usize),
}

/// One way an access is reached within a phase.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reach {
    pub start: Start,
    /// Relation per loop, for the loops that enclose the start or the access.
    pub rels: Vec<(LoopId, Rel)>,
    /// Top-level loops between the start and the access that this path went around, so a
    /// thread taking it never entered them.
    pub bypassed: Vec<LoopId>,
}

/// A constraint between the loop counters of thread 1 (`k1`) and thread 2 (`k2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IterRel {
    /// `k1 == k2`
    Eq(LoopId),
    /// `k2 == k1 + 1`, or with `second = false`, `k1 == k2 + 1`.
    Succ { lp: LoopId, second: bool },
    /// `k2 > k1` (or `k1 > k2`).
    Gt { lp: LoopId, second: bool },
    /// `k2 >= k1` (or `k1 >= k2`).
    Ge { lp: LoopId, second: bool },
    /// The named thread's counter is 0.
    Zero { lp: LoopId, second: bool },
    /// The named thread's counter is at least 1.
    Pos { lp: LoopId, second: bool },
    /// The named thread never entered this (top-level) loop: its path went around it.
    NotEntered { lp: LoopId, second: bool },
}

/// Phase reachability of every access (indexed like `Lifted::accesses`).
#[derive(Clone, Debug, Default)]
pub struct Phases {
    /// Phases between block barriers (`bar.sync`): what threads of one block share.
    pub reaches: Vec<Vec<Reach>>,
    /// Phases between block barriers or full-warp syncs (`__syncwarp()`): what threads of one
    /// warp share. `None` when the kernel has no warp syncs (then it equals `reaches`).
    pub warp_reaches: Option<Vec<Vec<Reach>>>,
    /// Phases between block barriers or warp syncs of any mask (`__syncwarp(mask)`), for two
    /// lanes of one warp that every such sync's mask names, as each lane computes it: a
    /// `bar.warp.sync` orders the lanes of its mask, and a lane that runs it outside its mask
    /// is undefined behaviour. `None` when every warp sync has the full mask.
    pub masked_warp_reaches: Option<Vec<Vec<Reach>>>,
    /// The member masks of the warp syncs whose mask is not the full immediate (those
    /// `masked_warp_reaches` relies on), as the lifter computed them.
    pub sync_masks: Vec<crate::expr::ExprId>,
}

/// `reach[a][b]`: block `b` can be reached from block `a` (including `a` itself).
fn reachability(k: &Kernel) -> Vec<Vec<bool>> {
    let n = k.cfg.blocks.len();
    (0..n)
        .map(|a| {
            let mut seen = vec![false; n];
            let mut stack = vec![a as BlockId];
            while let Some(b) = stack.pop() {
                if !std::mem::replace(&mut seen[b as usize], true) {
                    stack.extend(k.cfg.blocks[b as usize].successors());
                }
            }
            seen
        })
        .collect()
}

fn is_sync_barrier(op: &Op) -> bool {
    matches!(op, Op::Bar { kind: BarrierKind::Sync, .. } | Op::BarRed { .. })
}

/// A `bar.warp.sync` with the full mask orders the accesses of all lanes of a warp.
fn is_warp_barrier(op: &Op) -> bool {
    is_sync_barrier(op) || matches!(op, Op::WarpSync { mask: crate::ops::Operand::Imm(0xffff_ffff) })
}

/// Any `bar.warp.sync`, whatever its mask (see [`Phases::masked_warp_reaches`]).
fn is_any_warp_sync(op: &Op) -> bool {
    is_sync_barrier(op) || matches!(op, Op::WarpSync { .. })
}

impl Phases {
    pub fn compute(k: &Kernel, lifted: &Lifted) -> Phases {
        let reaches = Self::reaches_with(k, lifted, is_sync_barrier);
        let has_warp_syncs = k.insts().any(|(_, _, i)| is_warp_barrier(&i.op) && !is_sync_barrier(&i.op));
        let warp_reaches = has_warp_syncs.then(|| Self::reaches_with(k, lifted, is_warp_barrier));
        let masked: HashSet<(BlockId, usize)> = k
            .cfg
            .blocks
            .iter()
            .enumerate()
            .flat_map(|(b, blk)| blk.insts.iter().enumerate().map(move |(i, inst)| ((b as BlockId, i), inst)))
            .filter(|(_, inst)| matches!(inst.op, Op::WarpSync { .. }) && !is_warp_barrier(&inst.op))
            .map(|(at, _)| at)
            .collect();
        let mut recorded = HashSet::new();
        let mut sync_masks: Vec<crate::expr::ExprId> = Vec::new();
        for w in lifted.warp_ops.iter().filter(|w| matches!(w.kind, crate::symbolic::WarpOpKind::WarpSync)) {
            if masked.contains(&(w.block, w.inst)) && !sync_masks.contains(&w.mask) {
                sync_masks.push(w.mask);
            }
            recorded.insert((w.block, w.inst));
        }
        // Every masked sync needs its mask: one the lifter did not record orders nothing.
        let masked_warp_reaches = (!masked.is_empty() && masked.is_subset(&recorded)).then(|| Self::reaches_with(k, lifted, is_any_warp_sync));
        Phases { reaches, warp_reaches, masked_warp_reaches, sync_masks }
    }

    /// Phase reachability where `boundary` instructions separate phases.
    fn reaches_with(k: &Kernel, lifted: &Lifted, boundary: fn(&Op) -> bool) -> Vec<Vec<Reach>> {
        let is_sync_barrier = boundary;
        let cfg = &k.cfg;
        let nloops = cfg.loops.len();
        let mut at: HashMap<(BlockId, usize), Vec<usize>> = HashMap::new();
        for (i, a) in lifted.accesses.iter().enumerate() {
            at.entry((a.block, a.inst)).or_default().push(i);
        }
        let mut reaches: Vec<BTreeSet<Reach>> = vec![BTreeSet::new(); lifted.accesses.len()];
        let reach = reachability(k);
        let mut starts = vec![(Start::Entry, cfg.entry, 0usize)];
        for (b, blk) in cfg.blocks.iter().enumerate() {
            for (i, inst) in blk.insts.iter().enumerate() {
                if is_sync_barrier(&inst.op) {
                    starts.push((Start::Barrier(b as BlockId, i), b as BlockId, i + 1));
                }
            }
        }
        for (start, b0, i0) in starts {
            let start_loops: Vec<LoopId> = match start {
                Start::Entry => vec![],
                Start::Barrier(b, _) => cfg.loop_nest(b),
            };
            let mut init = vec![Rel::Any; nloops];
            for &l in &start_loops {
                init[l as usize] = Rel::Same;
            }
            let mut seen: HashSet<(BlockId, usize, Vec<Rel>)> = HashSet::new();
            let mut work = vec![(b0, i0, init)];
            while let Some((b, i, rels)) = work.pop() {
                if !seen.insert((b, i, rels.clone())) {
                    continue;
                }
                let blk = &cfg.blocks[b as usize];
                let mut stopped = false;
                for (idx, inst) in blk.insts.iter().enumerate().skip(i) {
                    if let Some(ids) = at.get(&(b, idx)) {
                        let nest = cfg.loop_nest(b);
                        let mut relevant: Vec<LoopId> = start_loops.iter().chain(nest.iter()).copied().collect();
                        relevant.sort();
                        relevant.dedup();
                        let start_block = match start {
                            Start::Entry => cfg.entry,
                            Start::Barrier(sb, _) => sb,
                        };
                        let bypassed = (0..nloops as LoopId)
                            .filter(|&l| {
                                let lp = &cfg.loops[l as usize];
                                rels[l as usize] == Rel::Any
                                    && lp.parent.is_none()
                                    && !lp.contains(start_block)
                                    && reach[start_block as usize][lp.header as usize]
                                    && lp.exits.iter().any(|e| reach[e.1 as usize][b as usize])
                                    && !reach[b as usize][lp.header as usize]
                            })
                            .collect();
                        let r = Reach { start, rels: relevant.iter().map(|&l| (l, rels[l as usize])).collect(), bypassed };
                        for &id in ids {
                            reaches[id].insert(r.clone());
                        }
                    }
                    // A guarded barrier may be skipped, so only an unguarded one ends the phase.
                    if is_sync_barrier(&inst.op) && inst.guard.is_none() {
                        stopped = true;
                        break;
                    }
                }
                if stopped {
                    continue;
                }
                for s in blk.successors() {
                    let mut next = rels.clone();
                    for (l, lp) in cfg.loops.iter().enumerate() {
                        if lp.header != s {
                            continue;
                        }
                        next[l] = if lp.contains(b) {
                            match rels[l] {
                                Rel::Same => Rel::Next,
                                Rel::Next | Rel::Later => Rel::Later,
                                Rel::Zero | Rel::Pos => Rel::Pos,
                                Rel::Any => Rel::Any,
                            }
                        } else {
                            Rel::Zero
                        };
                    }
                    work.push((s, 0, next));
                }
            }
        }
        reaches.into_iter().map(|s| s.into_iter().collect()).collect()
    }

    /// When can access `a1` of thread 1 and access `a2` of thread 2 (same block) fall in the same
    /// phase? A disjunction of conjunctions of counter constraints; empty means never.
    pub fn same_phase(&self, a1: usize, a2: usize) -> Vec<Vec<IterRel>> {
        Self::same_phase_in(&self.reaches, a1, a2)
    }

    /// Like `same_phase`, for two threads of the same warp (warp syncs also separate phases).
    pub fn same_warp_phase(&self, a1: usize, a2: usize) -> Option<Vec<Vec<IterRel>>> {
        self.warp_reaches.as_ref().map(|w| Self::same_phase_in(w, a1, a2))
    }

    /// Like `same_warp_phase`, for two lanes that every masked warp sync's mask names (see
    /// [`Phases::masked_warp_reaches`]).
    pub fn same_masked_warp_phase(&self, a1: usize, a2: usize) -> Option<Vec<Vec<IterRel>>> {
        self.masked_warp_reaches.as_ref().map(|w| Self::same_phase_in(w, a1, a2))
    }

    fn same_phase_in(reaches: &[Vec<Reach>], a1: usize, a2: usize) -> Vec<Vec<IterRel>> {
        let mut out: BTreeSet<Vec<IterRel>> = BTreeSet::new();
        for r1 in &reaches[a1] {
            for r2 in reaches[a2].iter().filter(|r| r.start == r1.start) {
                let mut conj = BTreeSet::new();
                let mut loops: Vec<LoopId> = r1.rels.iter().chain(r2.rels.iter()).map(|(l, _)| *l).collect();
                loops.sort();
                loops.dedup();
                let rel = |r: &Reach, l: LoopId| r.rels.iter().find(|(x, _)| *x == l).map_or(Rel::Any, |(_, v)| *v);
                for l in loops {
                    let (x, y) = (rel(r1, l), rel(r2, l));
                    use Rel::*;
                    let pair = match (x, y) {
                        (Same, Same) | (Next, Next) => Some(IterRel::Eq(l)),
                        (Same, Next) => Some(IterRel::Succ { lp: l, second: true }),
                        (Next, Same) => Some(IterRel::Succ { lp: l, second: false }),
                        (Same, Later) => Some(IterRel::Gt { lp: l, second: true }),
                        (Later, Same) => Some(IterRel::Gt { lp: l, second: false }),
                        (Next, Later) => Some(IterRel::Ge { lp: l, second: true }),
                        (Later, Next) => Some(IterRel::Ge { lp: l, second: false }),
                        _ => None,
                    };
                    if let Some(p) = pair {
                        conj.insert(p);
                        continue;
                    }
                    for (v, second) in [(x, false), (y, true)] {
                        match v {
                            Zero => {
                                conj.insert(IterRel::Zero { lp: l, second });
                            }
                            Pos => {
                                conj.insert(IterRel::Pos { lp: l, second });
                            }
                            _ => {}
                        }
                    }
                }
                for &l in &r1.bypassed {
                    conj.insert(IterRel::NotEntered { lp: l, second: false });
                }
                for &l in &r2.bypassed {
                    conj.insert(IterRel::NotEntered { lp: l, second: true });
                }
                out.insert(conj.into_iter().collect());
            }
        }
        out.into_iter().collect()
    }
}

/// The phase starts (the kernel entry and block-wide barriers) from which any of `positions`
/// (block, instruction index) is reached without crossing another unguarded barrier: the
/// phases those instructions belong to. The same walk as [`Phases::compute`], for any
/// instruction rather than only memory accesses.
pub fn starts_reaching(k: &Kernel, positions: &HashSet<(BlockId, usize)>) -> BTreeSet<Start> {
    let mut starts = vec![(Start::Entry, k.cfg.entry, 0usize)];
    for (b, blk) in k.cfg.blocks.iter().enumerate() {
        for (i, inst) in blk.insts.iter().enumerate() {
            if is_sync_barrier(&inst.op) {
                starts.push((Start::Barrier(b as BlockId, i), b as BlockId, i + 1));
            }
        }
    }
    let mut out = BTreeSet::new();
    'starts: for (start, b0, i0) in starts {
        let mut seen: HashSet<(BlockId, usize)> = HashSet::new();
        let mut work = vec![(b0, i0)];
        while let Some((b, i)) = work.pop() {
            if !seen.insert((b, i)) {
                continue;
            }
            let blk = &k.cfg.blocks[b as usize];
            let mut stopped = false;
            for (idx, inst) in blk.insts.iter().enumerate().skip(i) {
                if positions.contains(&(b, idx)) {
                    out.insert(start);
                    continue 'starts;
                }
                if is_sync_barrier(&inst.op) && inst.guard.is_none() {
                    stopped = true;
                    break;
                }
            }
            if !stopped {
                work.extend(blk.successors().into_iter().map(|s| (s, 0)));
            }
        }
    }
    out
}
