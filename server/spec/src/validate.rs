//! Validation of a kernel's interface against the kernel itself. The parser cannot know the
//! kernel's parameter names; the caller can, and passes them as [`ParamNames`]. Every key that
//! names nothing is an error at its place: a typo must never turn a buggy kernel into
//! `verified`.

use crate::error::SpecError;
use crate::interface::{Dim, KernelSpec, Len, ParamSpec};
use crate::reference::ArgBinding;
use crate::size_expr::SizeExpr;
use crate::values::check_values_fit;

/// The names one PTX parameter goes by (its `.cu` name when known, its PTX name, `param_N`; the
/// first is the one shown and used as canonical), and whether it is a pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamNames {
    pub names: Vec<String>,
    pub is_pointer: bool,
}

impl ParamNames {
    pub fn new(names: &[&str], is_pointer: bool) -> ParamNames {
        ParamNames { names: names.iter().map(|s| s.to_string()).collect(), is_pointer }
    }
}

pub(crate) fn lookup<'p>(params: &'p [ParamNames], name: &str) -> Option<&'p ParamNames> {
    params.iter().find(|p| p.names.iter().any(|n| n == name))
}

fn display_name(p: &ParamNames) -> &str {
    p.names.first().map_or("?", String::as_str)
}

fn list(params: &[ParamNames], pointers: Option<bool>) -> String {
    let names: Vec<&str> = params.iter().filter(|p| pointers.is_none_or(|want| p.is_pointer == want)).map(display_name).collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

impl KernelSpec {
    /// Checks this spec against the kernel's parameters: every key names a parameter, scalar
    /// facts go to scalars and buffer facts to pointers, every name in a size expression is a
    /// scalar parameter, lengths are positive, ranges are ordered, fixed contents fit their type
    /// and length, and the reference binds pointers to tensors and scalars to scalars.
    pub fn validate(&self, params: &[ParamNames]) -> Vec<SpecError> {
        let mut v = Validator { spec: self, params, errors: Vec::new() };
        v.run();
        v.errors
    }
}

struct Validator<'a> {
    spec: &'a KernelSpec,
    params: &'a [ParamNames],
    errors: Vec<SpecError>,
}

