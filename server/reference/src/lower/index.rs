//! Indexing: Python subscripts on tuples and tensors (slices with steps, negative indices,
//! `None`, `...`, integer-tensor indices with NumPy's placement rules), index assignment as a
//! scatter, `index_select`, `gather` and `F.embedding`. Tensor indices must be known at lowering.

use super::arith::{broadcast_shapes, broadcast_strides};
use super::{fmt_shape, strides, Arg, Lowerer, Tensor, Val};
use crate::error::{RefError, Result};
use crate::graph::NodeId;
use crate::ir::{IndexItem, Span};
use std::collections::HashSet;

/// One evaluated index item.
enum Idx {
    Int(i64, Span),
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: Option<i64>,
        span: Span,
    },
    NewAxis,
    Ellipsis(Span),
    /// An integer index tensor: its shape and (known) values.
    Tensor {
        shape: Vec<usize>,
        values: Vec<i64>,
        span: Span,
    },
}

impl Idx {
    fn consumes_dim(&self) -> bool {
        matches!(self, Idx::Int(..) | Idx::Slice { .. } | Idx::Tensor { .. })
    }
}

fn eval_items(lw: &mut Lowerer<'_>, items: &[IndexItem]) -> Result<Vec<Idx>> {
    let opt_int = |lw: &mut Lowerer<'_>, e: &Option<crate::ir::Expr>| -> Result<Option<i64>> {
        match e {
            None => Ok(None),
            Some(e) => {
                let v = lw.eval(e)?;
                lw.opt_int(&Some(Arg { val: v, span: e.span.clone() }))
            }
        }
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            IndexItem::Slice { lower, upper, step, span } => {
                let (start, stop, step) = (opt_int(lw, lower)?, opt_int(lw, upper)?, opt_int(lw, step)?);
                out.push(Idx::Slice { start, stop, step, span: span.clone() });
            }
            IndexItem::Expr(e) => {
                let v = lw.eval(e)?;
                out.push(match v {
                    Val::None => Idx::NewAxis,
                    Val::Ellipsis => Idx::Ellipsis(e.span.clone()),
                    Val::Int(i) => Idx::Int(i, e.span.clone()),
                    Val::Bool(_) => return Err(RefError::unsupported_feature(e.span.clone(), "indexing with a Python bool")),
                    Val::Tensor(t) => {
                        if t.dtype == crate::DType::Bool {
                            return Err(RefError::unsupported_feature(e.span.clone(), "boolean mask indexing (its result shape depends on the data)"));
                        }
                        let values = lw.concrete_indices(&t, &e.span)?;
                        Idx::Tensor { shape: t.shape.clone(), values, span: e.span.clone() }
                    }
                    Val::Seq(items) => {
                        let arg = Arg { val: Val::Seq(items.clone()), span: e.span.clone() };
                        let values = lw.ints_of(&arg)?;
                        Idx::Tensor { shape: vec![values.len()], values, span: e.span.clone() }
                    }
                    other => return Err(RefError::new(e.span.clone(), format!("cannot index with {}", other.kind_name()))),
                });
            }
        }
    }
    Ok(out)
}

/// Python's `slice.indices(n)` for a positive step: `(start, count)`.
fn slice_range(start: Option<i64>, stop: Option<i64>, step: i64, n: usize) -> (usize, usize) {
    let n = n as i128;
    let clamp = |v: i64| {
        let v = v as i128;
        if v < 0 {
            (v + n).max(0)
        } else {
            v.min(n)
        }
    };
    let s = start.map_or(0, clamp);
    let e = stop.map_or(n, clamp);
    let step = step as i128;
    let count = if e > s { (e - s + step - 1) / step } else { 0 };
    (s as usize, count as usize)
}

fn normalize_index(i: i64, size: usize, dim: usize, span: &Span) -> Result<usize> {
    let n = size as i64;
    let r = if i < 0 { i + n } else { i };
    if (0..n).contains(&r) {
        Ok(r as usize)
    } else {
        Err(RefError::new(span.clone(), format!("index {i} is out of bounds for dimension {dim} with size {size}")))
    }
}

/// The result of an index expression on a tensor: its shape, the flat source position of every
/// element, and whether it is a view (basic indexing only).
struct Plan {
    shape: Vec<usize>,
    positions: Vec<usize>,
    is_view: bool,
}

enum OutDim {
    /// A dimension from a slice (`src` dim, first index, step) or a new axis (`src` None).
    Basic { size: usize, src: Option<usize>, start: usize, step: usize },
    /// The broadcast dimensions of the advanced indices.
    Advanced,
}

