//! Warp collectives: shuffles, votes and `activemask`.

use super::{need, Decoder, InstType, R};
use crate::ops::*;

impl Decoder<'_> {
    /// `shfl.sync`.
    pub(super) fn shfl(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        let ops = &i.operands;
        need(i, 5)?;
        let mode = if i.has_modifier(".up") {
            ShflMode::Up
        } else if i.has_modifier(".down") {
            ShflMode::Down
        } else if i.has_modifier(".bfly") {
            ShflMode::Bfly
        } else {
            ShflMode::Idx
        };
        if !i.has_modifier(".sync") {
            return Err("`shfl` without `.sync` (pre-Volta) is not modelled".into());
        }
        let (d, p) = match &ops[0] {
            ptx::Operand::RegPair(a, b) => (self.reg(a, 32, false), Some(self.reg(b, 1, false))),
            o => (self.dst(o, 32, false)?, None),
        };
        let src = self.src(&ops[1], 32)?;
        let lane = self.src(&ops[2], 32)?;
        let clamp = self.src(&ops[3], 32)?;
        let mask = self.src(&ops[4], 32)?;
        self.emit(Op::Shfl { dst: d, pred_dst: p, mode, src, lane, clamp, mask });
        Ok(())
    }

    /// `vote.sync`.
    pub(super) fn vote(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        let ops = &i.operands;
        need(i, 3)?;
        let mode = if i.has_modifier(".all") {
            VoteMode::All
        } else if i.has_modifier(".any") {
            VoteMode::Any
        } else if i.has_modifier(".uni") {
            VoteMode::Uni
        } else {
            VoteMode::Ballot
        };
        if !i.has_modifier(".sync") {
            return Err("`vote` without `.sync` is not modelled".into());
        }
        let d = self.dst(&ops[0], if mode == VoteMode::Ballot { 32 } else { 1 }, false)?;
        let pred = self.src(&ops[1], 1)?;
        let mask = self.src(&ops[2], 32)?;
        self.emit(Op::Vote { dst: d, mode, pred, mask });
        Ok(())
    }

    /// `activemask`.
    pub(super) fn activemask(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        let ops = &i.operands;
        need(i, 1)?;
        let d = self.dst(&ops[0], 32, false)?;
        self.emit(Op::ActiveMask { dst: d });
        Ok(())
    }
}
