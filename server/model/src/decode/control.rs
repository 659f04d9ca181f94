//! Control: barriers, branches, exits and calls.

use super::{need, Decoder, InstType, R};
use crate::ops::*;

impl Decoder<'_> {
    /// `bar`/`barrier`: block barriers and `bar.warp.sync`.
    pub(super) fn barrier(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        let ops = &i.operands;
        let n = ops.len();
        if i.has_modifier(".warp") {
            need(i, 1)?;
            let mask = self.src(&ops[0], 32)?;
            self.emit(Op::WarpSync { mask });
        } else if i.has_modifier(".red") {
            return Err("`bar.red` (__syncthreads_count/and/or) is not modelled".into());
        } else {
            let kind = if i.has_modifier(".arrive") { BarrierKind::Arrive } else { BarrierKind::Sync };
            let id = if n >= 1 { self.src(&ops[0], 32)? } else { Operand::Imm(0) };
            if n >= 2 {
                return Err("barriers with a thread count are not modelled".into());
            }
            self.emit(Op::Bar { kind, id });
        }
        Ok(())
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
