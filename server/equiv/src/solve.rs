//! The last resort for two normal forms that neither the rewriting rules ([`crate::nf`]) nor
//! random interpretation ([`crate::fingerprint`]) show equal, and that no input draw tells
//! apart: ask an SMT solver whether they can differ, over the reals with uninterpreted
//! functions (`QF_UFNRA`).
//!
//! What the solver adds is order: `max`, `min`, `abs` and selects become `ite`s over real
//! comparisons, `sqrt(P)` is a value `s ≥ 0` with `s² = P`, so identities that hold because of
//! signs (`clamp` written as `min(max(x, lo), hi)` against `max(min(x, hi), lo)` with `lo ≤ hi`,
//! `|x|` against `sqrt(x·x)`, `max(a, b)` against `(a + b + |a - b|)/2`) are proved, which no
//! ring identity and no random oracle can do.
//!
//! The encoding states exactly what the normal forms assume and nothing more:
//! - every input element, and `π` and `ln 2` (bounded by their first decimals), is a real
//!   constant;
//! - `1/P` is a value `i` with `P·i = 1`, under the domain assumption `P ≠ 0`; `sqrt(P)` needs
//!   `P ≥ 0` and `log(P)` needs `P > 0`: the normal forms already treat every division as
//!   defined (`x·(1/x) = 1`), and a kernel and its reference are compared where both are;
//! - `exp`, `log`, `erf`, `sin`, `cos` are uninterpreted functions (`exp(P) > 0` is stated),
//!   so nothing about them beyond congruence is used.
//!
//! `unsat` (no inputs where they differ) is a proof; `sat` and `unknown` leave the pair
//! uncertified (a model of uninterpreted functions need not be a real counterexample).

use crate::nf::{Atom, AtomId, Cond, CondId, Func, Mono, Nf, PolyId, Rel, Val};
use num_bigint::BigInt;
use num_rational::BigRational;
use smt::{Logic, Query, SatResult, Solver, Sort, Term};
use std::collections::HashMap;
use std::time::Duration;

/// Pairs whose encoding would have more monomials than this are not sent (nonlinear real
/// arithmetic over thousands of products is beyond a solver's seconds).
pub const MAX_MONOMIALS: usize = 2000;

/// How a solver call ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// No inputs (within the domain assumptions) where the two forms differ.
    Equal,
    /// The solver found an assignment where they differ, or could not decide; why, in words.
    NotShown(String),
}

/// Asks `solver` whether `a` and `b` can differ. One solver serves the pairs of a shape (each
/// query runs inside its own push/pop, so a process is started once).
pub fn equal(nf: &Nf, a: &Val, b: &Val, solver: &mut Solver, timeout: Duration, stop: &dyn Fn() -> bool) -> Answer {
    let mut enc = Encoder::new(nf);
    let (Some(x), Some(y)) = (enc.val(a), enc.val(b)) else {
        return Answer::NotShown(enc.failure.unwrap_or_else(|| "an infinity is not encoded".into()));
    };
    if let Some(why) = enc.failure.take() {
        return Answer::NotShown(why);
    }
    let differ = enc.q.not(enc.q.eq(x, y));
    enc.q.assert(differ);
    let kind = solver.kind();
    match solver.check(&enc.q, timeout, stop) {
        Ok(SatResult::Unsat) => Answer::Equal,
        Ok(SatResult::Sat(_)) => {
            Answer::NotShown(format!("{} finds an assignment where they differ (possibly only because of functions it does not interpret)", kind.name()))
        }
        Ok(SatResult::Unknown(why)) => Answer::NotShown(format!("{}: {why}", kind.name())),
        Err(e) => Answer::NotShown(format!("{}: {e}", kind.name())),
    }
}

struct Encoder<'a> {
    nf: &'a Nf,
    q: Query,
    atoms: HashMap<AtomId, Term>,
    polys: HashMap<PolyId, Term>,
    conds: HashMap<CondId, Term>,
    funcs: HashMap<&'static str, smt::Func>,
    /// Monomials encoded so far (against [`MAX_MONOMIALS`]).
    monomials: usize,
    names: usize,
    /// Why the encoding gave up, if it did.
    failure: Option<String>,
}

/// The logic every question here is asked in.
pub(crate) const LOGIC: Logic = Logic::QfUfNra;

