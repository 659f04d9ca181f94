//! Floating-point arithmetic (exact in the interpreter, opaque in the symbolic lifter), and the
//! forms decomposed into it: `.relu`, `.NaN` and `.sat` results, `testp`, `copysign`, `bf16`
//! arithmetic (through `f32`) and packed `f16x2`/`bf16x2` arithmetic (one half at a time).
//!
//! A 16-bit register does not say whether it holds an `f16` or a `bf16`, and the interpreter
//! reads 16-bit float operands as `f16`; so `bf16` operands are converted to `f32` (`cvt`, which
//! names its formats), the operation runs there, and the result is rounded back to `bf16`, as the
//! hardware rounds a `bf16` result.

use super::operands::full_opcode;
use super::{need, Decoder, InstType, R};
use crate::ops::*;

/// The float format an instruction computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    F16,
    BF16,
    F32,
    F64,
}

impl Format {
    /// The format of a scalar or packed float type, and whether it is packed (`x2`).
    fn of(ty: &str) -> Option<(Format, bool)> {
        Some(match ty {
            ".f16" => (Format::F16, false),
            ".f16x2" => (Format::F16, true),
            ".bf16" => (Format::BF16, false),
            ".bf16x2" => (Format::BF16, true),
            ".f32" => (Format::F32, false),
            ".f64" => (Format::F64, false),
            _ => return None,
        })
    }

    fn bits(self) -> u32 {
        match self {
            Format::F16 | Format::BF16 => 16,
            Format::F32 => 32,
            Format::F64 => 64,
        }
    }

    /// The format arithmetic runs in (`bf16` goes through `f32`).
    fn compute(self) -> Format {
        if self == Format::BF16 {
            Format::F32
        } else {
            self
        }
    }
}

/// IEEE bit patterns of a few constants in a computing format.
struct Consts {
    one: u64,
    inf: u64,
    nan: u64,
    min_normal: u64,
}

fn consts(f: Format) -> Consts {
    match f {
        Format::F16 => Consts { one: 0x3c00, inf: 0x7c00, nan: 0x7fff, min_normal: 0x0400 },
        Format::F32 | Format::BF16 => Consts { one: 0x3f80_0000, inf: 0x7f80_0000, nan: 0x7fff_ffff, min_normal: 0x0080_0000 },
        Format::F64 => Consts { one: 0x3ff0_0000_0000_0000, inf: 0x7ff0_0000_0000_0000, nan: 0x7fff_ffff_ffff_ffff, min_normal: 0x0010_0000_0000_0000 },
    }
}

/// What happens to a result after the operation.
#[derive(Clone, Copy, Default)]
struct Finish {
    /// `.NaN`: a NaN operand gives a NaN (instead of `min`/`max` returning the other operand).
    nan: bool,
    /// `.relu`: a negative result becomes +0 (a NaN stays NaN).
    relu: bool,
    /// `.sat`: the result is clamped to [0, 1], and NaN becomes +0.
    sat: bool,
}

fn float_op(opcode: &str) -> Option<FloatOp> {
    Some(match opcode {
        "add" => FloatOp::Add,
        "sub" => FloatOp::Sub,
        "mul" => FloatOp::Mul,
        "div" => FloatOp::Div,
        "min" => FloatOp::Min,
        "max" => FloatOp::Max,
        "neg" => FloatOp::Neg,
        "abs" => FloatOp::Abs,
        "fma" | "mad" => FloatOp::Fma,
        "sqrt" => FloatOp::Sqrt,
        "rsqrt" => FloatOp::Rsqrt,
        "rcp" => FloatOp::Rcp,
        "ex2" => FloatOp::Ex2,
        "lg2" => FloatOp::Lg2,
        "sin" => FloatOp::Sin,
        "cos" => FloatOp::Cos,
        "tanh" => FloatOp::Tanh,
        _ => return None,
    })
}

fn arity(op: FloatOp) -> usize {
    match op {
        FloatOp::Add | FloatOp::Sub | FloatOp::Mul | FloatOp::Div | FloatOp::Min | FloatOp::Max => 2,
        FloatOp::Fma => 3,
        _ => 1,
    }
}

