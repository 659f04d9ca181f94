//! Data races among the accesses of a trace, by the execution model's definition.

use super::{AccessEvent, AccessKind, InstRef, Trace};
use crate::ops::Space;
use std::collections::HashMap;

/// Two recorded accesses that race: `first < second` index `Trace::accesses`; `addr` is a byte
/// both touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Race {
    pub first: usize,
    pub second: usize,
    pub addr: u64,
}

/// Whether two accesses may happen in either order: different threads, and the same phase of
/// the same block or different blocks (blocks are unordered).
fn concurrent(a: &AccessEvent, b: &AccessEvent) -> bool {
    (a.block, a.thread) != (b.block, b.thread) && (a.block != b.block || a.phase == b.phase)
}

/// Conflicting kinds: a plain write against anything, or an atomic against a plain read.
/// Atomics never race with each other.
fn conflicting(a: AccessKind, b: AccessKind) -> bool {
    use AccessKind::*;
    matches!((a, b), (Write, _) | (_, Write) | (Atomic, Read) | (Read, Atomic))
}

impl Trace {
    /// The data races among the recorded accesses: two different threads access the same byte
    /// in the same phase (shared memory: of the same block; global memory: any two threads of
    /// the launch, since blocks are unordered), at least one writes, and they are not both
    /// atomic. One example per pair of instructions, in trace order.
    pub fn races(&self) -> Vec<Race> {
        // (memory, byte, access) for every byte of every access, sorted so that the accesses of
        // one byte are adjacent. Local memory is private to a thread; each block has its own
        // shared memory.
        let mut bytes: Vec<(Space, Option<[u32; 3]>, u64, usize)> = Vec::new();
        for (i, e) in self.accesses.iter().enumerate() {
            let block = match e.space {
                Space::Local => continue,
                Space::Shared => Some(e.block),
                _ => None,
            };
            for b in 0..e.bytes as u64 {
                bytes.push((e.space, block, e.addr.wrapping_add(b), i));
            }
        }
        bytes.sort_unstable();
        // The earliest example for each pair of instructions.
        let mut found: HashMap<(InstRef, InstRef), Race> = HashMap::new();
        for group in bytes.chunk_by(|x, y| (x.0, x.1, x.2) == (y.0, y.1, y.2)) {
            let ids: Vec<usize> = group.iter().map(|g| g.3).collect();
            let kind = |i: usize| self.accesses[i].kind;
            let writes: Vec<usize> = ids.iter().copied().filter(|&i| kind(i) == AccessKind::Write).collect();
            let atomics: Vec<usize> = ids.iter().copied().filter(|&i| kind(i) == AccessKind::Atomic).collect();
            if writes.is_empty() && atomics.is_empty() {
                continue;
            }
            let reads: Vec<usize> = ids.iter().copied().filter(|&i| kind(i) == AccessKind::Read).collect();
            // Plain writes against every other access; atomics against plain reads.
            let pairs = writes.iter().flat_map(|&w| ids.iter().map(move |&x| (w, x))).chain(atomics.iter().flat_map(|&a| reads.iter().map(move |&r| (a, r))));
            for (x, y) in pairs {
                let (i, j) = (x.min(y), x.max(y));
                let (a, b) = (&self.accesses[i], &self.accesses[j]);
                if i == j || !conflicting(a.kind, b.kind) || !concurrent(a, b) {
                    continue;
                }
                let race = Race { first: i, second: j, addr: group[0].2 };
                let slot = found.entry((a.inst.min(b.inst), a.inst.max(b.inst))).or_insert(race);
                if (i, j) < (slot.first, slot.second) {
                    *slot = race;
                }
            }
        }
        let mut out: Vec<Race> = found.into_values().collect();
        out.sort_by_key(|r| (r.first, r.second));
        out
    }
}
