//! Python operators on lowering values: exact Python arithmetic on known numbers, elementwise
//! tensor arithmetic with broadcasting and PyTorch type promotion.

use super::{fmt_shape, linalg, Arg, Lowerer, Tensor, Val};
use crate::dtype::{result_type, Priority};
use crate::error::{RefError, Result};
use crate::graph::{as_integer, floor_div_int, mod_int, CmpOp, Graph, NodeId, UnaryFn};
use crate::ir::{BinOp, Span, UnaryOp};
use crate::DType;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};
use std::rc::Rc;

/// Integer exponents beyond this are refused: exact powers that large are impractical.
const MAX_EXPONENT: u32 = 64;

/// A tensor or number taking part in an elementwise operation.
#[derive(Clone)]
pub(crate) struct Operand {
    pub shape: Vec<usize>,
    pub elems: Rc<[NodeId]>,
    pub dtype: DType,
    pub priority: Priority,
}

impl Lowerer<'_> {
    pub(crate) fn operand(&mut self, arg: &Arg) -> Result<Operand> {
        let scalar = |node: NodeId, dtype: DType| Operand { shape: vec![], elems: Rc::from([node].as_slice()), dtype, priority: Priority::PythonScalar };
        Ok(match &arg.val {
            Val::Tensor(t) => Operand {
                shape: t.shape.clone(),
                elems: t.elems.clone(),
                dtype: t.dtype,
                priority: if t.ndim() == 0 { Priority::ZeroDim } else { Priority::Dimensioned },
            },
            Val::Int(i) => scalar(self.graph.int(*i), DType::I64),
            Val::Bool(b) => scalar(self.graph.int(*b as i64), DType::Bool),
            Val::Float(n) => scalar(*n, DType::F64),
            other => return Err(RefError::new(arg.span.clone(), format!("expected a tensor or a number, found {}", other.kind_name()))),
        })
    }
}

/// NumPy/PyTorch broadcasting of two shapes.
pub(crate) fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i < n - a.len() { 1 } else { a[i - (n - a.len())] };
        let y = if i < n - b.len() { 1 } else { b[i - (n - b.len())] };
        out[i] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// Strides that read `shape` broadcast to `out` (0 along broadcast dimensions).
pub(crate) fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let own = super::strides(shape);
    let offset = out.len() - shape.len();
    (0..out.len()).map(|i| if i < offset || shape[i - offset] == 1 { 0 } else { own[i - offset] }).collect()
}

/// Applies `f` to corresponding elements of broadcast operands.
pub(crate) fn zip_map(
    lw: &mut Lowerer<'_>,
    operands: &[&Operand],
    span: &Span,
    mut f: impl FnMut(&mut Graph, &[NodeId]) -> NodeId,
) -> Result<(Vec<usize>, Vec<NodeId>)> {
    let mut shape: Vec<usize> = Vec::new();
    for op in operands {
        shape = broadcast_shapes(&shape, &op.shape)
            .ok_or_else(|| RefError::new(span.clone(), format!("cannot broadcast {} with {}", fmt_shape(&shape), fmt_shape(&op.shape))))?;
    }
    let count = lw.check_size(&shape, span)?;
    let all_strides: Vec<Vec<usize>> = operands.iter().map(|op| broadcast_strides(&op.shape, &shape)).collect();
    let mut index = vec![0usize; shape.len()];
    let mut offsets = vec![0usize; operands.len()];
    let mut scratch = vec![NodeId(0); operands.len()];
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        for (k, op) in operands.iter().enumerate() {
            scratch[k] = op.elems[offsets[k]];
        }
        out.push(f(&mut lw.graph, &scratch));
        // Advance the multi-index, updating each operand's offset incrementally.
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            for (k, s) in all_strides.iter().enumerate() {
                offsets[k] += s[d];
            }
            if index[d] < shape[d] {
                break;
            }
            for (k, s) in all_strides.iter().enumerate() {
                offsets[k] -= s[d] * shape[d];
            }
            index[d] = 0;
        }
    }
    Ok((shape, out))
}

