//! `lark.toml`:
//!
//! ```toml
//! [kernel.reduce]
//! grid = [64, 1, 1]                 # or a range per dimension: [[1, 65535], 1, 1]
//! block = [256, 1, 1]
//! dynamic_shared_bytes = 0
//! [kernel.reduce.params]
//! n = { value = 16384 }             # or { range = [1, 1048576] }
//! input = { dtype = "f32", len = "n" }
//! slots = { dtype = "i64", len = 4096, assume = ["injective", "in_range(0, 65536)"] }
//! ```

use crate::*;
use toml::Value;

pub fn parse_lark_toml(file: &str, text: &str) -> Result<Interface, SpecError> {
    let err = |message: String| SpecError::Invalid { file: file.to_string(), message };
    let root: toml::Table = text.parse().map_err(|e: toml::de::Error| err(e.message().to_string()))?;
    let mut out = Interface::default();
    let Some(kernels) = root.get("kernel") else { return Ok(out) };
    let kernels = kernels.as_table().ok_or_else(|| err("`kernel` must be a table of kernels".into()))?;
    for (name, k) in kernels {
        let k = k.as_table().ok_or_else(|| err(format!("kernel.{name}: expected a table")))?;
        let mut spec = KernelSpec::default();
        for (key, v) in k {
            let at = |m: &str| err(format!("kernel.{name}.{key}: {m}"));
            match key.as_str() {
                "grid" => spec.grid = Some(dim3(v).map_err(|m| at(&m))?),
                "block" => spec.block = Some(dim3(v).map_err(|m| at(&m))?),
                "dynamic_shared_bytes" => {
                    spec.dynamic_shared_bytes = Some(v.as_integer().filter(|i| *i >= 0).ok_or_else(|| at("expected a non-negative integer"))? as u64)
                }
                "params" => {
                    let t = v.as_table().ok_or_else(|| at("expected a table"))?;
                    for (p, pv) in t {
                        let ps = param(pv).map_err(|m| err(format!("kernel.{name}.params.{p}: {m}")))?;
                        spec.params.insert(p.clone(), ps);
                    }
                }
                other => return Err(err(format!("kernel.{name}: unknown key `{other}` (expected grid, block, dynamic_shared_bytes, params)"))),
            }
        }
        if let Some(b) = spec.block {
            let threads: u64 = b.iter().map(|d| d.lo).product();
            if threads > 1024 || b.iter().any(|d| d.lo == 0 || d.lo > d.hi) {
                return Err(err(format!("kernel.{name}.block: a block has 1 to 1024 threads")));
            }
        }
        out.kernels.insert(name.clone(), spec);
    }
    Ok(out)
}

fn dim3(v: &Value) -> Result<[DimRange; 3], String> {
    let arr = v.as_array().ok_or("expected an array of 1 to 3 dimensions")?;
    if arr.is_empty() || arr.len() > 3 {
        return Err("expected 1 to 3 dimensions".into());
    }
    let mut out = [DimRange::exact(1); 3];
    for (i, d) in arr.iter().enumerate() {
        out[i] = match d {
            Value::Integer(n) if *n >= 1 => DimRange::exact(*n as u64),
            Value::Array(r) if r.len() == 2 => {
                let lo = r[0].as_integer().filter(|x| *x >= 1).ok_or("range bounds must be positive integers")?;
                let hi = r[1].as_integer().filter(|x| *x >= lo).ok_or("range must be [lo, hi] with lo <= hi")?;
                DimRange { lo: lo as u64, hi: hi as u64 }
            }
            _ => return Err("each dimension is a positive integer or a [lo, hi] range".into()),
        };
    }
    Ok(out)
}

