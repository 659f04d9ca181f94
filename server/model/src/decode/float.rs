//! Floating-point arithmetic (exact in the interpreter, opaque in the symbolic lifter).

use super::operands::*;
use super::{need, Decoder, InstType, R};
use crate::ops::*;

impl Decoder<'_> {
    /// Float arithmetic and the transcendental approximations.
    pub(super) fn float_arith(&mut self, i: &ptx::Instruction, t: &InstType) -> R<()> {
        let InstType { ty, bits, .. } = *t;
        let ops = &i.operands;
        let op = match i.opcode.as_str() {
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
            _ => FloatOp::Other,
        };
        need(i, 2)?;
        if ty.ends_with("x2") {
            return Err(format!("packed `{}` is not modelled", full_opcode(i)));
        }
        let d = self.dst(&ops[0], bits, true)?;
        let args = ops[1..].iter().map(|o| self.src(o, bits)).collect::<R<Vec<_>>>()?;
        self.emit(Op::Float { dst: d, op, args, bits });
        Ok(())
    }
}