/// The elementwise combination of operands as a new tensor of dtype `dtype`.
pub(crate) fn elementwise(
    lw: &mut Lowerer<'_>,
    operands: &[&Operand],
    dtype: DType,
    span: &Span,
    f: impl FnMut(&mut Graph, &[NodeId]) -> NodeId,
) -> Result<Val> {
    let (shape, elems) = zip_map(lw, operands, span, f)?;
    Ok(Val::Tensor(lw.fresh(shape, dtype, elems)))
}

pub(crate) fn promoted(operands: &[&Operand]) -> DType {
    result_type(&operands.iter().map(|o| (o.dtype, o.priority)).collect::<Vec<_>>())
}

fn is_number(v: &Val) -> bool {
    matches!(v, Val::Int(_) | Val::Float(_) | Val::Bool(_))
}

pub(crate) fn binary(lw: &mut Lowerer<'_>, op: BinOp, l: &Arg, r: &Arg, span: &Span) -> Result<Val> {
    match (&l.val, &r.val) {
        (a, b) if is_number(a) && is_number(b) => python_binary(lw, op, l, r, span),
        (Val::Seq(a), Val::Seq(b)) if op == BinOp::Add => Ok(Val::seq(a.iter().chain(b.iter()).cloned().collect())),
        (Val::Seq(items), Val::Int(n)) | (Val::Int(n), Val::Seq(items)) if op == BinOp::Mul => {
            let n = usize::try_from(*n).unwrap_or(0);
            Ok(Val::seq(items.iter().cloned().cycle().take(items.len() * n).collect()))
        }
        _ if op == BinOp::MatMul => {
            let (a, b) = (lw.tensor_of(l)?, lw.tensor_of(r)?);
            linalg::matmul(lw, &a, &b, span)
        }
        _ if op == BinOp::Pow => pow(lw, l, r, span),
        _ => tensor_binary(lw, op, l, r, span),
    }
}

fn tensor_binary(lw: &mut Lowerer<'_>, op: BinOp, l: &Arg, r: &Arg, span: &Span) -> Result<Val> {
    let a = lw.operand(l)?;
    let b = lw.operand(r)?;
    let dtype = promoted(&[&a, &b]);
    let both_bool = dtype == DType::Bool;
    match op {
        BinOp::Add if both_bool => elementwise(lw, &[&a, &b], dtype, span, |g, x| g.max(x[0], x[1])),
        BinOp::Add => elementwise(lw, &[&a, &b], dtype, span, |g, x| g.add(x[0], x[1])),
        BinOp::Sub if both_bool => Err(RefError::new(span.clone(), "subtraction of bool tensors is not supported by PyTorch; use `^` or `logical_xor`")),
        BinOp::Sub => elementwise(lw, &[&a, &b], dtype, span, |g, x| g.sub(x[0], x[1])),
        BinOp::Mul => elementwise(lw, &[&a, &b], dtype, span, |g, x| g.mul(x[0], x[1])),
        BinOp::Div => {
            let dtype = if dtype.is_float() { dtype } else { DType::F32 };
            elementwise(lw, &[&a, &b], dtype, span, |g, x| g.div(x[0], x[1]))
        }
        BinOp::FloorDiv | BinOp::Mod if both_bool => Err(RefError::new(span.clone(), format!("`{}` on bool tensors is not supported", op.symbol()))),
        BinOp::FloorDiv => elementwise(lw, &[&a, &b], dtype, span, |g, x| g.floor_div(x[0], x[1])),
        BinOp::Mod => elementwise(lw, &[&a, &b], dtype, span, |g, x| g.modulo(x[0], x[1])),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
            if !both_bool {
                return Err(RefError::unsupported_feature(span.clone(), &format!("`{}` on non-bool tensors (bitwise integer operations)", op.symbol())));
            }
            elementwise(lw, &[&a, &b], DType::Bool, span, |g, x| match op {
                BinOp::BitAnd => g.mul(x[0], x[1]),
                BinOp::BitOr => g.max(x[0], x[1]),
                _ => g.cmp(CmpOp::Ne, x[0], x[1]),
            })
        }
        BinOp::Pow | BinOp::MatMul => unreachable!("handled by binary()"),
    }
}

