//! The peer tool's `reference_binding.json` (SentryWard), read into the same [`ReferenceSpec`] as
//! `[kernel.X.reference]`:
//!
//! ```json
//! {"reference": {"arguments": [{"name": "x", "allocation": "x", "shape": [4, 1024], "dtype": "float32"},
//!                              {"name": "eps", "parameter": "k_param_3"}]},
//!  "outputs": {"kind": "dense_tensor", "tensors": [{"left_allocation": "reference.output0",
//!              "right_allocation": "out", "shape": [4, 1024], "element_bytes": 4}]}}
//! ```
//!
//! Allocations are SentryWard memory objects (`declarations[].object` in the kernel-input JSON);
//! byte offsets and strides become element counts (`element_bytes`). What LARK does not model
//! yet (`{"input": "/json/pointer"}` values, a reference output at an offset or with strides,
//! arguments at an offset) is an error that says so, never a silent guess.

use crate::error::{Origin, SpecError};
use crate::interface::{DType, Interface, Scalar, DTYPE_NAMES};
use crate::json_index::{member_path, JsonDoc};
use crate::reference::{ArgBinding, ReferenceArg, ReferenceOutput, ReferenceSpec};
use crate::size_expr::SizeExpr;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Parses a peer `reference_binding.json`; `reference_path` is the Python file (`--reference`),
/// `iface` the kernel input it goes with (for the names of its memory objects).
pub fn parse_reference_binding(json_text: &str, file_name: &str, reference_path: &Path, iface: &Interface) -> Result<ReferenceSpec, SpecError> {
    parse_with_origins(json_text, file_name, reference_path, iface).map(|(r, _)| r)
}

impl Interface {
    /// Parses a peer `reference_binding.json` and attaches it to every kernel of this interface
    /// (normally the one kernel of a SentryWard input), with the places of its entries so that
    /// [`KernelSpec::validate`](crate::KernelSpec::validate) can point at them.
    pub fn attach_reference_binding(&mut self, json_text: &str, file_name: &str, reference_path: &Path) -> Result<(), SpecError> {
        let (reference, origins) = parse_with_origins(json_text, file_name, reference_path, self)?;
        for spec in self.kernels.values_mut() {
            spec.origins.retain(|k, _| !k.starts_with("reference"));
            spec.origins.extend(origins.clone());
            spec.reference = Some(reference.clone());
        }
        Ok(())
    }
}

fn parse_with_origins(
    json_text: &str,
    file_name: &str,
    reference_path: &Path,
    iface: &Interface,
) -> Result<(ReferenceSpec, BTreeMap<String, Origin>), SpecError> {
    let doc = JsonDoc::parse(file_name, json_text)?;
    let mut r = Reader { doc: &doc, iface, errors: Vec::new(), origins: BTreeMap::new() };
    let spec = r.document(reference_path);
    // A duplicated key first (serde_json kept only its last value), then in the order found.
    let errors = doc.duplicate_errors().into_iter().chain(r.errors);
    match (errors.into_iter().next(), spec) {
        (Some(e), _) => Err(e),
        (None, Some(spec)) => Ok((spec, r.origins)),
        (None, None) => Err(SpecError::in_file(file_name, "not a reference binding")),
    }
}

struct Reader<'d, 'a> {
    doc: &'d JsonDoc<'a>,
    iface: &'d Interface,
    errors: Vec<SpecError>,
    origins: BTreeMap<String, Origin>,
}

fn kind(v: &Value) -> &'static str {
    crate::values::json_kind(v)
}

