//! Proof repair, the way APOLLO-style loops do it: when Lean rejects a tactic proof, keep what it
//! did not object to and prove only what is left open, instead of starting over.
//!
//! 1. The failing parts are cut out ([`crate::skeleton`]): the rejected proof becomes a skeleton
//!    with holes (`done -- hole N`).
//! 2. Lean checks the skeleton (a *probe*; it is rejected, since every hole fails): each hole's
//!    `done` prints the goals left there. Errors elsewhere mean the kept part fails too: the
//!    skeleton is cut again, in the next round.
//! 3. Each goal is stated as a theorem of its own ([`crate::goals`]) after the same definitions
//!    the obligation's statement has, and proved on its own: first by the built-in prover's
//!    sub-goal portfolio (one Lean run), then by the agent, with Lean's errors fed back.
//! 4. The proofs are spliced into the holes, and the whole proof is audited against the pinned
//!    statement and checked by Lean. Only that is a certificate; if Lean rejects it, its errors
//!    start the next round.
//!
//! Nothing here is trusted. A hole is `done`, never `sorry`; a sub-goal stated wrongly only makes
//! a proof fail; and the result is exactly what the prove loop would accept from an agent: a
//! whole proof that passed the audit and Lean. Agent calls, time and tokens come out of the prove
//! loop's budget.

use crate::goals::{self, Goal};
use crate::protocol::{Attempt, ProofError, ProveRequest, SubgoalOf};
use crate::prove::{lean_errors, Checker, Spend};
use crate::skeleton::{self, ErrorAt, GoalProof, Hole, Layout, Pos, Skeleton};
use crate::transport::{Agent, BuiltIn};
use lean::audit::{sha256_hex, Pinned, Policy};
use lean::certify::CertifyError;
use lean::{Message, Severity};

/// What a repair works on: the obligation and how proofs of it are judged.
pub(crate) struct Context<'a> {
    pub request: &'a ProveRequest,
    pub pinned: &'a Pinned,
    pub checker: &'a dyn Checker,
    pub policy: &'a Policy,
}

/// How a repair ended.
#[derive(Debug)]
pub(crate) enum Repair {
    /// A whole proof that passed the audit and that Lean accepted.
    Proved { proof: String, file: String, axioms: Vec<String> },
    /// No whole proof, and why (told to the agent with the attempt's errors).
    Failed(String),
    /// Nothing to repair: a term proof, a zero repair budget, or a statement whose theorem
    /// header cannot be found.
    NotApplicable,
}

/// Repairs `proof`, which Lean rejected with `messages`.
pub(crate) fn repair(cx: &Context, agent: &mut dyn Agent, spend: &mut Spend, proof: &str, messages: &[Message]) -> Repair {
    let rounds = spend.budget.repair_rounds;
    if rounds == 0 || Layout::parse(proof).is_none() {
        return Repair::NotApplicable;
    }
    let Some(context) = subgoal_context(&cx.request.statement, &cx.request.theorem) else { return Repair::NotApplicable };
    let mut run = Run { cx, context, subgoals: 0 };
    let mut current = proof.to_string();
    let mut errors: Vec<ErrorAt> = match run.errors_in_proof(messages) {
        Ok(e) => e.into_iter().map(|(e, _)| e).collect(),
        Err(why) => return Repair::Failed(why),
    };
    let mut last = first_error(messages);
    for _ in 0..rounds {
        let Some(layout) = Layout::parse(&current) else { return Repair::Failed("the repaired proof is no longer a tactic block".into()) };
        let skeleton = match layout.isolate(&errors) {
            Ok(s) if s.text == current => return Repair::Failed(format!("nothing more can be cut out; last error: {last}")),
            Ok(s) => s,
            Err(why) => return Repair::Failed(why),
        };
        // The probe: Lean shows the goals at each hole.
        let probe = match run.check(spend, cx.pinned, &cx.request.statement, &cx.request.theorem, &skeleton.text) {
            // Every hole's `done` found its goals closed already: the skeleton is a proof.
            Checked::Accepted { file, axioms } => return Repair::Proved { proof: skeleton.text, file, axioms },
            Checked::Rejected(m) => m,
            Checked::Refused(why) | Checked::Failed(why) => return Repair::Failed(why),
        };
        let probe_errors = match run.errors_in_proof(&probe) {
            Ok(e) => e,
            Err(why) => return Repair::Failed(why),
        };
        let at_hole = |h: &Hole| probe_errors.iter().find(|(e, _)| e.pos == h.pos).map(|(_, m)| m.as_str());
        if probe_errors.iter().any(|(e, _)| !skeleton.holes.iter().any(|h| h.pos == e.pos)) {
            // What was kept fails too: cut again.
            last = first_error(&probe);
            current = skeleton.text;
            errors = probe_errors.into_iter().map(|(e, _)| e).collect();
            continue;
        }
        let mut fills = Vec::new();
        for hole in &skeleton.holes {
            let goals = match at_hole(hole) {
                None => Vec::new(),
                Some(text) => match goals::unsolved_goals(text) {
                    Some(g) => g,
                    None => return Repair::Failed(format!("hole {}: Lean did not show its goals: {}", hole.number, text.lines().next().unwrap_or(""))),
                },
            };
            let mut proofs = Vec::new();
            for goal in &goals {
                match run.prove_subgoal(agent, spend, &skeleton, hole, goal) {
                    Ok(p) => proofs.push(p),
                    Err(why) => return Repair::Failed(why),
                }
            }
            fills.push(skeleton::fill(hole.pos.col, &proofs));
        }
        let spliced = skeleton::splice(&skeleton, &fills);
        match run.check(spend, cx.pinned, &cx.request.statement, &cx.request.theorem, &spliced) {
            Checked::Accepted { file, axioms } => return Repair::Proved { proof: spliced, file, axioms },
            Checked::Rejected(m) => {
                last = first_error(&m);
                errors = match run.errors_in_proof(&m) {
                    Ok(e) => e.into_iter().map(|(e, _)| e).collect(),
                    Err(why) => return Repair::Failed(why),
                };
                current = spliced;
            }
            Checked::Refused(why) | Checked::Failed(why) => return Repair::Failed(why),
        }
    }
    Repair::Failed(format!("no whole proof after {rounds} rounds; last error: {last}"))
}

