//! `[kernel.X.params]`: scalars (`value`, `range`) and buffers (`dtype`, `len`, `assume`,
//! `values`, `values_file`).

use super::tree::{Ctx, Field};
use crate::error::Origin;
use crate::interface::{Assumption, DType, Len, ParamSpec, Scalar, DTYPE_NAMES};
use crate::values::{check_values_fit, read_values_file};
use std::collections::BTreeMap;

const SCALAR_KEYS: [&str; 2] = ["value", "range"];
const BUFFER_KEYS: [&str; 5] = ["dtype", "len", "assume", "values", "values_file"];
const ALL_KEYS: &str = "value, range, dtype, len, assume, values or values_file";

pub(super) fn param<'a>(ctx: &mut Ctx<'a>, p: &Field<'a>, origins: &mut BTreeMap<String, Origin>) -> Option<ParamSpec> {
    if p.node.table().is_none() {
        ctx.value_error(p, format!("expected a table like {{ value = 1 }} or {{ dtype = \"f32\", len = 16 }}, found {}", p.node.describe()));
        return None;
    }
    let entries = p.entries();
    let errors_before = ctx.errors.len();
    ctx.unknown_keys(p, &[&SCALAR_KEYS[..], &BUFFER_KEYS[..]].concat(), ALL_KEYS);
    let scalar_key = entries.iter().find(|(k, _)| SCALAR_KEYS.contains(&k.as_str()));
    let buffer_key = entries.iter().find(|(k, _)| BUFFER_KEYS.contains(&k.as_str()));
    if let (Some((s, _)), Some((b, bf))) = (scalar_key, buffer_key) {
        ctx.key_error(bf, format!("a parameter is a scalar or a buffer: `{s}` is for scalars, `{b}` for buffers"));
        return None;
    }
    if entries.is_empty() {
        ctx.value_error(p, format!("an empty parameter table says nothing (expected {ALL_KEYS})"));
        return None;
    }
    if ctx.errors.len() > errors_before {
        return None;
    }
    let field = |k: &str| entries.iter().find(|(key, _)| key == k).map(|(_, f)| f.clone());
    let spec = if buffer_key.is_some() { buffer(ctx, &field, origins) } else { scalar(ctx, &field, origins) };
    if spec.is_some() {
        origins.insert(p.rel.clone(), ctx.key_origin(p));
    }
    spec
}

/// The fields of a by-value struct parameter written as a table of fields (`p.ncols = { value =
/// 1024 }`, which TOML reads as `p = { ncols = { value = 1024 } }`): a table none of whose keys
/// is a parameter key and all of whose entries are tables.
pub(super) fn struct_fields<'a>(p: &Field<'a>) -> Option<Vec<(String, Field<'a>)>> {
    p.node.table()?;
    let entries = p.entries();
    let all_keys = [&SCALAR_KEYS[..], &BUFFER_KEYS[..]].concat();
    let is_fields = !entries.is_empty() && entries.iter().all(|(k, f)| !all_keys.contains(&k.as_str()) && f.node.table().is_some());
    is_fields.then_some(entries)
}

fn scalar<'a>(ctx: &mut Ctx<'a>, field: &dyn Fn(&str) -> Option<Field<'a>>, origins: &mut BTreeMap<String, Origin>) -> Option<ParamSpec> {
    let errors_before = ctx.errors.len();
    let mut value = None;
    if let Some(f) = field("value") {
        let n = &f.node;
        value = match (n.integer(), n.float(), n.boolean()) {
            (Some(i), _, _) => Some(Scalar::Int(i as i128)),
            (_, Some(x), _) => Some(Scalar::Float(x)),
            (_, _, Some(b)) => Some(Scalar::Int(b as i128)),
            _ => {
                ctx.value_error(&f, format!("expected a number, found {}", n.describe()));
                None
            }
        };
        origins.insert(f.rel.clone(), ctx.value_origin(&f));
    }
    let mut range = None;
    if let Some(f) = field("range") {
        range = int_range(ctx, &f);
        origins.insert(f.rel.clone(), ctx.value_origin(&f));
    }
    if let (Some(Scalar::Int(v)), Some((lo, hi))) = (value, range) {
        if v < lo || v > hi {
            let f = field("value")?;
            ctx.value_error(&f, format!("value {v} is outside the declared range [{lo}, {hi}]"));
        }
    }
    (ctx.errors.len() == errors_before).then_some(ParamSpec::Scalar { value, range })
}

/// `[lo, hi]` of integers with lo <= hi.
fn int_range<'a>(ctx: &mut Ctx<'a>, f: &Field<'a>) -> Option<(i128, i128)> {
    let Some(items) = f.elements() else {
        ctx.value_error(f, format!("expected [lo, hi], found {}", f.node.describe()));
        return None;
    };
    if items.len() != 2 {
        ctx.value_error(f, format!("expected [lo, hi], found {} elements", items.len()));
        return None;
    }
    let mut bounds = [0i128; 2];
    for (i, b) in items.iter().enumerate() {
        match b.node.integer() {
            Some(v) => bounds[i] = v as i128,
            None => {
                ctx.value_error(b, format!("range bounds are integers, found {}", b.node.describe()));
                return None;
            }
        }
    }
    if bounds[0] > bounds[1] {
        ctx.value_error(f, format!("a range is [lo, hi] with lo <= hi, found [{}, {}]", bounds[0], bounds[1]));
        return None;
    }
    Some((bounds[0], bounds[1]))
}

