//! Control: barriers, branches, exits and calls.

use super::operands::full_opcode;
use super::{need, Decoder, InstType, R};
use crate::ops::*;

impl Decoder<'_> {
    /// `bar`/`barrier`: block barriers (`.sync`, and `.red` with its reduction), `bar.warp.sync`.
    /// A barrier with a thread count is a block barrier when the count is the block's size;
    /// otherwise (a named barrier for some warps) it is unsupported, decided at run time when
    /// the block size is not known here.
    pub(super) fn barrier(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        let ops = &i.operands;
        if i.has_modifier(".warp") {
            need(i, 1)?;
            let mask = self.src(&ops[0], 32)?;
            self.emit(Op::WarpSync { mask });
            return Ok(());
        }
        if i.has_modifier(".arrive") {
            return Err("`bar.arrive` signals a named barrier without waiting (producer/consumer synchronisation between groups of warps); the phase model has block-wide barriers only".into());
        }
        if i.has_modifier(".red") {
            return self.bar_red(i);
        }
        let id = match ops.first() {
            Some(o) => self.src(o, 32)?,
            None => Operand::Imm(0),
        };
        if let Some(count) = ops.get(1) {
            self.whole_block(i, count)?;
        }
        self.emit(Op::Bar { kind: BarrierKind::Sync, id });
        Ok(())
    }

    /// `bar.red.popc.u32 d, a{, b}, {!}c` and `bar.red.{and,or}.pred p, a{, b}, {!}c`.
    fn bar_red(&mut self, i: &ptx::Instruction) -> R<()> {
        let ops = &i.operands;
        need(i, 3)?;
        let (op, bits) = if i.has_modifier(".popc") {
            (BarRedOp::Popc, 32)
        } else if i.has_modifier(".and") {
            (BarRedOp::And, 1)
        } else if i.has_modifier(".or") {
            (BarRedOp::Or, 1)
        } else {
            return Err("`bar.red` without `.popc`, `.and` or `.or`".into());
        };
        let dst = self.dst(&ops[0], bits, false)?;
        let id = self.src(&ops[1], 32)?;
        if ops.len() > 3 {
            self.whole_block(i, &ops[2])?;
        }
        let pred = self.src(&ops[ops.len() - 1], 1)?;
        self.emit(Op::BarRed { dst, op, pred, id });
        Ok(())
    }

    /// Makes the barrier's thread count `count` an unsupported region unless it is the size of
    /// the block: decided now when the count and the block (`.reqntid`) are known, else by a
    /// guarded `Op::Unsupported` that the interpreter reaches only for another count, and that
    /// the engine drops once the launch fixes the block size to the count.
    fn whole_block(&mut self, i: &ptx::Instruction, count: &ptx::Operand) -> R<()> {
        let count = self.src(count, 32)?;
        let reason = |n: String| {
            format!("a barrier for {n} threads orders only the threads that take part (a named barrier for some warps); only a barrier for the whole block is modelled")
        };
        if let (Operand::Imm(n), Some([x, y, z])) = (&count, self.reqntid) {
            return if *n == x * y * z { Ok(()) } else { Err(format!("{} of a {}-thread block (`.reqntid`)", reason(n.to_string()), x * y * z)) };
        }
        let xy = self.bin(BinOp::Mul, Operand::Special(Special::Ntid(0)), Operand::Special(Special::Ntid(1)), 32);
        let threads = self.bin(BinOp::Mul, xy, Operand::Special(Special::Ntid(2)), 32);
        let shown = match &count {
            Operand::Imm(n) => n.to_string(),
            _ => "a computed number of".into(),
        };
        let partial = self.cmp(CmpOp::Ne, count, threads, 32);
        self.unsupported_when(i, partial, reason(shown))
    }

    /// An `Op::Unsupported` for `i` that a thread reaches only when the predicate `when` holds
    /// (and the instruction's own guard): a form the model describes only for some operand
    /// values. An immediate `when` decides it now.
    pub(super) fn unsupported_when(&mut self, i: &ptx::Instruction, when: Operand, reason: String) -> R<()> {
        let when = match self.guard {
            Some((g, negated)) => {
                let guard = if negated { Operand::NotReg(g) } else { Operand::Reg(g) };
                self.pred(BoolOp::And, when, guard)
            }
            None => when,
        };
        match when {
            Operand::Imm(0) => Ok(()),
            Operand::Reg(p) => {
                let saved = self.guard.replace((p, false));
                self.emit(Op::Unsupported { opcode: full_opcode(i), reason });
                self.guard = saved;
                Ok(())
            }
            _ => Err(reason),
        }
    }

    /// `bra` to a label (the CFG reads the target).
    pub(super) fn bra(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        let ops = &i.operands;
        need(i, 1)?;
        let ptx::Operand::Symbol(t) = &ops[0] else { return Err("`bra` needs a label".into()) };
        let target = self.local_name(t);
        self.emit(Op::Bra { target });
        Ok(())
    }
}
