//! Reading what `lark check` is pointed at: PTX or CUDA files, and the interface that goes with
//! them (`--interface lark.toml`, `--input sentryward.json`, or a `lark.toml` found next to the
//! file or in a parent directory).

use std::path::{Path, PathBuf};

/// A file ready for the engine: its PTX text and, when known, its CUDA source.
pub struct Loaded {
    pub ptx: String,
    pub cu_text: Option<String>,
    /// Diagnostics that make the file unusable (compile errors), as `line:col: severity: message`.
    pub compile_errors: Vec<(u32, u32, String, String)>,
    /// The PTX bytes were not valid UTF-8 from this byte on (the rest is still checked, with
    /// the bad bytes replaced).
    pub invalid_utf8_at: Option<usize>,
}

pub fn load(path: &Path, compile: &cuda::CompileOptions) -> Result<Loaded, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let is_cu = path.extension().is_some_and(|e| e == "cu" || e == "cuh");
    if is_cu {
        let text = String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))?;
        return match cuda::compile(path, &text, compile) {
            Ok(ptx) => Ok(Loaded { ptx, cu_text: Some(text), compile_errors: vec![], invalid_utf8_at: None }),
            Err(cuda::CompileError::Failed { diagnostics, stderr }) => {
                let mut errs: Vec<_> = diagnostics.into_iter().map(|d| (d.line, d.column, d.severity, d.message)).collect();
                if errs.is_empty() {
                    errs.push((1, 1, "error".into(), stderr.lines().next().unwrap_or("compilation failed").to_string()));
                }
                Ok(Loaded { ptx: String::new(), cu_text: Some(text), compile_errors: errs, invalid_utf8_at: None })
            }
            Err(e) => Err(e.to_string()),
        };
    }
    let invalid_utf8_at = std::str::from_utf8(&bytes).err().map(|e| e.valid_up_to());
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let cu_text = spec::find_cu_source(path, &text).and_then(|p| std::fs::read_to_string(p).ok());
    Ok(Loaded { ptx: text, cu_text, compile_errors: vec![], invalid_utf8_at })
}

/// The interface for a file: explicit, else the nearest `lark.toml` up the directory tree.
pub fn interface_for(path: &Path, explicit: Option<&str>, sentryward: Option<&str>, kernel: Option<&str>) -> Result<Option<spec::Interface>, String> {
    let toml = lark_toml(path, explicit)?;
    if let Some(json) = sentryward {
        let text = std::fs::read_to_string(json).map_err(|e| format!("{json}: {e}"))?;
        // The JSON describes one kernel; without `entry` or --kernel it applies to every kernel.
        let name = kernel.unwrap_or("*");
        let mut iface = spec::parse_sentryward_json(json, &text, name).map_err(|e| e.to_string())?;
        // SentryWard's format has no buffer lengths or assumptions: take them from lark.toml.
        if let Some(t) = &toml {
            iface.merge_missing(t);
        }
        return Ok(Some(iface));
    }
    Ok(toml)
}

fn lark_toml(path: &Path, explicit: Option<&str>) -> Result<Option<spec::Interface>, String> {
    let file = match explicit {
        Some(f) => PathBuf::from(f),
        None => match find_upwards(path) {
            Some(f) => f,
            None => return Ok(None),
        },
    };
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    spec::parse_lark_toml(&file.display().to_string(), &text).map(Some).map_err(|e| e.to_string())
}

fn find_upwards(path: &Path) -> Option<PathBuf> {
    spec::find_lark_toml(&std::fs::canonicalize(path).ok()?)
}
