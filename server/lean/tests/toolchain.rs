//! Toolchain detection against stand-in `lean`/`lake`/`elan` executables (shell scripts that
//! answer `--version` like the real tools), so that detection, version parsing and the mismatch
//! and not-found errors are exercised on every machine. Whether the real toolchain works is
//! `tests/lean_build.rs`'s business.

use lean::toolchain::{detect_with_path, pinned_toolchain, ToolchainError};
use std::path::{Path, PathBuf};

/// A fresh directory with executable scripts `name` printing `output`.
fn fake_tools(tag: &str, tools: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-fake-lean-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, output) in tools {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '{output}'\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

fn pinned_version() -> String {
    pinned_toolchain(&lean::library_dir()).unwrap().trim_start_matches("leanprover/lean4:v").to_string()
}

#[test]
fn the_library_pins_a_release_with_core_rat_and_grind() {
    let pinned = pinned_toolchain(&lean::library_dir()).unwrap();
    assert_eq!(pinned, "leanprover/lean4:v4.24.0");
}

#[test]
fn detects_matching_tools() {
    let v = pinned_version();
    let dir = fake_tools(
        "ok",
        &[
            ("lean", &format!("Lean (version {v}, x86_64-unknown-linux-gnu, commit 0000, Release)")),
            ("lake", &format!("Lake version 5.0.0-src (Lean version {v})")),
            ("elan", "elan 4.1.2 (58e8d545e 2025-05-26)"),
        ],
    );
    let tc = detect_with_path(&lean::library_dir(), dir.as_os_str()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tc.lean_version, v);
    assert_eq!(tc.lean.path, dir.join("lean"));
    assert_eq!(tc.lake.version_line, format!("Lake version 5.0.0-src (Lean version {v})"));
    assert_eq!(tc.elan.as_ref().map(|e| e.version_line.as_str()), Some("elan 4.1.2 (58e8d545e 2025-05-26)"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn reports_a_version_mismatch() {
    let dir = fake_tools("old", &[("lean", "Lean (version 4.9.0, x86_64-unknown-linux-gnu, Release)"), ("lake", "Lake version 5.0.0")]);
    match detect_with_path(&lean::library_dir(), dir.as_os_str()) {
        Err(e @ ToolchainError::VersionMismatch { .. }) => assert_eq!(
            e.to_string(),
            "Lean 4.9.0 found, but the library is pinned to leanprover/lean4:v4.24.0 (lean/lean-toolchain); run `elan toolchain install leanprover/lean4:v4.24.0`"
        ),
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn reports_a_missing_toolchain_with_the_install_command() {
    let empty = fake_tools("none", &[]);
    match detect_with_path(&lean::library_dir(), empty.as_os_str()) {
        Err(e @ ToolchainError::NotFound { .. }) => {
            assert_eq!(e.to_string(), "Lean toolchain not found: install elan and run `elan toolchain install leanprover/lean4:v4.24.0` (lean is not on PATH)")
        }
        other => panic!("{other:?}"),
    }
    let only_lean = fake_tools("onlylean", &[("lean", "Lean (version 4.24.0)")]);
    assert!(matches!(detect_with_path(&lean::library_dir(), only_lean.as_os_str()), Err(ToolchainError::NotFound { missing: "lake", .. })));
    std::fs::remove_dir_all(empty).unwrap();
    std::fs::remove_dir_all(only_lean).unwrap();
}

#[test]
fn a_bad_toolchain_file_is_a_typed_error() {
    let dir = std::env::temp_dir().join(format!("lark-bad-toolchain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lean-toolchain"), "stable\n").unwrap();
    assert!(matches!(pinned_toolchain(&dir), Err(ToolchainError::BadToolchainFile { .. })));
    assert!(matches!(pinned_toolchain(Path::new("/nonexistent/lark")), Err(ToolchainError::Io { .. })));
    std::fs::remove_dir_all(dir).unwrap();
}
