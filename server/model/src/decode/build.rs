//! Builders for decompositions: each emits one primitive operation into a fresh temporary and
//! returns it as an operand, or folds it to an immediate when its inputs are immediates (with the
//! same `ops::eval_*` the interpreter uses), so that `bfe.u32 %r, %r, 8, 8` lowers to a shift
//! and a mask rather than to the general sequence.
//!
//! Compound instructions (`bfe`, `prmt`, `shf`, `lop3`, `dp4a`, ...) are built from these, so
//! the interpreter, the symbolic lifter, the SMT encoding and the Lean model need no new
//! operations: the primitive ones already mean the same thing in all four.

use super::Decoder;
use crate::ops::*;

impl Decoder<'_> {
    /// `a op b` at `bits`.
    pub(super) fn bin(&mut self, op: BinOp, a: Operand, b: Operand, bits: u32) -> Operand {
        if let (Operand::Imm(x), Operand::Imm(y)) = (&a, &b) {
            return Operand::Imm(eval_bin(op, x & mask(bits), y & mask(bits), bits));
        }
        let t = self.temp(bits);
        self.emit(Op::Bin { dst: t, op, a, b, bits });
        Operand::Reg(t)
    }

    /// `op a` at `bits`.
    pub(super) fn un(&mut self, op: UnOp, a: Operand, bits: u32) -> Operand {
        if let Operand::Imm(x) = a {
            return Operand::Imm(eval_un(op, x & mask(bits), bits));
        }
        let t = self.temp(bits);
        self.emit(Op::Un { dst: t, op, a, bits });
        Operand::Reg(t)
    }

    /// The predicate `a cmp b` at `bits`.
    pub(super) fn cmp(&mut self, cmp: CmpOp, a: Operand, b: Operand, bits: u32) -> Operand {
        if let (Operand::Imm(x), Operand::Imm(y)) = (&a, &b) {
            return Operand::Imm(eval_cmp(cmp, x & mask(bits), y & mask(bits), bits) as u64);
        }
        let t = self.temp(1);
        self.emit(Op::Setp { dst: t, dst_neg: None, cmp, a, b, bits, combine: None });
        Operand::Reg(t)
    }

    /// `cond ? a : b` at `bits`; `cond` is a predicate.
    pub(super) fn select(&mut self, cond: Operand, a: Operand, b: Operand, bits: u32) -> Operand {
        match cond {
            Operand::Imm(c) => {
                if c & 1 != 0 {
                    a
                } else {
                    b
                }
            }
            _ if a == b => a,
            cond => {
                let t = self.temp(bits);
                self.emit(Op::Selp { dst: t, a, b, cond, bits });
                Operand::Reg(t)
            }
        }
    }

    /// `a op b` on predicates.
    pub(super) fn pred(&mut self, op: BoolOp, a: Operand, b: Operand) -> Operand {
        match (op, &a, &b) {
            (BoolOp::Or, Operand::Imm(0), _) | (BoolOp::And, Operand::Imm(1), _) => return b,
            (BoolOp::Or, _, Operand::Imm(0)) | (BoolOp::And, _, Operand::Imm(1)) => return a,
            _ => {}
        }
        let t = self.temp(1);
        self.emit(Op::Pred { dst: t, op, a, b });
        Operand::Reg(t)
    }

    /// The negation of a predicate.
    pub(super) fn pred_not(&mut self, a: Operand) -> Operand {
        if let Operand::Imm(x) = a {
            return Operand::Imm(u64::from(x & 1 == 0));
        }
        let t = self.temp(1);
        self.emit(Op::PredNot { dst: t, a });
        Operand::Reg(t)
    }

    /// A float operation at `bits` (never folded: float semantics live in the interpreter).
    pub(super) fn float(&mut self, op: FloatOp, args: Vec<Operand>, bits: u32) -> Operand {
        let t = self.temp_float(bits);
        self.emit(Op::Float { dst: t, op, args, bits });
        Operand::Reg(t)
    }

    /// The float comparison `a cmp b` at `bits`.
    pub(super) fn fcmp(&mut self, cmp: FloatCmp, a: Operand, b: Operand, bits: u32) -> Operand {
        let t = self.temp(1);
        self.emit(Op::FSetp { dst: t, dst_neg: None, cmp, a, b, bits, combine: None });
        Operand::Reg(t)
    }

    /// A conversion between the PTX types `from` and `to`, at least one of them a float.
    pub(super) fn cvt_to(&mut self, a: Operand, from: &str, to: &str, rnd: Option<&str>) -> Operand {
        let bits = ptx::types::type_bits(to).unwrap_or(32);
        let t = self.temp_float(bits);
        self.emit(Op::Cvt { dst: t, a, from: from.into(), to: to.into(), rnd: rnd.map(Into::into), sat: false });
        Operand::Reg(t)
    }

    /// Writes the result of a decomposition into the instruction's destination.
    pub(super) fn assign(&mut self, dst: RegId, v: Operand, bits: u32) {
        self.emit(Op::Mov { dst, src: v, bits });
    }

    /// A width change (truncation, zero- or sign-extension); nothing when the widths agree.
    pub(super) fn resize(&mut self, a: Operand, from: u32, to: u32, signed: bool) -> Operand {
        if from == to {
            return a;
        }
        self.extend(a, from, to, signed)
    }

    /// Bits `lo .. lo + width` of `a` (a `bits`-wide value), zero- or sign-extended to `to` bits.
    pub(super) fn field(&mut self, a: Operand, bits: u32, lo: u32, width: u32, to: u32, signed: bool) -> Operand {
        let shifted = if lo == 0 { a } else { self.bin(BinOp::LShr, a, Operand::Imm(lo as u64), bits) };
        let narrow = self.resize(shifted, bits, width, false);
        self.resize(narrow, width, to, signed)
    }
}
