//! Normal forms: values as polynomials with exact rational coefficients over *atoms* (input
//! elements, irrational constants, and applications of functions the algebra does not see
//! into), where equal normal forms mean equal values under exact arithmetic. Both the kernel's
//! terms and the reference's graph are brought into this form and compared element by element.
//!
//! The rules, each an identity of real arithmetic:
//! - sums and products are expanded and collected in canonical order, so a tree reduction equals
//!   a sequential sum, while a missing or extra element does not; a product of two sums whose
//!   expansion would exceed [`EXPAND_LIMIT`] monomials is kept as a product of grouped factors
//!   (the same on both sides when both compute it the same way);
//! - `exp(a)·exp(b) = exp(a+b)` (exponentials live in a monomial's exponent part), `exp(0) = 1`,
//!   `log(exp(a)) = a`; `2^x = exp(x·ln2)`, `log2(x) = log(x)/ln2`;
//! - `1/P` of a monomial inverts its powers; of a sum it factors out the exponential common to all
//!   its terms and the leading coefficient, then becomes the atom `inv(P)` (so
//!   `exp(x-m)/Σexp(y-m) = exp(x)/Σexp(y)`: softmax with and without the max shift agree);
//!   `rsqrt(x) = 1/sqrt(x)`; `sqrt(c·P) = sqrt(c)·sqrt(P)`, `sqrt(r)² = r`;
//! - `max`/`min` are flattened, deduplicated, sorted n-ary operators; `max(-inf, x) = x`;
//!   `select(a > b, a, b) = max(a, b)`;
//! - odd functions take the sign out (`tanh(-x) = -tanh(x)`), even ones drop it.
//!
//! Normal forms are sound (equal forms are equal values) but not complete: different forms are
//! then compared numerically to find a counterexample (see [`crate::numeric`]).

use num_bigint::BigInt;

use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::collections::HashMap;
use std::hash::Hash;

/// Products of two sums with more monomials than this are kept unexpanded.
pub const EXPAND_LIMIT: usize = 512;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AtomId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PolyId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CondId(pub u32);

/// The functions kept as atoms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Func {
    Sqrt,
    Log,
    Tanh,
    Erf,
    Sin,
    Cos,
    Abs,
    /// `1/P` for a sum `P`.
    Inv,
    /// A sum kept unexpanded inside a product.
    Group,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    /// Element `elem` of the input bound to kernel parameter `param`.
    Input {
        param: u32,
        elem: u64,
    },
    /// What element `elem` of output `param` held before the kernel ran.
    Initial {
        param: u32,
        elem: u64,
    },
    Pi,
    Ln2,
    Apply(Func, PolyId),
    Max(Vec<PolyId>),
    Min(Vec<PolyId>),
    Select(CondId, PolyId, PolyId),
}

/// Comparisons, as `P op 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rel {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Rel {
    fn flip(self) -> Rel {
        match self {
            Rel::Lt => Rel::Gt,
            Rel::Le => Rel::Ge,
            Rel::Gt => Rel::Lt,
            Rel::Ge => Rel::Le,
            r => r,
        }
    }

    fn negate(self) -> Rel {
        match self {
            Rel::Eq => Rel::Ne,
            Rel::Ne => Rel::Eq,
            Rel::Lt => Rel::Ge,
            Rel::Le => Rel::Gt,
            Rel::Gt => Rel::Le,
            Rel::Ge => Rel::Lt,
        }
    }

    pub fn holds(self, o: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            Rel::Eq => o == Equal,
            Rel::Ne => o != Equal,
            Rel::Lt => o == Less,
            Rel::Le => o != Greater,
            Rel::Gt => o == Greater,
            Rel::Ge => o != Less,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Rel::Eq => "==",
            Rel::Ne => "!=",
            Rel::Lt => "<",
            Rel::Le => "<=",
            Rel::Gt => ">",
            Rel::Ge => ">=",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cond {
    Const(bool),
    /// `P rel 0`, with `P`'s leading coefficient 1.
    Cmp(Rel, PolyId),
    Not(CondId),
    And(Vec<CondId>),
    Or(Vec<CondId>),
}

/// A product of atom powers and one exponential.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Mono {
    /// Sorted by atom, nonzero powers.
    pub factors: Vec<(AtomId, i32)>,
    /// `exp(P)`, or none (`exp(0)`).
    pub exp: Option<PolyId>,
}

/// A sum of monomials with nonzero rational coefficients, sorted by monomial.
#[derive(Clone, Debug, Default)]
pub struct Poly {
    pub terms: Vec<(Mono, BigRational)>,
}

// Coefficients are always in lowest terms (every arithmetic result is), so polynomials are
// compared and hashed by their terms' parts. `Ratio`'s own `Hash` expands each coefficient into
// a continued fraction, and that dominated interning long sums: a LayerNorm row's `x - mean`,
// grouped once per element.
impl PartialEq for Poly {
    fn eq(&self, other: &Poly) -> bool {
        self.terms.len() == other.terms.len()
            && self.terms.iter().zip(&other.terms).all(|((m1, c1), (m2, c2))| m1 == m2 && c1.numer() == c2.numer() && c1.denom() == c2.denom())
    }
}

impl Eq for Poly {}

impl Hash for Poly {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.terms.len().hash(state);
        for (m, c) in &self.terms {
            m.hash(state);
            c.numer().hash(state);
            c.denom().hash(state);
        }
    }
}

/// A value: a polynomial, or an infinity (only `-inf` as a max/min identity, and infinities in
/// `exp`, are given meaning; anything else with an infinity is an error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    Finite(Poly),
    NegInf,
    PosInf,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NfError {
    DivisionByZero,
    /// The time budget ran out (or the check was cancelled).
    Budget,
    /// The process reached the memory ceiling.
    Memory,
    Infinity(&'static str),
    Unsupported(String),
}

impl std::fmt::Display for NfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NfError::DivisionByZero => write!(f, "division by zero"),
            NfError::Budget => write!(f, "the time budget for this kernel ran out"),
            NfError::Memory => write!(f, "the memory ceiling for checks ({} MB) was reached", model::budget::memory_ceiling() >> 20),
            NfError::Infinity(what) => write!(f, "an infinity in {what}"),
            NfError::Unsupported(s) => write!(f, "{s}"),
        }
    }
}

pub type R<T> = Result<T, NfError>;

/// Items by id, each stored once: the index maps an item's hash to the ids with that hash (a
/// row's thousands of grouped sums, thousands of terms each, were held twice, as items and as
/// keys).
struct Interner<T: Hash + Eq> {
    items: Vec<T>,
    index: HashMap<u64, Vec<u32>>,
}

impl<T: Hash + Eq> Default for Interner<T> {
    fn default() -> Self {
        Interner { items: Vec::new(), index: HashMap::new() }
    }
}

