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

/// Exact values larger than this many bits (numerator and denominator together) are rounded.
pub const MAX_EXACT_BITS: u64 = 4096;
/// The mantissa they are rounded to.
pub const WIDE_MANTISSA_BITS: u32 = 1024;

thread_local! {
    static WIDE_ROUNDINGS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many values this thread has rounded to [`WIDE_MANTISSA_BITS`] bits so far: a caller
/// compares it before and after a run to say that the run was not exact (a run stays on its
/// thread, so other checks running meanwhile do not count).
pub fn wide_roundings() -> u64 {
    WIDE_ROUNDINGS.with(|n| n.get())
}

/// `r` rounded (nearest even) to a mantissa of `bits` bits, with any exponent.
fn round_mantissa(r: &BigRational, bits: u32) -> BigRational {
    if r.is_zero() {
        return r.clone();
    }
    let a = r.abs();
    let (p, q) = (a.numer(), a.denom());
    let mut e = p.bits() as i64 - q.bits() as i64;
    let at_least = if e >= 0 { *p >= q << (e as usize) } else { (p << ((-e) as usize)) >= *q };
    if !at_least {
        e -= 1;
    }
    // m = round(a * 2^s) with s = bits - 1 - e, so that m has `bits` bits.
    let s = bits as i64 - 1 - e;
    let (num, den) = if s >= 0 { (p << (s as usize), q.clone()) } else { (p.clone(), q << ((-s) as usize)) };
    let (mut m, rem) = num.div_rem(&den);
    let twice: BigInt = rem << 1usize;
    if twice > den || (twice == den && m.is_odd()) {
        m += 1;
    }
    let mut v = BigRational::from_integer(m);
    if s >= 0 {
        v /= BigRational::from_integer(pow2(s as u32));
    } else {
        v *= BigRational::from_integer(pow2((-s) as u32));
    }
    if r.is_negative() {
        -v
    } else {
        v
    }
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
        let bits = bits.clamp(1, 64);
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

    /// Keeps a computed result within what hardware could produce and the interpreter can
    /// afford: a result that rounds to infinity in `fmt` (the format of the operation) becomes
    /// infinity, as on hardware; a result whose exact numerator and denominator together exceed
    /// [`MAX_EXACT_BITS`] bits (e.g. a Newton iteration, which doubles them each step) is
    /// rounded to a [`WIDE_MANTISSA_BITS`]-bit mantissa, still far beyond f64 precision.
    pub fn normalize(self, fmt: Option<FloatFormat>) -> FloatVal {
        let FloatVal::Finite(r) = &self else { return self };
        let (p, q) = (r.numer().bits(), r.denom().bits());
        if let Some(fmt) = fmt {
            let emax = (1i64 << (fmt.exp_bits() - 1)) - 1;
            if p as i64 - q as i64 >= emax {
                let bits = self.to_bits(fmt, Rounding::NearestEven);
                if let FloatVal::Inf { negative } = FloatVal::from_bits(bits, fmt) {
                    return FloatVal::Inf { negative };
                }
            }
        }
        if p + q > MAX_EXACT_BITS {
            WIDE_ROUNDINGS.with(|n| n.set(n.get() + 1));
            return FloatVal::Finite(round_mantissa(r, WIDE_MANTISSA_BITS));
        }
        self
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
