//! Lowering: running the IR on concrete argument shapes (and concrete scalar values) to build
//! the scalar graph of every returned element. Python-level values (ints, shapes, loop bounds,
//! `if` conditions) are computed while lowering; tensor elements become graph nodes.

mod args;
mod arith;
mod calls;
mod create;
mod elementwise;
mod index;
mod linalg;
mod reduce;
mod shape_ops;
mod value;

use crate::error::{RefError, Result};
use crate::graph::{Graph, NodeId};
use crate::ir::{Expr, ExprKind, FunctionId, IndexItem, Kwarg, MathConst, Program, Span, Stmt, StmtKind, Target, UnaryOp};
use crate::DType;
use num_rational::BigRational;
use num_traits::Zero;
use std::collections::HashMap;
pub(crate) use value::{fmt_shape, strides, Arg, Tensor, Val};

/// A concrete number passed for a scalar parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Number {
    Int(i64),
    /// A float as an exact rational.
    Float(BigRational),
}

/// What the caller passes for one parameter of the reference function, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// A tensor whose elements are unknowns: element `i` (row-major) of the tensor at argument
    /// position `k` is the graph node `Input { arg: k, index: i }`.
    Tensor { shape: Vec<usize>, dtype: DType },
    /// A concrete scalar.
    Scalar(Number),
    /// An `i64` tensor with known contents (an index buffer); its elements are constants.
    IntTensor { shape: Vec<usize>, values: Vec<i64> },
}

/// Something the caller may want to show next to a result (not an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub span: Span,
    pub message: String,
}

pub const CAST_NOTE: &str = "casts are identity under exact arithmetic (rounding to the target type is not modelled)";

/// One returned tensor: its shape, dtype and one node per element, row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredTensor {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub elements: Vec<NodeId>,
}

#[derive(Debug, Clone)]
pub struct Lowered {
    pub graph: Graph,
    /// The returned tensors (a single returned tensor is output 0).
    pub outputs: Vec<LoweredTensor>,
    pub notes: Vec<Note>,
}

/// Limits that turn a runaway reference into an error instead of exhausting memory.
const MAX_TENSOR_ELEMENTS: usize = 1 << 26;
const MAX_LOOP_ITERATIONS: u64 = 1 << 22;
const MAX_CALL_DEPTH: usize = 64;

/// Lowers `program` for the given arguments (one per parameter of the reference function, in
/// order; parameters with defaults may be left off).
pub fn lower(program: &Program, args: &[ArgValue]) -> Result<Lowered> {
    let mut lowerer = Lowerer { graph: Graph::new(), notes: Vec::new(), frames: Vec::new(), next_storage: 0, iterations: 0, return_span: None, program };
    let entry = program.entry_function();
    if args.len() > entry.params.len() {
        return Err(RefError::new(entry.span.clone(), format!("`{}` takes {} arguments, {} were given", entry.name, entry.params.len(), args.len())));
    }
    let mut bound = Vec::new();
    for (position, arg) in args.iter().enumerate() {
        let param_span = entry.params[position].span.clone();
        let val = lowerer.argument(position as u32, arg).map_err(|message| RefError::new(param_span, message))?;
        bound.push(Arg { val, span: entry.params[position].span.clone() });
    }
    let result = lowerer.call_function(program.entry, bound, Vec::new(), &entry.span)?;
    if lowerer.graph.overflowed() {
        return Err(too_big(entry.span.clone()));
    }
    // Errors about the result point at the `return` that produced it.
    let return_span = lowerer.return_span.clone().unwrap_or_else(|| entry.span.clone());
    let outputs = match result {
        Val::Tensor(t) => vec![lowerer.output(t, &return_span)?],
        Val::Seq(items) if !items.is_empty() => items
            .iter()
            .map(|item| match item {
                Val::Tensor(t) => lowerer.output(t.clone(), &return_span),
                other => Err(RefError::new(return_span.clone(), format!("expected a tensor in the returned tuple, found {}", other.kind_name()))),
            })
            .collect::<Result<_>>()?,
        other => return Err(RefError::new(return_span, format!("expected the reference to return a tensor, found {}", other.kind_name()))),
    };
    Ok(Lowered { graph: lowerer.graph, outputs, notes: lowerer.notes })
}