impl<T: Hash + Eq> Interner<T> {
    fn hash_of(t: &T) -> u64 {
        use std::hash::Hasher;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    }

    /// The id of an item interned before.
    fn get(&self, t: &T) -> Option<u32> {
        self.index.get(&Self::hash_of(t))?.iter().copied().find(|&i| self.items[i as usize] == *t)
    }

    fn intern(&mut self, t: T) -> u32 {
        let h = Self::hash_of(&t);
        if let Some(i) = self.index.get(&h).and_then(|ids| ids.iter().copied().find(|&i| self.items[i as usize] == t)) {
            return i;
        }
        let i = self.items.len() as u32;
        self.items.push(t);
        self.index.entry(h).or_default().push(i);
        i
    }
}

/// The shared store of atoms, interned polynomials and conditions: both sides of a comparison
/// must use the same one, so that equal structures get equal ids.
#[derive(Default)]
pub struct Nf {
    atoms: Interner<Atom>,
    polys: Interner<Poly>,
    conds: Interner<Cond>,
    /// Inverses of sums already computed (a softmax divides every element by the same sum).
    inverses: HashMap<PolyId, Val>,
}

fn rat(n: i64) -> BigRational {
    BigRational::from_integer(BigInt::from(n))
}

impl Poly {
    pub fn zero() -> Poly {
        Poly::default()
    }

    pub fn constant(c: BigRational) -> Poly {
        if c.is_zero() {
            Poly::zero()
        } else {
            Poly { terms: vec![(Mono::default(), c)] }
        }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value if it is a rational constant.
    pub fn as_constant(&self) -> Option<BigRational> {
        match self.terms.as_slice() {
            [] => Some(BigRational::zero()),
            [(m, c)] if *m == Mono::default() => Some(c.clone()),
            _ => None,
        }
    }

    fn mono(m: Mono, c: BigRational) -> Poly {
        if c.is_zero() {
            Poly::zero()
        } else {
            Poly { terms: vec![(m, c)] }
        }
    }

    /// `self + other`, in place.
    pub fn add_assign(&mut self, other: Poly) {
        if other.terms.len() * 8 < self.terms.len() {
            // Few terms into many: insert each (cheap memmoves, no rebuild).
            for (m, c) in other.terms {
                match self.terms.binary_search_by(|(x, _)| x.cmp(&m)) {
                    Ok(i) => {
                        self.terms[i].1 += c;
                        if self.terms[i].1.is_zero() {
                            self.terms.remove(i);
                        }
                    }
                    Err(i) => self.terms.insert(i, (m, c)),
                }
            }
            return;
        }
        let a = std::mem::take(&mut self.terms);
        let mut out = Vec::with_capacity(a.len() + other.terms.len());
        let (mut i, mut j) = (a.into_iter().peekable(), other.terms.into_iter().peekable());
        loop {
            match (i.peek(), j.peek()) {
                (Some((x, _)), Some((y, _))) => match x.cmp(y) {
                    std::cmp::Ordering::Less => out.push(i.next().expect("peeked")),
                    std::cmp::Ordering::Greater => out.push(j.next().expect("peeked")),
                    std::cmp::Ordering::Equal => {
                        let (m, c1) = i.next().expect("peeked");
                        let (_, c2) = j.next().expect("peeked");
                        let c = c1 + c2;
                        if !c.is_zero() {
                            out.push((m, c));
                        }
                    }
                },
                (Some(_), None) => out.push(i.next().expect("peeked")),
                (None, Some(_)) => out.push(j.next().expect("peeked")),
                (None, None) => break,
            }
        }
        self.terms = out;
    }

    pub fn scale(mut self, c: &BigRational) -> Poly {
        if c.is_zero() {
            return Poly::zero();
        }
        if c.is_one() {
            return self;
        }
        // Sums have long runs of equal coefficients (`Σ x/768`): each distinct one is multiplied
        // (and reduced) once.
        let mut last: Option<(BigRational, BigRational)> = None;
        for (_, k) in &mut self.terms {
            match &last {
                Some((from, to)) if from == k => *k = to.clone(),
                _ => {
                    let scaled = &*k * c;
                    last = Some((std::mem::replace(k, scaled.clone()), scaled));
                }
            }
        }
        self
    }

    fn from_terms(mut terms: Vec<(Mono, BigRational)>) -> Poly {
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Mono, BigRational)> = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            match out.last_mut() {
                Some((lm, lc)) if *lm == m => *lc += c,
                _ => out.push((m, c)),
            }
        }
        out.retain(|(_, c)| !c.is_zero());
        Poly { terms: out }
    }

    /// The leading coefficient (of the first monomial).
    fn leading(&self) -> Option<&BigRational> {
        self.terms.first().map(|(_, c)| c)
    }
}

impl Nf {
    pub fn atom(&mut self, a: Atom) -> AtomId {
        AtomId(self.atoms.intern(a))
    }

    pub fn atom_of(&self, id: AtomId) -> &Atom {
        &self.atoms.items[id.0 as usize]
    }

    pub fn poly_id(&mut self, p: Poly) -> PolyId {
        PolyId(self.polys.intern(p))
    }

    pub fn poly_of(&self, id: PolyId) -> &Poly {
        &self.polys.items[id.0 as usize]
    }

    pub fn cond_of(&self, id: CondId) -> &Cond {
        &self.conds.items[id.0 as usize]
    }

    fn cond(&mut self, c: Cond) -> CondId {
        CondId(self.conds.intern(c))
    }

    pub fn atom_poly(&mut self, a: Atom) -> Poly {
        let id = self.atom(a);
        Poly::mono(Mono { factors: vec![(id, 1)], exp: None }, BigRational::one())
    }

    pub fn input(&mut self, param: u32, elem: u64) -> Val {
        Val::Finite(self.atom_poly(Atom::Input { param, elem }))
    }

    pub fn constant(c: BigRational) -> Val {
        Val::Finite(Poly::constant(c))
    }

    pub fn add(&mut self, a: Val, b: Val) -> R<Val> {
        Ok(match (a, b) {
            (Val::Finite(mut p), Val::Finite(q)) => {
                p.add_assign(q);
                Val::Finite(p)
            }
            (Val::NegInf, Val::PosInf) | (Val::PosInf, Val::NegInf) => return Err(NfError::Infinity("inf - inf")),
            (Val::NegInf, _) | (_, Val::NegInf) => Val::NegInf,
            (Val::PosInf, _) | (_, Val::PosInf) => Val::PosInf,
        })
    }

    pub fn neg(&mut self, a: Val) -> Val {
        match a {
            Val::Finite(p) => Val::Finite(p.scale(&rat(-1))),
            Val::NegInf => Val::PosInf,
            Val::PosInf => Val::NegInf,
        }
    }

    pub fn sub(&mut self, a: Val, b: Val) -> R<Val> {
        let nb = self.neg(b);
        self.add(a, nb)
    }

