//! Integer arithmetic and bit operations.

use super::operands::full_opcode;
use super::{need, Decoder, InstType, R};
use crate::ops::*;
use ptx::types::TypeClass;

impl Decoder<'_> {
    /// Two-operand integer arithmetic, logic and shifts (and predicate logic on `.pred`).
    pub(super) fn int_arith(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { bits, class, signed, .. } = *t;
        let ops = &i.operands;
        need(i, 3)?;
        if i.has_modifier(".cc") || i.has_modifier(".sat") {
            return Err(format!("`{}` (carry/saturation) is not modelled", full_opcode(i)));
        }
        if class == TypeClass::Pred {
            let d = self.dst(&ops[0], 1, false)?;
            let a = self.src(&ops[1], 1)?;
            let b = self.src(&ops[2], 1)?;
            let op = match i.opcode.as_str() {
                "and" => BoolOp::And,
                "or" => BoolOp::Or,
                "xor" => BoolOp::Xor,
                _ => return Err("predicate arithmetic".into()),
            };
            self.emit(Op::Pred { dst: d, op, a, b });
            return Ok(());
        }
        let wide = i.has_modifier(".wide");
        let out_bits = if wide { bits * 2 } else { bits };
        let d = self.dst(&ops[0], out_bits, false)?;
        let mut a = self.src(&ops[1], bits)?;
        let shift = matches!(i.opcode.as_str(), "shl" | "shr");
        let mut b = self.src(&ops[2], if shift { 32 } else { bits })?;
        if wide {
            a = self.extend(a, bits, out_bits, signed);
            b = self.extend(b, bits, out_bits, signed);
        } else if shift {
            b = self.extend(b, 32, bits, false);
        }
        let op = int_op(i, signed)?;
        self.emit(Op::Bin { dst: d, op, a, b, bits: out_bits });
        Ok(())
    }

    /// `mad`: a multiply (`.lo`, `.hi`, `.wide`) followed by an add.
    pub(super) fn int_mad(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { bits, signed, .. } = *t;
        let ops = &i.operands;
        need(i, 4)?;
        let wide = i.has_modifier(".wide");
        let out_bits = if wide { bits * 2 } else { bits };
        let d = self.dst(&ops[0], out_bits, false)?;
        let mut a = self.src(&ops[1], bits)?;
        let mut b = self.src(&ops[2], bits)?;
        let c = self.src(&ops[3], out_bits)?;
        if wide {
            a = self.extend(a, bits, out_bits, signed);
            b = self.extend(b, bits, out_bits, signed);
        }
        let mul = if i.has_modifier(".hi") {
            if signed {
                BinOp::MulHiS
            } else {
                BinOp::MulHiU
            }
        } else {
            BinOp::Mul
        };
        let t = self.temp(out_bits);
        self.emit(Op::Bin { dst: t, op: mul, a, b, bits: out_bits });
        self.emit(Op::Bin { dst: d, op: BinOp::Add, a: Operand::Reg(t), b: c, bits: out_bits });
        Ok(())
    }

    /// `not`, `neg`, `abs`, `popc`, `clz`, `brev`, `cnot` (and `not.pred`).
    pub(super) fn int_unary(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { bits, class, .. } = *t;
        let ops = &i.operands;
        need(i, 2)?;
        if class == TypeClass::Pred {
            let d = self.dst(&ops[0], 1, false)?;
            let a = self.src(&ops[1], 1)?;
            self.emit(Op::PredNot { dst: d, a });
            return Ok(());
        }
        let out_bits = if matches!(i.opcode.as_str(), "popc" | "clz") { 32 } else { bits };
        let d = self.dst(&ops[0], out_bits, false)?;
        let a = self.src(&ops[1], bits)?;
        let op = match i.opcode.as_str() {
            "not" => UnOp::Not,
            "neg" => UnOp::Neg,
            "abs" => UnOp::AbsS,
            "popc" => UnOp::Popc,
            "clz" => UnOp::Clz,
            "brev" => UnOp::Brev,
            _ => {
                // cnot: d = (a == 0) ? 1 : 0
                let p = self.temp(1);
                self.emit(Op::Setp { dst: p, dst_neg: None, cmp: CmpOp::Eq, a, b: Operand::Imm(0), bits, combine: None });
                self.emit(Op::Selp { dst: d, a: Operand::Imm(1), b: Operand::Imm(0), cond: Operand::Reg(p), bits });
                return Ok(());
            }
        };
        if out_bits != bits {
            let t = self.temp(bits);
            self.emit(Op::Un { dst: t, op, a, bits });
            self.emit(Op::Ext { dst: d, a: Operand::Reg(t), from: bits, to: out_bits, signed: false });
        } else {
            self.emit(Op::Un { dst: d, op, a, bits });
        }
        Ok(())
    }
}

/// The model operator of a two-operand integer instruction.
pub(super) fn int_op(i: &ptx::Instruction, signed: bool) -> R<BinOp> {
    Ok(match i.opcode.as_str() {
        "add" => BinOp::Add,
        "sub" => BinOp::Sub,
        "mul" if i.has_modifier(".hi") => {
            if signed {
                BinOp::MulHiS
            } else {
                BinOp::MulHiU
            }
        }
        "mul" => BinOp::Mul,
        "div" => {
            if signed {
                BinOp::DivS
            } else {
                BinOp::DivU
            }
        }
        "rem" => {
            if signed {
                BinOp::RemS
            } else {
                BinOp::RemU
            }
        }
        "min" => {
            if signed {
                BinOp::MinS
            } else {
                BinOp::MinU
            }
        }
        "max" => {
            if signed {
                BinOp::MaxS
            } else {
                BinOp::MaxU
            }
        }
        "and" => BinOp::And,
        "or" => BinOp::Or,
        "xor" => BinOp::Xor,
        "shl" => BinOp::Shl,
        "shr" => {
            if signed {
                BinOp::AShr
            } else {
                BinOp::LShr
            }
        }
        other => return Err(format!("integer `{other}`")),
    })
}
