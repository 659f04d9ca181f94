//! SentryWard's kernel-input JSON (`"schema": "spverify.kernel-input/v1"`), accepted unchanged so
//! its users can switch without rewriting their configs:
//!
//! - `entry`: the kernel (optional when the module has one);
//! - `launch`: `grid_dim`, `block_dim` (required, `[x, y, z]`), `cluster_dim`,
//!   `dynamic_shared_bytes`;
//! - `declarations[]`: `{parameter, type: "pointer" | <PTX scalar type>, object?, name?, space?,
//!   offset?}`;
//! - `arguments[]`: `{parameter, type, value, offset?}` or `{field: <declaration name>, value}`;
//! - `shape_arrays[]`: `{parameter, shapes: [[...], ...], element_type?}`: read-only buffers of
//!   32-bit integers (or `element_type` `s32`, `u32`, `s64`, `u64`) holding those integers (inner
//!   arrays concatenated);
//! - `tma_descriptors`, `assumptions`, `data_branch_loop_iterations`, `address_invariants`,
//!   `branch_decisions`: accepted and not used.
//!
//! A parameter is named by its PTX name or its position (`param_N` in the interface). Every
//! problem is an error at its line, column and JSON path.

use crate::error::{Origin, SpecError};
use crate::interface::{DType, Dim, Interface, KernelSpec, Len, ParamSpec, Scalar};
use crate::json_index::{member_path, JsonDoc};
use crate::limits::{check_launch, Launch};
use serde_json::{Map, Value};

pub const SENTRYWARD_SCHEMA: &str = "spverify.kernel-input/v1";

const TOP_KEYS: [&str; 11] = [
    "schema",
    "entry",
    "launch",
    "declarations",
    "arguments",
    "shape_arrays",
    "tma_descriptors",
    "assumptions",
    "data_branch_loop_iterations",
    "address_invariants",
    "branch_decisions",
];

/// Parses SentryWard's kernel-input JSON. The kernel is `entry`, else `kernel` (`"*"`: every
/// kernel of the module).
pub fn parse_sentryward_json(file: &str, text: &str, kernel: &str) -> Result<Interface, SpecError> {
    let doc = JsonDoc::parse(file, text)?;
    let mut p = Reader { doc: &doc, errors: Vec::new(), spec: KernelSpec::default() };
    let name = p.document(kernel);
    // A duplicated key first (serde_json kept only its last value), then in the order found.
    let errors = doc.duplicate_errors().into_iter().chain(p.errors);
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    let mut out = Interface::default();
    out.kernels.insert(name, p.spec);
    Ok(out)
}

struct Reader<'d, 'a> {
    doc: &'d JsonDoc<'a>,
    errors: Vec<SpecError>,
    spec: KernelSpec,
}

fn kind(v: &Value) -> &'static str {
    crate::values::json_kind(v)
}

impl Reader<'_, '_> {
    fn error(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(self.doc.error(path, message));
    }

    fn origin(&self, path: &str) -> Origin {
        self.doc.origin(path)
    }

