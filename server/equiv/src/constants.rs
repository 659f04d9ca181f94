//! Which constant a kernel literal stands for. A float literal in the kernel is the rounding of
//! the constant the programmer meant: `0.044715f` of the reference's `0.044715`, `0.7978845608f`
//! of `math.sqrt(2 / math.pi)`, `1.4426950f` of `log2(e)`. A literal is replaced by a constant of
//! the reference (or of a small catalogue of well-known constants) exactly when it is that
//! constant rounded to the literal's format; any other literal keeps its own exact value, so a
//! kernel that writes `0.0447f` for `0.044715` does not match. A literal may also round the
//! reciprocal of a reference constant: kernels multiply where the reference divides
//! (`x * 0.0883883f` for `x / math.sqrt(128)`, `x * (1.0f / 768)` for `x / 768`).

use crate::convert;
use crate::nf::{self, Nf, Val};
use model::budget::Budget;
use model::interp::{FloatFormat, FloatVal, Rounding};
use num_rational::BigRational;
use reference::NodeId;

/// A well-known constant of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Known {
    Pi,
    /// `1/π`.
    InvPi,
    /// `2/π`.
    TwoOverPi,
    /// `√(2/π)`.
    SqrtTwoOverPi,
    /// `√2`.
    Sqrt2,
    /// `1/√2`.
    InvSqrt2,
    /// `ln 2`.
    Ln2,
    /// `log₂ e = 1/ln 2`.
    Log2E,
    /// Euler's number, `exp 1`.
    E,
}

/// Where a constant a literal may stand for comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    Catalogue(Known),
    /// A constant sub-expression of the reference: its node in the lowered graph.
    Reference(NodeId),
}

/// A constant a literal may stand for: its normal form and its value in f64.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub val: Val,
    pub value: f64,
    /// From the reference itself (preferred over the catalogue).
    pub from_reference: bool,
    pub name: String,
    pub origin: Origin,
    /// The negation of the constant `origin` names (compilers fold a sign into the literal).
    pub negated: bool,
    /// The reciprocal of the constant `origin` names (before any negation).
    pub reciprocal: bool,
}

#[derive(Default)]
pub struct Constants {
    candidates: Vec<Candidate>,
}

impl Constants {
    /// The catalogue of well-known constants kernels write as literals.
    pub fn with_catalogue(nf: &mut Nf) -> Constants {
        use std::f64::consts as k;
        let pi = nf.pi();
        let ln2 = nf.ln2();
        let int = |n: i64| Nf::constant(BigRational::from_integer(n.into()));
        let entries: Vec<(&str, Known, Result<Val, crate::nf::NfError>, f64)> = vec![
            ("pi", Known::Pi, Ok(pi.clone()), k::PI),
            ("1/pi", Known::InvPi, nf.inv(pi.clone()), k::FRAC_1_PI),
            ("2/pi", Known::TwoOverPi, nf.div(int(2), pi.clone()), k::FRAC_2_PI),
            ("sqrt(2/pi)", Known::SqrtTwoOverPi, nf.div(int(2), pi.clone()).and_then(|v| nf.sqrt(v)), (2.0 / k::PI).sqrt()),
            ("sqrt(2)", Known::Sqrt2, nf.sqrt(int(2)), k::SQRT_2),
            ("1/sqrt(2)", Known::InvSqrt2, nf.sqrt(int(2)).and_then(|v| nf.inv(v)), k::FRAC_1_SQRT_2),
            ("ln2", Known::Ln2, Ok(ln2.clone()), k::LN_2),
            ("log2(e)", Known::Log2E, nf.inv(ln2), k::LOG2_E),
            ("e", Known::E, nf.exp(int(1)), k::E),
        ];
        let mut c = Constants::default();
        for (name, known, v, value) in entries {
            if let Ok(val) = v {
                c.add_signed(
                    nf,
                    Candidate {
                        val,
                        value,
                        from_reference: false,
                        name: name.to_string(),
                        origin: Origin::Catalogue(known),
                        negated: false,
                        reciprocal: false,
                    },
                );
            }
        }
        c
    }

    /// The catalogue plus the constants of a reference graph (its constant sub-expressions),
    /// as the equivalence check and the Lean facts both use them.
    pub fn for_reference(nf: &mut Nf, g: &reference::Graph, budget: &Budget) -> Constants {
        let mut c = Constants::with_catalogue(nf);
        let mut constant = vec![false; g.len()];
        let mut ids = Vec::new();
        for (id, node) in g.nodes() {
            let is_const = match node {
                reference::Node::Input { .. } => false,
                reference::Node::Const(_) | reference::Node::Pi | reference::Node::E => true,
                n => n.children().all(|ch| constant[ch.index()]),
            };
            constant[id.index()] = is_const;
            if is_const {
                ids.push(id);
            }
        }
        if ids.is_empty() {
            return c;
        }
        let values = reference::evaluate(g, &ids, &[]).unwrap_or_default();
        let no_inputs = |_: &mut Nf, _: u32, _: u64| -> nf::R<Val> { Err(nf::NfError::Unsupported("input".into())) };
        let vals = convert::reference_vals(nf, g, &ids, &no_inputs, budget);
        for ((id, v), val) in ids.iter().zip(values).zip(vals) {
            if let (Some(x), Ok(val)) = (crate::value_f64(&v), val) {
                c.add_reference(nf, val, x, *id);
            }
        }
        c
    }

