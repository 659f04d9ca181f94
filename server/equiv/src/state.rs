//! What a kernel leaves in shared memory at its barriers, as specifications over the reference's
//! inputs: the Lean obligations state, for a segment that ends at a barrier, the value each
//! shared cell it wrote must hold when the block passes that barrier.
//!
//! The values come from the shadow run at one shape ([`crate::facts`]): the term of every
//! input-dependent shared cell at every barrier release. A cell whose normal form equals a
//! reference node's is stated as that node — the reference sub-expression the kernel has computed
//! so far (the row maximum after a tree reduction); any other cell is stated as the kernel's own
//! term, translated operation by operation into nodes after the reference's (a partial sum of
//! squares, say), with the reference's nodes where the term reaches one.
//!
//! Specifications are only drawn from a run whose control flow and addressing did not depend on
//! input values: otherwise what one run left in shared memory need not hold for other inputs.

use crate::constants::Constants;
use crate::convert;
use crate::facts::BufferFact;
use crate::nf::{self, Nf, Poly, Val};
use crate::shadow::Shadow;
use crate::term::{FloatValKey, Fun, Term, TermId};
use model::budget::Budget;
use model::interp::{InstRef, VarPlacement, SLOT};
use model::FloatCmp;
use num_bigint::BigInt;
use num_rational::BigRational;
use reference::{Graph, NodeId};
use std::collections::{BTreeMap, HashMap};

/// An operand of a [`StateNode`]: a node of the reference graph or an earlier state node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateRef {
    Reference(NodeId),
    State(u32),
}

/// A unary function of a state node (Lean `RFun`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateFun {
    Sqrt,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    Erf,
    Abs,
}

impl StateFun {
    /// The constructor's name in Lean's `RFun`.
    pub fn lean_name(self) -> &'static str {
        match self {
            StateFun::Sqrt => "sqrt",
            StateFun::Rsqrt => "rsqrt",
            StateFun::Ex2 => "ex2",
            StateFun::Lg2 => "lg2",
            StateFun::Sin => "sin",
            StateFun::Cos => "cos",
            StateFun::Tanh => "tanh",
            StateFun::Erf => "erf",
            StateFun::Abs => "abs",
        }
    }
}

/// One scalar node of a specification, with the meaning of Lean's `RNode` of the same shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StateNode {
    /// Element `index` of reference tensor argument `arg`.
    Input {
        arg: u32,
        index: u64,
    },
    Const(BigRational),
    Add(StateRef, StateRef),
    Sub(StateRef, StateRef),
    Mul(StateRef, StateRef),
    Div(StateRef, StateRef),
    Neg(StateRef),
    Max(StateRef, StateRef),
    Min(StateRef, StateRef),
    Unary(StateFun, StateRef),
    /// 1 when the comparison holds, else 0; the comparison is Lean's `RCmp` constructor name.
    Cmp(&'static str, StateRef, StateRef),
    /// `a` when `c ≠ 0`, else `b`.
    Select(StateRef, StateRef, StateRef),
}

impl StateNode {
    pub fn operands(&self) -> Vec<StateRef> {
        match *self {
            StateNode::Input { .. } | StateNode::Const(_) => vec![],
            StateNode::Neg(a) | StateNode::Unary(_, a) => vec![a],
            StateNode::Add(a, b) | StateNode::Sub(a, b) | StateNode::Mul(a, b) | StateNode::Div(a, b) | StateNode::Max(a, b) | StateNode::Min(a, b) => {
                vec![a, b]
            }
            StateNode::Cmp(_, a, b) => vec![a, b],
            StateNode::Select(c, a, b) => vec![c, a, b],
        }
    }
}

/// One shared cell at one barrier pass: byte `offset` of shared variable `var` in block `block`
/// (linear, x fastest) holds `value` once the block has passed `phase` barriers, the last being
/// `barrier`; it was written after the block had passed `written` barriers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedCellSpec {
    pub var: u32,
    pub offset: u64,
    pub block: u64,
    pub phase: u32,
    pub barrier: InstRef,
    pub written: u32,
    pub value: StateRef,
}

