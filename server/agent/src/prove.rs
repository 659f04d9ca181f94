//! The prove loop for one obligation: ask the agent, audit the answer, check it with Lean, and
//! feed every error back, until Lean accepts a proof or the budget is spent.
//!
//! When Lean rejects a tactic proof, [`crate::repair`] first tries to mend it — keep what Lean
//! did not object to, prove the goals left open one by one — before the agent is asked for a
//! new proof; both spend the same budget.
//!
//! Tokens are counted for the whole run: the token meter in `budget.per_call` is shared by every
//! clone of the budget, so a caller that uses one budget for every obligation of a certification
//! stops asking once the certification as a whole has spent `budget.tokens`. Only endpoints count
//! tokens; a command agent's budget is time, attempts and output only.
//!
//! Without a Lean toolchain the loop stops at the first proof that passes the audit: it cannot
//! be checked, so it is not a certificate, and asking for more would only spend the agent's
//! budget.

use crate::protocol::{Attempt, ProofError, ProveRequest};
use crate::repair::{self, Repair};
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
    /// How many times proof repair may cut a rejected proof down and splice it together again
    /// (0: no repair).
    pub repair_rounds: u32,
    /// The most agent calls on one sub-goal (each also counts as one of `attempts`).
    pub subgoal_attempts: u32,
    /// The most tokens an endpoint may spend, counted on `per_call.tokens` — which every clone of
    /// this budget shares, so it is the whole certification's when one budget serves all its
    /// obligations (`None`: no limit). No call is made once it is spent; the answer that crossed
    /// it is still checked. Command agents report no tokens: this never stops them.
    pub tokens: Option<u64>,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            attempts: 6,
            total: Duration::from_secs(600),
            per_call: Limits::default(),
            lean_timeout: Duration::from_secs(300),
            repair_rounds: 2,
            subgoal_attempts: 2,
            tokens: None,
        }
    }
}

impl Budget {
    /// Tokens left of [`Budget::tokens`] (`None`: no limit).
    pub fn tokens_left(&self) -> Option<u64> {
        self.tokens.map(|limit| limit.saturating_sub(self.per_call.tokens.used()))
    }

    /// The reason no more agent calls may be made, once the token budget is spent.
    pub fn tokens_exhausted(&self) -> Option<String> {
        let limit = self.tokens?;
        let usage = self.per_call.tokens.usage();
        (usage.total >= limit).then(|| format!("agent token budget exhausted: {} of {limit} tokens used{}", usage.total, usage.estimate_note()))
    }

    /// The limits of an agent call that may take `time_left`: the per-call limits, with the
    /// timeout and `max_tokens` cut to what is left of the whole.
    pub fn call_limits(&self, time_left: Duration) -> Limits {
        let max_tokens = self.tokens_left().map_or(self.per_call.max_tokens, |left| self.per_call.max_tokens.min(left.clamp(1, u32::MAX as u64) as u32));
        Limits { timeout: self.per_call.timeout.min(time_left), max_tokens, ..self.per_call.clone() }
    }
}

/// What has been spent of a [`Budget`]: the loop and proof repair draw on the same.
pub(crate) struct Spend<'b> {
    pub budget: &'b Budget,
    started: Instant,
    /// Agent calls made so far; each is an attempt.
    pub calls: u32,
}

impl<'b> Spend<'b> {
    fn new(budget: &'b Budget) -> Spend<'b> {
        Spend { budget, started: Instant::now(), calls: 0 }
    }

    pub fn time_left(&self) -> Duration {
        self.budget.total.saturating_sub(self.started.elapsed())
    }

    pub fn calls_left(&self) -> u32 {
        self.budget.attempts.saturating_sub(self.calls)
    }

    pub fn cancelled(&self) -> bool {
        self.budget.per_call.cancel.is_cancelled()
    }

    /// The limits of the next agent call: its own, or what is left of the whole if less (time,
    /// and tokens for `max_tokens`).
    pub fn call_limits(&self) -> Limits {
        self.budget.call_limits(self.time_left())
    }

    /// The timeout of the next Lean run.
    pub fn lean_timeout(&self) -> Duration {
        self.budget.lean_timeout.min(self.time_left().max(Duration::from_secs(1)))
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
    let mut spend = Spend::new(budget);
    let mut req = request.clone();
    req.attempts.clear();
    while spend.calls_left() > 0 {
        // Proof repair runs Lean between agent calls: a cancellation during it ends here.
        if spend.cancelled() {
            return Outcome::NotProved { reason: "cancelled".into(), attempts: req.attempts };
        }
        if spend.time_left().is_zero() {
            return Outcome::NotProved { reason: format!("agent budget exhausted ({} s)", budget.total.as_secs()), attempts: req.attempts };
        }
        if let Some(reason) = budget.tokens_exhausted() {
            return Outcome::NotProved { reason, attempts: req.attempts };
        }
        let limits = spend.call_limits();
        spend.calls += 1;
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
        match checker.check(&pinned, &file, &request.theorem, spend.lean_timeout()) {
            Ok(axioms) => {
                req.attempts.push(Attempt { proof: response.proof.clone(), errors: vec![] });
                return Outcome::Proved { proof: response.proof, file, axioms, attempts: req.attempts };
            }
            Err(CertifyError::Rejected(messages)) => {
                let mut errors = lean_errors(&messages);
                let context = repair::Context { request, pinned: &pinned, checker, policy };
                match repair::repair(&context, agent, &mut spend, &response.proof, &messages) {
                    Repair::Proved { proof, file, axioms } => {
                        req.attempts.push(Attempt { proof: response.proof, errors });
                        req.attempts.push(Attempt { proof: proof.clone(), errors: vec![] });
                        return Outcome::Proved { proof, file, axioms, attempts: req.attempts };
                    }
                    // The agent's next attempt hears what the repair found.
                    Repair::Failed(why) => errors.push(ProofError::general(format!("proof repair: {why}"))),
                    Repair::NotApplicable => {}
                }
                req.attempts.push(Attempt { proof: response.proof, errors });
            }
            Err(e @ (CertifyError::Audit(_) | CertifyError::Timeout(_))) => {
                req.attempts.push(Attempt { proof: response.proof, errors: vec![ProofError::general(e.to_string())] });
            }
            // The statement itself (compiled apart from any proof) failed: no proof can help.
            Err(e @ (CertifyError::StatementRejected(_) | CertifyError::UnsupportedStatement(_))) => {
                req.attempts.push(Attempt { proof: response.proof, errors: vec![ProofError::general(e.to_string())] });
                return Outcome::NotProved { reason: e.to_string(), attempts: req.attempts };
            }
            Err(e) => return Outcome::NotProved { reason: format!("Lean could not be run: {e}"), attempts: req.attempts },
        }
    }
    let last = req.attempts.last().and_then(|a| a.errors.first()).map_or(String::new(), |e| format!("; last: {}", e.message.lines().next().unwrap_or("")));
    Outcome::NotProved { reason: format!("no proof accepted in {} attempts{last}", budget.attempts), attempts: req.attempts }
}

/// Lean's error messages as the errors of an attempt.
pub(crate) fn lean_errors(messages: &[lean::Message]) -> Vec<ProofError> {
    let errors: Vec<ProofError> = messages
        .iter()
        .filter(|m| m.severity == lean::Severity::Error)
        .map(|m| ProofError { line: m.line, column: m.column, message: m.text.clone() })
        .collect();
    if errors.is_empty() {
        vec![ProofError::general("Lean rejected the proof without an error message")]
    } else {
        errors
    }
}
