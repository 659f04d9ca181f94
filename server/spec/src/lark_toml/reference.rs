//! `[kernel.X.reference]`: the PyTorch reference and its binding (file, function, args,
//! outputs, shapes to check).

use super::tree::{Ctx, Field};
use crate::error::Origin;
use crate::interface::Scalar;
use crate::reference::{ArgBinding, ReferenceArg, ReferenceOutput, ReferenceSpec};
use crate::size_expr::SizeExpr;
use std::collections::BTreeMap;

const EXPR: &str = "an integer or a size expression";

pub(super) fn reference<'a>(ctx: &mut Ctx<'a>, f: &Field<'a>, origins: &mut BTreeMap<String, Origin>) -> Option<ReferenceSpec> {
    if !ctx.table(f) {
        return None;
    }
    let errors_before = ctx.errors.len();
    ctx.unknown_keys(f, &["file", "function", "args", "outputs", "shapes"], "file, function, args, outputs or shapes");
    let entries = f.entries();
    let field = |k: &str| entries.iter().find(|(key, _)| key == k).map(|(_, f)| f.clone());
    let mut spec = ReferenceSpec { file: Default::default(), function: None, args: Vec::new(), outputs: Vec::new(), shapes: Vec::new() };
    match field("file") {
        Some(file) => {
            if let Some(name) = ctx.string(&file) {
                spec.file = ctx.dir.join(name);
                origins.insert(file.rel.clone(), ctx.value_origin(&file));
            }
        }
        None => ctx.key_error(f, "missing `file` (the Python file of the reference, relative to this lark.toml)"),
    }
    if let Some(func) = field("function") {
        if let Some(name) = ctx.string(&func) {
            if valid_function(name) {
                spec.function = Some(name.to_string());
                origins.insert(func.rel.clone(), ctx.value_origin(&func));
            } else {
                ctx.value_error(&func, format!("expected a function name or `ClassName.forward`, found `{name}`"));
            }
        }
    }
    if let Some(args) = field("args") {
        if ctx.table(&args) {
            for (name, a) in args.entries() {
                if let Some(binding) = arg(ctx, &a, origins) {
                    origins.insert(a.rel.clone(), ctx.key_origin(&a));
                    spec.args.push(ReferenceArg { name, binding });
                }
            }
        }
    }
    if let Some(outputs) = field("outputs") {
        for o in ctx.array(&outputs).unwrap_or_default() {
            if let Some(out) = output(ctx, &o, origins) {
                spec.outputs.push(out);
            }
        }
    }
    if let Some(shapes) = field("shapes") {
        for s in ctx.array(&shapes).unwrap_or_default() {
            if !ctx.table(&s) {
                continue;
            }
            let mut values = BTreeMap::new();
            for (name, v) in s.entries() {
                match v.node.integer() {
                    Some(i) => {
                        values.insert(name, i as i128);
                        origins.insert(v.rel.clone(), ctx.key_origin(&v));
                    }
                    None => ctx.value_error(&v, format!("expected an integer, found {}", v.node.describe())),
                }
            }
            origins.insert(s.rel.clone(), ctx.value_origin(&s));
            spec.shapes.push(values);
        }
    }
    if ctx.errors.len() > errors_before {
        return None;
    }
    origins.insert(f.rel.clone(), ctx.key_origin(f));
    Some(spec)
}

fn valid_function(name: &str) -> bool {
    let ident = |s: &str| !s.is_empty() && !s.starts_with(|c: char| c.is_ascii_digit()) && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    match name.split_once('.') {
        Some((class, method)) => ident(class) && ident(method),
        None => ident(name),
    }
}

