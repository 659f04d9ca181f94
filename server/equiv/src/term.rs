//! The kernel's values as terms over its inputs: a hash-consed DAG built by the shadow run
//! ([`crate::shadow`]) beside the concrete interpreter. A term records what the kernel computed,
//! operation by operation, with its literals kept as written (they are matched against the
//! reference's constants later, see [`crate::constants`]).

use model::interp::FloatVal;
use model::FloatCmp;
use num_rational::BigRational;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TermId(pub u32);

/// Float operations of the kernel, as the model names them (`ex2` is `2^x`, `lg2` is `log2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fun {
    Sqrt,
    Rsqrt,
    Rcp,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    /// libdevice's `erff` (see `model::ops::FloatOp::Erf`).
    Erf,
    Abs,
    Neg,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// A float literal of the kernel (or a float scalar parameter), at its width in bits.
    Literal {
        value: FloatValKey,
        bits: u32,
    },
    /// An exact number from integer data (a loop bound converted to float, say).
    Exact(BigRational),
    NegInf,
    PosInf,
    /// Element `elem` of the buffer behind parameter `param`, as the kernel found it.
    Input {
        param: u32,
        elem: u64,
    },
    /// The contents of element `elem` of output buffer `param` before the kernel ran (what an
    /// element the kernel never writes still holds).
    Initial {
        param: u32,
        elem: u64,
    },
    Add(TermId, TermId),
    Sub(TermId, TermId),
    Mul(TermId, TermId),
    Div(TermId, TermId),
    /// `a * b + c`.
    Fma(TermId, TermId, TermId),
    Min(TermId, TermId),
    Max(TermId, TermId),
    Fun(Fun, TermId),
    /// 1 when the comparison holds, else 0.
    Cmp(FloatCmp, TermId, TermId),
    Not(TermId),
    And(TermId, TermId),
    Or(TermId, TermId),
    /// `if c { a } else { b }`.
    Select(TermId, TermId, TermId),
}

impl Term {
    /// The operands of this term, in order.
    pub fn children(&self) -> Vec<TermId> {
        match *self {
            Term::Literal { .. } | Term::Exact(_) | Term::NegInf | Term::PosInf | Term::Input { .. } | Term::Initial { .. } => vec![],
            Term::Fun(_, a) | Term::Not(a) => vec![a],
            Term::Add(a, b)
            | Term::Sub(a, b)
            | Term::Mul(a, b)
            | Term::Div(a, b)
            | Term::Min(a, b)
            | Term::Max(a, b)
            | Term::Cmp(_, a, b)
            | Term::And(a, b)
            | Term::Or(a, b) => vec![a, b],
            Term::Fma(a, b, c) | Term::Select(a, b, c) => vec![a, b, c],
        }
    }
}

/// A float value as a hashable key (the exact rational, or an IEEE special).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FloatValKey {
    Finite(BigRational),
    Inf { negative: bool },
    NaN,
}

impl From<&FloatVal> for FloatValKey {
    fn from(v: &FloatVal) -> Self {
        match v {
            FloatVal::Finite(r) => FloatValKey::Finite(r.clone()),
            FloatVal::Inf { negative } => FloatValKey::Inf { negative: *negative },
            FloatVal::NaN => FloatValKey::NaN,
        }
    }
}

/// The arena of terms, shared by all threads of a run.
#[derive(Default)]
pub struct Terms {
    nodes: Vec<Term>,
    index: HashMap<Term, TermId>,
}

impl Terms {
    pub fn add(&mut self, t: Term) -> TermId {
        if let Some(&id) = self.index.get(&t) {
            return id;
        }
        let id = TermId(self.nodes.len() as u32);
        self.nodes.push(t.clone());
        self.index.insert(t, id);
        id
    }

    pub fn get(&self, id: TermId) -> &Term {
        &self.nodes[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// A float constant: literals keep their width, infinities are their own terms.
    pub fn float(&mut self, v: &FloatVal, bits: u32) -> TermId {
        match v {
            FloatVal::Inf { negative: true } => self.add(Term::NegInf),
            FloatVal::Inf { negative: false } => self.add(Term::PosInf),
            _ => self.add(Term::Literal { value: v.into(), bits }),
        }
    }

    pub fn exact(&mut self, r: BigRational) -> TermId {
        self.add(Term::Exact(r))
    }
}
