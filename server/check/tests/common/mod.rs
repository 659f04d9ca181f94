//! What the confirmation tests share: checking one kernel of a `.ptx`/`.cu` pair the way
//! `lark check` does (the scoped check, with both confirmations), with or without a lark.toml.
// Each test binary that includes this module uses some of its helpers.
#![allow(dead_code)]

use check::{check_kernel_scoped, KernelReport, Options, Solver, Sources};
use std::path::{Path, PathBuf};

/// Checks kernel `name` of `dir/name.ptx` (its `.cu` gives the parameter names), under the
/// lark.toml text `toml` if any.
pub fn check(dir: &Path, name: &str, toml: Option<&str>) -> KernelReport {
    check_with(dir, name, toml, &Options::default())
}

/// [`check`] with options of its own.
pub fn check_with(dir: &Path, name: &str, toml: Option<&str>, opts: &Options) -> KernelReport {
    check_kernel_in(dir, name, name, toml, opts)
}

/// [`check_with`] for a kernel whose name is not its file's (a mangled C++ name).
pub fn check_kernel_in(dir: &Path, stem: &str, name: &str, toml: Option<&str>, opts: &Options) -> KernelReport {
    let text = std::fs::read_to_string(dir.join(format!("{stem}.ptx"))).unwrap();
    let cu = std::fs::read_to_string(dir.join(format!("{stem}.cu"))).unwrap();
    let parsed = ptx::parse(&text);
    let index = ptx::LineIndex::new(&text);
    let (_, lowered) = model::lower_module(&parsed.module).into_iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no kernel {name} in {stem}.ptx"));
    let k = lowered.unwrap();
    let src = Sources {
        ptx: &text,
        index: &index,
        cu_file: Some(format!("{stem}.cu")),
        param_names: spec::cu_param_names(&cu, name),
        field_names: Default::default(),
    };
    let iface = toml.map(|t| spec::parse_lark_toml("lark.toml", t).unwrap());
    let spec = iface.as_ref().and_then(|i| i.kernel(name));
    check_kernel_scoped(&k, spec, &src, opts, &mut Solver::new())
}

/// `server/check/tests/fixtures`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}
