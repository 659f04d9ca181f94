//! Exact float values: rationals plus the IEEE special values, and the conversions between them
//! and IEEE bit patterns (f16, bf16, f32, f64) under the PTX rounding modes.
//!
//! Signed zeros are not kept (a rational zero has no sign): `-0.0` reads as `0` and is written
//! back as `+0.0`.

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::fmt;

/// A float value held exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FloatVal {
    Finite(BigRational),
    Inf { negative: bool },
    NaN,
}

/// IEEE binary formats the interpreter reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatFormat {
    F16,
    BF16,
    F32,
    F64,
}

impl FloatFormat {
    /// The format a plain float register or memory cell of this width holds (16 → f16).
    pub fn for_bits(bits: u32) -> Option<FloatFormat> {
        match bits {
            16 => Some(FloatFormat::F16),
            32 => Some(FloatFormat::F32),
            64 => Some(FloatFormat::F64),
            _ => None,
        }
    }

    /// The format of a PTX type name (`.f32`, `.bf16`, ...).
    pub fn from_type(ty: &str) -> Option<FloatFormat> {
        match ty {
            ".f16" => Some(FloatFormat::F16),
            ".bf16" => Some(FloatFormat::BF16),
            ".f32" => Some(FloatFormat::F32),
            ".f64" => Some(FloatFormat::F64),
            _ => None,
        }
    }

    pub fn width(self) -> u32 {
        match self {
            FloatFormat::F16 | FloatFormat::BF16 => 16,
            FloatFormat::F32 => 32,
            FloatFormat::F64 => 64,
        }
    }

    fn exp_bits(self) -> u32 {
        match self {
            FloatFormat::F16 => 5,
            FloatFormat::BF16 | FloatFormat::F32 => 8,
            FloatFormat::F64 => 11,
        }
    }

    /// Explicit fraction bits.
    fn frac_bits(self) -> u32 {
        match self {
            FloatFormat::F16 => 10,
            FloatFormat::BF16 => 7,
            FloatFormat::F32 => 23,
            FloatFormat::F64 => 52,
        }
    }

    /// The canonical NaN NVIDIA hardware produces.
    fn nan_bits(self) -> u64 {
        match self {
            FloatFormat::F16 | FloatFormat::BF16 => 0x7fff,
            FloatFormat::F32 => 0x7fff_ffff,
            FloatFormat::F64 => 0x7fff_ffff_ffff_ffff,
        }
    }
}

/// IEEE rounding directions (`.rn`/`.rni`, `.rz`/`.rzi`, `.rm`/`.rmi`, `.rp`/`.rpi`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    NearestEven,
    Zero,
    /// Toward minus infinity.
    Down,
    /// Toward plus infinity.
    Up,
}

impl Rounding {
    /// The direction of a PTX rounding modifier, and whether it rounds to an integer (`.rni`...).
    pub fn from_modifier(m: &str) -> Option<(Rounding, bool)> {
        Some(match m {
            ".rn" => (Rounding::NearestEven, false),
            ".rz" => (Rounding::Zero, false),
            ".rm" => (Rounding::Down, false),
            ".rp" => (Rounding::Up, false),
            ".rni" => (Rounding::NearestEven, true),
            ".rzi" => (Rounding::Zero, true),
            ".rmi" => (Rounding::Down, true),
            ".rpi" => (Rounding::Up, true),
            _ => return None,
        })
    }
}

fn pow2(e: u32) -> BigInt {
    BigInt::one() << e
}

impl FloatVal {
    pub fn zero() -> FloatVal {
        FloatVal::Finite(BigRational::zero())
    }

    pub fn from_int(v: i128) -> FloatVal {
        FloatVal::Finite(BigRational::from_integer(BigInt::from(v)))
    }

    pub fn as_rational(&self) -> Option<&BigRational> {
        match self {
            FloatVal::Finite(r) => Some(r),
            _ => None,
        }
    }

