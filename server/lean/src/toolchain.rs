//! Finding the Lean toolchain: `lean` and `lake` on `PATH` (and `elan`, which manages them), their
//! versions, and whether they are the release pinned in `lean/lean-toolchain`.
//!
//! A missing toolchain is not a kernel finding: callers turn [`ToolchainError::NotFound`] into
//! "uncertified (Lean toolchain not found)" and tests that need Lean print it and return.

use crate::runner::{run_with_timeout, RunnerError};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The file that pins the toolchain in a Lake package.
pub const TOOLCHAIN_FILE: &str = "lean-toolchain";

/// How long a `--version` may take (elan may be resolving the pinned toolchain).
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the Lean toolchain cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ToolchainError {
    #[error("Lean toolchain not found: install elan and run `elan toolchain install {pinned}` ({missing} is not on PATH)")]
    NotFound { pinned: String, missing: &'static str },
    #[error("Lean {found} found, but the library is pinned to {pinned} (lean/{TOOLCHAIN_FILE}); run `elan toolchain install {pinned}`")]
    VersionMismatch { found: String, pinned: String },
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: expected `leanprover/lean4:vX.Y.Z`, found `{found}`")]
    BadToolchainFile { path: PathBuf, found: String },
    #[error("`{tool} --version` failed: {message}")]
    VersionQuery { tool: &'static str, message: String },
}

/// A tool found on `PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    pub path: PathBuf,
    /// The first line of its `--version` output.
    pub version_line: String,
}

/// A usable Lean toolchain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    pub lean: Tool,
    pub lake: Tool,
    pub elan: Option<Tool>,
    /// The Lean version (`4.24.0`), as `lean --version` reports it.
    pub lean_version: String,
    /// The pinned toolchain (`leanprover/lean4:v4.24.0`).
    pub pinned: String,
}

/// The pinned toolchain of the Lake package at `lean_dir`.
pub fn pinned_toolchain(lean_dir: &Path) -> Result<String, ToolchainError> {
    let path = lean_dir.join(TOOLCHAIN_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| ToolchainError::Io { path: path.clone(), source })?;
    let pinned = text.trim().to_string();
    if pinned_version(&pinned).is_none() {
        return Err(ToolchainError::BadToolchainFile { path, found: pinned });
    }
    Ok(pinned)
}

/// `leanprover/lean4:v4.24.0` → `4.24.0`.
pub fn pinned_version(pinned: &str) -> Option<&str> {
    let v = pinned.strip_prefix("leanprover/lean4:v")?;
    let ok = !v.is_empty() && v.split(['.', '-']).next().is_some_and(|major| major.chars().all(|c| c.is_ascii_digit()));
    ok.then_some(v)
}

/// The version in `lean --version` output: `Lean (version 4.24.0, x86_64-unknown-linux-gnu, …)`.
pub fn parse_lean_version(output: &str) -> Option<String> {
    let rest = output.split("version ").nth(1)?;
    let v: String = rest.chars().take_while(|c| !matches!(c, ',' | ' ' | ')' | '\n')).collect();
    (!v.is_empty()).then_some(v)
}

/// Finds an executable on a `PATH`-style list of directories.
pub fn find_on_path(name: &str, path_var: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path_var).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Detects the toolchain on the current `PATH`, for the Lake package at `lean_dir`.
pub fn detect(lean_dir: &Path) -> Result<Toolchain, ToolchainError> {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    detect_with_path(lean_dir, &path_var)
}

/// Detects the toolchain on the given `PATH` value. The versions are asked for inside
/// `lean_dir`, so that elan answers for the pinned toolchain.
pub fn detect_with_path(lean_dir: &Path, path_var: &OsStr) -> Result<Toolchain, ToolchainError> {
    let pinned = pinned_toolchain(lean_dir)?;
    let lean_path = find_on_path("lean", path_var).ok_or_else(|| ToolchainError::NotFound { pinned: pinned.clone(), missing: "lean" })?;
    let lake_path = find_on_path("lake", path_var).ok_or_else(|| ToolchainError::NotFound { pinned: pinned.clone(), missing: "lake" })?;
    let elan = find_on_path("elan", path_var).map(|p| version_of("elan", &p, lean_dir, path_var).map(|v| Tool { path: p, version_line: v }));
    let elan = match elan {
        Some(Ok(t)) => Some(t),
        // elan is optional: a broken elan is reported only through `lean` itself.
        Some(Err(_)) | None => None,
    };
    let lean_line = version_of("lean", &lean_path, lean_dir, path_var)?;
    let lake_line = version_of("lake", &lake_path, lean_dir, path_var)?;
    let lean_version =
        parse_lean_version(&lean_line).ok_or_else(|| ToolchainError::VersionQuery { tool: "lean", message: format!("unexpected output `{lean_line}`") })?;
    let want = pinned_version(&pinned).unwrap_or_default();
    if lean_version != want {
        return Err(ToolchainError::VersionMismatch { found: lean_version, pinned });
    }
    Ok(Toolchain {
        lean: Tool { path: lean_path, version_line: lean_line },
        lake: Tool { path: lake_path, version_line: lake_line },
        elan,
        lean_version,
        pinned,
    })
}

fn version_of(tool: &'static str, exe: &Path, dir: &Path, path_var: &OsStr) -> Result<String, ToolchainError> {
    let mut cmd = Command::new(exe);
    cmd.arg("--version").current_dir(dir).env("PATH", path_var);
    let out = run_with_timeout(cmd, VERSION_TIMEOUT).map_err(|e: RunnerError| ToolchainError::VersionQuery { tool, message: e.to_string() })?;
    if out.timed_out {
        return Err(ToolchainError::VersionQuery { tool, message: format!("no answer within {} s", VERSION_TIMEOUT.as_secs()) });
    }
    if out.status != Some(0) {
        let why = out.stderr.lines().next().unwrap_or("").to_string();
        return Err(ToolchainError::VersionQuery { tool, message: format!("exit status {:?}: {why}", out.status) });
    }
    Ok(out.stdout.lines().next().unwrap_or("").trim().to_string())
}

/// The directories of the current `PATH` with `extra` in front (for tests and callers that
/// install a toolchain in a known place).
pub fn path_with(extra: &Path) -> OsString {
    let mut dirs = vec![extra.to_path_buf()];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(pinned_version("leanprover/lean4:v4.24.0"), Some("4.24.0"));
        assert_eq!(pinned_version("leanprover/lean4:v4.25.0-rc1"), Some("4.25.0-rc1"));
        assert_eq!(pinned_version("stable"), None);
        assert_eq!(parse_lean_version("Lean (version 4.24.0, x86_64-unknown-linux-gnu, commit 0123, Release)").as_deref(), Some("4.24.0"));
        assert_eq!(parse_lean_version("nothing here"), None);
    }
}
