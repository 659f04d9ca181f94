//! `lark.toml`: the interface file (see the README, "The interface file").
//!
//! ```toml
//! [kernel.rmsnorm]
//! grid = ["rows", 1, 1]             # a number, a [lo, hi] range or a size expression per dimension
//! block = [256, 1, 1]
//! [kernel.rmsnorm.params]
//! x = { dtype = "f32", len = "rows * cols" }
//! rows = { range = [1, 64] }
//! slots = { dtype = "i64", len = 4, values = [3, 1, 0, 2] }
//! [kernel.rmsnorm.reference]
//! file = "rmsnorm_ref.py"
//! ```
//!
//! Every key keeps its place: errors name the file, line, column and key path, and the parsed
//! [`KernelSpec`]s record the [`Origin`](crate::Origin) of every fact.

mod params;
mod reference;
mod tree;

use crate::error::SpecError;
use crate::interface::{Dim, DimRange, Interface, KernelSpec};
use crate::limits::{check_launch, Launch};
pub(crate) use params::parse_assumption;
pub(crate) use tree::key_segment;
use tree::{Ctx, Field, Node};

/// Parses a `lark.toml`. `file` is its path: `values_file` and the reference's `file` are
/// resolved relative to its directory. The first error is returned; see
/// [`parse_lark_toml_recovering`] for all of them.
pub fn parse_lark_toml(file: &str, text: &str) -> Result<Interface, SpecError> {
    let (iface, mut errors) = parse_lark_toml_recovering(file, text);
    if errors.is_empty() {
        Ok(iface)
    } else {
        Err(errors.swap_remove(0))
    }
}

/// Parses a `lark.toml`, returning every error found and the interface without the entries that
/// had errors (for an editor, which shows all problems at once).
pub fn parse_lark_toml_recovering(file: &str, text: &str) -> (Interface, Vec<SpecError>) {
    let mut ctx = Ctx::new(file, text);
    let doc = match toml_edit::ImDocument::parse(text) {
        Ok(doc) => doc,
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            let (line, column) = ctx.lines.line_col(span.start);
            // toml_edit puts what it expected on a second line: "invalid array\nexpected `]`".
            let message: Vec<&str> = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            let message = lowercase_first(message.join("; ").trim_end_matches('.'));
            return (Interface::default(), vec![SpecError { file: file.to_string(), line, column, span: Some(span), key: String::new(), message }]);
        }
    };
    let root = Field { path: String::new(), rel: String::new(), key_span: None, node: Node::Table(doc.as_table()) };
    let mut out = Interface::default();
    for (key, field) in root.entries() {
        if key != "kernel" {
            ctx.key_error(&field, format!("unknown key `{key}` (expected `kernel`)"));
            continue;
        }
        if !ctx.table(&field) {
            continue;
        }
        for (name, section) in field.entries() {
            if !ctx.table(&section) {
                continue;
            }
            let errors_before = ctx.errors.len();
            let spec = parse_kernel(&mut ctx, &section);
            if ctx.errors.len() == errors_before {
                out.kernels.insert(name, spec);
            }
        }
    }
    (out, ctx.errors)
}

fn lowercase_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn parse_kernel<'a>(ctx: &mut Ctx<'a>, section: &Field<'a>) -> KernelSpec {
    let mut spec = KernelSpec::default();
    // Keys inside the kernel are relative to it.
    let section = Field { rel: String::new(), ..section.clone() };
    spec.origins.insert(String::new(), ctx.key_origin(&section));
    for (key, f) in section.entries() {
        match key.as_str() {
            "grid" => spec.grid = launch(ctx, &f, Launch::Grid, &mut spec.origins),
            "block" => spec.block = launch(ctx, &f, Launch::Block, &mut spec.origins),
            "dynamic_shared_bytes" => match f.node.integer() {
                Some(n) if n >= 0 => {
                    spec.dynamic_shared_bytes = Some(n as u64);
                    spec.origins.insert(f.rel.clone(), ctx.value_origin(&f));
                }
                Some(n) => ctx.value_error(&f, format!("expected a non-negative integer, found {n}")),
                None => ctx.value_error(&f, format!("expected a non-negative integer, found {}", f.node.describe())),
            },
            "params" => {
                if ctx.table(&f) {
                    for (name, p) in f.entries() {
                        // `p.ncols = { value = 1024 }` (a dotted key) is a table of fields.
                        if let Some(fields) = params::struct_fields(&p) {
                            for (field, fp) in fields {
                                if let Some(ps) = params::param(ctx, &fp, &mut spec.origins) {
                                    let key = format!("{name}.{field}");
                                    // Its facts are found under the key as one name (`params."p.ncols"`).
                                    spec.move_param_origins(&fp.rel, &key);
                                    spec.params.insert(key, ps);
                                }
                            }
                        } else if let Some(ps) = params::param(ctx, &p, &mut spec.origins) {
                            spec.params.insert(name, ps);
                        }
                    }
                }
            }
            "reference" => spec.reference = reference::reference(ctx, &f, &mut spec.origins),
            other => ctx.key_error(&f, format!("unknown key `{other}` (expected grid, block, dynamic_shared_bytes, params or reference)")),
        }
    }
    spec
}

