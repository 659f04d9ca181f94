//! Contractions: `matmul`/`@`, `mm`, `bmm`, `einsum`, `F.linear`. Each output element is a left
//! fold over the contracted index in increasing order: `((a0*b0 + a1*b1) + a2*b2) ...`.

use super::arith::{broadcast_shapes, broadcast_strides, Operand};
use super::{fmt_shape, strides, Lowerer, Tensor, Val};
use crate::dtype::{result_type, Priority};
use crate::error::{RefError, Result};
use crate::graph::NodeId;
use crate::ir::Span;
use std::collections::HashMap;

fn dtype_of(a: &Tensor, b: &Tensor) -> crate::DType {
    result_type(&[(a.dtype, Priority::Dimensioned), (b.dtype, Priority::Dimensioned)])
}

/// `torch.matmul` with PyTorch's rules: 1-D operands are promoted (and the added dimension
/// removed), batch dimensions broadcast.
pub(crate) fn matmul(lw: &mut Lowerer<'_>, a: &Tensor, b: &Tensor, span: &Span) -> Result<Val> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(RefError::new(span.clone(), "both arguments to matmul need at least 1 dimension"));
    }
    let a_shape: Vec<usize> = if a.ndim() == 1 { vec![1, a.shape[0]] } else { a.shape.clone() };
    let b_shape: Vec<usize> = if b.ndim() == 1 { vec![b.shape[0], 1] } else { b.shape.clone() };
    let (m, k) = (a_shape[a_shape.len() - 2], a_shape[a_shape.len() - 1]);
    let (k2, n) = (b_shape[b_shape.len() - 2], b_shape[b_shape.len() - 1]);
    if k != k2 {
        return Err(RefError::new(
            span.clone(),
            format!("cannot multiply shapes {} and {} (inner sizes {k} and {k2} differ)", fmt_shape(&a.shape), fmt_shape(&b.shape)),
        ));
    }
    let a_batch = &a_shape[..a_shape.len() - 2];
    let b_batch = &b_shape[..b_shape.len() - 2];
    let batch = broadcast_shapes(a_batch, b_batch)
        .ok_or_else(|| RefError::new(span.clone(), format!("cannot broadcast the batch dimensions {} and {}", fmt_shape(a_batch), fmt_shape(b_batch))))?;
    let mut full: Vec<usize> = batch.clone();
    full.extend([m, n]);
    let count = lw.check_size(&full, span)?;
    let a_bs = broadcast_strides(a_batch, &batch);
    let b_bs = broadcast_strides(b_batch, &batch);
    let batch_count: usize = batch.iter().product();
    let batch_strides = strides(&batch);
    let mut elems = Vec::with_capacity(count);
    let mut terms = Vec::with_capacity(k);
    for bi in 0..batch_count {
        let (mut a_off, mut b_off) = (0, 0);
        for d in 0..batch.len() {
            let idx = (bi / batch_strides[d]) % batch[d];
            a_off += idx * a_bs[d] * m * k;
            b_off += idx * b_bs[d] * k * n;
        }
        for i in 0..m {
            for j in 0..n {
                terms.clear();
                for kk in 0..k {
                    let x = a.elems[a_off + i * k + kk];
                    let y = b.elems[b_off + kk * n + j];
                    terms.push(lw.graph.mul(x, y));
                }
                let s = lw.graph.sum(terms.iter().copied());
                elems.push(s);
            }
        }
    }
    let mut shape = batch;
    if a.ndim() > 1 {
        shape.push(m);
    }
    if b.ndim() > 1 {
        shape.push(n);
    }
    Ok(Val::Tensor(lw.fresh(shape, dtype_of(a, b), elems)))
}

/// `torch.mm` (2-D only) and `torch.bmm` (3-D, equal batch).
pub(crate) fn mm(lw: &mut Lowerer<'_>, a: &Tensor, b: &Tensor, batched: bool, span: &Span) -> Result<Val> {
    let want = if batched { 3 } else { 2 };
    if a.ndim() != want || b.ndim() != want {
        return Err(RefError::new(
            span.clone(),
            format!("`{}` needs {want}-D tensors, found {} and {}", if batched { "bmm" } else { "mm" }, fmt_shape(&a.shape), fmt_shape(&b.shape)),
        ));
    }
    if batched && a.shape[0] != b.shape[0] {
        return Err(RefError::new(span.clone(), format!("`bmm` needs equal batch sizes, found {} and {}", fmt_shape(&a.shape), fmt_shape(&b.shape))));
    }
    matmul(lw, a, b, span)
}

