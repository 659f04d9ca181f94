//! Float instructions computed as the hardware computes them: each f32 or f64 result rounded to
//! its format (nearest even), on native floats.
//!
//! The exact semantics ([`super::float`]) is the contract for equivalence, where a value must
//! not drift from the reference through rounding. A race or bounds replay only needs the control
//! flow and addresses that floats steer (an argmax, a data-dependent branch), and there exact
//! rationals cost more than everything else together: a GEMM's FMA chain or a softmax's
//! normalisation grows numerators and denominators until each step is a big-integer gcd
//! (measured: over half of a replay's time). Rounding per operation is also closer to what the
//! kernel really does.
//!
//! 16-bit float operations and anything unmodelled go through the exact path; the callers keep
//! that fallback.

use super::float::{FloatFormat, Rounding};
use super::memory::Value;
use crate::ops::{mask, FloatOp};
use std::cmp::Ordering;

/// How the interpreter computes float instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FloatArithmetic {
    /// Exact rationals, rounded only when bits are needed (the equivalence contract).
    #[default]
    Exact,
    /// f32 and f64 operations rounded to their format after each instruction, as on hardware.
    Hardware,
}

/// A value as an f64 holding the `bits`-wide IEEE float it denotes (exact: every f32 is an f64).
fn native(v: &Value, bits: u32) -> f64 {
    match (v, bits) {
        (Value::Bits(b), 32) => f32::from_bits((b & mask(32)) as u32) as f64,
        (Value::Bits(b), _) => f64::from_bits(*b),
        (Value::Float(f), 32) => f32::from_bits(f.to_bits(FloatFormat::F32, Rounding::NearestEven) as u32) as f64,
        (Value::Float(f), _) => f64::from_bits(f.to_bits(FloatFormat::F64, Rounding::NearestEven)),
    }
}

/// The canonical NaN the hardware writes (all ones below the sign bit).
fn result_bits(x: f64, bits: u32) -> u64 {
    if bits == 32 {
        if x.is_nan() {
            0x7fff_ffff
        } else {
            (x as f32).to_bits() as u64
        }
    } else if x.is_nan() {
        0x7fff_ffff_ffff_ffff
    } else {
        x.to_bits()
    }
}

/// The result bits of float instruction `op` on `xs` at width `bits`, or `None` when this path
/// does not compute it (16-bit formats, an unmodelled operation, too few operands).
pub(crate) fn float_op(op: FloatOp, xs: &[Value], bits: u32) -> Option<Value> {
    if bits != 32 && bits != 64 {
        return None;
    }
    let arg = |i: usize| xs.get(i).map(|v| native(v, bits));
    let (a, b, c) = (arg(0)?, arg(1), arg(2));
    // Each operation is done in its own width so that it rounds once (for add, sub, mul, div
    // and sqrt an f64 computation rounded to f32 would be the same, 53 >= 2*24 + 2, but not for
    // fma); the transcendentals, approximations on hardware too, are computed in f64.
    macro_rules! in_width {
        ($t:ty) => {{
            let (a, b, c) = (a as $t, b.map(|x| x as $t), c.map(|x| x as $t));
            let wide = |f: fn(f64) -> f64| f(a as f64) as $t;
            let r: $t = match op {
                FloatOp::Add => a + b?,
                FloatOp::Sub => a - b?,
                FloatOp::Mul => a * b?,
                FloatOp::Div => a / b?,
                FloatOp::Fma => a.mul_add(b?, c?),
                FloatOp::Neg => -a,
                FloatOp::Abs => a.abs(),
                // PTX `min`/`max`: a NaN operand yields the other operand, as these do.
                FloatOp::Min => a.min(b?),
                FloatOp::Max => a.max(b?),
                FloatOp::Sqrt => a.sqrt(),
                FloatOp::Rcp => 1.0 / a,
                FloatOp::Rsqrt => wide(|x| 1.0 / x.sqrt()),
                FloatOp::Ex2 => wide(f64::exp2),
                FloatOp::Lg2 => wide(f64::log2),
                FloatOp::Sin => wide(f64::sin),
                FloatOp::Cos => wide(f64::cos),
                FloatOp::Tanh => wide(f64::tanh),
                FloatOp::Erf => wide(crate::math::erf),
                FloatOp::Other => return None,
            };
            r as f64
        }};
    }
    let r = if bits == 32 { in_width!(f32) } else { in_width!(f64) };
    Some(Value::Bits(result_bits(r, bits)))
}

