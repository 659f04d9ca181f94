//! The kernel interface a kernel is checked against: launch geometry, scalar parameter values or
//! ranges, buffer element types and lengths, and assumptions about index buffers.
//!
//! It is read from a `lark.toml` next to the sources (see the README, "The interface file") or
//! from SentryWard's kernel-input JSON. Everything is optional: a missing geometry is symbolic
//! within hardware limits, a missing buffer length means the buffer is unbounded.

mod cu_signature;
mod lark_toml;
mod sentryward;

pub use cu_signature::cu_param_names;
pub use lark_toml::parse_lark_toml;
pub use sentryward::parse_sentryward_json;

use std::collections::BTreeMap;

/// An inclusive range of one launch dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimRange {
    pub lo: u64,
    pub hi: u64,
}

impl DimRange {
    pub fn exact(v: u64) -> DimRange {
        DimRange { lo: v, hi: v }
    }

    pub fn value(self) -> Option<u64> {
        (self.lo == self.hi).then_some(self.lo)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i128),
    Float(f64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Len {
    Elements(u64),
    /// The value of a scalar parameter (e.g. `n`).
    Param(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F16,
    BF16,
    F32,
    F64,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
}

impl DType {
    pub fn parse(s: &str) -> Option<DType> {
        Some(match s.to_ascii_lowercase().as_str() {
            "f16" | "half" | "float16" => DType::F16,
            "bf16" | "bfloat16" => DType::BF16,
            "f32" | "float" | "float32" => DType::F32,
            "f64" | "double" | "float64" => DType::F64,
            "i8" | "s8" | "int8" | "b8" => DType::I8,
            "u8" | "uint8" => DType::U8,
            "i16" | "s16" | "int16" | "b16" => DType::I16,
            "u16" | "uint16" => DType::U16,
            "i32" | "s32" | "int" | "int32" | "b32" => DType::I32,
            "u32" | "uint32" | "unsigned" => DType::U32,
            "i64" | "s64" | "int64" | "long" | "b64" => DType::I64,
            "u64" | "uint64" => DType::U64,
            _ => return None,
        })
    }

    pub fn bytes(self) -> u64 {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Assumption {
    /// Distinct indices hold distinct values (a slot mapping that never repeats).
    Injective,
    /// Every element lies in `lo..hi` (half-open).
    InRange(i64, i64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamSpec {
    Scalar { value: Option<Scalar>, range: Option<(i128, i128)> },
    Buffer { dtype: Option<DType>, len: Option<Len>, assume: Vec<Assumption> },
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelSpec {
    pub grid: Option<[DimRange; 3]>,
    pub block: Option<[DimRange; 3]>,
    /// By the name used in the interface file: a `.cu` parameter name, a PTX parameter name, or
    /// `param_N`.
    pub params: BTreeMap<String, ParamSpec>,
    pub dynamic_shared_bytes: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interface {
    pub kernels: BTreeMap<String, KernelSpec>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpecError {
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

impl Interface {
    /// The spec of a kernel, by its PTX name or (for C++ kernels) its unmangled name.
    pub fn kernel(&self, ptx_name: &str) -> Option<&KernelSpec> {
        self.kernels
            .get(ptx_name)
            .or_else(|| self.kernels.get(&unmangled_name(ptx_name)?))
            // A SentryWard input given without a kernel name applies to every kernel.
            .or_else(|| self.kernels.get("*"))
    }
}

/// The interface file for a source file: the nearest `lark.toml` in its directory or above,
/// stopping at a repository root (a directory with `.git`).
pub fn find_lark_toml(file: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        let candidate = d.join("lark.toml");
        if candidate.is_file() {
            return Some(candidate);
        }
        if d.join(".git").exists() {
            return None;
        }
        dir = d.parent();
    }
    None
}

/// The `.cu` a PTX file was compiled from, for its parameter names: the first `.file` naming an
/// existing `.cu`, relative to the PTX's directory or (for PTX kept in a subfolder such as
/// `build/` or `extra/`) to one of its parents; else `<stem>.cu` beside it.
pub fn find_cu_source(ptx_path: &std::path::Path, ptx_text: &str) -> Option<std::path::PathBuf> {
    let absolute = std::fs::canonicalize(ptx_path).unwrap_or_else(|_| ptx_path.to_path_buf());
    let dir = absolute.parent().unwrap_or(std::path::Path::new("."));
    let names: Vec<&str> =
        ptx_text.lines().filter(|l| l.trim_start().starts_with(".file")).filter_map(|l| l.split('"').nth(1)).filter(|n| n.ends_with(".cu")).collect();
    for name in &names {
        let p = std::path::Path::new(name);
        if p.is_absolute() && p.is_file() {
            return Some(p.to_path_buf());
        }
        for base in dir.ancestors().take(4) {
            let candidate = base.join(p);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    let p = ptx_path.with_extension("cu");
    p.is_file().then_some(p)
}

/// `_Z13scale_inplaceIfEvPT_S0_i` → `scale_inplace`: the identifier of an Itanium-mangled name.
pub fn unmangled_name(name: &str) -> Option<String> {
    let rest = name.strip_prefix("_Z")?;
    let rest = rest.strip_prefix('N').unwrap_or(rest);
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let len: usize = digits.parse().ok()?;
    rest.get(digits.len()..digits.len() + len).map(str::to_string)
}

impl Interface {
    /// Fills what this interface leaves open from `other` (e.g. buffer lengths and assumptions
    /// from a `lark.toml` under a SentryWard input that has none): per kernel, parameters this
    /// one does not describe, and buffer details this one lacks.
    pub fn merge_missing(&mut self, other: &Interface) {
        for (name, spec) in self.kernels.iter_mut() {
            let Some(o) = other.kernel(name) else { continue };
            spec.grid = spec.grid.or(o.grid);
            spec.block = spec.block.or(o.block);
            spec.dynamic_shared_bytes = spec.dynamic_shared_bytes.or(o.dynamic_shared_bytes);
            for (p, ps) in &o.params {
                match (spec.params.get_mut(p), ps) {
                    // Buffers only: scalar values stay those of this interface.
                    (None, ParamSpec::Buffer { .. }) => {
                        spec.params.insert(p.clone(), ps.clone());
                    }
                    (Some(ParamSpec::Buffer { dtype, len, assume }), ParamSpec::Buffer { dtype: d2, len: l2, assume: a2 }) => {
                        *dtype = dtype.or(*d2);
                        if len.is_none() {
                            *len = l2.clone();
                        }
                        if assume.is_empty() {
                            *assume = a2.clone();
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

impl KernelSpec {
    /// Looks a parameter up by the names it can go by: `names` lists the candidates for one PTX
    /// parameter (its `.cu` name, its PTX name, `param_N`).
    pub fn param(&self, names: &[&str]) -> Option<&ParamSpec> {
        names.iter().find_map(|n| self.params.get(*n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmangles_simple_names() {
        assert_eq!(unmangled_name("_Z13scale_inplaceIfEvPT_S0_i").as_deref(), Some("scale_inplace"));
        assert_eq!(unmangled_name("_Z9block_maxILi256EEvPKfPfi").as_deref(), Some("block_max"));
        assert_eq!(unmangled_name("plain"), None);
    }
}
