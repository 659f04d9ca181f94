//! Calls of supported operations: binding arguments to PyTorch's parameter names and handing
//! them to the implementation; attributes of tensors and results.

use super::args::{required, CallArgs};
use super::arith::{self, elementwise, promoted};
use super::create::{self, filled};
use super::elementwise::{self as ew, Func};
use super::{index, linalg, reduce, shape_ops, Arg, Lowerer, Val};
use crate::error::{RefError, Result};
use crate::graph::{CmpOp, NodeId};
use crate::ir::{Attr, BinOp, Span};
use crate::ops::Op;
use crate::DType;

/// `LogSoftmax` → `log_softmax`, for messages.
fn op_name(op: Op) -> String {
    let debug = format!("{op:?}");
    let mut out = String::new();
    for (i, c) in debug.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out.trim_start_matches("py_").to_string()
}

fn func_of(op: Op) -> Option<Func> {
    Some(match op {
        Op::Relu => Func::Relu,
        Op::Sigmoid => Func::Sigmoid,
        Op::Silu => Func::Silu,
        Op::Exp => Func::Exp,
        Op::Log1p => Func::Log1p,
        Op::Expm1 => Func::Expm1,
        Op::Sqrt => Func::Sqrt,
        Op::Rsqrt => Func::Rsqrt,
        Op::Tanh => Func::Tanh,
        Op::Erf => Func::Erf,
        Op::Sin => Func::Sin,
        Op::Cos => Func::Cos,
        Op::Abs => Func::Abs,
        Op::Neg => Func::Neg,
        Op::Square => Func::Square,
        Op::Reciprocal => Func::Reciprocal,
        Op::Floor => Func::Floor,
        Op::Ceil => Func::Ceil,
        Op::Trunc => Func::Trunc,
        Op::Selu => Func::Selu,
        Op::Softsign => Func::Softsign,
        Op::Mish => Func::Mish,
        Op::Relu6 => Func::Relu6,
        Op::Hardsigmoid => Func::Hardsigmoid,
        Op::Hardswish => Func::Hardswish,
        Op::Logsigmoid => Func::Logsigmoid,
        Op::Tanhshrink => Func::Tanhshrink,
        _ => return None,
    })
}

fn cast_target(op: Op) -> Option<DType> {
    Some(match op {
        Op::ToFloat => DType::F32,
        Op::ToHalf => DType::F16,
        Op::ToBFloat16 => DType::BF16,
        Op::ToDouble => DType::F64,
        Op::ToLong => DType::I64,
        Op::ToInt => DType::I32,
        Op::ToBool => DType::Bool,
        _ => return None,
    })
}

/// An activation's parameter: the Python number given, else PyTorch's default (a decimal).
fn parameter(lw: &mut Lowerer<'_>, arg: Option<Arg>, default: &str) -> Result<NodeId> {
    match present(arg) {
        None => Ok(ew::decimal(&mut lw.graph, default)),
        Some(a @ Arg { val: Val::Int(_) | Val::Float(_), .. }) => Ok(lw.operand(&a)?.elems[0]),
        Some(a) => Err(RefError::new(a.span.clone(), format!("expected a number, found {}", a.val.kind_name()))),
    }
}

fn is_none(arg: &Option<Arg>) -> bool {
    matches!(arg, None | Some(Arg { val: Val::None, .. }))
}

fn present(arg: Option<Arg>) -> Option<Arg> {
    arg.filter(|a| !matches!(a.val, Val::None))
}

