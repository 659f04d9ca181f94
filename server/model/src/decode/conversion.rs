//! Moves and conversions: `mov` (with vector packing and unpacking) and `cvt`.

use super::{need, Decoder, InstType, R};
use crate::ops::*;
use ptx::types::{type_bits, type_class, TypeClass};

impl Decoder<'_> {
    /// `mov`, including `mov.b64 %rd, {%r1, %r2}` (pack, low part first) and its reverse.
    pub(super) fn mov(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { bits, is_float, .. } = *t;
        let ops = &i.operands;
        need(i, 2)?;
        match (&ops[0], &ops[1]) {
            (ptx::Operand::Vector(parts), src) => {
                // Unpack: mov.b64 {%r1, %r2}, %rd1 (low part first).
                let src = self.src(src, bits)?;
                let part_bits = bits / parts.len() as u32;
                for (k, p) in parts.iter().enumerate() {
                    let d = self.dst(p, part_bits, false)?;
                    let shifted = self.temp(bits);
                    self.emit(Op::Bin { dst: shifted, op: BinOp::LShr, a: src.clone(), b: Operand::Imm((k as u32 * part_bits) as u64), bits });
                    self.emit(Op::Ext { dst: d, a: Operand::Reg(shifted), from: bits, to: part_bits, signed: false });
                }
            }
            (d, ptx::Operand::Vector(parts)) => {
                // Pack: mov.b64 %rd1, {%r1, %r2}.
                let d = self.dst(d, bits, false)?;
                let part_bits = bits / parts.len() as u32;
                let mut acc = Operand::Imm(0);
                for (k, p) in parts.iter().enumerate() {
                    let s = self.src(p, part_bits)?;
                    let wide = self.temp(bits);
                    self.emit(Op::Ext { dst: wide, a: s, from: part_bits, to: bits, signed: false });
                    let sh = self.temp(bits);
                    self.emit(Op::Bin { dst: sh, op: BinOp::Shl, a: Operand::Reg(wide), b: Operand::Imm((k as u32 * part_bits) as u64), bits });
                    let next = self.temp(bits);
                    self.emit(Op::Bin { dst: next, op: BinOp::Or, a: acc, b: Operand::Reg(sh), bits });
                    acc = Operand::Reg(next);
                }
                self.emit(Op::Mov { dst: d, src: acc, bits });
            }
            (d, s) => {
                let d = self.dst(d, bits, is_float)?;
                let s = self.src(s, bits)?;
                self.emit(Op::Mov { dst: d, src: s, bits });
            }
        }
        Ok(())
    }

    /// `cvt`: integer width changes as `Ext`, conversions involving a float as `Cvt`.
    pub(super) fn cvt(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        let ops = &i.operands;
        need(i, 2)?;
        let types: Vec<&str> = i.modifiers.iter().map(|m| m.as_str()).filter(|m| type_bits(m).is_some()).collect();
        let [to, from] = types[..] else { return Err("`cvt` needs two types".into()) };
        let (tb, fb) = (type_bits(to).unwrap_or(32), type_bits(from).unwrap_or(32));
        let (tc, fc) = (type_class(to), type_class(from));
        let d = self.dst(&ops[0], tb, tc == Some(TypeClass::Float))?;
        let a = self.src(&ops[1], fb)?;
        if tc != Some(TypeClass::Float) && fc != Some(TypeClass::Float) {
            if i.has_modifier(".sat") {
                return Err("saturating integer `cvt` is not modelled".into());
            }
            self.emit(Op::Ext { dst: d, a, from: fb, to: tb, signed: fc == Some(TypeClass::Signed) });
        } else {
            let rnd =
                i.modifiers.iter().find(|m| matches!(m.as_str(), ".rn" | ".rz" | ".rm" | ".rp" | ".rna" | ".rs" | ".rni" | ".rzi" | ".rmi" | ".rpi")).cloned();
            self.emit(Op::Cvt { dst: d, a, from: from.into(), to: to.into(), rnd, sat: i.has_modifier(".sat") });
        }
        Ok(())
    }
}