/// `base ** exponent` for a tensor base and a known number exponent (integer powers, and
/// `0.5`/`-0.5` as `sqrt`/`rsqrt`).
pub(crate) fn pow(lw: &mut Lowerer<'_>, base: &Arg, exponent: &Arg, span: &Span) -> Result<Val> {
    if matches!(exponent.val, Val::Tensor(_)) {
        return Err(RefError::unsupported_feature(exponent.span.clone(), "a tensor exponent in `**`/`pow`"));
    }
    let b = lw.operand(base)?;
    let e = lw.operand(exponent)?;
    let dtype = promoted(&[&b, &e]);
    let value = lw.graph.as_const(e.elems[0]).cloned().ok_or_else(|| RefError::unsupported_feature(exponent.span.clone(), "an irrational exponent"))?;
    let half = BigRational::new(BigInt::from(1), BigInt::from(2));
    if let Some(k) = as_integer(&value).and_then(|k| k.to_i32()) {
        if k.unsigned_abs() > MAX_EXPONENT {
            return Err(RefError::unsupported_feature(exponent.span.clone(), &format!("integer powers above {MAX_EXPONENT} in magnitude")));
        }
        if dtype.is_integral() && k < 0 {
            return Err(RefError::new(exponent.span.clone(), "integers to negative integer powers are not allowed"));
        }
        return elementwise(lw, &[&b], dtype, span, |g, x| g.pow(x[0], k));
    }
    let dtype = if dtype.is_float() { dtype } else { DType::F32 };
    if value == half {
        return elementwise(lw, &[&b], dtype, span, |g, x| g.unary(UnaryFn::Sqrt, x[0]));
    }
    if value == -half {
        return elementwise(lw, &[&b], dtype, span, |g, x| g.unary(UnaryFn::Rsqrt, x[0]));
    }
    Err(RefError::unsupported_feature(exponent.span.clone(), "non-integer powers other than 0.5 and -0.5"))
}

/// The exact value of a known Python number.
pub(crate) fn number_value(lw: &Lowerer<'_>, arg: &Arg) -> Option<BigRational> {
    match &arg.val {
        Val::Int(i) => Some(BigRational::from_integer((*i).into())),
        Val::Bool(b) => Some(BigRational::from_integer((*b as i64).into())),
        Val::Float(n) => lw.graph.as_const(*n).cloned(),
        _ => None,
    }
}

