//! Finding the CUDA compiler and making sure it is one.
//!
//! A program is taken for a CUDA compiler only when its `--version` names clang or nvcc: a
//! `--compiler /bin/true` or `/bin/ls` runs fine and would otherwise "compile" into nonsense.
//! Programs that answer are remembered (by path) so a compilation costs one process, not two.

use crate::process::{self, RunError};
use crate::{CompileError, Compiler, CompilerKind};
use std::collections::HashMap;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

/// How long `--version` may take.
const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// What running `--version` told about a program.
enum Probe {
    Compiler(CompilerKind),
    /// It cannot be run at all.
    Absent,
    /// It runs, but it is not a CUDA compiler (what it said, in brief).
    NotCuda(String),
}

fn probe(program: &str) -> Probe {
    let mut cmd = Command::new(program);
    cmd.arg("--version");
    let out = match process::run(cmd, PROBE_LIMIT) {
        Ok(out) => out,
        Err(RunError::Spawn(_) | RunError::Wait(_)) => return Probe::Absent,
        Err(RunError::Timeout) => return Probe::NotCuda(format!("`--version` did not finish within {PROBE_LIMIT:?}")),
    };
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    match kind_from_version(&text) {
        Some(kind) if out.status.success() => Probe::Compiler(kind),
        _ => {
            let first = text.lines().map(str::trim).find(|l| !l.is_empty());
            let said = match first {
                Some(l) => format!("`--version` printed `{}`", crate::diagnostics::elide_identifiers(l)),
                None if out.status.success() => "`--version` printed nothing".to_string(),
                None => format!("`--version` failed ({})", out.status),
            };
            Probe::NotCuda(said)
        }
    }
}

/// clang (`clang version 19.1.7`, `Debian clang version ...`, `Apple clang version ...`) or nvcc
/// (`Cuda compilation tools, release 12.4`).
fn kind_from_version(text: &str) -> Option<CompilerKind> {
    let t = text.to_ascii_lowercase();
    if t.contains("cuda compilation tools") || t.contains("nvcc: nvidia") {
        Some(CompilerKind::Nvcc)
    } else if t.contains("clang version") {
        Some(CompilerKind::Clang)
    } else {
        None
    }
}

static KNOWN: Mutex<Option<HashMap<String, CompilerKind>>> = Mutex::new(None);

fn known(program: &str) -> Option<CompilerKind> {
    KNOWN.lock().unwrap_or_else(|p| p.into_inner()).as_ref()?.get(program).cloned()
}

fn remember(program: &str, kind: CompilerKind) {
    KNOWN.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(HashMap::new).insert(program.to_string(), kind);
}

/// Finds the compiler: the configured one, else clang-19, clang, nvcc on PATH. A configured
/// program that runs but is not a CUDA compiler is an error of its own.
pub fn find_compiler(configured: Option<&str>) -> Result<Compiler, CompileError> {
    let check = |p: &str| -> Probe {
        match known(p) {
            Some(kind) => Probe::Compiler(kind),
            None => {
                let r = probe(p);
                if let Probe::Compiler(kind) = &r {
                    remember(p, kind.clone());
                }
                r
            }
        }
    };
    if let Some(p) = configured.filter(|p| !p.is_empty()) {
        return match check(p) {
            Probe::Compiler(kind) => Ok(Compiler { kind, program: p.to_string() }),
            Probe::Absent => Err(CompileError::Missing { tried: format!("`{p}` (configured)") }),
            Probe::NotCuda(said) => Err(CompileError::NotACompiler { program: p.to_string(), why: said }),
        };
    }
    let candidates = ["clang-19", "clang", "nvcc", "/usr/local/cuda/bin/nvcc"];
    for c in candidates {
        if let Probe::Compiler(kind) = check(c) {
            return Ok(Compiler { kind, program: c.to_string() });
        }
    }
    Err(CompileError::Missing { tried: candidates.join(", ") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_name_the_compiler() {
        assert_eq!(kind_from_version("Debian clang version 19.1.7 (3+b1)\nTarget: x86_64"), Some(CompilerKind::Clang));
        assert_eq!(kind_from_version("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4"), Some(CompilerKind::Nvcc));
        assert_eq!(kind_from_version("ls (GNU coreutils) 9.1"), None);
        assert_eq!(kind_from_version(""), None);
    }

    #[test]
    fn programs_that_are_not_cuda_compilers_say_so() {
        for (p, said) in [("/bin/true", "`--version` printed `true (GNU coreutils)"), ("/bin/ls", "`--version` printed `ls (GNU coreutils)")] {
            match find_compiler(Some(p)) {
                Err(CompileError::NotACompiler { program, why }) => {
                    assert_eq!(program, p);
                    assert!(why.starts_with(said), "{why}");
                }
                other => panic!("{p}: {other:?}"),
            }
        }
        assert!(matches!(find_compiler(Some("/nonexistent/clang-99")), Err(CompileError::Missing { .. })));
        assert!(matches!(find_compiler(Some("clang-19")), Ok(Compiler { kind: CompilerKind::Clang, .. })));
    }
}
