//! Fields of a struct a kernel takes by value, as `lark.toml` declares them: by byte offset,
//! `"p+16" = { value = 1024 }` (the name LARK's messages use, and all the PTX knows), or by name,
//! `p.ncols = { value = 1024 }`, resolved to the offset against the struct's definition in the
//! kernel's `.cu` (see [`crate::cu_struct`]).

use crate::cu_signature::CuParam;
use crate::cu_struct::{struct_layout, FieldKind, StructLayout};
use crate::error::SpecError;
use crate::interface::{KernelSpec, ParamSpec, Scalar};

/// `p+16` -> (`p`, 16): a field of parameter `p` at byte offset 16.
pub fn field_key(key: &str) -> Option<(&str, u32)> {
    let (name, offset) = key.split_once('+')?;
    let offset = offset.trim().parse().ok()?;
    let name = name.trim();
    (!name.is_empty()).then_some((name, offset))
}

/// `p.ncols` -> (`p`, `ncols`): a field of parameter `p` by name.
pub fn named_field_key(key: &str) -> Option<(&str, &str)> {
    key.split_once('.').filter(|(p, f)| !p.is_empty() && !f.is_empty())
}

/// Rewrites each key `p.ncols` of `spec` whose parameter is a struct defined in `cu` to the byte
/// offset form `p+16`. `params` are the kernel's `.cu` parameters and `param_bytes` the sizes of
/// its PTX parameters, in the same order: a layout whose size is not the PTX parameter's was read
/// wrongly and is not used. A name the struct does not have, or a struct whose layout cannot be
/// read, is an error at the key, and the key is taken out of the spec (it is reported once, here,
/// and not again by validation); keys whose parameter is not in `params` are left for
/// validation to report.
pub fn resolve_field_names(spec: &mut KernelSpec, cu: &str, params: &[CuParam], param_bytes: &[u32]) -> Vec<SpecError> {
    let mut errors = Vec::new();
    let named: Vec<String> = spec.params.keys().filter(|k| field_key(k).is_none() && named_field_key(k).is_some()).cloned().collect();
    // One layout per struct parameter, however many of its fields are named.
    let mut layouts: std::collections::HashMap<usize, Result<StructLayout, String>> = std::collections::HashMap::new();
    for key in named {
        let (param, field) = named_field_key(&key).expect("filtered above");
        let Some(i) = params.iter().position(|p| p.name == param) else { continue };
        let rel = format!("params.{}", crate::lark_toml::key_segment(&key));
        let layout = layouts.entry(i).or_insert_with(|| layout_of_param(cu, &params[i], param_bytes.get(i).copied()));
        let placed = field_offset(layout, &params[i].name, field).and_then(|f| Ok((f.offset, typed(&spec.params[&key], f.kind, &key)?)));
        let placed = placed.and_then(|(offset, value)| {
            let by_offset = format!("{param}+{offset}");
            if spec.params.contains_key(&by_offset) {
                Err(format!("`{key}` is the field at byte {offset}, which `\"{by_offset}\"` declares too: keep one"))
            } else {
                Ok((offset, value))
            }
        });
        match placed {
            Ok((offset, value)) => {
                let by_offset = format!("{param}+{offset}");
                spec.params.remove(&key);
                spec.move_param_origins(&rel, &by_offset);
                spec.params.insert(by_offset, value);
            }
            Err(message) => {
                errors.push(SpecError::at(&spec.origin(&rel), message));
                spec.params.remove(&key);
            }
        }
    }
    errors
}

/// The names of the fields of every struct the kernel takes by value whose layout can be read
/// from `cu` (`(parameter index, byte offset) -> "p.ncols"`, the first field at an offset), for
/// messages: LARK's own names for fields are byte offsets (`p+16`), all a `.ptx` knows. `params`
/// are the kernel's `.cu` parameters and `struct_bytes` the size of each PTX parameter that is a
/// struct (`None` for the others), in the same order.
pub fn field_names(cu: &str, params: &[CuParam], struct_bytes: &[Option<u32>]) -> std::collections::BTreeMap<(u32, u32), String> {
    let mut names = std::collections::BTreeMap::new();
    for (i, p) in params.iter().enumerate() {
        let Some(bytes) = struct_bytes.get(i).copied().flatten() else { continue };
        let Ok(layout) = layout_of_param(cu, p, Some(bytes)) else { continue };
        for f in &layout.fields {
            names.entry((i as u32, f.offset)).or_insert_with(|| format!("{}.{}", p.name, f.name));
        }
    }
    names
}