/// The error of a reference whose scalar graph outgrew [`crate::graph::MAX_NODES`] at this shape.
fn too_big(span: std::ops::Range<usize>) -> RefError {
    RefError::new(
        span,
        format!(
            "at this shape the reference needs more than {} scalar operations; list a smaller shape in [[kernel.<name>.reference.shapes]]",
            crate::graph::MAX_NODES
        ),
    )
}

/// The returned shapes and dtypes for the given arguments (shape inference; runs the lowering).
pub fn infer_shapes(program: &Program, args: &[ArgValue]) -> Result<Vec<(Vec<usize>, DType)>> {
    Ok(lower(program, args)?.outputs.into_iter().map(|o| (o.shape, o.dtype)).collect())
}

pub(crate) struct Lowerer<'p> {
    program: &'p Program,
    pub graph: Graph,
    notes: Vec<Note>,
    /// Local variables of the inlined call stack, innermost last.
    frames: Vec<HashMap<String, Val>>,
    next_storage: u32,
    iterations: u64,
    /// The span of the returned expression of the reference function itself.
    return_span: Option<Span>,
}

enum Flow {
    Normal,
    Return(Val),
}

impl<'p> Lowerer<'p> {
    fn argument(&mut self, position: u32, arg: &ArgValue) -> std::result::Result<Val, String> {
        Ok(match arg {
            ArgValue::Tensor { shape, dtype } => {
                let count = checked_numel(shape).filter(|&n| n <= MAX_TENSOR_ELEMENTS).ok_or("the argument shape is larger than LARK lowers")?;
                let elems: Vec<NodeId> = (0..count as u64).map(|i| self.graph.input(position, i)).collect();
                Val::Tensor(self.fresh(shape.clone(), *dtype, elems))
            }
            ArgValue::Scalar(Number::Int(i)) => Val::Int(*i),
            ArgValue::Scalar(Number::Float(r)) => Val::Float(self.graph.constant(r.clone())),
            ArgValue::IntTensor { shape, values } => {
                let count = checked_numel(shape).filter(|&n| n <= MAX_TENSOR_ELEMENTS).ok_or("the argument shape is larger than LARK lowers")?;
                if count != values.len() {
                    return Err(format!("index tensor of shape {} has {} values", fmt_shape(shape), values.len()));
                }
                let elems: Vec<NodeId> = values.iter().map(|&v| self.graph.int(v)).collect();
                Val::Tensor(self.fresh(shape.clone(), DType::I64, elems))
            }
        })
    }

    fn output(&mut self, t: Tensor, span: &Span) -> Result<LoweredTensor> {
        if let Some(i) = t.elems.iter().position(|e| e.is_special()) {
            let message = match t.elems[i] {
                NodeId::UNINIT => format!("returned element {i} is read from `torch.empty` memory that was never written"),
                NodeId::NOT_REAL => format!(
                    "returned element {i} is not a real number LARK models (an infinity meeting another, or `-inf` chosen by a data-dependent condition)"
                ),
                _ => format!("returned element {i} is infinite; infinities are modelled only as masks that a max or an exp removes"),
            };
            return Err(RefError::new(span.clone(), message));
        }
        Ok(LoweredTensor { shape: t.shape, dtype: t.dtype, elements: t.elems.to_vec() })
    }

    /// A tensor with new storage.
    pub(crate) fn fresh(&mut self, shape: Vec<usize>, dtype: DType, elems: Vec<NodeId>) -> Tensor {
        self.next_storage += 1;
        Tensor { shape, dtype, elems: elems.into(), storage: self.next_storage }
    }

    /// A tensor sharing `base`'s storage (a view).
    pub(crate) fn view_of(&self, base: &Tensor, shape: Vec<usize>, elems: Vec<NodeId>) -> Tensor {
        Tensor { shape, dtype: base.dtype, elems: elems.into(), storage: base.storage }
    }