    pub fn mul(&mut self, a: Val, b: Val) -> R<Val> {
        match (a, b) {
            (Val::Finite(p), Val::Finite(q)) => Ok(Val::Finite(self.mul_poly(&p, &q))),
            (Val::Finite(p), inf) | (inf, Val::Finite(p)) => match p.as_constant() {
                Some(c) if c.is_positive() => Ok(inf),
                Some(c) if c.is_negative() => Ok(self.neg(inf)),
                _ => Err(NfError::Infinity("a product")),
            },
            _ => Err(NfError::Infinity("a product")),
        }
    }

    pub fn mul_poly(&mut self, p: &Poly, q: &Poly) -> Poly {
        if p.is_zero() || q.is_zero() {
            return Poly::zero();
        }
        if let Some(c) = p.as_constant() {
            return q.clone().scale(&c);
        }
        if let Some(c) = q.as_constant() {
            return p.clone().scale(&c);
        }
        if p.terms.len() > 1 && q.terms.len() > 1 && p.terms.len() * q.terms.len() > EXPAND_LIMIT {
            let (gp, cp) = self.group(p);
            // A square (`d * d` for a variance) groups its sum once.
            let (gq, cq) = if p == q { (gp.clone(), cp.clone()) } else { self.group(q) };
            let m = self.mono_mul(&gp, &gq);
            return m.scale(&(cp * cq));
        }
        for (many, one) in [(p, q), (q, p)] {
            if let [(m, c)] = one.terms.as_slice() {
                if let Some(product) = self.times_inert(many, m, c) {
                    return product;
                }
            }
        }
        let mut terms = Vec::with_capacity(p.terms.len() * q.terms.len());
        let mut extra = Poly::zero();
        for (m1, c1) in &p.terms {
            for (m2, c2) in &q.terms {
                let prod = self.mono_mul(m1, m2);
                let c = c1 * c2;
                if prod.terms.len() == 1 && prod.terms[0].1.is_one() {
                    terms.push((prod.terms[0].0.clone(), c));
                } else {
                    extra.add_assign(prod.scale(&c));
                }
            }
        }
        let mut out = Poly::from_terms(terms);
        out.add_assign(extra);
        out
    }

    /// `p · c·m` term by term, when no rule of [`Nf::reduce`] can apply to any product: both
    /// monomials are reduced (square roots at power one), no square root is in both, no sum has
    /// its inverse on one side and its group on the other, every inverse is of a sum too long to
    /// be divided out (over four terms), and at most one side has an exponential. Then each
    /// product is the merged factor list, which is what [`Nf::mono_mul`] returns, without its
    /// per-term work: a row of `(x - mean) · rstd · gamma` multiplies thousands of terms by one
    /// monomial per element.
    fn times_inert(&self, p: &Poly, m: &Mono, c: &BigRational) -> Option<Poly> {
        let (mut roots, mut inverses, mut groups) = (Vec::new(), Vec::new(), Vec::new());
        for &(a, k) in &m.factors {
            match self.atom_of(a) {
                Atom::Apply(Func::Sqrt, _) if k == 1 => roots.push(a),
                Atom::Apply(Func::Inv, q) if self.poly_of(*q).terms.len() > 4 => inverses.push(*q),
                Atom::Apply(Func::Group, q) => groups.push(*q),
                Atom::Apply(Func::Sqrt | Func::Inv, _) => return None,
                _ => {}
            }
        }
        let inert = |t: &Mono| {
            !(t.exp.is_some() && m.exp.is_some())
                && t.factors.iter().all(|&(a, k)| match self.atom_of(a) {
                    Atom::Apply(Func::Sqrt, _) => k == 1 && !roots.contains(&a),
                    Atom::Apply(Func::Inv, q) => self.poly_of(*q).terms.len() > 4 && !groups.contains(q),
                    Atom::Apply(Func::Group, q) => !inverses.contains(q),
                    _ => true,
                })
        };
        if !p.terms.iter().all(|(t, _)| inert(t)) {
            return None;
        }
        let mut terms = Vec::with_capacity(p.terms.len());
        // Runs of equal coefficients (`Σ x/768`) are multiplied once, as in `Poly::scale`.
        let mut last: Option<(&BigRational, BigRational)> = None;
        for (t, k) in &p.terms {
            let coefficient = match &last {
                _ if c.is_one() => k.clone(),
                Some((from, to)) if *from == k => to.clone(),
                _ => {
                    let scaled = k * c;
                    last = Some((k, scaled.clone()));
                    scaled
                }
            };
            terms.push((merge_factors(t, m), coefficient));
        }
        Some(Poly::from_terms(terms))
    }

    /// A sum as a group factor: `p = c · group(p/c)`.
    fn group(&mut self, p: &Poly) -> (Mono, BigRational) {
        let c = p.leading().cloned().unwrap_or_else(BigRational::one);
        let normalized = p.clone().scale(&c.recip());
        let id = self.poly_id(normalized);
        let a = self.atom(Atom::Apply(Func::Group, id));
        (Mono { factors: vec![(a, 1)], exp: None }, c)
    }

    /// The product of two monomials (a polynomial, since `sqrt(P)²` multiplies `P` in).
    fn mono_mul(&mut self, a: &Mono, b: &Mono) -> Poly {
        let factors = merge_powers(&a.factors, &b.factors);
        let exp = match (a.exp, b.exp) {
            (None, e) | (e, None) => e,
            (Some(x), Some(y)) => {
                let mut s = self.poly_of(x).clone();
                s.add_assign(self.poly_of(y).clone());
                if s.is_zero() {
                    None
                } else {
                    Some(self.poly_id(s))
                }
            }
        };
        self.reduce(Mono { factors, exp })
    }

    /// Applies `sqrt(P)² = P` and `group(P)·inv(P) = 1` to a monomial.
    fn reduce(&mut self, m: Mono) -> Poly {
        let mut out_factors = Vec::with_capacity(m.factors.len());
        let mut multiply: Vec<(Poly, u32)> = Vec::new();
        let mut divide: Vec<(PolyId, u32)> = Vec::new();
        for &(a, k) in &m.factors {
            match self.atom_of(a).clone() {
                Atom::Apply(Func::Sqrt, p) if !(0..2).contains(&k) => {
                    let (q, r) = (k.div_euclid(2), k.rem_euclid(2));
                    if r != 0 {
                        out_factors.push((a, r));
                    }
                    if q > 0 {
                        multiply.push((self.poly_of(p).clone(), q as u32));
                    } else {
                        divide.push((p, (-q) as u32));
                    }
                }
                _ => out_factors.push((a, k)),
            }
        }
        // group(P)^a · inv(P)^b = group(P)^(a-b).
        let inv_of: Vec<(usize, PolyId)> = out_factors
            .iter()
            .enumerate()
            .filter_map(|(n, (a, _))| match self.atom_of(*a) {
                Atom::Apply(Func::Inv, p) => Some((n, *p)),
                _ => None,
            })
            .collect();
        for (n, p) in inv_of {
            let group = Atom::Apply(Func::Group, p);
            if let Some(g) = self.atoms.get(&group) {
                if let Some(gi) = out_factors.iter().position(|(a, _)| a.0 == g) {
                    let k = out_factors[n].1;
                    out_factors[gi].1 -= k;
                    out_factors[n].1 = 0;
                }
            }
        }
        out_factors.retain(|(_, k)| *k != 0);
        out_factors.sort();
        let mono = Mono { factors: out_factors, exp: m.exp };
        let mut result = match self.divide_out(&mono) {
            Some(p) => p,
            None => Poly::mono(mono, BigRational::one()),
        };
        for (p, times) in multiply {
            for _ in 0..times {
                result = self.mul_poly(&result, &p);
            }
        }
        for (p, times) in divide {
            for _ in 0..times {
                if let Ok(Val::Finite(inv)) = self.inv_of_id(p) {
                    result = self.mul_poly(&result, &inv);
                }
            }
        }
        result
    }