    pub fn is_nan(&self) -> bool {
        matches!(self, FloatVal::NaN)
    }

    /// The exact value of an IEEE bit pattern.
    pub fn from_bits(bits: u64, fmt: FloatFormat) -> FloatVal {
        let (eb, fb) = (fmt.exp_bits(), fmt.frac_bits());
        let negative = (bits >> (eb + fb)) & 1 == 1;
        let exp = ((bits >> fb) & ((1 << eb) - 1)) as i64;
        let frac = bits & ((1u64 << fb) - 1);
        let bias = (1i64 << (eb - 1)) - 1;
        if exp == (1 << eb) - 1 {
            return if frac == 0 { FloatVal::Inf { negative } } else { FloatVal::NaN };
        }
        let (mant, e) = if exp == 0 { (frac, 1 - bias - fb as i64) } else { (frac | (1u64 << fb), exp - bias - fb as i64) };
        let mut r = BigRational::from_integer(BigInt::from(mant));
        if e >= 0 {
            r *= BigRational::from_integer(pow2(e as u32));
        } else {
            r /= BigRational::from_integer(pow2((-e) as u32));
        }
        FloatVal::Finite(if negative { -r } else { r })
    }

    pub fn from_f64(x: f64) -> FloatVal {
        FloatVal::from_bits(x.to_bits(), FloatFormat::F64)
    }

    pub fn from_f32(x: f32) -> FloatVal {
        FloatVal::from_bits(x.to_bits() as u64, FloatFormat::F32)
    }

    /// Nearest f64 (for the transcendental functions and for display).
    pub fn to_f64(&self) -> f64 {
        f64::from_bits(self.to_bits(FloatFormat::F64, Rounding::NearestEven))
    }

    /// The IEEE bit pattern of this value rounded to `fmt` in direction `mode`.
    pub fn to_bits(&self, fmt: FloatFormat, mode: Rounding) -> u64 {
        let (eb, fb) = (fmt.exp_bits(), fmt.frac_bits());
        let sign_bit = 1u64 << (eb + fb);
        let inf_bits = ((1u64 << eb) - 1) << fb;
        let r = match self {
            FloatVal::NaN => return fmt.nan_bits(),
            FloatVal::Inf { negative } => return inf_bits | if *negative { sign_bit } else { 0 },
            FloatVal::Finite(r) => r,
        };
        if r.is_zero() {
            return 0;
        }
        let negative = r.is_negative();
        let sign = if negative { sign_bit } else { 0 };
        // Rounding of the magnitude.
        #[derive(PartialEq)]
        enum Mag {
            Nearest,
            Trunc,
            Away,
        }
        let mag = match (mode, negative) {
            (Rounding::NearestEven, _) => Mag::Nearest,
            (Rounding::Zero, _) | (Rounding::Down, false) | (Rounding::Up, true) => Mag::Trunc,
            (Rounding::Up, false) | (Rounding::Down, true) => Mag::Away,
        };
        let a = r.abs();
        let (p, q) = (a.numer(), a.denom());
        let bias = (1i64 << (eb - 1)) - 1;
        let (emin, emax) = (1 - bias, bias);
        // e = floor(log2(p / q)).
        let mut e = p.bits() as i64 - q.bits() as i64;
        let at_least = if e >= 0 { *p >= q << (e as usize) } else { (p << ((-e) as usize)) >= *q };
        if !at_least {
            e -= 1;
        }
        let mut e = e.max(emin);
        // m = a * 2^(fb - e), split into integer part and remainder.
        let s = fb as i64 - e;
        let (num, den) = if s >= 0 { (p << (s as usize), q.clone()) } else { (p.clone(), q << ((-s) as usize)) };
        let (m, rem) = num.div_rem(&den);
        let mut m = m.to_u64().unwrap_or(u64::MAX);
        let round_up = match mag {
            Mag::Trunc => false,
            Mag::Away => !rem.is_zero(),
            Mag::Nearest => {
                let twice: BigInt = rem << 1usize;
                match twice.cmp(&den) {
                    Ordering::Greater => true,
                    Ordering::Equal => m & 1 == 1,
                    Ordering::Less => false,
                }
            }
        };
        if round_up {
            m += 1;
        }
        if m >= 1u64 << (fb + 1) {
            m >>= 1;
            e += 1;
        }
        if e > emax {
            return sign | if mag == Mag::Trunc { inf_bits - 1 } else { inf_bits };
        }
        if m < 1u64 << fb {
            sign | m // subnormal (e == emin)
        } else {
            sign | (((e + bias) as u64) << fb) | (m - (1u64 << fb))
        }
    }

