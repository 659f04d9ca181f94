//! Comparisons and selection: `setp` (integer and float) and `selp`.

use super::{need, Decoder, InstType, R};
use crate::ops::*;

impl Decoder<'_> {
    /// `setp`, with its `p|q` form and the `.and`/`.or`/`.xor` combination.
    pub(super) fn setp(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { ty, mut bits, is_float, signed, .. } = *t;
        let ops = &i.operands;
        need(i, 3)?;
        if ty.ends_with("x2") {
            return Err(format!("packed `setp{}` (one predicate per half) is not modelled", ty));
        }
        let cmp_name = i.modifiers.first().map(|m| m.as_str()).unwrap_or("");
        let combine_op = i.modifiers.iter().find_map(|m| match m.as_str() {
            ".and" => Some(BoolOp::And),
            ".or" => Some(BoolOp::Or),
            ".xor" => Some(BoolOp::Xor),
            _ => None,
        });
        let (d, dn) = match &ops[0] {
            ptx::Operand::RegPair(p, q) => (self.reg(p, 1, false), Some(self.reg(q, 1, false))),
            other => (self.dst(other, 1, false)?, None),
        };
        let mut a = self.src(&ops[1], bits)?;
        let mut b = self.src(&ops[2], bits)?;
        if ty == ".bf16" {
            // A 16-bit float operand reads as f16: compare bf16 values as the f32 they convert to
            // exactly.
            a = self.cvt_to(a, ".bf16", ".f32", None);
            b = self.cvt_to(b, ".bf16", ".f32", None);
            bits = 32;
        }
        let combine = match combine_op {
            Some(op) => {
                need(i, 4)?;
                Some((op, self.src(&ops[3], 1)?))
            }
            None => None,
        };
        if is_float {
            let cmp = match cmp_name {
                ".eq" => FloatCmp::Eq,
                ".ne" => FloatCmp::Ne,
                ".lt" => FloatCmp::Lt,
                ".le" => FloatCmp::Le,
                ".gt" => FloatCmp::Gt,
                ".ge" => FloatCmp::Ge,
                ".equ" | ".neu" | ".ltu" | ".leu" | ".gtu" | ".geu" | ".num" | ".nan" => {
                    self.unordered_setp(cmp_name, d, dn, a, b, bits, combine);
                    return Ok(());
                }
                _ => FloatCmp::Other,
            };
            self.emit(Op::FSetp { dst: d, dst_neg: dn, cmp, a, b, bits, combine });
        } else {
            let s = signed;
            let cmp = match cmp_name {
                ".eq" => CmpOp::Eq,
                ".ne" => CmpOp::Ne,
                ".lt" if s => CmpOp::LtS,
                ".le" if s => CmpOp::LeS,
                ".gt" if s => CmpOp::GtS,
                ".ge" if s => CmpOp::GeS,
                ".lt" | ".lo" => CmpOp::LtU,
                ".le" | ".ls" => CmpOp::LeU,
                ".gt" | ".hi" => CmpOp::GtU,
                ".ge" | ".hs" => CmpOp::GeU,
                other => return Err(format!("comparison `{other}`")),
            };
            self.emit(Op::Setp { dst: d, dst_neg: dn, cmp, a, b, bits, combine });
        }
        Ok(())
    }

    /// `slct.dtype.{s32,f32} d, a, b, c`: `a` when `c >= 0`, else `b` (a NaN `c` selects `b`).
    pub(super) fn slct(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        need(i, 4)?;
        let types: Vec<&str> = i.modifiers.iter().map(|m| m.as_str()).filter(|m| ptx::types::type_bits(m).is_some()).collect();
        let [dty, cty] = types[..] else { return Err("`slct` needs two types".into()) };
        let bits = ptx::types::type_bits(dty).unwrap_or(32);
        let ops = &i.operands;
        let d = self.dst(&ops[0], bits, false)?;
        let a = self.src(&ops[1], bits)?;
        let b = self.src(&ops[2], bits)?;
        let c = self.src(&ops[3], 32)?;
        let take_a = match cty {
            ".s32" => self.cmp(CmpOp::GeS, c, Operand::Imm(0), 32),
            ".f32" => self.fcmp(FloatCmp::Ge, c, Operand::Imm(0), 32),
            other => return Err(format!("`slct` with a `{other}` selector")),
        };
        let v = self.select(take_a, a, b, bits);
        self.assign(d, v, bits);
        Ok(())
    }

    /// `selp`.
    pub(super) fn selp(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { bits, is_float, .. } = *t;
        let ops = &i.operands;
        need(i, 4)?;
        let d = self.dst(&ops[0], bits, is_float)?;
        let a = self.src(&ops[1], bits)?;
        let b = self.src(&ops[2], bits)?;
        let c = self.src(&ops[3], 1)?;
        self.emit(Op::Selp { dst: d, a, b, cond: c, bits });
        Ok(())
    }

    /// `setp` with an unordered comparison (`leu`, ...) or `num`/`nan`, as the negation of an
    /// ordered one: `leu(a, b) = !gt(a, b)`, `nan(a, b) = !(eq(a, a) & eq(b, b))`. Results go
    /// through temporaries so that `c` may name a destination.
    #[allow(clippy::too_many_arguments)]
    fn unordered_setp(&mut self, name: &str, d: RegId, dn: Option<RegId>, a: Operand, b: Operand, bits: u32, combine: Option<(BoolOp, Operand)>) {
        // `ordered` is the ordered predicate; the result is `ordered` or its negation.
        let (ordered, negate) = match name {
            ".num" | ".nan" => {
                let (x, y, t) = (self.temp(1), self.temp(1), self.temp(1));
                self.emit(Op::FSetp { dst: x, dst_neg: None, cmp: FloatCmp::Eq, a: a.clone(), b: a, bits, combine: None });
                self.emit(Op::FSetp { dst: y, dst_neg: None, cmp: FloatCmp::Eq, a: b.clone(), b, bits, combine: None });
                self.emit(Op::Pred { dst: t, op: BoolOp::And, a: Operand::Reg(x), b: Operand::Reg(y) });
                (t, name == ".nan")
            }
            _ => {
                let cmp = match name {
                    ".equ" => FloatCmp::Ne,
                    ".neu" => FloatCmp::Eq,
                    ".ltu" => FloatCmp::Ge,
                    ".leu" => FloatCmp::Gt,
                    ".gtu" => FloatCmp::Le,
                    _ => FloatCmp::Lt, // .geu
                };
                let t = self.temp(1);
                self.emit(Op::FSetp { dst: t, dst_neg: None, cmp, a, b, bits, combine: None });
                (t, true)
            }
        };
        let n = self.temp(1);
        self.emit(Op::PredNot { dst: n, a: Operand::Reg(ordered) });
        let (pos, neg) = if negate { (n, ordered) } else { (ordered, n) };
        let outs: Vec<(RegId, RegId)> = std::iter::once((d, pos)).chain(dn.map(|q| (q, neg))).collect();
        let mut finals = Vec::new();
        for (dst, v) in outs {
            match &combine {
                None => finals.push((dst, v)),
                Some((op, c)) => {
                    let t = self.temp(1);
                    self.emit(Op::Pred { dst: t, op: *op, a: Operand::Reg(v), b: c.clone() });
                    finals.push((dst, t));
                }
            }
        }
        for (dst, v) in finals {
            self.emit(Op::Mov { dst, src: Operand::Reg(v), bits: 1 });
        }
    }
}