/// `{ buffer = "x", shape = [...] }`, `{ param = "eps" }` or `{ value = 64 }`.
fn arg<'a>(ctx: &mut Ctx<'a>, a: &Field<'a>, origins: &mut BTreeMap<String, Origin>) -> Option<ArgBinding> {
    if a.node.table().is_none() {
        ctx.value_error(
            a,
            format!("expected a table like {{ buffer = \"x\", shape = [\"n\"] }}, {{ param = \"n\" }} or {{ value = 1 }}, found {}", a.node.describe()),
        );
        return None;
    }
    if !ctx.unknown_keys(a, &["buffer", "shape", "param", "value"], "buffer and shape, param, or value") {
        return None;
    }
    let entries = a.entries();
    let field = |k: &str| entries.iter().find(|(key, _)| key == k).map(|(_, f)| f.clone());
    let kinds: Vec<&str> = ["buffer", "param", "value"].into_iter().filter(|k| field(k).is_some()).collect();
    if kinds.len() != 1 {
        let message = if kinds.is_empty() {
            "expected one of `buffer` (with `shape`), `param` or `value`".to_string()
        } else {
            format!("an argument is bound once: found both `{}` and `{}`", kinds[0], kinds[1])
        };
        ctx.value_error(a, message);
        return None;
    }
    if kinds[0] != "buffer" {
        if let Some(s) = field("shape") {
            ctx.key_error(&s, format!("`shape` goes with `buffer`, not `{}`", kinds[0]));
            return None;
        }
    }
    match kinds[0] {
        "buffer" => {
            let b = field("buffer")?;
            let buffer = ctx.string(&b)?.to_string();
            origins.insert(b.rel.clone(), ctx.value_origin(&b));
            let Some(s) = field("shape") else {
                ctx.value_error(a, "a buffer argument needs a `shape` (the tensor the buffer is seen as)");
                return None;
            };
            let shape = exprs(ctx, &s, origins)?;
            Some(ArgBinding::Buffer { buffer, shape, dtype: None })
        }
        "param" => {
            let p = field("param")?;
            let name = ctx.string(&p)?.to_string();
            origins.insert(p.rel.clone(), ctx.value_origin(&p));
            Some(ArgBinding::Param(name))
        }
        _ => {
            let v = field("value")?;
            let value = match (v.node.integer(), v.node.float(), v.node.boolean()) {
                (Some(i), _, _) => Scalar::Int(i as i128),
                (_, Some(x), _) => Scalar::Float(x),
                (_, _, Some(b)) => Scalar::Int(b as i128),
                _ => {
                    ctx.value_error(&v, format!("expected a number, found {}", v.node.describe()));
                    return None;
                }
            };
            origins.insert(v.rel.clone(), ctx.value_origin(&v));
            Some(ArgBinding::Value(value))
        }
    }
}

/// An array of size expressions, each with its own origin (`...shape[1]`).
fn exprs<'a>(ctx: &mut Ctx<'a>, f: &Field<'a>, origins: &mut BTreeMap<String, Origin>) -> Option<Vec<SizeExpr>> {
    let items = ctx.array(f)?;
    let mut out = Vec::new();
    let mut ok = true;
    for item in items {
        match ctx.size_expr(&item, EXPR) {
            Some((e, origin)) => {
                origins.insert(item.rel.clone(), origin);
                out.push(e);
            }
            None => ok = false,
        }
    }
    origins.insert(f.rel.clone(), ctx.value_origin(f));
    ok.then_some(out)
}

/// One `[[kernel.X.reference.outputs]]` entry.
fn output<'a>(ctx: &mut Ctx<'a>, o: &Field<'a>, origins: &mut BTreeMap<String, Origin>) -> Option<ReferenceOutput> {
    if !ctx.table(o) || !ctx.unknown_keys(o, &["buffer", "shape", "offset", "strides"], "buffer, shape, offset or strides") {
        return None;
    }
    let entries = o.entries();
    let field = |k: &str| entries.iter().find(|(key, _)| key == k).map(|(_, f)| f.clone());
    let (Some(b), Some(s)) = (field("buffer"), field("shape")) else {
        let missing = if field("buffer").is_none() { "buffer" } else { "shape" };
        ctx.value_error(o, format!("missing `{missing}` (an output is a kernel buffer and the shape it holds)"));
        return None;
    };
    let buffer = ctx.string(&b)?.to_string();
    origins.insert(b.rel.clone(), ctx.value_origin(&b));
    let shape = exprs(ctx, &s, origins)?;
    let offset = match field("offset") {
        Some(f) => {
            let (e, origin) = ctx.size_expr(&f, EXPR)?;
            origins.insert(f.rel.clone(), origin);
            e
        }
        None => SizeExpr::int(0),
    };
    let strides = match field("strides") {
        Some(f) => {
            let strides = exprs(ctx, &f, origins)?;
            if strides.len() != shape.len() {
                ctx.value_error(&f, format!("one stride per dimension: the shape has {} dimensions, found {} strides", shape.len(), strides.len()));
                return None;
            }
            Some(strides)
        }
        None => None,
    };
    origins.insert(o.rel.clone(), ctx.value_origin(o));
    Some(ReferenceOutput { buffer, shape, offset, strides })
}
