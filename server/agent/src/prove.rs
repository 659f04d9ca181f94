//! The prove loop for one obligation: ask the agent, audit the answer, check it with Lean, and
//! feed every error back, until Lean accepts a proof or the budget is spent.
//!
//! Without a Lean toolchain the loop stops at the first proof that passes the audit: it cannot
//! be checked, so it is not a certificate, and asking for more would only spend the agent's
//! budget.

use crate::protocol::{Attempt, ProofError, ProveRequest};
use crate::transport::{Agent, AgentError, Limits};
use lean::audit::{Pinned, Policy};
use lean::certify::CertifyError;
use std::time::{Duration, Instant};

/// What one obligation may cost.
#[derive(Clone, Debug)]
pub struct Budget {
    pub attempts: u32,
    /// For the whole obligation, agent calls and Lean runs together.
    pub total: Duration,
    /// For one agent call (the rest of `total` if that is less).
    pub per_call: Limits,
    /// For one Lean run.
    pub lean_timeout: Duration,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget { attempts: 6, total: Duration::from_secs(600), per_call: Limits::default(), lean_timeout: Duration::from_secs(300) }
    }
}

/// Checks a certificate file with Lean (`lean::certify::check_certificate` in a workspace).
pub trait Checker {
    fn check(&self, pinned: &Pinned, file: &str, theorem: &str, timeout: Duration) -> Result<Vec<String>, CertifyError>;
}

/// How an obligation ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Lean accepted `proof`; `file` is the complete certificate file, `axioms` what its
    /// theorem depends on.
    Proved { proof: String, file: String, axioms: Vec<String>, attempts: Vec<Attempt> },
    /// No certificate, and why (for the uncertified region's message).
    NotProved { reason: String, attempts: Vec<Attempt> },
}

impl Outcome {
    pub fn attempts(&self) -> &[Attempt] {
        match self {
            Outcome::Proved { attempts, .. } | Outcome::NotProved { attempts, .. } => attempts,
        }
    }
}

/// Runs the loop for one obligation. `request` carries the pinned statement; its `attempts` are
/// filled in as the loop goes. `checker` is `None` when no Lean toolchain was found.
pub fn prove(request: &ProveRequest, agent: &mut dyn Agent, checker: Option<&dyn Checker>, policy: &Policy, budget: &Budget) -> Outcome {
    let pinned = match Pinned::with_hash(request.statement.clone(), &request.statement_sha256) {
        Ok(p) => p,
        Err(e) => return Outcome::NotProved { reason: format!("the statement does not match its pin: {e}"), attempts: vec![] },
    };
    let started = Instant::now();
    let mut req = request.clone();
    req.attempts.clear();
    for _ in 0..budget.attempts {
        let left = budget.total.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Outcome::NotProved { reason: format!("agent budget exhausted ({} s)", budget.total.as_secs()), attempts: req.attempts };
        }
        let limits = Limits { timeout: budget.per_call.timeout.min(left), ..budget.per_call.clone() };
        let response = match agent.propose(&req, &limits) {
            Ok(r) => r,
            Err(e) if e.is_fatal() => {
                let reason = match e {
                    AgentError::Cancelled => "cancelled".to_string(),
                    e => format!("{}: {e}", agent.name()),
                };
                return Outcome::NotProved { reason, attempts: req.attempts };
            }
            Err(e) => {
                // A slow, crashing or garbage answer costs an attempt; the agent hears why.
                req.attempts.push(Attempt { proof: String::new(), errors: vec![ProofError::general(e.to_string())] });
                continue;
            }
        };
        let file = format!("{}{}\n", request.statement, response.proof);
        if let Err(e) = pinned.audit_file(&file, policy) {
            req.attempts.push(Attempt { proof: response.proof, errors: vec![ProofError::general(format!("the audit rejected the proof: {e}"))] });
            continue;
        }
        let Some(checker) = checker else {
            req.attempts.push(Attempt { proof: response.proof, errors: vec![] });
            return Outcome::NotProved {
                reason: "Lean toolchain not found: a proof passed the audit but cannot be checked, so it is not a certificate".into(),
                attempts: req.attempts,
            };
        };
        let timeout = budget.lean_timeout.min(budget.total.saturating_sub(started.elapsed()).max(Duration::from_secs(1)));
        match checker.check(&pinned, &file, &request.theorem, timeout) {
            Ok(axioms) => {
                req.attempts.push(Attempt { proof: response.proof.clone(), errors: vec![] });
                return Outcome::Proved { proof: response.proof, file, axioms, attempts: req.attempts };
            }
            Err(CertifyError::Rejected(messages)) => {
                let errors = messages
                    .iter()
                    .filter(|m| m.severity == lean::Severity::Error)
                    .map(|m| ProofError { line: m.line, column: m.column, message: m.text.clone() })
                    .collect::<Vec<_>>();
                let errors = if errors.is_empty() { vec![ProofError::general("Lean rejected the proof without an error message")] } else { errors };
                req.attempts.push(Attempt { proof: response.proof, errors });
            }
            Err(e @ (CertifyError::Audit(_) | CertifyError::Timeout(_))) => {
                req.attempts.push(Attempt { proof: response.proof, errors: vec![ProofError::general(e.to_string())] });
            }
            Err(e) => return Outcome::NotProved { reason: format!("Lean could not be run: {e}"), attempts: req.attempts },
        }
    }
    let last = req.attempts.last().and_then(|a| a.errors.first()).map_or(String::new(), |e| format!("; last: {}", e.message.lines().next().unwrap_or("")));
    Outcome::NotProved { reason: format!("no proof accepted in {} attempts{last}", budget.attempts), attempts: req.attempts }
}
