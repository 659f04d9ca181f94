//! Writing an interface back as lark.toml, in the canonical form the parser reads: for stubs an
//! editor inserts, and so that every accepted form can be checked to round-trip.

use crate::interface::{Dim, Interface, KernelSpec, Len, ParamSpec, Scalar};
use crate::lark_toml::section_path;
use crate::reference::ArgBinding;
use crate::size_expr::SizeExpr;
use std::fmt::Write;
use std::path::Path;

impl Interface {
    /// The interface as lark.toml text; paths (reference files) are written relative to `dir`,
    /// the directory of the file it will be read from, when they lie under it.
    pub fn to_toml(&self, dir: &Path) -> String {
        let mut out = String::new();
        for (name, spec) in &self.kernels {
            if !out.is_empty() {
                out.push('\n');
            }
            write_kernel(&mut out, &section_path(name), spec, dir);
        }
        out
    }
}

fn write_kernel(out: &mut String, section: &str, k: &KernelSpec, dir: &Path) {
    let _ = writeln!(out, "[{section}]");
    if let Some(g) = &k.grid {
        let _ = writeln!(out, "grid = {}", dims(g));
    }
    if let Some(b) = &k.block {
        let _ = writeln!(out, "block = {}", dims(b));
    }
    if let Some(d) = k.dynamic_shared_bytes {
        let _ = writeln!(out, "dynamic_shared_bytes = {d}");
    }
    if !k.params.is_empty() {
        let _ = writeln!(out, "[{section}.params]");
        for (name, p) in &k.params {
            let _ = writeln!(out, "{} = {{ {} }}", crate::lark_toml::key_segment(name), param(p));
        }
    }
    let Some(r) = &k.reference else { return };
    let _ = writeln!(out, "[{section}.reference]");
    let file = r.file.strip_prefix(dir).unwrap_or(&r.file);
    let _ = writeln!(out, "file = {}", string(&file.display().to_string()));
    if let Some(f) = &r.function {
        let _ = writeln!(out, "function = {}", string(f));
    }
    if !r.args.is_empty() {
        let _ = writeln!(out, "[{section}.reference.args]");
        for a in &r.args {
            let binding = match &a.binding {
                ArgBinding::Buffer { buffer, shape, .. } => format!("buffer = {}, shape = {}", string(buffer), exprs(shape)),
                ArgBinding::Param(p) => format!("param = {}", string(p)),
                ArgBinding::Value(v) => format!("value = {}", scalar(v)),
            };
            let _ = writeln!(out, "{} = {{ {binding} }}", crate::lark_toml::key_segment(&a.name));
        }
    }
    for o in &r.outputs {
        let _ = writeln!(out, "[[{section}.reference.outputs]]");
        let _ = writeln!(out, "buffer = {}", string(&o.buffer));
        let _ = writeln!(out, "shape = {}", exprs(&o.shape));
        if o.offset.as_int() != Some(0) {
            let _ = writeln!(out, "offset = {}", expr(&o.offset));
        }
        if let Some(s) = &o.strides {
            let _ = writeln!(out, "strides = {}", exprs(s));
        }
    }
    for shape in &r.shapes {
        let _ = writeln!(out, "[[{section}.reference.shapes]]");
        for (name, v) in shape {
            let _ = writeln!(out, "{} = {v}", crate::lark_toml::key_segment(name));
        }
    }
}

fn param(p: &ParamSpec) -> String {
    let mut parts = Vec::new();
    match p {
        ParamSpec::Scalar { value, range } => {
            if let Some(v) = value {
                parts.push(format!("value = {}", scalar(v)));
            }
            if let Some((lo, hi)) = range {
                parts.push(format!("range = [{lo}, {hi}]"));
            }
        }
        ParamSpec::Buffer { dtype, len, assume, values } => {
            if let Some(d) = dtype {
                parts.push(format!("dtype = \"{d}\""));
            }
            match len {
                Some(Len::Elements(n)) => parts.push(format!("len = {n}")),
                Some(l) => parts.push(format!("len = {}", expr(&l.to_expr()))),
                None => {}
            }
            if !assume.is_empty() {
                let a: Vec<String> = assume.iter().map(|a| string(&a.to_string())).collect();
                parts.push(format!("assume = [{}]", a.join(", ")));
            }
            if let Some(v) = values {
                let v: Vec<String> = v.iter().map(i128::to_string).collect();
                parts.push(format!("values = [{}]", v.join(", ")));
            }
        }
    }
    parts.join(", ")
}

fn scalar(v: &Scalar) -> String {
    match v {
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) if f.is_nan() => "nan".into(),
        Scalar::Float(f) if f.is_infinite() => if *f > 0.0 { "inf" } else { "-inf" }.into(),
        Scalar::Float(f) => {
            let s = format!("{f:?}");
            if s.contains(['.', 'e', 'E']) {
                s
            } else {
                format!("{s}.0")
            }
        }
    }
}

fn dims(d: &[Dim; 3]) -> String {
    let items: Vec<String> = d
        .iter()
        .map(|x| match x {
            Dim::Range(r) => match r.value() {
                Some(v) => v.to_string(),
                None => format!("[{}, {}]", r.lo, r.hi),
            },
            Dim::Expr(e) => expr(e),
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn expr(e: &SizeExpr) -> String {
    match e.as_int() {
        Some(v) => v.to_string(),
        None => string(&e.to_string()),
    }
}

fn exprs(es: &[SizeExpr]) -> String {
    format!("[{}]", es.iter().map(expr).collect::<Vec<_>>().join(", "))
}

fn string(s: &str) -> String {
    toml_string(s)
}

/// A TOML basic string.
pub(crate) fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
