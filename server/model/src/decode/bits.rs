//! Bit-field and byte instructions, decomposed into primitive integer operations: `bfe`, `bfi`,
//! `prmt` (every mode), `shf` (funnel shifts), `lop3` (any look-up table) and `bfind`.
//!
//! Each follows the pseudo-code of the PTX ISA manual for the instruction, including its edge
//! cases (positions and lengths past the width, a zero length, clamped and wrapped shift amounts);
//! `model/tests/decode_bits.rs` checks the decompositions against direct transcriptions of that
//! pseudo-code on edge values.

use super::{need, Decoder, InstType, R};
use crate::ops::*;
use ptx::types::TypeClass;

/// The `prmt` modes that take the byte selection from the two low bits of `c`: for each value of
/// `c & 3`, the source byte (0..8 of `{b, a}`) of result bytes 0, 1, 2, 3 (PTX ISA, `prmt`).
const PRMT_MODES: [(&str, [[u8; 4]; 4]); 6] = [
    // Forward 4 extract: bytes s .. s+3.
    (".f4e", [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]]),
    // Backward 4 extract: bytes s, s-1, s-2, s-3 (mod 8).
    (".b4e", [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]]),
    // Replicate byte s.
    (".rc8", [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]),
    // Edge clamp left: byte i is max(i, s).
    (".ecl", [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]]),
    // Edge clamp right: byte i is min(i, s).
    (".ecr", [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]]),
    // Replicate the 16-bit half s & 1.
    (".rc16", [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]]),
];

/// The selectors of a `prmt` mode (`None` for the generic form), or an error for an unknown mode.
fn prmt_mode(i: &ptx::Instruction) -> R<Option<&'static [[u8; 4]; 4]>> {
    for m in &i.modifiers {
        if let Some((_, table)) = PRMT_MODES.iter().find(|(name, _)| name == m) {
            return Ok(Some(table));
        }
        if m != ".b32" {
            return Err(format!("`prmt` with modifier `{m}`"));
        }
    }
    Ok(None)
}

