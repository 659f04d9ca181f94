//! Turning `.cu` text into PTX with line information.
//!
//! clang-19 compiles device code without the CUDA SDK thanks to a small prelude (bundled here)
//! that maps CUDA's builtins onto clang's; nvcc is used instead when it is asked for or is the only
//! compiler present. The text is compiled from memory (an editor's unsaved buffer), written to a
//! private temporary directory under its own file name, so `.file` directives name the user's file.
//! Compiler errors come back as diagnostics on the `.cu` lines.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The prelude for `clang --cuda-device-only -nocudainc`.
pub const PRELUDE: &str = include_str!("cuda_prelude.h");

#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// A compiler to use (`clang-19`, `/usr/local/cuda/bin/nvcc`, ...); `None` finds one.
    pub compiler: Option<String>,
    /// `sm_80` when `None`.
    pub arch: Option<String>,
    pub include_paths: Vec<String>,
    /// `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// Wall-clock limit for one compilation (30 s when `None`).
    pub timeout: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompilerKind {
    Clang,
    Nvcc,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiler {
    pub kind: CompilerKind,
    pub program: String,
}

/// A compiler message on a line of the compiled file (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CuDiagnostic {
    pub line: u32,
    pub column: u32,
    pub severity: String,
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("no CUDA compiler found (tried {tried}); install clang-19 (`apt-get install clang-19`) or set the compiler path")]
    Missing { tried: String },
    #[error("the compiler `{program}` could not be run: {message}")]
    Spawn { program: String, message: String },
    #[error("compilation failed with {} error(s)", diagnostics.iter().filter(|d| d.severity == "error").count().max(1))]
    Failed { diagnostics: Vec<CuDiagnostic>, stderr: String },
    #[error("the compiler did not finish within {0:?}")]
    Timeout(Duration),
    #[error("i/o error: {0}")]
    Io(String),
}

fn runs(program: &str) -> bool {
    Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Finds the compiler: the configured one, else clang-19, clang, nvcc on PATH.
pub fn find_compiler(configured: Option<&str>) -> Result<Compiler, CompileError> {
    let kind_of = |p: &str| {
        if Path::new(p).file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("nvcc")) {
            CompilerKind::Nvcc
        } else {
            CompilerKind::Clang
        }
    };
    if let Some(p) = configured.filter(|p| !p.is_empty()) {
        if runs(p) {
            return Ok(Compiler { kind: kind_of(p), program: p.to_string() });
        }
        return Err(CompileError::Missing { tried: format!("`{p}` (configured)") });
    }
    let candidates = ["clang-19", "clang", "nvcc", "/usr/local/cuda/bin/nvcc"];
    for c in candidates {
        if runs(c) {
            return Ok(Compiler { kind: kind_of(c), program: c.to_string() });
        }
    }
    Err(CompileError::Missing { tried: candidates.join(", ") })
}

/// Compiles the `.cu` text of `path` to PTX.
pub fn compile(path: &Path, text: &str, opts: &CompileOptions) -> Result<String, CompileError> {
    let compiler = find_compiler(opts.compiler.as_deref())?;
    let dir = TempDir::new()?;
    let file_name = path.file_name().map_or_else(|| "kernel.cu".into(), |n| n.to_string_lossy().into_owned());
    let cu = dir.0.join(&file_name);
    std::fs::write(&cu, text).map_err(|e| CompileError::Io(e.to_string()))?;
    let ptx = dir.0.join("out.ptx");
    let arch = opts.arch.clone().unwrap_or_else(|| "sm_80".into());
    let source_dir = path.parent().filter(|p| !p.as_os_str().is_empty()).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let mut cmd = Command::new(&compiler.program);
    match compiler.kind {
        CompilerKind::Clang => {
            let prelude = dir.0.join("lark_cuda_prelude.h");
            std::fs::write(&prelude, PRELUDE).map_err(|e| CompileError::Io(e.to_string()))?;
            cmd.args(["--cuda-device-only", &format!("--cuda-gpu-arch={arch}"), "-nocudainc", "-nocudalib"])
                .args(["-Xclang", "-target-feature", "-Xclang", "+ptx70"])
                .arg("-include")
                .arg(&prelude)
                .args(["-O2", "-gline-tables-only", "-S", "-fno-color-diagnostics"]);
        }
        CompilerKind::Nvcc => {
            cmd.args(["-ptx", "-lineinfo", "-O2", &format!("-arch={arch}")]);
        }
    }
    cmd.arg("-I").arg(&source_dir);
    for i in &opts.include_paths {
        cmd.arg("-I").arg(i);
    }
    for d in &opts.defines {
        cmd.arg(format!("-D{d}"));
    }
    cmd.arg(&file_name).arg("-o").arg(&ptx).current_dir(&dir.0);
    let output = run_with_timeout(cmd, opts.timeout.unwrap_or(Duration::from_secs(30)), &compiler.program)?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        let diagnostics = parse_diagnostics(&stderr, &file_name);
        return Err(CompileError::Failed { diagnostics, stderr });
    }
    std::fs::read_to_string(&ptx).map_err(|e| CompileError::Io(format!("reading the compiler's output: {e}")))
}

