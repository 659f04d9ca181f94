//! `stop_all_solvers` kills every solver process of the program, also one in the middle of a
//! query (which reads nothing from its stdin until the query ends, so it would outlive a parent
//! that exits). Process-wide, so this binary has this one test.

mod common;

use common::{assert_easy_answer, easy_query, hard_query, installed, process_exists, solver, EASY};
use smt::{Never, SmtError};
use std::time::{Duration, Instant};

#[test]
fn every_solver_busy_with_a_query_is_stopped() {
    let busy: Vec<_> = installed()
        .into_iter()
        .map(|kind| {
            std::thread::spawn(move || {
                let mut s = solver(kind);
                let answer = s.check(&hard_query(), Duration::from_secs(60), &Never);
                (kind, answer, s)
            })
        })
        .collect();
    // Let every process start and begin its query.
    std::thread::sleep(Duration::from_millis(500));
    let stopped = Instant::now();
    smt::stop_all_solvers();
    for handle in busy {
        let (kind, answer, mut s) = handle.join().unwrap();
        assert!(matches!(answer, Err(SmtError::Exited { .. })), "{kind}: the query fails as if the solver had crashed: {answer:?}");
        assert!(stopped.elapsed() < Duration::from_secs(2), "{kind}: answered {:?} after the stop", stopped.elapsed());
        assert!(s.process_id().is_none_or(|pid| !process_exists(pid)), "{kind}");
        // The solver is usable again: a fresh process answers the next query.
        assert_easy_answer(s.check(&easy_query(), EASY, &Never));
    }
}