    /// The members of an object, after reporting keys not in `allowed`.
    fn object<'v>(&mut self, v: &'v Value, path: &str, allowed: &[&str]) -> Option<&'v Map<String, Value>> {
        let Some(map) = v.as_object() else {
            self.error(path, format!("expected an object, found {}", kind(v)));
            return None;
        };
        for k in map.keys() {
            if !allowed.contains(&k.as_str()) {
                let e = self.doc.key_error(&member_path(path, k), format!("unknown key `{k}` (expected {})", allowed.join(", ")));
                self.errors.push(e);
            }
        }
        Some(map)
    }

    fn array<'v>(&mut self, v: &'v Value, path: &str) -> Option<&'v Vec<Value>> {
        let a = v.as_array();
        if a.is_none() {
            self.error(path, format!("expected an array, found {}", kind(v)));
        }
        a
    }

    fn required<'v>(&mut self, map: &'v Map<String, Value>, parent: &str, key: &str, what: &str) -> Option<&'v Value> {
        let v = map.get(key);
        if v.is_none() {
            self.error(parent, format!("missing `{key}` ({what})"));
        }
        v
    }

    fn document(&mut self, kernel: &str) -> String {
        let root = &self.doc.value;
        let Some(map) = self.object(root, "", &TOP_KEYS) else { return kernel.to_string() };
        match map.get("schema") {
            Some(Value::String(s)) if s == SENTRYWARD_SCHEMA => {}
            Some(Value::String(s)) => self.error("schema", format!("unknown schema `{s}` (expected {SENTRYWARD_SCHEMA})")),
            Some(other) => self.error("schema", format!("expected the string \"{SENTRYWARD_SCHEMA}\", found {}", kind(other))),
            None => self.error("", format!("missing `schema` (expected \"{SENTRYWARD_SCHEMA}\")")),
        }
        let mut name = kernel.to_string();
        match map.get("entry") {
            Some(Value::String(s)) if !s.is_empty() => {
                name = s.clone();
                self.spec.origins.insert(String::new(), self.origin("entry"));
            }
            Some(other) => self.error("entry", format!("expected a kernel name, found {}", kind(other))),
            None => {}
        }
        match map.get("launch") {
            Some(launch) => self.launch(launch),
            None => self.error("", "missing `launch` (with `grid_dim` and `block_dim`)"),
        }
        if let Some(d) = map.get("declarations") {
            for (i, decl) in self.array(d, "declarations").into_iter().flatten().enumerate() {
                self.declaration(decl, &format!("declarations[{i}]"));
            }
        }
        if let Some(a) = map.get("arguments") {
            for (i, arg) in self.array(a, "arguments").into_iter().flatten().enumerate() {
                self.argument(arg, &format!("arguments[{i}]"));
            }
        }
        if let Some(s) = map.get("shape_arrays") {
            for (i, sa) in self.array(s, "shape_arrays").into_iter().flatten().enumerate() {
                self.shape_array(sa, &format!("shape_arrays[{i}]"));
            }
        }
        name
    }

    fn launch(&mut self, launch: &Value) {
        let Some(map) = self.object(launch, "launch", &["grid_dim", "block_dim", "cluster_dim", "dynamic_shared_bytes"]) else { return };
        for (key, kind, field) in [("grid_dim", Launch::Grid, "grid"), ("block_dim", Launch::Block, "block")] {
            let path = format!("launch.{key}");
            let Some(v) = self.required(map, "launch", key, "launch dimensions are required") else { continue };
            if let Some(dims) = self.dims(v, &path) {
                let problems = check_launch(kind, &dims.map(Dim::exact));
                for p in &problems {
                    let at = p.dim.map_or(path.clone(), |d| format!("{path}[{d}]"));
                    self.error(&at, p.message.clone());
                }
                if problems.is_empty() {
                    let dims = dims.map(Dim::exact);
                    self.spec.origins.insert(field.to_string(), self.origin(&path));
                    match kind {
                        Launch::Grid => self.spec.grid = Some(dims),
                        Launch::Block => self.spec.block = Some(dims),
                    }
                }
            }
        }
        if let Some(v) = map.get("cluster_dim") {
            self.dims(v, "launch.cluster_dim");
        }
        if let Some(v) = map.get("dynamic_shared_bytes") {
            match v.as_u64() {
                Some(n) => {
                    self.spec.dynamic_shared_bytes = Some(n);
                    self.spec.origins.insert("dynamic_shared_bytes".into(), self.origin("launch.dynamic_shared_bytes"));
                }
                None => self.error("launch.dynamic_shared_bytes", format!("expected a non-negative integer, found {}", number_or_kind(v))),
            }
        }
    }

    /// `[x, y, z]` (or fewer dimensions, the rest 1) of positive integers.
    fn dims(&mut self, v: &Value, path: &str) -> Option<[u64; 3]> {
        let Some(items) = v.as_array().filter(|a| !a.is_empty() && a.len() <= 3) else {
            self.error(path, format!("expected [x, y, z], found {}", kind(v)));
            return None;
        };
        let mut out = [1u64; 3];
        let mut ok = true;
        for (i, x) in items.iter().enumerate() {
            match x.as_u64() {
                Some(n) if n >= 1 => out[i] = n,
                _ => {
                    self.error(&format!("{path}[{i}]"), format!("expected a positive integer, found {}", number_or_kind(x)));
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// The interface key of a SentryWard parameter reference: the PTX name, or `param_N`.
    fn param_key(&mut self, v: &Value, path: &str) -> Option<String> {
        match v {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) if n.as_u64().is_some() => Some(format!("param_{}", n.as_u64().unwrap_or_default())),
            other => {
                self.error(path, format!("expected a PTX parameter name or a position, found {}", number_or_kind(other)));
                None
            }
        }
    }

    fn zero_offset(&mut self, map: &Map<String, Value>, path: &str) -> bool {
        match map.get("offset") {
            None => true,
            Some(v) if v.as_u64() == Some(0) => true,
            Some(v) if v.as_u64().is_some() => {
                self.error(&member_path(path, "offset"), "fields at an offset inside a parameter are not supported yet");
                false
            }
            Some(v) => {
                self.error(&member_path(path, "offset"), format!("expected a non-negative integer, found {}", number_or_kind(v)));
                false
            }
        }
    }

    fn declaration(&mut self, d: &Value, path: &str) {
        let Some(map) = self.object(d, path, &["parameter", "type", "object", "name", "space", "offset"]) else { return };
        let key = self.required(map, path, "parameter", "the PTX parameter name or position").cloned();
        let key = key.and_then(|k| self.param_key(&k, &member_path(path, "parameter")));
        let ty = match self.required(map, path, "type", "\"pointer\" or a PTX scalar type") {
            Some(Value::String(t)) if t == "pointer" || scalar_type(t).is_some() => Some(t.clone()),
            Some(other) => {
                let found = other.as_str().map_or_else(|| kind(other).to_string(), |s| format!("`{s}`"));
                self.error(
                    &member_path(path, "type"),
                    format!("unknown parameter type {found} (expected \"pointer\" or a PTX scalar type such as u32, s64, f32)"),
                );
                None
            }
            None => None,
        };
        for name_key in ["object", "name"] {
            match map.get(name_key) {
                Some(Value::String(s)) if !s.is_empty() => {
                    if ty.as_deref() != Some("pointer") && name_key == "object" {
                        self.error(&member_path(path, "object"), "scalar declarations do not name memory objects");
                    } else if let Some(k) = &key {
                        self.spec.objects.insert(s.clone(), k.clone());
                    }
                }
                Some(other) => self.error(&member_path(path, name_key), format!("expected a nonempty string, found {}", kind(other))),
                None => {}
            }
        }
        match map.get("space") {
            Some(Value::String(s)) if s == "global" => {}
            Some(other) => {
                let found = other.as_str().map_or_else(|| kind(other).to_string(), |s| format!("`{s}`"));
                self.error(&member_path(path, "space"), format!("only global pointers are supported, found {found}"));
            }
            None => {}
        }
        let ok = self.zero_offset(map, path);
        let (Some(key), Some(ty), true) = (key, ty, ok) else { return };
        if self.spec.params.contains_key(&key) {
            self.error(path, format!("parameter `{key}` is declared twice"));
            return;
        }
        if ty == "pointer" {
            self.spec.params.insert(key.clone(), ParamSpec::empty_buffer());
            self.spec.origins.insert(format!("params.{key}"), self.origin(path));
        }
    }

    fn argument(&mut self, a: &Value, path: &str) {
        let Some(map) = a.as_object() else {
            self.error(path, format!("expected an object, found {}", kind(a)));
            return;
        };
        let key = if let Some(field) = map.get("field") {
            self.object(a, path, &["field", "value"]);
            let Some(field) = field.as_str() else {
                self.error(&member_path(path, "field"), format!("expected a declaration name, found {}", kind(field)));
                return;
            };
            match self.spec.objects.get(field) {
                Some(k) => k.clone(),
                None => {
                    self.error(&member_path(path, "field"), format!("no declaration is named `{field}`"));
                    return;
                }
            }
        } else {
            self.object(a, path, &["parameter", "type", "value", "offset"]);
            let Some(p) = self.required(map, path, "parameter", "the PTX parameter name or position").cloned() else { return };
            let Some(key) = self.param_key(&p, &member_path(path, "parameter")) else { return };
            if !self.zero_offset(map, path) {
                return;
            }
            match map.get("type") {
                Some(Value::String(t)) if scalar_type(t).is_some() => {
                    if let (Some(v), Some(range)) = (map.get("value"), scalar_type(t).and_then(|(_, r)| r)) {
                        if !self.fits(v, t, range, &member_path(path, "value")) {
                            return;
                        }
                    }
                }
                Some(other) => {
                    let found = other.as_str().map_or_else(|| kind(other).to_string(), |s| format!("`{s}`"));
                    self.error(&member_path(path, "type"), format!("unknown scalar type {found} (expected a PTX type such as u32, s64, f32)"));
                    return;
                }
                None => {
                    self.error(path, "missing `type` (the PTX scalar type of the argument)");
                    return;
                }
            }
            key
        };
        let value_path = member_path(path, "value");
        let value = match map.get("value") {
            Some(Value::Number(n)) if n.is_i64() => Scalar::Int(n.as_i64().unwrap_or_default() as i128),
            Some(Value::Number(n)) if n.is_u64() => Scalar::Int(n.as_u64().unwrap_or_default() as i128),
            Some(Value::Number(n)) => Scalar::Float(n.as_f64().unwrap_or_default()),
            Some(Value::Null) => return, // a null pointer
            Some(other) => {
                self.error(&value_path, format!("expected a number, found {}", kind(other)));
                return;
            }
            None => {
                self.error(path, "missing `value`");
                return;
            }
        };
        if matches!(self.spec.params.get(&key), Some(ParamSpec::Buffer { .. })) {
            self.error(path, format!("`{key}` is declared a pointer; it takes no scalar value"));
            return;
        }
        if self.spec.params.contains_key(&key) {
            self.error(path, format!("`{key}` has two arguments"));
            return;
        }
        self.spec.params.insert(key.clone(), ParamSpec::Scalar { value: Some(value), range: None });
        self.spec.origins.insert(format!("params.{key}"), self.origin(path));
        self.spec.origins.insert(format!("params.{key}.value"), self.origin(&value_path));
    }

    /// Whether an integer argument fits its type's range (reported if not).
    fn fits(&mut self, v: &Value, ty: &str, (lo, hi): (i128, i128), path: &str) -> bool {
        let n = match v {
            Value::Number(n) if n.is_i64() => n.as_i64().unwrap_or_default() as i128,
            Value::Number(n) if n.is_u64() => n.as_u64().unwrap_or_default() as i128,
            Value::Number(n) => {
                self.error(path, format!("expected an integer for a {ty} argument, found {n}"));
                return false;
            }
            _ => return true,
        };
        if n < lo || n > hi {
            self.error(path, format!("value {n} is outside {ty} ({lo} to {hi})"));
            return false;
        }
        true
    }

    /// `{parameter, shapes: [[...], ...], element_type?}`: a buffer of 32-bit integers (or of
    /// `element_type`: `s32`, `u32`, `s64`, `u64`) with those contents.
    fn shape_array(&mut self, s: &Value, path: &str) {
        let Some(map) = self.object(s, path, &["parameter", "shapes", "element_type"]) else { return };
        let dtype = match map.get("element_type") {
            None => DType::I32,
            Some(Value::String(t)) if matches!(t.as_str(), "s32" | "u32" | "s64" | "u64") => DType::parse(t).unwrap_or(DType::I32),
            Some(other) => {
                let found = other.as_str().map_or_else(|| kind(other).to_string(), |s| format!("`{s}`"));
                self.error(&member_path(path, "element_type"), format!("expected a 32- or 64-bit integer type (s32, u32, s64 or u64), found {found}"));
                return;
            }
        };
        let max = dtype.int_range().map_or(i32::MAX as i128, |(_, hi)| hi);
        let key = self.required(map, path, "parameter", "the PTX parameter name or position").cloned();
        let key = key.and_then(|k| self.param_key(&k, &member_path(path, "parameter")));
        let shapes_path = member_path(path, "shapes");
        let Some(shapes) = self.required(map, path, "shapes", "the arrays of integers the buffer holds") else { return };
        let Some(rows) = shapes.as_array().filter(|r| !r.is_empty()) else {
            self.error(&shapes_path, format!("expected a nonempty array of shapes, found {}", kind(shapes)));
            return;
        };
        let mut values = Vec::new();
        let mut rank = None;
        for (i, row) in rows.iter().enumerate() {
            let row_path = format!("{shapes_path}[{i}]");
            let Some(items) = row.as_array().filter(|r| !r.is_empty()) else {
                self.error(&row_path, format!("expected a nonempty array of integers, found {}", kind(row)));
                return;
            };
            if *rank.get_or_insert(items.len()) != items.len() {
                self.error(&row_path, format!("shapes have equal rank: the first has {} dimensions, this one {}", rank.unwrap_or_default(), items.len()));
                return;
            }
            for (j, x) in items.iter().enumerate() {
                match x.as_u64().filter(|n| *n as i128 <= max) {
                    Some(n) => values.push(n as i128),
                    None => {
                        self.error(&format!("{row_path}[{j}]"), format!("expected an integer from 0 to {max}, found {}", number_or_kind(x)));
                        return;
                    }
                }
            }
        }
        let Some(key) = key else { return };
        let len = Len::Elements(values.len() as u64);
        match self.spec.params.get_mut(&key) {
            Some(ParamSpec::Scalar { .. }) => {
                self.error(path, format!("`{key}` has a scalar argument; a shape array is a buffer"));
                return;
            }
            Some(ParamSpec::Buffer { values: Some(_), .. }) => {
                self.error(path, format!("`{key}` has two shape arrays"));
                return;
            }
            Some(ParamSpec::Buffer { dtype: d, len: l, values: v, .. }) => {
                (*d, *l, *v) = (Some(dtype), Some(len), Some(values));
            }
            None => {
                self.spec.params.insert(key.clone(), ParamSpec::Buffer { dtype: Some(dtype), len: Some(len), assume: Vec::new(), values: Some(values) });
                self.spec.origins.insert(format!("params.{key}"), self.origin(path));
            }
        }
        for field in ["dtype", "len", "values"] {
            self.spec.origins.insert(format!("params.{key}.{field}"), self.origin(&shapes_path));
        }
    }
}

/// A PTX scalar type (`u32`, `.s64`, `f32`, `b8`) and the integer range it holds (none for
/// floats).
fn scalar_type(t: &str) -> Option<(char, Option<(i128, i128)>)> {
    let t = t.strip_prefix('.').unwrap_or(t);
    let mut chars = t.chars();
    let class = chars.next()?;
    let bits: u32 = chars.as_str().parse().ok()?;
    if !matches!(class, 'b' | 'u' | 's' | 'f') || !matches!(bits, 8 | 16 | 32 | 64 | 128) {
        return None;
    }
    // 128-bit values do not fit an i128 unsigned; they are bounded by it instead.
    let unsigned_max = if bits >= 127 { i128::MAX } else { (1i128 << bits) - 1 };
    let signed = if bits >= 128 { (i128::MIN, i128::MAX) } else { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) };
    let range = match class {
        'u' => Some((0, unsigned_max)),
        's' => Some(signed),
        // Untyped bits: any value of that width, signed or not.
        'b' => Some((signed.0, unsigned_max)),
        _ => None,
    };
    Some((class, range))
}

fn number_or_kind(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        other => kind(other).to_string(),
    }
}

impl Interface {
    /// SentryWard's `entry` must name a kernel of the module: an error for each entry that names
    /// none of `kernel_names` (PTX names; a C++ kernel also matches by its unmangled name).
    /// Sections of a lark.toml are not entries (one lark.toml serves many files).
    pub fn unknown_entries(&self, kernel_names: &[&str]) -> Vec<SpecError> {
        self.kernels
            .iter()
            .filter(|(_, spec)| spec.origins.get("").is_some_and(|o| o.key == "entry"))
            .filter(|(name, _)| !kernel_names.iter().any(|k| crate::kernel_aliases(k).contains(name)))
            .map(|(name, spec)| {
                let known = if kernel_names.is_empty() { "none".to_string() } else { kernel_names.join(", ") };
                SpecError::at(&spec.origin(""), format!("no kernel named `{name}` in this module (kernels: {known})"))
            })
            .collect()
    }
}