    pub fn div(&mut self, a: Val, b: Val) -> R<Val> {
        match (&a, &b) {
            (Val::Finite(_), Val::NegInf | Val::PosInf) => return Ok(Self::constant(BigRational::zero())),
            (Val::NegInf | Val::PosInf, Val::Finite(q)) => {
                return match q.as_constant() {
                    Some(c) if c.is_positive() => Ok(a),
                    Some(c) if c.is_negative() => Ok(self.neg(a)),
                    _ => Err(NfError::Infinity("a quotient")),
                }
            }
            (Val::NegInf | Val::PosInf, _) => return Err(NfError::Infinity("a quotient")),
            _ => {}
        }
        let inv = self.inv(b)?;
        self.mul(a, inv)
    }

    pub fn inv(&mut self, a: Val) -> R<Val> {
        let p = match a {
            Val::Finite(p) => p,
            _ => return Ok(Self::constant(BigRational::zero())),
        };
        if p.is_zero() {
            return Err(NfError::DivisionByZero);
        }
        if p.terms.len() > 1 {
            let key = self.poly_id(p.clone());
            if let Some(v) = self.inverses.get(&key) {
                return Ok(v.clone());
            }
            let v = self.inv_sum(p)?;
            self.inverses.insert(key, v.clone());
            return Ok(v);
        }
        self.inv_sum(p)
    }

    /// `1/p` for an interned polynomial: a row's `rsqrt(Σ x²)` is divided out once per element
    /// of the row, so the inverse is found by id without cloning or hashing the sum again.
    fn inv_of_id(&mut self, p: PolyId) -> R<Val> {
        if let Some(v) = self.inverses.get(&p) {
            return Ok(v.clone());
        }
        let v = self.inv(Val::Finite(self.poly_of(p).clone()))?;
        self.inverses.insert(p, v.clone());
        Ok(v)
    }

    /// `1/p` without the cache.
    fn inv_sum(&mut self, p: Poly) -> R<Val> {
        if p.terms.len() == 1 {
            let (m, c) = &p.terms[0];
            let mut factors: Vec<(AtomId, i32)> = m.factors.iter().map(|&(a, k)| (a, -k)).collect();
            factors.sort();
            let exp = m.exp.map(|e| {
                let neg = self.poly_of(e).clone().scale(&rat(-1));
                self.poly_id(neg)
            });
            let inverted = self.reduce(Mono { factors, exp });
            return Ok(Val::Finite(inverted.scale(&c.recip())));
        }
        // Factor out the smallest exponential, then the leading coefficient.
        let common = self.min_exponent(&p);
        let mut q = p;
        if let Some(c) = &common {
            let neg = self.poly_of(*c).clone().scale(&rat(-1));
            let neg_id = self.poly_id(neg);
            let factor = Poly::mono(Mono { factors: vec![], exp: Some(neg_id) }, BigRational::one());
            q = self.mul_poly(&q, &factor);
        }
        let lead = q.leading().cloned().unwrap_or_else(BigRational::one);
        let q = q.scale(&lead.recip());
        let qid = self.poly_id(q);
        let a = self.atom(Atom::Apply(Func::Inv, qid));
        let mut result = Poly::mono(Mono { factors: vec![(a, 1)], exp: None }, lead.recip());
        if let Some(c) = common {
            let cp = self.poly_of(c).clone().scale(&rat(-1));
            let cid = self.poly_id(cp);
            let factor = Poly::mono(Mono { factors: vec![], exp: Some(cid) }, BigRational::one());
            result = self.mul_poly(&result, &factor);
        }
        Ok(Val::Finite(result))
    }

    /// The smallest exponent among the terms of `p` (`None` for `exp(0)`), in the order where
    /// `a < b` when `b - a` has a positive leading coefficient. The order is unchanged when every
    /// exponent shifts by the same amount, so factoring out the smallest one is canonical:
    /// `1/(1 + exp(-x))` and `exp(x)/(exp(x) + 1)` get the same form.
    fn min_exponent(&self, p: &Poly) -> Option<PolyId> {
        let mut best: Option<PolyId> = p.terms.first()?.0.exp;
        for (m, _) in &p.terms[1..] {
            if self.exp_less(m.exp, best) {
                best = m.exp;
            }
        }
        best
    }

    fn exp_less(&self, a: Option<PolyId>, b: Option<PolyId>) -> bool {
        let mut d = b.map(|x| self.poly_of(x).clone()).unwrap_or_default();
        if let Some(a) = a {
            d.add_assign(self.poly_of(a).clone().scale(&rat(-1)));
        }
        d.leading().is_some_and(|c| c.is_positive())
    }