/// A block passing a barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierPass {
    pub block: u64,
    pub phase: u32,
    pub barrier: InstRef,
}

/// The shared-memory specifications of one shape.
#[derive(Clone, Debug, Default)]
pub struct SharedSpecs {
    /// Nodes after the reference's, in order (operands before users).
    pub nodes: Vec<StateNode>,
    pub cells: Vec<SharedCellSpec>,
    /// Every barrier pass of the run, in order.
    pub passes: Vec<BarrierPass>,
    /// Why none are stated at all (control flow on input values, ...).
    pub missing: Option<String>,
    /// Cells left out, by reason, with how many.
    pub left_out: BTreeMap<String, usize>,
    /// The reference or the cells were too large to compare cells with reference nodes: every
    /// cell is stated as the kernel's own term.
    pub unmatched: bool,
}

/// The largest reference whose nodes cells are compared with, in nodes.
pub const MAX_MATCHED_NODES: usize = 20_000;
/// The most kernel terms the cells' values may reach for them to be compared.
pub const MAX_MATCHED_TERMS: usize = 50_000;

/// How many terms `roots` reach (stops counting past [`MAX_MATCHED_TERMS`]).
fn reachable_terms(shadow: &Shadow, roots: &[TermId]) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut stack = roots.to_vec();
    while let Some(t) = stack.pop() {
        if seen.len() > MAX_MATCHED_TERMS {
            break;
        }
        if seen.insert(t) {
            stack.extend(shadow.terms.get(t).children());
        }
    }
    seen.len()
}

/// What the specifications are drawn from.
pub struct Sources<'a> {
    pub shadow: &'a Shadow<'a>,
    /// The run's placement of shared variables (slot = offset / `SLOT`).
    pub shared_vars: &'a [VarPlacement],
    pub grid: [u32; 3],
    pub graph: &'a Graph,
    pub buffers: &'a [BufferFact],
    pub consts: &'a Constants,
}

/// The specifications of every shared cell the run left input-dependent at a barrier.
pub fn shared_specs(src: &Sources, nf: &mut Nf, budget: &Budget) -> SharedSpecs {
    let mut specs = SharedSpecs::default();
    let shadow = src.shadow;
    let Some(states) = &shadow.shared_states else {
        specs.missing = Some("shared memory was not recorded".into());
        return specs;
    };
    if let Some(p) = shadow.problems.first() {
        specs.missing = Some(format!("the run has input-dependent steps the engine does not follow ({}{})", p.what, line_suffix(p.line)));
        return specs;
    }
    if let Some(p) = shadow.path_conditions.first() {
        specs.missing = Some(format!("control flow depends on input values{}, so one run's shared memory need not be every run's", line_suffix(p.line)));
        return specs;
    }
    if shadow.shared_states_truncated {
        specs.missing = Some(format!("the run leaves more than {} input-dependent shared cells at its barriers", crate::shadow::MAX_SNAPSHOT_CELLS));
        return specs;
    }
    if states.is_empty() {
        return specs;
    }
    // The shared variable of each slot (extern arrays share one slot: the first names it).
    let mut slot_var: HashMap<u64, u32> = HashMap::new();
    for v in src.shared_vars {
        slot_var.entry(v.offset / SLOT).or_insert(v.var);
    }
    let input_atom = |nf: &mut Nf, arg: u32, index: u64| -> nf::R<Val> {
        let b =
            src.buffers.iter().find(|b| b.arg == Some(arg)).ok_or_else(|| nf::NfError::Unsupported(format!("reference input {arg} is not a kernel buffer")))?;
        Ok(nf.input(b.param, index))
    };
    let mut roots: Vec<TermId> = states.iter().flat_map(|s| s.cells.iter().map(|c| c.term)).collect();
    roots.sort_unstable();
    roots.dedup();
    // Normal forms of every reference node and of the cells, to state a cell as the reference
    // node it equals. The normal form of a running sum of `n` terms has `n` monomials, so a
    // long reduction costs `n²/2` of them: beyond the caps the cells keep the kernel's terms.
    let matching = src.graph.len() <= MAX_MATCHED_NODES && reachable_terms(shadow, &roots) <= MAX_MATCHED_TERMS;
    if !matching {
        specs.unmatched = true;
    }
    let mut by_form: HashMap<Poly, NodeId> = HashMap::new();
    let mut forms: HashMap<TermId, Poly> = HashMap::new();
    if matching {
        let all: Vec<NodeId> = (0..src.graph.len()).map(|i| NodeId(i as u32)).collect();
        for (id, v) in all.iter().zip(convert::reference_vals(nf, src.graph, &all, &input_atom, budget)) {
            if let Ok(Val::Finite(p)) = v {
                by_form.entry(p).or_insert(*id);
            }
        }
        for (t, v) in roots.iter().zip(convert::kernel_vals(nf, src.consts, &shadow.terms, &roots, budget)) {
            if let Ok(Val::Finite(p)) = v {
                forms.insert(*t, p);
            }
        }
    }
    let mut tr = Translator { src, nodes: Vec::new(), index: HashMap::new(), memo: HashMap::new() };
    for s in states {
        let block = s.ctaid[0] as u64 + s.ctaid[1] as u64 * src.grid[0] as u64 + s.ctaid[2] as u64 * src.grid[0] as u64 * src.grid[1] as u64;
        specs.passes.push(BarrierPass { block, phase: s.phase, barrier: s.barrier });
        for c in &s.cells {
            let Some(&var) = slot_var.get(&(c.slot as u64)) else {
                *specs.left_out.entry("a shared slot without a variable".into()).or_default() += 1;
                continue;
            };
            let value = match forms.get(&c.term).and_then(|p| by_form.get(p)) {
                Some(node) => Ok(StateRef::Reference(*node)),
                None => tr.translate(c.term),
            };
            match value {
                Ok(value) => specs.cells.push(SharedCellSpec { var, offset: c.offset, block, phase: s.phase, barrier: s.barrier, written: c.written, value }),
                Err(why) => *specs.left_out.entry(why).or_default() += 1,
            }
        }
    }
    specs.nodes = tr.nodes;
    specs
}

