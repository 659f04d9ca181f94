//! Reductions, scans, softmax and normalisations. Every reduction is a left fold in index order
//! (`sum = ((x0 + x1) + x2) ...`), shared between the outputs that use it.

use super::{fmt_shape, strides, Lowerer, Tensor};
use crate::error::{RefError, Result};
use crate::graph::{CmpOp, Graph, NodeId, UnaryFn};
use crate::ir::Span;
use crate::DType;
use num_bigint::BigInt;
use num_rational::BigRational;

/// The positions of a reduction: for each output (the kept dimensions, row-major), the flat
/// positions of its group (the reduced dimensions, row-major).
struct Groups {
    bases: Vec<usize>,
    offsets: Vec<usize>,
}

fn groups(shape: &[usize], dims: &[usize]) -> Groups {
    let own = strides(shape);
    let mut bases = vec![0usize];
    let mut offsets = vec![0usize];
    for d in 0..shape.len() {
        let target = if dims.contains(&d) { &mut offsets } else { &mut bases };
        let previous = std::mem::take(target);
        for p in previous {
            for i in 0..shape[d] {
                target.push(p + i * own[d]);
            }
        }
    }
    Groups { bases, offsets }
}

/// The output shape of reducing `dims`.
fn reduced_shape(shape: &[usize], dims: &[usize], keepdim: bool) -> Vec<usize> {
    shape.iter().enumerate().filter_map(|(i, &s)| if dims.contains(&i) { keepdim.then_some(1) } else { Some(s) }).collect()
}

/// Reduces `dims` of `t` (all dims for `None`) with `f` over each group.
pub(crate) fn reduce(
    lw: &mut Lowerer<'_>,
    t: &Tensor,
    dims: Option<Vec<usize>>,
    keepdim: bool,
    dtype: DType,
    mut f: impl FnMut(&mut Graph, &[NodeId]) -> NodeId,
) -> Tensor {
    let dims = dims.unwrap_or_else(|| (0..t.ndim()).collect());
    let g = groups(&t.shape, &dims);
    let mut scratch = Vec::with_capacity(g.offsets.len());
    let mut elems = Vec::with_capacity(g.bases.len());
    for &base in &g.bases {
        scratch.clear();
        scratch.extend(g.offsets.iter().map(|&o| t.elems[base + o]));
        elems.push(f(&mut lw.graph, &scratch));
    }
    lw.fresh(reduced_shape(&t.shape, &dims, keepdim), dtype, elems)
}

/// Computes each lane along `dim` with `f` (which returns one node per lane element).
pub(crate) fn lanes(lw: &mut Lowerer<'_>, t: &Tensor, dim: usize, dtype: DType, mut f: impl FnMut(&mut Graph, &[NodeId]) -> Vec<NodeId>) -> Tensor {
    if t.ndim() == 0 {
        let out = f(&mut lw.graph, &t.elems);
        return lw.fresh(vec![], dtype, out);
    }
    lanes_over(lw, t, &[dim], dtype, f)
}

/// Sums have integer type `i64` for integer and bool inputs.
pub(crate) fn sum_dtype(dtype: DType) -> DType {
    if dtype.is_integral() {
        DType::I64
    } else {
        dtype
    }
}

pub(crate) fn sum(lw: &mut Lowerer<'_>, t: &Tensor, dims: Option<Vec<usize>>, keepdim: bool) -> Tensor {
    reduce(lw, t, dims, keepdim, sum_dtype(t.dtype), |g, xs| g.sum(xs.iter().copied()))
}

pub(crate) fn prod(lw: &mut Lowerer<'_>, t: &Tensor, dims: Option<Vec<usize>>, keepdim: bool) -> Tensor {
    reduce(lw, t, dims, keepdim, sum_dtype(t.dtype), |g, xs| match g.fold(xs.iter().copied(), Graph::mul) {
        Some(p) => p,
        None => g.one(),
    })
}

fn require_float(t: &Tensor, what: &str, span: &Span) -> Result<()> {
    if t.dtype.is_float() {
        Ok(())
    } else {
        Err(RefError::new(span.clone(), format!("`{what}` needs a floating-point input, found {}", t.dtype)))
    }
}

/// `mean = sum / n`.
pub(crate) fn mean(lw: &mut Lowerer<'_>, t: &Tensor, dims: Option<Vec<usize>>, keepdim: bool, span: &Span) -> Result<Tensor> {
    require_float(t, "mean", span)?;
    Ok(reduce(lw, t, dims, keepdim, t.dtype, |g, xs| {
        let s = g.sum(xs.iter().copied());
        let n = g.int(xs.len() as i64);
        g.div(s, n)
    }))
}

