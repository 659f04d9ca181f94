//! The solver processes a check uses, and how one of the engine's queries is asked.
//!
//! The engine writes its two-thread queries as SMT-LIB text (`encode`, `query`); here that text
//! is read into an [`::smt::Query`] and decided by the `smt` crate's driver, which owns the
//! processes, their time limits and cancellation. Everything that can go wrong on the way —
//! a timeout, a solver that gives up, crashes or is missing, a cancelled check — comes back as
//! one [`Outcome`] the checks turn into an answer or an uncertified reason.

use ::smt::{Cancellation, Model, Query as SmtQuery, SatResult, SmtError, Value};
use std::collections::HashMap;
use std::time::{Duration, Instant};

pub use ::smt::{stop_all_solvers, SolverKind};

/// The environment variable that picks the solver when nothing else does (`z3`, `cvc5` or
/// `yices`).
pub const SOLVER_ENV: &str = "LARK_SOLVER";

/// The solver named by `LARK_SOLVER`, else Yices where it is installed, else Z3 (see
/// [`SolverKind::preferred_for_bit_vectors`]: the engine's questions are all bit-vector
/// questions). An unknown name is an error the caller shows (the CLI refuses it); it is never
/// silently replaced by another solver.
pub fn solver_from_env() -> Result<SolverKind, UnknownSolver> {
    match std::env::var(SOLVER_ENV) {
        Ok(name) if !name.trim().is_empty() => parse_solver(name.trim()),
        _ => Ok(SolverKind::preferred_for_bit_vectors()),
    }
}

/// `z3`, `cvc5` or `yices` (any case).
pub fn parse_solver(name: &str) -> Result<SolverKind, UnknownSolver> {
    SolverKind::ALL.into_iter().find(|k| k.name().eq_ignore_ascii_case(name)).ok_or_else(|| UnknownSolver { name: name.to_string() })
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown SMT solver `{name}` (expected `z3`, `cvc5` or `yices`)")]
pub struct UnknownSolver {
    pub name: String,
}

/// Idle solver processes kept between checks, so that a check does not pay for starting a
/// process (a few milliseconds each). A check borrows one process per worker, of the kind its
/// [`crate::Options::solver`] names, and hands them back when it ends; a process of another
/// kind stays idle for a later check that wants it.
#[derive(Debug, Default)]
pub struct Solver {
    idle: Vec<::smt::Solver>,
}

/// Idle processes kept at most (two kinds × a few workers).
const MAX_IDLE: usize = 16;

impl Solver {
    pub fn new() -> Solver {
        Solver::default()
    }

    /// A process of `kind` for one worker: an idle one when there is one, else a new one
    /// (which starts on its first query, so lending one that is never used costs nothing).
    /// Its time limit counts CPU time (see [`::smt::Solver::limit_cpu_time`]): the workers of a
    /// check share the cores with each other and with whatever else runs, and a verdict must
    /// not depend on that.
    pub(crate) fn lend(&mut self, kind: SolverKind) -> ::smt::Solver {
        match self.idle.iter().rposition(|s| s.kind() == kind) {
            Some(i) => self.idle.swap_remove(i),
            None => {
                let mut solver = ::smt::Solver::new(kind);
                solver.limit_cpu_time(true);
                solver
            }
        }
    }

    /// Takes a lent process back for the next check.
    pub(crate) fn give_back(&mut self, solver: ::smt::Solver) {
        if self.idle.len() < MAX_IDLE {
            self.idle.push(solver);
        }
    }

    /// Processes idle now (for tests and statistics).
    pub fn idle(&self) -> usize {
        self.idle.len()
    }
}

/// How asking one query ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Satisfiable: the values of the declared constants and of the terms the query asked
    /// for, bit-vectors as numbers and booleans as 0 or 1 (the naming the witnesses read).
    Sat(HashMap<String, u64>),
    Unsat,
    /// The solver's time limit (or the watchdog's) ran out.
    Timeout,
    /// The solver gave up, failed, crashed or is missing; the message says which.
    Failed(String),
    /// `stop` said so while the query ran; the process was killed.
    Stopped,
}

/// Reads `script` (declarations, definitions, assertions and a `get-value`, as the encoder
/// wrote them) into a query for the driver. A script that does not read is a bug in the
/// encoder, reported as a failure of the query rather than a panic.
pub fn read_query(script: &str) -> Result<SmtQuery, String> {
    let mut q = SmtQuery::new(::smt::Logic::QfBv);
    q.extend_script(script).map_err(|e| format!("the engine wrote an SMT query the solver driver cannot read: {e}"))?;
    Ok(q)
}

/// Adds `script` to `q` (extra assertions to try); see [`read_query`].
pub fn extend_query(q: &mut SmtQuery, script: &str) -> Result<(), String> {
    q.extend_script(script).map_err(|e| format!("the engine wrote an SMT query the solver driver cannot read: {e}"))
}