impl Decoder<'_> {
    /// Float arithmetic and the transcendental approximations, with their `.relu`, `.NaN` and
    /// `.sat` forms, in every float type (packed ones one half at a time).
    pub(super) fn float_arith(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        if i.opcode == "copysign" {
            return self.copysign(i, t);
        }
        let op = float_op(&i.opcode).ok_or_else(|| format!("float `{}`", i.opcode))?;
        for m in [".xorsign", ".oob", ".satfinite"] {
            if i.has_modifier(m) {
                return Err(format!("`{}`: the `{m}` form is not modelled", full_opcode(i)));
            }
        }
        let (format, packed) = Format::of(t.ty).ok_or_else(|| format!("float arithmetic on `{}`", t.ty))?;
        let n = arity(op);
        need(i, n + 1)?;
        let finish = Finish { nan: i.has_modifier(".NaN"), relu: i.has_modifier(".relu"), sat: i.has_modifier(".sat") };
        let ops = &i.operands;
        let width = if packed { 32 } else { format.bits() };
        let d = self.dst(&ops[0], width, true)?;
        let args = ops[1..=n].iter().map(|o| self.src(o, width)).collect::<R<Vec<_>>>()?;
        if !packed && format != Format::BF16 && !finish.nan && !finish.relu && !finish.sat {
            self.emit(Op::Float { dst: d, op, args, bits: width });
            return Ok(());
        }
        let v = if packed {
            let mut halves = Vec::new();
            for h in 0..2 {
                let parts: Vec<Operand> = args.iter().map(|a| self.field(a.clone(), 32, 16 * h, 16, 16, false)).collect();
                halves.push(self.float_scalar(op, parts, format, finish));
            }
            let lo = self.resize(halves[0].clone(), 16, 32, false);
            let hi = self.resize(halves[1].clone(), 16, 32, false);
            let hi = self.bin(BinOp::Shl, hi, Operand::Imm(16), 32);
            self.bin(BinOp::Or, hi, lo, 32)
        } else {
            self.float_scalar(op, args, format, finish)
        };
        self.assign(d, v, width);
        Ok(())
    }

    /// One scalar float operation in `format` (operands and result at its width).
    fn float_scalar(&mut self, op: FloatOp, args: Vec<Operand>, format: Format, finish: Finish) -> Operand {
        let compute = format.compute();
        let bits = compute.bits();
        let args: Vec<Operand> = if format == Format::BF16 { args.into_iter().map(|a| self.cvt_to(a, ".bf16", ".f32", None)).collect() } else { args };
        let c = consts(compute);
        let mut r = self.float(op, args.clone(), bits);
        if finish.nan {
            let mut any_nan = Operand::Imm(0);
            for a in &args {
                let ordered = self.fcmp(FloatCmp::Eq, a.clone(), a.clone(), bits);
                let is_nan = self.pred_not(ordered);
                any_nan = self.pred(BoolOp::Or, any_nan, is_nan);
            }
            r = self.select(any_nan, Operand::Imm(c.nan), r, bits);
        }
        if finish.relu {
            let negative = self.fcmp(FloatCmp::Lt, r.clone(), Operand::Imm(0), bits);
            r = self.select(negative, Operand::Imm(0), r, bits);
        }
        if finish.sat {
            let positive = self.fcmp(FloatCmp::Gt, r.clone(), Operand::Imm(0), bits);
            let capped = self.float(FloatOp::Min, vec![r, Operand::Imm(c.one)], bits);
            r = self.select(positive, capped, Operand::Imm(0), bits);
        }
        if format == Format::BF16 {
            r = self.cvt_to(r, ".f32", ".bf16", Some(".rn"));
        }
        r
    }

    /// `copysign.{f32,f64} d, a, b`: `|b|` with the sign of `a`. Signed zeros are not modelled
    /// (a `-0.0` or negative-NaN `a` counts as positive), as everywhere in the interpreter.
    fn copysign(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        need(i, 3)?;
        let bits = match t.ty {
            ".f32" => 32,
            ".f64" => 64,
            other => return Err(format!("`copysign{other}`")),
        };
        let ops = &i.operands;
        let d = self.dst(&ops[0], bits, true)?;
        let a = self.src(&ops[1], bits)?;
        let b = self.src(&ops[2], bits)?;
        let magnitude = self.float(FloatOp::Abs, vec![b], bits);
        let negated = self.float(FloatOp::Neg, vec![magnitude.clone()], bits);
        let negative = self.fcmp(FloatCmp::Lt, a, Operand::Imm(0), bits);
        let v = self.select(negative, negated, magnitude, bits);
        self.assign(d, v, bits);
        Ok(())
    }

    /// `testp.{finite,infinite,number,notanumber,normal,subnormal}.{f32,f64} p, a`, from float
    /// comparisons of `|a|` (zero counts as normal, as PTX says).
    pub(super) fn testp(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        need(i, 2)?;
        let format = match t.ty {
            ".f32" => Format::F32,
            ".f64" => Format::F64,
            other => return Err(format!("`testp` on `{other}`")),
        };
        let bits = format.bits();
        let c = consts(format);
        let ops = &i.operands;
        let d = self.dst(&ops[0], 1, false)?;
        let a = self.src(&ops[1], bits)?;
        let abs = self.float(FloatOp::Abs, vec![a.clone()], bits);
        let finite = self.fcmp(FloatCmp::Lt, abs.clone(), Operand::Imm(c.inf), bits);
        let v = if i.has_modifier(".finite") {
            finite
        } else if i.has_modifier(".infinite") {
            self.fcmp(FloatCmp::Eq, abs, Operand::Imm(c.inf), bits)
        } else if i.has_modifier(".number") {
            self.fcmp(FloatCmp::Eq, a.clone(), a, bits)
        } else if i.has_modifier(".notanumber") {
            let number = self.fcmp(FloatCmp::Eq, a.clone(), a, bits);
            self.pred_not(number)
        } else if i.has_modifier(".normal") {
            let big = self.fcmp(FloatCmp::Ge, abs.clone(), Operand::Imm(c.min_normal), bits);
            let zero = self.fcmp(FloatCmp::Eq, abs, Operand::Imm(0), bits);
            let normal_or_zero = self.pred(BoolOp::Or, big, zero);
            self.pred(BoolOp::And, finite, normal_or_zero)
        } else if i.has_modifier(".subnormal") {
            let small = self.fcmp(FloatCmp::Lt, abs.clone(), Operand::Imm(c.min_normal), bits);
            let nonzero = self.fcmp(FloatCmp::Gt, abs, Operand::Imm(0), bits);
            self.pred(BoolOp::And, small, nonzero)
        } else {
            return Err(format!("`{}` without a property", full_opcode(i)));
        };
        self.assign(d, v, 1);
        Ok(())
    }
}
