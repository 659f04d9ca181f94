//! Shape and layout operations. Elements are always kept row-major, so a view is a new list of
//! node ids (no nodes are created); views keep the storage of their base.

use super::args::{dim_error, normalize_dim, shape_mismatch};
use super::arith::{broadcast_strides, promoted, Operand};
use super::{fmt_shape, strides, Lowerer, Tensor};
use crate::dtype::Priority;
use crate::error::{RefError, Result};
use crate::graph::NodeId;
use crate::ir::Span;

/// The elements of a strided view of `t`: `out[i] = t.elems[offset + sum(i_d * strides_d)]`.
pub(crate) fn strided(t: &Tensor, shape: &[usize], view_strides: &[usize], offset: usize) -> Vec<NodeId> {
    let count: usize = shape.iter().product();
    let mut out = Vec::with_capacity(count);
    let mut index = vec![0usize; shape.len()];
    let mut at = offset;
    for _ in 0..count {
        out.push(t.elems[at]);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            at += view_strides[d];
            if index[d] < shape[d] {
                break;
            }
            at -= view_strides[d] * shape[d];
            index[d] = 0;
        }
    }
    out
}

/// `t.view(shape)` / `t.reshape(shape)`, with one `-1` inferred.
pub(crate) fn reshape(lw: &Lowerer<'_>, t: &Tensor, sizes: &[i64], span: &Span) -> Result<Tensor> {
    let invalid =
        || RefError::new(span.clone(), format!("shape [{}] is invalid for an input of shape {} ({} elements)", join(sizes), fmt_shape(&t.shape), t.numel()));
    let mut inferred = None;
    let mut known = 1usize;
    for (i, &s) in sizes.iter().enumerate() {
        match s {
            -1 if inferred.is_none() => inferred = Some(i),
            s if s >= 0 => known = known.checked_mul(s as usize).ok_or_else(invalid)?,
            _ => return Err(invalid()),
        }
    }
    let mut shape: Vec<usize> = sizes.iter().map(|&s| s.max(0) as usize).collect();
    if let Some(i) = inferred {
        if known == 0 || !t.numel().is_multiple_of(known) {
            return Err(invalid());
        }
        shape[i] = t.numel() / known;
    } else if known != t.numel() {
        return Err(invalid());
    }
    lw.check_size(&shape, span)?;
    Ok(Tensor { shape, dtype: t.dtype, elems: t.elems.clone(), storage: t.storage })
}

fn join(sizes: &[i64]) -> String {
    sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
}

/// `t.permute(perm)`.
pub(crate) fn permute(lw: &Lowerer<'_>, t: &Tensor, perm: &[usize]) -> Tensor {
    let own = strides(&t.shape);
    let shape: Vec<usize> = perm.iter().map(|&p| t.shape[p]).collect();
    let view_strides: Vec<usize> = perm.iter().map(|&p| own[p]).collect();
    let elems = strided(t, &shape, &view_strides, 0);
    lw.view_of(t, shape, elems)
}

pub(crate) fn transpose(lw: &Lowerer<'_>, t: &Tensor, a: usize, b: usize) -> Tensor {
    if t.ndim() < 2 {
        return t.clone();
    }
    let mut perm: Vec<usize> = (0..t.ndim()).collect();
    perm.swap(a, b);
    permute(lw, t, &perm)
}

/// Validates a permutation given by the user.
pub(crate) fn check_permutation(dims: &[i64], ndim: usize, span: &Span) -> Result<Vec<usize>> {
    if dims.len() != ndim {
        return Err(RefError::new(span.clone(), format!("permute needs {ndim} dims, found {}", dims.len())));
    }
    let mut perm = Vec::new();
    for &d in dims {
        let n = normalize_dim(d, ndim).ok_or_else(|| dim_error(d, ndim, span))?;
        if perm.contains(&n) {
            return Err(RefError::new(span.clone(), format!("dim {d} appears more than once in the permutation")));
        }
        perm.push(n);
    }
    Ok(perm)
}

pub(crate) fn unsqueeze(t: &Tensor, dim: i64, span: &Span) -> Result<Tensor> {
    let d = normalize_dim(dim, t.ndim() + 1).ok_or_else(|| dim_error(dim, t.ndim() + 1, span))?;
    let mut shape = t.shape.clone();
    shape.insert(d, 1);
    Ok(Tensor { shape, dtype: t.dtype, elems: t.elems.clone(), storage: t.storage })
}