    /// Adds a constant of the reference, node `node` of its graph, and its reciprocal.
    pub fn add_reference(&mut self, nf: &mut Nf, val: Val, value: f64, node: NodeId) {
        if !value.is_finite() {
            return;
        }
        let name = format!("reference constant #{}", node.index());
        if value != 0.0 {
            if let Ok(inverse) = nf.inv(val.clone()) {
                let reciprocal = Candidate {
                    val: inverse,
                    value: 1.0 / value,
                    from_reference: true,
                    name: format!("1/{name}"),
                    origin: Origin::Reference(node),
                    negated: false,
                    reciprocal: true,
                };
                self.add_signed(nf, reciprocal);
            }
        }
        self.add_signed(nf, Candidate { val, value, from_reference: true, name, origin: Origin::Reference(node), negated: false, reciprocal: false });
    }

    /// Adds a constant and its negation: compilers fold a sign into the literal
    /// (`__expf(-x)` multiplies by `-1.4426950f`).
    fn add_signed(&mut self, nf: &mut Nf, c: Candidate) {
        let negated = Candidate {
            val: nf.neg(c.val.clone()),
            value: -c.value,
            from_reference: c.from_reference,
            name: format!("-{}", c.name),
            origin: c.origin,
            negated: true,
            reciprocal: c.reciprocal,
        };
        self.candidates.push(c);
        if !self.candidates.iter().any(|d| d.val == negated.val) {
            self.candidates.push(negated);
        }
    }

    /// What a literal of `bits` bits with exact value `v` stands for: a candidate whose rounding
    /// to that format is `v` (and which is not `v` itself), preferring the reference's constants
    /// themselves, then their reciprocals, then the catalogue; `None` when there is none or the
    /// choice within the first group that has one is ambiguous (a reciprocal reading never
    /// makes a direct one ambiguous).
    pub fn recognise(&self, v: &BigRational, bits: u32) -> Option<&Candidate> {
        let fmt = match bits {
            16 => FloatFormat::F16,
            32 => FloatFormat::F32,
            64 => FloatFormat::F64,
            _ => return None,
        };
        let target = FloatVal::Finite(v.clone()).to_bits(fmt, Rounding::NearestEven);
        let matching: Vec<&Candidate> = self
            .candidates
            .iter()
            .filter(|c| {
                // A constant equal to the literal needs no replacing.
                let exact = match &c.val {
                    Val::Finite(p) => p.as_constant(),
                    _ => None,
                };
                let rounded = match &exact {
                    Some(r) => FloatVal::Finite(r.clone()).to_bits(fmt, Rounding::NearestEven),
                    None => FloatVal::from_f64(c.value).to_bits(fmt, Rounding::NearestEven),
                };
                rounded == target && exact.as_ref() != Some(v)
            })
            .collect();
        let pick = |from_reference: bool, reciprocal: bool| -> Option<&Candidate> {
            let group: Vec<&&Candidate> = matching.iter().filter(|c| c.from_reference == from_reference && c.reciprocal == reciprocal).collect();
            let first = group.first()?;
            group.iter().all(|c| c.val == first.val).then_some(**first)
        };
        pick(true, false).or_else(|| pick(true, true)).or_else(|| pick(false, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    fn rational(x: f64) -> BigRational {
        BigRational::from_float(x).unwrap()
    }

    #[test]
    fn a_literal_reads_as_a_reference_constant_before_a_reciprocal_of_another() {
        // 0.1f rounds both the reference's 0.1 and 1/9.99999999 (another constant).
        let mut nf = Nf::default();
        let mut c = Constants::default();
        let tenth = BigRational::new(BigInt::from(1), BigInt::from(10));
        let near_ten = BigRational::new(BigInt::from(999_999_999), BigInt::from(100_000_000));
        c.add_reference(&mut nf, Nf::constant(near_ten), 9.99999999, NodeId(1));
        let literal = rational(0.1f32 as f64);
        let only = c.recognise(&literal, 32).expect("the reciprocal alone is a reading");
        assert!(only.reciprocal && only.origin == Origin::Reference(NodeId(1)), "{only:?}");
        c.add_reference(&mut nf, Nf::constant(tenth), 0.1, NodeId(0));
        let both = c.recognise(&literal, 32).expect("not ambiguous: the direct reading comes first");
        assert!(!both.reciprocal && both.origin == Origin::Reference(NodeId(0)), "{both:?}");
    }
}