/// `var = sum((x - mean)^2) / (n - correction)`; `std = sqrt(var)`.
pub(crate) fn var(lw: &mut Lowerer<'_>, t: &Tensor, dims: Option<Vec<usize>>, correction: i64, keepdim: bool, std: bool, span: &Span) -> Result<Tensor> {
    require_float(t, if std { "std" } else { "var" }, span)?;
    Ok(reduce(lw, t, dims, keepdim, t.dtype, |g, xs| {
        let v = variance(g, xs, correction);
        if std {
            g.unary(UnaryFn::Sqrt, v)
        } else {
            v
        }
    }))
}

fn mean_of(g: &mut Graph, xs: &[NodeId]) -> NodeId {
    let s = g.sum(xs.iter().copied());
    let n = g.int(xs.len() as i64);
    g.div(s, n)
}

fn variance(g: &mut Graph, xs: &[NodeId], correction: i64) -> NodeId {
    let m = mean_of(g, xs);
    let squares: Vec<NodeId> = xs
        .iter()
        .map(|&x| {
            let d = g.sub(x, m);
            g.pow(d, 2)
        })
        .collect();
    let s = g.sum(squares);
    let n = g.int(xs.len() as i64 - correction);
    g.div(s, n)
}

pub(crate) fn amax(lw: &mut Lowerer<'_>, t: &Tensor, dims: Option<Vec<usize>>, keepdim: bool, is_max: bool, span: &Span) -> Result<Tensor> {
    if t.numel() == 0 {
        return Err(RefError::new(span.clone(), "max/min of an empty tensor"));
    }
    Ok(reduce(lw, t, dims, keepdim, t.dtype, |g, xs| g.fold(xs.iter().copied(), if is_max { Graph::max } else { Graph::min }).expect("groups are not empty")))
}

/// The running extremum and the index of its first occurrence, as PyTorch breaks ties.
fn arg_extremum(g: &mut Graph, xs: &[NodeId], is_max: bool) -> (NodeId, NodeId) {
    let mut best = xs[0];
    let mut index = g.zero();
    for (i, &x) in xs.iter().enumerate().skip(1) {
        let better = g.cmp(if is_max { CmpOp::Gt } else { CmpOp::Lt }, x, best);
        let i = g.int(i as i64);
        index = g.select(better, i, index);
        best = if is_max { g.max(best, x) } else { g.min(best, x) };
    }
    (best, index)
}

/// `argmax`/`argmin` over one dim (or the flattened tensor).
pub(crate) fn argmax(lw: &mut Lowerer<'_>, t: &Tensor, dim: Option<usize>, keepdim: bool, is_max: bool, span: &Span) -> Result<Tensor> {
    if t.numel() == 0 {
        return Err(RefError::new(span.clone(), "argmax/argmin of an empty tensor"));
    }
    let dims = dim.map(|d| vec![d]);
    let keepdim = keepdim && dim.is_some();
    Ok(reduce(lw, t, dims, keepdim, DType::I64, |g, xs| arg_extremum(g, xs, is_max).1))
}

/// `torch.max(x, dim)`: the values and the indices.
pub(crate) fn max_with_indices(lw: &mut Lowerer<'_>, t: &Tensor, dim: usize, keepdim: bool, is_max: bool, span: &Span) -> Result<(Tensor, Tensor)> {
    if t.shape.get(dim) == Some(&0) {
        return Err(RefError::new(span.clone(), "max/min over an empty dimension"));
    }
    let mut indices = Vec::new();
    let values = reduce(lw, t, Some(vec![dim]), keepdim, t.dtype, |g, xs| {
        let (best, index) = arg_extremum(g, xs, is_max);
        indices.push(index);
        best
    });
    let index_tensor = lw.fresh(values.shape.clone(), DType::I64, indices);
    Ok((values, index_tensor))
}

pub(crate) fn cumsum(lw: &mut Lowerer<'_>, t: &Tensor, dim: usize) -> Tensor {
    lanes(lw, t, dim, sum_dtype(t.dtype), |g, xs| {
        let mut out = Vec::with_capacity(xs.len());
        for &x in xs {
            let next = match out.last() {
                None => x,
                Some(&acc) => g.add(acc, x),
            };
            out.push(next);
        }
        out
    })
}

/// `softmax = exp(x - max) / sum(exp(x - max))`, and `log_softmax = x - max - log(sum(exp(x - max)))`.
pub(crate) fn softmax(lw: &mut Lowerer<'_>, t: &Tensor, dim: usize, log: bool, span: &Span) -> Result<Tensor> {
    require_float(t, if log { "log_softmax" } else { "softmax" }, span)?;
    if t.numel() == 0 {
        return Ok(t.clone());
    }
    Ok(lanes(lw, t, dim, t.dtype, |g, xs| {
        let m = g.fold(xs.iter().copied(), Graph::max).expect("lanes are not empty");
        let shifted: Vec<NodeId> = xs.iter().map(|&x| g.sub(x, m)).collect();
        let exps: Vec<NodeId> = shifted.iter().map(|&s| g.unary(UnaryFn::Exp, s)).collect();
        let total = g.sum(exps.iter().copied());
        if log {
            let log_total = g.unary(UnaryFn::Log, total);
            shifted.iter().map(|&s| g.sub(s, log_total)).collect()
        } else {
            exps.iter().map(|&e| g.div(e, total)).collect()
        }
    }))
}