    /// `f·m·inv(Q) = f·(1 - (Q - m)·inv(Q))/c` when `m` is the last term of a small sum `Q` (with
    /// coefficient `c`) and divides the monomial: a step of polynomial division, so that
    /// `exp(x)/(1 + exp(x))` and `1 - 1/(1 + exp(x))` agree.
    fn divide_out(&mut self, m: &Mono) -> Option<Poly> {
        for &(a, k) in &m.factors {
            if k != 1 {
                continue;
            }
            let Atom::Apply(Func::Inv, q) = *self.atom_of(a) else { continue };
            // Only short denominators are divided out (checked before copying: a row's sum of
            // squares has thousands of terms).
            if self.poly_of(q).terms.len() > 4 {
                continue;
            }
            let qp = self.poly_of(q).clone();
            let Some((top, c)) = qp.terms.last().cloned() else { continue };
            // Termination: the step must lower the powers of `top`'s atoms, so no other term of
            // `Q` may be a multiple of `top`, and exponentials must match exactly.
            let divides = |t: &Mono, o: &Mono| t.exp == o.exp && t.factors.iter().all(|&(x, e)| o.factors.iter().any(|&(y, f)| y == x && f >= e));
            if qp.terms[..qp.terms.len() - 1].iter().any(|(o, _)| divides(&top, o)) || top.factors.is_empty() && top.exp.is_none() {
                continue;
            }
            if top.exp.is_some() && top.exp != m.exp {
                continue;
            }
            // rest = m / (inv(Q)·top), with no negative powers.
            let mut factors: Vec<(AtomId, i32)> = m.factors.iter().filter(|(x, _)| *x != a).copied().collect();
            let mut ok = true;
            for &(t, e) in &top.factors {
                match factors.iter_mut().find(|(x, _)| *x == t) {
                    Some((_, have)) if *have >= e && e > 0 => *have -= e,
                    _ => ok = false,
                }
            }
            if !ok {
                continue;
            }
            factors.retain(|(_, e)| *e != 0);
            let mut rest_exp = m.exp.map(|x| self.poly_of(x).clone()).unwrap_or_default();
            if let Some(t) = top.exp {
                rest_exp.add_assign(self.poly_of(t).clone().scale(&rat(-1)));
            }
            if rest_exp.leading().is_some_and(|c| c.is_negative()) {
                continue;
            }
            let exp = if rest_exp.is_zero() { None } else { Some(self.poly_id(rest_exp)) };
            let rest = Poly::mono(Mono { factors, exp }, BigRational::one());
            let mut others = qp.clone();
            others.terms.pop();
            let inv = Poly::mono(Mono { factors: vec![(a, 1)], exp: None }, BigRational::one());
            let tail = self.mul_poly(&others, &inv);
            let mut one_minus = Poly::constant(BigRational::one());
            one_minus.add_assign(tail.scale(&rat(-1)));
            let out = self.mul_poly(&rest, &one_minus);
            return Some(out.scale(&c.recip()));
        }
        None
    }

    pub fn exp(&mut self, a: Val) -> R<Val> {
        match a {
            Val::NegInf => Ok(Self::constant(BigRational::zero())),
            Val::PosInf => Err(NfError::Infinity("exp")),
            Val::Finite(p) => {
                if p.is_zero() {
                    return Ok(Self::constant(BigRational::one()));
                }
                let id = self.poly_id(p);
                Ok(Val::Finite(Poly::mono(Mono { factors: vec![], exp: Some(id) }, BigRational::one())))
            }
        }
    }

    pub fn log(&mut self, a: Val) -> R<Val> {
        let p = self.finite(a, "log")?;
        if let [(m, c)] = p.terms.as_slice() {
            if m.factors.is_empty() && c.is_one() {
                return Ok(Val::Finite(m.exp.map(|e| self.poly_of(e).clone()).unwrap_or_default()));
            }
        }
        Ok(Val::Finite(self.apply(Func::Log, p)))
    }

    fn finite(&self, a: Val, what: &'static str) -> R<Poly> {
        match a {
            Val::Finite(p) => Ok(p),
            _ => Err(NfError::Infinity(what)),
        }
    }

    fn apply(&mut self, f: Func, p: Poly) -> Poly {
        let id = self.poly_id(p);
        self.atom_poly(Atom::Apply(f, id))
    }

    pub fn sqrt(&mut self, a: Val) -> R<Val> {
        let p = match a {
            Val::PosInf => return Ok(Val::PosInf),
            other => self.finite(other, "sqrt")?,
        };
        if let Some(c) = p.as_constant() {
            return Ok(Val::Finite(self.sqrt_constant(&c)));
        }
        // sqrt(c·Q) = sqrt(c)·sqrt(Q), Q with leading coefficient 1 (c > 0).
        let lead = p.leading().cloned().unwrap_or_else(BigRational::one);
        if lead.is_positive() && !lead.is_one() {
            let q = p.scale(&lead.recip());
            let root = self.sqrt_constant(&lead);
            let s = self.apply(Func::Sqrt, q);
            return Ok(Val::Finite(self.mul_poly(&root, &s)));
        }
        Ok(Val::Finite(self.apply(Func::Sqrt, p)))
    }

    /// `sqrt(p/q)` as `(s/q)·sqrt(r)` with `p·q = s²·r` (square factors taken out).
    fn sqrt_constant(&mut self, c: &BigRational) -> Poly {
        if c.is_zero() {
            return Poly::zero();
        }
        if c.is_negative() {
            let id = self.poly_id(Poly::constant(c.clone()));
            return self.atom_poly(Atom::Apply(Func::Sqrt, id));
        }
        let n = c.numer() * c.denom();
        let (s, r) = split_square(&n);
        let coeff = BigRational::new(s, c.denom().clone());
        if r.is_one() {
            return Poly::constant(coeff);
        }
        let id = self.poly_id(Poly::constant(BigRational::from_integer(r)));
        self.atom_poly(Atom::Apply(Func::Sqrt, id)).scale(&coeff)
    }

    /// `tanh(x) = 1 - 2/(1 + exp(2x))`: kernels compute tanh through exponentials as often as
    /// with the instruction, and this form lets both meet.
    pub fn tanh(&mut self, a: Val) -> R<Val> {
        let p = self.finite(a, "tanh")?;
        let two = Self::constant(rat(2));
        let arg = self.mul(Val::Finite(p), two.clone())?;
        let e = self.exp(arg)?;
        let denom = self.add(Self::constant(rat(1)), e)?;
        let q = self.div(two, denom)?;
        self.sub(Self::constant(rat(1)), q)
    }

    /// An odd function (`erf`, `sin`): the sign of the argument comes out.
    pub fn odd(&mut self, f: Func, a: Val) -> R<Val> {
        if f == Func::Tanh {
            return self.tanh(a);
        }
        let p = self.finite(a, "a function")?;
        if p.is_zero() {
            return Ok(Val::Finite(Poly::zero()));
        }
        if p.leading().is_some_and(|c| c.is_negative()) {
            let q = self.apply(f, p.scale(&rat(-1)));
            return Ok(Val::Finite(q.scale(&rat(-1))));
        }
        Ok(Val::Finite(self.apply(f, p)))
    }

    /// An even function (`cos`, `abs`): the sign of the argument is dropped.
    pub fn even(&mut self, f: Func, a: Val) -> R<Val> {
        let p = match a {
            Val::NegInf | Val::PosInf if f == Func::Abs => return Ok(Val::PosInf),
            other => self.finite(other, "a function")?,
        };
        if f == Func::Abs {
            if let Some(c) = p.as_constant() {
                return Ok(Self::constant(c.abs()));
            }
        }
        let p = if p.leading().is_some_and(|c| c.is_negative()) { p.scale(&rat(-1)) } else { p };
        Ok(Val::Finite(self.apply(f, p)))
    }

    pub fn max(&mut self, a: Val, b: Val) -> R<Val> {
        self.extremum(a, b, true)
    }