/// `t.squeeze()` / `t.squeeze(dims)`: drops the given (or all) dimensions of size 1.
pub(crate) fn squeeze(t: &Tensor, dims: Option<&[usize]>) -> Tensor {
    let shape: Vec<usize> = t.shape.iter().enumerate().filter(|&(i, &s)| !(s == 1 && dims.is_none_or(|d| d.contains(&i)))).map(|(_, &s)| s).collect();
    Tensor { shape, dtype: t.dtype, elems: t.elems.clone(), storage: t.storage }
}

/// `t.expand(sizes)` (`-1` keeps a dimension).
pub(crate) fn expand(lw: &Lowerer<'_>, t: &Tensor, sizes: &[i64], span: &Span) -> Result<Tensor> {
    if sizes.len() < t.ndim() {
        return Err(RefError::new(span.clone(), format!("cannot expand a tensor of shape {} to {} dimensions", fmt_shape(&t.shape), sizes.len())));
    }
    let lead = sizes.len() - t.ndim();
    let mut shape = Vec::with_capacity(sizes.len());
    for (i, &s) in sizes.iter().enumerate() {
        let own = if i >= lead { Some(t.shape[i - lead]) } else { None };
        let size = match (s, own) {
            (-1, Some(o)) => o,
            (s, Some(o)) if s >= 0 && (o == s as usize || o == 1) => s as usize,
            (s, None) if s >= 0 => s as usize,
            _ => return Err(RefError::new(span.clone(), format!("cannot expand shape {} to [{}]", fmt_shape(&t.shape), join(sizes)))),
        };
        shape.push(size);
    }
    lw.check_size(&shape, span)?;
    let elems = strided(t, &shape, &broadcast_strides(&t.shape, &shape), 0);
    Ok(lw.view_of(t, shape, elems))
}

pub(crate) fn flatten(t: &Tensor, start: usize, end: usize) -> Tensor {
    if t.ndim() == 0 {
        return Tensor { shape: vec![1], ..t.clone() };
    }
    let mut shape: Vec<usize> = t.shape[..start].to_vec();
    shape.push(t.shape[start..=end].iter().product());
    shape.extend_from_slice(&t.shape[end + 1..]);
    Tensor { shape, dtype: t.dtype, elems: t.elems.clone(), storage: t.storage }
}

/// Elements `start, start + step, ...` (`len` of them) along `dim`, as a view.
pub(crate) fn slice_dim(lw: &Lowerer<'_>, t: &Tensor, dim: usize, start: usize, len: usize, step: usize) -> Tensor {
    let own = strides(&t.shape);
    let mut shape = t.shape.clone();
    shape[dim] = len;
    let mut view_strides = own.clone();
    view_strides[dim] = own[dim] * step;
    let elems = if len == 0 { Vec::new() } else { strided(t, &shape, &view_strides, start * own[dim]) };
    lw.view_of(t, shape, elems)
}

/// `t.narrow(dim, start, length)`.
pub(crate) fn narrow(lw: &Lowerer<'_>, t: &Tensor, dim: usize, start: i64, length: i64, span: &Span) -> Result<Tensor> {
    let size = t.shape[dim] as i64;
    let start = if start < 0 { start + size } else { start };
    if start < 0 || length < 0 || start + length > size {
        return Err(RefError::new(span.clone(), format!("narrow({dim}, {start}, {length}) is out of range for a dimension of size {size}")));
    }
    Ok(slice_dim(lw, t, dim, start as usize, length as usize, 1))
}

/// Pieces of `sizes` along `dim` (for `split`, `chunk`).
pub(crate) fn split_sizes(lw: &Lowerer<'_>, t: &Tensor, dim: usize, sizes: &[usize]) -> Vec<Tensor> {
    let mut start = 0;
    sizes
        .iter()
        .map(|&len| {
            let piece = slice_dim(lw, t, dim, start, len, 1);
            start += len;
            piece
        })
        .collect()
}

/// `t.chunk(chunks, dim)`: pieces of `ceil(n / chunks)`, the last one smaller, possibly fewer
/// than `chunks` pieces (PyTorch's rule).
pub(crate) fn chunk(lw: &Lowerer<'_>, t: &Tensor, chunks: usize, dim: usize) -> Vec<Tensor> {
    let n = t.shape[dim];
    let size = n.div_ceil(chunks.max(1));
    if size == 0 {
        return vec![t.clone(); chunks.min(1)];
    }
    let mut sizes = vec![size; n / size];
    if !n.is_multiple_of(size) {
        sizes.push(n % size);
    }
    split_sizes(lw, t, dim, &sizes)
}

pub(crate) fn unbind(lw: &Lowerer<'_>, t: &Tensor, dim: usize) -> Vec<Tensor> {
    (0..t.shape[dim])
        .map(|i| {
            let piece = slice_dim(lw, t, dim, i, 1, 1);
            squeeze(&piece, Some(&[dim]))
        })
        .collect()
}

