//! Binding call arguments to PyTorch's parameter names, and reading values that must be known
//! at lowering (ints, dims, dtypes, index tensors).

use super::{fmt_shape, Arg, Lowerer, Tensor, Val};
use crate::error::{RefError, Result};
use crate::ir::Span;
use crate::DType;

/// Keyword arguments that do not change values under exact arithmetic.
const IGNORED_KEYWORDS: &[&str] = &["device", "requires_grad", "layout", "pin_memory", "memory_format", "non_blocking", "copy", "_stacklevel"];

pub(crate) struct CallArgs {
    pub positional: Vec<Arg>,
    pub keywords: Vec<(String, Arg)>,
    /// `sum`, `softmax`, ... for messages.
    pub name: String,
}

impl CallArgs {
    /// Removes and returns a keyword argument (for keyword-only parameters next to `*sizes`).
    pub fn take_keyword(&mut self, name: &str) -> Option<Arg> {
        let i = self.keywords.iter().position(|(k, _)| k == name)?;
        Some(self.keywords.remove(i).1)
    }

    /// Binds positional and keyword arguments to `params`; `None` for an absent one.
    pub fn bind<const N: usize>(self, params: [&str; N]) -> Result<[Option<Arg>; N]> {
        let (bound, rest) = self.bind_rest(params, None)?;
        debug_assert!(rest.is_empty());
        Ok(bound)
    }

    /// Like [`bind`](Self::bind), but positional arguments past `params` are collected (for
    /// `x.view(2, 3)`, `x.permute(0, 2, 1)`); `rest_keyword` names the keyword that may carry
    /// them instead (`size=`, `dims=`).
    pub fn bind_rest<const N: usize>(self, params: [&str; N], rest_keyword: Option<&str>) -> Result<([Option<Arg>; N], Vec<Arg>)> {
        let mut bound: [Option<Arg>; N] = std::array::from_fn(|_| None);
        let mut positional = self.positional.into_iter();
        for slot in bound.iter_mut() {
            match positional.next() {
                Some(a) => *slot = Some(a),
                None => break,
            }
        }
        let mut rest: Vec<Arg> = positional.collect();
        if !rest.is_empty() && rest_keyword.is_none() {
            return Err(RefError::new(rest[0].span.clone(), format!("`{}` takes at most {N} positional arguments", self.name)));
        }
        for (name, arg) in self.keywords {
            if Some(name.as_str()) == rest_keyword {
                if !rest.is_empty() {
                    return Err(RefError::new(arg.span, format!("`{}` got `{name}` twice", self.name)));
                }
                rest.push(arg);
                continue;
            }
            match params.iter().position(|p| *p == name) {
                Some(i) if bound[i].is_some() => return Err(RefError::new(arg.span, format!("`{}` got two values for `{name}`", self.name))),
                Some(i) => bound[i] = Some(arg),
                None if IGNORED_KEYWORDS.contains(&name.as_str()) => {}
                None if name == "out" => return Err(RefError::unsupported_feature(arg.span, "`out=` (writing into an existing tensor)")),
                None => return Err(RefError::new(arg.span, format!("`{}` has no parameter `{name}` that LARK knows", self.name))),
            }
        }
        Ok((bound, rest))
    }
}

/// A required argument.
pub(crate) fn required(arg: Option<Arg>, name: &str, call_span: &Span) -> Result<Arg> {
    arg.ok_or_else(|| RefError::new(call_span.clone(), format!("missing the argument `{name}`")))
}