const DIM_EXPECTED: &str = "a positive integer, a [lo, hi] range or a size expression";

/// `grid`/`block`: 1 to 3 dimensions, each a number, a `[lo, hi]` range or a size expression.
fn launch<'a>(ctx: &mut Ctx<'a>, f: &Field<'a>, kind: Launch, origins: &mut std::collections::BTreeMap<String, crate::Origin>) -> Option<[Dim; 3]> {
    let Some(items) = f.elements() else {
        ctx.value_error(f, format!("expected an array of 1 to 3 dimensions, found {}", f.node.describe()));
        return None;
    };
    if items.is_empty() || items.len() > 3 {
        ctx.value_error(f, format!("expected 1 to 3 dimensions, found {}", items.len()));
        return None;
    }
    let mut dims = [Dim::exact(1), Dim::exact(1), Dim::exact(1)];
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let dim = if let Some(range) = item.elements() {
            range_dim(ctx, item, &range)
        } else if item.node.integer().is_some() || item.node.str().is_some() {
            match ctx.size_expr(item, DIM_EXPECTED) {
                Some((e, origin)) => match e.as_int() {
                    Some(v) if v >= 1 && v <= u64::MAX as i128 => Some(Dim::exact(v as u64)),
                    Some(v) => {
                        ctx.value_error(item, format!("a launch dimension is at least 1, found {v}"));
                        None
                    }
                    None => {
                        origins.insert(item.rel.clone(), origin);
                        Some(Dim::Expr(e))
                    }
                },
                None => None,
            }
        } else {
            ctx.value_error(item, format!("expected {DIM_EXPECTED}, found {}", item.node.describe()));
            None
        };
        match dim {
            Some(d) => dims[i] = d,
            None => ok = false,
        }
    }
    if !ok {
        return None;
    }
    let problems = check_launch(kind, &dims);
    for p in &problems {
        match p.dim.and_then(|d| items.get(d)) {
            Some(item) => ctx.value_error(item, p.message.clone()),
            None => ctx.value_error(f, p.message.clone()),
        }
    }
    if !problems.is_empty() {
        return None;
    }
    origins.insert(f.rel.clone(), ctx.value_origin(f));
    Some(dims)
}

fn range_dim<'a>(ctx: &mut Ctx<'a>, item: &Field<'a>, range: &[Field<'a>]) -> Option<Dim> {
    let bounds: Vec<Option<i64>> = range.iter().map(|b| b.node.integer()).collect();
    match bounds[..] {
        [Some(lo), Some(hi)] if lo >= 1 && lo <= hi => Some(Dim::Range(DimRange { lo: lo as u64, hi: hi as u64 })),
        [Some(lo), Some(hi)] if lo >= 1 => {
            ctx.value_error(item, format!("a range is [lo, hi] with lo <= hi, found [{lo}, {hi}]"));
            None
        }
        [Some(lo), Some(_)] => {
            ctx.value_error(&range[0], format!("a launch dimension is at least 1, found {lo}"));
            None
        }
        _ if range.len() == 2 => {
            let bad = range.iter().find(|b| b.node.integer().is_none()).unwrap_or(item);
            ctx.value_error(bad, format!("range bounds are integers, found {}", bad.node.describe()));
            None
        }
        _ => {
            ctx.value_error(item, format!("a range is [lo, hi], found {} elements", range.len()));
            None
        }
    }
}

/// `kernel.NAME` as written in a key path.
pub(crate) fn section_path(name: &str) -> String {
    format!("kernel.{}", key_segment(name))
}
