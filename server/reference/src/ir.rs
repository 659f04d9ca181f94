//! The tensor IR: a reference function after name resolution. Every call names a known
//! operation ([`Op`]), every name is a local, a helper function or a constant, and every node
//! carries its byte span in the `.py` file. Shapes are not part of the IR: they are known only
//! once argument shapes are, at lowering.

use crate::ops::Op;
use num_rational::BigRational;
use std::ops::Range;

pub type Span = Range<usize>;

/// A parsed reference: the entry function and the helpers it calls (inlined at lowering).
#[derive(Debug, Clone)]
pub struct Program {
    pub functions: Vec<Function>,
    /// Index of the reference function in `functions`.
    pub entry: FunctionId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FunctionId(pub u32);

impl Program {
    pub fn function(&self, id: FunctionId) -> &Function {
        &self.functions[id.0 as usize]
    }

    pub fn entry_function(&self) -> &Function {
        self.function(self.entry)
    }
}

#[derive(Debug, Clone)]
pub struct Function {
    /// `reference`, `helper`, or `Model.forward`.
    pub name: String,
    /// Parameters, without `self`.
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    /// `a = b = value`, `q, k = value`.
    Assign {
        targets: Vec<Target>,
        value: Expr,
    },
    /// `x += value` (in place on a tensor, as in PyTorch) and `x[i] += value`.
    AugAssign {
        target: Target,
        op: BinOp,
        value: Expr,
    },
    /// `for var in iter:`, unrolled at lowering (`iter` is `range(...)` or a known tuple/list).
    For {
        target: Target,
        iter: Expr,
        body: Vec<Stmt>,
    },
    /// `if` with a condition known at lowering time.
    If {
        cond: Expr,
        then: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    /// `assert cond`: checked at lowering when known.
    Assert {
        cond: Expr,
    },
    Return(Option<Expr>),
    /// `raise ...`: an error of the reference if lowering reaches it.
    Raise,
    Pass,
}

#[derive(Debug, Clone)]
pub enum Target {
    Name(String, Span),
    Tuple(Vec<Target>, Span),
    /// `x[index] = ...`: an index assignment (a scatter into a fresh copy).
    Index {
        name: String,
        index: Vec<IndexItem>,
        span: Span,
    },
}

impl Target {
    pub fn span(&self) -> &Span {
        match self {
            Target::Name(_, s) | Target::Tuple(_, s) | Target::Index { span: s, .. } => s,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Local(String),
    Int(i64),
    /// A float literal as its exact decimal value (`1e-6` is 1/1000000, not the nearest double).
    Float(BigRational),
    Bool(bool),
    None,
    Str(String),
    Ellipsis,
    MathConst(MathConst),
    DType(crate::DType),
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    /// One comparison; chains `a < b < c` are split into `and`s by the front end.
    Compare {
        op: crate::graph::CmpOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `and` / `or` on values known at lowering.
    BoolOp {
        and: bool,
        values: Vec<Expr>,
    },
    /// `a if cond else b` with `cond` known at lowering.
    IfExp {
        cond: Box<Expr>,
        then: Box<Expr>,
        orelse: Box<Expr>,
    },
    /// A supported operation. For a method call `x.op(...)` the receiver is `args[0]` and
    /// `method` is true.
    Call {
        op: Op,
        method: bool,
        args: Vec<Expr>,
        kwargs: Vec<Kwarg>,
    },
    /// A call of a helper function of the same file (inlined at lowering).
    CallHelper {
        function: FunctionId,
        args: Vec<Expr>,
        kwargs: Vec<Kwarg>,
    },
    /// `x.shape`, `x.T`, `x.dtype`, ...
    Attribute {
        value: Box<Expr>,
        attr: Attr,
    },
    Subscript {
        value: Box<Expr>,
        index: Vec<IndexItem>,
    },
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    /// `*xs` in a call's arguments or a tuple/list display: the elements of a known sequence.
    Starred(Box<Expr>),
    /// `[elt for target in iter]` (one generator, no conditions), unrolled at lowering.
    ListComp {
        elt: Box<Expr>,
        target: Box<Target>,
        iter: Box<Expr>,
    },
}

#[derive(Debug, Clone)]
pub struct Kwarg {
    pub name: String,
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum IndexItem {
    Expr(Expr),
    Slice { lower: Option<Expr>, upper: Option<Expr>, step: Option<Expr>, span: Span },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathConst {
    Pi,
    E,
    Inf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    BitAnd,
    BitOr,
    BitXor,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::MatMul => "@",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    Invert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attr {
    Shape,
    T,
    MT,
    DType,
    Ndim,
    Device,
    /// `torch.finfo(dtype).eps`
    Eps,
    /// `.data`: the tensor itself
    Data,
    /// `.values` / `.indices` of the result of `max(dim)` / `min(dim)`
    Values,
    Indices,
    /// `torch.finfo(dtype).min` / `.max`
    Min,
    Max,
}

impl Attr {
    pub fn from_name(name: &str) -> Option<Attr> {
        Some(match name {
            "shape" => Attr::Shape,
            "T" => Attr::T,
            "mT" => Attr::MT,
            "dtype" => Attr::DType,
            "ndim" => Attr::Ndim,
            "device" => Attr::Device,
            "eps" => Attr::Eps,
            "data" => Attr::Data,
            "values" => Attr::Values,
            "indices" => Attr::Indices,
            "min" => Attr::Min,
            "max" => Attr::Max,
            _ => return None,
        })
    }
}