impl Lowerer<'_> {
    pub(crate) fn tensor_of(&self, arg: &Arg) -> Result<Tensor> {
        match &arg.val {
            Val::Tensor(t) => Ok(t.clone()),
            other => Err(RefError::new(arg.span.clone(), format!("expected a tensor, found {}", other.kind_name()))),
        }
    }

    pub(crate) fn int_of(&self, arg: &Arg) -> Result<i64> {
        match &arg.val {
            Val::Int(i) => Ok(*i),
            Val::Bool(b) => Ok(*b as i64),
            Val::Tensor(t) if t.numel() == 1 && t.dtype.is_integral() => self
                .graph
                .as_const(t.elems[0])
                .and_then(crate::graph::as_integer)
                .and_then(|i| i64::try_from(i).ok())
                .ok_or_else(|| RefError::new(arg.span.clone(), "expected an int known at lowering time, found a tensor value that depends on the inputs")),
            other => Err(RefError::new(arg.span.clone(), format!("expected an int, found {}", other.kind_name()))),
        }
    }

    pub(crate) fn opt_int(&self, arg: &Option<Arg>) -> Result<Option<i64>> {
        match arg {
            None => Ok(None),
            Some(Arg { val: Val::None, .. }) => Ok(None),
            Some(a) => self.int_of(a).map(Some),
        }
    }

    pub(crate) fn usize_of(&self, arg: &Arg) -> Result<usize> {
        let i = self.int_of(arg)?;
        usize::try_from(i).map_err(|_| RefError::new(arg.span.clone(), format!("expected a non-negative int, found {i}")))
    }

    /// An int or a sequence of ints.
    pub(crate) fn ints_of(&self, arg: &Arg) -> Result<Vec<i64>> {
        match &arg.val {
            Val::Seq(items) => items.iter().map(|v| self.int_of(&Arg { val: v.clone(), span: arg.span.clone() })).collect(),
            _ => Ok(vec![self.int_of(arg)?]),
        }
    }

    pub(crate) fn bool_of(&self, arg: &Option<Arg>, default: bool) -> Result<bool> {
        match arg {
            None => Ok(default),
            Some(a) => match &a.val {
                Val::Bool(b) => Ok(*b),
                Val::Int(i) => Ok(*i != 0),
                other => Err(RefError::new(a.span.clone(), format!("expected a bool, found {}", other.kind_name()))),
            },
        }
    }

    pub(crate) fn str_of(&self, arg: &Arg) -> Result<String> {
        match &arg.val {
            Val::Str(s) => Ok(s.to_string()),
            other => Err(RefError::new(arg.span.clone(), format!("expected a string, found {}", other.kind_name()))),
        }
    }

    /// A `dtype=` argument (None when absent or `None`).
    pub(crate) fn dtype_of(&self, arg: &Option<Arg>) -> Result<Option<DType>> {
        match arg {
            None => Ok(None),
            Some(Arg { val: Val::None, .. }) => Ok(None),
            Some(Arg { val: Val::DType(d), .. }) => Ok(Some(*d)),
            Some(a) => Err(RefError::new(a.span.clone(), format!("expected a dtype, found {}", a.val.kind_name()))),
        }
    }

    /// A dimension index for a tensor of `ndim` dimensions, negative counting from the end.
    pub(crate) fn dim_of(&self, arg: &Arg, ndim: usize) -> Result<usize> {
        let d = self.int_of(arg)?;
        normalize_dim(d, ndim).ok_or_else(|| dim_error(d, ndim, &arg.span))
    }

    /// One dim or a tuple of dims, normalised, without repeats.
    pub(crate) fn dims_of(&self, arg: &Arg, ndim: usize) -> Result<Vec<usize>> {
        let raw = self.ints_of(arg)?;
        let mut dims = Vec::new();
        for d in raw {
            let n = normalize_dim(d, ndim).ok_or_else(|| dim_error(d, ndim, &arg.span))?;
            if dims.contains(&n) {
                return Err(RefError::new(arg.span.clone(), format!("dim {d} appears more than once")));
            }
            dims.push(n);
        }
        Ok(dims)
    }

    /// The contents of an integer tensor known at lowering (an index); data-dependent indices
    /// are an error naming the expression.
    pub(crate) fn concrete_indices(&self, t: &Tensor, span: &Span) -> Result<Vec<i64>> {
        if !t.dtype.is_integral() {
            return Err(RefError::new(span.clone(), format!("tensors used as indices must be integer or bool tensors, found {}", t.dtype)));
        }
        t.elems
            .iter()
            .map(|&e| {
                self.graph.as_const(e).and_then(crate::graph::as_integer).and_then(|i| i64::try_from(i).ok()).ok_or_else(|| {
                    RefError::new(
                        span.clone(),
                        "this index depends on tensor inputs; indexing, gather and scatter need concrete indices (give the index buffer fixed `values`)",
                    )
                })
            })
            .collect()
    }
}

/// `d` in `[-ndim, ndim)` to `[0, ndim)`; a 0-d tensor accepts dims 0 and -1, as in PyTorch.
pub(crate) fn normalize_dim(d: i64, ndim: usize) -> Option<usize> {
    let n = ndim.max(1) as i64;
    let r = if d < 0 { d + n } else { d };
    (0..n).contains(&r).then_some(r as usize)
}

pub(crate) fn dim_error(d: i64, ndim: usize, span: &Span) -> RefError {
    let n = ndim.max(1) as i64;
    RefError::new(span.clone(), format!("dimension out of range (expected to be in range of [{}, {}], but got {d})", -n, n - 1))
}

/// Message for two shapes that had to be equal.
pub(crate) fn shape_mismatch(what: &str, a: &[usize], b: &[usize], span: &Span) -> RefError {
    RefError::new(span.clone(), format!("{what}: {} and {}", fmt_shape(a), fmt_shape(b)))
}
