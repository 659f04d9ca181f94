//! Bringing both sides into normal form: the kernel's terms (with literals recognised as the
//! constants they stand for) and the reference's scalar graph. Both are DAGs whose ids are in
//! topological order (children first), so each is converted in one pass over the needed ids,
//! handing a child's value to its last user instead of copying it (a long sequential sum
//! stays linear).

use crate::constants::Constants;
use crate::nf::{CondId, Func, Nf, NfError, Rel, Val, R};
use crate::term::{FloatValKey, Fun, Term, TermId, Terms};
use model::budget::Budget;
use model::FloatCmp;
use num_rational::BigRational;
use num_traits::One;
use reference::{CmpOp, Graph, Node, NodeId, UnaryFn};
use std::collections::HashMap;

/// A converted node: a number or a condition.
#[derive(Clone, Debug)]
pub enum Conv {
    V(Val),
    C(CondId),
}

impl Conv {
    fn val(self, nf: &mut Nf) -> Val {
        match self {
            Conv::V(v) => v,
            Conv::C(c) => nf.indicator(c),
        }
    }

    fn cond(self, nf: &mut Nf) -> R<CondId> {
        match self {
            Conv::C(c) => Ok(c),
            Conv::V(v) => nf.truthy(v),
        }
    }
}

/// Values of the nodes of a DAG, handed out to their users: each slot is cloned for all but
/// its last use, which takes it.
impl From<model::budget::Stop> for NfError {
    fn from(stop: model::budget::Stop) -> NfError {
        match stop {
            model::budget::Stop::Memory => NfError::Memory,
            _ => NfError::Budget,
        }
    }
}

struct Slots {
    values: Vec<Option<R<Conv>>>,
    /// Whether a root depends on the node (only those are converted).
    needed: Vec<bool>,
    uses: Vec<u32>,
    /// The inverse of a node's value, once something was divided by it: a row's sum is the
    /// denominator of every element of the row, and its inverse is found once, not per element.
    inverses: HashMap<usize, Val>,
}

impl Slots {
    fn new(n: usize, children: impl Fn(usize) -> Vec<usize>, roots: &[usize]) -> Slots {
        let mut needed = vec![false; n];
        let mut stack: Vec<usize> = roots.to_vec();
        while let Some(i) = stack.pop() {
            if i >= n || std::mem::replace(&mut needed[i], true) {
                continue;
            }
            stack.extend(children(i));
        }
        let mut uses = vec![0u32; n];
        for (i, _) in needed.iter().enumerate().filter(|(_, n)| **n) {
            {
                for c in children(i) {
                    uses[c] += 1;
                }
            }
        }
        for &r in roots {
            uses[r] += 1;
        }
        Slots { values: (0..n).map(|_| None).collect(), needed, uses, inverses: HashMap::new() }
    }

    fn needed(&self, i: usize) -> bool {
        self.needed[i]
    }

    /// `op` of nodes `a` and `b` (the binary arithmetic both converters share).
    fn binary(&mut self, nf: &mut Nf, a: usize, b: usize, op: fn(&mut Nf, Val, Val) -> R<Val>) -> R<Conv> {
        let x = self.take(a)?.val(nf);
        let y = self.take(b)?.val(nf);
        Ok(Conv::V(op(nf, x, y)?))
    }

    /// One use of node `i` without its value (the value is dropped after its last use).
    fn release(&mut self, i: usize) {
        self.uses[i] = self.uses[i].saturating_sub(1);
        if self.uses[i] == 0 {
            self.values[i] = None;
        }
    }

    /// `a / node bi`, with the inverse of a finite denominator computed once per node.
    fn divide(&mut self, nf: &mut Nf, a: Val, bi: usize) -> R<Val> {
        if let Some(inv) = self.inverses.get(&bi).cloned() {
            self.release(bi);
            return nf.mul(a, inv);
        }
        let b = self.take(bi)?.val(nf);
        if !matches!((&a, &b), (Val::Finite(_), Val::Finite(_))) || self.uses[bi] == 0 {
            return nf.div(a, b);
        }
        let inv = nf.inv(b)?;
        self.inverses.insert(bi, inv.clone());
        nf.mul(a, inv)
    }

    fn take(&mut self, i: usize) -> R<Conv> {
        self.uses[i] = self.uses[i].saturating_sub(1);
        if self.uses[i] == 0 {
            self.values[i].take().unwrap_or_else(|| Err(NfError::Unsupported("a node was used before it was computed".into())))
        } else {
            self.values[i].clone().unwrap_or_else(|| Err(NfError::Unsupported("a node was used before it was computed".into())))
        }
    }
}

fn rel_of_float(c: FloatCmp) -> R<Rel> {
    Ok(match c {
        FloatCmp::Eq => Rel::Eq,
        FloatCmp::Ne => Rel::Ne,
        FloatCmp::Lt => Rel::Lt,
        FloatCmp::Le => Rel::Le,
        FloatCmp::Gt => Rel::Gt,
        FloatCmp::Ge => Rel::Ge,
        FloatCmp::Other => return Err(NfError::Unsupported("an unknown float comparison".into())),
    })
}