    /// This value rounded to a representable value of `fmt`.
    pub fn round_to(&self, fmt: FloatFormat, mode: Rounding) -> FloatVal {
        FloatVal::from_bits(self.to_bits(fmt, mode), fmt)
    }

    /// This value rounded to an integer (specials unchanged).
    pub fn round_to_integer(&self, mode: Rounding) -> FloatVal {
        let FloatVal::Finite(r) = self else { return self.clone() };
        let f = r.floor();
        let i = match mode {
            Rounding::Down => f,
            Rounding::Up => r.ceil(),
            Rounding::Zero => r.trunc(),
            Rounding::NearestEven => {
                let diff = r - &f;
                let half = BigRational::new(BigInt::one(), BigInt::from(2));
                match diff.cmp(&half) {
                    Ordering::Less => f,
                    Ordering::Greater => f + BigRational::one(),
                    Ordering::Equal => {
                        if f.to_integer().is_even() {
                            f
                        } else {
                            f + BigRational::one()
                        }
                    }
                }
            }
        };
        FloatVal::Finite(i)
    }

    /// Float → integer conversion as PTX does it: round, then saturate to the destination range;
    /// NaN converts to 0.
    pub fn to_int_bits(&self, mode: Rounding, bits: u32, signed: bool) -> u64 {
        let (lo, hi): (i128, i128) = if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
        let v: i128 = match self.round_to_integer(mode) {
            FloatVal::NaN => 0,
            FloatVal::Inf { negative: true } => lo,
            FloatVal::Inf { negative: false } => hi,
            FloatVal::Finite(r) => {
                let i = r.to_integer();
                if i < BigInt::from(lo) {
                    lo
                } else if i > BigInt::from(hi) {
                    hi
                } else {
                    i.to_i128().unwrap_or(0)
                }
            }
        };
        (v as u128 as u64) & crate::ops::mask(bits)
    }

    fn inf(negative: bool) -> FloatVal {
        FloatVal::Inf { negative }
    }

    fn is_negative(&self) -> bool {
        match self {
            FloatVal::Finite(r) => r.is_negative(),
            FloatVal::Inf { negative } => *negative,
            FloatVal::NaN => false,
        }
    }

    pub fn add(&self, o: &FloatVal) -> FloatVal {
        use FloatVal::*;
        match (self, o) {
            (NaN, _) | (_, NaN) => NaN,
            (Inf { negative: a }, Inf { negative: b }) => {
                if a == b {
                    self.clone()
                } else {
                    NaN
                }
            }
            (Inf { .. }, _) => self.clone(),
            (_, Inf { .. }) => o.clone(),
            (Finite(a), Finite(b)) => Finite(a + b),
        }
    }

    pub fn neg(&self) -> FloatVal {
        match self {
            FloatVal::Finite(r) => FloatVal::Finite(-r),
            FloatVal::Inf { negative } => FloatVal::inf(!negative),
            FloatVal::NaN => FloatVal::NaN,
        }
    }

    pub fn abs(&self) -> FloatVal {
        match self {
            FloatVal::Finite(r) => FloatVal::Finite(r.abs()),
            FloatVal::Inf { .. } => FloatVal::inf(false),
            FloatVal::NaN => FloatVal::NaN,
        }
    }

