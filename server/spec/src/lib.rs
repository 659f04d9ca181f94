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
mod cu_struct;
mod edit;
mod error;
mod fields;
mod interface;
mod json_index;
mod lark_toml;
mod launch_sites;
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
pub use cu_struct::{struct_layout, FieldKind, FieldLayout, StructLayout};
pub use edit::{add_assumption, TomlEdit};
pub use error::{Origin, SpecError};
pub use fields::{field_key, field_names, named_field_key, resolve_field_names};
pub use interface::{Assumption, DType, Dim, DimRange, Interface, KernelSpec, Len, ParamSpec, Scalar};
pub use lark_toml::{parse_lark_toml, parse_lark_toml_recovering};
pub use launch_sites::{inferred_interface, launch_sites, LaunchSite};
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

/// `_Z13scale_inplaceIfEvPT_S0_i` → `scale_inplace`, `_ZN2ns6kernelEv` → `kernel`: the
/// identifier of an Itanium-mangled function name, as the `.cu` source writes it at its
/// definition (no namespace, no template arguments). `None` for a name that is not mangled.
pub fn unmangled_name(name: &str) -> Option<String> {
    let qualified = qualified_name(name)?;
    Some(last_component(&qualified).to_string())
}

/// `_ZN2ns6kernelIfEEvPT_` → `ns::kernel`: the qualified name of a mangled function, without
/// template arguments or parameters (what a `[kernel."ns::kernel"]` section names).
pub fn qualified_name(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    let options = cpp_demangle::DemangleOptions::new().no_params().no_return_type();
    let text = symbol.demangle_with_options(&options).ok()?;
    let plain = strip_template_arguments(&text);
    (!plain.is_empty()).then_some(plain)
}

/// The names an interface section may use for a kernel, most specific first: the PTX name,
/// then for C++ kernels the qualified and the plain name.
pub fn kernel_aliases(ptx_name: &str) -> Vec<String> {
    let mut names = vec![ptx_name.to_string()];
    if let Some(q) = qualified_name(ptx_name) {
        let plain = last_component(&q).to_string();
        names.push(q);
        if !names.contains(&plain) {
            names.push(plain);
        }
    }
    names
}

/// `a::b::c` → `c` (a `::` inside template arguments is gone by then).
fn last_component(qualified: &str) -> &str {
    qualified.rsplit("::").next().unwrap_or(qualified)
}

/// Removes every `<...>` (balanced), so `ns::kernel<float, 4>` is `ns::kernel`; an
/// `operator<` keeps its name.
fn strip_template_arguments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '<' if !out.ends_with("operator") => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
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

    #[test]
    fn unmangles_namespaced_and_anonymous_names() {
        assert_eq!(unmangled_name("_ZN2ns6kernelEv").as_deref(), Some("kernel"));
        assert_eq!(qualified_name("_ZN2ns6kernelEv").as_deref(), Some("ns::kernel"));
        assert_eq!(qualified_name("_ZN4vllm15rms_norm_kernelIfLi8EEEvPT_PKS1_S4_fii").as_deref(), Some("vllm::rms_norm_kernel"));
        assert_eq!(unmangled_name("_ZN12_GLOBAL__N_16kernelEPf").as_deref(), Some("kernel"));
        assert_eq!(kernel_aliases("_ZN2ns6kernelEv"), vec!["_ZN2ns6kernelEv", "ns::kernel", "kernel"]);
        assert_eq!(kernel_aliases("plain"), vec!["plain"]);
        // Not a valid mangling: no name rather than a wrong one.
        assert_eq!(unmangled_name("_Zgarbage"), None);
    }
}