fn rel_of(c: CmpOp) -> Rel {
    match c {
        CmpOp::Eq => Rel::Eq,
        CmpOp::Ne => Rel::Ne,
        CmpOp::Lt => Rel::Lt,
        CmpOp::Le => Rel::Le,
        CmpOp::Gt => Rel::Gt,
        CmpOp::Ge => Rel::Ge,
    }
}

/// A literal of the kernel: the constant it stands for, else its exact value.
fn literal(consts: &Constants, v: &FloatValKey, bits: u32) -> R<Val> {
    match v {
        FloatValKey::Finite(r) => Ok(match consts.recognise(r, bits) {
            Some(c) => c.val.clone(),
            None => Nf::constant(r.clone()),
        }),
        FloatValKey::Inf { negative: true } => Ok(Val::NegInf),
        FloatValKey::Inf { negative: false } => Ok(Val::PosInf),
        FloatValKey::NaN => Err(NfError::Unsupported("a NaN literal".into())),
    }
}

/// The normal forms of the kernel terms `roots`.
pub fn kernel_vals(nf: &mut Nf, consts: &Constants, terms: &Terms, roots: &[TermId], budget: &Budget) -> Vec<R<Val>> {
    let n = terms.len();
    let root_idx: Vec<usize> = roots.iter().map(|r| r.0 as usize).collect();
    let mut slots = Slots::new(n, |i| terms.get(TermId(i as u32)).children().iter().map(|c| c.0 as usize).collect(), &root_idx);
    for i in 0..n {
        if !slots.needed(i) {
            continue;
        }
        if i % 1024 == 0 {
            if let Err(stop) = budget.check() {
                return roots.iter().map(|_| Err(NfError::from(stop))).collect();
            }
        }
        let t = terms.get(TermId(i as u32));
        let r = convert_term(nf, consts, t, &mut slots);
        slots.values[i] = Some(r);
    }
    root_idx.iter().map(|&r| slots.take(r).map(|c| c.val(nf))).collect()
}

fn convert_term(nf: &mut Nf, consts: &Constants, t: &Term, slots: &mut Slots) -> R<Conv> {
    let mut v = |i: &TermId| -> R<Conv> { slots.take(i.0 as usize) };
    Ok(match t {
        Term::Literal { value, bits } => Conv::V(literal(consts, value, *bits)?),
        Term::Exact(r) => Conv::V(Nf::constant(r.clone())),
        Term::NegInf => Conv::V(Val::NegInf),
        Term::PosInf => Conv::V(Val::PosInf),
        Term::Input { param, elem } => Conv::V(nf.input(*param, *elem)),
        Term::Initial { param, elem } => Conv::V(Val::Finite(nf.atom_poly(crate::nf::Atom::Initial { param: *param, elem: *elem }))),
        Term::Add(a, b) => slots.binary(nf, a.0 as usize, b.0 as usize, Nf::add)?,
        Term::Sub(a, b) => slots.binary(nf, a.0 as usize, b.0 as usize, Nf::sub)?,
        Term::Mul(a, b) => slots.binary(nf, a.0 as usize, b.0 as usize, Nf::mul)?,
        Term::Div(a, b) => {
            let x = v(a)?.val(nf);
            Conv::V(slots.divide(nf, x, b.0 as usize)?)
        }
        Term::Fma(a, b, c) => {
            let (x, y, z) = (v(a)?.val(nf), v(b)?.val(nf), v(c)?.val(nf));
            let p = nf.mul(x, y)?;
            Conv::V(nf.add(p, z)?)
        }
        Term::Min(a, b) => slots.binary(nf, a.0 as usize, b.0 as usize, Nf::min)?,
        Term::Max(a, b) => slots.binary(nf, a.0 as usize, b.0 as usize, Nf::max)?,
        Term::Fun(f, a) => {
            let x = v(a)?.val(nf);
            Conv::V(match f {
                Fun::Neg => nf.neg(x),
                Fun::Abs => nf.even(Func::Abs, x)?,
                Fun::Sqrt => nf.sqrt(x)?,
                Fun::Rsqrt => {
                    let s = nf.sqrt(x)?;
                    nf.inv(s)?
                }
                Fun::Rcp => nf.inv(x)?,
                Fun::Ex2 => nf.exp2(x)?,
                Fun::Lg2 => nf.log2(x)?,
                Fun::Sin => nf.odd(Func::Sin, x)?,
                Fun::Cos => nf.even(Func::Cos, x)?,
                Fun::Tanh => nf.odd(Func::Tanh, x)?,
                Fun::Erf => nf.odd(Func::Erf, x)?,
            })
        }
        Term::Cmp(c, a, b) => {
            let (x, y) = (v(a)?.val(nf), v(b)?.val(nf));
            Conv::C(nf.compare(rel_of_float(*c)?, x, y)?)
        }
        Term::Not(a) => {
            let c = v(a)?.cond(nf)?;
            Conv::C(nf.not(c))
        }
        Term::And(a, b) => {
            let (x, y) = (v(a)?.cond(nf)?, v(b)?.cond(nf)?);
            Conv::C(nf.and(x, y))
        }
        Term::Or(a, b) => {
            let (x, y) = (v(a)?.cond(nf)?, v(b)?.cond(nf)?);
            Conv::C(nf.or(x, y))
        }
        Term::Select(c, a, b) => {
            let cond = v(c)?.cond(nf)?;
            let (x, y) = (v(a)?.val(nf), v(b)?.val(nf));
            Conv::V(nf.select(cond, x, y)?)
        }
    })
}