fn line_suffix(line: Option<u32>) -> String {
    line.map_or(String::new(), |l| format!(" at line {l}"))
}

/// Kernel terms as state nodes, shared between cells.
struct Translator<'a> {
    src: &'a Sources<'a>,
    nodes: Vec<StateNode>,
    index: HashMap<StateNode, u32>,
    memo: HashMap<TermId, Result<StateRef, String>>,
}

impl Translator<'_> {
    fn node(&mut self, n: StateNode) -> StateRef {
        if let Some(&i) = self.index.get(&n) {
            return StateRef::State(i);
        }
        let i = self.nodes.len() as u32;
        self.nodes.push(n.clone());
        self.index.insert(n, i);
        StateRef::State(i)
    }

    /// The term as a node; `Err` says why it has no rational value to state. Iterative, so
    /// that a long chain of additions does not exhaust the stack.
    fn translate(&mut self, root: TermId) -> Result<StateRef, String> {
        let mut stack = vec![(root, false)];
        while let Some((t, expanded)) = stack.pop() {
            if self.memo.contains_key(&t) {
                continue;
            }
            let term = self.src.shadow.terms.get(t).clone();
            if !expanded {
                stack.push((t, true));
                stack.extend(term.children().into_iter().map(|c| (c, false)));
                continue;
            }
            let r = self.one(&term);
            self.memo.insert(t, r);
        }
        self.memo[&root].clone()
    }

    /// One term whose operands are translated (or failed).
    fn one(&mut self, term: &Term) -> Result<StateRef, String> {
        let terms = &self.src.shadow.terms;
        let op = |memo: &HashMap<TermId, Result<StateRef, String>>, a: TermId| memo[&a].clone();
        let is = |a: TermId, t: Term| *terms.get(a) == t;
        Ok(match *term {
            Term::Input { param, elem } => {
                let b = self.src.buffers.iter().find(|b| b.param == param).ok_or("an input buffer the run did not bind")?;
                match b.arg {
                    Some(arg) if b.float && elem < b.len => self.node(StateNode::Input { arg, index: elem }),
                    _ => return Err(format!("a value read from `{}`, which is not a floating-point input of the reference", b.name)),
                }
            }
            Term::Initial { .. } => return Err("an output's contents from before the kernel ran".into()),
            Term::Literal { value: FloatValKey::Finite(ref r), .. } | Term::Exact(ref r) => self.node(StateNode::Const(r.clone())),
            Term::Literal { .. } | Term::NegInf | Term::PosInf => return Err("an infinity or NaN".into()),
            // `max(-inf, a) = a` and `min(+inf, a) = a` in the kernel's arithmetic too.
            Term::Max(a, b) if is(a, Term::NegInf) => op(&self.memo, b)?,
            Term::Max(a, b) if is(b, Term::NegInf) => op(&self.memo, a)?,
            Term::Min(a, b) if is(a, Term::PosInf) => op(&self.memo, b)?,
            Term::Min(a, b) if is(b, Term::PosInf) => op(&self.memo, a)?,
            Term::Add(a, b) => self.binary(a, b, StateNode::Add)?,
            Term::Sub(a, b) => self.binary(a, b, StateNode::Sub)?,
            Term::Mul(a, b) => self.binary(a, b, StateNode::Mul)?,
            Term::Div(a, b) => self.binary(a, b, StateNode::Div)?,
            Term::Max(a, b) => self.binary(a, b, StateNode::Max)?,
            Term::Min(a, b) => self.binary(a, b, StateNode::Min)?,
            Term::Fma(a, b, c) => {
                let m = self.binary(a, b, StateNode::Mul)?;
                let c = op(&self.memo, c)?;
                self.node(StateNode::Add(m, c))
            }
            Term::Fun(f, a) => {
                let x = op(&self.memo, a)?;
                let unary = |f| StateNode::Unary(f, x);
                match f {
                    Fun::Neg => self.node(StateNode::Neg(x)),
                    Fun::Rcp => {
                        let one = self.node(StateNode::Const(BigRational::from_integer(BigInt::from(1))));
                        self.node(StateNode::Div(one, x))
                    }
                    Fun::Sqrt => self.node(unary(StateFun::Sqrt)),
                    Fun::Rsqrt => self.node(unary(StateFun::Rsqrt)),
                    Fun::Ex2 => self.node(unary(StateFun::Ex2)),
                    Fun::Lg2 => self.node(unary(StateFun::Lg2)),
                    Fun::Sin => self.node(unary(StateFun::Sin)),
                    Fun::Cos => self.node(unary(StateFun::Cos)),
                    Fun::Tanh => self.node(unary(StateFun::Tanh)),
                    Fun::Erf => self.node(unary(StateFun::Erf)),
                    Fun::Abs => self.node(unary(StateFun::Abs)),
                }
            }
            Term::Cmp(cmp, a, b) => {
                let name = match cmp {
                    FloatCmp::Eq => "eq",
                    FloatCmp::Ne => "ne",
                    FloatCmp::Lt => "lt",
                    FloatCmp::Le => "le",
                    FloatCmp::Gt => "gt",
                    FloatCmp::Ge => "ge",
                    FloatCmp::Other => return Err("a comparison the model does not name".into()),
                };
                let (x, y) = (op(&self.memo, a)?, op(&self.memo, b)?);
                self.node(StateNode::Cmp(name, x, y))
            }
            Term::Select(c, a, b) => {
                let (c, x, y) = (op(&self.memo, c)?, op(&self.memo, a)?, op(&self.memo, b)?);
                self.node(StateNode::Select(c, x, y))
            }
            Term::Not(_) | Term::And(_, _) | Term::Or(_, _) => return Err("a predicate on input values".into()),
        })
    }

    fn binary(&mut self, a: TermId, b: TermId, make: fn(StateRef, StateRef) -> StateNode) -> Result<StateRef, String> {
        let x = self.memo[&a].clone()?;
        let y = self.memo[&b].clone()?;
        Ok(self.node(make(x, y)))
    }
}