impl Validator<'_> {
    fn error(&mut self, rel: &str, message: impl Into<String>) {
        self.errors.push(SpecError::at(&self.spec.origin(rel), message));
    }

    fn run(&mut self) {
        for (i, dims) in [&self.spec.grid, &self.spec.block].into_iter().enumerate() {
            let what = if i == 0 { "grid" } else { "block" };
            for (d, dim) in dims.iter().flatten().enumerate() {
                if let Dim::Expr(e) = dim {
                    self.expr(&format!("{what}[{d}]"), e);
                }
            }
        }
        for (key, ps) in &self.spec.params {
            self.param(key, ps);
        }
        self.reference();
    }

    /// Every name in `e` (written at `rel`) must be a scalar parameter.
    fn expr(&mut self, rel: &str, e: &SizeExpr) {
        let origin = self.spec.origin(rel);
        for (name, span) in e.name_spans() {
            let message = match lookup(self.params, name) {
                Some(p) if !p.is_pointer => continue,
                Some(_) => format!("`{name}` is a pointer; a size expression uses scalar parameters"),
                None => format!("`{name}` is not a scalar parameter of this kernel (scalars: {})", list(self.params, Some(false))),
            };
            let at = if e.span.is_empty() { origin.clone() } else { origin.within(&span) };
            self.errors.push(SpecError::at(&at, message));
        }
    }

    fn param(&mut self, key: &str, ps: &ParamSpec) {
        let rel = format!("params.{}", crate::lark_toml::key_segment(key));
        if lookup(self.params, key).is_none() {
            if let Some(base) = crate::field_key(key).map(|(p, _)| p).or_else(|| crate::named_field_key(key).map(|(p, _)| p)) {
                return self.field(key, base, &rel, ps);
            }
        }
        let Some(p) = lookup(self.params, key) else {
            self.error(&rel, format!("no parameter `{key}` in this kernel (parameters: {})", list(self.params, None)));
            return;
        };
        match ps {
            ParamSpec::Scalar { value, range } => {
                if p.is_pointer && (value.is_some() || range.is_some()) {
                    self.error(&rel, format!("`{key}` is a pointer; `value` and `range` are for scalar parameters"));
                }
                if let Some((lo, hi)) = range {
                    if lo > hi {
                        self.error(&format!("{rel}.range"), format!("a range is [lo, hi] with lo <= hi, found [{lo}, {hi}]"));
                    }
                }
            }
            ParamSpec::Buffer { .. } => {
                if !p.is_pointer {
                    self.error(&rel, format!("`{key}` is a scalar; dtype, len, assume and values are for pointer parameters"));
                    return;
                }
                self.buffer(&rel, ps);
            }
        }
    }

    /// The facts about a buffer (a pointer parameter, or a pointer field of a struct passed by
    /// value): its length and fixed contents agree with each other and with its dtype.
    fn buffer(&mut self, rel: &str, ps: &ParamSpec) {
        let ParamSpec::Buffer { dtype, len, values, assume } = ps else { return };
        if values.is_some() && assume.contains(&crate::Assumption::Zeroed) {
            self.error(&format!("{rel}.assume"), "`zeroed` and fixed `values` both give the contents: keep one");
        }
        let len_key = format!("{rel}.len");
        match len {
            Some(Len::Elements(0)) => self.error(&len_key, "`len` is at least 1, found 0"),
            Some(l @ (Len::Param(_) | Len::Expr(_))) => {
                let e = l.to_expr();
                self.expr(&len_key, &e);
                if let Some((_, hi)) = e.bounds(&|n| self.spec.scalar_range(n)) {
                    if hi < 1 {
                        self.error(&len_key, format!("`len` is at most {hi} for the declared scalars; a buffer has at least 1 element"));
                    }
                }
            }
            _ => {}
        }
        if let Some(values) = values {
            if dtype.is_none() {
                // The contents are integers; how many bytes each takes in memory is the
                // dtype's to say, and guessing it would read the wrong elements.
                self.error(&format!("{rel}.values"), "fixed contents need the buffer's `dtype` (how each element is stored)");
            }
            if let Some(d) = dtype {
                if let Err((_, message)) = check_values_fit(values, *d) {
                    self.error(&format!("{rel}.values"), message);
                }
            }
            if let Some(Len::Elements(n)) = len {
                if *n != values.len() as u64 {
                    self.error(&len_key, format!("`len` is {n} but the fixed contents have {} elements", values.len()));
                }
            }
        }
    }

    /// A field of a struct passed by value (`p+16`, or `p.ncols` where no layout resolved it):
    /// a scalar fact, or a buffer for a pointer field, about a parameter that is not a pointer. Whether the offset lies inside the
    /// struct is the binding's to say (the PTX knows the struct's size).
    fn field(&mut self, key: &str, base: &str, rel: &str, ps: &ParamSpec) {
        let Some(p) = lookup(self.params, base) else {
            self.error(rel, format!("no parameter `{base}` in this kernel (parameters: {})", list(self.params, None)));
            return;
        };
        if p.is_pointer {
            self.error(rel, format!("`{base}` is a pointer; `{key}` names a field of a struct passed by value"));
            return;
        }
        if crate::field_key(key).is_none() {
            self.error(
                rel,
                format!("the fields of `{base}` are named from its struct's definition in the kernel's .cu, which is not at hand here: declare the field by its byte offset (`\"{base}+OFFSET\"`)"),
            );
            return;
        }
        match ps {
            ParamSpec::Scalar { range: Some((lo, hi)), .. } if lo > hi => {
                self.error(&format!("{rel}.range"), format!("a range is [lo, hi] with lo <= hi, found [{lo}, {hi}]"));
            }
            ParamSpec::Scalar { .. } => {}
            // A pointer inside the struct: whether eight bytes at that offset are one is the
            // binding's to say (the PTX reads them).
            ParamSpec::Buffer { .. } => self.buffer(rel, ps),
        }
    }

    fn reference(&mut self) {
        let Some(r) = &self.spec.reference else { return };
        for a in &r.args {
            let rel = format!("reference.args.{}", a.name);
            match &a.binding {
                ArgBinding::Buffer { buffer, .. } => self.must_be(&format!("{rel}.buffer"), buffer, true),
                ArgBinding::Param(p) => self.must_be(&format!("{rel}.param"), p, false),
                ArgBinding::Value(_) => {}
            }
        }
        for (i, o) in r.outputs.iter().enumerate() {
            self.must_be(&format!("reference.outputs[{i}].buffer"), &o.buffer, true);
        }
        for (rel, e) in r.exprs() {
            self.expr(&rel, e);
        }
        for (i, shape) in r.shapes.iter().enumerate() {
            for name in shape.keys() {
                let rel = format!("reference.shapes[{i}].{name}");
                self.must_be(&rel, name, false);
            }
        }
    }

    /// `name` (written at `rel`) must be a pointer parameter (`pointer`) or a scalar one.
    fn must_be(&mut self, rel: &str, name: &str, pointer: bool) {
        let (what, other) = if pointer { ("pointer", "scalar") } else { ("scalar", "pointer") };
        let message = match lookup(self.params, name) {
            Some(p) if p.is_pointer == pointer => return,
            Some(_) => format!("`{name}` is a {other} parameter; expected a {what}"),
            // A pointer inside a struct passed by value (`r.out`, `"r+8"`): whether the kernel
            // reads a pointer there is the equivalence set-up's to say (the PTX knows).
            None if pointer && field_base(name).and_then(|b| lookup(self.params, b)).is_some_and(|p| !p.is_pointer) => return,
            None if field_base(name).is_some() => {
                format!("`{name}` names a field of no struct parameter of this kernel (parameters: {})", list(self.params, None))
            }
            None => format!("`{name}` is not a {what} parameter of this kernel ({what}s: {})", list(self.params, Some(pointer))),
        };
        self.error(rel, message);
    }
}

/// The parameter a field key names (`p` of `p+16` or `p.ncols`).
fn field_base(key: &str) -> Option<&str> {
    crate::field_key(key).map(|(p, _)| p).or_else(|| crate::named_field_key(key).map(|(p, _)| p))
}
