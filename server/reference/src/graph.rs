//! The scalar graph: a hash-consed DAG of exact-arithmetic operations on tensor elements.
//!
//! Every node is created once (structural sharing), children always have smaller ids than their
//! parents (so ids are a topological order), and the builder folds constant *exact rational*
//! arithmetic only: `2 + 3` becomes `5`, but `x * 1` stays `x * 1` and `exp(0)` stays `exp(0)`.
//! Algebraic simplification is the equivalence engine's job, not this one's.

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use rustc_hash::FxHashMap;
use std::fmt;

/// A node of a [`Graph`]. Ids are dense and children precede parents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// A poisoned element: read from `torch.empty*` before being written. It never enters a
    /// graph; operations on it stay poisoned, and lowering reports it if it reaches an output.
    pub(crate) const UNINIT: NodeId = NodeId(u32::MAX);
    /// `-inf` and `+inf`, as attention masks use them (`masked_fill(mask, -inf)` before a
    /// softmax). They never enter a graph: the builder applies the extended-real rules exactly
    /// (`max(x, -inf) = x`, `exp(-inf) = 0`, `x + -inf = -inf`, `1 / inf = 0`), and lowering
    /// refuses an infinity that reaches an output.
    pub(crate) const NEG_INF: NodeId = NodeId(u32::MAX - 1);
    pub(crate) const POS_INF: NodeId = NodeId(u32::MAX - 2);
    /// Not a real number LARK models: `inf - inf`, `0 * inf`, a select between `-inf` and a
    /// value under a data-dependent condition, ... Like `UNINIT`, an error if it reaches an output.
    pub(crate) const NOT_REAL: NodeId = NodeId(u32::MAX - 3);

    /// One of the sentinels above (never a node of a graph).
    pub(crate) fn is_special(self) -> bool {
        self.0 >= u32::MAX - 3
    }

    fn infinity_sign(self) -> Option<i8> {
        match self {
            NodeId::NEG_INF => Some(-1),
            NodeId::POS_INF => Some(1),
            _ => None,
        }
    }

    fn infinity(sign: i8) -> NodeId {
        if sign < 0 {
            NodeId::NEG_INF
        } else {
            NodeId::POS_INF
        }
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The transcendental and other non-rational unary functions (ideal real functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryFn {
    Exp,
    Log,
    Sqrt,
    /// `1 / sqrt(x)`, kept as one function because kernels use `rsqrt` directly.
    Rsqrt,
    Tanh,
    Erf,
    Abs,
    Sin,
    Cos,
}

impl UnaryFn {
    pub fn name(self) -> &'static str {
        match self {
            UnaryFn::Exp => "exp",
            UnaryFn::Log => "log",
            UnaryFn::Sqrt => "sqrt",
            UnaryFn::Rsqrt => "rsqrt",
            UnaryFn::Tanh => "tanh",
            UnaryFn::Erf => "erf",
            UnaryFn::Abs => "abs",
            UnaryFn::Sin => "sin",
            UnaryFn::Cos => "cos",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    pub fn holds<T: PartialOrd>(self, a: &T, b: &T) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// One scalar operation. Integers and floats share the rationals: an integer tensor's elements
/// are rationals with denominator 1, and `FloorDiv`/`Mod` are `floor(a / b)` and
/// `a - floor(a / b) * b` (Python's sign-of-divisor modulo) on rationals.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Node {
    /// Element `index` (row-major) of tensor argument number `arg` (its position in the
    /// reference's parameter list).
    Input {
        arg: u32,
        index: u64,
    },
    Const(BigRational),
    Pi,
    E,
    Add(NodeId, NodeId),
    Sub(NodeId, NodeId),
    Mul(NodeId, NodeId),
    Div(NodeId, NodeId),
    Neg(NodeId),
    Pow(NodeId, i32),
    Unary(UnaryFn, NodeId),
    Max(NodeId, NodeId),
    Min(NodeId, NodeId),
    /// 1 when the comparison holds, else 0.
    Cmp(CmpOp, NodeId, NodeId),
    /// `if cond != 0 { a } else { b }`.
    Select(NodeId, NodeId, NodeId),
    FloorDiv(NodeId, NodeId),
    Mod(NodeId, NodeId),
}

impl Node {
    /// The children of this node, in operand order.
    pub fn children(&self) -> impl Iterator<Item = NodeId> {
        let (a, b, c) = match *self {
            Node::Input { .. } | Node::Const(_) | Node::Pi | Node::E => (None, None, None),
            Node::Neg(a) | Node::Pow(a, _) | Node::Unary(_, a) => (Some(a), None, None),
            Node::Add(a, b)
            | Node::Sub(a, b)
            | Node::Mul(a, b)
            | Node::Div(a, b)
            | Node::Max(a, b)
            | Node::Min(a, b)
            | Node::Cmp(_, a, b)
            | Node::FloorDiv(a, b)
            | Node::Mod(a, b) => (Some(a), Some(b), None),
            Node::Select(c, a, b) => (Some(c), Some(a), Some(b)),
        };
        a.into_iter().chain(b).chain(c)
    }
}

/// A hash-consed DAG of [`Node`]s.
///
/// Structural nodes are interned under a 16-byte key and constants under their value, so that
/// building a node hashes a few integers, not a `Node` with a `BigRational` in it.
#[derive(Default, Clone)]
pub struct Graph {
    nodes: Vec<Node>,
    structural: FxHashMap<[u32; 4], NodeId>,
    constants: FxHashMap<BigRational, NodeId>,
    /// Set when a node was refused because the graph reached [`MAX_NODES`].
    overflowed: bool,
}

/// The most nodes a graph holds (about 600 MB): a reference at a shape that needs more scalar
/// operations (a 256³ matmul has 33 million) is refused rather than exhausting time and memory.
pub const MAX_NODES: usize = 1 << 23;

/// The interning key of a non-constant node: a tag and up to three operands.
fn key(node: &Node) -> Option<[u32; 4]> {
    let binary = |tag: u32, a: &NodeId, b: &NodeId| [tag, a.0, b.0, 0];
    Some(match node {
        Node::Const(_) => return None,
        Node::Input { arg, index } => [0, *arg, *index as u32, (*index >> 32) as u32],
        Node::Pi => [1, 0, 0, 0],
        Node::E => [2, 0, 0, 0],
        Node::Add(a, b) => binary(3, a, b),
        Node::Sub(a, b) => binary(4, a, b),
        Node::Mul(a, b) => binary(5, a, b),
        Node::Div(a, b) => binary(6, a, b),
        Node::Neg(a) => [7, a.0, 0, 0],
        Node::Pow(a, k) => [8, a.0, *k as u32, 0],
        Node::Max(a, b) => binary(9, a, b),
        Node::Min(a, b) => binary(10, a, b),
        Node::FloorDiv(a, b) => binary(11, a, b),
        Node::Mod(a, b) => binary(12, a, b),
        Node::Select(c, a, b) => [13, c.0, a.0, b.0],
        Node::Unary(f, a) => [32 + *f as u32, a.0, 0, 0],
        Node::Cmp(op, a, b) => binary(64 + *op as u32, a, b),
    })
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph").field("nodes", &self.nodes.len()).finish()
    }
}

impl Graph {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether a node was refused because the graph is full ([`MAX_NODES`]).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// The node behind `id`. Ids come from this graph; a foreign id is a caller bug, reported as
    /// `None` rather than a panic.
    pub fn get(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.index())
    }

    /// All nodes, in id (topological) order.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes.iter().enumerate().map(|(i, n)| (NodeId(i as u32), n))
    }

    /// The exact value of `id` if it is a constant.
    pub fn as_const(&self, id: NodeId) -> Option<&BigRational> {
        match self.get(id) {
            Some(Node::Const(c)) => Some(c),
            _ => None,
        }
    }

    fn intern(&mut self, node: Node) -> NodeId {
        if self.nodes.len() >= MAX_NODES {
            // A sentinel that the arithmetic propagates cheaply; the lowering reports the
            // overflow and discards the graph.
            self.overflowed = true;
            return NodeId::NOT_REAL;
        }
        let next = NodeId(self.nodes.len() as u32);
        let id = match (key(&node), &node) {
            (Some(k), _) => *self.structural.entry(k).or_insert(next),
            (None, Node::Const(c)) => match self.constants.get(c) {
                Some(&id) => id,
                None => {
                    self.constants.insert(c.clone(), next);
                    next
                }
            },
            (None, _) => unreachable!("only constants have no structural key"),
        };
        if id == next {
            self.nodes.push(node);
        }
        id
    }

    pub fn input(&mut self, arg: u32, index: u64) -> NodeId {
        self.intern(Node::Input { arg, index })
    }

    pub fn constant(&mut self, value: BigRational) -> NodeId {
        self.intern(Node::Const(value))
    }

    pub fn int(&mut self, value: i64) -> NodeId {
        self.constant(BigRational::from_integer(BigInt::from(value)))
    }

    pub fn pi(&mut self) -> NodeId {
        self.intern(Node::Pi)
    }

    pub fn e(&mut self) -> NodeId {
        self.intern(Node::E)
    }

    fn consts2(&self, a: NodeId, b: NodeId) -> Option<(&BigRational, &BigRational)> {
        Some((self.as_const(a)?, self.as_const(b)?))
    }

    pub fn add(&mut self, a: NodeId, b: NodeId) -> NodeId {
        if a.is_special() || b.is_special() {
            return special_sum(a, b);
        }
        if let Some((x, y)) = self.consts2(a, b) {
            let v = x + y;
            return self.constant(v);
        }
        self.intern(Node::Add(a, b))
    }

    pub fn sub(&mut self, a: NodeId, b: NodeId) -> NodeId {
        if a.is_special() || b.is_special() {
            return special_sum(a, negate_special(b));
        }
        if let Some((x, y)) = self.consts2(a, b) {
            let v = x - y;
            return self.constant(v);
        }
        self.intern(Node::Sub(a, b))
    }

    pub fn mul(&mut self, a: NodeId, b: NodeId) -> NodeId {
        if a.is_special() || b.is_special() {
            return self.special_product(a, b, false);
        }
        if let Some((x, y)) = self.consts2(a, b) {
            let v = x * y;
            return self.constant(v);
        }
        self.intern(Node::Mul(a, b))
    }

    /// Division; a constant divided by constant zero stays a node so the evaluator reports it.
    pub fn div(&mut self, a: NodeId, b: NodeId) -> NodeId {
        if a.is_special() || b.is_special() {
            return self.special_product(a, b, true);
        }
        if let Some((x, y)) = self.consts2(a, b) {
            if !y.is_zero() {
                let v = x / y;
                return self.constant(v);
            }
        }
        self.intern(Node::Div(a, b))
    }

    pub fn neg(&mut self, a: NodeId) -> NodeId {
        if a.is_special() {
            return negate_special(a);
        }
        if let Some(x) = self.as_const(a) {
            let v = -x;
            return self.constant(v);
        }
        self.intern(Node::Neg(a))
    }

    pub fn pow(&mut self, a: NodeId, exponent: i32) -> NodeId {
        poisoned!(a);
        if a.is_special() {
            return NodeId::NOT_REAL;
        }
        if let Some(x) = self.as_const(a) {
            if !(x.is_zero() && exponent < 0) && exponent.unsigned_abs() <= 64 {
                let v = num_traits::pow::Pow::pow(x, exponent);
                return self.constant(v);
            }
        }
        self.intern(Node::Pow(a, exponent))
    }

    /// A unary function. Only `abs` of a constant folds (it is rational); `exp(0)` stays.
    pub fn unary(&mut self, f: UnaryFn, a: NodeId) -> NodeId {
        poisoned!(a);
        if let Some(sign) = a.infinity_sign() {
            return match (f, sign) {
                (UnaryFn::Exp, -1) => self.zero(),
                (UnaryFn::Exp | UnaryFn::Log | UnaryFn::Sqrt | UnaryFn::Abs, 1) | (UnaryFn::Abs, -1) => NodeId::POS_INF,
                (UnaryFn::Rsqrt, 1) => self.zero(),
                (UnaryFn::Tanh | UnaryFn::Erf, s) => self.int(s as i64),
                _ => NodeId::NOT_REAL,
            };
        }
        if f == UnaryFn::Abs {
            if let Some(x) = self.as_const(a) {
                let v = x.abs();
                return self.constant(v);
            }
        }
        self.intern(Node::Unary(f, a))
    }

    pub fn max(&mut self, a: NodeId, b: NodeId) -> NodeId {
        poisoned!(a, b);
        match (a, b) {
            (NodeId::NEG_INF, x) | (x, NodeId::NEG_INF) => return x,
            (NodeId::POS_INF, _) | (_, NodeId::POS_INF) => return NodeId::POS_INF,
            _ => {}
        }
        if let Some((x, y)) = self.consts2(a, b) {
            let v = if x >= y { x.clone() } else { y.clone() };
            return self.constant(v);
        }
        self.intern(Node::Max(a, b))
    }

    pub fn min(&mut self, a: NodeId, b: NodeId) -> NodeId {
        poisoned!(a, b);
        match (a, b) {
            (NodeId::POS_INF, x) | (x, NodeId::POS_INF) => return x,
            (NodeId::NEG_INF, _) | (_, NodeId::NEG_INF) => return NodeId::NEG_INF,
            _ => {}
        }
        if let Some((x, y)) = self.consts2(a, b) {
            let v = if x <= y { x.clone() } else { y.clone() };
            return self.constant(v);
        }
        self.intern(Node::Min(a, b))
    }

    pub fn cmp(&mut self, op: CmpOp, a: NodeId, b: NodeId) -> NodeId {
        poisoned!(a, b);
        if a.infinity_sign().is_some() || b.infinity_sign().is_some() {
            // Order in the extended reals: -inf < every real < +inf.
            let rank = |x: NodeId| x.infinity_sign().unwrap_or(0);
            let holds = op.holds(&rank(a), &rank(b));
            return self.int(holds as i64);
        }
        if let Some((x, y)) = self.consts2(a, b) {
            let holds = op.holds(x, y);
            return self.int(holds as i64);
        }
        self.intern(Node::Cmp(op, a, b))
    }

    /// `cond != 0 ? a : b`; a constant condition picks its branch (that is evaluation of a
    /// known value, not algebra).
    pub fn select(&mut self, cond: NodeId, a: NodeId, b: NodeId) -> NodeId {
        if cond == NodeId::UNINIT || cond == NodeId::NOT_REAL {
            return cond;
        }
        if cond.infinity_sign().is_some() {
            return a;
        }
        if let Some(c) = self.as_const(cond) {
            return if c.is_zero() { b } else { a };
        }
        poisoned!(a, b);
        if a.is_special() || b.is_special() {
            // An infinity chosen by a data-dependent condition has no real value to stand for.
            return if a == b { a } else { NodeId::NOT_REAL };
        }
        self.intern(Node::Select(cond, a, b))
    }

    pub fn floor_div(&mut self, a: NodeId, b: NodeId) -> NodeId {
        poisoned!(a, b);
        if a.is_special() || b.is_special() {
            return NodeId::NOT_REAL;
        }
        if let Some((x, y)) = self.consts2(a, b) {
            if !y.is_zero() {
                let v = BigRational::from_integer((x / y).floor().to_integer());
                return self.constant(v);
            }
        }
        self.intern(Node::FloorDiv(a, b))
    }

    pub fn modulo(&mut self, a: NodeId, b: NodeId) -> NodeId {
        poisoned!(a, b);
        if a.is_special() || b.is_special() {
            return NodeId::NOT_REAL;
        }
        if let Some((x, y)) = self.consts2(a, b) {
            if !y.is_zero() {
                let v = python_mod(x, y);
                return self.constant(v);
            }
        }
        self.intern(Node::Mod(a, b))
    }

    pub fn zero(&mut self) -> NodeId {
        self.constant(BigRational::zero())
    }

    pub fn one(&mut self) -> NodeId {
        self.constant(BigRational::one())
    }

    /// A left fold `((x0 op x1) op x2) ...`; `None` for no terms.
    pub fn fold(&mut self, terms: impl IntoIterator<Item = NodeId>, mut op: impl FnMut(&mut Graph, NodeId, NodeId) -> NodeId) -> Option<NodeId> {
        let mut acc = None;
        for t in terms {
            acc = Some(match acc {
                None => t,
                Some(a) => op(self, a, t),
            });
        }
        acc
    }

    /// A sum as a left fold in index order; the empty sum is 0.
    pub fn sum(&mut self, terms: impl IntoIterator<Item = NodeId>) -> NodeId {
        match self.fold(terms, Graph::add) {
            Some(s) => s,
            None => self.zero(),
        }
    }
}