/// The layout of parameter `p`'s struct, whose PTX parameter has `bytes`: refused for a pointer,
/// a struct whose layout cannot be read, or one read at another size than the PTX's.
fn layout_of_param(cu: &str, p: &CuParam, bytes: Option<u32>) -> Result<StructLayout, String> {
    let param = &p.name;
    if p.is_pointer {
        return Err(format!("`{param}` is a pointer, not a struct passed by value, and has no fields"));
    }
    let instead = format!("declare the field by its byte offset instead (`\"{param}+OFFSET\"`)");
    let layout = struct_layout(cu, &p.ty).map_err(|why| format!("the fields of `{param}` cannot be named: {why}; {instead}"))?;
    if let Some(bytes) = bytes.filter(|&b| b != layout.size) {
        return Err(format!(
            "the fields of `{param}` cannot be named: its struct was read as {} bytes, the kernel's parameter has {bytes}; {instead}",
            layout.size
        ));
    }
    Ok(layout)
}

/// The value a named field is declared with, checked against the field's C type: an integer
/// written for a `float` field is that float (TOML's `1` for `1.0`; passed as the integer's bits
/// it would be a denormal), a float for an integer field, a range for a float field, and any
/// value for a vector field are errors; a pointer field is declared as the buffer it points to,
/// and only a pointer field is.
fn typed(ps: &ParamSpec, kind: FieldKind, key: &str) -> Result<ParamSpec, String> {
    match (ps, kind) {
        (ParamSpec::Buffer { .. }, FieldKind::Pointer) => Ok(ps.clone()),
        (ParamSpec::Buffer { .. }, _) => Err(format!("`{key}` is not a pointer: give it a `value` or a `range`")),
        (ParamSpec::Scalar { .. }, FieldKind::Pointer) => {
            Err(format!("`{key}` is a pointer field: declare the buffer it points to (`{{ dtype = \"f32\", len = ... }}`)"))
        }
        (ParamSpec::Scalar { value: Some(Scalar::Int(v)), range: None }, FieldKind::Float) => {
            Ok(ParamSpec::Scalar { value: Some(Scalar::Float(*v as f64)), range: None })
        }
        (ParamSpec::Scalar { range: Some(_), .. }, FieldKind::Float) => Err(format!("`{key}` is a floating-point field: give it a `value`")),
        (ParamSpec::Scalar { value: Some(Scalar::Float(_)), .. }, FieldKind::Integer) => {
            Err(format!("`{key}` is an integer field: give it an integer `value`"))
        }
        (_, FieldKind::Vector) => Err(format!("`{key}` is a vector field: declare its elements by byte offset (`\"p+OFFSET\"`)")),
        _ => Ok(ps.clone()),
    }
}