fn python_binary(lw: &mut Lowerer<'_>, op: BinOp, l: &Arg, r: &Arg, span: &Span) -> Result<Val> {
    let as_int = |v: &Val| match v {
        Val::Int(i) => Some(*i),
        Val::Bool(b) => Some(*b as i64),
        _ => None,
    };
    if let (Val::Bool(a), Val::Bool(b)) = (&l.val, &r.val) {
        match op {
            BinOp::BitAnd => return Ok(Val::Bool(*a & *b)),
            BinOp::BitOr => return Ok(Val::Bool(*a | *b)),
            BinOp::BitXor => return Ok(Val::Bool(*a ^ *b)),
            _ => {}
        }
    }
    let overflow = || RefError::new(span.clone(), "integer overflow in a Python int computation");
    let zero = || RefError::new(span.clone(), "division by zero");
    if let (Some(a), Some(b)) = (as_int(&l.val), as_int(&r.val)) {
        return Ok(match op {
            BinOp::Add => Val::Int(a.checked_add(b).ok_or_else(overflow)?),
            BinOp::Sub => Val::Int(a.checked_sub(b).ok_or_else(overflow)?),
            BinOp::Mul => Val::Int(a.checked_mul(b).ok_or_else(overflow)?),
            BinOp::FloorDiv => Val::Int(floor_div_int(a, b).ok_or_else(|| if b == 0 { zero() } else { overflow() })?),
            BinOp::Mod => Val::Int(mod_int(a, b).ok_or_else(|| if b == 0 { zero() } else { overflow() })?),
            BinOp::Div => {
                if b == 0 {
                    return Err(zero());
                }
                Val::Float(lw.graph.constant(BigRational::new(a.into(), b.into())))
            }
            BinOp::Pow if b >= 0 => Val::Int(u32::try_from(b).ok().and_then(|b| a.checked_pow(b)).ok_or_else(overflow)?),
            BinOp::Pow => {
                if a == 0 {
                    return Err(RefError::new(span.clone(), "0 cannot be raised to a negative power"));
                }
                let k = i32::try_from(b).ok().filter(|k| k.unsigned_abs() <= MAX_EXPONENT).ok_or_else(overflow)?;
                let base = lw.graph.int(a);
                Val::Float(lw.graph.pow(base, k))
            }
            BinOp::BitAnd => Val::Int(a & b),
            BinOp::BitOr => Val::Int(a | b),
            BinOp::BitXor => Val::Int(a ^ b),
            BinOp::MatMul => return Err(RefError::new(span.clone(), "`@` needs tensors")),
        });
    }
    // At least one float: build graph nodes (constants fold exactly).
    let a = lw.operand(l)?.elems[0];
    let b = lw.operand(r)?.elems[0];
    let divisor_is_zero = lw.graph.as_const(b).is_some_and(|v| v.is_zero());
    let node = match op {
        BinOp::Add => lw.graph.add(a, b),
        BinOp::Sub => lw.graph.sub(a, b),
        BinOp::Mul => lw.graph.mul(a, b),
        BinOp::Div | BinOp::FloorDiv | BinOp::Mod if divisor_is_zero => return Err(zero()),
        BinOp::Div => lw.graph.div(a, b),
        BinOp::FloorDiv => lw.graph.floor_div(a, b),
        BinOp::Mod => lw.graph.modulo(a, b),
        BinOp::Pow => return python_float_pow(lw, a, r, span),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::MatMul => {
            return Err(RefError::new(span.clone(), format!("`{}` is not defined on floats", op.symbol())));
        }
    };
    Ok(Val::Float(node))
}

fn python_float_pow(lw: &mut Lowerer<'_>, base: NodeId, exponent: &Arg, span: &Span) -> Result<Val> {
    let value = number_value(lw, exponent).ok_or_else(|| RefError::unsupported_feature(exponent.span.clone(), "an irrational exponent"))?;
    if let Some(k) = as_integer(&value).and_then(|k| k.to_i32()) {
        if k.unsigned_abs() > MAX_EXPONENT {
            return Err(RefError::unsupported_feature(exponent.span.clone(), &format!("integer powers above {MAX_EXPONENT} in magnitude")));
        }
        return Ok(Val::Float(lw.graph.pow(base, k)));
    }
    let half = BigRational::new(BigInt::from(1), BigInt::from(2));
    if value.abs() == half {
        let f = if value.is_positive() { UnaryFn::Sqrt } else { UnaryFn::Rsqrt };
        return Ok(Val::Float(lw.graph.unary(f, base)));
    }
    Err(RefError::unsupported_feature(span.clone(), "non-integer powers other than 0.5 and -0.5"))
}

pub(crate) fn unary(lw: &mut Lowerer<'_>, op: UnaryOp, v: &Arg, span: &Span) -> Result<Val> {
    match (&v.val, op) {
        (_, UnaryOp::Plus) if is_number(&v.val) || matches!(v.val, Val::Tensor(_)) => Ok(v.val.clone()),
        (Val::Int(i), UnaryOp::Neg) => Ok(Val::Int(i.checked_neg().ok_or_else(|| RefError::new(span.clone(), "integer overflow"))?)),
        (Val::Bool(b), UnaryOp::Neg) => Ok(Val::Int(-(*b as i64))),
        (Val::Float(n), UnaryOp::Neg) => Ok(Val::Float(lw.graph.neg(*n))),
        (Val::Int(i), UnaryOp::Invert) => Ok(Val::Int(!i)),
        (Val::Bool(b), UnaryOp::Invert) => Ok(Val::Int(!(*b as i64))),
        (Val::Tensor(t), UnaryOp::Neg) => {
            if t.dtype == DType::Bool {
                return Err(RefError::new(span.clone(), "negation of a bool tensor is not supported by PyTorch; use `~`"));
            }
            let t = t.clone();
            Ok(Val::Tensor(map_tensor(lw, &t, t.dtype, |g, x| g.neg(x))))
        }
        (Val::Tensor(t), UnaryOp::Invert) if t.dtype == DType::Bool => {
            let t = t.clone();
            Ok(Val::Tensor(map_tensor(lw, &t, DType::Bool, |g, x| {
                let one = g.one();
                g.sub(one, x)
            })))
        }
        (Val::Tensor(_), UnaryOp::Invert) => Err(RefError::unsupported_feature(span.clone(), "`~` on non-bool tensors (bitwise integer operations)")),
        (other, _) => Err(RefError::new(span.clone(), format!("unary `{}` is not defined on {}", unary_symbol(op), other.kind_name()))),
    }
}

