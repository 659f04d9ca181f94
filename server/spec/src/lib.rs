//! The kernel interface a kernel is checked against: launch geometry, scalar parameter values or
//! ranges, buffer element types, lengths and fixed contents, assumptions about index buffers, and
//! the PyTorch reference with its binding.
//!
//! It is read from a `lark.toml` next to the sources (see the README, "The interface file") or
//! from SentryWard's kernel-input JSON (with a peer `reference_binding.json`). Everything is
//! optional: a missing geometry is symbolic within hardware limits, a missing buffer length means
//! the buffer is unbounded. Every fact remembers where it was written ([`Origin`]); every problem
//! is a [`SpecError`] at that place. Sizes may be [`SizeExpr`]essions over scalar parameters;
//! [`KernelSpec::resolve`] makes them concrete. [`KernelSpec::validate`] checks a spec against
//! the kernel's parameters, and [`Interface::merge`] combines the interfaces several sources give.

mod cu_signature;
mod edit;
mod error;
mod interface;
mod json_index;
mod lark_toml;
mod limits;
mod merge;
mod reference;
mod reference_binding;
mod resolve;
mod sections;
mod sentryward;
mod size_expr;
mod validate;
mod values;
mod write_toml;

pub use cu_signature::{cu_param_names, cu_params, CuParam};
pub use edit::{add_assumption, TomlEdit};
pub use error::{Origin, SpecError};
pub use interface::{Assumption, DType, Dim, DimRange, Interface, KernelSpec, Len, ParamSpec, Scalar};
pub use lark_toml::{parse_lark_toml, parse_lark_toml_recovering};
pub use limits::{check_concrete, check_launch, Launch, LimitError, MAX_BLOCK, MAX_GRID, MAX_THREADS_PER_BLOCK};
pub use merge::{MergeNote, SourceKind};
pub use reference::{ArgBinding, ReferenceArg, ReferenceOutput, ReferenceSpec};
pub use reference_binding::parse_reference_binding;
pub use sections::MAX_SOURCE_FILES;
pub use sentryward::{parse_sentryward_json, SENTRYWARD_SCHEMA};
pub use size_expr::{BinOp, EvalError, ExprError, ExprKind, Func, SizeExpr};
pub use validate::ParamNames;
pub use values::check_values_fit;

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
