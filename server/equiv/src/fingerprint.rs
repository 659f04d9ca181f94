//! Random interpretation (Gulwani and Necula's name for it; Schwartz–Zippel is the lemma behind
//! it): deciding that two normal forms the rewriting rules of [`crate::nf`] left different are
//! nevertheless equal, by evaluating both in the field of integers modulo a 61-bit prime at
//! random points.
//!
//! Normal forms are sound but not complete. The common miss is a product of two long sums that
//! one side keeps grouped (too large to expand) and the other computes differently: a layer norm's
//! `E[x²] - mean²` against the reference's `mean((x - mean)²)` is one identity of degree 2, but
//! over a 1000-wide row its expansion has half a million monomials. Evaluated modulo `p`, a group
//! is just the value of its sum, so the two sides meet in time linear in their size.
//!
//! How it is sound: every input element (and `π`, `ln 2`) gets an independent uniform value mod
//! `p`; `+`, `·` and `1/x` are the field's, so sums, products and groups are evaluated exactly as
//! the polynomial (or rational function) they denote; every other function (`sqrt`, `exp`,
//! `max`, comparisons, selects) is a *random oracle*: a pseudo-random value determined by the
//! function and its arguments' values, so equal arguments give equal results (congruence) and
//! nothing else is assumed about it. Two forms that are equal under field axioms and congruence
//! are equal as real functions, and they always get equal values here. Two forms that are not
//! equal in that sense agree at a random point with probability at most `d/p` (`d` the degree of
//! their difference, `p ≈ 2.3·10¹⁸`); [`TRIALS`] independent points multiply that. A value that
//! cannot be computed (a division by a value that is 0 mod `p`, a denominator divisible by `p`)
//! makes the check answer "not shown equal": every failure is on the uncertified side.
//!
//! The check is only ever used to *agree*: forms it cannot tell apart are reported as
//! `verified` with this method named in the report's assumptions, and forms it tells apart stay
//! as they were (a counterexample still has to come from a concrete run).

use crate::nf::{Atom, AtomId, Cond, CondId, Func, Mono, Nf, PolyId, Val};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive};
use std::collections::HashMap;

/// The Mersenne prime 2^61 - 1.
pub const PRIME: u64 = (1 << 61) - 1;

/// Independent random points per comparison.
pub const TRIALS: u64 = 2;

/// [`TRIALS`] random points, each with its memo, shared by every comparison of one shape (a
/// row's sums are evaluated once, not once per element; the bound on a wrong "equal" holds for
/// each pair, whatever else is compared at the same points).
pub struct Points<'a> {
    points: Vec<Fingerprint<'a>>,
}

impl<'a> Points<'a> {
    pub fn new(nf: &'a Nf, seed: u64) -> Points<'a> {
        Points { points: (0..TRIALS).map(|t| Fingerprint::new(nf, mix(seed ^ mix(t + 1)))).collect() }
    }

    /// Whether `a` and `b` agree at every point (see the module documentation).
    pub fn agree(&mut self, a: &Val, b: &Val) -> bool {
        self.points.iter_mut().all(|f| matches!((f.val(a), f.val(b)), (Some(x), Some(y)) if x == y))
    }
}

/// Whether `a` and `b` agree at [`TRIALS`] fresh random points.
pub fn agree(nf: &Nf, a: &Val, b: &Val, seed: u64) -> bool {
    Points::new(nf, seed).agree(a, b)
}

/// The values of normal forms at one random point (memoised per interned atom, sum and
/// condition, so a shared sum is evaluated once).
pub struct Fingerprint<'a> {
    nf: &'a Nf,
    seed: u64,
    atoms: HashMap<AtomId, Option<u64>>,
    polys: HashMap<PolyId, Option<u64>>,
    conds: HashMap<CondId, Option<u64>>,
}