fn unary_symbol(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "-",
        UnaryOp::Plus => "+",
        UnaryOp::Not => "not",
        UnaryOp::Invert => "~",
    }
}

/// Applies `f` to every element of `t`, giving a fresh tensor of dtype `dtype`.
pub(crate) fn map_tensor(lw: &mut Lowerer<'_>, t: &Tensor, dtype: DType, mut f: impl FnMut(&mut Graph, NodeId) -> NodeId) -> Tensor {
    let elems: Vec<NodeId> = t.elems.iter().map(|&e| f(&mut lw.graph, e)).collect();
    lw.fresh(t.shape.clone(), dtype, elems)
}

pub(crate) fn compare(lw: &mut Lowerer<'_>, op: CmpOp, l: &Arg, r: &Arg, span: &Span) -> Result<Val> {
    if matches!(l.val, Val::None) || matches!(r.val, Val::None) {
        let both = matches!(l.val, Val::None) && matches!(r.val, Val::None);
        return match op {
            CmpOp::Eq => Ok(Val::Bool(both)),
            CmpOp::Ne => Ok(Val::Bool(!both)),
            _ => Err(RefError::new(span.clone(), format!("`{}` is not defined on None", op.symbol()))),
        };
    }
    if is_number(&l.val) && is_number(&r.val) {
        let (a, b) = match (number_value(lw, l), number_value(lw, r)) {
            (Some(a), Some(b)) => (a, b),
            _ => return Err(RefError::new(span.clone(), "comparing irrational numbers is not decided at lowering time")),
        };
        return Ok(Val::Bool(op.holds(&a, &b)));
    }
    if matches!(l.val, Val::Tensor(_)) || matches!(r.val, Val::Tensor(_)) {
        let a = lw.operand(l)?;
        let b = lw.operand(r)?;
        return elementwise(lw, &[&a, &b], DType::Bool, span, |g, x| g.cmp(op, x[0], x[1]));
    }
    match op {
        CmpOp::Eq | CmpOp::Ne => {
            let equal = values_equal(lw, &l.val, &r.val)
                .ok_or_else(|| RefError::new(span.clone(), format!("cannot compare {} with {}", l.val.kind_name(), r.val.kind_name())))?;
            Ok(Val::Bool(equal == (op == CmpOp::Eq)))
        }
        _ => Err(RefError::new(span.clone(), format!("`{}` is not defined between {} and {}", op.symbol(), l.val.kind_name(), r.val.kind_name()))),
    }
}

/// Python `==` on known values (shapes, dtypes, strings, numbers).
fn values_equal(lw: &Lowerer<'_>, a: &Val, b: &Val) -> Option<bool> {
    let span = 0..0;
    Some(match (a, b) {
        (Val::Seq(x), Val::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).map(|(p, q)| values_equal(lw, p, q)).collect::<Option<Vec<_>>>()?.into_iter().all(|e| e)
        }
        (Val::Str(x), Val::Str(y)) => x == y,
        (Val::DType(x), Val::DType(y)) => x == y,
        (x, y) if is_number(x) && is_number(y) => {
            number_value(lw, &Arg { val: x.clone(), span: span.clone() })? == number_value(lw, &Arg { val: y.clone(), span })?
        }
        (Val::Device, Val::Device) => true,
        _ => false,
    })
}