    pub(crate) fn note(&mut self, span: &Span, message: &str) {
        if !self.notes.iter().any(|n| n.span == *span && n.message == message) {
            self.notes.push(Note { span: span.clone(), message: message.to_string() });
        }
    }

    pub(crate) fn check_size(&self, shape: &[usize], span: &Span) -> Result<usize> {
        match checked_numel(shape) {
            Some(n) if n <= MAX_TENSOR_ELEMENTS => Ok(n),
            _ => Err(RefError::new(span.clone(), format!("tensor of shape {} is larger than LARK lowers ({MAX_TENSOR_ELEMENTS} elements)", fmt_shape(shape)))),
        }
    }

    fn call_function(&mut self, id: FunctionId, args: Vec<Arg>, kwargs: Vec<(String, Arg)>, call_span: &Span) -> Result<Val> {
        let function = self.program.function(id);
        if self.frames.len() >= MAX_CALL_DEPTH {
            return Err(RefError::new(call_span.clone(), format!("helper calls nest deeper than {MAX_CALL_DEPTH} (recursion is not supported)")));
        }
        if args.len() > function.params.len() {
            return Err(RefError::new(call_span.clone(), format!("`{}` takes {} arguments, {} were given", function.name, function.params.len(), args.len())));
        }
        let mut slots: Vec<Option<Val>> = args.into_iter().map(|a| Some(a.val)).collect();
        slots.resize(function.params.len(), None);
        for (name, arg) in kwargs {
            let Some(i) = function.params.iter().position(|p| p.name == name) else {
                return Err(RefError::new(arg.span, format!("`{}` has no parameter `{name}`", function.name)));
            };
            if slots[i].is_some() {
                return Err(RefError::new(arg.span, format!("`{}` got two values for `{name}`", function.name)));
            }
            slots[i] = Some(arg.val);
        }
        let mut frame = HashMap::new();
        for (param, slot) in function.params.iter().zip(slots) {
            let val = match (slot, &param.default) {
                (Some(v), _) => v,
                (None, Some(default)) => self.eval(default)?,
                (None, None) => return Err(RefError::new(call_span.clone(), format!("missing a value for parameter `{}` of `{}`", param.name, function.name))),
            };
            frame.insert(param.name.clone(), val);
        }
        self.frames.push(frame);
        let flow = self.block(&function.body);
        self.frames.pop();
        Ok(match flow? {
            Flow::Return(v) => v,
            Flow::Normal => Val::None,
        })
    }

