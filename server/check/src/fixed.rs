//! Loads from buffers whose contents the interface fixes (index buffers given in full:
//! `values`, `values_file`, SentryWard's `shape_arrays`).
//!
//! Such a load is a function of its offset, so checks decide the kernel exactly for those
//! contents: enumeration evaluates it, the SMT encoding states it for every in-bounds offset,
//! and replays fill the buffer with the contents. Only buffers the kernel never writes qualify
//! (a load after a store could see another value); the contents still start a replay.

use crate::bind::{read_le, Binding};
use model::expr::{ExprId, Sym};
use model::ops::{mask, Op};
use model::symbolic::{AccessKind, Base, Lifted, ValueOrigin};
use model::Kernel;
use std::sync::Arc;

/// One value a load reads from a fixed buffer.
#[derive(Clone, Debug)]
pub struct FixedLoad {
    /// The buffer: a pointer parameter's or a pointer field's.
    pub buffer: Base,
    pub bytes: Arc<[u8]>,
    /// The access's byte offset from the buffer's start (64-bit expression).
    pub offset: ExprId,
    /// Bytes before this value within the access (element `j` of a vector load).
    pub skip: u64,
    /// Bytes the value is read from.
    pub width: u32,
    /// Width of the value's symbol in bits.
    pub bits: u32,
}

impl FixedLoad {
    /// The value read when the access is at byte `offset`; `None` when that is outside the
    /// contents (an out-of-bounds read, whose value nothing fixes).
    pub fn value_at(&self, offset: u64) -> Option<u64> {
        read_le(&self.bytes, offset.checked_add(self.skip)?, self.width).map(|v| v & mask(self.bits))
    }

    /// The offsets (of the access) at which the value is inside the contents, element-aligned.
    pub fn aligned_offsets(&self) -> impl Iterator<Item = u64> + '_ {
        let width = self.width.max(1) as u64;
        let len = self.bytes.len() as u64;
        (0..len / width).map(move |i| i * width).filter(move |o| *o >= self.skip).map(move |o| o - self.skip)
    }
}

/// The load a `Value` symbol is the result of, if it is one.
///
/// The access is looked up by the instruction that produced the value, not by the id in
/// `value_origin`: the lifter records the origin the first time it meets the instruction, which
/// for a load in a loop is its probe pass, when no access is recorded and the id is another's.
///
/// A load through selected pointers (`c ? a[i] : b[i]`) is one access per array; its value may
/// come from either, so it has no access of its own and no array's facts apply to it.
pub fn load_access(l: &Lifted, s: Sym) -> Option<&model::symbolic::Access> {
    let Sym::Value { block, inst, .. } = s else { return None };
    match l.value_origin.get(&(block, inst))? {
        ValueOrigin::Load { .. } => {
            let mut arms = l.accesses.iter().filter(|a| a.block == block && a.inst == inst as usize);
            let first = arms.next()?;
            arms.all(|a| a.base == first.base).then_some(first)
        }
        _ => None,
    }
}

/// The fixed load a `Value` symbol stands for, if it is one.
pub fn fixed_load(k: &Kernel, l: &Lifted, bind: &Binding, s: Sym) -> Option<FixedLoad> {
    let Sym::Value { block, inst, elem } = s else { return None };
    let a = load_access(l, s)?;
    let (Some(buffer @ (Base::Param(_) | Base::Field { .. })), Some(offset), AccessKind::Read) = (a.base, a.offset, a.kind) else { return None };
    let bytes = bind.base_fixed_bytes(buffer)?.clone();
    let written = l.accesses.iter().any(|b| b.kind != AccessKind::Read && b.base == Some(buffer));
    if written {
        return None;
    }
    let Op::Ld { elem_bytes, .. } = &k.cfg.blocks.get(block as usize)?.insts.get(inst as usize)?.op else { return None };
    let (_, bits) = l.exprs.find_var(s)?;
    Some(FixedLoad { buffer, bytes, offset, skip: elem as u64 * *elem_bytes as u64, width: *elem_bytes, bits })
}

/// `roots` and, transitively, the offsets of the fixed loads they read: everything a value
/// computed from them depends on.
pub fn with_load_offsets(k: &Kernel, l: &Lifted, bind: &Binding, roots: &[ExprId]) -> Vec<ExprId> {
    let mut out: Vec<ExprId> = roots.to_vec();
    let mut i = 0;
    while i < out.len() {
        for s in l.exprs.symbols(out[i]) {
            if let Some(f) = fixed_load(k, l, bind, s) {
                if !out.contains(&f.offset) {
                    out.push(f.offset);
                }
            }
        }
        i += 1;
    }
    out
}
