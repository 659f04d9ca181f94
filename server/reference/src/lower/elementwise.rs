//! Elementwise functions and activations, written as PyTorch defines them, and casts.

use super::arith::{elementwise, map_tensor, promoted, Operand};
use super::{Arg, Lowerer, Tensor, Val, CAST_NOTE};
use crate::error::{RefError, Result};
use crate::graph::{CmpOp, Graph, NodeId, UnaryFn};
use crate::ir::Span;
use crate::DType;
use num_rational::BigRational;
use num_traits::ToPrimitive;

/// The elementwise functions of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    Relu,
    Sigmoid,
    Silu,
    Gelu,
    GeluTanh,
    Selu,
    Softsign,
    Mish,
    Relu6,
    Hardsigmoid,
    Hardswish,
    Logsigmoid,
    Tanhshrink,
    Exp,
    Log,
    Log1p,
    Expm1,
    Sqrt,
    Rsqrt,
    Tanh,
    Erf,
    Sin,
    Cos,
    Abs,
    Neg,
    Square,
    Reciprocal,
    Floor,
    Ceil,
    Trunc,
}

impl Func {
    /// Whether an integer input gives a float result (`torch.exp(int_tensor)` is float).
    fn makes_float(self) -> bool {
        !matches!(self, Func::Relu | Func::Relu6 | Func::Abs | Func::Neg | Func::Square | Func::Floor | Func::Ceil | Func::Trunc)
    }

    fn rounds(self) -> bool {
        matches!(self, Func::Floor | Func::Ceil | Func::Trunc)
    }
}

fn half(g: &mut Graph) -> NodeId {
    g.constant(BigRational::new(1.into(), 2.into()))
}

/// `1 / (1 + exp(-x))`.
pub(crate) fn sigmoid(g: &mut Graph, x: NodeId) -> NodeId {
    let one = g.one();
    let minus_x = g.neg(x);
    let e = g.unary(UnaryFn::Exp, minus_x);
    let denominator = g.add(one, e);
    g.div(one, denominator)
}

/// `log(1 + exp(x))`, softplus without its threshold.
fn log1p_exp(g: &mut Graph, x: NodeId) -> NodeId {
    let one = g.one();
    let e = g.unary(UnaryFn::Exp, x);
    let s = g.add(one, e);
    g.unary(UnaryFn::Log, s)
}

/// `min(max(x, lo), hi)`, as `torch.clamp` (and `hardtanh`, `relu6`) compute it.
fn clamped(g: &mut Graph, x: NodeId, lo: NodeId, hi: NodeId) -> NodeId {
    let above = g.max(x, lo);
    g.min(above, hi)
}

/// `x > 0 ? x * scale : (exp(x * input_scale) - 1) * alpha * scale`: ATen's ELU, which SELU and
/// CELU are too. `None` stands for a factor of 1 (left out rather than multiplied by).
fn elu_like(g: &mut Graph, x: NodeId, alpha: NodeId, scale: Option<NodeId>, input_scale: Option<NodeId>) -> NodeId {
    let zero = g.zero();
    let positive = g.cmp(CmpOp::Gt, x, zero);
    let kept = match scale {
        Some(s) => g.mul(x, s),
        None => x,
    };
    let exponent = match input_scale {
        Some(s) => g.mul(x, s),
        None => x,
    };
    let e = g.unary(UnaryFn::Exp, exponent);
    let one = g.one();
    let expm1 = g.sub(e, one);
    // `alpha * scale` as one constant: kernels fold the two into one literal.
    let factor = match scale {
        Some(s) => g.mul(alpha, s),
        None => alpha,
    };
    let negative = g.mul(expm1, factor);
    g.select(positive, kept, negative)
}

/// SELU's constants, as ATen writes them.
const SELU_ALPHA: &str = "1.6732632423543772848170429916717";
const SELU_SCALE: &str = "1.0507009873554804934193349852946";

/// The constant a decimal written in this crate stands for (`"1.67326..."`, `"-1.0"`).
pub(crate) fn decimal(g: &mut Graph, text: &str) -> NodeId {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let value = crate::front::parse_float_literal(digits).expect("a decimal literal");
    g.constant(if negative { -value } else { value })
}

/// `floor(x)` as `x // 1`.
fn floor(g: &mut Graph, x: NodeId) -> NodeId {
    let one = g.one();
    g.floor_div(x, one)
}

