//! The environment variables. They are process-wide, so this binary has a single test that
//! sets and clears them in order.

mod common;

use common::{assert_easy_answer, easy_query, EASY};
use smt::{Never, Query, SatResult, SmtError, Solver, SolverKind, DUMP_ENV};

#[test]
fn environment_chooses_binaries_and_dumps_queries() {
    // The environment is process-wide: this binary has one test, so no other thread reads it
    // while it changes.
    for kind in SolverKind::ALL {
        std::env::set_var(kind.env_var(), "/opt/nowhere/solver");
        let mut s = Solver::new(kind);
        assert_eq!(s.program(), std::path::Path::new("/opt/nowhere/solver"));
        assert_eq!(s.check(&easy_query(), EASY, &Never), Err(SmtError::NotFound { kind, program: "/opt/nowhere/solver".into() }));
        assert!(!kind.is_installed(), "{kind}: the override names nothing");
        std::env::set_var(kind.env_var(), "");
        assert_eq!(Solver::new(kind).program(), std::path::Path::new(kind.binary()), "an empty override means the default");
        let installed = common::installed();
        assert!(kind.is_installed() == installed.contains(&kind), "{kind}: looked up on PATH");
        std::env::set_var(kind.env_var(), "/bin/sh");
        assert!(kind.is_installed(), "{kind}: an override that names an executable");
        std::env::remove_var(kind.env_var());
    }
    let preferred = if SolverKind::Yices.is_installed() { SolverKind::Yices } else { SolverKind::Z3 };
    assert_eq!(SolverKind::preferred_for_bit_vectors(), preferred, "Yices where installed");

    let dir = std::env::temp_dir().join(format!("lark-smt-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::env::set_var(DUMP_ENV, &dir);
    let mut s = Solver::new(SolverKind::Z3);
    assert_easy_answer(s.check(&easy_query(), EASY, &Never));
    std::env::remove_var(DUMP_ENV);
    assert_easy_answer(s.check(&easy_query(), EASY, &Never));

    let dumped: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(dumped.len(), 1, "one file for the one query asked while the variable was set: {dumped:?}");
    let text = std::fs::read_to_string(&dumped[0]).unwrap();
    assert_eq!(
        text,
        "; LARK query for z3, timeout 20000 ms\n(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-const x (_ BitVec 8))\n\
         (assert (= (bvmul x (_ bv4 8)) (_ bv12 8)))\n(check-sat)\n(get-value (x))\n"
    );
    // The dump is a standalone script: the other solver answers it the same way.
    let again = Query::from_script(&text).unwrap();
    assert_easy_answer(Solver::new(SolverKind::Cvc5).check(&again, EASY, &Never));
    for kind in common::installed() {
        let out = std::process::Command::new(kind.binary()).arg(&dumped[0]).output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("sat\n"), "{kind} runs the file as it is: {out:?}");
    }
    assert!(matches!(Solver::new(SolverKind::Z3).check(&again, EASY, &Never), Ok(SatResult::Sat(_))));
    std::fs::remove_dir_all(&dir).unwrap();
}
