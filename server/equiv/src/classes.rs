//! Output elements that are the same computation on different inputs.
//!
//! An elementwise kernel's 350 000 outputs are one formula applied to 350 000 input positions.
//! Two elements whose kernel term and reference expression are equal up to an injective renaming
//! of the input elements they read (same operations, same literals, same pattern of which
//! inputs coincide) agree or disagree together: if the normal forms of one pair are equal, the
//! identity holds as a function of its inputs, and renaming the inputs preserves an identity.
//! So only one representative per class is brought into normal form.
//!
//! The class key is the pair's DAG written out with local node numbers, input elements replaced
//! by variables numbered in order of first use (shared between the two sides, so that
//! "the kernel's x[i] is the reference's x[i]" is part of the key), and literals by their
//! hash-consed ids (equal ids are equal values). Keys are compared in full, never by hash alone.

use crate::term::{Term, TermId, Terms};
use reference::{Graph, Node, NodeId};
use std::collections::HashMap;

/// Pairs whose DAGs together exceed this many nodes are not grouped (each is its own class):
/// writing out a reduction's whole row for every element would cost more than it saves.
const MAX_KEY_NODES: usize = 512;

/// What a reference input argument is on the kernel's side: the parameter holding it.
pub type ArgParam<'a> = &'a dyn Fn(u32) -> Option<u32>;

/// Groups pairs (kernel term, reference node) into classes.
pub struct Classes<'a> {
    terms: &'a Terms,
    graph: &'a Graph,
    arg_param: ArgParam<'a>,
    reps: HashMap<Vec<u64>, usize>,
    /// Tree sizes (saturating past the limit) of every term and node, so that a pair too big
    /// to group is known without walking it.
    term_size: Vec<u16>,
    node_size: Vec<u16>,
}

/// Tree sizes saturating just past [`MAX_KEY_NODES`]: children come before their parents in
/// both arenas (they are hash-consed as built), so one pass in order suffices.
fn tree_sizes(n: usize, children: impl Fn(usize) -> Vec<usize>) -> Vec<u16> {
    let cap = MAX_KEY_NODES as u32 + 1;
    let mut size = vec![0u16; n];
    for i in 0..n {
        let s = children(i).iter().fold(1u32, |acc, &c| acc + if c < i { size[c] as u32 } else { cap }).min(cap);
        size[i] = s as u16;
    }
    size
}

/// Tags of the written-out nodes (kernel and reference nodes never share a tag).
mod tag {
    pub const VAR: u64 = 1;
    pub const INITIAL: u64 = 2;
    pub const TERM_LEAF: u64 = 3;
    pub const NODE_LEAF: u64 = 4;
    pub const TERM: u64 = 16;
    pub const NODE: u64 = 64;
}

impl<'a> Classes<'a> {
    pub fn new(terms: &'a Terms, graph: &'a Graph, arg_param: ArgParam<'a>) -> Classes<'a> {
        let term_size = tree_sizes(terms.len(), |i| terms.get(TermId(i as u32)).children().iter().map(|c| c.0 as usize).collect());
        let node_size = tree_sizes(graph.len(), |i| graph.get(NodeId(i as u32)).map(|n| n.children().map(|c| c.index()).collect()).unwrap_or_default());
        Classes { terms, graph, arg_param, reps: HashMap::new(), term_size, node_size }
    }

    /// The representative of element `index`'s class: `index` itself when it is the first of
    /// its class (or cannot be grouped), else the earlier element whose check stands for it.
    pub fn representative(&mut self, index: usize, kernel: TermId, reference: NodeId) -> usize {
        let size = |v: &[u16], i: usize| v.get(i).map_or(usize::MAX, |&s| s as usize);
        if size(&self.term_size, kernel.0 as usize).saturating_add(size(&self.node_size, reference.index())) > MAX_KEY_NODES {
            return index;
        }
        let Some(key) = Writer::default().pair(self, kernel, reference) else { return index };
        *self.reps.entry(key).or_insert(index)
    }

    pub fn count(&self) -> usize {
        self.reps.len()
    }
}

#[derive(Default)]
struct Writer {
    out: Vec<u64>,
    vars: HashMap<(u64, u32, u64), u64>,
    terms: HashMap<TermId, u64>,
    nodes: HashMap<NodeId, u64>,
    written: usize,
}

impl Writer {
    fn pair(mut self, c: &Classes, kernel: TermId, reference: NodeId) -> Option<Vec<u64>> {
        self.term(c.terms, kernel)?;
        self.out.push(u64::MAX); // separates the two sides
        self.node(c, reference)?;
        Some(self.out)
    }