fn ceil(g: &mut Graph, x: NodeId) -> NodeId {
    let minus_x = g.neg(x);
    let f = floor(g, minus_x);
    g.neg(f)
}

/// Rounding toward zero.
pub(crate) fn trunc(g: &mut Graph, x: NodeId) -> NodeId {
    let zero = g.zero();
    let non_negative = g.cmp(CmpOp::Ge, x, zero);
    let down = floor(g, x);
    let up = ceil(g, x);
    g.select(non_negative, down, up)
}

/// One element of `func(x)`.
pub(crate) fn apply(g: &mut Graph, func: Func, x: NodeId) -> NodeId {
    match func {
        Func::Relu => {
            let zero = g.zero();
            g.max(x, zero)
        }
        Func::Sigmoid => sigmoid(g, x),
        Func::Silu => {
            let s = sigmoid(g, x);
            g.mul(x, s)
        }
        // PyTorch: 0.5 * x * (1 + erf(x * M_SQRT1_2)).
        Func::Gelu => {
            let h = half(g);
            let half_x = g.mul(h, x);
            let two = g.int(2);
            let sqrt1_2 = g.unary(UnaryFn::Rsqrt, two);
            let scaled = g.mul(x, sqrt1_2);
            let erf = g.unary(UnaryFn::Erf, scaled);
            let one = g.one();
            let one_plus = g.add(one, erf);
            g.mul(half_x, one_plus)
        }
        // PyTorch: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
        Func::GeluTanh => {
            let h = half(g);
            let half_x = g.mul(h, x);
            let two = g.int(2);
            let pi = g.pi();
            let two_over_pi = g.div(two, pi);
            let beta = g.unary(UnaryFn::Sqrt, two_over_pi);
            let kappa = g.constant(BigRational::new(44715.into(), 1_000_000.into()));
            let cube = g.pow(x, 3);
            let kappa_cube = g.mul(kappa, cube);
            let inner_sum = g.add(x, kappa_cube);
            let inner = g.mul(beta, inner_sum);
            let t = g.unary(UnaryFn::Tanh, inner);
            let one = g.one();
            let one_plus = g.add(one, t);
            g.mul(half_x, one_plus)
        }
        Func::Selu => {
            let (alpha, scale) = (decimal(g, SELU_ALPHA), decimal(g, SELU_SCALE));
            elu_like(g, x, alpha, Some(scale), None)
        }
        // x / (1 + |x|).
        Func::Softsign => {
            let one = g.one();
            let a = g.unary(UnaryFn::Abs, x);
            let d = g.add(one, a);
            g.div(x, d)
        }
        // ATen: x * tanh(log1p(exp(x))) (softplus with no threshold).
        Func::Mish => {
            let sp = log1p_exp(g, x);
            let t = g.unary(UnaryFn::Tanh, sp);
            g.mul(x, t)
        }
        Func::Relu6 => {
            let (zero, six) = (g.zero(), g.int(6));
            clamped(g, x, zero, six)
        }
        // min(max(x + 3, 0), 6) / 6.
        Func::Hardsigmoid | Func::Hardswish => {
            let (zero, three, six) = (g.zero(), g.int(3), g.int(6));
            let shifted = g.add(x, three);
            let c = clamped(g, shifted, zero, six);
            let gate = g.div(c, six);
            if func == Func::Hardswish {
                g.mul(x, gate)
            } else {
                gate
            }
        }
        // log(sigmoid(x)) = -log(1 + exp(-x)).
        Func::Logsigmoid => {
            let minus_x = g.neg(x);
            let sp = log1p_exp(g, minus_x);
            g.neg(sp)
        }
        Func::Tanhshrink => {
            let t = g.unary(UnaryFn::Tanh, x);
            g.sub(x, t)
        }
        Func::Exp => g.unary(UnaryFn::Exp, x),
        Func::Log => g.unary(UnaryFn::Log, x),
        Func::Log1p => {
            let one = g.one();
            let s = g.add(one, x);
            g.unary(UnaryFn::Log, s)
        }
        Func::Expm1 => {
            let e = g.unary(UnaryFn::Exp, x);
            let one = g.one();
            g.sub(e, one)
        }
        Func::Sqrt => g.unary(UnaryFn::Sqrt, x),
        Func::Rsqrt => g.unary(UnaryFn::Rsqrt, x),
        Func::Tanh => g.unary(UnaryFn::Tanh, x),
        Func::Erf => g.unary(UnaryFn::Erf, x),
        Func::Sin => g.unary(UnaryFn::Sin, x),
        Func::Cos => g.unary(UnaryFn::Cos, x),
        Func::Abs => g.unary(UnaryFn::Abs, x),
        Func::Neg => g.neg(x),
        Func::Square => g.pow(x, 2),
        Func::Reciprocal => {
            let one = g.one();
            g.div(one, x)
        }
        Func::Floor => floor(g, x),
        Func::Ceil => ceil(g, x),
        Func::Trunc => trunc(g, x),
    }
}

