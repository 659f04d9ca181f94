//! Checking a certificate end to end: audit the proof against its pinned statement, write the
//! file with `#print axioms` appended, run Lean on it, and accept only a clean run whose theorem
//! depends on the standard axioms alone.

use crate::audit::{check_axioms, AuditError, Pinned, Policy};
use crate::runner::{CheckResult, Message, RunnerError, Severity, Workspace};
use crate::toolchain::Toolchain;
use std::time::Duration;

/// Why a certificate is not accepted.
#[derive(Debug, thiserror::Error)]
pub enum CertifyError {
    #[error(transparent)]
    Audit(#[from] AuditError),
    #[error(transparent)]
    Runner(#[from] RunnerError),
    #[error("Lean did not finish within {} s", .0.as_secs())]
    Timeout(Duration),
    #[error("Lean rejected the proof: {}", first_error(.0))]
    Rejected(Vec<Message>),
    #[error("`{0}` is not a plain theorem name")]
    BadTheoremName(String),
}

fn first_error(messages: &[Message]) -> String {
    messages
        .iter()
        .find(|m| m.severity == Severity::Error)
        .map(|m| format!("{}:{}: {}", m.line, m.column, m.text.lines().next().unwrap_or("")))
        .unwrap_or_else(|| "the run failed without an error message".into())
}

/// A certificate Lean accepted.
#[derive(Clone, Debug)]
pub struct Accepted {
    /// The axioms the theorem depends on (a subset of [`crate::audit::ALLOWED_AXIOMS`]).
    pub axioms: Vec<String>,
    pub result: CheckResult,
}

/// Checks the certificate `file` (the pinned statement followed by a proof of `theorem`) in the
/// workspace. The library must have been built in the workspace (`Workspace::build_library`).
pub fn check_certificate(
    ws: &Workspace,
    tc: &Toolchain,
    pinned: &Pinned,
    file: &str,
    theorem: &str,
    policy: &Policy,
    timeout: Duration,
) -> Result<Accepted, CertifyError> {
    let plain =
        !theorem.is_empty() && theorem.split('.').all(|c| c.chars().next().is_some_and(crate::lexer::is_id_first) && c.chars().all(crate::lexer::is_id_rest));
    if !plain {
        return Err(CertifyError::BadTheoremName(theorem.to_string()));
    }
    pinned.audit_file(file, policy)?;
    let text = format!("{file}\n\n#print axioms {theorem}\n");
    let name = format!("Certificate_{}.lean", &pinned.hash()[..16]);
    let path = ws.write_file(&name, &text)?;
    let result = ws.check_file(tc, &path, timeout)?;
    if result.output.timed_out {
        return Err(CertifyError::Timeout(timeout));
    }
    if !result.accepted() {
        return Err(CertifyError::Rejected(result.messages));
    }
    let axioms = check_axioms(&format!("{}\n{}", result.output.stdout, result.output.stderr), theorem)?;
    Ok(Accepted { axioms, result })
}