    fn var(&mut self, kind: u64, param: u32, elem: u64) -> u64 {
        let n = self.vars.len() as u64;
        *self.vars.entry((kind, param, elem)).or_insert(n)
    }

    /// Writes `t` (children first) and returns its local number.
    fn term(&mut self, terms: &Terms, root: TermId) -> Option<u64> {
        // An explicit stack: terms of long reductions are deep.
        let mut stack = vec![(root, false)];
        while let Some((t, expanded)) = stack.pop() {
            if self.terms.contains_key(&t) {
                continue;
            }
            let children = terms.get(t).children();
            if !expanded && !children.is_empty() {
                stack.push((t, true));
                stack.extend(children.iter().rev().map(|&c| (c, false)));
                continue;
            }
            self.written += 1;
            if self.written > MAX_KEY_NODES {
                return None;
            }
            let record = match terms.get(t) {
                Term::Input { param, elem } => vec![tag::VAR, self.var(0, *param, *elem)],
                Term::Initial { param, elem } => vec![tag::INITIAL, self.var(1, *param, *elem)],
                Term::Literal { .. } | Term::Exact(_) | Term::NegInf | Term::PosInf => vec![tag::TERM_LEAF, t.0 as u64],
                other => {
                    let mut r = vec![tag::TERM + term_op(other)];
                    r.extend(children.iter().map(|c| self.terms[c]));
                    r
                }
            };
            self.out.extend(&record);
            let local = self.terms.len() as u64;
            self.terms.insert(t, local);
        }
        self.terms.get(&root).copied()
    }

    fn node(&mut self, c: &Classes, root: NodeId) -> Option<u64> {
        let mut stack = vec![(root, false)];
        while let Some((n, expanded)) = stack.pop() {
            if self.nodes.contains_key(&n) {
                continue;
            }
            let node = c.graph.get(n)?;
            let children: Vec<NodeId> = node.children().collect();
            if !expanded && !children.is_empty() {
                stack.push((n, true));
                stack.extend(children.iter().rev().map(|&ch| (ch, false)));
                continue;
            }
            self.written += 1;
            if self.written > MAX_KEY_NODES {
                return None;
            }
            let record = match node {
                // The same numbering as the kernel's inputs: the argument's kernel parameter.
                Node::Input { arg, index } => vec![tag::VAR, self.var(0, (c.arg_param)(*arg)?, *index)],
                Node::Const(_) | Node::Pi | Node::E => vec![tag::NODE_LEAF, n.0 as u64],
                other => {
                    let mut r = vec![tag::NODE + node_op(other)];
                    r.extend(children.iter().map(|ch| self.nodes[ch]));
                    r
                }
            };
            self.out.extend(&record);
            let local = self.nodes.len() as u64;
            self.nodes.insert(n, local);
        }
        self.nodes.get(&root).copied()
    }
}

/// The operation of an inner term, as a small number (operands are written after it).
fn term_op(t: &Term) -> u64 {
    match t {
        Term::Add(..) => 0,
        Term::Sub(..) => 1,
        Term::Mul(..) => 2,
        Term::Div(..) => 3,
        Term::Fma(..) => 4,
        Term::Min(..) => 5,
        Term::Max(..) => 6,
        Term::Fun(f, _) => 7 + ((*f as u64) << 8),
        Term::Cmp(op, ..) => 8 + ((*op as u64) << 8),
        Term::Not(_) => 9,
        Term::And(..) => 10,
        Term::Or(..) => 11,
        Term::Select(..) => 12,
        Term::Literal { .. } | Term::Exact(_) | Term::NegInf | Term::PosInf | Term::Input { .. } | Term::Initial { .. } => 13,
    }
}

fn node_op(n: &Node) -> u64 {
    match n {
        Node::Add(..) => 0,
        Node::Sub(..) => 1,
        Node::Mul(..) => 2,
        Node::Div(..) => 3,
        Node::Neg(_) => 4,
        Node::Pow(_, k) => 5 + ((*k as u32 as u64) << 8),
        Node::Unary(f, _) => 6 + ((*f as u64) << 8),
        Node::Max(..) => 7,
        Node::Min(..) => 8,
        Node::Cmp(op, ..) => 9 + ((*op as u64) << 8),
        Node::Select(..) => 10,
        Node::FloorDiv(..) => 11,
        Node::Mod(..) => 12,
        Node::Input { .. } | Node::Const(_) | Node::Pi | Node::E => 13,
    }
}