fn run_with_timeout(mut cmd: Command, limit: Duration, program: &str) -> Result<std::process::Output, CompileError> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| CompileError::Spawn { program: program.to_string(), message: e.to_string() })?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().map_err(|e| CompileError::Io(e.to_string())),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CompileError::Timeout(limit));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(CompileError::Io(e.to_string())),
        }
    }
}

/// `k.cu:12:5: error: use of undeclared identifier 'x'` (clang) and
/// `k.cu(12): error: identifier "x" is undefined` (nvcc), for lines of `file_name`.
pub fn parse_diagnostics(stderr: &str, file_name: &str) -> Vec<CuDiagnostic> {
    let mut out = Vec::new();
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix(file_name) else { continue };
        let (pos, msg) = if let Some(r) = rest.strip_prefix(':') {
            let mut parts = r.splitn(3, ':');
            let (l, c, m) = (parts.next(), parts.next(), parts.next());
            match (l.and_then(|l| l.parse().ok()), c.and_then(|c| c.parse().ok()), m) {
                (Some(l), Some(c), Some(m)) => ((l, c), m.trim()),
                _ => continue,
            }
        } else if let Some(r) = rest.strip_prefix('(') {
            let Some((l, m)) = r.split_once("):") else { continue };
            match l.parse() {
                Ok(l) => ((l, 1), m.trim()),
                Err(_) => continue,
            }
        } else {
            continue;
        };
        let (severity, message) = match msg.split_once(':') {
            Some((s, m)) if matches!(s.trim(), "error" | "warning" | "note" | "fatal error") => {
                (s.trim().replace("fatal error", "error"), m.trim().to_string())
            }
            _ => ("error".to_string(), msg.to_string()),
        };
        out.push(CuDiagnostic { line: pos.0, column: pos.1, severity, message });
    }
    out
}

/// A private temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, CompileError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("lark-cc-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| CompileError::Io(format!("creating {}: {e}", dir.display())))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_clang_and_nvcc_messages() {
        let clang = "k.cu:13:26: error: use of undeclared identifier 'expf'\n   13 |   x\nother.h:1:1: error: elsewhere\nk.cu:2:1: warning: unused";
        let d = parse_diagnostics(clang, "k.cu");
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].line, d[0].column, d[0].severity.as_str()), (13, 26, "error"));
        assert_eq!(d[0].message, "use of undeclared identifier 'expf'");
        let nvcc = "k.cu(7): error: identifier \"y\" is undefined";
        let d = parse_diagnostics(nvcc, "k.cu");
        assert_eq!((d[0].line, d[0].message.as_str()), (7, "identifier \"y\" is undefined"));
    }

    #[test]
    fn compiles_with_clang_and_keeps_line_info() {
        let src = "extern \"C\" __global__ void k(float* x) {\n  x[threadIdx.x] = 1.0f;\n}\n";
        let ptx = compile(Path::new("dir/k.cu"), src, &CompileOptions::default()).expect("clang-19 is installed by the test script");
        assert!(ptx.contains(".entry k"), "{ptx}");
        assert!(ptx.contains(".loc") && ptx.contains("k.cu"), "{ptx}");
    }

    #[test]
    fn compile_errors_become_diagnostics() {
        let src = "extern \"C\" __global__ void k(float* x) {\n  x[threadIdx.x] = nope;\n}\n";
        match compile(Path::new("k.cu"), src, &CompileOptions::default()) {
            Err(CompileError::Failed { diagnostics, .. }) => {
                assert_eq!(diagnostics[0].line, 2);
                assert!(diagnostics[0].message.contains("nope"));
            }
            other => panic!("expected a compile error, got {other:?}"),
        }
    }

    #[test]
    fn a_missing_compiler_is_a_clear_error() {
        let opts = CompileOptions { compiler: Some("/nonexistent/clang-99".into()), ..Default::default() };
        let e = compile(Path::new("k.cu"), "", &opts).unwrap_err();
        assert!(e.to_string().contains("no CUDA compiler found"), "{e}");
    }
}
