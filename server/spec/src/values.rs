//! Fixed contents of index buffers: integers given in full (`values = [...]`, a `values_file`
//! holding a JSON array, or SentryWard's `shape_arrays`). Nested arrays are flattened in row-major
//! order; every element must fit the buffer's element type.

use crate::error::SpecError;
use crate::interface::DType;
use crate::json_index::JsonDoc;
use serde_json::Value;
use std::path::Path;

/// Reads a JSON file holding an array of integers (nested arrays flattened). Errors point into
/// the JSON file.
pub(crate) fn read_values_file(path: &Path) -> Result<Vec<i128>, Result<SpecError, String>> {
    let display = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Err(format!("cannot read `{display}`: {}", io_reason(&e))))?;
    let doc = JsonDoc::parse(&display, &text).map_err(Ok)?;
    if !doc.value.is_array() {
        return Err(Ok(doc.error("", format!("expected an array of integers, found {}", json_kind(&doc.value)))));
    }
    let mut out = Vec::new();
    flatten_json(&doc.value, "", &mut out).map_err(|(path, found)| Ok(doc.error(&path, format!("expected an integer, found {found}"))))?;
    Ok(out)
}

/// The last part of an I/O error, lowercase ("no such file or directory").
pub(crate) fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    let s = s.split(" (os error").next().unwrap_or(&s);
    let mut c = s.chars();
    c.next().map(|f| f.to_lowercase().chain(c).collect()).unwrap_or_default()
}

/// Appends the integers of a (possibly nested) JSON array; on a non-integer, its path and kind.
pub(crate) fn flatten_json(v: &Value, path: &str, out: &mut Vec<i128>) -> Result<(), (String, &'static str)> {
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten_json(item, &format!("{path}[{i}]"), out)?;
            }
            Ok(())
        }
        Value::Number(n) if n.is_i64() => {
            out.push(n.as_i64().unwrap_or_default() as i128);
            Ok(())
        }
        Value::Number(n) if n.is_u64() => {
            out.push(n.as_u64().unwrap_or_default() as i128);
            Ok(())
        }
        other => Err((path.to_string(), json_kind(other))),
    }
}

pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks that fixed contents fit `dtype`: the index of the first element that does not, and why.
pub fn check_values_fit(values: &[i128], dtype: DType) -> Result<(), (Option<usize>, String)> {
    let Some((lo, hi)) = dtype.int_range() else {
        return Err((None, format!("fixed contents are integers, but the buffer's dtype is {dtype}")));
    };
    match values.iter().position(|v| *v < lo || *v > hi) {
        Some(i) => Err((Some(i), format!("element {i} is {}, outside {dtype} ({lo} to {hi})", values[i]))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattens_nested_arrays_in_row_major_order() {
        let v: Value = serde_json::from_str("[[1, 2], [3, [4, 5]], 6]").unwrap();
        let mut out = Vec::new();
        flatten_json(&v, "", &mut out).unwrap();
        assert_eq!(out, vec![1, 2, 3, 4, 5, 6]);
        let bad: Value = serde_json::from_str("[[1, 2.5]]").unwrap();
        assert_eq!(flatten_json(&bad, "", &mut Vec::new()), Err(("[0][1]".to_string(), "a float")));
    }

    #[test]
    fn values_must_fit_the_dtype() {
        assert_eq!(check_values_fit(&[0, 255], DType::U8), Ok(()));
        assert_eq!(check_values_fit(&[0, 256], DType::U8), Err((Some(1), "element 1 is 256, outside u8 (0 to 255)".into())));
        assert_eq!(check_values_fit(&[-1], DType::U32), Err((Some(0), "element 0 is -1, outside u32 (0 to 4294967295)".into())));
        assert_eq!(check_values_fit(&[1], DType::F32), Err((None, "fixed contents are integers, but the buffer's dtype is f32".into())));
        assert!(check_values_fit(&[i64::MIN as i128, i64::MAX as i128], DType::I64).is_ok());
    }
}
