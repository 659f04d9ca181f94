//! From a symbolic interface to a concrete one: once scalar parameters have values, every size
//! expression becomes a number. Before that, launch dimensions given by expressions still have
//! a sound range (from the ranges of the scalars they use).

use crate::error::SpecError;
use crate::interface::{Dim, DimRange, KernelSpec, Len, ParamSpec, Scalar};
use crate::limits::{check_concrete, Launch};
use crate::reference::ArgBinding;
use crate::size_expr::{EvalError, SizeExpr};
use std::collections::{BTreeMap, BTreeSet};

impl KernelSpec {
    /// The scalar parameters the spec's size expressions use (lengths, launch dimensions,
    /// reference shapes, offsets and strides, and the scalars the reference takes).
    pub fn required_scalars(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for dim in self.grid.iter().chain(&self.block).flatten() {
            if let Dim::Expr(e) = dim {
                out.extend(e.names());
            }
        }
        for p in self.params.values() {
            if let ParamSpec::Buffer { len: Some(l), .. } = p {
                out.extend(l.to_expr().names());
            }
        }
        if let Some(r) = &self.reference {
            for (_, e) in r.exprs() {
                out.extend(e.names());
            }
            for a in &r.args {
                if let ArgBinding::Param(p) = &a.binding {
                    out.insert(p.clone());
                }
            }
        }
        out
    }

    /// The grid as ranges: a size expression covers every value it takes over the declared
    /// values and ranges of its scalars (all of the hardware's range when one is unbounded).
    pub fn grid_range(&self) -> Option<[DimRange; 3]> {
        self.grid.as_ref().map(|g| self.ranges(g, Launch::Grid))
    }

    /// The block as ranges (see [`KernelSpec::grid_range`]).
    pub fn block_range(&self) -> Option<[DimRange; 3]> {
        self.block.as_ref().map(|b| self.ranges(b, Launch::Block))
    }

    fn ranges(&self, dims: &[Dim; 3], kind: Launch) -> [DimRange; 3] {
        let limits = kind.limits();
        std::array::from_fn(|d| match &dims[d] {
            Dim::Range(r) => *r,
            Dim::Expr(e) => {
                let max = limits[d] as i128;
                let (lo, hi) = e.bounds(&|n| self.scalar_range(n)).unwrap_or((1, max));
                // A launch outside the hardware's limits does not happen; clamp to them.
                let (lo, hi) = (lo.clamp(1, max), hi.clamp(1, max));
                DimRange { lo: lo as u64, hi: hi.max(lo) as u64 }
            }
        })
    }

    /// The concrete spec for these scalar values (by the names the spec uses; values the spec
    /// fixes itself count too): launch dimensions, lengths and reference shapes become numbers,
    /// scalars get their values. Errors: a value outside a declared range or unlike a declared
    /// value, an expression that needs a scalar with no value, a launch over CUDA's limits, a
    /// length that is not positive or disagrees with fixed contents.
    pub fn resolve(&self, scalars: &BTreeMap<String, i128>) -> Result<KernelSpec, SpecError> {
        let mut values = self.scalar_values();
        for (name, v) in scalars {
            match self.params.get(name) {
                Some(ParamSpec::Scalar { value: Some(Scalar::Int(fixed)), .. }) if fixed != v => {
                    return Err(SpecError::at(
                        &self.origin(&format!("params.{name}.value")),
                        format!("`{name}` is {v} here, but the interface fixes it to {fixed}"),
                    ));
                }
                Some(ParamSpec::Scalar { range: Some((lo, hi)), .. }) if v < lo || v > hi => {
                    return Err(SpecError::at(&self.origin(&format!("params.{name}.range")), format!("`{name}` = {v} is outside its range [{lo}, {hi}]")));
                }
                Some(ParamSpec::Buffer { .. }) => {
                    return Err(SpecError::at(&self.origin(&format!("params.{name}")), format!("`{name}` is a buffer; it has no scalar value")));
                }
                _ => {}
            }
            values.insert(name.clone(), *v);
        }
        let value_of = |n: &str| values.get(n).copied();
        let eval = |rel: &str, e: &SizeExpr| -> Result<i128, SpecError> {
            e.eval(&value_of).map_err(|err| {
                let origin = self.origin(rel);
                let at = if e.span.is_empty() { origin } else { origin.within(&err.span()) };
                let message = match err {
                    EvalError::Unknown(n, _) => format!("needs a value for `{n}`"),
                    other => other.to_string(),
                };
                SpecError::at(&at, message)
            })
        };
        let mut out = self.clone();
        for (name, v) in scalars {
            let range = match self.params.get(name) {
                Some(ParamSpec::Scalar { range, .. }) => *range,
                _ => None,
            };
            out.params.insert(name.clone(), ParamSpec::Scalar { value: Some(Scalar::Int(*v)), range });
        }
        for (kind, dims) in [(Launch::Grid, &mut out.grid), (Launch::Block, &mut out.block)] {
            let Some(dims) = dims else { continue };
            let mut concrete = [0u64; 3];
            for (d, dim) in dims.iter_mut().enumerate() {
                let rel = format!("{}[{d}]", kind.name());
                let v = match dim {
                    Dim::Range(r) => match r.value() {
                        Some(v) => v as i128,
                        None => {
                            concrete[d] = r.lo;
                            continue;
                        }
                    },
                    Dim::Expr(e) => eval(&rel, e)?,
                };
                if v < 1 || v > u64::MAX as i128 {
                    return Err(SpecError::at(
                        &self.origin(&rel),
                        format!("{} {} is {v} here; a launch dimension is at least 1", kind.name(), ["x", "y", "z"][d]),
                    ));
                }
                *dim = Dim::exact(v as u64);
                concrete[d] = v as u64;
            }
            check_concrete(kind, concrete).map_err(|e| SpecError::at(&self.origin(kind.name()), format!("{} here", e.message)))?;
        }
        for (key, p) in out.params.iter_mut() {
            let ParamSpec::Buffer { len: Some(len), values: fixed, .. } = p else { continue };
            let rel = format!("params.{key}.len");
            let n = match &*len {
                Len::Elements(n) => *n as i128,
                other => eval(&rel, &other.to_expr())?,
            };
            if n < 1 {
                return Err(SpecError::at(&self.origin(&rel), format!("`len` is {n} here; a buffer has at least 1 element")));
            }
            if let Some(v) = fixed {
                if v.len() as i128 != n {
                    return Err(SpecError::at(&self.origin(&rel), format!("`len` is {n} here but the fixed contents have {} elements", v.len())));
                }
            }
            *len = Len::Elements(n as u64);
        }
        if let Some(r) = &mut out.reference {
            for a in &mut r.args {
                if let ArgBinding::Buffer { shape, .. } = &mut a.binding {
                    for (i, e) in shape.iter_mut().enumerate() {
                        *e = SizeExpr::int(eval(&format!("reference.args.{}.shape[{i}]", a.name), e)?);
                    }
                }
            }
            for (o, output) in r.outputs.iter_mut().enumerate() {
                for (i, e) in output.shape.iter_mut().enumerate() {
                    *e = SizeExpr::int(eval(&format!("reference.outputs[{o}].shape[{i}]"), e)?);
                }
                output.offset = SizeExpr::int(eval(&format!("reference.outputs[{o}].offset"), &output.offset)?);
                for (i, e) in output.strides.iter_mut().flatten().enumerate() {
                    *e = SizeExpr::int(eval(&format!("reference.outputs[{o}].strides[{i}]"), e)?);
                }
            }
        }
        Ok(out)
    }
}