    pub fn sub(&self, o: &FloatVal) -> FloatVal {
        self.add(&o.neg())
    }

    pub fn mul(&self, o: &FloatVal) -> FloatVal {
        use FloatVal::*;
        match (self, o) {
            (NaN, _) | (_, NaN) => NaN,
            (Finite(a), Finite(b)) => Finite(a * b),
            (Finite(a), Inf { .. }) | (Inf { .. }, Finite(a)) if a.is_zero() => NaN,
            _ => FloatVal::inf(self.is_negative() != o.is_negative()),
        }
    }

    pub fn div(&self, o: &FloatVal) -> FloatVal {
        use FloatVal::*;
        match (self, o) {
            (NaN, _) | (_, NaN) | (Inf { .. }, Inf { .. }) => NaN,
            (Inf { .. }, Finite(_)) => FloatVal::inf(self.is_negative() != o.is_negative()),
            (Finite(_), Inf { .. }) => FloatVal::zero(),
            (Finite(a), Finite(b)) => {
                if b.is_zero() {
                    if a.is_zero() {
                        NaN
                    } else {
                        FloatVal::inf(a.is_negative())
                    }
                } else {
                    Finite(a / b)
                }
            }
        }
    }

    pub fn fma(&self, b: &FloatVal, c: &FloatVal) -> FloatVal {
        self.mul(b).add(c)
    }

