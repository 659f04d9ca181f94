//! Normal forms for people: input elements by buffer name and multi-dimensional index, sums of
//! like terms over consecutive elements compressed (`Σ x[0, 0..4095]²`), long expressions cut.

use crate::nf::{Atom, Cond, CondId, Func, Mono, Nf, Poly, PolyId, Val};
use num_rational::BigRational;
use num_traits::{One, Signed};
use std::collections::HashMap;
use std::fmt::Write;

/// How to name a parameter's elements: its name and, when bound to a reference tensor, its shape.
#[derive(Default, Clone)]
pub struct Names {
    pub buffers: HashMap<u32, (String, Option<Vec<usize>>)>,
}

/// Expressions longer than this are cut with `…`.
const MAX_LEN: usize = 600;

impl Names {
    fn element(&self, param: u32, elem: u64) -> String {
        let (name, shape) = self.buffers.get(&param).cloned().unwrap_or_else(|| (format!("param_{param}"), None));
        format!("{name}[{}]", index(elem, shape.as_deref()))
    }

    fn range(&self, param: u32, first: u64, last: u64) -> String {
        let (name, shape) = self.buffers.get(&param).cloned().unwrap_or_else(|| (format!("param_{param}"), None));
        match shape.as_deref() {
            Some(s) if s.len() >= 2 => {
                let inner = *s.last().unwrap_or(&1) as u64;
                if inner > 0 && first / inner == last / inner {
                    let outer = index(first / inner, Some(&s[..s.len() - 1]));
                    return format!("{name}[{outer}, {}..{}]", first % inner, last % inner);
                }
                format!("{name}[{}..{}]", index(first, Some(s)), index(last, Some(s)))
            }
            _ => format!("{name}[{first}..{last}]"),
        }
    }
}

/// `elem` as a row-major index of `shape` (`3, 7`), or itself without a shape.
fn index(elem: u64, shape: Option<&[usize]>) -> String {
    let Some(shape) = shape.filter(|s| s.len() > 1) else { return elem.to_string() };
    let mut rest = elem;
    let mut parts = vec![0u64; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1) as u64;
        parts[d] = rest % n;
        rest /= n;
    }
    parts.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
}

pub fn val(nf: &Nf, names: &Names, v: &Val) -> String {
    let s = match v {
        Val::Finite(p) => Renderer { nf, names }.poly(p),
        Val::NegInf => "-inf".into(),
        Val::PosInf => "inf".into(),
    };
    cut(s)
}

fn cut(s: String) -> String {
    if s.chars().count() <= MAX_LEN {
        return s;
    }
    let head: String = s.chars().take(MAX_LEN - 1).collect();
    format!("{head}…")
}

fn rational(r: &BigRational) -> String {
    if r.is_integer() {
        return r.numer().to_string();
    }
    let den = r.denom().to_string();
    if den.len() <= 6 {
        return format!("{}/{}", r.numer(), den);
    }
    let f = num_traits::ToPrimitive::to_f64(r).unwrap_or(f64::NAN);
    format!("{f:e}")
}

struct Renderer<'a> {
    nf: &'a Nf,
    names: &'a Names,
}

