//! Proof repair inside the prove loop: a rejected tactic proof is cut down to what Lean did not
//! object to, the goal left open is stated as its own theorem and proved on its own (the
//! built-in portfolio first, then the agent, with the audit's and Lean's errors fed back), and
//! only the whole spliced proof that passes the audit and the checker is reported.
//!
//! The checker here is a TEST DOUBLE for Lean (like `RejectingLean` in `agents.rs`): it answers
//! with messages in Lean 4's recorded formats by fixed rules, written below, so that these tests
//! check the loop's bookkeeping — what is kept, what is asked, what is spliced, what is spent —
//! and not any proof. With `lake` on PATH, the last test runs the same loop against real Lean.

use agent::prove::{prove, Budget, Checker, Outcome};
use agent::{CommandAgent, Limits, ProveRequest};
use lean::audit::{sha256_hex, Pinned, Policy};
use lean::certify::CertifyError;
use lean::runner::{Message, Severity};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

fn double(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agents").join(name).display().to_string()
}

const STATEMENT: &str = "-- a pinned statement for the repair tests\ntheorem test_sum : ∀ n : Nat, n + 0 = n ∧ 0 + n = n :=\n";

fn request() -> ProveRequest {
    ProveRequest {
        task: "prove".into(),
        obligation: "test_sum".into(),
        theorem: "test_sum".into(),
        statement_sha256: sha256_hex(STATEMENT),
        statement: STATEMENT.into(),
        summary: "adding zero on either side".into(),
        library: vec![],
        facts: vec![],
        attempts: vec![],
        subgoal_of: None,
    }
}

fn budget(attempts: u32) -> Budget {
    Budget { attempts, total: Duration::from_secs(120), per_call: Limits { timeout: Duration::from_secs(20), ..Limits::default() }, ..Budget::default() }
}

/// The goal Lean shows at the second `have` of `repairs.sh`'s proof (recorded format).
const GOAL: &str = "n : Nat\nh1 : n + 0 = n\n⊢ 0 + n = n";

/// A TEST DOUBLE for Lean. It audits like the real checker, records every file it is asked
/// about, and then, by these rules alone:
/// * a main file with a hole (`done -- hole 1`): `unsolved goals` with [`GOAL`] at the hole, as
///   Lean's `done` reports it;
/// * the main file `repairs.sh` proposes: Lean 4's `rfl` failure at the second `rfl`;
/// * any other file: accepted if its proof uses `Nat.zero_add`, else `unsolved goals` at the
///   proof's first line.
#[derive(Default)]
struct ScriptedLean {
    seen: Mutex<Vec<String>>,
}

fn message(line: usize, column: usize, text: &str) -> Message {
    Message { file: None, line: line as u32, column: column as u32, severity: Severity::Error, text: text.into() }
}

/// 1-based line and 0-based column of the `n`-th occurrence of `needle`.
fn position(file: &str, needle: &str, n: usize) -> (usize, usize) {
    let at = file.match_indices(needle).nth(n).unwrap_or_else(|| panic!("no {needle:?} in {file}")).0;
    let line = file[..at].matches('\n').count() + 1;
    let column = file[..at].rsplit('\n').next().unwrap().chars().count();
    (line, column)
}