impl Reader<'_, '_> {
    fn error(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(self.doc.error(path, message));
    }

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
        // `{"input": "/json/pointer"}` takes a value from the kernel input; not supported yet.
        for (k, v) in map {
            if v.as_object().is_some_and(|o| o.len() == 1 && o.contains_key("input")) {
                self.error(&member_path(path, k), "values taken from the kernel input (`{\"input\": ...}`) are not supported yet; write the value");
            }
        }
        Some(map)
    }

    fn document(&mut self, reference_path: &Path) -> Option<ReferenceSpec> {
        let root = &self.doc.value;
        let map = self.object(root, "", &["reference", "outputs", "left_inputs", "right_inputs", "provenance", "schema"])?;
        let mut spec = ReferenceSpec { file: reference_path.to_path_buf(), function: None, args: Vec::new(), outputs: Vec::new(), shapes: Vec::new() };
        match map.get("reference") {
            Some(r) => {
                // `reference.outputs` describes how the peer captures the reference's results;
                // the correspondence with kernel buffers is the top-level `outputs`.
                if let Some(r) = self.object(r, "reference", &["arguments", "outputs"]) {
                    match r.get("arguments") {
                        Some(Value::Array(args)) => {
                            for (i, a) in args.iter().enumerate() {
                                self.argument(a, &format!("reference.arguments[{i}]"), &mut spec.args);
                            }
                        }
                        Some(other) => self.error("reference.arguments", format!("expected an array, found {}", kind(other))),
                        None => self.error("reference", "missing `arguments`"),
                    }
                }
            }
            None => self.error("", "missing `reference` (with `arguments`)"),
        }
        match map.get("outputs") {
            Some(o) => self.outputs(o, &mut spec.outputs),
            None => self.error("", "missing `outputs` (which kernel buffers hold the reference's results)"),
        }
        self.origins.insert("reference".into(), self.doc.origin(""));
        Some(spec)
    }

    /// The kernel buffer a SentryWard memory object names (itself when no declaration names it:
    /// validation against the kernel reports a name that is no parameter).
    fn buffer_key(&self, allocation: &str) -> String {
        self.iface.kernels.values().find_map(|k| k.objects.get(allocation).cloned()).unwrap_or_else(|| allocation.to_string())
    }

    fn argument(&mut self, a: &Value, path: &str, out: &mut Vec<ReferenceArg>) {
        let Some(map) = a.as_object() else {
            self.error(path, format!("expected an object, found {}", kind(a)));
            return;
        };
        let name = match map.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(other) => {
                self.error(&member_path(path, "name"), format!("expected a nonempty string, found {}", kind(other)));
                return;
            }
            None => {
                self.error(path, "missing `name` (the reference function's parameter)");
                return;
            }
        };
        if out.iter().any(|x| x.name == name) {
            self.error(&member_path(path, "name"), format!("argument `{name}` is bound twice"));
            return;
        }
        let rel = format!("reference.args.{name}");
        let binding = if map.contains_key("parameter") {
            self.object(a, path, &["name", "parameter", "parameter_offset"]);
            if map.get("parameter_offset").is_some_and(|o| o.as_u64() != Some(0)) {
                self.error(&member_path(path, "parameter_offset"), "fields at an offset inside a parameter are not supported yet");
                return;
            }
            let p = match &map["parameter"] {
                Value::String(s) if !s.is_empty() => s.clone(),
                Value::Number(n) if n.as_u64().is_some() => format!("param_{n}"),
                other => {
                    self.error(&member_path(path, "parameter"), format!("expected a PTX parameter name or a position, found {}", kind(other)));
                    return;
                }
            };
            self.origins.insert(format!("{rel}.param"), self.doc.origin(&member_path(path, "parameter")));
            ArgBinding::Param(p)
        } else if let Some(v) = map.get("value") {
            self.object(a, path, &["name", "value"]);
            let value = match v {
                Value::Number(n) if n.is_i64() => Scalar::Int(n.as_i64().unwrap_or_default() as i128),
                Value::Number(n) if n.is_u64() => Scalar::Int(n.as_u64().unwrap_or_default() as i128),
                Value::Number(n) => Scalar::Float(n.as_f64().unwrap_or_default()),
                Value::Bool(b) => Scalar::Int(*b as i128),
                other => {
                    self.error(
                        &member_path(path, "value"),
                        format!("expected a number, found {} (only numbers are supported as constant arguments)", kind(other)),
                    );
                    return;
                }
            };
            self.origins.insert(format!("{rel}.value"), self.doc.origin(&member_path(path, "value")));
            ArgBinding::Value(value)
        } else {
            if self.object(a, path, &["name", "allocation", "shape", "dtype", "offset"]).is_none() {
                return;
            }
            let mut missing = ["allocation", "shape", "dtype"].into_iter().filter(|k| !map.contains_key(*k));
            if let Some(k) = missing.next() {
                self.error(path, format!("missing `{k}` (a tensor argument has allocation, shape and dtype; or give `parameter` or `value`)"));
                return;
            }
            if map.get("offset").is_some_and(|o| o.as_u64() != Some(0)) {
                self.error(&member_path(path, "offset"), "tensor arguments at an offset are not supported yet");
                return;
            }
            let Some(allocation) = map["allocation"].as_str() else {
                self.error(&member_path(path, "allocation"), format!("expected a memory object name, found {}", kind(&map["allocation"])));
                return;
            };
            let Some(shape) = self.shape(&map["shape"], &member_path(path, "shape"), &format!("{rel}.shape")) else { return };
            let dtype = match map["dtype"].as_str().map(|s| (s, DType::parse(s))) {
                Some((_, Some(d))) => d,
                Some((s, None)) => {
                    self.error(&member_path(path, "dtype"), format!("unknown dtype `{s}` (expected {DTYPE_NAMES}, or torch names such as float32)"));
                    return;
                }
                None => {
                    self.error(&member_path(path, "dtype"), format!("expected a string, found {}", kind(&map["dtype"])));
                    return;
                }
            };
            self.origins.insert(format!("{rel}.buffer"), self.doc.origin(&member_path(path, "allocation")));
            ArgBinding::Buffer { buffer: self.buffer_key(allocation), shape, dtype: Some(dtype) }
        };
        self.origins.insert(rel, self.doc.origin(path));
        out.push(ReferenceArg { name, binding });
    }

    /// A shape: integers or size expressions (strings).
    fn shape(&mut self, v: &Value, path: &str, rel: &str) -> Option<Vec<SizeExpr>> {
        let Some(items) = v.as_array() else {
            self.error(path, format!("expected an array of sizes, found {}", kind(v)));
            return None;
        };
        let mut out = Vec::new();
        for (i, x) in items.iter().enumerate() {
            let p = format!("{path}[{i}]");
            let e = match x {
                Value::Number(n) if n.as_u64().is_some() => SizeExpr::int(n.as_u64().unwrap_or_default() as i128),
                Value::String(s) => match SizeExpr::parse(s) {
                    Ok(e) => e,
                    Err(e) => {
                        self.error(&p, e.message);
                        return None;
                    }
                },
                other => {
                    self.error(&p, format!("expected a non-negative integer or a size expression, found {}", kind(other)));
                    return None;
                }
            };
            // Names inside a JSON string are placed at the string's first character.
            let mut origin = self.doc.origin(&p);
            if x.is_string() {
                origin = origin.shifted("\"");
            }
            self.origins.insert(format!("{rel}[{i}]"), origin);
            out.push(e);
        }
        Some(out)
    }

    fn outputs(&mut self, o: &Value, out: &mut Vec<ReferenceOutput>) {
        let Some(map) = o.as_object() else {
            self.error("outputs", format!("expected an object, found {}", kind(o)));
            return;
        };
        let tensor_keys =
            ["left_allocation", "right_allocation", "shape", "element_bytes", "left_offset", "right_offset", "left_strides_bytes", "right_strides_bytes"];
        let tensors: Vec<(String, &Value)> = match map.get("kind").and_then(Value::as_str) {
            Some("dense_tensors") => {
                self.object(o, "outputs", &["kind", "tensors"]);
                match map.get("tensors") {
                    Some(Value::Array(t)) => t.iter().enumerate().map(|(i, t)| (format!("outputs.tensors[{i}]"), t)).collect(),
                    Some(other) => {
                        self.error("outputs.tensors", format!("expected an array, found {}", kind(other)));
                        return;
                    }
                    None => {
                        self.error("outputs", "missing `tensors`");
                        return;
                    }
                }
            }
            // One tensor: inside `tensors`, or the fields next to `kind`.
            Some("dense_tensor") => match map.get("tensors") {
                Some(Value::Array(t)) if t.len() == 1 => {
                    self.object(o, "outputs", &["kind", "tensors"]);
                    vec![("outputs.tensors[0]".to_string(), &t[0])]
                }
                Some(other) => {
                    self.error(
                        "outputs.tensors",
                        format!(
                            "a dense_tensor output has one tensor, found {}",
                            other.as_array().map_or_else(|| kind(other).to_string(), |a| a.len().to_string())
                        ),
                    );
                    return;
                }
                None => {
                    self.object(o, "outputs", &[&["kind"][..], &tensor_keys[..]].concat());
                    vec![("outputs".to_string(), o)]
                }
            },
            Some(other) => {
                self.error("outputs.kind", format!("unknown output kind `{other}` (expected dense_tensor or dense_tensors)"));
                return;
            }
            None => {
                self.error("outputs", "missing `kind` (dense_tensor or dense_tensors)");
                return;
            }
        };
        let mut slots: Vec<Option<ReferenceOutput>> = Vec::new();
        for (path, t) in tensors {
            let allowed: Vec<&str> = if path == "outputs" { [&["kind"][..], &tensor_keys[..]].concat() } else { tensor_keys.to_vec() };
            if path != "outputs" && self.object(t, &path, &allowed).is_none() {
                continue;
            }
            if let Some((index, output)) = self.tensor(t, &path) {
                if slots.len() <= index {
                    slots.resize(index + 1, None);
                }
                if slots[index].is_some() {
                    self.error(&member_path(&path, "left_allocation"), format!("reference.output{index} is bound twice"));
                }
                slots[index] = Some(output);
            }
        }
        if let Some(gap) = slots.iter().position(Option::is_none) {
            self.error("outputs", format!("reference.output{gap} is not bound to a kernel buffer"));
            return;
        }
        out.extend(slots.into_iter().flatten());
    }

    fn tensor(&mut self, t: &Value, path: &str) -> Option<(usize, ReferenceOutput)> {
        let map = t.as_object()?;
        for k in ["left_allocation", "right_allocation", "shape", "element_bytes"] {
            if !map.contains_key(k) {
                self.error(path, format!("missing `{k}`"));
                return None;
            }
        }
        let left = map["left_allocation"].as_str().unwrap_or_default();
        let index = match left.strip_prefix("reference.output").map(|i| if i.is_empty() { Some(0) } else { i.parse::<usize>().ok() }) {
            Some(Some(i)) => i,
            _ => {
                self.error(
                    &member_path(path, "left_allocation"),
                    format!("expected `reference.outputN` (the N-th returned tensor), found {}", show(&map["left_allocation"])),
                );
                return None;
            }
        };
        let Some(right) = map["right_allocation"].as_str() else {
            self.error(&member_path(path, "right_allocation"), format!("expected a memory object name, found {}", kind(&map["right_allocation"])));
            return None;
        };
        let Some(elem) = map["element_bytes"].as_u64().filter(|e| *e > 0) else {
            self.error(&member_path(path, "element_bytes"), format!("expected a positive integer, found {}", show(&map["element_bytes"])));
            return None;
        };
        let rel = format!("reference.outputs[{index}]");
        let shape = self.shape(&map["shape"], &member_path(path, "shape"), &format!("{rel}.shape"))?;
        // The reference's own tensor is taken whole and contiguous.
        if map.get("left_offset").is_some_and(|v| v.as_u64() != Some(0)) {
            self.error(&member_path(path, "left_offset"), "a reference output at an offset is not supported yet");
            return None;
        }
        if let Some(s) = map.get("left_strides_bytes") {
            let strides = self.byte_counts(s, &member_path(path, "left_strides_bytes"), elem)?;
            if shape.iter().any(|e| e.as_int().is_none()) || strides != contiguous(&shape) {
                self.error(&member_path(path, "left_strides_bytes"), "a strided reference output is not supported yet (only contiguous row-major)");
                return None;
            }
        }
        let offset = match map.get("right_offset") {
            Some(v) => {
                let n = self.byte_count(v, &member_path(path, "right_offset"), elem)?;
                self.origins.insert(format!("{rel}.offset"), self.doc.origin(&member_path(path, "right_offset")));
                SizeExpr::int(n)
            }
            None => SizeExpr::int(0),
        };
        let strides = match map.get("right_strides_bytes") {
            Some(v) => {
                let p = member_path(path, "right_strides_bytes");
                let s = self.byte_counts(v, &p, elem)?;
                if s.len() != shape.len() {
                    self.error(&p, format!("one stride per dimension: the shape has {} dimensions, found {} strides", shape.len(), s.len()));
                    return None;
                }
                for i in 0..s.len() {
                    self.origins.insert(format!("{rel}.strides[{i}]"), self.doc.origin(&format!("{p}[{i}]")));
                }
                Some(s.into_iter().map(SizeExpr::int).collect())
            }
            None => None,
        };
        self.origins.insert(format!("{rel}.buffer"), self.doc.origin(&member_path(path, "right_allocation")));
        self.origins.insert(rel, self.doc.origin(path));
        Some((index, ReferenceOutput { buffer: self.buffer_key(right), shape, offset, strides }))
    }

    /// A byte count that must be a whole number of elements.
    fn byte_count(&mut self, v: &Value, path: &str, elem: u64) -> Option<i128> {
        let Some(n) = v.as_i64() else {
            self.error(path, format!("expected an integer number of bytes, found {}", show(v)));
            return None;
        };
        let (n, elem) = (n as i128, elem as i128);
        if n % elem != 0 {
            self.error(path, format!("{n} bytes is not a whole number of {elem}-byte elements"));
            return None;
        }
        Some(n / elem)
    }

    fn byte_counts(&mut self, v: &Value, path: &str, elem: u64) -> Option<Vec<i128>> {
        let Some(items) = v.as_array() else {
            self.error(path, format!("expected an array of byte strides, found {}", kind(v)));
            return None;
        };
        items.iter().enumerate().map(|(i, x)| self.byte_count(x, &format!("{path}[{i}]"), elem)).collect()
    }
}

/// Row-major strides (in elements) of a concrete shape.
fn contiguous(shape: &[SizeExpr]) -> Vec<i128> {
    let mut strides = vec![1i128; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1].as_int().unwrap_or(1));
    }
    strides
}

fn show(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("`{s}`"),
        other => kind(other).to_string(),
    }
}