/// The first line of the first error, for reasons.
fn first_error(messages: &[Message]) -> String {
    messages
        .iter()
        .find(|m| m.severity == Severity::Error)
        .map_or_else(String::new, |m| format!("{}:{}: {}", m.line, m.column, m.text.lines().next().unwrap_or("")))
}

/// The text a sub-goal's theorem follows: the obligation's statement up to its theorem (and the
/// theorem's doc comment). `None` when the statement does not end in that theorem's header.
pub(crate) fn subgoal_context<'s>(statement: &'s str, theorem: &str) -> Option<&'s str> {
    let header = format!("theorem {theorem} :");
    let at = if statement.starts_with(&header) { 0 } else { statement.rfind(&format!("\n{header}"))? + 1 };
    let before = &statement[..at];
    let doc = before.trim_end().ends_with("-/").then(|| before.rfind("/--")).flatten();
    Some(&statement[..doc.unwrap_or(at)])
}

/// What one Lean check came to.
enum Checked {
    Accepted {
        file: String,
        axioms: Vec<String>,
    },
    /// Lean's messages.
    Rejected(Vec<Message>),
    /// The audit refused it, or Lean ran out of time: worth another try.
    Refused(String),
    /// Lean could not be run, the budget is spent, or the user cancelled.
    Failed(String),
}

/// One repair's state.
struct Run<'c, 'a> {
    cx: &'c Context<'a>,
    /// What a sub-goal's theorem follows.
    context: &'a str,
    /// Sub-goals stated so far (they are numbered in order).
    subgoals: usize,
}

impl Run<'_, '_> {
    /// Lean's errors at positions of the proof (0-based lines after the statement), with their
    /// text. `Err` for an error in the pinned statement, which no repair of the proof can mend.
    fn errors_in_proof(&self, messages: &[Message]) -> Result<Vec<(ErrorAt, String)>, String> {
        let statement_lines = self.cx.request.statement.matches('\n').count();
        let mut out = Vec::new();
        for m in messages.iter().filter(|m| m.severity == Severity::Error) {
            let line = (m.line as usize)
                .checked_sub(statement_lines + 1)
                .ok_or_else(|| format!("Lean reports an error outside the proof (line {}): {}", m.line, m.text.lines().next().unwrap_or("")))?;
            let unsolved_goals = goals::unsolved_goals(&m.text).is_some();
            out.push((ErrorAt { pos: Pos { line, col: m.column as usize }, unsolved_goals }, m.text.clone()));
        }
        Ok(out)
    }

    /// Audits `statement` + `proof` and checks it with Lean.
    fn check(&self, spend: &Spend, pinned: &Pinned, statement: &str, theorem: &str, proof: &str) -> Checked {
        if spend.cancelled() {
            return Checked::Failed("cancelled".into());
        }
        if spend.time_left().is_zero() {
            return Checked::Failed(format!("agent budget exhausted ({} s)", spend.budget.total.as_secs()));
        }
        let file = format!("{statement}{proof}\n");
        if let Err(e) = pinned.audit_file(&file, self.cx.policy) {
            return Checked::Refused(format!("the audit rejected the proof: {e}"));
        }
        match self.cx.checker.check(pinned, &file, theorem, spend.lean_timeout()) {
            Ok(axioms) => Checked::Accepted { file, axioms },
            Err(CertifyError::Rejected(m)) => Checked::Rejected(m),
            Err(e @ (CertifyError::Audit(_) | CertifyError::Timeout(_))) => Checked::Refused(e.to_string()),
            Err(e) => Checked::Failed(format!("Lean could not be run: {e}")),
        }
    }