    /// IEEE comparison; `None` when either side is NaN.
    pub fn compare(&self, o: &FloatVal) -> Option<Ordering> {
        use FloatVal::*;
        Some(match (self, o) {
            (NaN, _) | (_, NaN) => return None,
            (Finite(a), Finite(b)) => a.cmp(b),
            (Inf { negative: a }, Inf { negative: b }) => b.cmp(a),
            (Inf { negative }, Finite(_)) => {
                if *negative {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (Finite(_), Inf { negative }) => {
                if *negative {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
        })
    }

    /// PTX `min`: a NaN operand yields the other operand.
    pub fn min(&self, o: &FloatVal) -> FloatVal {
        match self.compare(o) {
            None if self.is_nan() => o.clone(),
            None => self.clone(),
            Some(Ordering::Greater) => o.clone(),
            Some(_) => self.clone(),
        }
    }

    /// PTX `max`: a NaN operand yields the other operand.
    pub fn max(&self, o: &FloatVal) -> FloatVal {
        match self.compare(o) {
            None if self.is_nan() => o.clone(),
            None => self.clone(),
            Some(Ordering::Less) => o.clone(),
            Some(_) => self.clone(),
        }
    }

    /// `1 / x`, exactly.
    pub fn recip(&self) -> FloatVal {
        FloatVal::Finite(BigRational::one()).div(self)
    }

    /// Square root, computed in f64 (exact whenever the root is an f64, e.g. `sqrt(9) = 3`).
    pub fn sqrt(&self) -> FloatVal {
        self.via_f64(f64::sqrt)
    }

    /// A function evaluated in f64 (the transcendental instructions); the result is the exact
    /// value of the f64 approximation.
    pub fn via_f64(&self, f: impl Fn(f64) -> f64) -> FloatVal {
        FloatVal::from_f64(f(self.to_f64()))
    }
}

impl fmt::Display for FloatVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FloatVal::Finite(r) => {
                if r.is_integer() {
                    write!(f, "{}", r.numer())
                } else {
                    write!(f, "{}/{} (~{})", r.numer(), r.denom(), self.to_f64())
                }
            }
            FloatVal::Inf { negative: true } => write!(f, "-inf"),
            FloatVal::Inf { negative: false } => write!(f, "inf"),
            FloatVal::NaN => write!(f, "nan"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt32(x: f32) {
        let v = FloatVal::from_f32(x);
        assert_eq!(v.to_bits(FloatFormat::F32, Rounding::NearestEven), x.to_bits() as u64, "{x}");
    }

    #[test]
    fn round_trips() {
        for x in [1.0f32, -2.5, 3.0e38, 1.0e-38, 1.0e-45, f32::MAX, f32::MIN_POSITIVE, 0.1, 123456.79] {
            rt32(x);
        }
        for x in [0.1f64, -1.0e300, 5.0e-324, std::f64::consts::PI] {
            assert_eq!(FloatVal::from_f64(x).to_f64(), x);
        }
    }

    #[test]
    fn rounding_matches_hardware_casts() {
        // f64 → f32 rounding through the exact value agrees with Rust's `as` (nearest even).
        let mut s = 0x1234_5678_9abc_def0u64;
        for _ in 0..2000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let x = f64::from_bits(s);
            if !x.is_finite() {
                continue;
            }
            let v = FloatVal::from_f64(x);
            assert_eq!(v.to_bits(FloatFormat::F32, Rounding::NearestEven), (x as f32).to_bits() as u64, "{x:e}");
        }
        let third = FloatVal::from_int(1).div(&FloatVal::from_int(3));
        let down = f32::from_bits(third.to_bits(FloatFormat::F32, Rounding::Down) as u32);
        let up = f32::from_bits(third.to_bits(FloatFormat::F32, Rounding::Up) as u32);
        assert!(down < up && (down as f64) < 1.0 / 3.0 && (up as f64) > 1.0 / 3.0);
        assert_eq!(FloatVal::from_int(1 << 24 | 1).to_bits(FloatFormat::F32, Rounding::NearestEven), (16777216f32).to_bits() as u64);
        // f16: 65520 rounds to inf, 65504 is the largest finite.
        assert_eq!(FloatVal::from_int(65504).to_bits(FloatFormat::F16, Rounding::NearestEven), 0x7bff);
        assert_eq!(FloatVal::from_int(65520).to_bits(FloatFormat::F16, Rounding::NearestEven), 0x7c00);
        assert_eq!(FloatVal::from_bits(0x3c00, FloatFormat::F16), FloatVal::from_int(1));
        assert_eq!(FloatVal::from_bits(0x3f80, FloatFormat::BF16), FloatVal::from_int(1));
    }

    #[test]
    fn specials_and_ints() {
        let inf = FloatVal::from_f32(f32::INFINITY);
        assert_eq!(inf.sub(&inf), FloatVal::NaN);
        assert_eq!(FloatVal::from_f32(f32::NEG_INFINITY).max(&FloatVal::from_int(3)), FloatVal::from_int(3));
        assert_eq!(FloatVal::NaN.min(&FloatVal::from_int(3)), FloatVal::from_int(3));
        assert_eq!(FloatVal::from_int(1).div(&FloatVal::zero()), inf);
        assert_eq!(FloatVal::from_f32(-2.5).to_int_bits(Rounding::NearestEven, 32, true), (-2i32) as u32 as u64);
        assert_eq!(FloatVal::from_f32(-2.5).to_int_bits(Rounding::Zero, 32, true), (-2i32) as u32 as u64);
        assert_eq!(FloatVal::from_f32(-2.5).to_int_bits(Rounding::Down, 32, true), (-3i32) as u32 as u64);
        assert_eq!(FloatVal::from_f32(3.5).to_int_bits(Rounding::NearestEven, 32, true), 4);
        assert_eq!(FloatVal::from_f32(1e20).to_int_bits(Rounding::Zero, 32, true), i32::MAX as u64);
        assert_eq!(FloatVal::from_f32(-1.0).to_int_bits(Rounding::Zero, 32, false), 0);
        assert_eq!(FloatVal::NaN.to_int_bits(Rounding::Zero, 32, true), 0);
        assert_eq!(FloatVal::from_int(9).sqrt(), FloatVal::from_int(3));
    }
}