fn param(v: &Value) -> Result<ParamSpec, String> {
    let t = v.as_table().ok_or("expected a table like { value = 1 } or { dtype = \"f32\", len = 16 }")?;
    if t.contains_key("dtype") || t.contains_key("len") || t.contains_key("assume") {
        let dtype = match t.get("dtype") {
            Some(d) => Some(d.as_str().and_then(DType::parse).ok_or("unknown dtype (f16 bf16 f32 f64 i8 u8 i16 u16 i32 u32 i64 u64)")?),
            None => None,
        };
        let len = match t.get("len") {
            Some(Value::Integer(n)) if *n >= 0 => Some(Len::Elements(*n as u64)),
            Some(Value::String(s)) => Some(Len::Param(s.clone())),
            Some(_) => return Err("`len` is a number of elements or the name of a scalar parameter".into()),
            None => None,
        };
        let mut assume = Vec::new();
        if let Some(a) = t.get("assume") {
            for item in a.as_array().ok_or("`assume` is a list of strings")? {
                let s = item.as_str().ok_or("`assume` is a list of strings")?;
                assume.push(assumption(s)?);
            }
        }
        for key in t.keys() {
            if !matches!(key.as_str(), "dtype" | "len" | "assume") {
                return Err(format!("unknown key `{key}` for a buffer (expected dtype, len, assume)"));
            }
        }
        return Ok(ParamSpec::Buffer { dtype, len, assume });
    }
    let value = match t.get("value") {
        Some(Value::Integer(n)) => Some(Scalar::Int(*n as i128)),
        Some(Value::Float(f)) => Some(Scalar::Float(*f)),
        Some(Value::Boolean(b)) => Some(Scalar::Int(*b as i128)),
        Some(_) => return Err("`value` must be a number".into()),
        None => None,
    };
    let range = match t.get("range") {
        Some(Value::Array(r)) if r.len() == 2 => {
            let lo = r[0].as_integer().ok_or("range bounds must be integers")?;
            let hi = r[1].as_integer().ok_or("range bounds must be integers")?;
            if lo > hi {
                return Err("range must be [lo, hi] with lo <= hi".into());
            }
            Some((lo as i128, hi as i128))
        }
        Some(_) => return Err("`range` is [lo, hi]".into()),
        None => None,
    };
    for key in t.keys() {
        if !matches!(key.as_str(), "value" | "range") {
            return Err(format!("unknown key `{key}` for a scalar (expected value or range)"));
        }
    }
    Ok(ParamSpec::Scalar { value, range })
}

fn assumption(s: &str) -> Result<Assumption, String> {
    let s = s.trim();
    if s == "injective" {
        return Ok(Assumption::Injective);
    }
    if let Some(args) = s.strip_prefix("in_range(").and_then(|r| r.strip_suffix(')')) {
        let parts: Vec<&str> = args.split(',').map(str::trim).collect();
        if let [lo, hi] = parts[..] {
            let lo: i64 = lo.parse().map_err(|_| format!("bad bound `{lo}`"))?;
            let hi: i64 = hi.parse().map_err(|_| format!("bad bound `{hi}`"))?;
            return Ok(Assumption::InRange(lo, hi));
        }
    }
    Err(format!("unknown assumption `{s}` (expected \"injective\" or \"in_range(lo, hi)\")"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_kernel() {
        let text = r#"
[kernel.k]
grid = [64, [1, 8]]
block = [256]
[kernel.k.params]
n = { value = 16384 }
alpha = { value = 2.5 }
m = { range = [1, 100] }
x = { dtype = "f32", len = "n" }
slots = { dtype = "i64", len = 16, assume = ["injective", "in_range(0, 4096)"] }
"#;
        let i = parse_lark_toml("lark.toml", text).unwrap();
        let k = i.kernel("k").unwrap();
        assert_eq!(k.grid.unwrap()[1], DimRange { lo: 1, hi: 8 });
        assert_eq!(k.block.unwrap()[0].value(), Some(256));
        assert_eq!(k.params["n"], ParamSpec::Scalar { value: Some(Scalar::Int(16384)), range: None });
        assert_eq!(
            k.params["slots"],
            ParamSpec::Buffer { dtype: Some(DType::I64), len: Some(Len::Elements(16)), assume: vec![Assumption::Injective, Assumption::InRange(0, 4096)] }
        );
    }

    #[test]
    fn errors_name_the_place() {
        let e = parse_lark_toml("x/lark.toml", "[kernel.k]\nblock = [2048]\n").unwrap_err();
        assert!(e.to_string().contains("1 to 1024"), "{e}");
        let e = parse_lark_toml("x/lark.toml", "[kernel.k.params]\nx = { dtype = \"f33\" }\n").unwrap_err();
        assert!(e.to_string().contains("kernel.k.params.x: unknown dtype"), "{e}");
        let e = parse_lark_toml("x/lark.toml", "[kernel.k\n").unwrap_err();
        assert!(e.to_string().starts_with("x/lark.toml:"), "{e}");
    }
}