    pub fn min(&mut self, a: Val, b: Val) -> R<Val> {
        self.extremum(a, b, false)
    }

    fn extremum(&mut self, a: Val, b: Val, is_max: bool) -> R<Val> {
        let (identity, absorbing) = if is_max { (Val::NegInf, Val::PosInf) } else { (Val::PosInf, Val::NegInf) };
        if a == absorbing || b == absorbing {
            return Ok(absorbing);
        }
        if a == identity {
            return Ok(b);
        }
        if b == identity {
            return Ok(a);
        }
        let (Val::Finite(p), Val::Finite(q)) = (a, b) else { unreachable!("infinities handled above") };
        if let (Some(x), Some(y)) = (p.as_constant(), q.as_constant()) {
            return Ok(Self::constant(if (x > y) == is_max { x } else { y }));
        }
        let mut args = Vec::new();
        for v in [p, q] {
            args.extend(self.extremum_args(v, is_max));
        }
        args.sort();
        args.dedup();
        if args.len() == 1 {
            return Ok(Val::Finite(self.poly_of(args[0]).clone()));
        }
        let atom = if is_max { Atom::Max(args) } else { Atom::Min(args) };
        Ok(Val::Finite(self.atom_poly(atom)))
    }

    /// The operands of a (flattened) max or min.
    fn extremum_args(&mut self, p: Poly, is_max: bool) -> Vec<PolyId> {
        if let [(m, c)] = p.terms.as_slice() {
            if c.is_one() && m.exp.is_none() && m.factors.len() == 1 && m.factors[0].1 == 1 {
                match self.atom_of(m.factors[0].0) {
                    Atom::Max(v) if is_max => return v.clone(),
                    Atom::Min(v) if !is_max => return v.clone(),
                    _ => {}
                }
            }
        }
        vec![self.poly_id(p)]
    }

    /// `a rel b` as a condition.
    pub fn compare(&mut self, rel: Rel, a: Val, b: Val) -> R<CondId> {
        let d = match (a, b) {
            (Val::Finite(p), Val::Finite(q)) => {
                let mut d = p;
                d.add_assign(q.scale(&rat(-1)));
                d
            }
            (x, y) => {
                // A comparison with an infinity is decided by the infinity.
                let o = match (&x, &y) {
                    (Val::NegInf, Val::NegInf) | (Val::PosInf, Val::PosInf) => std::cmp::Ordering::Equal,
                    (Val::NegInf, _) | (_, Val::PosInf) => std::cmp::Ordering::Less,
                    _ => std::cmp::Ordering::Greater,
                };
                return Ok(self.cond(Cond::Const(rel.holds(o))));
            }
        };
        if let Some(c) = d.as_constant() {
            return Ok(self.cond(Cond::Const(rel.holds(c.cmp(&BigRational::zero())))));
        }
        let lead = d.leading().cloned().unwrap_or_else(BigRational::one);
        let rel = if lead.is_negative() { rel.flip() } else { rel };
        let d = d.scale(&lead.abs().recip());
        let d = if lead.is_negative() { d.scale(&rat(-1)) } else { d };
        let id = self.poly_id(d);
        Ok(self.cond(Cond::Cmp(rel, id)))
    }

    pub fn not(&mut self, c: CondId) -> CondId {
        match self.cond_of(c).clone() {
            Cond::Const(b) => self.cond(Cond::Const(!b)),
            Cond::Cmp(r, p) => self.cond(Cond::Cmp(r.negate(), p)),
            Cond::Not(x) => x,
            _ => self.cond(Cond::Not(c)),
        }
    }

    pub fn and(&mut self, a: CondId, b: CondId) -> CondId {
        self.junction(a, b, true)
    }

    pub fn or(&mut self, a: CondId, b: CondId) -> CondId {
        self.junction(a, b, false)
    }

    fn junction(&mut self, a: CondId, b: CondId, is_and: bool) -> CondId {
        let mut parts = Vec::new();
        for c in [a, b] {
            match self.cond_of(c).clone() {
                Cond::Const(v) if v == is_and => {}
                Cond::Const(_) => return self.cond(Cond::Const(!is_and)),
                Cond::And(v) if is_and => parts.extend(v),
                Cond::Or(v) if !is_and => parts.extend(v),
                _ => parts.push(c),
            }
        }
        parts.sort();
        parts.dedup();
        match parts.len() {
            0 => self.cond(Cond::Const(is_and)),
            1 => parts[0],
            _ => self.cond(if is_and { Cond::And(parts) } else { Cond::Or(parts) }),
        }
    }

    /// A number used as a condition (`!= 0`).
    pub fn truthy(&mut self, a: Val) -> R<CondId> {
        self.compare(Rel::Ne, a, Self::constant(BigRational::zero()))
    }

    /// A condition used as a number (1 or 0).
    pub fn indicator(&mut self, c: CondId) -> Val {
        match self.cond_of(c) {
            Cond::Const(b) => Self::constant(rat(*b as i64)),
            _ => {
                let (one, zero) = (self.poly_id(Poly::constant(rat(1))), self.poly_id(Poly::zero()));
                Val::Finite(self.atom_poly(Atom::Select(c, one, zero)))
            }
        }
    }

    pub fn select(&mut self, c: CondId, a: Val, b: Val) -> R<Val> {
        if let Cond::Const(v) = self.cond_of(c) {
            return Ok(if *v { a } else { b });
        }
        if a == b {
            return Ok(a);
        }
        // select(a > b, a, b) = max(a, b), and the other three spellings of max and min.
        if let Cond::Cmp(rel, d) = self.cond_of(c).clone() {
            if let (Val::Finite(p), Val::Finite(q)) = (&a, &b) {
                let mut diff = p.clone();
                diff.add_assign(q.clone().scale(&rat(-1)));
                let lead = diff.leading().cloned().unwrap_or_else(BigRational::one);
                let sign_flipped = lead.is_negative();
                let normalized = diff.scale(&lead.abs().recip());
                let normalized = if sign_flipped { normalized.scale(&rat(-1)) } else { normalized };
                if self.polys.get(&normalized).is_some_and(|i| i == d.0) {
                    // The condition compares a - b (or b - a) with 0.
                    let rel = if sign_flipped { rel.flip() } else { rel };
                    match rel {
                        Rel::Gt | Rel::Ge => return self.max(a, b),
                        Rel::Lt | Rel::Le => return self.min(a, b),
                        _ => {}
                    }
                }
            }
        }
        let (Val::Finite(p), Val::Finite(q)) = (a, b) else { return Err(NfError::Infinity("a select")) };
        let (pa, pb) = (self.poly_id(p), self.poly_id(q));
        Ok(Val::Finite(self.atom_poly(Atom::Select(c, pa, pb))))
    }

