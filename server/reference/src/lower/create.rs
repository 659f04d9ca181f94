//! Tensor creation: `zeros`, `ones`, `full`, `empty`, `arange`, `*_like`, `torch.tensor`.

use super::{Arg, Lowerer, Tensor, Val};
use crate::error::{RefError, Result};
use crate::graph::NodeId;
use crate::ir::Span;
use crate::DType;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};

/// A tensor of `shape` filled with `fill` (`NodeId::UNINIT` for `empty`).
pub(crate) fn filled(lw: &mut Lowerer<'_>, shape: Vec<usize>, dtype: DType, fill: NodeId, span: &Span) -> Result<Tensor> {
    let count = lw.check_size(&shape, span)?;
    Ok(lw.fresh(shape, dtype, vec![fill; count]))
}

/// A size given as ints (`zeros(2, 3)`) or one sequence (`zeros((2, 3))`, `zeros(x.shape)`).
pub(crate) fn size_of(lw: &Lowerer<'_>, parts: &[Arg], span: &Span) -> Result<Vec<usize>> {
    let raw: Vec<i64> = match parts {
        [one] if matches!(one.val, Val::Seq(_)) => lw.ints_of(one)?,
        many => many.iter().map(|a| lw.int_of(a)).collect::<Result<_>>()?,
    };
    raw.into_iter().map(|s| usize::try_from(s).map_err(|_| RefError::new(span.clone(), format!("negative dimension {s}")))).collect()
}

/// The dtype PyTorch infers for a fill value.
pub(crate) fn dtype_for_value(v: &Val) -> DType {
    match v {
        Val::Bool(_) => DType::Bool,
        Val::Int(_) => DType::I64,
        Val::Tensor(t) => t.dtype,
        _ => DType::F32,
    }
}

/// `torch.arange(start, end, step)`: `ceil((end - start) / step)` values `start + i * step`.
pub(crate) fn arange(lw: &mut Lowerer<'_>, start: &Arg, end: &Arg, step: &Arg, dtype: Option<DType>, span: &Span) -> Result<Tensor> {
    let value = |lw: &Lowerer<'_>, a: &Arg| {
        super::arith::number_value(lw, a)
            .ok_or_else(|| RefError::new(a.span.clone(), format!("expected a number known at lowering time, found {}", a.val.kind_name())))
    };
    let (s, e, d) = (value(lw, start)?, value(lw, end)?, value(lw, step)?);
    if d.is_zero() {
        return Err(RefError::new(step.span.clone(), "`arange` step must be non-zero"));
    }
    let count = ((&e - &s) / &d).ceil();
    let count = if count.is_negative() { 0 } else { count.to_integer().to_usize().ok_or_else(|| RefError::new(span.clone(), "`arange` is too long"))? };
    let all_int = [start, end, step].iter().all(|a| matches!(a.val, Val::Int(_) | Val::Bool(_)));
    let dtype = dtype.unwrap_or(if all_int { DType::I64 } else { DType::F32 });
    lw.check_size(&[count], span)?;
    let elems: Vec<NodeId> = (0..count)
        .map(|i| {
            let v: BigRational = &s + &d * BigRational::from_integer(i.into());
            let v = if dtype.is_integral() { BigRational::from_integer(v.trunc().to_integer()) } else { v };
            lw.graph.constant(v)
        })
        .collect();
    Ok(lw.fresh(vec![count], dtype, elems))
}

/// `torch.tensor(data)` from (nested) lists of known numbers.
pub(crate) fn tensor_literal(lw: &mut Lowerer<'_>, data: &Arg, dtype: Option<DType>) -> Result<Tensor> {
    let mut shape = Vec::new();
    let mut leaves = Vec::new();
    collect_leaves(&data.val, 0, &mut shape, &mut leaves, &data.span)?;
    let inferred = if leaves.iter().any(|v| matches!(v, Val::Float(_))) {
        DType::F32
    } else if leaves.iter().all(|v| matches!(v, Val::Bool(_))) && !leaves.is_empty() {
        DType::Bool
    } else {
        DType::I64
    };
    let dtype = dtype.unwrap_or(inferred);
    let mut elems = Vec::with_capacity(leaves.len());
    for leaf in leaves {
        let node = lw.operand(&Arg { val: leaf, span: data.span.clone() })?.elems[0];
        elems.push(node);
    }
    Ok(lw.fresh(shape, dtype, elems))
}

fn collect_leaves(v: &Val, depth: usize, shape: &mut Vec<usize>, leaves: &mut Vec<Val>, span: &Span) -> Result<()> {
    match v {
        Val::Seq(items) => {
            if shape.len() == depth {
                shape.push(items.len());
            } else if shape.get(depth) != Some(&items.len()) {
                return Err(RefError::new(span.clone(), "`torch.tensor` needs a rectangular nested list"));
            }
            for item in items.iter() {
                collect_leaves(item, depth + 1, shape, leaves, span)?;
            }
            Ok(())
        }
        Val::Int(_) | Val::Float(_) | Val::Bool(_) if shape.len() == depth => {
            leaves.push(v.clone());
            Ok(())
        }
        other => Err(RefError::new(span.clone(), format!("`torch.tensor` needs numbers, found {}", other.kind_name()))),
    }
}
