//! Fields of a struct a kernel takes by value, as `lark.toml` declares them: by byte offset,
//! `"p+16" = { value = 1024 }` (the name LARK's messages use, and all the PTX knows), or by name,
//! `p.ncols = { value = 1024 }`, resolved to the offset against the struct's definition in the
//! kernel's `.cu` (see [`crate::cu_struct`]).

use crate::cu_signature::CuParam;
use crate::cu_struct::{struct_layout, StructLayout};
use crate::error::SpecError;
use crate::interface::{KernelSpec, ParamSpec};

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
        match field_offset(layout, &params[i].name, field) {
            Ok(offset) => {
                let by_offset = format!("{param}+{offset}");
                let value: ParamSpec = spec.params.remove(&key).expect("a key of the map");
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

/// The byte offset of `field` in `param`'s struct.
fn field_offset(layout: &Result<StructLayout, String>, param: &str, field: &str) -> Result<u32, String> {
    let layout = layout.as_ref().map_err(Clone::clone)?;
    match layout.field(field) {
        Some(f) => Ok(f.offset),
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
}