fn plan(lw: &Lowerer<'_>, t: &Tensor, items: Vec<Idx>, span: &Span) -> Result<Plan> {
    let consuming = items.iter().filter(|i| i.consumes_dim()).count();
    let ellipses = items.iter().filter(|i| matches!(i, Idx::Ellipsis(_))).count();
    if ellipses > 1 {
        return Err(RefError::new(span.clone(), "an index can only have a single ellipsis (`...`)"));
    }
    if consuming > t.ndim() {
        return Err(RefError::new(span.clone(), format!("too many indices for a tensor of dimension {}", t.ndim())));
    }
    // Expand `...` (or pad at the end) with full slices.
    let fill = t.ndim() - consuming;
    let full = |span: &Span| Idx::Slice { start: None, stop: None, step: None, span: span.clone() };
    let mut expanded = Vec::new();
    let mut filled = false;
    for item in items {
        if let Idx::Ellipsis(s) = &item {
            expanded.extend((0..fill).map(|_| full(s)));
            filled = true;
        } else {
            expanded.push(item);
        }
    }
    if !filled {
        expanded.extend((0..fill).map(|_| full(span)));
    }
    let has_tensor = expanded.iter().any(|i| matches!(i, Idx::Tensor { .. }));
    let own = strides(&t.shape);
    let mut base_offset = 0usize;
    let mut out_dims: Vec<OutDim> = Vec::new();
    // Advanced indices: (source dim, shape, normalised values).
    let mut advanced: Vec<(usize, Vec<usize>, Vec<usize>)> = Vec::new();
    let mut advanced_at: Vec<usize> = Vec::new();
    // How many output dims precede the first advanced index (where its block goes if adjacent).
    let mut first_advanced_out = 0;
    let mut dim = 0;
    for (position, item) in expanded.into_iter().enumerate() {
        match item {
            Idx::NewAxis => out_dims.push(OutDim::Basic { size: 1, src: None, start: 0, step: 0 }),
            Idx::Slice { start, stop, step, span } => {
                let step = step.unwrap_or(1);
                if step <= 0 {
                    return Err(RefError::new(span, "slice steps must be positive in PyTorch"));
                }
                let (s, count) = slice_range(start, stop, step, t.shape[dim]);
                out_dims.push(OutDim::Basic { size: count, src: Some(dim), start: s, step: step as usize });
                dim += 1;
            }
            Idx::Int(i, span) if !has_tensor => {
                base_offset += normalize_index(i, t.shape[dim], dim, &span)? * own[dim];
                dim += 1;
            }
            Idx::Int(i, span) => {
                if advanced.is_empty() {
                    first_advanced_out = out_dims.len();
                }
                advanced.push((dim, vec![], vec![normalize_index(i, t.shape[dim], dim, &span)?]));
                advanced_at.push(position);
                dim += 1;
            }
            Idx::Tensor { shape, values, span } => {
                let values = values.into_iter().map(|v| normalize_index(v, t.shape[dim], dim, &span)).collect::<Result<Vec<_>>>()?;
                if advanced.is_empty() {
                    first_advanced_out = out_dims.len();
                }
                advanced.push((dim, shape, values));
                advanced_at.push(position);
                dim += 1;
            }
            Idx::Ellipsis(_) => unreachable!("expanded above"),
        }
    }
    let mut advanced_shape: Vec<usize> = Vec::new();
    for (_, shape, _) in &advanced {
        advanced_shape = broadcast_shapes(&advanced_shape, shape).ok_or_else(|| {
            RefError::new(span.clone(), format!("index tensors of shapes {} and {} cannot be broadcast together", fmt_shape(&advanced_shape), fmt_shape(shape)))
        })?;
    }
    if !advanced.is_empty() {
        // NumPy's rule: adjacent advanced indices stay in place, separated ones go first.
        let adjacent = advanced_at.windows(2).all(|w| w[1] == w[0] + 1);
        let insert_at = if adjacent { first_advanced_out } else { 0 };
        out_dims.insert(insert_at, OutDim::Advanced);
    }
    let mut shape = Vec::new();
    for d in &out_dims {
        match d {
            OutDim::Basic { size, .. } => shape.push(*size),
            OutDim::Advanced => shape.extend_from_slice(&advanced_shape),
        }
    }
    let count = lw.check_size(&shape, span)?;
    let out_strides = strides(&shape);
    let adv_count: usize = advanced_shape.iter().product();
    let adv_strides: Vec<Vec<usize>> = advanced.iter().map(|(_, s, _)| broadcast_strides(s, &advanced_shape)).collect();
    let adv_own = strides(&advanced_shape);
    let mut positions = Vec::with_capacity(count);
    for o in 0..count {
        let mut at = base_offset;
        let mut axis = 0;
        for d in &out_dims {
            match d {
                OutDim::Basic { size, src, start, step } => {
                    let i = (o / out_strides[axis]) % size;
                    if let Some(src) = src {
                        at += (start + i * step) * own[*src];
                    }
                    axis += 1;
                }
                OutDim::Advanced => {
                    let mut flat = 0;
                    for (k, &s) in advanced_shape.iter().enumerate() {
                        flat += ((o / out_strides[axis + k]) % s) * adv_own[k];
                    }
                    debug_assert!(flat < adv_count.max(1));
                    for ((src, _, values), bs) in advanced.iter().zip(&adv_strides) {
                        let mut vi = 0;
                        for (k, &s) in advanced_shape.iter().enumerate() {
                            vi += ((flat / adv_own[k]) % s) * bs[k];
                        }
                        at += values[vi] * own[*src];
                    }
                    axis += advanced_shape.len();
                }
            }
        }
        positions.push(at);
    }
    Ok(Plan { shape, positions, is_view: advanced.is_empty() })
}