/// The trailing dimensions a norm normalises over, checked against `normalized_shape`.
fn norm_dims(t: &Tensor, normalized: &[usize], span: &Span) -> Result<Vec<usize>> {
    let k = normalized.len();
    if k == 0 || k > t.ndim() || t.shape[t.ndim() - k..] != *normalized {
        return Err(RefError::new(
            span.clone(),
            format!("normalized_shape {} does not match the last dimensions of the input of shape {}", fmt_shape(normalized), fmt_shape(&t.shape)),
        ));
    }
    Ok((t.ndim() - k..t.ndim()).collect())
}

fn check_affine(param: Option<&Tensor>, normalized: &[usize], what: &str, span: &Span) -> Result<()> {
    match param {
        Some(p) if p.shape != normalized => {
            Err(RefError::new(span.clone(), format!("{what} of shape {} does not match normalized_shape {}", fmt_shape(&p.shape), fmt_shape(normalized))))
        }
        _ => Ok(()),
    }
}

/// `F.rms_norm`: `x * rsqrt(mean(x^2) + eps) * weight`; `eps = None` is
/// `torch.finfo(x.dtype).eps`.
pub(crate) fn rms_norm(lw: &mut Lowerer<'_>, t: &Tensor, normalized: &[usize], weight: Option<&Tensor>, eps: Option<NodeId>, span: &Span) -> Result<Tensor> {
    require_float(t, "rms_norm", span)?;
    let dims = norm_dims(t, normalized, span)?;
    check_affine(weight, normalized, "weight", span)?;
    let eps = match eps {
        Some(e) => e,
        None => {
            let e = t.dtype.finfo_eps().expect("float dtype");
            lw.graph.constant(e)
        }
    };
    let weight = weight.map(|w| w.elems.clone());
    Ok(lanes_over(lw, t, &dims, t.dtype, |g, xs| {
        let squares: Vec<NodeId> = xs.iter().map(|&x| g.pow(x, 2)).collect();
        let s = g.sum(squares);
        let n = g.int(xs.len() as i64);
        let ms = g.div(s, n);
        let shifted = g.add(ms, eps);
        let r = g.unary(UnaryFn::Rsqrt, shifted);
        xs.iter()
            .enumerate()
            .map(|(j, &x)| {
                let y = g.mul(x, r);
                match &weight {
                    Some(w) => g.mul(y, w[j]),
                    None => y,
                }
            })
            .collect()
    }))
}

/// `F.layer_norm`: `(x - mean) * rsqrt(var + eps) * weight + bias`, biased variance.
pub(crate) fn layer_norm(
    lw: &mut Lowerer<'_>,
    t: &Tensor,
    normalized: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: NodeId,
    span: &Span,
) -> Result<Tensor> {
    require_float(t, "layer_norm", span)?;
    let dims = norm_dims(t, normalized, span)?;
    check_affine(weight, normalized, "weight", span)?;
    check_affine(bias, normalized, "bias", span)?;
    let weight = weight.map(|w| w.elems.clone());
    let bias = bias.map(|b| b.elems.clone());
    Ok(lanes_over(lw, t, &dims, t.dtype, |g, xs| {
        let m = mean_of(g, xs);
        let v = variance(g, xs, 0);
        let shifted = g.add(v, eps);
        let rstd = g.unary(UnaryFn::Rsqrt, shifted);
        xs.iter()
            .enumerate()
            .map(|(j, &x)| {
                let centred = g.sub(x, m);
                let mut y = g.mul(centred, rstd);
                if let Some(w) = &weight {
                    y = g.mul(y, w[j]);
                }
                if let Some(b) = &bias {
                    y = g.add(y, b[j]);
                }
                y
            })
            .collect()
    }))
}

/// Like [`lanes`], over several (trailing) dimensions at once.
fn lanes_over(lw: &mut Lowerer<'_>, t: &Tensor, dims: &[usize], dtype: DType, mut f: impl FnMut(&mut Graph, &[NodeId]) -> Vec<NodeId>) -> Tensor {
    let g = groups(&t.shape, dims);
    let mut elems = vec![NodeId(0); t.numel()];
    let mut scratch = Vec::with_capacity(g.offsets.len());
    for &base in &g.bases {
        scratch.clear();
        scratch.extend(g.offsets.iter().map(|&o| t.elems[base + o]));
        for (k, node) in f(&mut lw.graph, &scratch).into_iter().enumerate() {
            elems[base + g.offsets[k]] = node;
        }
    }
    lw.fresh(t.shape.clone(), dtype, elems)
}

/// A rational constant `n / d`.
pub(crate) fn ratio(n: i64, d: i64) -> BigRational {
    BigRational::new(BigInt::from(n), BigInt::from(d))
}