/// `a + b` when one of them is a sentinel (extended-real addition).
fn special_sum(a: NodeId, b: NodeId) -> NodeId {
    for poison in [NodeId::UNINIT, NodeId::NOT_REAL] {
        if a == poison || b == poison {
            return poison;
        }
    }
    match (a.infinity_sign(), b.infinity_sign()) {
        (Some(x), Some(y)) if x != y => NodeId::NOT_REAL,
        (Some(x), _) | (_, Some(x)) => NodeId::infinity(x),
        (None, None) => unreachable!("called with a sentinel"),
    }
}

/// `-x` for a sentinel (`x` itself otherwise, which callers only pass for a sentinel sum).
fn negate_special(x: NodeId) -> NodeId {
    match x.infinity_sign() {
        Some(s) => NodeId::infinity(-s),
        None => x,
    }
}

impl Graph {
    /// `a * b` (or `a / b`) when one of them is a sentinel: an infinity times a known non-zero
    /// constant keeps its sign rule; a finite value over an infinity is 0; the rest is not real.
    fn special_product(&mut self, a: NodeId, b: NodeId, divide: bool) -> NodeId {
        for poison in [NodeId::UNINIT, NodeId::NOT_REAL] {
            if a == poison || b == poison {
                return poison;
            }
        }
        let sign_of = |g: &Graph, x: NodeId| -> Option<i8> {
            match x.infinity_sign() {
                Some(s) => Some(s),
                None => g.as_const(x).filter(|c| !c.is_zero()).map(|c| if c.is_positive() { 1 } else { -1 }),
            }
        };
        match (a.infinity_sign(), b.infinity_sign(), divide) {
            (None, Some(_), true) => self.zero(),
            (Some(_), Some(_), true) => NodeId::NOT_REAL,
            _ => match (sign_of(self, a), sign_of(self, b)) {
                (Some(x), Some(y)) => NodeId::infinity(x * y),
                _ => NodeId::NOT_REAL,
            },
        }
    }
}

