//! Evaluating normal forms in f64 at concrete inputs: how the engine looks for a counterexample
//! when two normal forms differ (the counterexample itself is then confirmed by running the
//! real kernel in the interpreter and the reference's exact evaluator).

use crate::nf::{Atom, AtomId, Cond, CondId, Func, Nf, PolyId, Val};
use num_traits::ToPrimitive;
use std::collections::HashMap;

/// Input values by (parameter, element), for inputs and for the initial contents of outputs.
pub struct Point<'a> {
    pub inputs: &'a dyn Fn(u32, u64) -> f64,
    pub initial: &'a dyn Fn(u32, u64) -> f64,
}

pub struct Evaluator<'a> {
    nf: &'a Nf,
    point: Point<'a>,
    atoms: HashMap<AtomId, f64>,
    polys: HashMap<PolyId, f64>,
}

impl<'a> Evaluator<'a> {
    pub fn new(nf: &'a Nf, point: Point<'a>) -> Evaluator<'a> {
        Evaluator { nf, point, atoms: HashMap::new(), polys: HashMap::new() }
    }

    pub fn val(&mut self, v: &Val) -> f64 {
        match v {
            Val::Finite(p) => self.poly_terms(&p.terms),
            Val::NegInf => f64::NEG_INFINITY,
            Val::PosInf => f64::INFINITY,
        }
    }

    fn poly_terms(&mut self, terms: &[(crate::nf::Mono, num_rational::BigRational)]) -> f64 {
        let mut sum = 0.0;
        for (m, c) in terms {
            let mut v = c.to_f64().unwrap_or(f64::NAN);
            for &(a, k) in &m.factors {
                v *= self.atom(a).powi(k);
            }
            if let Some(e) = m.exp {
                v *= self.poly(e).exp();
            }
            sum += v;
        }
        sum
    }

    fn poly(&mut self, id: PolyId) -> f64 {
        if let Some(&v) = self.polys.get(&id) {
            return v;
        }
        let terms = self.nf.poly_of(id).terms.clone();
        let v = self.poly_terms(&terms);
        self.polys.insert(id, v);
        v
    }

    fn cond(&mut self, id: CondId) -> bool {
        match self.nf.cond_of(id).clone() {
            Cond::Const(b) => b,
            Cond::Cmp(rel, p) => {
                let v = self.poly(p);
                v.partial_cmp(&0.0).is_some_and(|o| rel.holds(o))
            }
            Cond::Not(c) => !self.cond(c),
            Cond::And(cs) => cs.into_iter().all(|c| self.cond(c)),
            Cond::Or(cs) => cs.into_iter().any(|c| self.cond(c)),
        }
    }

    fn atom(&mut self, id: AtomId) -> f64 {
        if let Some(&v) = self.atoms.get(&id) {
            return v;
        }
        let v = match self.nf.atom_of(id).clone() {
            Atom::Input { param, elem } => (self.point.inputs)(param, elem),
            Atom::Initial { param, elem } => (self.point.initial)(param, elem),
            Atom::Pi => std::f64::consts::PI,
            Atom::Ln2 => std::f64::consts::LN_2,
            Atom::Apply(f, p) => {
                let x = self.poly(p);
                match f {
                    Func::Sqrt => x.sqrt(),
                    Func::Log => x.ln(),
                    Func::Tanh => x.tanh(),
                    Func::Erf => model::math::erf(x),
                    Func::Sin => x.sin(),
                    Func::Cos => x.cos(),
                    Func::Abs => x.abs(),
                    Func::Inv => 1.0 / x,
                    Func::Group => x,
                }
            }
            Atom::Max(ps) => ps.iter().map(|&p| self.poly(p)).fold(f64::NEG_INFINITY, f64::max),
            Atom::Min(ps) => ps.iter().map(|&p| self.poly(p)).fold(f64::INFINITY, f64::min),
            Atom::Select(c, a, b) => {
                if self.cond(c) {
                    self.poly(a)
                } else {
                    self.poly(b)
                }
            }
        };
        self.atoms.insert(id, v);
        v
    }
}

#[cfg(test)]
mod tests {}
