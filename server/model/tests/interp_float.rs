//! Exact floats: IEEE round trips, rounding directions, specials, float → int conversion.

use model::interp::{FloatFormat, FloatVal, Rounding};

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

#[test]
fn results_stay_bounded() {
    // Overflow in the operation's format is infinity, as on hardware.
    let big = FloatVal::from_f32(3.0e38);
    assert_eq!(big.mul(&FloatVal::from_int(2)).normalize(Some(FloatFormat::F32)), FloatVal::Inf { negative: false });
    assert_eq!(big.mul(&FloatVal::from_int(-2)).normalize(Some(FloatFormat::F64)), big.mul(&FloatVal::from_int(-2)));
    // Newton's iteration for 1/3 doubles the size of the exact value each step; it stays bounded.
    let (a, two) = (FloatVal::from_int(3), FloatVal::from_int(2));
    let mut x = FloatVal::from_f32(0.3);
    let before = model::interp::wide_roundings();
    for _ in 0..40 {
        x = x.mul(&two.sub(&a.mul(&x))).normalize(Some(FloatFormat::F32));
        let r = x.as_rational().unwrap();
        assert!(r.numer().bits() + r.denom().bits() <= 2 * model::interp::MAX_EXACT_BITS);
    }
    assert_eq!(x.to_bits(FloatFormat::F64, Rounding::NearestEven), (1.0f64 / 3.0).to_bits());
    // Each rounding is counted, so a report can say the run was not exact.
    assert!(model::interp::wide_roundings() > before);
}