pub(crate) fn subscript(lw: &mut Lowerer<'_>, base: &Val, index: &[IndexItem], span: &Span) -> Result<Val> {
    match base {
        Val::Seq(items) => sequence_subscript(lw, items, index, span),
        Val::Tensor(t) => {
            let items = eval_items(lw, index)?;
            let p = plan(lw, t, items, span)?;
            let elems: Vec<NodeId> = p.positions.iter().map(|&i| t.elems[i]).collect();
            Ok(Val::Tensor(if p.is_view { lw.view_of(t, p.shape, elems) } else { lw.fresh(p.shape, t.dtype, elems) }))
        }
        other => Err(RefError::new(span.clone(), format!("cannot index {}", other.kind_name()))),
    }
}

fn sequence_subscript(lw: &mut Lowerer<'_>, items: &[Val], index: &[IndexItem], span: &Span) -> Result<Val> {
    let [item] = index else {
        return Err(RefError::new(span.clone(), "tuples take a single index"));
    };
    let n = items.len();
    match eval_items(lw, std::slice::from_ref(item))?.pop() {
        Some(Idx::Int(i, s)) => {
            Ok(items[normalize_index(i, n, 0, &s).map_err(|_| RefError::new(s, format!("tuple index {i} is out of range for length {n}")))?].clone())
        }
        Some(Idx::Slice { start, stop, step, .. }) => {
            let step = step.unwrap_or(1);
            if step == 0 {
                return Err(RefError::new(span.clone(), "slice step cannot be zero"));
            }
            Ok(Val::seq(python_slice(n, start, stop, step).into_iter().map(|i| items[i].clone()).collect()))
        }
        _ => Err(RefError::new(span.clone(), "tuples are indexed by an int or a slice")),
    }
}

/// The indices Python's `seq[start:stop:step]` selects (any non-zero step).
fn python_slice(n: usize, start: Option<i64>, stop: Option<i64>, step: i64) -> Vec<usize> {
    let n = n as i64;
    let (start, stop) = (start.map(|v| v.clamp(-n - 1, n + 1)), stop.map(|v| v.clamp(-n - 1, n + 1)));
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let adjust = |v: i64| if v < 0 { (v + n).max(lo) } else { v.min(hi) };
    let s = start.map_or(if step > 0 { lo } else { hi }, adjust);
    let e = stop.map_or(if step > 0 { hi } else { lo }, adjust);
    let mut out = Vec::new();
    let mut i = s;
    while (step > 0 && i < e) || (step < 0 && i > e) {
        out.push(i as usize);
        match i.checked_add(step) {
            Some(next) => i = next,
            None => break,
        }
    }
    out
}

/// `base[index] = value`: a scatter into `base` (which keeps its storage: the write is in place).
pub(crate) fn assign(lw: &mut Lowerer<'_>, base: &Tensor, index: &[IndexItem], value: &Arg, span: &Span) -> Result<Tensor> {
    let items = eval_items(lw, index)?;
    let p = plan(lw, base, items, span)?;
    let v = lw.operand(value)?;
    if base.dtype.is_integral() && v.dtype.is_float() {
        return Err(RefError::new(value.span.clone(), format!("assigning float values into an {} tensor", base.dtype)));
    }
    if broadcast_shapes(&v.shape, &p.shape).as_deref() != Some(p.shape.as_slice()) {
        return Err(RefError::new(
            value.span.clone(),
            format!("cannot broadcast a value of shape {} to the indexed shape {}", fmt_shape(&v.shape), fmt_shape(&p.shape)),
        ));
    }
    let values = {
        let t = Tensor { shape: v.shape.clone(), dtype: v.dtype, elems: v.elems.clone(), storage: 0 };
        super::shape_ops::strided(&t, &p.shape, &broadcast_strides(&v.shape, &p.shape), 0)
    };
    let mut seen = HashSet::new();
    if !p.is_view {
        for &pos in &p.positions {
            if !seen.insert(pos) {
                return Err(RefError::new(span.clone(), "index assignment writes one element twice (duplicate indices); PyTorch leaves the result undefined"));
            }
        }
    }
    let mut elems = base.elems.to_vec();
    for (&pos, &val) in p.positions.iter().zip(&values) {
        elems[pos] = val;
    }
    Ok(Tensor { shape: base.shape.clone(), dtype: base.dtype, elems: elems.into(), storage: base.storage })
}