fn buffer<'a>(ctx: &mut Ctx<'a>, field: &dyn Fn(&str) -> Option<Field<'a>>, origins: &mut BTreeMap<String, Origin>) -> Option<ParamSpec> {
    let errors_before = ctx.errors.len();
    let mut dtype = None;
    if let Some(f) = field("dtype") {
        if let Some(s) = ctx.string(&f) {
            dtype = DType::parse(s);
            if dtype.is_none() {
                ctx.value_error(&f, format!("unknown dtype `{s}` (expected {DTYPE_NAMES})"));
            }
        }
        origins.insert(f.rel.clone(), ctx.value_origin(&f));
    }
    let mut len = None;
    if let Some(f) = field("len") {
        if let Some((e, origin)) = ctx.size_expr(&f, "an integer or a size expression") {
            match e.as_int() {
                Some(n) if n < 1 => ctx.value_error(&f, format!("`len` is at least 1, found {n}")),
                _ => {
                    len = Some(Len::from_expr(e));
                    origins.insert(f.rel.clone(), origin);
                }
            }
        }
    }
    let mut assume = Vec::new();
    if let Some(f) = field("assume") {
        if let Some(items) = ctx.array(&f) {
            for item in items {
                if let Some(s) = ctx.string(&item) {
                    match parse_assumption(s) {
                        Ok(a) => assume.push(a),
                        Err(m) => ctx.value_error(&item, m),
                    }
                }
            }
        }
        origins.insert(f.rel.clone(), ctx.value_origin(&f));
    }
    let values = fixed_values(ctx, field, dtype, origins);
    if let (Some(v), Some(Len::Elements(n))) = (&values, &len) {
        if v.len() as u64 != *n {
            let f = field("len")?;
            ctx.value_error(&f, format!("`len` is {n} but the fixed contents have {} elements", v.len()));
        }
    }
    // Fixed contents give the length when `len` does not.
    if let (Some(v), None) = (&values, &len) {
        len = Some(Len::Elements(v.len() as u64));
        let key = field("values").or_else(|| field("values_file")).map(|f| (f.rel.clone(), ctx.value_origin(&f)));
        if let Some((rel, origin)) = key {
            let len_key = format!("{}.len", rel.rsplit_once('.').map_or("", |(p, _)| p));
            origins.insert(len_key, origin);
        }
    }
    (ctx.errors.len() == errors_before).then_some(ParamSpec::Buffer { dtype, len, assume, values })
}

/// `values = [...]` or `values_file = "x.json"` (not both), checked against `dtype`.
fn fixed_values<'a>(
    ctx: &mut Ctx<'a>,
    field: &dyn Fn(&str) -> Option<Field<'a>>,
    dtype: Option<DType>,
    origins: &mut BTreeMap<String, Origin>,
) -> Option<Vec<i128>> {
    let (inline, file) = (field("values"), field("values_file"));
    if let (Some(_), Some(f)) = (&inline, &file) {
        ctx.key_error(f, "give the contents once: `values` or `values_file`, not both");
        return None;
    }
    let (f, values) = if let Some(f) = inline {
        let mut out = Vec::new();
        flatten_toml(ctx, &f, &mut out)?;
        (f, out)
    } else if let Some(f) = file {
        let name = ctx.string(&f)?;
        let path = ctx.dir.join(name);
        match read_values_file(&path) {
            Ok(v) => (f, v),
            Err(Ok(in_file)) => {
                ctx.errors.push(in_file);
                return None;
            }
            Err(Err(message)) => {
                ctx.value_error(&f, message);
                return None;
            }
        }
    } else {
        return None;
    };
    if values.is_empty() {
        ctx.value_error(&f, "fixed contents are empty");
        return None;
    }
    if let Some(d) = dtype {
        if let Err((_, message)) = check_values_fit(&values, d) {
            ctx.value_error(&f, message);
            return None;
        }
    }
    origins.insert(f.rel.clone(), ctx.value_origin(&f));
    Some(values)
}

fn flatten_toml<'a>(ctx: &mut Ctx<'a>, f: &Field<'a>, out: &mut Vec<i128>) -> Option<()> {
    if let Some(items) = f.elements() {
        for item in items {
            flatten_toml(ctx, &item, out)?;
        }
        return Some(());
    }
    match f.node.integer() {
        Some(v) => {
            out.push(v as i128);
            Some(())
        }
        None => {
            ctx.value_error(f, format!("expected an integer, found {}", f.node.describe()));
            None
        }
    }
}

pub(crate) fn parse_assumption(s: &str) -> Result<Assumption, String> {
    let t = s.trim();
    if t == "injective" {
        return Ok(Assumption::Injective);
    }
    if t == "zeroed" {
        return Ok(Assumption::Zeroed);
    }
    if let Some(args) = t.strip_prefix("in_range(").and_then(|r| r.strip_suffix(')')) {
        let parts: Vec<&str> = args.split(',').map(str::trim).collect();
        if let [lo, hi] = parts[..] {
            let lo: i64 = lo.parse().map_err(|_| format!("expected an integer bound, found `{lo}`"))?;
            let hi: i64 = hi.parse().map_err(|_| format!("expected an integer bound, found `{hi}`"))?;
            if lo >= hi {
                return Err(format!("in_range(lo, hi) is half-open and needs lo < hi, found in_range({lo}, {hi})"));
            }
            return Ok(Assumption::InRange(lo, hi));
        }
    }
    Err(format!("unknown assumption `{t}` (expected \"injective\", \"in_range(lo, hi)\" or \"zeroed\")"))
}