impl Checker for ScriptedLean {
    fn check(&self, pinned: &Pinned, file: &str, _theorem: &str, _: Duration) -> Result<Vec<String>, CertifyError> {
        pinned.audit_file(file, &Policy::default())?;
        self.seen.lock().unwrap().push(file.to_string());
        let proof = &file[pinned.statement().len()..];
        if file.contains("done -- hole 1") {
            let (line, column) = position(file, "done -- hole 1", 0);
            return Err(CertifyError::Rejected(vec![message(line, column, &format!("unsolved goals\n{GOAL}"))]));
        }
        if proof.contains("have h2 : 0 + n = n := by\n    rfl") {
            let (line, column) = position(file, "rfl", 1);
            let text = format!(
                "The rfl tactic failed. Possible reasons:\n- The goal is not a reflexive relation (neither `=` nor a relation with a @[refl] lemma).\n- The arguments of the relation are not equal.\nTry using the reflexivity lemma for your relation explicitly, e.g. `exact Eq.refl _` or\n`exact HEq.rfl` etc.\n{GOAL}"
            );
            return Err(CertifyError::Rejected(vec![message(line, column, &text)]));
        }
        if proof.contains("Nat.zero_add") {
            return Ok(vec![]);
        }
        let line = pinned.statement().matches('\n').count() + 1;
        Err(CertifyError::Rejected(vec![message(line, 0, &format!("unsolved goals\n{GOAL}"))]))
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-repair-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn logged_requests(log: &PathBuf) -> Vec<ProveRequest> {
    std::fs::read_to_string(log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_failing_have_is_repaired_and_the_rest_of_the_proof_is_kept() {
    let dir = scratch("kept");
    let log = dir.join("requests.jsonl");
    let mut a = CommandAgent::new(format!("LARK_TEST_REQUEST_LOG={} {}", log.display(), double("repairs.sh")));
    let lean = ScriptedLean::default();
    let out = prove(&request(), &mut a, Some(&lean), &Policy::default(), &budget(6));
    let Outcome::Proved { proof, file, attempts, .. } = out else { panic!("{out:?}") };
    assert_eq!(
        proof, "by\n  intro n\n  have h1 : n + 0 = n := by\n    rfl\n  have h2 : 0 + n = n := by\n    exact Nat.zero_add n\n  exact And.intro h1 h2",
        "the first `have` and the last step are kept; the hole holds the sub-goal's proof"
    );
    assert_eq!(file, format!("{STATEMENT}{proof}\n"));
    assert!(!proof.contains("sorry") && !proof.contains("hole"));
    // The agent's rejected proof, then the repaired one.
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert!(attempts[0].errors[0].message.starts_with("The rfl tactic failed"), "{attempts:#?}");
    assert!(attempts[1].errors.is_empty());
    // Lean saw: the proof, the probe, the portfolio on the sub-goal, the agent's second
    // sub-goal proof (its `sorry` was stopped by the audit first), the whole repaired proof.
    let seen = lean.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 5, "{seen:#?}");
    assert!(seen[1].ends_with("  have h2 : 0 + n = n := by\n    done -- hole 1\n  exact And.intro h1 h2\n"), "{}", seen[1]);
    let sub_statement = "-- a pinned statement for the repair tests\n/-- A goal left open at hole 1 of a proof of `test_sum`, isolated by proof repair. -/\ntheorem test_sum_sub1\n    (n : Nat)\n    (h1 : n + 0 = n) :\n    0 + n = n :=\n";
    assert_eq!(seen[2], format!("{sub_statement}{}\n", agent::BuiltIn::subgoal_proof()));
    assert_eq!(seen[3], format!("{sub_statement}Nat.zero_add n\n"));
    assert!(seen.iter().all(|f| !f.contains("sorry")), "a `sorry` reached the checker");
    // The agent was asked three times: the obligation, then the sub-goal twice, with the
    // skeleton, the goal and the errors so far.
    let asked = logged_requests(&log);
    assert_eq!(asked.len(), 3);
    assert!(asked[0].subgoal_of.is_none());
    let sub = asked[1].subgoal_of.as_ref().unwrap();
    assert_eq!((sub.obligation.as_str(), sub.hole, sub.goal.as_str()), ("test_sum", 1, GOAL));
    assert!(sub.skeleton.contains("done -- hole 1"));
    assert_eq!(asked[1].theorem, "test_sum_sub1");
    assert_eq!(asked[1].statement, sub_statement);
    assert_eq!(asked[1].attempts.len(), 1, "the portfolio's failure is fed back");
    assert_eq!(asked[2].attempts.len(), 2);
    assert!(asked[2].attempts[1].errors[0].message.contains("the audit rejected the proof"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unprovable_sub_goal_spends_the_shared_budget_and_nothing_is_reported() {
    let dir = scratch("stubborn");
    let log = dir.join("requests.jsonl");
    let mut a = CommandAgent::new(format!("LARK_TEST_STUBBORN=1 LARK_TEST_REQUEST_LOG={} {}", log.display(), double("repairs.sh")));
    let lean = ScriptedLean::default();
    let out = prove(&request(), &mut a, Some(&lean), &Policy::default(), &budget(5));
    let Outcome::NotProved { reason, attempts } = out else { panic!("{out:?}") };
    assert!(reason.contains("no proof accepted in 5 attempts"), "{reason}");
    // Five agent calls in all: obligation, sub-goal, sub-goal, obligation, sub-goal.
    assert_eq!(logged_requests(&log).len(), 5);
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    for a in &attempts {
        let note = &a.errors.last().unwrap().message;
        assert!(note.starts_with("proof repair: sub-goal `test_sum_sub") && note.contains("not proved"), "{note}");
    }
    assert!(attempts[1].errors.last().unwrap().message.contains("no agent attempts left"), "{attempts:#?}");
    assert!(lean.seen.lock().unwrap().iter().all(|f| !f.contains("sorry")), "a `sorry` reached the checker");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_repair_budget_the_loop_only_retries_whole_proofs() {
    let mut a = CommandAgent::new(double("repairs.sh"));
    let lean = ScriptedLean::default();
    let out = prove(&request(), &mut a, Some(&lean), &Policy::default(), &Budget { repair_rounds: 0, ..budget(2) });
    let Outcome::NotProved { attempts, .. } = out else { panic!("{out:?}") };
    assert_eq!(attempts.len(), 2);
    assert!(attempts.iter().all(|a| a.errors.len() == 1 && !a.errors[0].message.contains("proof repair")));
    assert_eq!(lean.seen.lock().unwrap().len(), 2, "no probe, no sub-goal");
}

#[test]
fn the_built_in_prover_leaves_sub_goals_to_the_portfolio_without_spending_its_attempts() {
    let lean = ScriptedLean::default();
    let out = prove(&request(), &mut agent::BuiltIn::new(), Some(&lean), &Policy::default(), &budget(20));
    let Outcome::NotProved { reason, attempts } = out else { panic!("{out:?}") };
    assert!(reason.contains("no more tactics"), "{reason}");
    assert_eq!(attempts.len(), agent::BuiltIn::TACTICS.len(), "every tactic of the portfolio was tried");
    for a in &attempts {
        let note = &a.errors.last().unwrap().message;
        assert!(note.contains("proof repair: sub-goal `test_sum_sub") && note.contains("no more tactics"), "{note}");
    }
    // Per tactic: the proof, the probe (a hole after its last step), the sub-goal portfolio.
    assert_eq!(lean.seen.lock().unwrap().len(), 3 * attempts.len());
}

/// The same loop against real Lean, where `lake` is on PATH: the repaired proof must be one
/// Lean accepts.
#[test]
fn with_real_lean_a_repaired_proof_is_accepted() {
    let tc = match lean::toolchain::detect(&lean::library_dir()) {
        Ok(tc) => tc,
        Err(e) => {
            eprintln!("skipped: proof repair against real Lean needs the toolchain: {e}");
            return;
        }
    };
    let checker = agent::checker::LeanChecker::start(tc, Policy::default(), Duration::from_secs(3600)).unwrap_or_else(|e| panic!("{e}"));
    let mut a = CommandAgent::new(double("repairs.sh"));
    let out = prove(&request(), &mut a, Some(&checker), &Policy::default(), &Budget { lean_timeout: Duration::from_secs(120), ..budget(6) });
    let Outcome::Proved { proof, .. } = out else { panic!("{out:?}") };
    assert!(proof.contains("have h1 : n + 0 = n := by\n    rfl"), "{proof}");
    assert!(!proof.contains("sorry"));
}