/// `func` applied to a tensor (elementwise) or to a Python number (`math.exp(v)`).
pub(crate) fn unary_function(lw: &mut Lowerer<'_>, func: Func, arg: &Arg, span: &Span) -> Result<Val> {
    match &arg.val {
        Val::Tensor(t) => {
            if t.dtype == DType::Bool && matches!(func, Func::Neg) {
                return Err(RefError::new(span.clone(), "negation of a bool tensor is not supported by PyTorch"));
            }
            if func.rounds() && t.dtype.is_integral() {
                return Ok(Val::Tensor(t.clone()));
            }
            let dtype = if func.makes_float() && t.dtype.is_integral() { DType::F32 } else { t.dtype };
            let t = t.clone();
            Ok(Val::Tensor(map_tensor(lw, &t, dtype, |g, x| apply(g, func, x))))
        }
        Val::Int(_) | Val::Bool(_) | Val::Float(_) => {
            let x = lw.operand(arg)?.elems[0];
            let is_int = !matches!(arg.val, Val::Float(_));
            let node = apply(&mut lw.graph, func, x);
            if func.rounds() || (is_int && matches!(func, Func::Abs | Func::Neg | Func::Relu | Func::Square)) {
                // math.floor & co. return ints; they need a known value.
                let value = lw.graph.as_const(node).and_then(crate::graph::as_integer).and_then(|v| v.to_i64());
                return value.map(Val::Int).ok_or_else(|| RefError::new(span.clone(), "rounding an irrational number is not decided at lowering time"));
            }
            Ok(Val::Float(node))
        }
        other => Err(RefError::new(arg.span.clone(), format!("expected a tensor or a number, found {}", other.kind_name()))),
    }
}

/// The activations with parameters, each a node of the graph (the caller's Python number or
/// PyTorch's default).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Activation {
    /// `x > 0 ? x : x * negative_slope`.
    LeakyRelu {
        slope: NodeId,
    },
    Elu {
        alpha: NodeId,
    },
    /// ELU of `x / alpha`, scaled back by `alpha`.
    Celu {
        alpha: NodeId,
    },
    /// `x * beta > threshold ? x : log(1 + exp(x * beta)) / beta`.
    Softplus {
        beta: NodeId,
        threshold: NodeId,
    },
    Hardtanh {
        lo: NodeId,
        hi: NodeId,
    },
}

impl Activation {
    fn apply(self, g: &mut Graph, x: NodeId) -> NodeId {
        match self {
            Activation::LeakyRelu { slope } => {
                let zero = g.zero();
                let positive = g.cmp(CmpOp::Gt, x, zero);
                let scaled = g.mul(x, slope);
                g.select(positive, x, scaled)
            }
            Activation::Elu { alpha } => elu_like(g, x, alpha, None, None),
            Activation::Celu { alpha } => {
                let one = g.one();
                let inverse = g.div(one, alpha);
                elu_like(g, x, alpha, None, Some(inverse))
            }
            Activation::Softplus { beta, threshold } => {
                // A beta of 1 (the default) multiplies and divides by nothing.
                let unit = g.as_const(beta).is_some_and(num_traits::One::is_one);
                let scaled = if unit { x } else { g.mul(x, beta) };
                let linear = g.cmp(CmpOp::Gt, scaled, threshold);
                let sp = log1p_exp(g, scaled);
                let smooth = if unit { sp } else { g.div(sp, beta) };
                g.select(linear, x, smooth)
            }
            Activation::Hardtanh { lo, hi } => clamped(g, x, lo, hi),
        }
    }
}