/// IEEE comparison of two `bits`-wide floats (`None` when either is NaN), or `None` outside
/// f32/f64 (the caller compares exactly).
pub(crate) fn compare(a: &Value, b: &Value, bits: u32) -> Option<Option<Ordering>> {
    if bits != 32 && bits != 64 {
        return None;
    }
    Some(native(a, bits).partial_cmp(&native(b, bits)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32v(x: f32) -> Value {
        Value::Bits(x.to_bits() as u64)
    }

    fn as_f32(v: Option<Value>) -> f32 {
        match v {
            Some(Value::Bits(b)) => f32::from_bits(b as u32),
            other => panic!("expected bits, got {other:?}"),
        }
    }

    #[test]
    fn f32_operations_round_once_to_f32() {
        // 1 + 2^-24 is not an f32: it rounds (ties to even) back to 1.
        assert_eq!(as_f32(float_op(FloatOp::Add, &[f32v(1.0), f32v(2f32.powi(-24))], 32)), 1.0);
        // 1/3 rounded to f32, not to f64.
        assert_eq!(as_f32(float_op(FloatOp::Div, &[f32v(1.0), f32v(3.0)], 32)), 1.0f32 / 3.0);
        // fma rounds once: (1 + 2^-12)^2 - 1 keeps its 2^-24 term.
        let x = 1.0 + 2f32.powi(-12);
        assert_eq!(as_f32(float_op(FloatOp::Fma, &[f32v(x), f32v(x), f32v(-1.0)], 32)), 2f32.powi(-11) + 2f32.powi(-24));
    }

    #[test]
    fn f64_operations_and_the_transcendentals() {
        let f64v = |x: f64| Value::Bits(x.to_bits());
        // 0.1 + 0.2 rounds in f64 (not exactly 0.3), as on hardware.
        assert_eq!(float_op(FloatOp::Add, &[f64v(0.1), f64v(0.2)], 64), Some(f64v(0.1 + 0.2)));
        assert_eq!(as_f32(float_op(FloatOp::Ex2, &[f32v(3.0)], 32)), 8.0);
        assert_eq!(as_f32(float_op(FloatOp::Rsqrt, &[f32v(4.0)], 32)), 0.5);
        assert_eq!(float_op(FloatOp::Other, &[f32v(1.0)], 32), None, "unmodelled: the exact path says so");
        assert_eq!(float_op(FloatOp::Add, &[f32v(1.0)], 32), None, "a missing operand is not invented");
    }

    #[test]
    fn nan_is_canonical_and_min_ignores_it() {
        assert_eq!(float_op(FloatOp::Sub, &[f32v(f32::INFINITY), f32v(f32::INFINITY)], 32), Some(Value::Bits(0x7fff_ffff)));
        assert_eq!(as_f32(float_op(FloatOp::Min, &[f32v(f32::NAN), f32v(2.0)], 32)), 2.0);
        assert_eq!(compare(&f32v(f32::NAN), &f32v(1.0), 32), Some(None));
        assert_eq!(compare(&f32v(-1.0), &f32v(1.0), 32), Some(Some(Ordering::Less)));
    }

    #[test]
    fn sixteen_bit_formats_are_left_to_the_exact_path() {
        assert_eq!(float_op(FloatOp::Add, &[Value::Bits(0x3c00), Value::Bits(0x3c00)], 16), None);
        assert_eq!(compare(&Value::Bits(0), &Value::Bits(0), 16), None);
    }
}