    /// `2^x = exp(x·ln2)`.
    pub fn exp2(&mut self, a: Val) -> R<Val> {
        let ln2 = Val::Finite(self.atom_poly(Atom::Ln2));
        let arg = self.mul(a, ln2)?;
        self.exp(arg)
    }

    /// `log2(x) = log(x)/ln2`.
    pub fn log2(&mut self, a: Val) -> R<Val> {
        let l = self.log(a)?;
        let ln2 = Val::Finite(self.atom_poly(Atom::Ln2));
        self.div(l, ln2)
    }

    pub fn pow(&mut self, a: Val, k: i32) -> R<Val> {
        if k == 0 {
            return Ok(Self::constant(rat(1)));
        }
        let base = if k < 0 { self.inv(a)? } else { a };
        let mut result = base.clone();
        for _ in 1..k.unsigned_abs() {
            result = self.mul(result, base.clone())?;
        }
        Ok(result)
    }

    pub fn pi(&mut self) -> Val {
        Val::Finite(self.atom_poly(Atom::Pi))
    }

    pub fn ln2(&mut self) -> Val {
        Val::Finite(self.atom_poly(Atom::Ln2))
    }
}

/// `n = s²·r` with the square factors of `n` (found by trial division up to 10⁴) in `s`.
/// The product of two sorted factor lists: powers of one atom added, zero powers dropped.
fn merge_powers(a: &[(AtomId, i32)], b: &[(AtomId, i32)]) -> Vec<(AtomId, i32)> {
    let mut factors: Vec<(AtomId, i32)> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                i += 1;
                j += 1;
                (x.0, x.1 + y.1)
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                i += 1;
                *x
            }
            (Some(_), Some(y)) => {
                j += 1;
                *y
            }
            (Some(x), None) => {
                i += 1;
                *x
            }
            (None, Some(y)) => {
                j += 1;
                *y
            }
            (None, None) => unreachable!("the loop condition"),
        };
        if next.1 != 0 {
            factors.push(next);
        }
    }
    factors
}

/// The product of two monomials at most one of which has an exponential, with no rule applied.
fn merge_factors(a: &Mono, b: &Mono) -> Mono {
    Mono { factors: merge_powers(&a.factors, &b.factors), exp: a.exp.or(b.exp) }
}