/// Python's `%` on rationals: the result has the sign of the divisor. `y` must be non-zero.
pub fn python_mod(x: &BigRational, y: &BigRational) -> BigRational {
    x - (x / y).floor() * y
}

/// Whether a rational is an integer, and which.
pub fn as_integer(value: &BigRational) -> Option<BigInt> {
    value.is_integer().then(|| value.to_integer())
}

/// Floor division of integers, Python style; `None` for a zero divisor or an overflow
/// (`i64::MIN // -1`).
pub fn floor_div_int(a: i64, b: i64) -> Option<i64> {
    a.checked_rem(b)?;
    Some(Integer::div_floor(&a, &b))
}

/// Python's `%` on integers; `None` for a zero divisor or an overflow.
pub fn mod_int(a: i64, b: i64) -> Option<i64> {
    a.checked_rem(b)?;
    Some(Integer::mod_floor(&a, &b))
}

/// Returns the poison (`UNINIT` first, then `NOT_REAL`) if an operand carries one.
macro_rules! poisoned {
    ($($id:expr),+) => {
        if $($id == NodeId::UNINIT)||+ {
            return NodeId::UNINIT;
        }
        if $($id == NodeId::NOT_REAL)||+ {
            return NodeId::NOT_REAL;
        }
    };
}
use poisoned;