impl<'a> Fingerprint<'a> {
    pub fn new(nf: &'a Nf, seed: u64) -> Fingerprint<'a> {
        Fingerprint { nf, seed, atoms: HashMap::new(), polys: HashMap::new(), conds: HashMap::new() }
    }

    /// The value mod [`PRIME`]; infinities have none (they only compare structurally).
    pub fn val(&mut self, v: &Val) -> Option<u64> {
        match v {
            Val::Finite(p) => self.terms(&p.terms),
            Val::NegInf | Val::PosInf => None,
        }
    }

    fn terms(&mut self, terms: &[(Mono, BigRational)]) -> Option<u64> {
        let mut sum = 0;
        let mut last: Option<(&BigRational, u64)> = None;
        for (m, c) in terms {
            // Sums have long runs of equal coefficients: each distinct one is reduced once.
            let coeff = match last {
                Some((prev, v)) if prev == c => v,
                _ => {
                    let v = rational(c)?;
                    last = Some((c, v));
                    v
                }
            };
            let mut v = coeff;
            for &(a, k) in &m.factors {
                v = mul(v, power(self.atom(a)?, k)?);
            }
            if let Some(e) = m.exp {
                let arg = self.poly(e)?;
                v = mul(v, self.oracle(&[TAG_EXP, arg]));
            }
            sum = add(sum, v);
        }
        Some(sum)
    }

    fn poly(&mut self, id: PolyId) -> Option<u64> {
        if let Some(v) = self.polys.get(&id) {
            return *v;
        }
        let v = self.terms(&self.nf.poly_of(id).terms);
        self.polys.insert(id, v);
        v
    }

    fn atom(&mut self, id: AtomId) -> Option<u64> {
        if let Some(v) = self.atoms.get(&id) {
            return *v;
        }
        let v = match self.nf.atom_of(id) {
            Atom::Input { param, elem } => Some(self.oracle(&[TAG_INPUT, *param as u64, *elem])),
            Atom::Initial { param, elem } => Some(self.oracle(&[TAG_INITIAL, *param as u64, *elem])),
            Atom::Pi => Some(self.oracle(&[TAG_PI])),
            Atom::Ln2 => Some(self.oracle(&[TAG_LN2])),
            Atom::Apply(Func::Group, p) => self.poly(*p),
            Atom::Apply(Func::Inv, p) => self.poly(*p).and_then(inverse),
            Atom::Apply(f, p) => {
                let arg = self.poly(*p)?;
                Some(self.oracle(&[TAG_APPLY, func_tag(*f), arg]))
            }
            Atom::Max(ps) | Atom::Min(ps) => {
                // Max and min are symmetric: the operands' values, sorted, are the key.
                let mut args = ps.iter().map(|p| self.poly(*p)).collect::<Option<Vec<u64>>>()?;
                args.sort_unstable();
                let tag = if matches!(self.nf.atom_of(id), Atom::Max(_)) { TAG_MAX } else { TAG_MIN };
                let key: Vec<u64> = std::iter::once(tag).chain(args).collect();
                Some(self.oracle(&key))
            }
            Atom::Select(c, a, b) => {
                let (c, a, b) = (self.cond(*c)?, self.poly(*a)?, self.poly(*b)?);
                Some(self.oracle(&[TAG_SELECT, c, a, b]))
            }
        };
        self.atoms.insert(id, v);
        v
    }

    fn cond(&mut self, id: CondId) -> Option<u64> {
        if let Some(v) = self.conds.get(&id) {
            return *v;
        }
        let v = match self.nf.cond_of(id) {
            Cond::Const(b) => Some(self.oracle(&[TAG_CONST, *b as u64])),
            Cond::Cmp(rel, p) => {
                let arg = self.poly(*p)?;
                Some(self.oracle(&[TAG_CMP, *rel as u64, arg]))
            }
            Cond::Not(c) => {
                let inner = self.cond(*c)?;
                Some(self.oracle(&[TAG_NOT, inner]))
            }
            Cond::And(cs) | Cond::Or(cs) => {
                let tag = if matches!(self.nf.cond_of(id), Cond::And(_)) { TAG_AND } else { TAG_OR };
                let mut args = cs.iter().map(|c| self.cond(*c)).collect::<Option<Vec<u64>>>()?;
                args.sort_unstable();
                args.dedup();
                let key: Vec<u64> = std::iter::once(tag).chain(args).collect();
                Some(self.oracle(&key))
            }
        };
        self.conds.insert(id, v);
        v
    }

    /// A pseudo-random value mod [`PRIME`] determined by the point's seed and `key`.
    fn oracle(&self, key: &[u64]) -> u64 {
        let mut h = mix(self.seed);
        for &k in key {
            h = mix(h ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        }
        h % PRIME
    }
}

const TAG_INPUT: u64 = 1;
const TAG_INITIAL: u64 = 2;
const TAG_PI: u64 = 3;
const TAG_LN2: u64 = 4;
const TAG_APPLY: u64 = 5;
const TAG_MAX: u64 = 6;
const TAG_MIN: u64 = 7;
const TAG_SELECT: u64 = 8;
const TAG_EXP: u64 = 9;
const TAG_CONST: u64 = 10;
const TAG_CMP: u64 = 11;
const TAG_NOT: u64 = 12;
const TAG_AND: u64 = 13;
const TAG_OR: u64 = 14;

fn func_tag(f: Func) -> u64 {
    match f {
        Func::Sqrt => 1,
        Func::Log => 2,
        Func::Tanh => 3,
        Func::Erf => 4,
        Func::Sin => 5,
        Func::Cos => 6,
        Func::Abs => 7,
        Func::Inv => 8,
        Func::Group => 9,
    }
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn add(a: u64, b: u64) -> u64 {
    let s = a + b; // both < 2^61: no overflow
    if s >= PRIME {
        s - PRIME
    } else {
        s
    }
}

fn mul(a: u64, b: u64) -> u64 {
    // Mersenne reduction: 2^61 ≡ 1, so the high part folds onto the low one.
    let x = a as u128 * b as u128;
    let folded = (x as u64 & PRIME) + (x >> 61) as u64;
    let r = (folded & PRIME) + (folded >> 61);
    if r >= PRIME {
        r - PRIME
    } else {
        r
    }
}

fn pow(mut base: u64, mut e: u64) -> u64 {
    let mut acc = 1;
    while e > 0 {
        if e & 1 == 1 {
            acc = mul(acc, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    acc
}

/// The field inverse; none for 0.
fn inverse(a: u64) -> Option<u64> {
    (a != 0).then(|| pow(a, PRIME - 2))
}

fn power(a: u64, k: i32) -> Option<u64> {
    let base = if k < 0 { inverse(a)? } else { a };
    Some(pow(base, k.unsigned_abs() as u64))
}

fn integer(n: &BigInt) -> u64 {
    let r = match n.to_i64() {
        Some(v) => v.rem_euclid(PRIME as i64) as u64,
        None => {
            let m = n.abs() % BigInt::from(PRIME);
            let v = m.to_u64().unwrap_or(0);
            if n.is_negative() && v != 0 {
                PRIME - v
            } else {
                v
            }
        }
    };
    r % PRIME
}

/// A rational mod [`PRIME`]; none when its denominator is a multiple of the prime.
fn rational(r: &BigRational) -> Option<u64> {
    let d = inverse(integer(r.denom()))?;
    Some(mul(integer(r.numer()), d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::One;

    fn input(nf: &mut Nf, elem: u64) -> Val {
        nf.input(0, elem)
    }

    fn sum(nf: &mut Nf, vals: Vec<Val>) -> Val {
        vals.into_iter().reduce(|a, b| nf.add(a, b).unwrap()).unwrap()
    }

    fn c(n: i64) -> Val {
        Nf::constant(BigRational::from_integer(n.into()))
    }

    /// `Σ (x_i - m)² / n` against `Σ x_i² / n - m²` over a row long enough that both products
    /// of sums stay grouped: the normal forms differ, the identity holds.
    fn variances(nf: &mut Nf, n: i64) -> (Val, Val) {
        let xs: Vec<Val> = (0..n as u64).map(|i| input(nf, i)).collect();
        let total = sum(nf, xs.clone());
        let mean = nf.div(total, c(n)).unwrap();
        let centred: Vec<Val> = xs
            .iter()
            .map(|x| {
                let d = nf.sub(x.clone(), mean.clone()).unwrap();
                nf.mul(d.clone(), d).unwrap()
            })
            .collect();
        let two_pass = {
            let s = sum(nf, centred);
            nf.div(s, c(n)).unwrap()
        };
        let squares: Vec<Val> = xs.iter().map(|x| nf.mul(x.clone(), x.clone()).unwrap()).collect();
        let one_pass = {
            let s = sum(nf, squares);
            let e2 = nf.div(s, c(n)).unwrap();
            let m2 = nf.mul(mean.clone(), mean).unwrap();
            nf.sub(e2, m2).unwrap()
        };
        (two_pass, one_pass)
    }

    #[test]
    fn agrees_where_grouping_left_equal_forms_apart() {
        let mut nf = Nf::default();
        let (a, b) = variances(&mut nf, 40);
        assert_ne!(a, b, "the normal forms should differ (both products stay grouped)");
        assert!(agree(&nf, &a, &b, 7));
        // Through a function: sqrt(var + eps) on both sides.
        let eps = Nf::constant(BigRational::new(1.into(), 100_000.into()));
        let (sa, sb) = (nf.add(a, eps.clone()).unwrap(), nf.add(b, eps).unwrap());
        let (ra, rb) = (nf.sqrt(sa).unwrap(), nf.sqrt(sb).unwrap());
        let (ia, ib) = (nf.inv(ra).unwrap(), nf.inv(rb).unwrap());
        assert_ne!(ia, ib);
        assert!(agree(&nf, &ia, &ib, 7));
    }

    #[test]
    fn tells_apart_what_differs() {
        let mut nf = Nf::default();
        let (a, b) = variances(&mut nf, 40);
        // A missing element, a wrong divisor, a slightly different constant.
        let x0 = input(&mut nf, 0);
        let x0sq = nf.mul(x0.clone(), x0).unwrap();
        let small = nf.div(x0sq, c(40)).unwrap();
        let missing = nf.sub(b.clone(), small).unwrap();
        assert!(!agree(&nf, &a, &missing, 7));
        let scaled = nf.mul(b.clone(), Nf::constant(BigRational::new(40.into(), 39.into()))).unwrap();
        assert!(!agree(&nf, &a, &scaled, 7));
        let eps = |k: i64| Nf::constant(BigRational::new(1.into(), k.into()));
        let (sa, sb) = (nf.add(a, eps(100_000)).unwrap(), nf.add(b, eps(100_001)).unwrap());
        let (ra, rb) = (nf.sqrt(sa).unwrap(), nf.sqrt(sb).unwrap());
        assert!(!agree(&nf, &ra, &rb, 7));
    }

    #[test]
    fn functions_are_congruent_and_nothing_more() {
        let mut nf = Nf::default();
        let x = input(&mut nf, 0);
        let y = input(&mut nf, 1);
        // max is symmetric: both orders agree; max and min do not.
        let (m1, m2) = (nf.max(x.clone(), y.clone()).unwrap(), nf.max(y.clone(), x.clone()).unwrap());
        assert!(agree(&nf, &m1, &m2, 1));
        let mn = nf.min(x.clone(), y.clone()).unwrap();
        assert!(!agree(&nf, &m1, &mn, 1));
        // sqrt(x)·sqrt(y) is not sqrt(x·y) as far as congruence knows: not claimed equal.
        let (sx, sy) = (nf.sqrt(x.clone()).unwrap(), nf.sqrt(y.clone()).unwrap());
        let prod = nf.mul(sx, sy).unwrap();
        let xy = nf.mul(x, y).unwrap();
        let sxy = nf.sqrt(xy).unwrap();
        assert!(!agree(&nf, &prod, &sxy, 1));
    }

    #[test]
    fn field_arithmetic() {
        assert_eq!(mul(inverse(12345).unwrap(), 12345), 1);
        assert_eq!(rational(&BigRational::new((-3).into(), 4.into())).map(|v| mul(v, 4)), Some(PRIME - 3));
        assert_eq!(rational(&BigRational::new(1.into(), BigInt::from(PRIME))), None);
        assert_eq!(power(5, -1).map(|v| mul(v, 5)), Some(1));
        assert_eq!(integer(&(BigInt::from(PRIME) * BigInt::from(PRIME) + BigInt::one())), 1);
        // The fast reduction against the obvious one.
        for (a, b) in [(PRIME - 1, PRIME - 1), (PRIME - 1, 2), (1 << 60, 1 << 60), (123_456_789_012_345, 987_654_321_098_765)] {
            assert_eq!(mul(a, b) as u128, (a as u128 * b as u128) % PRIME as u128);
        }
    }
}
