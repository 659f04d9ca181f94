//! Helpers shared by the integration tests: real solvers, fake ones, and two reference queries.
#![allow(dead_code)] // each test binary uses a different part

use smt::{Logic, Query, Solver, SolverKind, Sort};
use std::path::PathBuf;
use std::time::Duration;

/// Long enough for every easy query on a loaded 2-core machine.
pub const EASY: Duration = Duration::from_secs(20);

/// The solvers to run real queries on: every kind, less Yices where `yices-smt2` is not
/// installed (it comes from PyPI, see `scripts/install-deps.sh`; CI installs it), which is said
/// on stderr rather than failed, as z3 and cvc5 still cover the behaviour.
pub fn installed() -> Vec<SolverKind> {
    SolverKind::installed_noting_the_rest()
}

pub fn solver(kind: SolverKind) -> Solver {
    Solver::new(kind)
}

/// Sixteen pigeons in fifteen holes: unsatisfiable, and exponential for the SAT solvers behind
/// every solver here (fourteen in thirteen took z3 12 s; cvc5 and Yices ran past 20 s), so it
/// runs until a time limit stops it. (Factoring a 128-bit product of two 64-bit primes, used
/// before, is answered by Yices at once.)
pub fn hard_query() -> Query {
    const PIGEONS: u128 = 16;
    let mut q = Query::new(Logic::QfBv);
    let holes: Vec<_> = (0..PIGEONS).map(|i| q.declare_const(&format!("h{i}"), Sort::BitVec(4))).collect();
    for &h in &holes {
        q.assert(q.bv_ult(h, q.bv(PIGEONS - 1, 4)));
    }
    q.assert(q.distinct(&holes));
    q
}

/// `x * 4 = 12` over 8 bits: satisfiable, with `x mod 64 = 3`.
pub fn easy_query() -> Query {
    let mut q = Query::new(Logic::QfBv);
    let x = q.declare_const("x", Sort::BitVec(8));
    q.assert(q.eq(q.bv_mul(x, q.bv(4, 8)), q.bv(12, 8)));
    q
}

/// Asserts that `answer` is the satisfiable answer of [`easy_query`].
pub fn assert_easy_answer(answer: Result<smt::SatResult, smt::SmtError>) {
    match answer {
        Ok(smt::SatResult::Sat(m)) => assert_eq!(m.bv("x").unwrap() & 0x3f, 3),
        other => panic!("expected sat with x = 3 mod 64, got {other:?}"),
    }
}

/// An executable shell script standing in for a solver (one that hangs, or answers nonsense).
pub fn fake_solver(name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("lark-smt-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Whether a process with this id still exists (a killed and reaped solver does not).
pub fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

pub fn kill_9(pid: u32) {
    let status = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

/// Waits until a killed child has fully exited (a zombie with no threads left), which is when
/// the solver can notice it without waiting. z3 is multi-threaded: its main thread turns zombie
/// while the others are still being torn down.
pub fn wait_until_dead(pid: u32) {
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < until {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let zombie = status.is_empty() || status.contains("State:\tZ");
        if zombie && (status.is_empty() || status.contains("Threads:\t1\n")) {
            std::thread::sleep(Duration::from_millis(20));
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("process {pid} did not exit within 10 s of SIGKILL");
}