    fn block(&mut self, body: &[Stmt]) -> Result<Flow> {
        for stmt in body {
            if let Flow::Return(v) = self.stmt(stmt)? {
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Normal)
    }

    /// Runs a statement; the one during which the graph overflowed is the error's place.
    fn stmt(&mut self, stmt: &Stmt) -> Result<Flow> {
        let flow = self.stmt_unchecked(stmt);
        if self.graph.overflowed() {
            return Err(too_big(stmt.span.clone()));
        }
        flow
    }

    fn stmt_unchecked(&mut self, stmt: &Stmt) -> Result<Flow> {
        match &stmt.kind {
            StmtKind::Assign { targets, value } => {
                let value = self.eval(value)?;
                for target in targets {
                    self.assign(target, value.clone(), &stmt.span)?;
                }
            }
            StmtKind::AugAssign { target, op, value } => {
                let rhs = Arg { val: self.eval(value)?, span: value.span.clone() };
                self.aug_assign(target, *op, rhs, &stmt.span)?;
            }
            StmtKind::For { target, iter, body } => {
                let items = self.iterate(iter)?;
                for item in items {
                    self.tick(&stmt.span)?;
                    self.assign(target, item, &stmt.span)?;
                    if let Flow::Return(v) = self.block(body)? {
                        return Ok(Flow::Return(v));
                    }
                }
            }
            StmtKind::If { cond, then, orelse } => {
                let taken = self.truth(cond)?;
                return self.block(if taken { then } else { orelse });
            }
            StmtKind::Assert { cond } => {
                if !self.truth(cond)? {
                    return Err(RefError::new(stmt.span.clone(), "assertion failed for these argument shapes"));
                }
            }
            StmtKind::Return(value) => {
                let v = match value {
                    Some(e) => self.eval(e)?,
                    None => Val::None,
                };
                if self.frames.len() == 1 {
                    self.return_span = Some(value.as_ref().map_or(stmt.span.clone(), |e| e.span.clone()));
                }
                return Ok(Flow::Return(v));
            }
            StmtKind::Raise => return Err(RefError::new(stmt.span.clone(), "the reference raises an exception for these arguments")),
            StmtKind::Pass => {}
        }
        Ok(Flow::Normal)
    }

    fn tick(&mut self, span: &Span) -> Result<()> {
        self.iterations += 1;
        if self.iterations > MAX_LOOP_ITERATIONS {
            return Err(RefError::new(span.clone(), format!("loops run more than {MAX_LOOP_ITERATIONS} iterations in total")));
        }
        Ok(())
    }

    /// The items a `for` loop or a comprehension runs over: a known sequence, or the rows of a
    /// tensor.
    fn iterate(&mut self, iter: &Expr) -> Result<Vec<Val>> {
        match self.eval(iter)? {
            Val::Seq(items) => Ok(items.to_vec()),
            Val::Tensor(t) => {
                if t.ndim() == 0 {
                    return Err(RefError::new(iter.span.clone(), "iteration over a 0-d tensor"));
                }
                Ok(shape_ops::unbind(self, &t, 0).into_iter().map(Val::Tensor).collect())
            }
            other => Err(RefError::new(iter.span.clone(), format!("expected `range(...)`, a tuple or a list to iterate over, found {}", other.kind_name()))),
        }
    }

    fn frame(&mut self) -> &mut HashMap<String, Val> {
        self.frames.last_mut().expect("lowering always runs inside a function frame")
    }

    fn assign(&mut self, target: &Target, value: Val, stmt_span: &Span) -> Result<()> {
        match target {
            Target::Name(name, _) => {
                self.frame().insert(name.clone(), value);
                Ok(())
            }
            Target::Tuple(targets, span) => {
                let items: Vec<Val> = match value {
                    Val::Seq(items) => items.to_vec(),
                    Val::Tensor(t) if t.ndim() > 0 => shape_ops::unbind(self, &t, 0).into_iter().map(Val::Tensor).collect(),
                    other => return Err(RefError::new(span.clone(), format!("cannot unpack {}", other.kind_name()))),
                };
                if items.len() != targets.len() {
                    return Err(RefError::new(span.clone(), format!("expected {} values to unpack, found {}", targets.len(), items.len())));
                }
                for (t, v) in targets.iter().zip(items) {
                    self.assign(t, v, stmt_span)?;
                }
                Ok(())
            }
            Target::Index { name, index, span } => {
                let value = Arg { val: value, span: stmt_span.clone() };
                self.index_assign(name, index, value, span)
            }
        }
    }

    fn aug_assign(&mut self, target: &Target, op: crate::ir::BinOp, rhs: Arg, stmt_span: &Span) -> Result<()> {
        match target {
            Target::Name(name, span) => {
                let current = self.local(name, span)?;
                let lhs = Arg { val: current.clone(), span: span.clone() };
                let result = arith::binary(self, op, &lhs, &rhs, stmt_span)?;
                let result = match (&current, result) {
                    // `t += v` updates t in place: same storage, same dtype.
                    (Val::Tensor(old), Val::Tensor(new)) => {
                        self.check_unaliased(name, old, span)?;
                        if new.shape != old.shape {
                            return Err(RefError::new(
                                stmt_span.clone(),
                                format!("in-place update of a {} tensor with a result of shape {}", fmt_shape(&old.shape), fmt_shape(&new.shape)),
                            ));
                        }
                        if old.dtype.is_integral() && new.dtype.is_float() {
                            return Err(RefError::new(stmt_span.clone(), format!("in-place update of an {} tensor with a float result", old.dtype)));
                        }
                        Val::Tensor(Tensor { shape: new.shape, dtype: old.dtype, elems: new.elems, storage: old.storage })
                    }
                    (_, new) => new,
                };
                self.frame().insert(name.clone(), result);
                Ok(())
            }
            Target::Index { name, index, span } => {
                let base = self.local(name, span)?;
                let current = index::subscript(self, &base, index, span)?;
                let lhs = Arg { val: current, span: span.clone() };
                let result = arith::binary(self, op, &lhs, &rhs, stmt_span)?;
                self.index_assign(name, index, Arg { val: result, span: stmt_span.clone() }, span)
            }
            Target::Tuple(_, span) => Err(RefError::new(span.clone(), "augmented assignment to a tuple")),
        }
    }

    fn index_assign(&mut self, name: &str, index: &[IndexItem], value: Arg, span: &Span) -> Result<()> {
        let Val::Tensor(base) = self.local(name, span)? else {
            return Err(RefError::new(span.clone(), format!("index assignment needs a tensor; `{name}` is not one")));
        };
        self.check_unaliased(name, &base, span)?;
        let updated = index::assign(self, &base, index, &value, span)?;
        self.frame().insert(name.to_string(), Val::Tensor(updated));
        Ok(())
    }

    /// Refuses a write into a tensor that another live variable views: the write would show
    /// through the alias in PyTorch, and LARK's value semantics would miss it.
    fn check_unaliased(&self, name: &str, tensor: &Tensor, span: &Span) -> Result<()> {
        let innermost = self.frames.len() - 1;
        for (depth, frame) in self.frames.iter().enumerate() {
            for (other, val) in frame {
                if depth == innermost && other == name {
                    continue;
                }
                let mut shared = false;
                val.for_each_tensor(&mut |t| shared |= t.storage == tensor.storage);
                if shared {
                    return Err(RefError::new(
                        span.clone(),
                        format!("writing into `{name}`, which shares memory with `{other}`: aliasing is not modelled; write into a `.clone()`"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn local(&mut self, name: &str, span: &Span) -> Result<Val> {
        self.frame().get(name).cloned().ok_or_else(|| RefError::new(span.clone(), format!("`{name}` is used before it is assigned")))
    }

    /// Python truthiness of a value known at lowering.
    fn truth(&mut self, cond: &Expr) -> Result<bool> {
        let v = self.eval(cond)?;
        self.truthy(&v, &cond.span)
    }

    pub(crate) fn truthy(&self, v: &Val, span: &Span) -> Result<bool> {
        Ok(match v {
            Val::Bool(b) => *b,
            Val::Int(i) => *i != 0,
            Val::Float(n) => match self.graph.as_const(*n) {
                Some(c) => !c.is_zero(),
                None => return Err(RefError::new(span.clone(), "the truth value of an irrational number is not decided at lowering time")),
            },
            Val::None => false,
            Val::Seq(items) => !items.is_empty(),
            Val::Str(s) => !s.is_empty(),
            Val::Tensor(t) if t.numel() == 1 => match self.graph.as_const(t.elems[0]) {
                Some(c) => !c.is_zero(),
                None => {
                    return Err(RefError::new(span.clone(), "this condition depends on tensor values; only conditions known at lowering time are supported"))
                }
            },
            Val::Tensor(_) => return Err(RefError::new(span.clone(), "the truth value of a tensor with more than one element is ambiguous")),
            Val::DType(_) | Val::Device | Val::Finfo(_) | Val::Ellipsis => true,
        })
    }

    pub(crate) fn eval(&mut self, expr: &Expr) -> Result<Val> {
        let span = &expr.span;
        Ok(match &expr.kind {
            ExprKind::Local(name) => self.local(name, span)?,
            ExprKind::Int(i) => Val::Int(*i),
            ExprKind::Float(r) => Val::Float(self.graph.constant(r.clone())),
            ExprKind::Bool(b) => Val::Bool(*b),
            ExprKind::None => Val::None,
            ExprKind::Str(s) => Val::Str(s.as_str().into()),
            ExprKind::Ellipsis => Val::Ellipsis,
            ExprKind::MathConst(MathConst::Pi) => Val::Float(self.graph.pi()),
            ExprKind::MathConst(MathConst::E) => Val::Float(self.graph.e()),
            ExprKind::MathConst(MathConst::Inf) => Val::Float(NodeId::POS_INF),
            ExprKind::DType(d) => Val::DType(*d),
            ExprKind::Binary { op, lhs, rhs } => {
                let l = Arg { val: self.eval(lhs)?, span: lhs.span.clone() };
                let r = Arg { val: self.eval(rhs)?, span: rhs.span.clone() };
                arith::binary(self, *op, &l, &r, span)?
            }
            ExprKind::Unary { op, operand } => {
                let v = Arg { val: self.eval(operand)?, span: operand.span.clone() };
                match op {
                    UnaryOp::Not => Val::Bool(!self.truthy(&v.val, &v.span)?),
                    _ => arith::unary(self, *op, &v, span)?,
                }
            }
            ExprKind::Compare { op, lhs, rhs } => {
                let l = Arg { val: self.eval(lhs)?, span: lhs.span.clone() };
                let r = Arg { val: self.eval(rhs)?, span: rhs.span.clone() };
                arith::compare(self, *op, &l, &r, span)?
            }
            ExprKind::BoolOp { and, values } => {
                let mut result = Val::Bool(*and);
                for value in values {
                    result = self.eval(value)?;
                    let truth = self.truthy(&result, &value.span)?;
                    if truth != *and {
                        break;
                    }
                }
                result
            }
            ExprKind::IfExp { cond, then, orelse } => {
                if self.truth(cond)? {
                    self.eval(then)?
                } else {
                    self.eval(orelse)?
                }
            }
            ExprKind::Call { op, method, args, kwargs } => {
                let positional = self.eval_args(args)?;
                let keywords = self.eval_kwargs(kwargs)?;
                calls::call(self, *op, *method, positional, keywords, span)?
            }
            ExprKind::CallHelper { function, args, kwargs } => {
                let positional = self.eval_args(args)?;
                let keywords = self.eval_kwargs(kwargs)?;
                self.call_function(*function, positional, keywords, span)?
            }
            ExprKind::Attribute { value, attr } => {
                let v = Arg { val: self.eval(value)?, span: value.span.clone() };
                calls::attribute(self, *attr, &v, span)?
            }
            ExprKind::Subscript { value, index } => {
                let v = self.eval(value)?;
                index::subscript(self, &v, index, span)?
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => Val::seq(self.eval_args(items)?.into_iter().map(|a| a.val).collect()),
            ExprKind::Starred(_) => return Err(RefError::new(span.clone(), "`*` is only valid in call arguments and tuple displays")),
            ExprKind::ListComp { elt, target, iter } => {
                let items = self.iterate(iter)?;
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    self.tick(span)?;
                    self.assign(target, item, span)?;
                    out.push(self.eval(elt)?);
                }
                Val::seq(out)
            }
        })
    }

    fn eval_args(&mut self, args: &[Expr]) -> Result<Vec<Arg>> {
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            if let ExprKind::Starred(inner) = &a.kind {
                match self.eval(inner)? {
                    Val::Seq(items) => out.extend(items.iter().map(|v| Arg { val: v.clone(), span: a.span.clone() })),
                    other => return Err(RefError::new(a.span.clone(), format!("cannot unpack {} with `*`", other.kind_name()))),
                }
            } else {
                out.push(Arg { val: self.eval(a)?, span: a.span.clone() });
            }
        }
        Ok(out)
    }

    fn eval_kwargs(&mut self, kwargs: &[Kwarg]) -> Result<Vec<(String, Arg)>> {
        kwargs.iter().map(|k| Ok((k.name.clone(), Arg { val: self.eval(&k.value)?, span: k.value.span.clone() }))).collect()
    }
}

fn checked_numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}