    /// A proof of one goal of a hole: restated as its own theorem, tried with the built-in
    /// portfolio, then with the agent while the budget lasts.
    fn prove_subgoal(&mut self, agent: &mut dyn Agent, spend: &mut Spend, skeleton: &Skeleton, hole: &Hole, goal: &Goal) -> Result<GoalProof, String> {
        let restated = goals::restate(goal).map_err(|why| format!("hole {}: {why}", hole.number))?;
        self.subgoals += 1;
        let request = self.cx.request;
        let theorem = format!("{}_sub{}", request.theorem, self.subgoals);
        let statement = format!(
            "{}/-- A goal left open at hole {} of a proof of `{}`, isolated by proof repair. -/\n{}",
            self.context,
            hole.number,
            request.obligation,
            goals::theorem_header(&theorem, &restated)
        );
        let pinned = Pinned::new(statement.clone());
        let found = |proof: String| GoalProof { renamed: restated.renamed.clone(), proof };
        let mut attempts = Vec::new();
        let portfolio = BuiltIn::subgoal_proof();
        match self.check(spend, &pinned, &statement, &theorem, &portfolio) {
            Checked::Accepted { .. } => return Ok(found(portfolio)),
            Checked::Rejected(m) => attempts.push(Attempt { proof: portfolio, errors: lean_errors(&m) }),
            Checked::Refused(why) => attempts.push(Attempt { proof: portfolio, errors: vec![ProofError::general(why)] }),
            Checked::Failed(why) => return Err(why),
        }
        let mut req = ProveRequest {
            task: "prove".into(),
            obligation: format!("{}_sub{}", request.obligation, self.subgoals),
            theorem: theorem.clone(),
            statement_sha256: sha256_hex(&statement),
            statement: statement.clone(),
            summary: format!(
                "the goal Lean left open at hole {} of a proof of `{}` ({}); the rest of that proof is kept",
                hole.number, request.obligation, request.summary
            ),
            library: request.library.clone(),
            facts: request.facts.clone(),
            attempts,
            subgoal_of: Some(SubgoalOf {
                obligation: request.obligation.clone(),
                skeleton: skeleton.text.clone(),
                hole: hole.number,
                goal: goals::display(goal),
            }),
        };
        let unproved = |req: &ProveRequest, why: &str| {
            let last = req.attempts.last().and_then(|a| a.errors.first()).map_or(String::new(), |e| e.message.lines().next().unwrap_or("").to_string());
            format!("sub-goal `{theorem}` (hole {}) not proved: {why}; last error: {last}", hole.number)
        };
        for _ in 0..spend.budget.subgoal_attempts {
            if spend.calls_left() == 0 {
                return Err(unproved(&req, "no agent attempts left"));
            }
            if spend.time_left().is_zero() {
                return Err(unproved(&req, "no time left"));
            }
            if let Some(reason) = spend.budget.tokens_exhausted() {
                return Err(unproved(&req, &reason));
            }
            let limits = spend.call_limits();
            let answer = agent.propose(&req, &limits);
            // An agent that declines (the built-in prover leaves sub-goals to the portfolio
            // above), cannot start or was cancelled spent no attempt.
            let proof = match answer {
                Ok(r) => {
                    spend.calls += 1;
                    r.proof
                }
                Err(e) if e.is_fatal() => return Err(unproved(&req, &format!("{}: {e}", agent.name()))),
                Err(e) => {
                    spend.calls += 1;
                    req.attempts.push(Attempt { proof: String::new(), errors: vec![ProofError::general(e.to_string())] });
                    continue;
                }
            };
            match self.check(spend, &pinned, &statement, &theorem, &proof) {
                Checked::Accepted { .. } => return Ok(found(proof)),
                Checked::Rejected(m) => req.attempts.push(Attempt { proof, errors: lean_errors(&m) }),
                Checked::Refused(why) => req.attempts.push(Attempt { proof, errors: vec![ProofError::general(why)] }),
                Checked::Failed(why) => return Err(why),
            }
        }
        Err(unproved(&req, &format!("{} agent attempts", spend.budget.subgoal_attempts)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sub_goal_follows_the_statement_s_definitions_without_the_certificate_theorem() {
        let statement = "import Lark\nnamespace LarkGen.k\ndef race_free : Prop := True\nend LarkGen.k\n/-- Certificate: `race_free` holds. -/\ntheorem LarkGen.k.cert_race_free : LarkGen.k.race_free :=\n";
        assert_eq!(
            subgoal_context(statement, "LarkGen.k.cert_race_free"),
            Some("import Lark\nnamespace LarkGen.k\ndef race_free : Prop := True\nend LarkGen.k\n")
        );
        assert_eq!(subgoal_context("theorem t : True :=\n", "t"), Some(""));
        assert_eq!(subgoal_context("theorem t : True :=\n", "u"), None);
    }
}