/// `F.linear(x, w, b)` = `x @ w.T + b`.
pub(crate) fn linear(lw: &mut Lowerer<'_>, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, span: &Span) -> Result<Val> {
    if w.ndim() != 2 && w.ndim() != 1 {
        return Err(RefError::new(span.clone(), format!("`linear` needs a 1-D or 2-D weight, found {}", fmt_shape(&w.shape))));
    }
    let wt = super::shape_ops::transpose(lw, w, 0, w.ndim() - 1);
    let product = matmul(lw, x, &wt, span)?;
    match bias {
        None => Ok(product),
        Some(b) => {
            let Val::Tensor(p) = product else { unreachable!("matmul returns a tensor") };
            let po = Operand { shape: p.shape.clone(), elems: p.elems.clone(), dtype: p.dtype, priority: Priority::Dimensioned };
            let bo = Operand { shape: b.shape.clone(), elems: b.elems.clone(), dtype: b.dtype, priority: Priority::Dimensioned };
            super::arith::elementwise(lw, &[&po, &bo], dtype_of(&p, b), span, |g, v| g.add(v[0], v[1]))
        }
    }
}

/// Rewrites `...` into fresh index letters. The ellipsis must cover the same shape in every
/// operand that has one (broadcasting inside `...` is refused); without `->`, its dimensions
/// lead the output, as in PyTorch.
fn expand_ellipsis(equation: &str, operands: &[Tensor], span: &Span) -> Result<String> {
    let (inputs, output) = match equation.split_once("->") {
        Some((i, o)) => (i, Some(o)),
        None => (equation, None),
    };
    let specs: Vec<&str> = inputs.split(',').collect();
    let used: Vec<char> = equation.chars().filter(|c| c.is_ascii_alphabetic()).collect();
    let fresh: Vec<char> = ('A'..='Z').chain('a'..='z').filter(|c| !used.contains(c)).collect();
    let mut ellipsis_shape: Option<Vec<usize>> = None;
    let mut rewritten = Vec::new();
    for (spec, t) in specs.iter().zip(operands) {
        let Some((before, after)) = spec.split_once("...") else {
            rewritten.push(spec.to_string());
            continue;
        };
        let named = before.len() + after.len();
        if named > t.ndim() {
            return Err(RefError::new(span.clone(), format!("einsum operand `{spec}` names more dimensions than its shape {} has", fmt_shape(&t.shape))));
        }
        let covered = t.shape[before.len()..t.ndim() - after.len()].to_vec();
        match &ellipsis_shape {
            Some(shape) if *shape != covered => {
                return Err(RefError::unsupported_feature(
                    span.clone(),
                    &format!("broadcasting inside an einsum `...` ({} and {})", fmt_shape(shape), fmt_shape(&covered)),
                ));
            }
            _ => ellipsis_shape = Some(covered.clone()),
        }
        if covered.len() > fresh.len() {
            return Err(RefError::new(span.clone(), "too many dimensions under an einsum `...`"));
        }
        let letters: String = fresh[..covered.len()].iter().collect();
        rewritten.push(format!("{before}{letters}{after}"));
    }
    let letters: String = fresh[..ellipsis_shape.map_or(0, |s| s.len())].iter().collect();
    let output = match output {
        Some(o) => o.replace("...", &letters),
        None => {
            // Implicit output: the ellipsis dims, then the letters that appear once, sorted.
            let joined: String = specs.join("");
            let mut once: Vec<char> = used.iter().copied().filter(|c| joined.matches(*c).count() == 1).collect();
            once.sort_unstable();
            once.dedup();
            format!("{letters}{}", once.into_iter().collect::<String>())
        }
    };
    Ok(format!("{}->{output}", rewritten.join(",")))
}

