//! Exact rationals with a fast path: `i64 / i64` in lowest terms, computed through `i128`, and
//! `BigRational` once a result does not fit. Values met in practice (sums and products of f32
//! inputs) mostly stay small, and the fast path avoids an allocation and a big gcd per operation.

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Q {
    /// Numerator and a positive denominator, coprime.
    Small(i64, i64),
    Big(BigRational),
}

impl Q {
    pub fn from_big(r: &BigRational) -> Q {
        match (r.numer().to_i64(), r.denom().to_i64()) {
            (Some(n), Some(d)) => Q::Small(n, d),
            _ => Q::Big(r.clone()),
        }
    }

    pub fn int(v: i64) -> Q {
        Q::Small(v, 1)
    }

    pub fn to_big(&self) -> BigRational {
        match self {
            Q::Small(n, d) => BigRational::new_raw(BigInt::from(*n), BigInt::from(*d)),
            Q::Big(r) => r.clone(),
        }
    }

    /// `n / d` from `i128`s (any signs, `d != 0`), reduced.
    fn from_i128(n: i128, d: i128) -> Q {
        let (n, d) = if d < 0 { (-n, -d) } else { (n, d) };
        let g = n.gcd(&d);
        let (n, d) = if g > 1 { (n / g, d / g) } else { (n, d) };
        match (i64::try_from(n), i64::try_from(d)) {
            (Ok(n), Ok(d)) => Q::Small(n, d),
            _ => Q::Big(BigRational::new(BigInt::from(n), BigInt::from(d))),
        }
    }

    fn big(r: BigRational) -> Q {
        Q::from_big(&r)
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Q::Small(n, _) => *n == 0,
            Q::Big(r) => r.is_zero(),
        }
    }

    pub fn is_one(&self) -> bool {
        match self {
            Q::Small(n, d) => *n == 1 && *d == 1,
            Q::Big(r) => r.is_one(),
        }
    }

    pub fn is_negative(&self) -> bool {
        match self {
            Q::Small(n, _) => *n < 0,
            Q::Big(r) => r.is_negative(),
        }
    }

    pub fn is_positive(&self) -> bool {
        !self.is_negative() && !self.is_zero()
    }

    pub fn add(&self, other: &Q) -> Q {
        match (self, other) {
            (Q::Small(a, b), Q::Small(c, d)) => {
                if b == d {
                    Q::from_i128(*a as i128 + *c as i128, *b as i128)
                } else {
                    Q::from_i128(*a as i128 * *d as i128 + *c as i128 * *b as i128, *b as i128 * *d as i128)
                }
            }
            _ => Q::big(self.to_big() + other.to_big()),
        }
    }

    pub fn neg(&self) -> Q {
        match self {
            Q::Small(n, d) => match n.checked_neg() {
                Some(m) => Q::Small(m, *d),
                None => Q::Big(-self.to_big()),
            },
            Q::Big(r) => Q::Big(-r),
        }
    }

    pub fn sub(&self, other: &Q) -> Q {
        self.add(&other.neg())
    }

    pub fn mul(&self, other: &Q) -> Q {
        match (self, other) {
            (Q::Small(a, b), Q::Small(c, d)) => Q::from_i128(*a as i128 * *c as i128, *b as i128 * *d as i128),
            _ => Q::big(self.to_big() * other.to_big()),
        }
    }

    /// `self / other`; `other` must be non-zero.
    pub fn div(&self, other: &Q) -> Q {
        match (self, other) {
            (Q::Small(a, b), Q::Small(c, d)) => Q::from_i128(*a as i128 * *d as i128, *b as i128 * *c as i128),
            _ => Q::big(self.to_big() / other.to_big()),
        }
    }

    pub fn abs(&self) -> Q {
        if self.is_negative() {
            self.neg()
        } else {
            self.clone()
        }
    }

    pub fn floor(&self) -> Q {
        match self {
            Q::Small(n, d) => Q::Small(n.div_floor(d), 1),
            Q::Big(r) => Q::big(r.floor()),
        }
    }

    pub fn to_f64(&self) -> Option<f64> {
        match self {
            Q::Small(n, d) => Some(*n as f64 / *d as f64),
            Q::Big(r) => r.to_f64(),
        }
    }

    /// Whether the value is exactly an f64 (a short numerator over a power of two), cheaply.
    pub fn is_double(&self) -> bool {
        match self {
            Q::Small(n, d) => n.unsigned_abs() < (1u64 << 53) && d.count_ones() == 1,
            Q::Big(r) => {
                let (n, d) = (r.numer().magnitude(), r.denom().magnitude());
                n.bits() <= 53 && d.count_ones() == 1 && d.bits() <= 1000
            }
        }
    }
}

impl PartialOrd for Q {
    fn partial_cmp(&self, other: &Q) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Q {
    fn cmp(&self, other: &Q) -> Ordering {
        match (self, other) {
            (Q::Small(a, b), Q::Small(c, d)) => (*a as i128 * *d as i128).cmp(&(*c as i128 * *b as i128)),
            _ => self.to_big().cmp(&other.to_big()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn big(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    fn edge() -> impl Strategy<Value = i64> {
        prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(i64::MIN + 1), Just(0), Just(1), Just(-1), -1000i64..1000, any::<i64>()]
    }

    fn nonzero() -> impl Strategy<Value = i64> {
        edge().prop_filter("non-zero", |d| *d != 0)
    }

    proptest! {
        #[test]
        fn fast_path_agrees_with_big_rationals(a in edge(), b in nonzero(), c in edge(), d in nonzero()) {
            let (x, y) = (big(a, b), big(c, d));
            let (p, q) = (Q::from_big(&x), Q::from_big(&y));
            prop_assert_eq!(p.add(&q).to_big(), &x + &y);
            prop_assert_eq!(p.sub(&q).to_big(), &x - &y);
            prop_assert_eq!(p.mul(&q).to_big(), &x * &y);
            prop_assert_eq!(p.neg().to_big(), -&x);
            prop_assert_eq!(p.abs().to_big(), x.abs());
            prop_assert_eq!(p.floor().to_big(), x.floor());
            prop_assert_eq!(p.cmp(&q), x.cmp(&y));
            if !y.is_zero() {
                prop_assert_eq!(p.div(&q).to_big(), &x / &y);
            }
            // Results are canonical, so equal values compare equal structurally.
            prop_assert_eq!(Q::from_big(&p.add(&q).to_big()), p.add(&q));
        }
    }
}
