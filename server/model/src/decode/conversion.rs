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
            (ptx::Operand::Reg(d), ptx::Operand::Symbol(_) | ptx::Operand::Reg(_)) if self.frame.is_kernel() && self.param_addresses.contains_key(d) => {
                // The address of a kernel parameter, used only by `ld.param`s that read the
                // parameter directly (see `param_address_registers`).
            }
            (d, s) => {
                let d = self.dst(d, bits, is_float)?;
                let s = self.src(s, bits)?;
                self.emit(Op::Mov { dst: d, src: s, bits });
            }
        }
        Ok(())
    }

    /// `cvt`: integer width changes as `Ext` (saturating ones clamp first), conversions involving
    /// a float as `Cvt`, and the packed `cvt.rn{.relu}.{f16x2,bf16x2}.f32 d, a, b` as two `Cvt`s
    /// (`a` into the high half, `b` into the low one).
    pub(super) fn cvt(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        let ops = &i.operands;
        need(i, 2)?;
        if let Some(m) = i.modifiers.iter().find(|m| is_unmodelled_float_type(m)) {
            return Err(format!("conversions with `{m}` (fp8, fp6, fp4, tf32 and scale formats) are not modelled"));
        }
        if i.has_modifier(".satfinite") {
            return Err("`cvt` with `.satfinite` is not modelled".into());
        }
        let types: Vec<&str> = i.modifiers.iter().map(|m| m.as_str()).filter(|m| type_bits(m).is_some()).collect();
        let [to, from] = types[..] else { return Err("`cvt` needs two types".into()) };
        let (tb, fb) = (type_bits(to).unwrap_or(32), type_bits(from).unwrap_or(32));
        let (tc, fc) = (type_class(to), type_class(from));
        let rnd =
            i.modifiers.iter().find(|m| matches!(m.as_str(), ".rn" | ".rz" | ".rm" | ".rp" | ".rna" | ".rs" | ".rni" | ".rzi" | ".rmi" | ".rpi")).cloned();
        if to.ends_with("x2") {
            return self.cvt_packed(i, to, from, rnd.as_deref());
        }
        if i.has_modifier(".relu") {
            return Err("`cvt` with `.relu` to a scalar type is not modelled".into());
        }
        let d = self.dst(&ops[0], tb, tc == Some(TypeClass::Float))?;
        let a = self.src(&ops[1], fb)?;
        if tc != Some(TypeClass::Float) && fc != Some(TypeClass::Float) {
            let a = if i.has_modifier(".sat") { self.saturate(a, fb, fc == Some(TypeClass::Signed), tb, tc == Some(TypeClass::Signed)) } else { a };
            self.emit(Op::Ext { dst: d, a, from: if i.has_modifier(".sat") { 64 } else { fb }, to: tb, signed: fc == Some(TypeClass::Signed) });
        } else {
            self.emit(Op::Cvt { dst: d, a, from: from.into(), to: to.into(), rnd, sat: i.has_modifier(".sat") });
        }
        Ok(())
    }

    /// `a` (`from` bits, signed or not) widened to 64 bits and clamped to the range of the
    /// integer type of `to` bits and signedness `to_signed`.
    fn saturate(&mut self, a: Operand, from: u32, from_signed: bool, to: u32, to_signed: bool) -> Operand {
        let wide = self.resize(a, from, 64, from_signed);
        let (lo, hi): (i128, i128) = if to_signed { (-(1i128 << (to - 1)), (1i128 << (to - 1)) - 1) } else { (0, (1i128 << to) - 1) };
        if from_signed {
            // Compare as signed 64-bit values; bounds past the i64 range need no clamp.
            let v = if lo > i64::MIN as i128 { self.bin(BinOp::MaxS, wide, Operand::Imm(lo as i64 as u64), 64) } else { wide };
            if hi < i64::MAX as i128 {
                self.bin(BinOp::MinS, v, Operand::Imm(hi as u64), 64)
            } else {
                v
            }
        } else if hi < u64::MAX as i128 {
            // Unsigned values are never below a lower bound of 0 or less.
            self.bin(BinOp::MinU, wide, Operand::Imm(hi as u64), 64)
        } else {
            wide
        }
    }

    /// `cvt.rn{.relu}.{f16x2,bf16x2}.f32 d, a, b`: `a` converted into the high half, `b` into
    /// the low one; `.relu` clamps negative inputs to +0 first (rounding keeps the sign, so this
    /// is the same as clamping the result).
    fn cvt_packed(&mut self, i: &ptx::Instruction, to: &str, from: &str, rnd: Option<&str>) -> R<()> {
        let half = match (to, from) {
            (".f16x2", ".f32") => ".f16",
            (".bf16x2", ".f32") => ".bf16",
            _ => return Err(format!("`cvt{to}{from}` is not modelled")),
        };
        need(i, 3)?;
        let ops = &i.operands;
        let d = self.dst(&ops[0], 32, false)?;
        let mut halves = Vec::new();
        for o in [&ops[2], &ops[1]] {
            let mut x = self.src(o, 32)?;
            if i.has_modifier(".relu") {
                let negative = self.fcmp(FloatCmp::Lt, x.clone(), Operand::Imm(0), 32);
                x = self.select(negative, Operand::Imm(0), x, 32);
            }
            let h = self.cvt_to(x, from, half, rnd);
            halves.push(self.resize(h, 16, 32, false));
        }
        let hi = self.bin(BinOp::Shl, halves[1].clone(), Operand::Imm(16), 32);
        let v = self.bin(BinOp::Or, hi, halves[0].clone(), 32);
        self.assign(d, v, 32);
        Ok(())
    }
}

/// Float formats the interpreter does not implement (it knows f16, bf16, f32 and f64).
fn is_unmodelled_float_type(m: &str) -> bool {
    // By prefix, for the packed forms (`.e4m3x2`, `.f16x2`-like spellings of fp8/fp6/fp4); but
    // `.f64` and `.f16` start with `.f6` and `.f` too, and are formats the model has.
    if matches!(m, ".f64" | ".f16" | ".f16x2" | ".f32") {
        return false;
    }
    [".e4m3", ".e5m2", ".e2m3", ".e3m2", ".e2m1", ".ue8m0", ".tf32", ".f8", ".f6", ".f4"].iter().any(|p| m.starts_with(p))
}
