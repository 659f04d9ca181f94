//! Values during lowering: tensors of graph nodes, and the Python values that are known while
//! lowering (ints, shapes, dtypes, strings).

use crate::graph::NodeId;
use crate::ir::Span;
use crate::DType;
use std::rc::Rc;

#[derive(Debug, Clone)]
pub(crate) enum Val {
    Tensor(Tensor),
    /// A Python int (exact, known at lowering).
    Int(i64),
    /// A Python float: a graph node, usually a constant, possibly irrational (`math.sqrt(2)`).
    Float(NodeId),
    Bool(bool),
    None,
    Str(Rc<str>),
    /// A tuple, list or `torch.Size`.
    Seq(Rc<[Val]>),
    DType(DType),
    Device,
    Finfo(DType),
    Ellipsis,
}

impl Val {
    /// "a tensor", "an int", ... for messages like "expected a tensor, found a tuple".
    pub fn kind_name(&self) -> &'static str {
        match self {
            Val::Tensor(_) => "a tensor",
            Val::Int(_) => "an int",
            Val::Float(_) => "a float",
            Val::Bool(_) => "a bool",
            Val::None => "None",
            Val::Str(_) => "a string",
            Val::Seq(_) => "a tuple",
            Val::DType(_) => "a dtype",
            Val::Device => "a device",
            Val::Finfo(_) => "a finfo",
            Val::Ellipsis => "`...`",
        }
    }

    pub fn seq(items: Vec<Val>) -> Val {
        Val::Seq(items.into())
    }

    pub fn ints(items: impl IntoIterator<Item = usize>) -> Val {
        Val::seq(items.into_iter().map(|i| Val::Int(i as i64)).collect())
    }

    /// Visits every tensor inside this value (tuples included).
    pub fn for_each_tensor(&self, f: &mut impl FnMut(&Tensor)) {
        match self {
            Val::Tensor(t) => f(t),
            Val::Seq(items) => items.iter().for_each(|v| v.for_each_tensor(f)),
            _ => {}
        }
    }
}

/// A tensor whose elements are graph nodes, row-major. `storage` identifies the memory it
/// views: view operations keep it, everything else gets a fresh one, so that writes through
/// an alias can be detected (and refused) rather than silently mis-modelled.
#[derive(Debug, Clone)]
pub(crate) struct Tensor {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub elems: Rc<[NodeId]>,
    pub storage: u32,
}

impl Tensor {
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        self.elems.len()
    }
}

/// Row-major strides of a shape, in elements.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}

/// `[4, 3]` for messages.
pub(crate) fn fmt_shape(shape: &[usize]) -> String {
    format!("[{}]", shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "))
}

/// One argument of a call, with the span of its expression.
#[derive(Debug, Clone)]
pub(crate) struct Arg {
    pub val: Val,
    pub span: Span,
}
