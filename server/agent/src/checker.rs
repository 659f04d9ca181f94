//! Lean as the [`Checker`] of the prove loop and of `lark recheck`: a scratch workspace that
//! requires the library, built once, and `lean::certify::check_certificate` for each proof — the
//! pinned statement compiled as its own module first, the proof as a module importing it, and a
//! check file that states the theorem against the pinned type (`lean::certify::SeparateCheck`).
//! Compiled statement modules stay in the workspace, so the obligations of one kernel share one.

use crate::prove::Checker;
use lean::audit::{Pinned, Policy};
use lean::certify::{check_certificate, CertifyError};
use lean::runner::{RunnerError, Workspace};
use lean::Toolchain;
use std::time::Duration;

pub struct LeanChecker {
    pub toolchain: Toolchain,
    workspace: Workspace,
    policy: Policy,
}

impl LeanChecker {
    /// Creates the workspace and builds the library in it (the first build takes a while).
    pub fn start(toolchain: Toolchain, policy: Policy, build_timeout: Duration) -> Result<LeanChecker, String> {
        let library = lean::library_dir();
        let workspace = Workspace::create(&std::env::temp_dir(), &library).map_err(|e: RunnerError| e.to_string())?;
        let built = workspace.build_library(&toolchain, build_timeout).map_err(|e| e.to_string())?;
        if !built.accepted() {
            let first = built.messages.iter().find(|m| m.severity == lean::Severity::Error).map_or_else(|| built.output.stderr.clone(), |m| m.text.clone());
            return Err(format!("the Lean library does not build: {}", first.lines().next().unwrap_or("")));
        }
        Ok(LeanChecker { toolchain, workspace, policy })
    }
}

impl Checker for LeanChecker {
    fn check(&self, pinned: &Pinned, file: &str, theorem: &str, timeout: Duration) -> Result<Vec<String>, CertifyError> {
        check_certificate(&self.workspace, &self.toolchain, pinned, file, theorem, &self.policy, timeout).map(|a| a.axioms)
    }
}