/// `torch.index_select(t, dim, index)`.
pub(crate) fn index_select(lw: &mut Lowerer<'_>, t: &Tensor, dim: usize, index: &Tensor, span: &Span) -> Result<Tensor> {
    if index.ndim() > 1 {
        return Err(RefError::new(span.clone(), format!("`index_select` needs a 1-D index, found shape {}", fmt_shape(&index.shape))));
    }
    let values = lw.concrete_indices(index, span)?;
    let size = t.shape.get(dim).copied().unwrap_or(1);
    let rows = values.iter().map(|&v| normalize_index(v, size, dim, span)).collect::<Result<Vec<_>>>()?;
    let mut shape = t.shape.clone();
    if shape.is_empty() {
        return Ok(lw.fresh(vec![], t.dtype, rows.iter().map(|_| t.elems[0]).collect()));
    }
    shape[dim] = rows.len();
    let count = lw.check_size(&shape, span)?;
    let own = strides(&t.shape);
    let out_strides = strides(&shape);
    let elems: Vec<NodeId> = (0..count)
        .map(|o| {
            let mut at = 0;
            for d in 0..shape.len() {
                let i = (o / out_strides[d]) % shape[d];
                at += if d == dim { rows[i] } else { i } * own[d];
            }
            t.elems[at]
        })
        .collect();
    Ok(lw.fresh(shape, t.dtype, elems))
}

/// `torch.gather(t, dim, index)`: `out[i][j] = t[i][index[i][j]]` for `dim = 1`.
pub(crate) fn gather(lw: &mut Lowerer<'_>, t: &Tensor, dim: usize, index: &Tensor, span: &Span) -> Result<Tensor> {
    if index.ndim() != t.ndim() {
        return Err(RefError::new(
            span.clone(),
            format!("`gather` needs an index with as many dimensions as the input: {} and {}", fmt_shape(&t.shape), fmt_shape(&index.shape)),
        ));
    }
    for d in 0..t.ndim() {
        if d != dim && index.shape[d] > t.shape[d] {
            return Err(RefError::new(
                span.clone(),
                format!("`gather` index of shape {} is larger than the input {} in dimension {d}", fmt_shape(&index.shape), fmt_shape(&t.shape)),
            ));
        }
    }
    let values = lw.concrete_indices(index, span)?;
    let own = strides(&t.shape);
    let idx_strides = strides(&index.shape);
    let mut elems = Vec::with_capacity(values.len());
    for (o, &v) in values.iter().enumerate() {
        let mut at = 0;
        for d in 0..index.ndim() {
            let i = (o / idx_strides[d]) % index.shape[d];
            at += if d == dim { normalize_index(v, t.shape[d], d, span)? } else { i } * own[d];
        }
        elems.push(t.elems[at]);
    }
    Ok(lw.fresh(index.shape.clone(), t.dtype, elems))
}

/// `F.embedding(indices, weight)`: rows of `weight`.
pub(crate) fn embedding(lw: &mut Lowerer<'_>, indices: &Tensor, weight: &Tensor, span: &Span) -> Result<Tensor> {
    if weight.ndim() != 2 {
        return Err(RefError::new(span.clone(), format!("`embedding` needs a 2-D weight, found {}", fmt_shape(&weight.shape))));
    }
    let values = lw.concrete_indices(indices, span)?;
    let (rows, width) = (weight.shape[0], weight.shape[1]);
    let mut shape = indices.shape.clone();
    shape.push(width);
    lw.check_size(&shape, span)?;
    let mut elems = Vec::with_capacity(values.len() * width);
    for &v in &values {
        let r = normalize_index(v, rows, 0, span)?;
        elems.extend_from_slice(&weight.elems[r * width..(r + 1) * width]);
    }
    Ok(lw.fresh(shape, weight.dtype, elems))
}