impl Renderer<'_> {
    fn poly_id(&self, id: PolyId) -> String {
        self.poly(self.nf.poly_of(id))
    }

    fn poly(&self, p: &Poly) -> String {
        if p.terms.is_empty() {
            return "0".into();
        }
        // Group terms that differ only in one input element (same buffer, same power, same rest,
        // same coefficient) into sums over element ranges.
        type Key = (u32, i32, Mono, BigRational);
        type Group = (Option<Key>, Vec<(u64, usize)>);
        let mut groups: Vec<Group> = Vec::new();
        let mut by_key: HashMap<Key, usize> = HashMap::new();
        for (i, (m, c)) in p.terms.iter().enumerate() {
            let found = m.factors.iter().enumerate().find_map(|(n, &(a, k))| match self.nf.atom_of(a) {
                Atom::Input { param, elem } => Some((n, *param, *elem, k)),
                _ => None,
            });
            match found {
                Some((n, param, elem, k)) => {
                    let mut rest = m.clone();
                    rest.factors.remove(n);
                    let key = (param, k, rest, c.clone());
                    match by_key.get(&key) {
                        Some(&g) => groups[g].1.push((elem, i)),
                        None => {
                            by_key.insert(key.clone(), groups.len());
                            groups.push((Some(key), vec![(elem, i)]));
                        }
                    }
                }
                None => groups.push((None, vec![(0, i)])),
            }
        }
        let mut parts: Vec<(bool, String)> = Vec::new();
        // Rendering stops once the text is longer than it will be shown (nested sums of a long
        // row would otherwise be written out for every term, and cut away).
        let shown = |parts: &Vec<(bool, String)>| parts.iter().map(|(_, s)| s.len() + 3).sum::<usize>() > MAX_LEN * 2;
        let mut truncated = false;
        for (key, mut members) in groups {
            if shown(&parts) {
                truncated = true;
                break;
            }
            match key {
                Some((param, k, rest, c)) if members.len() >= 3 => {
                    members.sort_unstable();
                    let elems: Vec<u64> = members.iter().map(|(e, _)| *e).collect();
                    for run in runs(&elems) {
                        let body = if run.0 == run.1 { self.names.element(param, run.0) } else { format!("Σ {}", self.names.range(param, run.0, run.1)) };
                        let body = if k == 1 { body } else { format!("{body}{}", power(k)) };
                        parts.push(self.with_rest(&c, &rest, body));
                    }
                }
                _ => {
                    for (_, i) in members {
                        if shown(&parts) {
                            truncated = true;
                            break;
                        }
                        let (m, c) = &p.terms[i];
                        parts.push(self.term(m, c));
                    }
                }
            }
        }
        let mut out = String::new();
        for (i, (neg, s)) in parts.iter().enumerate() {
            match (i, neg) {
                (0, true) => out.push('-'),
                (0, false) => {}
                (_, true) => out.push_str(" - "),
                (_, false) => out.push_str(" + "),
            }
            out.push_str(s);
            if out.len() > MAX_LEN * 2 {
                out.push_str(" + …");
                return out;
            }
        }
        if truncated {
            out.push_str(" + …");
        }
        out
    }

    /// `c · rest · body`, with the sign apart.
    fn with_rest(&self, c: &BigRational, rest: &Mono, body: String) -> (bool, String) {
        let (neg, mut s) = self.coefficient(c);
        let factors = self.mono(rest);
        for f in [factors, Some(body)].into_iter().flatten() {
            if !s.is_empty() {
                s.push('·');
            }
            s.push_str(&f);
        }
        (neg, s)
    }

    fn coefficient(&self, c: &BigRational) -> (bool, String) {
        let a = c.abs();
        (c.is_negative(), if a.is_one() { String::new() } else { rational(&a) })
    }

    fn term(&self, m: &Mono, c: &BigRational) -> (bool, String) {
        let (neg, mut s) = self.coefficient(c);
        if let Some(f) = self.mono(m) {
            if !s.is_empty() {
                s.push('·');
            }
            s.push_str(&f);
        } else if s.is_empty() {
            s.push('1');
        }
        (neg, s)
    }

    fn mono(&self, m: &Mono) -> Option<String> {
        let mut parts = Vec::new();
        for &(a, k) in &m.factors {
            let base = self.atom(a);
            parts.push(if k == 1 { base } else { format!("{base}{}", power(k)) });
        }
        if let Some(e) = m.exp {
            parts.push(format!("exp({})", self.poly_id(e)));
        }
        (!parts.is_empty()).then(|| parts.join("·"))
    }

    fn atom(&self, a: crate::nf::AtomId) -> String {
        match self.nf.atom_of(a) {
            Atom::Input { param, elem } => self.names.element(*param, *elem),
            Atom::Initial { param, elem } => format!("{} (as it was before the kernel ran)", self.names.element(*param, *elem)),
            Atom::Pi => "π".into(),
            Atom::Ln2 => "ln2".into(),
            Atom::Apply(f, p) => {
                let inner = self.poly_id(*p);
                match f {
                    Func::Sqrt => format!("sqrt({inner})"),
                    Func::Log => format!("log({inner})"),
                    Func::Tanh => format!("tanh({inner})"),
                    Func::Erf => format!("erf({inner})"),
                    Func::Sin => format!("sin({inner})"),
                    Func::Cos => format!("cos({inner})"),
                    Func::Abs => format!("|{inner}|"),
                    Func::Inv => format!("1/({inner})"),
                    Func::Group => format!("({inner})"),
                }
            }
            Atom::Max(ps) => format!("max({})", self.arguments(ps)),
            Atom::Min(ps) => format!("min({})", self.arguments(ps)),
            Atom::Select(c, x, y) => format!("({} ? {} : {})", self.cond(*c), self.poly_id(*x), self.poly_id(*y)),
        }
    }

    /// The arguments of an n-ary max/min: plain input elements of one buffer as ranges (a row
    /// max reads `max(x[0, 0..999])`), the others in full.
    fn arguments(&self, ps: &[PolyId]) -> String {
        let mut plain: std::collections::BTreeMap<u32, Vec<u64>> = std::collections::BTreeMap::new();
        let mut others = Vec::new();
        for &p in ps {
            let poly = self.nf.poly_of(p);
            let single = match poly.terms.as_slice() {
                [(m, c)] if c.is_one() && m.exp.is_none() && m.factors.len() == 1 && m.factors[0].1 == 1 => match self.nf.atom_of(m.factors[0].0) {
                    Atom::Input { param, elem } => Some((*param, *elem)),
                    _ => None,
                },
                _ => None,
            };
            match single {
                Some((param, elem)) => plain.entry(param).or_default().push(elem),
                None => others.push(self.poly_id(p)),
            }
        }
        let mut parts = Vec::new();
        for (param, mut elems) in plain {
            elems.sort_unstable();
            for (first, last) in runs(&elems) {
                parts.push(if first == last { self.names.element(param, first) } else { self.names.range(param, first, last) });
            }
        }
        parts.extend(others);
        parts.join(", ")
    }

    fn cond(&self, c: CondId) -> String {
        match self.nf.cond_of(c) {
            Cond::Const(b) => b.to_string(),
            Cond::Cmp(rel, p) => format!("{} {} 0", self.poly_id(*p), rel.symbol()),
            Cond::Not(x) => format!("!({})", self.cond(*x)),
            Cond::And(xs) => xs.iter().map(|&x| self.cond(x)).collect::<Vec<_>>().join(" && "),
            Cond::Or(xs) => xs.iter().map(|&x| self.cond(x)).collect::<Vec<_>>().join(" || "),
        }
    }
}

fn power(k: i32) -> String {
    let digits = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut s = String::new();
    if k < 0 {
        s.push('⁻');
    }
    for ch in k.unsigned_abs().to_string().chars() {
        let _ = write!(s, "{}", digits[ch.to_digit(10).unwrap_or(0) as usize]);
    }
    s
}

/// Maximal runs of consecutive values in a sorted list.
fn runs(v: &[u64]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &x in v {
        match out.last_mut() {
            Some((_, hi)) if *hi + 1 == x => *hi = x,
            _ => out.push((x, x)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_over_a_row_are_compressed() {
        let mut nf = Nf::default();
        let mut names = Names::default();
        names.buffers.insert(0, ("x".into(), Some(vec![2, 8])));
        let mut s = Nf::constant(BigRational::from_integer(0.into()));
        for j in 8..16 {
            let v = nf.input(0, j);
            let sq = nf.mul(v.clone(), v).unwrap();
            s = nf.add(s, sq).unwrap();
        }
        let s = nf.mul(s, Nf::constant(BigRational::new(1.into(), 8.into()))).unwrap();
        assert_eq!(val(&nf, &names, &s), "1/8·Σ x[1, 0..7]²");
    }
}