/// `activation(x)` on a float tensor.
pub(crate) fn activation(lw: &mut Lowerer<'_>, activation: Activation, x: &Arg, name: &str, span: &Span) -> Result<Val> {
    let t = lw.tensor_of(x)?;
    if !t.dtype.is_float() {
        return Err(RefError::new(span.clone(), format!("`{name}` takes a floating-point tensor, found {}", t.dtype.name())));
    }
    let dtype = t.dtype;
    Ok(Val::Tensor(map_tensor(lw, &t, dtype, |g, v| activation.apply(g, v))))
}

/// `torch.where(cond, a, b)`.
pub(crate) fn where_(lw: &mut Lowerer<'_>, cond: &Arg, a: &Arg, b: &Arg, span: &Span) -> Result<Val> {
    let c = lw.operand(cond)?;
    let x = lw.operand(a)?;
    let y = lw.operand(b)?;
    let dtype = promoted(&[&x, &y]);
    elementwise(lw, &[&c, &x, &y], dtype, span, |g, v| g.select(v[0], v[1], v[2]))
}

/// `torch.clamp(x, min, max)` = `min(max(x, lo), hi)`.
pub(crate) fn clamp(lw: &mut Lowerer<'_>, x: &Arg, lo: Option<&Arg>, hi: Option<&Arg>, span: &Span) -> Result<Val> {
    let lo = lo.filter(|a| !matches!(a.val, Val::None));
    let hi = hi.filter(|a| !matches!(a.val, Val::None));
    if lo.is_none() && hi.is_none() {
        return Err(RefError::new(span.clone(), "`clamp` needs at least one of `min` and `max`"));
    }
    let input = lw.operand(x)?;
    let mut operands: Vec<Operand> = vec![input];
    for bound in [lo, hi].into_iter().flatten() {
        operands.push(lw.operand(bound)?);
    }
    let refs: Vec<&Operand> = operands.iter().collect();
    let dtype = promoted(&refs);
    let (has_lo, has_hi) = (lo.is_some(), hi.is_some());
    elementwise(lw, &refs, dtype, span, |g, v| match (has_lo, has_hi) {
        (true, true) => clamped(g, v[0], v[1], v[2]),
        (true, false) => g.max(v[0], v[1]),
        _ => g.min(v[0], v[1]),
    })
}

/// `x.masked_fill(mask, value)`: `where(mask, value, x)` with `x`'s shape and dtype.
pub(crate) fn masked_fill(lw: &mut Lowerer<'_>, x: &Tensor, mask: &Arg, value: &Arg, span: &Span) -> Result<Val> {
    let m = lw.operand(mask)?;
    let v = lw.operand(value)?;
    let base = lw.operand(&Arg { val: Val::Tensor(x.clone()), span: span.clone() })?;
    let (shape, elems) = super::arith::zip_map(lw, &[&base, &m, &v], span, |g, e| g.select(e[1], e[2], e[0]))?;
    if shape != x.shape {
        return Err(RefError::new(
            span.clone(),
            format!("the mask of shape {} does not broadcast to the input's shape {}", super::fmt_shape(&m.shape), super::fmt_shape(&x.shape)),
        ));
    }
    Ok(Val::Tensor(lw.fresh(shape, x.dtype, elems)))
}

/// A cast to `dtype`. Float-to-float and int-to-float are the identity on exact values (with a
/// note); float-to-int truncates toward zero; anything-to-bool is `!= 0`.
pub(crate) fn cast(lw: &mut Lowerer<'_>, t: &Tensor, dtype: DType, span: &Span) -> Tensor {
    if t.dtype == dtype {
        return t.clone();
    }
    match (t.dtype.is_float(), dtype) {
        (_, DType::Bool) => {
            let t = t.clone();
            map_tensor(lw, &t, DType::Bool, |g, x| {
                let zero = g.zero();
                g.cmp(CmpOp::Ne, x, zero)
            })
        }
        (true, d) if d.is_integral() => {
            lw.note(span, "float-to-integer casts truncate toward zero; integer overflow is not modelled");
            let t = t.clone();
            map_tensor(lw, &t, dtype, trunc)
        }
        _ => {
            lw.note(span, CAST_NOTE);
            lw.fresh(t.shape.clone(), dtype, t.elems.to_vec())
        }
    }
}