impl<'a> Encoder<'a> {
    fn new(nf: &'a Nf) -> Encoder<'a> {
        Encoder {
            nf,
            q: Query::new(LOGIC),
            atoms: HashMap::new(),
            polys: HashMap::new(),
            conds: HashMap::new(),
            funcs: HashMap::new(),
            monomials: 0,
            names: 0,
            failure: None,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    fn fail(&mut self, why: impl Into<String>) -> Option<Term> {
        self.failure.get_or_insert_with(|| why.into());
        None
    }

    fn val(&mut self, v: &Val) -> Option<Term> {
        match v {
            Val::Finite(p) => self.terms(&p.terms),
            Val::NegInf | Val::PosInf => None,
        }
    }

    fn real(&self, c: &BigRational) -> Term {
        self.q.real(c)
    }

    fn int(&self, n: i64) -> Term {
        self.q.real(&BigRational::from_integer(BigInt::from(n)))
    }

    fn terms(&mut self, terms: &[(Mono, BigRational)]) -> Option<Term> {
        self.monomials += terms.len();
        if self.monomials > MAX_MONOMIALS {
            return self.fail(format!("the forms have more than {MAX_MONOMIALS} monomials"));
        }
        if terms.is_empty() {
            return Some(self.int(0));
        }
        let mut sum = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            let mut factors = vec![self.real(c)];
            for &(a, k) in &m.factors {
                let base = self.atom(a)?;
                let base = if k < 0 { self.inverse(base) } else { base };
                factors.extend(std::iter::repeat_n(base, k.unsigned_abs() as usize));
            }
            if let Some(e) = m.exp {
                let arg = self.poly(e)?;
                factors.push(self.exp(arg));
            }
            sum.push(if factors.len() == 1 { factors[0] } else { self.q.mul(&factors) });
        }
        Some(if sum.len() == 1 { sum[0] } else { self.q.add(&sum) })
    }

    fn poly(&mut self, id: PolyId) -> Option<Term> {
        if let Some(t) = self.polys.get(&id) {
            return Some(*t);
        }
        let value = self.terms(&self.nf.poly_of(id).terms)?;
        let name = self.fresh("p");
        let t = self.q.define(&name, value);
        self.polys.insert(id, t);
        Some(t)
    }

    /// A value `i` with `x·i = 1`, assuming `x ≠ 0`.
    fn inverse(&mut self, x: Term) -> Term {
        let name = self.fresh("inv");
        let i = self.q.declare_const(&name, Sort::Real);
        let zero = self.int(0);
        let one = self.int(1);
        let nonzero = self.q.not(self.q.eq(x, zero));
        self.q.assert(nonzero);
        let product = self.q.mul(&[x, i]);
        let defines = self.q.eq(product, one);
        self.q.assert(defines);
        i
    }

    fn function(&mut self, name: &'static str) -> smt::Func {
        if let Some(f) = self.funcs.get(name) {
            return f.clone();
        }
        let f = self.q.declare_fun(name, &[Sort::Real], Sort::Real);
        self.funcs.insert(name, f.clone());
        f
    }

    fn exp(&mut self, arg: Term) -> Term {
        let f = self.function("exp");
        let v = self.q.apply(&f, &[arg]);
        let zero = self.int(0);
        let positive = self.q.gt(v, zero);
        self.q.assert(positive);
        v
    }

    fn atom(&mut self, id: AtomId) -> Option<Term> {
        if let Some(t) = self.atoms.get(&id) {
            return Some(*t);
        }
        let zero = self.int(0);
        let t = match self.nf.atom_of(id).clone() {
            Atom::Input { param, elem } => self.q.declare_const(&format!("in_{param}_{elem}"), Sort::Real),
            Atom::Initial { param, elem } => self.q.declare_const(&format!("initial_{param}_{elem}"), Sort::Real),
            Atom::Pi => self.bounded("pi", (314159, 100000), (314160, 100000)),
            Atom::Ln2 => self.bounded("ln2", (69314, 100000), (69315, 100000)),
            Atom::Apply(Func::Group, p) => self.poly(p)?,
            Atom::Apply(Func::Inv, p) => {
                let x = self.poly(p)?;
                self.inverse(x)
            }
            Atom::Apply(Func::Sqrt, p) => {
                let x = self.poly(p)?;
                let name = self.fresh("sqrt");
                let s = self.q.declare_const(&name, Sort::Real);
                for fact in [self.q.ge(x, zero), self.q.ge(s, zero), self.q.eq(self.q.mul(&[s, s]), x)] {
                    self.q.assert(fact);
                }
                s
            }
            Atom::Apply(Func::Abs, p) => {
                let x = self.poly(p)?;
                self.q.ite(self.q.ge(x, zero), x, self.q.neg(x))
            }
            Atom::Apply(f, p) => {
                let x = self.poly(p)?;
                let name = match f {
                    Func::Log => {
                        let positive = self.q.gt(x, zero);
                        self.q.assert(positive);
                        "log"
                    }
                    Func::Tanh => "tanh",
                    Func::Erf => "erf",
                    Func::Sin => "sin",
                    Func::Cos => "cos",
                    Func::Sqrt | Func::Abs | Func::Inv | Func::Group => unreachable!("matched above"),
                };
                let g = self.function(name);
                self.q.apply(&g, &[x])
            }
            Atom::Max(ps) | Atom::Min(ps) => {
                let is_max = matches!(self.nf.atom_of(id), Atom::Max(_));
                let mut args = Vec::with_capacity(ps.len());
                for p in ps {
                    args.push(self.poly(p)?);
                }
                // A constant bounded by every argument and equal to one of them: linear in the
                // arguments. A chain of `ite(x > acc, x, acc)` names `acc` twice per step, and
                // the query text doubled with every argument (a 33-column row's max never
                // finished printing).
                let name = self.fresh(if is_max { "max" } else { "min" });
                let m = self.q.declare_const(&name, Sort::Real);
                let mut equal_one = Vec::with_capacity(args.len());
                for &x in &args {
                    let bound = if is_max { self.q.ge(m, x) } else { self.q.le(m, x) };
                    self.q.assert(bound);
                    equal_one.push(self.q.eq(m, x));
                }
                let picked = self.q.or(&equal_one);
                self.q.assert(picked);
                m
            }
            Atom::Select(c, a, b) => {
                let (c, a, b) = (self.cond(c)?, self.poly(a)?, self.poly(b)?);
                self.q.ite(c, a, b)
            }
        };
        self.atoms.insert(id, t);
        Some(t)
    }

    /// A constant strictly between two decimals.
    fn bounded(&mut self, name: &str, lo: (i64, i64), hi: (i64, i64)) -> Term {
        let c = self.q.declare_const(name, Sort::Real);
        let (lo, hi) = (self.q.rational(lo.0, lo.1), self.q.rational(hi.0, hi.1));
        let facts = [self.q.lt(lo, c), self.q.lt(c, hi)];
        for f in facts {
            self.q.assert(f);
        }
        c
    }

    fn cond(&mut self, id: CondId) -> Option<Term> {
        if let Some(t) = self.conds.get(&id) {
            return Some(*t);
        }
        let zero = self.int(0);
        let t = match self.nf.cond_of(id).clone() {
            Cond::Const(b) => self.q.bool(b),
            Cond::Cmp(rel, p) => {
                let x = self.poly(p)?;
                match rel {
                    Rel::Eq => self.q.eq(x, zero),
                    Rel::Ne => self.q.not(self.q.eq(x, zero)),
                    Rel::Lt => self.q.lt(x, zero),
                    Rel::Le => self.q.le(x, zero),
                    Rel::Gt => self.q.gt(x, zero),
                    Rel::Ge => self.q.ge(x, zero),
                }
            }
            Cond::Not(c) => {
                let inner = self.cond(c)?;
                self.q.not(inner)
            }
            Cond::And(cs) | Cond::Or(cs) => {
                let is_and = matches!(self.nf.cond_of(id), Cond::And(_));
                let mut parts = Vec::with_capacity(cs.len());
                for c in cs {
                    parts.push(self.cond(c)?);
                }
                if is_and {
                    self.q.and(&parts)
                } else {
                    self.q.or(&parts)
                }
            }
        };
        self.conds.insert(id, t);
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smt::SolverKind;

    fn solver() -> Option<SolverKind> {
        let found = std::process::Command::new("z3").arg("-version").output().is_ok();
        if !found {
            eprintln!("skipped: z3 is not on PATH");
        }
        found.then_some(SolverKind::Z3)
    }

    fn c(n: i64) -> Val {
        Nf::constant(BigRational::from_integer(n.into()))
    }

    fn ask(nf: &Nf, a: &Val, b: &Val) -> Option<Answer> {
        Some(equal(nf, a, b, &mut Solver::new(solver()?), Duration::from_secs(10), &|| false))
    }

    #[test]
    fn clamp_in_either_order_is_the_same_when_the_bounds_are_ordered() {
        let mut nf = Nf::default();
        let x = nf.input(0, 0);
        let (lo, hi) = (c(-1), c(1));
        let a = {
            let m = nf.max(x.clone(), lo.clone()).unwrap();
            nf.min(m, hi.clone()).unwrap()
        };
        let b = {
            let m = nf.min(x.clone(), hi).unwrap();
            nf.max(m, lo).unwrap()
        };
        assert_ne!(a, b, "the normal forms keep the two orders apart");
        assert!(!crate::fingerprint::agree(&nf, &a, &b, 3), "and random interpretation cannot see it");
        if let Some(answer) = ask(&nf, &a, &b) {
            assert_eq!(answer, Answer::Equal);
        }
    }

    #[test]
    fn abs_is_the_root_of_the_square_and_max_is_half_the_sum_plus_half_the_spread() {
        let mut nf = Nf::default();
        let (x, y) = (nf.input(0, 0), nf.input(0, 1));
        let abs = nf.even(Func::Abs, x.clone()).unwrap();
        let sq = nf.mul(x.clone(), x.clone()).unwrap();
        let root = nf.sqrt(sq).unwrap();
        if let Some(answer) = ask(&nf, &abs, &root) {
            assert_eq!(answer, Answer::Equal);
        }
        let max = nf.max(x.clone(), y.clone()).unwrap();
        let sum = nf.add(x.clone(), y.clone()).unwrap();
        let diff = nf.sub(x, y).unwrap();
        let spread = nf.even(Func::Abs, diff).unwrap();
        let twice = nf.add(sum, spread).unwrap();
        let half = nf.div(twice, c(2)).unwrap();
        if let Some(answer) = ask(&nf, &max, &half) {
            assert_eq!(answer, Answer::Equal);
        }
    }

    #[test]
    fn what_differs_is_not_shown_equal() {
        let mut nf = Nf::default();
        let x = nf.input(0, 0);
        // clamp to [-1, 1] against clamp to [-1, 2].
        let a = {
            let m = nf.max(x.clone(), c(-1)).unwrap();
            nf.min(m, c(1)).unwrap()
        };
        let b = {
            let m = nf.min(x.clone(), c(2)).unwrap();
            nf.max(m, c(-1)).unwrap()
        };
        if let Some(answer) = ask(&nf, &a, &b) {
            assert!(matches!(answer, Answer::NotShown(_)), "{answer:?}");
        }
        // exp is uninterpreted: exp(x)·exp(x) against exp(2x) written apart is not claimed.
        let e = nf.exp(x.clone()).unwrap();
        let sq = Val::Finite(nf.mul_poly(&as_poly(&e), &as_poly(&e)));
        let abs = nf.even(Func::Abs, x).unwrap();
        if let Some(answer) = ask(&nf, &sq, &abs) {
            assert!(matches!(answer, Answer::NotShown(_)), "{answer:?}");
        }
    }

    #[test]
    fn large_forms_are_not_sent() {
        let mut nf = Nf::default();
        let mut total = c(0);
        for i in 0..(MAX_MONOMIALS as u64 + 10) {
            let x = nf.input(0, i);
            total = nf.add(total, x).unwrap();
        }
        let answer = equal(&nf, &total, &c(0), &mut Solver::new(SolverKind::Z3), Duration::from_secs(1), &|| false);
        assert!(matches!(&answer, Answer::NotShown(why) if why.contains("monomials")), "{answer:?}");
    }

    /// A max of many arguments is encoded in size linear in them: as a chain of `ite`s that
    /// named the running max twice per step, the query's text doubled with every argument and
    /// a row of 33 never finished printing (memory grew past gigabytes).
    #[test]
    fn a_max_of_many_arguments_is_a_query_of_linear_size() {
        let mut nf = Nf::default();
        let xs: Vec<Val> = (0..40).map(|i| nf.input(0, i)).collect();
        let fold = |nf: &mut Nf, start: Val| xs.iter().fold(start, |m, x| nf.max(m, x.clone()).unwrap());
        let plain = fold(&mut nf, xs[0].clone());
        // Bounded below by a finite constant: equal to the plain max only when some x is above it.
        let floored = fold(&mut nf, c(-1000));
        assert_ne!(plain, floored);
        if let Some(answer) = ask(&nf, &plain, &floored) {
            assert!(matches!(answer, Answer::NotShown(_)), "{answer:?}");
        }
    }

    fn as_poly(v: &Val) -> crate::nf::Poly {
        match v {
            Val::Finite(p) => p.clone(),
            _ => unreachable!(),
        }
    }
}
