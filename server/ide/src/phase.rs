//! Which phases an instruction belongs to: the kernel entry and the block-wide barriers from
//! which it can be reached without crossing another (unguarded) barrier. The same walk as
//! `model::phases`, for every instruction rather than only memory accesses.

use model::phases::Start;
use model::{BarrierKind, BlockId, Kernel, Op};
use std::collections::{BTreeSet, HashSet};

fn is_sync(op: &Op) -> bool {
    matches!(op, Op::Bar { kind: BarrierKind::Sync, .. })
}

/// The phase starts that reach any of `positions` (block, instruction index).
pub(crate) fn phases_of(k: &Kernel, positions: &HashSet<(BlockId, usize)>) -> BTreeSet<Start> {
    let mut starts = vec![(Start::Entry, k.cfg.entry, 0usize)];
    for (b, blk) in k.cfg.blocks.iter().enumerate() {
        for (i, inst) in blk.insts.iter().enumerate() {
            if is_sync(&inst.op) {
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
                if is_sync(&inst.op) && inst.guard.is_none() {
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