/// Asks `solver` about `query` within `timeout`; `stop` is polled every few milliseconds
/// while the solver works, and a query it stops ends within milliseconds. Returns the outcome
/// and the time spent.
pub fn ask(solver: &mut ::smt::Solver, query: &SmtQuery, timeout: Duration, stop: &(impl Cancellation + ?Sized)) -> (Outcome, Duration) {
    let started = Instant::now();
    let outcome = match solver.check(query, timeout, stop) {
        Ok(SatResult::Sat(model)) => Outcome::Sat(numbers(&model)),
        Ok(SatResult::Unsat) => Outcome::Unsat,
        Ok(SatResult::Unknown(reason)) if reason.starts_with("timeout") => Outcome::Timeout,
        Ok(SatResult::Unknown(reason)) => Outcome::Failed(format!("{} {reason}", solver.kind())),
        Err(SmtError::Cancelled) => Outcome::Stopped,
        Err(e) => Outcome::Failed(e.to_string()),
    };
    (outcome, started.elapsed())
}

/// The bit-vector and boolean values of a model by name. Values of other sorts do not occur
/// in the engine's queries; a value the model could not read is left out, and a witness that
/// needs it reads its default (the replay then decides whether the witness holds).
fn numbers(model: &Model) -> HashMap<String, u64> {
    model
        .iter()
        .filter_map(|(name, value)| match value.ok()? {
            // The engine's bit-vectors are at most 64 bits wide.
            Value::BitVec { value, .. } => Some((name.to_string(), *value as u64)),
            Value::Bool(b) => Some((name.to_string(), *b as u64)),
            Value::Int(_) | Value::Real(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::smt::Never;

    const LIMIT: Duration = Duration::from_secs(10);

    fn outcome(kind: SolverKind, script: &str) -> Outcome {
        let mut solver = ::smt::Solver::new(kind);
        ask(&mut solver, &read_query(script).unwrap(), LIMIT, &Never).0
    }

    /// Models come back as the witnesses read them, from every solver: bit-vectors (also
    /// defined terms asked for with `get-value`) as numbers, booleans as 0/1.
    #[test]
    fn every_solver_answers_with_numbered_models() {
        let script = "(declare-const x (_ BitVec 8))\n(declare-const p Bool)\n(define-fun d () (_ BitVec 8) (bvadd x (_ bv1 8)))\n\
                      (assert (= (bvmul x (_ bv4 8)) (_ bv12 8)))\n(assert (bvult x (_ bv64 8)))\n(assert p)\n(get-value (d))\n";
        for kind in SolverKind::installed_noting_the_rest() {
            let expected: HashMap<String, u64> = [("x".to_string(), 3), ("p".to_string(), 1), ("d".to_string(), 4)].into();
            assert_eq!(outcome(kind, script), Outcome::Sat(expected), "{kind}");
            assert_eq!(outcome(kind, "(declare-const x (_ BitVec 8))\n(assert (distinct x x))\n"), Outcome::Unsat, "{kind}");
        }
    }

    #[test]
    fn an_unreadable_script_and_a_missing_solver_are_failures() {
        assert!(read_query("(assert (= x").is_err());
        let mut missing = ::smt::Solver::with_program(SolverKind::Z3, "definitely-not-a-solver-lark");
        let (o, _) = ask(&mut missing, &read_query("(assert true)").unwrap(), LIMIT, &Never);
        assert!(matches!(&o, Outcome::Failed(m) if m.contains("not found")), "{o:?}");
    }

    /// A stop that is already set ends the query before the solver sees it; one set while the
    /// solver works kills it within milliseconds.
    #[test]
    fn a_stopped_query_ends_within_milliseconds() {
        // Thirteen pigeons in twelve holes: exponential for the SAT solvers behind both.
        let mut hard: String = (0..13).map(|i| format!("(declare-const h{i} (_ BitVec 4))\n(assert (bvult h{i} (_ bv12 4)))\n")).collect();
        hard.push_str(&format!("(assert (distinct {}))\n", (0..13).map(|i| format!("h{i}")).collect::<Vec<_>>().join(" ")));
        let q = read_query(&hard).unwrap();
        for kind in SolverKind::installed_noting_the_rest() {
            let mut solver = ::smt::Solver::new(kind);
            assert_eq!(ask(&mut solver, &q, LIMIT, &|| true).0, Outcome::Stopped);
            let started = Instant::now();
            let stop_at = started + Duration::from_millis(300);
            let (o, spent) = ask(&mut solver, &q, LIMIT, &|| Instant::now() >= stop_at);
            assert_eq!(o, Outcome::Stopped, "{kind}");
            assert!(spent < Duration::from_millis(1000), "{kind}: stopped after {spent:?}");
        }
    }

    #[test]
    fn solver_names() {
        assert_eq!(parse_solver("cvc5"), Ok(SolverKind::Cvc5));
        assert_eq!(parse_solver("Z3"), Ok(SolverKind::Z3));
        assert_eq!(parse_solver("yices"), Ok(SolverKind::Yices));
        assert_eq!(parse_solver("boolector").unwrap_err().to_string(), "unknown SMT solver `boolector` (expected `z3`, `cvc5` or `yices`)");
    }

    #[test]
    fn lent_processes_come_back_by_kind() {
        let mut pool = Solver::new();
        let z3 = pool.lend(SolverKind::Z3);
        let cvc5 = pool.lend(SolverKind::Cvc5);
        pool.give_back(z3);
        pool.give_back(cvc5);
        assert_eq!(pool.idle(), 2);
        assert_eq!(pool.lend(SolverKind::Cvc5).kind(), SolverKind::Cvc5);
        assert_eq!(pool.idle(), 1);
        assert_eq!(pool.lend(SolverKind::Cvc5).kind(), SolverKind::Cvc5, "a new one when none of the kind is idle");
        assert_eq!(pool.idle(), 1);
    }
}