pub(crate) fn call(lw: &mut Lowerer<'_>, op: Op, method: bool, positional: Vec<Arg>, keywords: Vec<(String, Arg)>, span: &Span) -> Result<Val> {
    let a = CallArgs { positional, keywords, name: op_name(op) };
    if let Some(func) = func_of(op) {
        let [x, inplace] = a.bind(["input", "inplace"])?;
        if lw.bool_of(&inplace, false)? {
            return Err(RefError::unsupported_feature(span.clone(), "`inplace=True`"));
        }
        return ew::unary_function(lw, func, &required(x, "input", span)?, span);
    }
    if let Some(dtype) = cast_target(op) {
        let [x, _memory_format] = a.bind(["input", "memory_format"])?;
        let t = lw.tensor_of(&required(x, "input", span)?)?;
        return Ok(Val::Tensor(ew::cast(lw, &t, dtype, span)));
    }
    match op {
        Op::Log => {
            let [x, base] = a.bind(["input", "base"])?;
            let x = required(x, "input", span)?;
            let log_x = ew::unary_function(lw, Func::Log, &x, span)?;
            match present(base) {
                None => Ok(log_x),
                Some(b) => {
                    let log_b = ew::unary_function(lw, Func::Log, &b, span)?;
                    arith::binary(lw, BinOp::Div, &Arg { val: log_x, span: x.span.clone() }, &Arg { val: log_b, span: b.span }, span)
                }
            }
        }
        Op::Gelu => {
            let [x, approximate] = a.bind(["input", "approximate"])?;
            let func = match approximate.as_ref().map(|a| lw.str_of(a)).transpose()?.as_deref() {
                None | Some("none") => Func::Gelu,
                Some("tanh") => Func::GeluTanh,
                Some(other) => return Err(RefError::new(span.clone(), format!("`gelu` approximate must be 'none' or 'tanh', found '{other}'"))),
            };
            ew::unary_function(lw, func, &required(x, "input", span)?, span)
        }
        Op::LeakyRelu | Op::Elu | Op::Celu | Op::Softplus | Op::Hardtanh => {
            // (input, first parameter, second parameter, inplace) in PyTorch's parameter names.
            let (x, first, second, inplace) = match op {
                Op::LeakyRelu => {
                    let [x, slope, inplace] = a.bind(["input", "negative_slope", "inplace"])?;
                    (x, slope, None, inplace)
                }
                Op::Softplus => {
                    let [x, beta, threshold] = a.bind(["input", "beta", "threshold"])?;
                    (x, beta, threshold, None)
                }
                Op::Hardtanh => {
                    let [x, lo, hi, inplace] = a.bind(["input", "min_val", "max_val", "inplace"])?;
                    (x, lo, hi, inplace)
                }
                _ => {
                    let [x, alpha, inplace] = a.bind(["input", "alpha", "inplace"])?;
                    (x, alpha, None, inplace)
                }
            };
            let x = required(x, "input", span)?;
            if lw.bool_of(&inplace, false)? {
                return Err(RefError::unsupported_feature(span.clone(), "`inplace=True`"));
            }
            let activation = match op {
                Op::LeakyRelu => ew::Activation::LeakyRelu { slope: parameter(lw, first, "0.01")? },
                Op::Elu => ew::Activation::Elu { alpha: parameter(lw, first, "1.0")? },
                Op::Celu => ew::Activation::Celu { alpha: parameter(lw, first, "1.0")? },
                Op::Softplus => ew::Activation::Softplus { beta: parameter(lw, first, "1.0")?, threshold: parameter(lw, second, "20.0")? },
                _ => ew::Activation::Hardtanh { lo: parameter(lw, first, "-1.0")?, hi: parameter(lw, second, "1.0")? },
            };
            ew::activation(lw, activation, &x, &op_name(op), span)
        }
        Op::Add | Op::Sub => {
            let [x, other, alpha] = a.bind(["input", "other", "alpha"])?;
            let (x, mut other) = (required(x, "input", span)?, required(other, "other", span)?);
            if let Some(alpha) = present(alpha) {
                let scaled = arith::binary(lw, BinOp::Mul, &other, &alpha, span)?;
                other = Arg { val: scaled, span: other.span };
            }
            arith::binary(lw, if op == Op::Add { BinOp::Add } else { BinOp::Sub }, &x, &other, span)
        }
        Op::Mul | Op::FloorDivide | Op::Remainder => {
            let [x, other] = a.bind(["input", "other"])?;
            let bin = match op {
                Op::Mul => BinOp::Mul,
                Op::FloorDivide => BinOp::FloorDiv,
                _ => BinOp::Mod,
            };
            arith::binary(lw, bin, &required(x, "input", span)?, &required(other, "other", span)?, span)
        }
        Op::Div => {
            let [x, other, rounding_mode] = a.bind(["input", "other", "rounding_mode"])?;
            let (x, other) = (required(x, "input", span)?, required(other, "other", span)?);
            match present(rounding_mode).map(|m| lw.str_of(&m)).transpose()?.as_deref() {
                None => arith::binary(lw, BinOp::Div, &x, &other, span),
                Some("floor") => arith::binary(lw, BinOp::FloorDiv, &x, &other, span),
                Some("trunc") => {
                    let q = arith::binary(lw, BinOp::Div, &x, &other, span)?;
                    let keep_int = matches!((&x.val, &other.val), (Val::Tensor(a), _) if a.dtype.is_integral()) && !matches!(other.val, Val::Float(_));
                    let truncated = ew::unary_function(lw, Func::Trunc, &Arg { val: q, span: span.clone() }, span)?;
                    match (truncated, keep_int) {
                        (Val::Tensor(t), true) => {
                            let dtype = match &x.val {
                                Val::Tensor(a) => a.dtype,
                                _ => DType::I64,
                            };
                            Ok(Val::Tensor(lw.fresh(t.shape.clone(), dtype, t.elems.to_vec())))
                        }
                        (v, _) => Ok(v),
                    }
                }
                Some(other) => Err(RefError::new(span.clone(), format!("unknown rounding_mode '{other}'"))),
            }
        }
        Op::Pow => {
            let [x, exponent] = a.bind(["input", "exponent"])?;
            arith::binary(lw, BinOp::Pow, &required(x, "input", span)?, &required(exponent, "exponent", span)?, span)
        }
        Op::Maximum | Op::Minimum => {
            let [x, other] = a.bind(["input", "other"])?;
            binary_extremum(lw, &required(x, "input", span)?, &required(other, "other", span)?, op == Op::Maximum, span)
        }
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            let [x, other] = a.bind(["input", "other"])?;
            let cmp = match op {
                Op::Eq => CmpOp::Eq,
                Op::Ne => CmpOp::Ne,
                Op::Lt => CmpOp::Lt,
                Op::Le => CmpOp::Le,
                Op::Gt => CmpOp::Gt,
                _ => CmpOp::Ge,
            };
            arith::compare(lw, cmp, &required(x, "input", span)?, &required(other, "other", span)?, span)
        }
        Op::Where => {
            let params = if method { ["input", "condition", "other"] } else { ["condition", "input", "other"] };
            let [first, second, third] = a.bind(params)?;
            let (cond, x, y) = if method { (second, first, third) } else { (first, second, third) };
            let cond = required(cond, "condition", span)?;
            let (Some(x), Some(y)) = (x, y) else {
                return Err(RefError::unsupported_feature(span.clone(), "`torch.where(condition)` with one argument (its result shape depends on the data)"));
            };
            ew::where_(lw, &cond, &x, &y, span)
        }
        Op::Clamp => {
            let [x, lo, hi] = a.bind(["input", "min", "max"])?;
            ew::clamp(lw, &required(x, "input", span)?, lo.as_ref(), hi.as_ref(), span)
        }
        Op::ClampMin => {
            let [x, lo] = a.bind(["input", "min"])?;
            ew::clamp(lw, &required(x, "input", span)?, lo.as_ref(), None, span)
        }
        Op::ClampMax => {
            let [x, hi] = a.bind(["input", "max"])?;
            ew::clamp(lw, &required(x, "input", span)?, None, hi.as_ref(), span)
        }
        Op::MaskedFill => {
            let [x, mask, value] = a.bind(["input", "mask", "value"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            ew::masked_fill(lw, &t, &required(mask, "mask", span)?, &required(value, "value", span)?, span)
        }
        Op::Sum | Op::Mean | Op::Prod => {
            let [x, dim, keepdim, dtype] = a.bind(["input", "dim", "keepdim", "dtype"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let t = match lw.dtype_of(&dtype)? {
                Some(d) => ew::cast(lw, &t, d, span),
                None => t,
            };
            let dims = reduction_dims(lw, &dim, t.ndim())?;
            let keepdim = lw.bool_of(&keepdim, false)?;
            Ok(Val::Tensor(match op {
                Op::Sum => reduce::sum(lw, &t, dims, keepdim),
                Op::Mean => reduce::mean(lw, &t, dims, keepdim, span)?,
                _ => reduce::prod(lw, &t, dims, keepdim),
            }))
        }
        Op::Amax | Op::Amin => {
            let [x, dim, keepdim] = a.bind(["input", "dim", "keepdim"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let dims = reduction_dims(lw, &dim, t.ndim())?;
            let keepdim = lw.bool_of(&keepdim, false)?;
            Ok(Val::Tensor(reduce::amax(lw, &t, dims, keepdim, op == Op::Amax, span)?))
        }
        Op::Max | Op::Min => {
            let is_max = op == Op::Max;
            let [x, dim, keepdim] = a.bind(["input", "dim", "keepdim"])?;
            let x = required(x, "input", span)?;
            match dim {
                Some(other @ Arg { val: Val::Tensor(_), .. }) => binary_extremum(lw, &x, &other, is_max, span),
                None => {
                    let t = lw.tensor_of(&x)?;
                    Ok(Val::Tensor(reduce::amax(lw, &t, None, false, is_max, span)?))
                }
                Some(dim) => {
                    let t = lw.tensor_of(&x)?;
                    let d = lw.dim_of(&dim, t.ndim())?;
                    let keepdim = lw.bool_of(&keepdim, false)?;
                    let (values, indices) = reduce::max_with_indices(lw, &t, d, keepdim, is_max, span)?;
                    Ok(Val::seq(vec![Val::Tensor(values), Val::Tensor(indices)]))
                }
            }
        }
        Op::Argmax | Op::Argmin => {
            let [x, dim, keepdim] = a.bind(["input", "dim", "keepdim"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let d = match present(dim) {
                Some(d) => Some(lw.dim_of(&d, t.ndim())?),
                None => None,
            };
            let keepdim = lw.bool_of(&keepdim, false)?;
            Ok(Val::Tensor(reduce::argmax(lw, &t, d, keepdim, op == Op::Argmax, span)?))
        }
        Op::Cumsum => {
            let [x, dim, dtype] = a.bind(["input", "dim", "dtype"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let t = match lw.dtype_of(&dtype)? {
                Some(d) => ew::cast(lw, &t, d, span),
                None => t,
            };
            let d = lw.dim_of(&required(dim, "dim", span)?, t.ndim())?;
            Ok(Val::Tensor(reduce::cumsum(lw, &t, d)))
        }
        Op::Var | Op::Std => {
            let [x, dim, unbiased, keepdim, correction] = a.bind(["input", "dim", "unbiased", "keepdim", "correction"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            // `var(x, False)`: the legacy overload whose second argument is `unbiased`.
            let (dim, unbiased) = match dim {
                Some(Arg { val: Val::Bool(b), span: s }) if unbiased.is_none() => (None, Some(Arg { val: Val::Bool(b), span: s })),
                d => (d, unbiased),
            };
            let dims = reduction_dims(lw, &dim, t.ndim())?;
            let correction = match (present(correction), unbiased) {
                (Some(c), None) => lw.int_of(&c)?,
                (None, u) => lw.bool_of(&u, true)? as i64,
                (Some(c), Some(_)) => return Err(RefError::new(c.span, "give either `unbiased` or `correction`, not both")),
            };
            let keepdim = lw.bool_of(&keepdim, false)?;
            Ok(Val::Tensor(reduce::var(lw, &t, dims, correction, keepdim, op == Op::Std, span)?))
        }
        Op::Softmax | Op::LogSoftmax => {
            let [x, dim, third, dtype] = a.bind(["input", "dim", "_stacklevel_or_dtype", "dtype"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let dtype = match (lw.dtype_of(&dtype)?, third) {
                (Some(d), _) => Some(d),
                (None, Some(Arg { val: Val::DType(d), .. })) => Some(d),
                _ => None,
            };
            let t = match dtype {
                Some(d) => ew::cast(lw, &t, d, span),
                None => t,
            };
            let Some(dim) = present(dim) else {
                return Err(RefError::new(span.clone(), "softmax without `dim` is ambiguous (PyTorch deprecates it); give `dim`"));
            };
            let d = lw.dim_of(&dim, t.ndim())?;
            Ok(Val::Tensor(reduce::softmax(lw, &t, d, op == Op::LogSoftmax, span)?))
        }
        Op::RmsNorm => {
            let [x, shape, weight, eps] = a.bind(["input", "normalized_shape", "weight", "eps"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let normalized = normalized_shape(lw, &required(shape, "normalized_shape", span)?)?;
            let weight = present(weight).map(|w| lw.tensor_of(&w)).transpose()?;
            let eps = present(eps).map(|e| scalar_node(lw, &e)).transpose()?;
            Ok(Val::Tensor(reduce::rms_norm(lw, &t, &normalized, weight.as_ref(), eps, span)?))
        }
        Op::LayerNorm => {
            let [x, shape, weight, bias, eps] = a.bind(["input", "normalized_shape", "weight", "bias", "eps"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let normalized = normalized_shape(lw, &required(shape, "normalized_shape", span)?)?;
            let weight = present(weight).map(|w| lw.tensor_of(&w)).transpose()?;
            let bias = present(bias).map(|b| lw.tensor_of(&b)).transpose()?;
            let eps = match present(eps) {
                Some(e) => scalar_node(lw, &e)?,
                None => lw.graph.constant(reduce::ratio(1, 100_000)),
            };
            Ok(Val::Tensor(reduce::layer_norm(lw, &t, &normalized, weight.as_ref(), bias.as_ref(), eps, span)?))
        }
        Op::Matmul | Op::Mm | Op::Bmm => {
            let [x, other] = a.bind(["input", if op == Op::Matmul { "other" } else { "mat2" }])?;
            let x = lw.tensor_of(&required(x, "input", span)?)?;
            let y = lw.tensor_of(&required(other, "other", span)?)?;
            match op {
                Op::Matmul => linalg::matmul(lw, &x, &y, span),
                _ => linalg::mm(lw, &x, &y, op == Op::Bmm, span),
            }
        }
        Op::Einsum => {
            let ([equation], rest) = a.bind_rest(["equation"], Some("operands"))?;
            let equation = lw.str_of(&required(equation, "equation", span)?)?;
            let operands: Vec<Arg> = match rest.as_slice() {
                [Arg { val: Val::Seq(items), span: s }] => items.iter().map(|v| Arg { val: v.clone(), span: s.clone() }).collect(),
                _ => rest,
            };
            let tensors = operands.iter().map(|o| lw.tensor_of(o)).collect::<Result<Vec<_>>>()?;
            linalg::einsum(lw, &equation, &tensors, span)
        }
        Op::Linear => {
            let [x, w, b] = a.bind(["input", "weight", "bias"])?;
            let x = lw.tensor_of(&required(x, "input", span)?)?;
            let w = lw.tensor_of(&required(w, "weight", span)?)?;
            let b = present(b).map(|b| lw.tensor_of(&b)).transpose()?;
            linalg::linear(lw, &x, &w, b.as_ref(), span)
        }
        Op::View | Op::Reshape => {
            let ([x], rest) = a.bind_rest(["input"], Some("shape"))?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            if let [Arg { val: Val::DType(_), span: s }] = rest.as_slice() {
                return Err(RefError::unsupported_feature(s.clone(), "`view(dtype)` (reinterpreting bits)"));
            }
            let sizes = int_list(lw, &rest)?;
            Ok(Val::Tensor(shape_ops::reshape(lw, &t, &sizes, span)?))
        }
        Op::Transpose => {
            let [x, d0, d1] = a.bind(["input", "dim0", "dim1"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let n = t.ndim();
            let d0 = lw.dim_of(&required(d0, "dim0", span)?, n)?;
            let d1 = lw.dim_of(&required(d1, "dim1", span)?, n)?;
            Ok(Val::Tensor(shape_ops::transpose(lw, &t, d0, d1)))
        }
        Op::Permute => {
            let ([x], rest) = a.bind_rest(["input"], Some("dims"))?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let dims = int_list(lw, &rest)?;
            let perm = shape_ops::check_permutation(&dims, t.ndim(), span)?;
            Ok(Val::Tensor(shape_ops::permute(lw, &t, &perm)))
        }
        Op::Unsqueeze => {
            let [x, dim] = a.bind(["input", "dim"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let d = lw.int_of(&required(dim, "dim", span)?)?;
            Ok(Val::Tensor(shape_ops::unsqueeze(&t, d, span)?))
        }
        Op::Squeeze => {
            let [x, dim] = a.bind(["input", "dim"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let dims = present(dim).map(|d| lw.dims_of(&d, t.ndim())).transpose()?;
            Ok(Val::Tensor(shape_ops::squeeze(&t, dims.as_deref())))
        }
        Op::Expand => {
            let ([x], rest) = a.bind_rest(["input"], Some("size"))?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let sizes = int_list(lw, &rest)?;
            Ok(Val::Tensor(shape_ops::expand(lw, &t, &sizes, span)?))
        }
        Op::ExpandAs => {
            let [x, other] = a.bind(["input", "other"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let o = lw.tensor_of(&required(other, "other", span)?)?;
            let sizes: Vec<i64> = o.shape.iter().map(|&s| s as i64).collect();
            Ok(Val::Tensor(shape_ops::expand(lw, &t, &sizes, span)?))
        }
        Op::Contiguous | Op::Detach => {
            let [x, _memory_format] = a.bind(["input", "memory_format"])?;
            Ok(Val::Tensor(lw.tensor_of(&required(x, "input", span)?)?))
        }
        Op::Clone => {
            let [x, _memory_format] = a.bind(["input", "memory_format"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            Ok(Val::Tensor(lw.fresh(t.shape.clone(), t.dtype, t.elems.to_vec())))
        }
        Op::Flatten => {
            let [x, start, end] = a.bind(["input", "start_dim", "end_dim"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let n = t.ndim();
            let start = present(start).map(|s| lw.dim_of(&s, n)).transpose()?.unwrap_or(0);
            let end = present(end).map(|e| lw.dim_of(&e, n)).transpose()?.unwrap_or(n.saturating_sub(1));
            if n > 0 && start > end {
                return Err(RefError::new(span.clone(), "flatten() has start_dim after end_dim"));
            }
            Ok(Val::Tensor(shape_ops::flatten(&t, start, end)))
        }
        Op::Chunk => {
            let [x, chunks, dim] = a.bind(["input", "chunks", "dim"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let chunks = lw.usize_of(&required(chunks, "chunks", span)?)?;
            if chunks == 0 {
                return Err(RefError::new(span.clone(), "chunk expects `chunks` to be greater than 0"));
            }
            let d = present(dim).map(|d| lw.dim_of(&d, t.ndim())).transpose()?.unwrap_or(0);
            require_dims(&t, span)?;
            Ok(Val::seq(shape_ops::chunk(lw, &t, chunks, d).into_iter().map(Val::Tensor).collect()))
        }
        Op::Split => {
            let [x, sizes, dim] = a.bind(["input", "split_size_or_sections", "dim"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            require_dims(&t, span)?;
            let d = present(dim).map(|d| lw.dim_of(&d, t.ndim())).transpose()?.unwrap_or(0);
            let sizes_arg = required(sizes, "split_size_or_sections", span)?;
            let n = t.shape[d];
            let sizes: Vec<usize> = match &sizes_arg.val {
                Val::Seq(_) => {
                    let s: Vec<usize> = lw.ints_of(&sizes_arg)?.into_iter().map(|v| v.max(0) as usize).collect();
                    if s.iter().sum::<usize>() != n {
                        return Err(RefError::new(sizes_arg.span, format!("split sizes {s:?} do not add up to the dimension size {n}")));
                    }
                    s
                }
                _ => {
                    let size = lw.usize_of(&sizes_arg)?;
                    if size == 0 {
                        return Err(RefError::new(sizes_arg.span, "split size must be positive"));
                    }
                    let mut s = vec![size; n / size];
                    if n % size != 0 {
                        s.push(n % size);
                    }
                    s
                }
            };
            Ok(Val::seq(shape_ops::split_sizes(lw, &t, d, &sizes).into_iter().map(Val::Tensor).collect()))
        }
        Op::Unbind => {
            let [x, dim] = a.bind(["input", "dim"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            require_dims(&t, span)?;
            let d = present(dim).map(|d| lw.dim_of(&d, t.ndim())).transpose()?.unwrap_or(0);
            Ok(Val::seq(shape_ops::unbind(lw, &t, d).into_iter().map(Val::Tensor).collect()))
        }
        Op::Narrow => {
            let [x, dim, start, length] = a.bind(["input", "dim", "start", "length"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            require_dims(&t, span)?;
            let d = lw.dim_of(&required(dim, "dim", span)?, t.ndim())?;
            let start = lw.int_of(&required(start, "start", span)?)?;
            let length = lw.int_of(&required(length, "length", span)?)?;
            Ok(Val::Tensor(shape_ops::narrow(lw, &t, d, start, length, span)?))
        }
        Op::Cat | Op::Stack => {
            let [tensors, dim, axis] = a.bind(["tensors", "dim", "axis"])?;
            let list = required(tensors, "tensors", span)?;
            let Val::Seq(items) = &list.val else {
                return Err(RefError::new(list.span.clone(), format!("expected a list of tensors, found {}", list.val.kind_name())));
            };
            let tensors = items.iter().map(|v| lw.tensor_of(&Arg { val: v.clone(), span: list.span.clone() })).collect::<Result<Vec<_>>>()?;
            let dim = match present(dim).or(present(axis)) {
                Some(d) => lw.int_of(&d)?,
                None => 0,
            };
            Ok(Val::Tensor(if op == Op::Cat { shape_ops::cat(lw, &tensors, dim, span)? } else { shape_ops::stack(lw, &tensors, dim, span)? }))
        }
        Op::Repeat => {
            let ([x], rest) = a.bind_rest(["input"], Some("repeats"))?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let reps = create::size_of(lw, &rest, span)?;
            Ok(Val::Tensor(shape_ops::repeat(lw, &t, &reps, span)?))
        }
        Op::Tril | Op::Triu => {
            let [x, diagonal] = a.bind(["input", "diagonal"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let diagonal = lw.opt_int(&diagonal)?.unwrap_or(0);
            Ok(Val::Tensor(shape_ops::triangle(lw, &t, diagonal, op == Op::Tril, span)?))
        }
        Op::IndexSelect | Op::Gather => {
            let [x, dim, idx, _sparse] = a.bind(["input", "dim", "index", "sparse_grad"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let d = lw.dim_of(&required(dim, "dim", span)?, t.ndim())?;
            let idx_arg = required(idx, "index", span)?;
            let idx = lw.tensor_of(&idx_arg)?;
            Ok(Val::Tensor(if op == Op::Gather {
                index::gather(lw, &t, d, &idx, &idx_arg.span)?
            } else {
                index::index_select(lw, &t, d, &idx, &idx_arg.span)?
            }))
        }
        Op::Embedding => {
            let [idx, weight, _padding_idx, max_norm] = a.bind(["input", "weight", "padding_idx", "max_norm"])?;
            if !is_none(&max_norm) {
                return Err(RefError::unsupported_feature(span.clone(), "`embedding(max_norm=...)` (it renormalises the weight)"));
            }
            let idx_arg = required(idx, "input", span)?;
            let idx = lw.tensor_of(&idx_arg)?;
            let w = lw.tensor_of(&required(weight, "weight", span)?)?;
            Ok(Val::Tensor(index::embedding(lw, &idx, &w, &idx_arg.span)?))
        }
        Op::Zeros | Op::Ones | Op::Empty | Op::Full => creation(lw, op, method, a, span),
        Op::Arange => {
            let [first, second, third, dtype] = a.bind(["start", "end", "step", "dtype"])?;
            let dtype = lw.dtype_of(&dtype)?;
            let one = Arg { val: Val::Int(1), span: span.clone() };
            let zero = Arg { val: Val::Int(0), span: span.clone() };
            let (start, end, step) = match (present(first), present(second), present(third)) {
                (Some(end), None, None) => (zero, end, one),
                (Some(start), Some(end), None) => (start, end, one),
                (Some(start), Some(end), Some(step)) => (start, end, step),
                _ => return Err(RefError::new(span.clone(), "`arange` needs `end`, or `start` and `end`")),
            };
            Ok(Val::Tensor(create::arange(lw, &start, &end, &step, dtype, span)?))
        }
        Op::ZerosLike | Op::OnesLike | Op::EmptyLike => {
            let [x, dtype] = a.bind(["input", "dtype"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let dtype = lw.dtype_of(&dtype)?.unwrap_or(t.dtype);
            let fill = match op {
                Op::ZerosLike => lw.graph.zero(),
                Op::OnesLike => lw.graph.one(),
                _ => NodeId::UNINIT,
            };
            Ok(Val::Tensor(filled(lw, t.shape.clone(), dtype, fill, span)?))
        }
        Op::FullLike => {
            let [x, fill, dtype] = a.bind(["input", "fill_value", "dtype"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let dtype = lw.dtype_of(&dtype)?.unwrap_or(t.dtype);
            let fill = scalar_node(lw, &required(fill, "fill_value", span)?)?;
            Ok(Val::Tensor(filled(lw, t.shape.clone(), dtype, fill, span)?))
        }
        Op::Tensor => {
            let [data, dtype] = a.bind(["data", "dtype"])?;
            let dtype = lw.dtype_of(&dtype)?;
            Ok(Val::Tensor(create::tensor_literal(lw, &required(data, "data", span)?, dtype)?))
        }
        Op::Size => {
            let [x, dim] = a.bind(["input", "dim"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            match present(dim) {
                None => Ok(Val::ints(t.shape.iter().copied())),
                Some(d) => {
                    let d = lw.dim_of(&d, t.ndim())?;
                    Ok(Val::Int(t.shape.get(d).copied().unwrap_or(1) as i64))
                }
            }
        }
        Op::Numel => {
            let [x] = a.bind(["input"])?;
            Ok(Val::Int(lw.tensor_of(&required(x, "input", span)?)?.numel() as i64))
        }
        Op::Dim => {
            let [x] = a.bind(["input"])?;
            Ok(Val::Int(lw.tensor_of(&required(x, "input", span)?)?.ndim() as i64))
        }
        Op::Finfo => {
            let [ty] = a.bind(["type"])?;
            let ty = required(ty, "type", span)?;
            match &ty.val {
                Val::DType(d) if d.is_float() => Ok(Val::Finfo(*d)),
                Val::Tensor(t) if t.dtype.is_float() => Ok(Val::Finfo(t.dtype)),
                other => Err(RefError::new(ty.span.clone(), format!("`torch.finfo` needs a float dtype, found {}", other.kind_name()))),
            }
        }
        Op::To => to(lw, a, span),
        Op::TypeAs => {
            let [x, other] = a.bind(["input", "other"])?;
            let t = lw.tensor_of(&required(x, "input", span)?)?;
            let o = lw.tensor_of(&required(other, "other", span)?)?;
            Ok(Val::Tensor(ew::cast(lw, &t, o.dtype, span)))
        }
        Op::Range => {
            let [first, second, third] = a.bind(["start", "stop", "step"])?;
            let (start, stop, step) = match (lw.opt_int(&first)?, lw.opt_int(&second)?, lw.opt_int(&third)?) {
                (Some(stop), None, None) => (0, stop, 1),
                (Some(start), Some(stop), None) => (start, stop, 1),
                (Some(start), Some(stop), Some(step)) => (start, stop, step),
                _ => return Err(RefError::new(span.clone(), "`range` needs `stop`, or `start` and `stop`")),
            };
            if step == 0 {
                return Err(RefError::new(span.clone(), "`range` step must not be zero"));
            }
            let (span_len, stride) = if step > 0 { (stop as i128 - start as i128, step as i128) } else { (start as i128 - stop as i128, -(step as i128)) };
            let count = if span_len <= 0 { 0 } else { (span_len + stride - 1) / stride };
            if count > 1 << 22 {
                return Err(RefError::new(span.clone(), format!("`range` of {count} iterations is more than LARK unrolls")));
            }
            Ok(Val::seq((0..count as i64).map(|i| Val::Int(start + i * step)).collect()))
        }
        Op::Len => {
            let [x] = a.bind(["obj"])?;
            let x = required(x, "obj", span)?;
            match &x.val {
                Val::Seq(items) => Ok(Val::Int(items.len() as i64)),
                Val::Str(s) => Ok(Val::Int(s.chars().count() as i64)),
                Val::Tensor(t) if t.ndim() > 0 => Ok(Val::Int(t.shape[0] as i64)),
                other => Err(RefError::new(x.span.clone(), format!("`len` of {}", other.kind_name()))),
            }
        }
        Op::PyMin | Op::PyMax => {
            let ([], rest) = a.bind_rest([], Some("args"))?;
            let items: Vec<Arg> = match rest.as_slice() {
                [Arg { val: Val::Seq(items), span: s }] => items.iter().map(|v| Arg { val: v.clone(), span: s.clone() }).collect(),
                _ => rest,
            };
            python_extremum(lw, &items, op == Op::PyMax, span)
        }
        Op::PyInt => {
            let [x] = a.bind(["x"])?;
            let x = required(x, "x", span)?;
            match &x.val {
                Val::Float(_) => ew::unary_function(lw, Func::Trunc, &x, span),
                _ => Ok(Val::Int(lw.int_of(&x)?)),
            }
        }
        Op::PyFloat => {
            let [x] = a.bind(["x"])?;
            let x = required(x, "x", span)?;
            match &x.val {
                Val::Str(s) => match s.trim().to_ascii_lowercase().as_str() {
                    "inf" | "+inf" | "infinity" => Ok(Val::Float(NodeId::POS_INF)),
                    "-inf" | "-infinity" => Ok(Val::Float(NodeId::NEG_INF)),
                    text => match crate::front::parse_float_literal(text.trim_start_matches(['-', '+'])) {
                        Some(v) => Ok(Val::Float(lw.graph.constant(if text.starts_with('-') { -v } else { v }))),
                        None => {
                            Err(RefError::unsupported_feature(x.span.clone(), &format!("`float(\"{s}\")` (NaN and non-numeric strings have no exact value)")))
                        }
                    },
                },
                Val::Tensor(t) if t.numel() == 1 => Ok(Val::Float(t.elems[0])),
                _ => Ok(Val::Float(lw.operand(&x)?.elems[0])),
            }
        }
        Op::PyBool => {
            let [x] = a.bind(["x"])?;
            let x = required(x, "x", span)?;
            Ok(Val::Bool(lw.truthy(&x.val, &x.span)?))
        }
        Op::PySum => {
            let [items, start] = a.bind(["iterable", "start"])?;
            let items = required(items, "iterable", span)?;
            let Val::Seq(values) = &items.val else {
                return Err(RefError::new(items.span.clone(), format!("`sum` needs a list or tuple, found {}", items.val.kind_name())));
            };
            let mut acc = start.unwrap_or(Arg { val: Val::Int(0), span: span.clone() });
            for v in values.iter() {
                let next = arith::binary(lw, BinOp::Add, &acc, &Arg { val: v.clone(), span: items.span.clone() }, span)?;
                acc = Arg { val: next, span: span.clone() };
            }
            Ok(acc.val)
        }
        Op::PyTuple | Op::PyList => {
            let [x] = a.bind(["iterable"])?;
            let x = required(x, "iterable", span)?;
            match &x.val {
                Val::Seq(_) => Ok(x.val.clone()),
                Val::Tensor(t) if t.ndim() > 0 => Ok(Val::seq(shape_ops::unbind(lw, t, 0).into_iter().map(Val::Tensor).collect())),
                other => Err(RefError::new(x.span.clone(), format!("cannot make a tuple of {}", other.kind_name()))),
            }
        }
        Op::PyEnumerate => {
            let [items, start] = a.bind(["iterable", "start"])?;
            let items = sequence_of(lw, &required(items, "iterable", span)?)?;
            let start = lw.opt_int(&start)?.unwrap_or(0);
            Ok(Val::seq(items.into_iter().enumerate().map(|(i, v)| Val::seq(vec![Val::Int(start + i as i64), v])).collect()))
        }
        Op::PyZip => {
            let ([], rest) = a.bind_rest([], Some("iterables"))?;
            let columns = rest.iter().map(|r| sequence_of(lw, r)).collect::<Result<Vec<_>>>()?;
            let len = columns.iter().map(Vec::len).min().unwrap_or(0);
            Ok(Val::seq((0..len).map(|i| Val::seq(columns.iter().map(|c| c[i].clone()).collect())).collect()))
        }
        _ => Err(RefError::unsupported(span.clone(), &op_name(op))),
    }
}

/// The items of a tuple/list, or the rows of a tensor.
fn sequence_of(lw: &Lowerer<'_>, arg: &Arg) -> Result<Vec<Val>> {
    match &arg.val {
        Val::Seq(items) => Ok(items.to_vec()),
        Val::Tensor(t) if t.ndim() > 0 => Ok(shape_ops::unbind(lw, t, 0).into_iter().map(Val::Tensor).collect()),
        other => Err(RefError::new(arg.span.clone(), format!("expected a tuple, a list or a tensor to iterate over, found {}", other.kind_name()))),
    }
}

fn require_dims(t: &super::Tensor, span: &Span) -> Result<()> {
    if t.ndim() == 0 {
        Err(RefError::new(span.clone(), "this operation needs a tensor with at least one dimension"))
    } else {
        Ok(())
    }
}

/// The `dim` of a reduction: absent, `None` or `()` reduce everything.
fn reduction_dims(lw: &Lowerer<'_>, dim: &Option<Arg>, ndim: usize) -> Result<Option<Vec<usize>>> {
    match dim {
        None => Ok(None),
        Some(Arg { val: Val::None, .. }) => Ok(None),
        Some(Arg { val: Val::Seq(items), .. }) if items.is_empty() => Ok(None),
        Some(d) => lw.dims_of(d, ndim).map(Some),
    }
}

fn normalized_shape(lw: &Lowerer<'_>, arg: &Arg) -> Result<Vec<usize>> {
    lw.ints_of(arg)?.into_iter().map(|s| usize::try_from(s).map_err(|_| RefError::new(arg.span.clone(), format!("negative size {s}")))).collect()
}

/// Sizes as separate ints or one sequence.
fn int_list(lw: &Lowerer<'_>, parts: &[Arg]) -> Result<Vec<i64>> {
    match parts {
        [one] if matches!(one.val, Val::Seq(_)) => lw.ints_of(one),
        many => many.iter().map(|a| lw.int_of(a)).collect(),
    }
}

/// A number (or one-element tensor) as a graph node.
fn scalar_node(lw: &mut Lowerer<'_>, arg: &Arg) -> Result<NodeId> {
    match &arg.val {
        Val::Tensor(t) if t.numel() == 1 => Ok(t.elems[0]),
        _ => Ok(lw.operand(arg)?.elems[0]),
    }
}

fn binary_extremum(lw: &mut Lowerer<'_>, x: &Arg, other: &Arg, is_max: bool, span: &Span) -> Result<Val> {
    let a = lw.operand(x)?;
    let b = lw.operand(other)?;
    let dtype = promoted(&[&a, &b]);
    elementwise(lw, &[&a, &b], dtype, span, |g, v| if is_max { g.max(v[0], v[1]) } else { g.min(v[0], v[1]) })
}

/// Python's `min`/`max` on known numbers.
fn python_extremum(lw: &mut Lowerer<'_>, items: &[Arg], is_max: bool, span: &Span) -> Result<Val> {
    let Some(first) = items.first() else {
        return Err(RefError::new(span.clone(), "`min`/`max` of an empty sequence"));
    };
    let mut best = first.clone();
    for item in &items[1..] {
        let (Some(b), Some(c)) = (arith::number_value(lw, &best), arith::number_value(lw, item)) else {
            return Err(RefError::new(item.span.clone(), "Python `min`/`max` need numbers known at lowering time (use `torch.maximum` for tensors)"));
        };
        if (is_max && c > b) || (!is_max && c < b) {
            best = item.clone();
        }
    }
    if arith::number_value(lw, &best).is_none() {
        return Err(RefError::new(best.span.clone(), "Python `min`/`max` need numbers known at lowering time"));
    }
    Ok(best.val)
}

fn creation(lw: &mut Lowerer<'_>, op: Op, method: bool, a: CallArgs, span: &Span) -> Result<Val> {
    // `x.new_zeros(size)`: the receiver only gives the default dtype.
    let (receiver_dtype, a) = if method {
        let mut a = a;
        let receiver = a.positional.remove(0);
        (Some(lw.tensor_of(&receiver)?.dtype), a)
    } else {
        (None, a)
    };
    let (size, fill, dtype) = if op == Op::Full {
        let [size, fill, dtype] = a.bind(["size", "fill_value", "dtype"])?;
        let size = create::size_of(lw, &[required(size, "size", span)?], span)?;
        (size, Some(required(fill, "fill_value", span)?), dtype)
    } else {
        let mut a = a;
        let dtype = a.take_keyword("dtype");
        let ([], rest) = a.bind_rest([], Some("size"))?;
        (create::size_of(lw, &rest, span)?, None, dtype)
    };
    let explicit = lw.dtype_of(&dtype)?;
    let (dtype, fill_node) = match op {
        Op::Zeros => (explicit.or(receiver_dtype).unwrap_or(DType::F32), lw.graph.zero()),
        Op::Ones => (explicit.or(receiver_dtype).unwrap_or(DType::F32), lw.graph.one()),
        Op::Empty => (explicit.or(receiver_dtype).unwrap_or(DType::F32), NodeId::UNINIT),
        _ => {
            let fill = fill.expect("full has a fill value");
            let inferred = create::dtype_for_value(&fill.val);
            (explicit.or(receiver_dtype).unwrap_or(inferred), scalar_node(lw, &fill)?)
        }
    };
    Ok(Val::Tensor(filled(lw, size, dtype, fill_node, span)?))
}

/// `x.shape`, `x.T`, `x.dtype`, `torch.finfo(d).eps`, `result.values`, ...
pub(crate) fn attribute(lw: &mut Lowerer<'_>, attr: Attr, v: &Arg, span: &Span) -> Result<Val> {
    match (attr, &v.val) {
        (Attr::Shape, Val::Tensor(t)) => Ok(Val::ints(t.shape.iter().copied())),
        (Attr::T, Val::Tensor(t)) => {
            let perm: Vec<usize> = (0..t.ndim()).rev().collect();
            Ok(Val::Tensor(shape_ops::permute(lw, t, &perm)))
        }
        (Attr::MT, Val::Tensor(t)) => {
            if t.ndim() < 2 {
                return Err(RefError::new(span.clone(), "`.mT` needs at least 2 dimensions"));
            }
            Ok(Val::Tensor(shape_ops::transpose(lw, t, t.ndim() - 2, t.ndim() - 1)))
        }
        (Attr::DType, Val::Tensor(t)) => Ok(Val::DType(t.dtype)),
        (Attr::Ndim, Val::Tensor(t)) => Ok(Val::Int(t.ndim() as i64)),
        (Attr::Device, Val::Tensor(_)) => Ok(Val::Device),
        (Attr::Data, Val::Tensor(t)) => Ok(Val::Tensor(t.clone())),
        (Attr::Eps, Val::Finfo(d)) => {
            let eps = d.finfo_eps().expect("finfo is only made for float dtypes");
            Ok(Val::Float(lw.graph.constant(eps)))
        }
        (Attr::Min | Attr::Max, Val::Finfo(d)) => {
            let max = d.finfo_max().expect("finfo is only made for float dtypes");
            Ok(Val::Float(lw.graph.constant(if attr == Attr::Max { max } else { -max })))
        }
        (Attr::Values | Attr::Indices, Val::Seq(items)) if items.len() == 2 => Ok(items[if attr == Attr::Values { 0 } else { 1 }].clone()),
        (_, other) => Err(RefError::new(span.clone(), format!("this attribute is not defined on {}", other.kind_name()))),
    }
}

/// `x.to(...)`: a dtype (positional or `dtype=`), another tensor's dtype, or only a device.
fn to(lw: &mut Lowerer<'_>, a: CallArgs, span: &Span) -> Result<Val> {
    let ([x, dtype], rest) = a.bind_rest(["input", "dtype"], Some("args"))?;
    let t = lw.tensor_of(&required(x, "input", span)?)?;
    let mut target = None;
    for arg in dtype.iter().chain(rest.iter()) {
        match &arg.val {
            Val::DType(d) => target = Some(*d),
            Val::Tensor(o) => target = Some(o.dtype),
            Val::Device | Val::Str(_) | Val::None | Val::Bool(_) => {}
            other => return Err(RefError::new(arg.span.clone(), format!("`to` does not take {}", other.kind_name()))),
        }
    }
    match target {
        Some(d) => Ok(Val::Tensor(ew::cast(lw, &t, d, span))),
        None => Ok(Val::Tensor(t)),
    }
}
