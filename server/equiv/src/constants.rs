//! Which constant a kernel literal stands for. A float literal in the kernel is the rounding of
//! the constant the programmer meant: `0.044715f` of the reference's `0.044715`, `0.7978845608f`
//! of `math.sqrt(2 / math.pi)`, `1.4426950f` of `log2(e)`. A literal is replaced by a constant of
//! the reference (or of a small catalogue of well-known constants) exactly when it is that
//! constant rounded to the literal's format; any other literal keeps its own exact value, so a
//! kernel that writes `0.0447f` for `0.044715` does not match.

use crate::nf::{Nf, Val};
use model::interp::{FloatFormat, FloatVal, Rounding};
use num_rational::BigRational;

/// A constant a literal may stand for: its normal form and its value in f64.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub val: Val,
    pub value: f64,
    /// From the reference itself (preferred over the catalogue).
    pub from_reference: bool,
    pub name: String,
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
        let entries: Vec<(&str, Result<Val, crate::nf::NfError>, f64)> = vec![
            ("pi", Ok(pi.clone()), k::PI),
            ("1/pi", nf.inv(pi.clone()), k::FRAC_1_PI),
            ("2/pi", nf.div(int(2), pi.clone()), k::FRAC_2_PI),
            ("sqrt(2/pi)", nf.div(int(2), pi.clone()).and_then(|v| nf.sqrt(v)), (2.0 / k::PI).sqrt()),
            ("sqrt(2)", nf.sqrt(int(2)), k::SQRT_2),
            ("1/sqrt(2)", nf.sqrt(int(2)).and_then(|v| nf.inv(v)), k::FRAC_1_SQRT_2),
            ("ln2", Ok(ln2.clone()), k::LN_2),
            ("log2(e)", nf.inv(ln2), k::LOG2_E),
            ("e", nf.exp(int(1)), k::E),
        ];
        let mut c = Constants::default();
        for (name, v, value) in entries {
            if let Ok(val) = v {
                c.add_signed(nf, Candidate { val, value, from_reference: false, name: name.to_string() });
            }
        }
        c
    }

    /// Adds a constant of the reference.
    pub fn add_reference(&mut self, nf: &mut Nf, val: Val, value: f64, name: String) {
        if value.is_finite() {
            self.add_signed(nf, Candidate { val, value, from_reference: true, name });
        }
    }

    /// Adds a constant and its negation: compilers fold a sign into the literal
    /// (`__expf(-x)` multiplies by `-1.4426950f`).
    fn add_signed(&mut self, nf: &mut Nf, c: Candidate) {
        let negated = Candidate { val: nf.neg(c.val.clone()), value: -c.value, from_reference: c.from_reference, name: format!("-{}", c.name) };
        self.candidates.push(c);
        if !self.candidates.iter().any(|d| d.val == negated.val) {
            self.candidates.push(negated);
        }
    }

    /// What a literal of `bits` bits with exact value `v` stands for: a candidate whose rounding
    /// to that format is `v` (and which is not `v` itself), preferring the reference's; `None`
    /// when there is none or the choice is ambiguous.
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
        let pick = |from_reference: bool| -> Option<&Candidate> {
            let group: Vec<&&Candidate> = matching.iter().filter(|c| c.from_reference == from_reference).collect();
            let first = group.first()?;
            group.iter().all(|c| c.val == first.val).then_some(**first)
        };
        pick(true).or_else(|| pick(false))
    }
}