fn split_square(n: &BigInt) -> (BigInt, BigInt) {
    let mut r = n.abs();
    let mut s = BigInt::one();
    let mut f = BigInt::from(2);
    let limit = BigInt::from(10_000);
    while f <= limit && &f * &f <= r {
        let sq = &f * &f;
        while (&r % &sq).is_zero() {
            r /= &sq;
            s *= &f;
        }
        f += 1;
    }
    // A remaining perfect square (a large prime squared).
    if let Some(v) = r.to_u128() {
        let root = (v as f64).sqrt() as u128;
        for c in root.saturating_sub(1)..=root + 1 {
            if c > 1 && c * c == v {
                return (s * BigInt::from(c), BigInt::one());
            }
        }
    }
    (s, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(nf: &mut Nf, i: u64) -> Val {
        nf.input(0, i)
    }

    fn c(n: i64) -> Val {
        Nf::constant(rat(n))
    }

    /// A product by one monomial taken term by term without the rules (`times_inert`) is what
    /// the rules give, and a monomial the rules react to (an inverse of a short sum, which
    /// divides out) takes the general path.
    #[test]
    fn products_by_one_monomial_agree_with_the_rules() {
        let mut nf = Nf::default();
        let general = |nf: &mut Nf, p: &Poly, m: &Mono, k: &BigRational| {
            let mut out = Poly::zero();
            for (t, c) in &p.terms {
                let prod = nf.mono_mul(t, m);
                out.add_assign(prod.scale(&(c * k)));
            }
            out
        };
        // p = x0 + 2 x1 - x2/3 - x3 (a row's `x - mean`, shortened)
        let mut p = Poly::zero();
        for (i, k) in [(0, rat(1)), (1, rat(2)), (2, BigRational::new(BigInt::from(-1), BigInt::from(3))), (3, rat(-1))] {
            let Val::Finite(xi) = x(&mut nf, i) else { unreachable!() };
            p.add_assign(xi.scale(&k));
        }
        // m = x3 · sqrt(S) · inv(S) · exp(x4), S a long sum: rstd · gamma-like, with an input of p.
        let mut long = Poly::zero();
        for i in 10..20 {
            let Val::Finite(xi) = x(&mut nf, i) else { unreachable!() };
            long.add_assign(xi);
        }
        let Val::Finite(rstd) = nf.sqrt(Val::Finite(long.clone())).and_then(|r| nf.inv(r)).unwrap() else { unreachable!() };
        let Val::Finite(x3) = x(&mut nf, 3) else { unreachable!() };
        let Val::Finite(x4) = x(&mut nf, 4) else { unreachable!() };
        let Val::Finite(e) = nf.exp(Val::Finite(x4)).unwrap() else { unreachable!() };
        let rstd_x3 = nf.mul_poly(&rstd, &x3);
        let m = nf.mul_poly(&rstd_x3, &e);
        let [(mono, k)] = m.terms.as_slice() else { panic!("one monomial: {m:?}") };
        let fast = nf.times_inert(&p, mono, k).expect("inert");
        assert_eq!(fast, general(&mut nf, &p, mono, k));
        assert_eq!(nf.mul_poly(&p, &m), fast);
        assert_eq!(nf.mul_poly(&m, &p), fast);
        // 1/(1 + x5) times x5 divides out: not inert.
        let Val::Finite(x5) = x(&mut nf, 5) else { unreachable!() };
        let mut short = x5.clone();
        short.add_assign(Poly::constant(rat(1)));
        let Val::Finite(inv) = nf.inv(Val::Finite(short)).unwrap() else { unreachable!() };
        let [(mono, k)] = inv.terms.as_slice() else { panic!("one monomial: {inv:?}") };
        assert!(nf.times_inert(&x5, mono, k).is_none());
        assert_eq!(nf.mul_poly(&x5, &inv), general(&mut nf, &x5, mono, k));
    }

    #[test]
    fn tree_and_sequential_sums_agree() {
        let mut nf = Nf::default();
        let xs: Vec<Val> = (0..8).map(|i| x(&mut nf, i)).collect();
        let mut seq = c(0);
        for v in &xs {
            seq = nf.add(seq, v.clone()).unwrap();
        }
        let mut level = xs.clone();
        while level.len() > 1 {
            level = level.chunks(2).map(|p| nf.add(p[0].clone(), p[1].clone()).unwrap()).collect();
        }
        assert_eq!(seq, level[0]);
        let missing = xs[..7].iter().cloned().fold(c(0), |a, b| nf.add(a, b).unwrap());
        assert_ne!(seq, missing);
    }

    #[test]
    fn softmax_with_and_without_shift_agree() {
        let mut nf = Nf::default();
        let xs: Vec<Val> = (0..4).map(|i| x(&mut nf, i)).collect();
        let m = xs.iter().cloned().fold(Val::NegInf, |a, b| nf.max(a, b).unwrap());
        let shifted: Vec<Val> = xs
            .iter()
            .map(|v| {
                let d = nf.sub(v.clone(), m.clone()).unwrap();
                nf.exp(d).unwrap()
            })
            .collect();
        let s = shifted.iter().cloned().fold(c(0), |a, b| nf.add(a, b).unwrap());
        let out_shift = nf.div(shifted[1].clone(), s).unwrap();
        let plain: Vec<Val> = xs.iter().map(|v| nf.exp(v.clone()).unwrap()).collect();
        let s2 = plain.iter().cloned().fold(c(0), |a, b| nf.add(a, b).unwrap());
        let out_plain = nf.div(plain[1].clone(), s2).unwrap();
        let names = crate::render::Names::default();
        assert_eq!(out_shift, out_plain, "{} vs {}", crate::render::val(&nf, &names, &out_shift), crate::render::val(&nf, &names, &out_plain));
    }

    #[test]
    fn rsqrt_is_one_over_sqrt_and_eps_placement_matters() {
        let mut nf = Nf::default();
        let v = x(&mut nf, 0);
        let sq = nf.mul(v.clone(), v.clone()).unwrap();
        let eps = Nf::constant(BigRational::new(1.into(), 1_000_000.into()));
        let inside = nf.add(sq.clone(), eps.clone()).unwrap();
        let s = nf.sqrt(inside).unwrap();
        let a = nf.inv(s.clone()).unwrap();
        let b = nf.div(c(1), s).unwrap();
        assert_eq!(a, b);
        let s2 = nf.sqrt(sq).unwrap();
        let outside = nf.add(s2, eps).unwrap();
        let wrong = nf.inv(outside).unwrap();
        assert_ne!(a, wrong);
    }

    #[test]
    fn exp2_of_scaled_argument_is_exp() {
        let mut nf = Nf::default();
        let v = x(&mut nf, 0);
        let ln2 = nf.ln2();
        let log2e = nf.inv(ln2).unwrap();
        let arg = nf.mul(v.clone(), log2e).unwrap();
        assert_eq!(nf.exp2(arg).unwrap(), nf.exp(v).unwrap());
    }

    #[test]
    fn max_flattens_and_select_spells_max() {
        let mut nf = Nf::default();
        let (a, b, d) = (x(&mut nf, 0), x(&mut nf, 1), x(&mut nf, 2));
        let m1 = nf.max(a.clone(), b.clone()).unwrap();
        let m1 = nf.max(m1, d.clone()).unwrap();
        let m2 = nf.max(d.clone(), b.clone()).unwrap();
        let m2 = nf.max(a.clone(), m2).unwrap();
        assert_eq!(m1, m2);
        assert_eq!(nf.max(Val::NegInf, a.clone()).unwrap(), a);
        let gt = nf.compare(Rel::Gt, a.clone(), b.clone()).unwrap();
        assert_eq!(nf.select(gt, a.clone(), b.clone()).unwrap(), nf.max(a.clone(), b.clone()).unwrap());
        let lt = nf.compare(Rel::Lt, b.clone(), a.clone()).unwrap();
        assert_eq!(nf.select(lt, a.clone(), b.clone()).unwrap(), nf.max(a, b).unwrap());
    }

    #[test]
    fn square_roots_of_constants_are_canonical() {
        let mut nf = Nf::default();
        let half = Nf::constant(BigRational::new(1.into(), 2.into()));
        let s_half = nf.sqrt(half).unwrap();
        let s2 = nf.sqrt(c(2)).unwrap();
        let inv = nf.inv(s2.clone()).unwrap();
        assert_eq!(s_half, inv, "sqrt(1/2) = 1/sqrt(2)");
        let sq = nf.mul(s2.clone(), s2).unwrap();
        assert_eq!(sq, c(2));
        assert_eq!(nf.sqrt(c(9)).unwrap(), c(3));
        let eight = nf.sqrt(c(8)).unwrap();
        let two_s2 = nf.sqrt(c(2)).unwrap();
        assert_eq!(eight, nf.mul(c(2), two_s2).unwrap());
    }

    #[test]
    fn online_softmax_recurrence_matches_two_pass() {
        let mut nf = Nf::default();
        let xs: Vec<Val> = (0..3).map(|i| x(&mut nf, i)).collect();
        let (mut m, mut d) = (Val::NegInf, c(0));
        for v in &xs {
            let m_new = nf.max(m.clone(), v.clone()).unwrap();
            let k = nf.sub(m.clone(), m_new.clone()).unwrap();
            let scale = nf.exp(k).unwrap();
            let dd = nf.mul(d, scale).unwrap();
            let e_arg = nf.sub(v.clone(), m_new.clone()).unwrap();
            let e = nf.exp(e_arg).unwrap();
            d = nf.add(dd, e).unwrap();
            m = m_new;
        }
        let arg = nf.sub(xs[0].clone(), m.clone()).unwrap();
        let num = nf.exp(arg).unwrap();
        let online = nf.div(num, d).unwrap();
        let plain: Vec<Val> = xs.iter().map(|v| nf.exp(v.clone()).unwrap()).collect();
        let s = plain.iter().cloned().fold(c(0), |a, b| nf.add(a, b).unwrap());
        let two_pass = nf.div(plain[0].clone(), s).unwrap();
        assert_eq!(online, two_pass);
    }
}

#[cfg(test)]
mod rewrite_tests {
    use super::*;

    fn one() -> Val {
        Nf::constant(rat(1))
    }

    #[test]
    fn tanh_through_exponentials_is_tanh() {
        let mut nf = Nf::default();
        let u = nf.input(0, 0);
        let t = nf.tanh(u.clone()).unwrap();
        // (e - 1) / (e + 1) with e = exp(2u), as kernels write it.
        let two_u = nf.mul(u.clone(), Nf::constant(rat(2))).unwrap();
        let e = nf.exp(two_u).unwrap();
        let num = nf.sub(e.clone(), one()).unwrap();
        let den = nf.add(e, one()).unwrap();
        let k = nf.div(num, den).unwrap();
        assert_eq!(t, k);
    }

    #[test]
    fn sigmoid_forms_agree() {
        let mut nf = Nf::default();
        let x = nf.input(0, 0);
        let nx = nf.neg(x.clone());
        let e_neg = nf.exp(nx).unwrap();
        let d = nf.add(one(), e_neg).unwrap();
        let a = nf.inv(d).unwrap();
        let e = nf.exp(x).unwrap();
        let d2 = nf.add(e.clone(), one()).unwrap();
        let b = nf.div(e, d2).unwrap();
        assert_eq!(a, b, "1/(1+exp(-x)) = exp(x)/(exp(x)+1)");
    }
}