/// The normal forms of reference nodes `roots`; `input(arg, index)` gives the atom of a
/// reference input (the kernel parameter it is bound to).
pub fn reference_vals(nf: &mut Nf, graph: &Graph, roots: &[NodeId], input: &dyn Fn(&mut Nf, u32, u64) -> R<Val>, budget: &Budget) -> Vec<R<Val>> {
    let n = graph.len();
    let root_idx: Vec<usize> = roots.iter().map(|r| r.index()).collect();
    let children = |i: usize| -> Vec<usize> { graph.get(NodeId(i as u32)).map(|nd| nd.children().map(|c| c.index()).collect()).unwrap_or_default() };
    let mut slots = Slots::new(n, children, &root_idx);
    for i in 0..n {
        if !slots.needed(i) {
            continue;
        }
        if i % 1024 == 0 {
            if let Err(stop) = budget.check() {
                return roots.iter().map(|_| Err(NfError::from(stop))).collect();
            }
        }
        let Some(node) = graph.get(NodeId(i as u32)) else { continue };
        let r = convert_node(nf, node, &mut slots, input);
        slots.values[i] = Some(r);
    }
    root_idx.iter().map(|&r| slots.take(r).map(|c| c.val(nf))).collect()
}

fn convert_node(nf: &mut Nf, node: &Node, slots: &mut Slots, input: &dyn Fn(&mut Nf, u32, u64) -> R<Val>) -> R<Conv> {
    let mut v = |i: &NodeId| -> R<Conv> { slots.take(i.index()) };
    Ok(match node {
        Node::Input { arg, index } => Conv::V(input(nf, *arg, *index)?),
        Node::Const(r) => Conv::V(Nf::constant(r.clone())),
        Node::Pi => Conv::V(nf.pi()),
        Node::E => Conv::V(nf.exp(Nf::constant(BigRational::one()))?),
        Node::Add(a, b) => slots.binary(nf, a.index(), b.index(), Nf::add)?,
        Node::Sub(a, b) => slots.binary(nf, a.index(), b.index(), Nf::sub)?,
        Node::Mul(a, b) => slots.binary(nf, a.index(), b.index(), Nf::mul)?,
        Node::Div(a, b) => {
            let x = v(a)?.val(nf);
            Conv::V(slots.divide(nf, x, b.index())?)
        }
        Node::Neg(a) => {
            let x = v(a)?.val(nf);
            Conv::V(nf.neg(x))
        }
        Node::Pow(a, k) => {
            let x = v(a)?.val(nf);
            Conv::V(nf.pow(x, *k)?)
        }
        Node::Unary(f, a) => {
            let x = v(a)?.val(nf);
            Conv::V(match f {
                UnaryFn::Exp => nf.exp(x)?,
                UnaryFn::Log => nf.log(x)?,
                UnaryFn::Sqrt => nf.sqrt(x)?,
                UnaryFn::Rsqrt => {
                    let s = nf.sqrt(x)?;
                    nf.inv(s)?
                }
                UnaryFn::Tanh => nf.odd(Func::Tanh, x)?,
                UnaryFn::Erf => nf.odd(Func::Erf, x)?,
                UnaryFn::Abs => nf.even(Func::Abs, x)?,
                UnaryFn::Sin => nf.odd(Func::Sin, x)?,
                UnaryFn::Cos => nf.even(Func::Cos, x)?,
            })
        }
        Node::Max(a, b) => slots.binary(nf, a.index(), b.index(), Nf::max)?,
        Node::Min(a, b) => slots.binary(nf, a.index(), b.index(), Nf::min)?,
        Node::Cmp(op, a, b) => {
            let (x, y) = (v(a)?.val(nf), v(b)?.val(nf));
            Conv::C(nf.compare(rel_of(*op), x, y)?)
        }
        Node::Select(c, a, b) => {
            let cond = v(c)?.cond(nf)?;
            let (x, y) = (v(a)?.val(nf), v(b)?.val(nf));
            Conv::V(nf.select(cond, x, y)?)
        }
        Node::FloorDiv(a, b) | Node::Mod(a, b) => {
            let (x, y) = (v(a)?.val(nf), v(b)?.val(nf));
            let (Val::Finite(p), Val::Finite(q)) = (&x, &y) else { return Err(NfError::Infinity("integer division")) };
            match (p.as_constant(), q.as_constant()) {
                (Some(p), Some(q)) if !num_traits::Zero::is_zero(&q) => {
                    let r = if matches!(node, Node::FloorDiv(..)) { (p / q).floor() } else { reference::graph::python_mod(&p, &q) };
                    Conv::V(Nf::constant(r))
                }
                _ => return Err(NfError::Unsupported("integer division or modulo of input values".into())),
            }
        }
    })
}