impl Decoder<'_> {
    /// `bfe.{u,s}{32,64} d, a, pos, len`: the field `a[pos .. pos+len]`, zero- or sign-extended.
    /// `pos` and `len` are the low 8 bits of their operands; bits past the msb read the field's
    /// sign (its top bit inside `a`, or `a`'s msb when the field runs past it), a zero length
    /// gives 0.
    pub(super) fn bfe(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        need(i, 4)?;
        let w = t.bits;
        let signed = t.class == TypeClass::Signed;
        let ops = &i.operands;
        let d = self.dst(&ops[0], w, false)?;
        let a = self.src(&ops[1], w)?;
        let pos = self.src(&ops[2], 32)?;
        let len = self.src(&ops[3], 32)?;
        let pos = self.bin(BinOp::And, pos, Operand::Imm(0xff), 32);
        let len = self.bin(BinOp::And, len, Operand::Imm(0xff), 32);
        let pos_w = self.resize(pos.clone(), 32, w, false);
        let len_w = self.resize(len.clone(), 32, w, false);
        let shifted = self.bin(BinOp::LShr, a.clone(), pos_w.clone(), w);
        // (1 << len) - 1 is all ones when len >= w, since the shift gives 0.
        let one_shifted = self.bin(BinOp::Shl, Operand::Imm(1), len_w, w);
        let len_mask = self.bin(BinOp::Sub, one_shifted, Operand::Imm(1), w);
        if !signed {
            let v = self.bin(BinOp::And, shifted, len_mask, w);
            self.assign(d, v, w);
            return Ok(());
        }
        // Bits i < len with pos + i <= msb come from `a`; the others are the sign bit.
        let in_width = self.bin(BinOp::LShr, Operand::Imm(mask(w)), pos_w, w);
        let valid = self.bin(BinOp::And, len_mask, in_width, w);
        let end = self.bin(BinOp::Add, pos, len.clone(), 32);
        let top = self.bin(BinOp::Sub, end, Operand::Imm(1), 32);
        let top = self.bin(BinOp::MinU, top, Operand::Imm((w - 1) as u64), 32);
        let top_w = self.resize(top, 32, w, false);
        let sign_at = self.bin(BinOp::LShr, a, top_w, w);
        let sign = self.bin(BinOp::And, sign_at, Operand::Imm(1), w);
        let empty = self.cmp(CmpOp::Eq, len, Operand::Imm(0), 32);
        let sign = self.select(empty, Operand::Imm(0), sign, w);
        let fill = self.un(UnOp::Neg, sign, w);
        let kept = self.bin(BinOp::And, shifted, valid.clone(), w);
        let outside = self.un(UnOp::Not, valid, w);
        let padding = self.bin(BinOp::And, fill, outside, w);
        let v = self.bin(BinOp::Or, kept, padding, w);
        self.assign(d, v, w);
        Ok(())
    }

    /// `bfi.b{32,64} f, a, b, pos, len`: `b` with bits `pos .. pos+len` replaced by the low bits of
    /// `a`; nothing changes past the msb or for a zero length.
    pub(super) fn bfi(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        need(i, 5)?;
        let w = t.bits;
        let ops = &i.operands;
        let d = self.dst(&ops[0], w, false)?;
        let a = self.src(&ops[1], w)?;
        let b = self.src(&ops[2], w)?;
        let pos = self.src(&ops[3], 32)?;
        let len = self.src(&ops[4], 32)?;
        let pos = self.bin(BinOp::And, pos, Operand::Imm(0xff), 32);
        let len = self.bin(BinOp::And, len, Operand::Imm(0xff), 32);
        let pos_w = self.resize(pos, 32, w, false);
        let len_w = self.resize(len, 32, w, false);
        let one_shifted = self.bin(BinOp::Shl, Operand::Imm(1), len_w, w);
        let len_mask = self.bin(BinOp::Sub, one_shifted, Operand::Imm(1), w);
        let field = self.bin(BinOp::Shl, len_mask, pos_w.clone(), w);
        let keep = self.un(UnOp::Not, field.clone(), w);
        let kept = self.bin(BinOp::And, b, keep, w);
        let moved = self.bin(BinOp::Shl, a, pos_w, w);
        let inserted = self.bin(BinOp::And, moved, field, w);
        let v = self.bin(BinOp::Or, kept, inserted, w);
        self.assign(d, v, w);
        Ok(())
    }

    /// `prmt.b32{.mode} d, a, b, c`: four bytes picked from `{b, a}` (bytes 0-3 from `a`, 4-7 from
    /// `b`). The generic form reads one selector nibble per result byte from `c` (bit 3 of the
    /// nibble replicates the picked byte's sign); the modes read the two low bits of `c`.
    pub(super) fn prmt(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        need(i, 4)?;
        let ops = &i.operands;
        let mode = prmt_mode(i)?;
        let d = self.dst(&ops[0], 32, false)?;
        let a = self.src(&ops[1], 32)?;
        let b = self.src(&ops[2], 32)?;
        let c = self.src(&ops[3], 32)?;
        let v = match (mode, &c) {
            (None, Operand::Imm(c)) => {
                let nibbles = [0, 1, 2, 3].map(|k| ((c >> (4 * k)) & 0xf) as u8);
                self.prmt_known(&a, &b, nibbles)
            }
            (None, _) => self.prmt_generic(&a, &b, &c),
            (Some(table), Operand::Imm(c)) => self.prmt_known(&a, &b, table[(c & 3) as usize]),
            (Some(table), _) => {
                // One candidate per value of c & 3, then a choice among them.
                let sel = self.bin(BinOp::And, c, Operand::Imm(3), 32);
                let mut v = self.prmt_known(&a, &b, table[3]);
                for s in (0..3).rev() {
                    let candidate = self.prmt_known(&a, &b, table[s]);
                    let here = self.cmp(CmpOp::Eq, sel.clone(), Operand::Imm(s as u64), 32);
                    v = self.select(here, candidate, v, 32);
                }
                v
            }
        };
        self.assign(d, v, 32);
        Ok(())
    }

    /// `prmt` with known selector nibbles (bit 3 of a nibble: replicate the byte's sign).
    fn prmt_known(&mut self, a: &Operand, b: &Operand, nibbles: [u8; 4]) -> Operand {
        let mut acc = Operand::Imm(0);
        for (k, nib) in nibbles.into_iter().enumerate() {
            let sel = u32::from(nib & 7);
            let src = if sel < 4 { a.clone() } else { b.clone() };
            let byte = if nib & 8 == 0 {
                self.field(src, 32, 8 * (sel % 4), 8, 32, false)
            } else {
                // The byte's top bit, sign-extended, fills the whole byte.
                let sign = self.field(src, 32, 8 * (sel % 4) + 7, 1, 32, true);
                self.bin(BinOp::And, sign, Operand::Imm(0xff), 32)
            };
            let placed = if k == 0 { byte } else { self.bin(BinOp::Shl, byte, Operand::Imm(8 * k as u64), 32) };
            acc = if k == 0 { placed } else { self.bin(BinOp::Or, acc, placed, 32) };
        }
        acc
    }

    /// `prmt` with selector nibbles computed at run time.
    fn prmt_generic(&mut self, a: &Operand, b: &Operand, c: &Operand) -> Operand {
        let lo = self.resize(a.clone(), 32, 64, false);
        let hi = self.resize(b.clone(), 32, 64, false);
        let hi = self.bin(BinOp::Shl, hi, Operand::Imm(32), 64);
        let both = self.bin(BinOp::Or, hi, lo, 64);
        let mut acc = Operand::Imm(0);
        for k in 0..4u32 {
            let nib = self.field(c.clone(), 32, 4 * k, 4, 32, false);
            let sel = self.bin(BinOp::And, nib.clone(), Operand::Imm(7), 32);
            let amount = self.bin(BinOp::Shl, sel, Operand::Imm(3), 32);
            let amount = self.resize(amount, 32, 64, false);
            let shifted = self.bin(BinOp::LShr, both.clone(), amount, 64);
            let byte = self.field(shifted, 64, 0, 8, 32, false);
            let sign_bit = self.bin(BinOp::And, byte.clone(), Operand::Imm(0x80), 32);
            let negative = self.cmp(CmpOp::Ne, sign_bit, Operand::Imm(0), 32);
            let sign = self.select(negative, Operand::Imm(0xff), Operand::Imm(0), 32);
            let flag = self.bin(BinOp::And, nib, Operand::Imm(8), 32);
            let replicate = self.cmp(CmpOp::Ne, flag, Operand::Imm(0), 32);
            let byte = self.select(replicate, sign, byte, 32);
            let placed = self.bin(BinOp::Shl, byte, Operand::Imm(8 * k as u64), 32);
            acc = self.bin(BinOp::Or, acc, placed, 32);
        }
        acc
    }

    /// `shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`: the 64-bit `{b, a}` shifted by `c` (clamped to 32,
    /// or taken mod 32); `shf.l` keeps the high 32 bits, `shf.r` the low ones.
    pub(super) fn shf(&mut self, i: &ptx::Instruction, _t: &InstType) -> R<()> {
        need(i, 4)?;
        let left = match (i.has_modifier(".l"), i.has_modifier(".r")) {
            (true, false) => true,
            (false, true) => false,
            _ => return Err("`shf` needs exactly one of `.l` and `.r`".into()),
        };
        let clamp = match (i.has_modifier(".clamp"), i.has_modifier(".wrap")) {
            (true, false) => true,
            (false, true) => false,
            _ => return Err("`shf` needs exactly one of `.clamp` and `.wrap`".into()),
        };
        let ops = &i.operands;
        let d = self.dst(&ops[0], 32, false)?;
        let a = self.src(&ops[1], 32)?;
        let b = self.src(&ops[2], 32)?;
        let c = self.src(&ops[3], 32)?;
        let n = if clamp { self.bin(BinOp::MinU, c, Operand::Imm(32), 32) } else { self.bin(BinOp::And, c, Operand::Imm(31), 32) };
        let n = self.resize(n, 32, 64, false);
        let lo = self.resize(a, 32, 64, false);
        let hi = self.resize(b, 32, 64, false);
        let hi = self.bin(BinOp::Shl, hi, Operand::Imm(32), 64);
        let both = self.bin(BinOp::Or, hi, lo, 64);
        let v = if left {
            let up = self.bin(BinOp::Shl, both, n, 64);
            self.field(up, 64, 32, 32, 32, false)
        } else {
            let down = self.bin(BinOp::LShr, both, n, 64);
            self.resize(down, 64, 32, false)
        };
        self.assign(d, v, 32);
        Ok(())
    }

    /// `lop3.b32 d, a, b, c, lut`: bit `k` of `lut` is the result for the input bits
    /// `(a, b, c) = (k >> 2 & 1, k >> 1 & 1, k & 1)` (PTX's `0xF0`, `0xCC`, `0xAA` encoding).
    /// Built by Shannon expansion on `a`, then `b`, with constant and repeated cofactors folded.
    pub(super) fn lop3(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        if i.modifiers.iter().any(|m| m == ".or" || m == ".and") {
            return Err("`lop3` with a predicate result (`.or`/`.and`) is not modelled".into());
        }
        need(i, 5)?;
        let w = t.bits;
        let ops = &i.operands;
        let d = self.dst(&ops[0], w, false)?;
        let vars = [self.src(&ops[1], w)?, self.src(&ops[2], w)?, self.src(&ops[3], w)?];
        let Operand::Imm(lut) = self.src(&ops[4], 32)? else { return Err("`lop3` needs an immediate look-up table".into()) };
        let v = self.lut(&vars, 0, (lut & 0xff) as u32, w);
        self.assign(d, v, w);
        Ok(())
    }

    /// The function of `vars[level..]` whose truth table (over the remaining variables, the
    /// first one the most significant) is `table`.
    fn lut(&mut self, vars: &[Operand; 3], level: usize, table: u32, w: u32) -> Operand {
        let n = 1u32 << (3 - level);
        let full = (1u32 << n) - 1;
        if table == 0 {
            return Operand::Imm(0);
        }
        if table == full {
            return Operand::Imm(mask(w));
        }
        let x = vars[level].clone();
        let half = n / 2;
        let (hi, lo) = ((table >> half) & ((1 << half) - 1), table & ((1 << half) - 1));
        if hi == lo {
            return self.lut(vars, level + 1, lo, w);
        }
        let ones = (1 << half) - 1;
        // x ? f1 : f0, with the cases that need no multiplexer first.
        match (hi, lo) {
            (h, 0) if h == ones => x,
            (0, l) if l == ones => self.un(UnOp::Not, x, w),
            (h, 0) => {
                let f1 = self.lut(vars, level + 1, h, w);
                self.bin(BinOp::And, x, f1, w)
            }
            (0, l) => {
                let f0 = self.lut(vars, level + 1, l, w);
                let nx = self.un(UnOp::Not, x, w);
                self.bin(BinOp::And, nx, f0, w)
            }
            (h, l) if h == ones => {
                let f0 = self.lut(vars, level + 1, l, w);
                self.bin(BinOp::Or, x, f0, w)
            }
            (h, l) if l == ones => {
                let f1 = self.lut(vars, level + 1, h, w);
                let nx = self.un(UnOp::Not, x, w);
                self.bin(BinOp::Or, nx, f1, w)
            }
            (h, l) if h == (!l & ones) => {
                // f1 = !f0: x ? !f0 : f0 is x ^ f0.
                let f0 = self.lut(vars, level + 1, l, w);
                self.bin(BinOp::Xor, x, f0, w)
            }
            (h, l) => {
                // f0 ^ (x & (f0 ^ f1))
                let f1 = self.lut(vars, level + 1, h, w);
                let f0 = self.lut(vars, level + 1, l, w);
                let diff = self.bin(BinOp::Xor, f0.clone(), f1, w);
                let pick = self.bin(BinOp::And, x, diff, w);
                self.bin(BinOp::Xor, f0, pick, w)
            }
        }
    }

    /// `bfind{.shiftamt}.{u,s}{32,64} d, a`: the position of the most significant non-sign bit
    /// (`0xffffffff` when there is none); `.shiftamt` gives the left shift that moves it to the
    /// msb instead.
    pub(super) fn bfind(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        need(i, 2)?;
        let w = t.bits;
        let ops = &i.operands;
        let d = self.dst(&ops[0], 32, false)?;
        let a = self.src(&ops[1], w)?;
        // For a signed input, the bits that differ from the sign: a ^ (a >> msb).
        let x = if t.class == TypeClass::Signed {
            let sign = self.bin(BinOp::AShr, a.clone(), Operand::Imm((w - 1) as u64), w);
            self.bin(BinOp::Xor, a, sign, w)
        } else {
            a
        };
        let zeros = self.un(UnOp::Clz, x.clone(), w);
        let zeros = self.resize(zeros, w, 32, false);
        let found = if i.has_modifier(".shiftamt") { zeros } else { self.bin(BinOp::Sub, Operand::Imm((w - 1) as u64), zeros, 32) };
        let none = self.cmp(CmpOp::Eq, x, Operand::Imm(0), w);
        let v = self.select(none, Operand::Imm(0xffff_ffff), found, 32);
        self.assign(d, v, 32);
        Ok(())
    }
}
