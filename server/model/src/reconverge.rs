//! Where control flow reconverges. The lifter's path condition of a block is the disjunction of
//! its incoming edges' conditions; after a short-circuit `||`, an `if` on a loaded or
//! floating-point value, or a warp-uniform select clang lowered to branches, that disjunction
//! is equivalent to the condition of the block the branches left from, but not syntactically.
//! Everything that reads the condition afterwards pays for it: the enumerator declines a site
//! whose condition mentions a loaded value, and the solver carries the data-dependent terms.
//!
//! Block `b` reconverges with `d` when `d` dominates `b` and `b` post-dominates `d` in one pass
//! of a region (the kernel body, or one iteration of a loop body with inner loops collapsed into
//! their headers; back edges and exits lead to a virtual sink). Then a thread reaches `b` in
//! that pass exactly when it reaches `d`: every path to `b` crosses `d`, and every path from `d`
//! meets `b` before it leaves the pass. Branch conditions split a state's condition into two
//! complementary parts and no instruction inside a block changes it, so `b`'s condition is
//! `d`'s.

use crate::cfg::{BlockId, Cfg, LoopId, Term};
use std::collections::HashMap;

/// For each block of the region with a reconvergence point, that point: `b -> d` with `d` the
/// immediate dominator of `b` that `b` post-dominates. Empty when the region's graph is not a
/// DAG in reverse post-order (irreducible flow), so nothing is assumed there.
pub fn reconvergence(cfg: &Cfg, region: Option<LoopId>) -> HashMap<BlockId, BlockId> {
    let in_region = |b: BlockId| region.is_none_or(|r| cfg.loops[r as usize].contains(b));
    // The loop directly inside `region` that holds `b`, if any.
    let inner_loop = |b: BlockId| -> Option<LoopId> {
        let nest = cfg.loop_nest(b);
        let depth = match region {
            None => 0,
            Some(r) => nest.iter().position(|&l| l == r)? + 1,
        };
        nest.get(depth).copied()
    };
    let header = region.map(|r| cfg.loops[r as usize].header);
    let nodes: Vec<BlockId> = cfg.rpo.iter().copied().filter(|&b| in_region(b) && inner_loop(b).is_none_or(|l| cfg.loops[l as usize].header == b)).collect();
    let n = nodes.len();
    let sink = n;
    let index: HashMap<BlockId, usize> = nodes.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, &b) in nodes.iter().enumerate() {
        let targets: Vec<BlockId> = match inner_loop(b) {
            Some(l) => {
                let mut t: Vec<BlockId> = cfg.loops[l as usize].exits.iter().map(|&(_, to)| to).collect();
                t.sort_unstable();
                t.dedup();
                t
            }
            None if cfg.blocks[b as usize].term == Term::Return => Vec::new(),
            None => cfg.blocks[b as usize].successors(),
        };
        if targets.is_empty() {
            succs[i].push(sink);
        }
        for t in targets {
            if Some(t) == header || !in_region(t) {
                succs[i].push(sink);
                continue;
            }
            match index.get(&t) {
                // Reverse post-order must be topological here; otherwise assume nothing.
                Some(&j) if j > i => succs[i].push(j),
                _ => return HashMap::new(),
            }
        }
        succs[i].sort_unstable();
        succs[i].dedup();
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, ss) in succs.iter().enumerate() {
        for &j in ss.iter().filter(|&&j| j != sink) {
            preds[j].push(i);
        }
    }
    // Dominators: nodes in topological order, the region's first node is the root. Nodes that
    // cannot be reached from it get no dominator.
    let mut idom: Vec<Option<usize>> = vec![None; n];
    if n > 0 {
        idom[0] = Some(0);
    }
    for i in 1..n {
        let mut d: Option<usize> = None;
        for &p in preds[i].iter().filter(|&&p| idom[p].is_some()) {
            d = Some(match d {
                None => p,
                Some(q) => meet(q, p, |x| idom[x].unwrap_or(0), |a, b| a > b),
            });
        }
        idom[i] = d;
    }
    // Post-dominators: reverse topological order, the sink is the root.
    let mut ipdom: Vec<usize> = vec![sink; n + 1];
    for i in (0..n).rev() {
        let mut d: Option<usize> = None;
        for &s in &succs[i] {
            d = Some(match d {
                None => s,
                // A larger index is closer to the sink (topological order, sink last).
                Some(q) => meet(q, s, |x| ipdom[x], |a, b| a < b),
            });
        }
        ipdom[i] = d.unwrap_or(sink);
    }
    let mut out = HashMap::new();
    for (i, &b) in nodes.iter().enumerate().skip(1) {
        let Some(d) = idom[i] else { continue };
        // Does `b` post-dominate `d`? Walk `d`'s post-dominator chain (indices only grow).
        let mut p = ipdom[d];
        while p < i {
            p = ipdom[p];
        }
        if p == i {
            out.insert(b, nodes[d]);
        }
    }
    out
}

/// The nearest common ancestor of `a` and `b` in a tree given by `up`, where `deeper(x, y)`
/// says `x` is further from the root than `y` (so `x` must move up first).
fn meet(mut a: usize, mut b: usize, up: impl Fn(usize) -> usize, deeper: impl Fn(usize, usize) -> bool) -> usize {
    while a != b {
        if deeper(a, b) {
            a = up(a);
        } else {
            b = up(b);
        }
    }
    a
}
