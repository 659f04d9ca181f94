//! Warp collectives: shuffles, votes, `activemask`, `bar.warp.sync`, and `redux.sync` over a
//! whole warp (as shuffles).

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

    /// `redux.sync.{add,min,max,and,or,xor}.{u32,s32,b32} d, a, mask` over all 32 lanes: the same
    /// value as five butterfly shuffles, each combining a lane's value with its partner's (the
    /// operations are associative and commutative, so the order does not change the result; a
    /// shuffle, like `redux.sync`, requires every lane of its mask to arrive).
    pub(super) fn redux(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        need(i, 3)?;
        if !i.has_modifier(".sync") {
            return Err("`redux` without `.sync`".into());
        }
        if t.is_float {
            return Err("floating-point `redux.sync` is not modelled".into());
        }
        let signed = t.class == ptx::types::TypeClass::Signed;
        let op = if i.has_modifier(".add") {
            BinOp::Add
        } else if i.has_modifier(".min") {
            if signed {
                BinOp::MinS
            } else {
                BinOp::MinU
            }
        } else if i.has_modifier(".max") {
            if signed {
                BinOp::MaxS
            } else {
                BinOp::MaxU
            }
        } else if i.has_modifier(".and") {
            BinOp::And
        } else if i.has_modifier(".or") {
            BinOp::Or
        } else if i.has_modifier(".xor") {
            BinOp::Xor
        } else {
            return Err("`redux.sync` without an operation".into());
        };
        let ops = &i.operands;
        let mask = self.src(&ops[2], 32)?;
        // Only a full mask is modelled (a shuffle over lanes outside the mask would read lanes
        // that do not take part); clang puts the mask in a register, so check it when it runs.
        let partial = self.cmp(CmpOp::Ne, mask.clone(), Operand::Imm(0xffff_ffff), 32);
        self.unsupported_when(i, partial, "`redux.sync` with a member mask other than all 32 lanes is not modelled".into())?;
        let d = self.dst(&ops[0], 32, false)?;
        let mut v = self.src(&ops[1], 32)?;
        for k in [16u64, 8, 4, 2, 1] {
            let partner = self.temp(32);
            self.emit(Op::Shfl {
                dst: partner,
                pred_dst: None,
                mode: ShflMode::Bfly,
                src: v.clone(),
                lane: Operand::Imm(k),
                clamp: Operand::Imm(0x1f),
                mask: mask.clone(),
            });
            v = self.bin(op, v, Operand::Reg(partner), 32);
        }
        self.assign(d, v, 32);
        Ok(())
    }
}