/// `torch.cat(tensors, dim)`.
pub(crate) fn cat(lw: &mut Lowerer<'_>, tensors: &[Tensor], dim: i64, span: &Span) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        return Err(RefError::new(span.clone(), "`cat` needs at least one tensor"));
    };
    let ndim = first.ndim();
    if ndim == 0 {
        return Err(RefError::new(span.clone(), "zero-dimensional tensors cannot be concatenated"));
    }
    let d = normalize_dim(dim, ndim).ok_or_else(|| dim_error(dim, ndim, span))?;
    let mut shape = first.shape.clone();
    shape[d] = 0;
    for t in tensors {
        let same = t.ndim() == ndim && t.shape.iter().enumerate().all(|(i, &s)| i == d || s == first.shape[i]);
        if !same {
            return Err(shape_mismatch(&format!("`cat` along dim {d} needs equal sizes elsewhere"), &first.shape, &t.shape, span));
        }
        shape[d] += t.shape[d];
    }
    let count = lw.check_size(&shape, span)?;
    let outer: usize = shape[..d].iter().product();
    let mut elems = Vec::with_capacity(count);
    for o in 0..outer {
        for t in tensors {
            let block: usize = t.shape[d..].iter().product();
            elems.extend_from_slice(&t.elems[o * block..(o + 1) * block]);
        }
    }
    let operands: Vec<Operand> =
        tensors.iter().map(|t| Operand { shape: t.shape.clone(), elems: t.elems.clone(), dtype: t.dtype, priority: Priority::Dimensioned }).collect();
    let dtype = promoted(&operands.iter().collect::<Vec<_>>());
    Ok(lw.fresh(shape, dtype, elems))
}

/// `torch.stack(tensors, dim)`.
pub(crate) fn stack(lw: &mut Lowerer<'_>, tensors: &[Tensor], dim: i64, span: &Span) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        return Err(RefError::new(span.clone(), "`stack` needs at least one tensor"));
    };
    for t in tensors {
        if t.shape != first.shape {
            return Err(shape_mismatch("`stack` needs tensors of equal shape", &first.shape, &t.shape, span));
        }
    }
    // Unsqueezing normalises `dim` against ndim + 1, which is the ndim `cat` then sees.
    let unsqueezed = tensors.iter().map(|t| unsqueeze(t, dim, span)).collect::<Result<Vec<_>>>()?;
    cat(lw, &unsqueezed, dim, span)
}

/// `t.repeat(sizes)`: tiles the tensor.
pub(crate) fn repeat(lw: &mut Lowerer<'_>, t: &Tensor, reps: &[usize], span: &Span) -> Result<Tensor> {
    if reps.len() < t.ndim() {
        return Err(RefError::new(span.clone(), "`repeat` needs at least as many sizes as the tensor has dimensions"));
    }
    let lead = reps.len() - t.ndim();
    let src_shape: Vec<usize> = std::iter::repeat_n(1, lead).chain(t.shape.iter().copied()).collect();
    let shape: Vec<usize> = src_shape.iter().zip(reps).map(|(s, r)| s.saturating_mul(*r)).collect();
    let count = lw.check_size(&shape, span)?;
    let src_strides = strides(&src_shape);
    let out_strides = strides(&shape);
    let mut elems = Vec::with_capacity(count);
    for i in 0..count {
        let mut at = 0;
        for d in 0..shape.len() {
            let idx = (i / out_strides[d]) % shape[d];
            at += (idx % src_shape[d]) * src_strides[d];
        }
        elems.push(t.elems[at]);
    }
    Ok(lw.fresh(shape, t.dtype, elems))
}

/// `torch.tril` / `torch.triu` on the last two dimensions.
pub(crate) fn triangle(lw: &mut Lowerer<'_>, t: &Tensor, diagonal: i64, lower: bool, span: &Span) -> Result<Tensor> {
    if t.ndim() < 2 {
        return Err(RefError::new(span.clone(), "tril/triu need a tensor of at least 2 dimensions"));
    }
    let (rows, cols) = (t.shape[t.ndim() - 2], t.shape[t.ndim() - 1]);
    let zero = lw.graph.zero();
    let elems: Vec<NodeId> = t
        .elems
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            let (r, c) = (((i / cols) % rows) as i64, (i % cols) as i64);
            let keep = if lower { c - r <= diagonal } else { c - r >= diagonal };
            if keep {
                e
            } else {
                zero
            }
        })
        .collect();
    Ok(lw.fresh(t.shape.clone(), t.dtype, elems))
}
