//! SentryWard's kernel-input JSON (`"schema": "spverify.kernel-input/v1"`), accepted so its users
//! can switch without rewriting their configs.

use crate::*;

pub fn parse_sentryward_json(file: &str, text: &str, kernel: &str) -> Result<Interface, SpecError> {
    let err = |message: String| SpecError::Invalid { file: file.to_string(), message };
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
    if let Some(s) = v.get("schema").and_then(|s| s.as_str()) {
        if !s.starts_with("spverify.kernel-input/") {
            return Err(err(format!("unknown schema `{s}`")));
        }
    }
    let mut spec = KernelSpec::default();
    if let Some(launch) = v.get("launch") {
        let dim = |key: &str| -> Result<Option<[DimRange; 3]>, SpecError> {
            let Some(d) = launch.get(key) else { return Ok(None) };
            let arr = d.as_array().ok_or_else(|| err(format!("launch.{key}: expected [x, y, z]")))?;
            let mut out = [DimRange::exact(1); 3];
            for (i, x) in arr.iter().take(3).enumerate() {
                let n = x.as_u64().filter(|n| *n >= 1).ok_or_else(|| err(format!("launch.{key}: dimensions are positive integers")))?;
                out[i] = DimRange::exact(n);
            }
            Ok(Some(out))
        };
        spec.grid = dim("grid_dim")?;
        spec.block = dim("block_dim")?;
    }
    if let Some(args) = v.get("arguments").and_then(|a| a.as_object()) {
        for (name, a) in args {
            let value = a.get("value").unwrap_or(a);
            let scalar = if let Some(i) = value.as_i64() {
                Scalar::Int(i as i128)
            } else if let Some(u) = value.as_u64() {
                Scalar::Int(u as i128)
            } else if let Some(f) = value.as_f64() {
                Scalar::Float(f)
            } else {
                continue;
            };
            spec.params.insert(name.clone(), ParamSpec::Scalar { value: Some(scalar), range: None });
        }
    }
    if let Some(decls) = v.get("declarations").and_then(|d| d.as_object()) {
        for (name, d) in decls {
            let dtype = d.get("element_type").or_else(|| d.get("dtype")).and_then(|t| t.as_str()).and_then(DType::parse);
            let len = d
                .get("num_elements")
                .or_else(|| d.get("elements"))
                .and_then(|n| n.as_u64())
                .map(Len::Elements)
                .or_else(|| {
                    let bytes = d.get("size_bytes").or_else(|| d.get("bytes")).and_then(|n| n.as_u64())?;
                    Some(Len::Elements(bytes / dtype.map_or(1, |t| t.bytes())))
                });
            spec.params.insert(name.clone(), ParamSpec::Buffer { dtype, len, assume: Vec::new() });
        }
    }
    let mut out = Interface::default();
    out.kernels.insert(kernel.to_string(), spec);
    Ok(out)
}
