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
        if i.has_modifier(".cc") {
            return Err(format!("`{}` (carry chain) is not modelled", full_opcode(i)));
        }
        if i.has_modifier(".sat") {
            return self.saturating(i, t);
        }
        if i.has_modifier(".relu") {
            return self.relu_min_max(i, t);
        }
        if is_packed(i) {
            return Err(format!("packed integer `{}` is not modelled", full_opcode(i)));
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
        if i.has_modifier(".cc") || i.has_modifier(".sat") {
            return Err(format!("`{}` (carry chain or saturation) is not modelled", full_opcode(i)));
        }
        if is_packed(i) {
            return Err(format!("packed integer `{}` is not modelled", full_opcode(i)));
        }
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

    /// `add.sat.s32` / `sub.sat.s32`: the exact sum or difference, clamped to the `s32` range.
    fn saturating(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let op = match i.opcode.as_str() {
            "add" => BinOp::Add,
            "sub" => BinOp::Sub,
            _ => return Err(format!("`{}` (saturation) is not modelled", full_opcode(i))),
        };
        if t.ty != ".s32" {
            return Err(format!("`{}`: saturation is defined for `.s32` only", full_opcode(i)));
        }
        let ops = &i.operands;
        let d = self.dst(&ops[0], 32, false)?;
        let a = self.src(&ops[1], 32)?;
        let b = self.src(&ops[2], 32)?;
        let a = self.resize(a, 32, 64, true);
        let b = self.resize(b, 32, 64, true);
        let exact = self.bin(op, a, b, 64);
        let capped = self.bin(BinOp::MinS, exact, Operand::Imm(i32::MAX as u64), 64);
        let clamped = self.bin(BinOp::MaxS, capped, Operand::Imm(i32::MIN as i64 as u64), 64);
        let v = self.resize(clamped, 64, 32, false);
        self.assign(d, v, 32);
        Ok(())
    }

    /// `min.relu.s32` / `max.relu.s32`: the minimum or maximum, then at least 0.
    fn relu_min_max(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        if t.ty != ".s32" {
            return Err(format!("`{}`: `.relu` on `{}` is not modelled", full_opcode(i), t.ty));
        }
        let op = match i.opcode.as_str() {
            "min" => BinOp::MinS,
            "max" => BinOp::MaxS,
            _ => return Err(format!("`{}`: `.relu` applies to `min` and `max`", full_opcode(i))),
        };
        let ops = &i.operands;
        let d = self.dst(&ops[0], 32, false)?;
        let a = self.src(&ops[1], 32)?;
        let b = self.src(&ops[2], 32)?;
        let m = self.bin(op, a, b, 32);
        let v = self.bin(BinOp::MaxS, m, Operand::Imm(0), 32);
        self.assign(d, v, 32);
        Ok(())
    }

    /// `mul24.{lo,hi}.{u32,s32}` and `mad24.{lo,hi}.{u32,s32}`: the 48-bit product of the low 24
    /// bits of `a` and `b` (sign-extended for `.s32`); `.lo` keeps bits 0..32, `.hi` bits 16..48;
    /// `mad24` adds `c`.
    pub(super) fn mul24(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let mad = i.opcode == "mad24";
        need(i, if mad { 4 } else { 3 })?;
        if i.has_modifier(".sat") {
            return Err(format!("`{}` (saturation) is not modelled", full_opcode(i)));
        }
        let hi = match (i.has_modifier(".hi"), i.has_modifier(".lo")) {
            (true, false) => true,
            (false, true) => false,
            _ => return Err(format!("`{}` needs exactly one of `.hi` and `.lo`", full_opcode(i))),
        };
        let signed = t.class == TypeClass::Signed;
        let ops = &i.operands;
        let d = self.dst(&ops[0], 32, false)?;
        let a = self.src(&ops[1], 32)?;
        let b = self.src(&ops[2], 32)?;
        let a = self.field(a, 32, 0, 24, 64, signed);
        let b = self.field(b, 32, 0, 24, 64, signed);
        let product = self.bin(BinOp::Mul, a, b, 64);
        let mut v = self.field(product, 64, if hi { 16 } else { 0 }, 32, 32, false);
        if mad {
            let c = self.src(&ops[3], 32)?;
            v = self.bin(BinOp::Add, v, c, 32);
        }
        self.assign(d, v, 32);
        Ok(())
    }

    /// `sad.type d, a, b, c`: `c + |a - b|`, the difference taken in the type's signedness.
    pub(super) fn sad(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        need(i, 4)?;
        let w = t.bits;
        let signed = t.class == TypeClass::Signed;
        let ops = &i.operands;
        let d = self.dst(&ops[0], w, false)?;
        let a = self.src(&ops[1], w)?;
        let b = self.src(&ops[2], w)?;
        let c = self.src(&ops[3], w)?;
        let (max, min) = if signed { (BinOp::MaxS, BinOp::MinS) } else { (BinOp::MaxU, BinOp::MinU) };
        let hi = self.bin(max, a.clone(), b.clone(), w);
        let lo = self.bin(min, a, b, w);
        let diff = self.bin(BinOp::Sub, hi, lo, w);
        let v = self.bin(BinOp::Add, c, diff, w);
        self.assign(d, v, w);
        Ok(())
    }

    /// `dp4a.atype.btype d, a, b, c`: `c` plus the four products of corresponding bytes of `a`
    /// and `b` (each byte sign- or zero-extended by its operand's type); `dp2a.{lo,hi}` multiplies
    /// the two 16-bit halves of `a` with bytes 0-1 (`.lo`) or 2-3 (`.hi`) of `b`.
    pub(super) fn dot(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        need(i, 4)?;
        let types: Vec<&str> = i.modifiers.iter().map(|m| m.as_str()).filter(|m| matches!(*m, ".u32" | ".s32")).collect();
        let [ta, tb] = types[..] else { return Err(format!("`{}` needs two operand types", full_opcode(i))) };
        let (sa, sb) = (ta == ".s32", tb == ".s32");
        let ops = &i.operands;
        let d = self.dst(&ops[0], 32, false)?;
        let a = self.src(&ops[1], 32)?;
        let b = self.src(&ops[2], 32)?;
        let mut acc = self.src(&ops[3], 32)?;
        let pairs: Vec<(u32, u32, u32)> = if i.opcode == "dp4a" {
            (0..4).map(|k| (8 * k, 8, 8 * k)).collect()
        } else {
            let base = if i.has_modifier(".hi") { 16 } else { 0 };
            (0..2).map(|k| (16 * k, 16, base + 8 * k)).collect()
        };
        for (a_lo, a_width, b_lo) in pairs {
            let x = self.field(a.clone(), 32, a_lo, a_width, 32, sa);
            let y = self.field(b.clone(), 32, b_lo, 8, 32, sb);
            let p = self.bin(BinOp::Mul, x, y, 32);
            acc = self.bin(BinOp::Add, acc, p, 32);
        }
        self.assign(d, acc, 32);
        Ok(())
    }
}

/// Whether the instruction works on packed halves (`.u16x2`, `.s16x2`): those types are not
/// register types the decoder knows, so without this check the instruction would read as `.b32`.
fn is_packed(i: &ptx::Instruction) -> bool {
    i.modifiers.iter().any(|m| m.ends_with("x2") || m.ends_with("x4"))
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
