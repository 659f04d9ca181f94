//! Watching a run: an [`Observer`] sees every executed instruction of every thread with its
//! operands' concrete values (read before it ran), the registers it set, and where its memory
//! accesses landed; guards and branches with their outcome; and the result of each warp
//! collective per lane. The interpreter stays the one semantics — control flow, addressing,
//! scheduling and collectives are decided by the concrete run — while an observer can carry a
//! shadow of its own along (the equivalence engine keeps symbolic values this way).

use super::memory::{BufferId, Value};
use super::InstRef;
use crate::ops::{Inst, Op, Operand, RegId};

/// A thread: its block, its index in the block, and its linear index in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct At {
    pub ctaid: [u32; 3],
    pub tid: [u32; 3],
    pub linear: u32,
}

/// Where a memory access landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Place {
    Global {
        buffer: BufferId,
        offset: u64,
    },
    /// In the block's shared memory: the variable's slot and the offset in it.
    Shared {
        slot: u32,
        offset: u64,
    },
    /// In the thread's local memory.
    Local {
        slot: u32,
        offset: u64,
    },
    /// An out-of-bounds access the run chose to survive.
    Discarded,
}

/// One lane of a completed warp collective.
#[derive(Clone, Debug)]
pub struct CollectiveLane {
    pub at: At,
    /// The registers the collective set in this lane, with their new values.
    pub results: Vec<(RegId, Value)>,
    /// For a shuffle: the linear index (in the block) of the lane whose source was read.
    pub source: Option<u32>,
}

#[allow(unused_variables)]
pub trait Observer {
    /// `inst` ran in thread `at`. `operands` are the concrete values of [`Op::operands`] before it
    /// ran, `results` the registers it set, `places` where its accesses landed (in order).
    fn executed(&mut self, at: &At, pc: InstRef, inst: &Inst, operands: &[Value], results: &[(RegId, Value)], places: &[Place]) {}
    /// A guarded instruction was reached; `executes` says whether its guard let it run.
    fn guard(&mut self, at: &At, pc: InstRef, inst: &Inst, pred: RegId, executes: bool) {}
    /// A conditional branch on predicate register `cond`, which held `value`.
    fn branch(&mut self, at: &At, cond: RegId, value: bool, line: Option<u32>) {}
    /// A warp collective completed for these lanes.
    fn collective(&mut self, pc: InstRef, inst: &Inst, lanes: &[CollectiveLane]) {}
    /// Every thread of block `ctaid` waited at the barrier `pc` and was released; `phase` is
    /// the number of barriers the block has now passed (as `Lark.Exec` counts them).
    fn barrier_released(&mut self, ctaid: [u32; 3], pc: InstRef, phase: u32) {}
    /// Every thread of block `ctaid` has finished.
    fn block_done(&mut self, ctaid: [u32; 3]) {}
}

impl Op {
    /// The operands an instruction reads, in a fixed order: sources first, then the address
    /// base for memory operations, then masks.
    pub fn operands(&self) -> Vec<&Operand> {
        match self {
            Op::Mov { src, .. } => vec![src],
            Op::Bin { a, b, .. } => vec![a, b],
            Op::Un { a, .. } | Op::Ext { a, .. } | Op::Cvt { a, .. } | Op::PredNot { a, .. } => vec![a],
            Op::Setp { a, b, combine, .. } | Op::FSetp { a, b, combine, .. } => {
                let mut v = vec![a, b];
                v.extend(combine.as_ref().map(|(_, c)| c));
                v
            }
            Op::Selp { a, b, cond, .. } => vec![a, b, cond],
            Op::Pred { a, b, .. } => vec![a, b],
            Op::Float { args, .. } => args.iter().collect(),
            Op::Ld { addr, .. } => vec![&addr.base],
            Op::St { srcs, addr, .. } => srcs.iter().chain(std::iter::once(&addr.base)).collect(),
            Op::Atom { args, addr, .. } => args.iter().chain(std::iter::once(&addr.base)).collect(),
            Op::Bar { id, .. } => vec![id],
            Op::BarRed { pred, id, .. } => vec![pred, id],
            Op::WarpSync { mask } => vec![mask],
            Op::Shfl { src, lane, clamp, mask, .. } => vec![src, lane, clamp, mask],
            Op::Vote { pred, mask, .. } => vec![pred, mask],
            Op::ActiveMask { .. } | Op::Fence | Op::Bra { .. } | Op::Ret | Op::Exit | Op::Unsupported { .. } => vec![],
        }
    }

    /// The registers an instruction writes.
    pub fn destinations(&self) -> Vec<RegId> {
        match self {
            Op::Mov { dst, .. }
            | Op::Bin { dst, .. }
            | Op::Un { dst, .. }
            | Op::Ext { dst, .. }
            | Op::Selp { dst, .. }
            | Op::Pred { dst, .. }
            | Op::PredNot { dst, .. }
            | Op::Float { dst, .. }
            | Op::Cvt { dst, .. }
            | Op::Vote { dst, .. }
            | Op::ActiveMask { dst }
            | Op::BarRed { dst, .. } => vec![*dst],
            Op::Setp { dst, dst_neg, .. } | Op::FSetp { dst, dst_neg, .. } => std::iter::once(*dst).chain(*dst_neg).collect(),
            Op::Shfl { dst, pred_dst, .. } => std::iter::once(*dst).chain(*pred_dst).collect(),
            Op::Ld { dsts, .. } => dsts.clone(),
            Op::Atom { dst, .. } => dst.iter().copied().collect(),
            Op::St { .. } | Op::Bar { .. } | Op::WarpSync { .. } | Op::Fence | Op::Bra { .. } | Op::Ret | Op::Exit | Op::Unsupported { .. } => vec![],
        }
    }

    /// The width operands are read at (parameters and immediates are read at this width).
    pub fn operand_bits(&self) -> u32 {
        match self {
            Op::Mov { bits, .. } | Op::Bin { bits, .. } | Op::Un { bits, .. } | Op::Selp { bits, .. } | Op::Float { bits, .. } => *bits,
            Op::Setp { bits, .. } | Op::FSetp { bits, .. } => *bits,
            Op::Ext { from, .. } => *from,
            Op::Cvt { from, .. } => ptx::types::type_bits(from).unwrap_or(32),
            Op::St { elem_bytes, .. } => elem_bytes * 8,
            Op::Atom { bytes, .. } => bytes * 8,
            Op::Pred { .. } | Op::PredNot { .. } => 1,
            _ => 32,
        }
    }
}