impl Graph {
    /// `id` as an infix expression, for tests and debugging (`a0[3]` is element 3 of argument
    /// 0). Shared subterms are repeated, so keep it to small graphs.
    pub fn render(&self, id: NodeId) -> String {
        let Some(node) = self.get(id) else {
            return match id {
                NodeId::NEG_INF => "-inf".to_string(),
                NodeId::POS_INF => "inf".to_string(),
                _ => format!("<foreign node {}>", id.0),
            };
        };
        let r = |c: &NodeId| self.render(*c);
        match node {
            Node::Input { arg, index } => format!("a{arg}[{index}]"),
            Node::Const(c) => c.to_string(),
            Node::Pi => "pi".to_string(),
            Node::E => "e".to_string(),
            Node::Add(a, b) => format!("({} + {})", r(a), r(b)),
            Node::Sub(a, b) => format!("({} - {})", r(a), r(b)),
            Node::Mul(a, b) => format!("({} * {})", r(a), r(b)),
            Node::Div(a, b) => format!("({} / {})", r(a), r(b)),
            Node::Neg(a) => format!("-{}", r(a)),
            Node::Pow(a, k) => format!("{}^{k}", r(a)),
            Node::Unary(f, a) => format!("{}({})", f.name(), r(a)),
            Node::Max(a, b) => format!("max({}, {})", r(a), r(b)),
            Node::Min(a, b) => format!("min({}, {})", r(a), r(b)),
            Node::Cmp(op, a, b) => format!("({} {} {})", r(a), op.symbol(), r(b)),
            Node::Select(c, a, b) => format!("({} ? {} : {})", r(c), r(a), r(b)),
            Node::FloorDiv(a, b) => format!("({} // {})", r(a), r(b)),
            Node::Mod(a, b) => format!("({} % {})", r(a), r(b)),
        }
    }
}