/// `torch.einsum(equation, *operands)` for plain contractions: every index letter has one
/// size, output letters are distinct; repeated letters in one operand take a diagonal.
pub(crate) fn einsum(lw: &mut Lowerer<'_>, equation: &str, operands: &[Tensor], span: &Span) -> Result<Val> {
    let err = |m: String| RefError::new(span.clone(), m);
    let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let equation = if equation.contains("...") { expand_ellipsis(&equation, operands, span)? } else { equation };
    let (inputs, output) = match equation.split_once("->") {
        Some((i, o)) => (i.to_string(), Some(o.to_string())),
        None => (equation.clone(), None),
    };
    let input_specs: Vec<Vec<char>> = inputs.split(',').map(|s| s.chars().collect()).collect();
    if input_specs.len() != operands.len() {
        return Err(err(format!("the einsum equation names {} operands, {} were given", input_specs.len(), operands.len())));
    }
    let mut sizes: HashMap<char, usize> = HashMap::new();
    let mut order: Vec<char> = Vec::new();
    for (spec, t) in input_specs.iter().zip(operands) {
        if spec.len() != t.ndim() {
            return Err(err(format!(
                "einsum operand `{}` has {} dimensions, its shape is {}",
                spec.iter().collect::<String>(),
                spec.len(),
                fmt_shape(&t.shape)
            )));
        }
        for (&c, &s) in spec.iter().zip(&t.shape) {
            if !c.is_ascii_alphabetic() {
                return Err(err(format!("invalid einsum index `{c}`")));
            }
            match sizes.get(&c) {
                Some(&prev) if prev != s => return Err(err(format!("einsum index `{c}` has sizes {prev} and {s}"))),
                Some(_) => {}
                None => {
                    sizes.insert(c, s);
                    order.push(c);
                }
            }
        }
    }
    let output: Vec<char> = match output {
        Some(o) => o.chars().collect(),
        None => {
            let mut once: Vec<char> = order.iter().copied().filter(|c| input_specs.iter().flatten().filter(|d| *d == c).count() == 1).collect();
            once.sort_unstable();
            once
        }
    };
    for (i, c) in output.iter().enumerate() {
        if !sizes.contains_key(c) {
            return Err(err(format!("einsum output index `{c}` does not appear in the inputs")));
        }
        if output[..i].contains(c) {
            return Err(RefError::unsupported_feature(span.clone(), "a repeated index in the einsum output"));
        }
    }
    let summed: Vec<char> = order.iter().copied().filter(|c| !output.contains(c)).collect();
    let out_shape: Vec<usize> = output.iter().map(|c| sizes[c]).collect();
    let sum_shape: Vec<usize> = summed.iter().map(|c| sizes[c]).collect();
    let count = lw.check_size(&out_shape, span)?;
    let sum_count: usize = sum_shape.iter().product();
    // For each operand, the stride each letter contributes.
    let letter_strides: Vec<HashMap<char, usize>> = input_specs
        .iter()
        .zip(operands)
        .map(|(spec, t)| {
            let own = strides(&t.shape);
            let mut m: HashMap<char, usize> = HashMap::new();
            for (d, &c) in spec.iter().enumerate() {
                *m.entry(c).or_insert(0) += own[d];
            }
            m
        })
        .collect();
    let out_strides = strides(&out_shape);
    let sum_strides = strides(&sum_shape);
    let mut elems = Vec::with_capacity(count);
    let mut terms: Vec<NodeId> = Vec::with_capacity(sum_count);
    for o in 0..count {
        let mut base = vec![0usize; operands.len()];
        for (d, c) in output.iter().enumerate() {
            let idx = (o / out_strides[d]) % out_shape[d];
            for (k, ls) in letter_strides.iter().enumerate() {
                base[k] += idx * ls.get(c).copied().unwrap_or(0);
            }
        }
        terms.clear();
        for s in 0..sum_count {
            let mut at = base.clone();
            for (d, c) in summed.iter().enumerate() {
                let idx = (s / sum_strides[d]) % sum_shape[d];
                for (k, ls) in letter_strides.iter().enumerate() {
                    at[k] += idx * ls.get(c).copied().unwrap_or(0);
                }
            }
            let factors: Vec<NodeId> = operands.iter().zip(&at).map(|(t, &i)| t.elems[i]).collect();
            let product = lw.graph.fold(factors, crate::graph::Graph::mul).expect("einsum has operands");
            terms.push(product);
        }
        let s = lw.graph.sum(terms.iter().copied());
        elems.push(s);
    }
    let dtype = result_type(&operands.iter().map(|t| (t.dtype, Priority::Dimensioned)).collect::<Vec<_>>());
    Ok(Val::Tensor(lw.fresh(out_shape, dtype, elems)))
}
