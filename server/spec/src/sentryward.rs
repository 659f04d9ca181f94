//! SentryWard's kernel-input JSON (`"schema": "spverify.kernel-input/v1"`), accepted so its users
//! can switch without rewriting their configs: `launch.grid_dim`/`block_dim`/
//! `dynamic_shared_bytes`, `declarations[]` (`{parameter, type: "pointer" | scalar, name?}`) and
//! `arguments[]` (`{parameter, type, value}` or `{field: <declaration name>, value}`), where a
//! parameter is its PTX name or its position. The format has no buffer lengths: bounds come from
//! a `lark.toml` when one is merged in (`Interface::merge_missing`).

use crate::*;
use serde_json::Value;

/// The spec key for a SentryWard parameter reference: the PTX name, or `param_N` for a position.
fn param_key(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => n.as_u64().map(|i| format!("param_{i}")),
        _ => None,
    }
}

pub fn parse_sentryward_json(file: &str, text: &str, kernel: &str) -> Result<Interface, SpecError> {
    let err = |message: String| SpecError::Invalid { file: file.to_string(), message };
    let v: Value = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
    match v.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s.starts_with("spverify.kernel-input/") => {}
        Some(s) => return Err(err(format!("unknown schema `{s}` (expected spverify.kernel-input/v1)"))),
        None => return Err(err("missing `schema` (expected \"spverify.kernel-input/v1\")".into())),
    }
    let mut spec = KernelSpec::default();
    if let Some(launch) = v.get("launch") {
        let dim = |key: &str| -> Result<Option<[DimRange; 3]>, SpecError> {
            let Some(d) = launch.get(key) else { return Ok(None) };
            let arr = d.as_array().filter(|a| !a.is_empty() && a.len() <= 3).ok_or_else(|| err(format!("launch.{key}: expected [x, y, z]")))?;
            let mut out = [DimRange::exact(1); 3];
            for (i, x) in arr.iter().enumerate() {
                let n = x.as_u64().filter(|n| *n >= 1).ok_or_else(|| err(format!("launch.{key}[{i}]: dimensions are positive integers")))?;
                out[i] = DimRange::exact(n);
            }
            Ok(Some(out))
        };
        spec.grid = dim("grid_dim")?;
        spec.block = dim("block_dim")?;
        spec.dynamic_shared_bytes = launch.get("dynamic_shared_bytes").and_then(|b| b.as_u64());
    } else {
        return Err(err("missing `launch`".into()));
    }
    // Declarations: pointer parameters become buffers (unbounded unless lark.toml says more).
    let mut names: Vec<(String, String)> = Vec::new();
    for (i, d) in v.get("declarations").and_then(|d| d.as_array()).into_iter().flatten().enumerate() {
        let key = d.get("parameter").and_then(param_key).ok_or_else(|| err(format!("declarations[{i}].parameter: expected a PTX name or a position")))?;
        if let Some(n) = d.get("name").and_then(|n| n.as_str()) {
            names.push((n.to_string(), key.clone()));
        }
        if d.get("type").and_then(|t| t.as_str()) == Some("pointer") {
            spec.params.insert(key, ParamSpec::Buffer { dtype: None, len: None, assume: Vec::new() });
        }
    }
    for (i, a) in v.get("arguments").and_then(|a| a.as_array()).into_iter().flatten().enumerate() {
        let key = match (a.get("parameter").and_then(param_key), a.get("field").and_then(|f| f.as_str())) {
            (Some(k), _) => k,
            (None, Some(field)) => names
                .iter()
                .find(|(n, _)| n == field)
                .map(|(_, k)| k.clone())
                .ok_or_else(|| err(format!("arguments[{i}].field: no declaration named `{field}`")))?,
            _ => return Err(err(format!("arguments[{i}]: expected `parameter` or `field`"))),
        };
        let value = match a.get("value") {
            Some(Value::Number(n)) if n.is_i64() => Scalar::Int(n.as_i64().unwrap() as i128),
            Some(Value::Number(n)) if n.is_u64() => Scalar::Int(n.as_u64().unwrap() as i128),
            Some(Value::Number(n)) => Scalar::Float(n.as_f64().unwrap_or(0.0)),
            Some(Value::Null) => continue, // a null pointer argument
            _ => return Err(err(format!("arguments[{i}].value: expected a number"))),
        };
        spec.params.insert(key, ParamSpec::Scalar { value: Some(value), range: None });
    }
    let name = v.get("entry").and_then(|e| e.as_str()).unwrap_or(kernel);
    let mut out = Interface::default();
    out.kernels.insert(name.to_string(), spec);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_launch_declarations_and_arguments() {
        let text = r#"{"schema": "spverify.kernel-input/v1", "entry": "k",
            "launch": {"grid_dim": [4, 1, 1], "block_dim": [128, 1, 1]},
            "declarations": [{"parameter": "k_param_0", "name": "x", "type": "pointer", "space": "global"},
                             {"parameter": 1, "name": "n", "type": "u32"}],
            "arguments": [{"field": "n", "value": 512}]}"#;
        let i = parse_sentryward_json("in.json", text, "*").unwrap();
        let k = i.kernel("k").unwrap();
        assert_eq!(k.block.unwrap()[0].value(), Some(128));
        assert!(matches!(k.params["k_param_0"], ParamSpec::Buffer { .. }));
        assert_eq!(k.params["param_1"], ParamSpec::Scalar { value: Some(Scalar::Int(512)), range: None });
    }

    #[test]
    fn rejects_other_documents_with_a_reason() {
        let e = parse_sentryward_json("in.json", r#"{"launch": {}}"#, "k").unwrap_err();
        assert!(e.to_string().contains("schema"), "{e}");
        let e = parse_sentryward_json("in.json", "{", "k").unwrap_err();
        assert!(e.to_string().starts_with("in.json:"), "{e}");
    }
}