/// The field `field` of `param`'s struct.
fn field_offset<'l>(layout: &'l Result<StructLayout, String>, param: &str, field: &str) -> Result<&'l crate::cu_struct::FieldLayout, String> {
    let layout = layout.as_ref().map_err(Clone::clone)?;
    match layout.field(field) {
        Some(f) => Ok(f),
        None => {
            const SHOWN: usize = 40;
            let mut names: Vec<&str> = layout.fields.iter().take(SHOWN).map(|f| f.name.as_str()).collect();
            if layout.fields.len() > SHOWN {
                names.push("…");
            }
            Err(format!("`{field}` is not a field of `{param}` (fields: {})", names.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interface::Scalar;

    fn params(cu: &str) -> Vec<CuParam> {
        crate::cu_params(cu, "k").unwrap()
    }

    const CU: &str = "struct P { long long a; int n; };\n__global__ void k(float* x, const P p) {}";

    fn spec_with(keys: &[&str]) -> KernelSpec {
        let mut s = KernelSpec::default();
        for k in keys {
            s.params.insert(k.to_string(), ParamSpec::Scalar { value: Some(Scalar::Int(7)), range: None });
        }
        s
    }

    #[test]
    fn keys_name_fields_by_offset_or_by_name() {
        assert_eq!(field_key("p+16"), Some(("p", 16)));
        assert_eq!(field_key("p"), None);
        assert_eq!(field_key("+4"), None);
        assert_eq!(named_field_key("p.ncols"), Some(("p", "ncols")));
        let mut s = spec_with(&["p.n", "x"]);
        assert!(resolve_field_names(&mut s, CU, &params(CU), &[8, 16]).is_empty());
        assert_eq!(s.params.keys().collect::<Vec<_>>(), ["p+8", "x"]);
    }

    #[test]
    fn a_name_the_struct_lacks_or_a_layout_of_the_wrong_size_is_an_error() {
        let mut s = spec_with(&["p.m"]);
        let e = resolve_field_names(&mut s, CU, &params(CU), &[8, 16]);
        assert!(e[0].message.contains("`m` is not a field of `p` (fields: a, n)"), "{e:?}");
        let mut s = spec_with(&["p.n"]);
        let e = resolve_field_names(&mut s, CU, &params(CU), &[8, 24]);
        assert!(e[0].message.contains("read as 16 bytes, the kernel's parameter has 24"), "{e:?}");
        assert!(s.params.is_empty(), "a key in error is reported here, not again by validation");
        let mut s = spec_with(&["x.a"]);
        assert!(resolve_field_names(&mut s, CU, &params(CU), &[8, 16])[0].message.contains("is a pointer"));
    }

    /// A spec with one key resolved against kernel `k(const Q q)` of `cu` (`bytes` the PTX size of
    /// `q`), and the messages of its errors.
    fn resolve_one(cu: &str, bytes: u32, key: &str, ps: ParamSpec) -> (KernelSpec, Vec<String>) {
        let mut s = KernelSpec::default();
        s.params.insert(key.to_string(), ps);
        let errors = resolve_field_names(&mut s, cu, &params(cu), &[bytes]);
        (s, errors.into_iter().map(|e| e.message).collect())
    }

    /// A named field's value is checked against its C type: `1` for a `float` field is `1.0`
    /// (as its bits it would be a denormal); a float for an `int`, a range for a `float` and a
    /// value for a `float2` are errors at the key.
    #[test]
    fn a_named_field_takes_a_value_of_its_type() {
        let cu = "struct Q { int n; float s; float2 v; };\n__global__ void k(const Q q) {}";
        let resolve = |key: &str, ps: ParamSpec| resolve_one(cu, 16, key, ps);
        let value = |v: Scalar| ParamSpec::Scalar { value: Some(v), range: None };
        let (s, e) = resolve("q.s", value(Scalar::Int(1)));
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(s.params["q+4"], value(Scalar::Float(1.0)));
        assert!(resolve("q.n", value(Scalar::Float(2.5))).1[0].contains("is an integer field"));
        assert!(resolve("q.s", ParamSpec::Scalar { value: None, range: Some((0, 1)) }).1[0].contains("floating-point field"));
        assert!(resolve("q.v", value(Scalar::Float(1.0))).1[0].contains("vector field"));
    }

    /// Messages name fields as the .cu does, for the structs whose layout is read at the PTX
    /// parameter's size; other parameters have no field names.
    /// A field declared by name and by offset is an error at the name, not a silent choice.
    #[test]
    fn a_field_declared_twice_is_an_error() {
        let cu = "struct Q { int n; float* data; };\n__global__ void k(const Q q) {}";
        let mut s = KernelSpec::default();
        s.params.insert("q.n".into(), ParamSpec::Scalar { value: Some(Scalar::Int(3)), range: None });
        s.params.insert("q+0".into(), ParamSpec::Scalar { value: Some(Scalar::Int(4)), range: None });
        let errors = resolve_field_names(&mut s, cu, &params(cu), &[16]);
        assert!(errors[0].message.contains("which `\"q+0\"` declares too"), "{errors:?}");
        assert_eq!(s.params.get("q+0"), Some(&ParamSpec::Scalar { value: Some(Scalar::Int(4)), range: None }));
    }

    #[test]
    fn fields_are_named_by_offset_for_messages() {
        let cu = "struct Q { int n; float* data; };\n__global__ void k(const float* x, const Q q) {}";
        let names = field_names(cu, &params(cu), &[None, Some(16)]);
        assert_eq!(names.into_iter().collect::<Vec<_>>(), [((1, 0), "q.n".to_string()), ((1, 8), "q.data".to_string())]);
        assert!(field_names(cu, &params(cu), &[None, Some(24)]).is_empty(), "a layout of another size is not used");
    }

    #[test]
    fn a_pointer_field_is_declared_as_its_buffer_and_only_a_pointer_field_is() {
        let cu = "struct Q { int n; float* data; };\n__global__ void k(const Q q) {}";
        let resolve = |key: &str, ps: ParamSpec| resolve_one(cu, 16, key, ps);
        let buffer = ParamSpec::Buffer { dtype: Some(crate::DType::F32), len: Some(crate::Len::Elements(64)), values: None, assume: Vec::new() };
        let (s, e) = resolve("q.data", buffer.clone());
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(s.params["q+8"], buffer);
        assert!(resolve("q.n", buffer).1[0].contains("is not a pointer"));
        assert!(resolve("q.data", ParamSpec::Scalar { value: Some(Scalar::Int(0)), range: None }).1[0].contains("is a pointer field"));
    }
}
