//! The process model: timeouts, the watchdog, cancellation, crashes, missing binaries and
//! answers that make no sense. Every case must leave the solver usable for the next query.

mod common;

use common::{assert_easy_answer, easy_query, fake_solver, hard_query, installed, kill_9, process_exists, solver, EASY};
use smt::{CancelToken, Logic, Never, Query, SatResult, SmtError, Solver, SolverKind, Sort};
use std::time::{Duration, Instant};

#[test]
fn a_hard_query_times_out_and_the_next_one_works() {
    for kind in installed() {
        let mut s = solver(kind);
        let started = Instant::now();
        let answer = s.check(&hard_query(), Duration::from_millis(50), &Never);
        let took = started.elapsed();
        assert_eq!(answer, Ok(SatResult::Unknown("timeout after 50 ms".into())), "{kind}");
        // 50 ms limit + 125 ms watchdog grace, plus slack for a loaded machine.
        assert!(took < Duration::from_millis(1000), "{kind}: took {took:?}");
        assert_eq!(s.stats().timeouts, 1, "{kind}");
        assert_easy_answer(s.check(&easy_query(), EASY, &Never));
        eprintln!("{kind}: timeout answered after {took:?}; {:?}", s.stats());
    }
}

#[test]
fn the_watchdog_kills_a_solver_that_never_answers() {
    let hung = fake_solver("hangs", "while read -r line; do :; done");
    for kind in SolverKind::ALL {
        let mut s = Solver::with_program(kind, &hung);
        let started = Instant::now();
        let answer = s.check(&easy_query(), Duration::from_millis(100), &Never);
        let took = started.elapsed();
        assert_eq!(answer, Ok(SatResult::Unknown("timeout after 100 ms".into())), "{kind}");
        // The solver's own limit never answers here: the watchdog fires after 100 + 150 ms.
        assert!(took >= Duration::from_millis(250) && took < Duration::from_millis(1500), "{kind}: took {took:?}");
        assert_eq!(s.process_id(), None, "{kind}: the hung process is gone");
        // z3 asks a QF_BV query in two stages (its core for an eighth of the time, then the
        // `qfbv` tactic): two kills.
        let kills = if kind == SolverKind::Z3 { 2 } else { 1 };
        assert_eq!((s.stats().kills, s.stats().timeouts), (kills, 1), "{kind}");
    }
}

#[test]
fn cancellation_kills_the_solver_within_50_ms() {
    for kind in installed() {
        let mut s = solver(kind);
        let timeout = Duration::from_secs(60);
        // Start the process with the same time limit, so the hard query reuses it.
        assert_easy_answer(s.check(&easy_query(), timeout, &Never));
        let mut latencies = Vec::new();
        for _ in 0..3 {
            let pid = s.process_id().unwrap_or(0);
            let token = CancelToken::new();
            let canceller = {
                let token = token.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(150));
                    token.cancel();
                    Instant::now()
                })
            };
            let answer = s.check(&hard_query(), timeout, &token);
            let returned = Instant::now();
            let cancelled_at = canceller.join().unwrap();
            assert_eq!(answer, Err(SmtError::Cancelled), "{kind}");
            latencies.push(returned - cancelled_at);
            assert_eq!(s.process_id(), None, "{kind}");
            if pid != 0 {
                assert!(!process_exists(pid), "{kind}: process {pid} was killed and reaped");
            }
        }
        latencies.sort();
        eprintln!("{kind}: cancellation latencies {latencies:?}");
        assert!(latencies[1] < Duration::from_millis(50), "{kind}: median latency {:?}", latencies[1]);
        assert!(latencies[2] < Duration::from_millis(250), "{kind}: worst latency {:?}", latencies[2]);
        assert_eq!(s.stats().cancelled, 3);
        assert_easy_answer(s.check(&easy_query(), EASY, &Never));
    }
}

#[test]
fn extreme_time_limits_are_clamped() {
    for kind in installed() {
        let mut s = solver(kind);
        assert_easy_answer(s.check(&easy_query(), Duration::MAX, &Never));
        // No time at all is read as 1 ms (z3 would read 0 as "no limit").
        match s.check(&easy_query(), Duration::ZERO, &Never) {
            Ok(SatResult::Sat(_)) => {}
            Ok(SatResult::Unknown(reason)) => assert_eq!(reason, "timeout after 1 ms", "{kind}"),
            other => panic!("{kind}: {other:?}"),
        }
    }
}

#[test]
fn an_already_cancelled_query_does_not_start_anything() {
    let mut s = solver(SolverKind::Z3);
    let token = CancelToken::new();
    token.cancel();
    assert_eq!(s.check(&easy_query(), EASY, &token), Err(SmtError::Cancelled));
    assert_eq!(s.stats().starts, 0);
    // A closure works as a cancellation check too.
    assert_easy_answer(s.check(&easy_query(), EASY, &|| false));
}

#[test]
fn a_solver_killed_while_idle_is_replaced() {
    for kind in installed() {
        let mut s = solver(kind);
        assert_easy_answer(s.check(&easy_query(), EASY, &Never));
        let pid = s.process_id().expect("running");
        kill_9(pid);
        common::wait_until_dead(pid);
        assert_easy_answer(s.check(&easy_query(), EASY, &Never));
        assert_eq!(s.stats().starts, 2, "{kind}");
        assert_ne!(s.process_id(), Some(pid), "{kind}");
    }
}

#[test]
fn a_solver_crashing_mid_query_fails_that_query_only() {
    for kind in installed() {
        let mut s = solver(kind);
        let timeout = Duration::from_secs(60);
        assert_easy_answer(s.check(&easy_query(), timeout, &Never));
        let pid = s.process_id().expect("running");
        let killer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            kill_9(pid);
        });
        let answer = s.check(&hard_query(), timeout, &Never);
        killer.join().unwrap();
        match answer {
            Err(SmtError::Exited { kind: k, detail }) => {
                assert_eq!(k, kind);
                assert!(detail.contains("signal: 9"), "{kind}: {detail}");
            }
            other => panic!("{kind}: expected the crash to be reported, got {other:?}"),
        }
        assert_easy_answer(s.check(&easy_query(), timeout, &Never));
    }
}

#[test]
fn a_missing_binary_names_the_package() {
    for kind in SolverKind::ALL {
        let mut s = Solver::with_program(kind, format!("/nonexistent/{}", kind.name()));
        let e = s.check(&easy_query(), EASY, &Never).unwrap_err();
        assert_eq!(e, SmtError::NotFound { kind, program: format!("/nonexistent/{kind}") });
        assert_eq!(
            e.to_string(),
            format!("the SMT solver `/nonexistent/{kind}` was not found: install it with `{}`, or set {} to its path", kind.install_hint(), kind.env_var())
        );
        assert_eq!(s.version().unwrap_err(), e);
    }
}

#[test]
fn versions_are_reported() {
    assert_eq!(solver(SolverKind::Z3).version().map(|v| v.starts_with("4.")), Ok(true));
    assert_eq!(solver(SolverKind::Cvc5).version().map(|v| v.starts_with("1.")), Ok(true));
}

#[test]
fn an_ill_formed_query_is_refused_before_the_solver_sees_it() {
    let mut q = Query::new(Logic::QfBv);
    let x = q.declare_const("x", Sort::BitVec(8));
    q.assert(q.bv_add(x, q.bv(1, 16)));
    let mut s = solver(SolverKind::Z3);
    let e = s.check(&q, EASY, &Never).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the query is ill-formed: `bvadd` expects two bit-vectors of one width, found (_ BitVec 8) and (_ BitVec 16); `assert` expects Bool, found (_ BitVec 8)"
    );
    assert_eq!(s.stats().starts, 0);
}

#[test]
fn a_query_the_solver_rejects_is_an_error_and_the_next_query_works() {
    for kind in installed() {
        // An Int constant under QF_BV: both solvers refuse the sort.
        let q = Query::from_script("(set-logic QF_BV)\n(declare-const i Int)\n(assert (> i 0))").unwrap();
        let mut s = solver(kind);
        match s.check(&q, EASY, &Never) {
            Err(SmtError::Rejected { kind: k, message }) => {
                assert_eq!(k, kind);
                assert!(message.contains("Int"), "{kind}: {message}");
            }
            other => panic!("{kind}: expected a rejection, got {other:?}"),
        }
        assert_easy_answer(s.check(&easy_query(), EASY, &Never));
    }
}

#[test]
fn nonsense_answers_are_protocol_errors() {
    let chatty = fake_solver("chatty", "while read -r line; do case \"$line\" in *check-sat*) echo hello;; esac; done");
    let mut s = Solver::with_program(SolverKind::Z3, &chatty);
    assert_eq!(s.check(&easy_query(), EASY, &Never).unwrap_err().to_string(), "z3 answered `hello` where `sat`, `unsat` or `unknown` was expected");
    let sloppy = fake_solver("sloppy", "while read -r line; do case \"$line\" in *check-sat*) echo sat;; *get-value*) echo '((x #x01) (y #x02))';; esac; done");
    let mut s = Solver::with_program(SolverKind::Z3, &sloppy);
    assert_eq!(
        s.check(&easy_query(), EASY, &Never).unwrap_err().to_string(),
        "z3 answered `((x #x01) (y #x02))` where one `(term value)` pair per term asked for was expected"
    );
    let quitter = fake_solver("quitter", "echo 'cannot go on' >&2; exit 3");
    let mut s = Solver::with_program(SolverKind::Cvc5, &quitter);
    assert_eq!(
        s.check(&easy_query(), EASY, &Never).unwrap_err().to_string(),
        "cvc5 stopped while answering: the process ended (exit status: 3); stderr: cannot go on"
    );
}

#[test]
fn a_logic_change_restarts_cvc5_while_z3_resets_between_queries() {
    let mut z3 = solver(SolverKind::Z3);
    let mut cvc5 = solver(SolverKind::Cvc5);
    for s in [&mut z3, &mut cvc5] {
        assert_easy_answer(s.check(&easy_query(), EASY, &Never));
        assert_easy_answer(s.check(&easy_query(), EASY, &Never));
        let mut q = Query::new(Logic::QfLra);
        let r = q.declare_const("r", Sort::Real);
        q.assert(q.gt(r, q.rational(0, 1)));
        assert!(matches!(s.check(&q, EASY, &Never), Ok(SatResult::Sat(_))));
        assert_easy_answer(s.check(&easy_query(), EASY * 2, &Never));
    }
    assert_eq!(z3.stats().starts, 1, "z3: `(reset)` after each query lets the next set its own logic; the timeout is per query");
    assert_eq!(cvc5.stats().starts, 3, "cvc5: the last query changed both logic and timeout");
    assert_eq!(z3.stats().queries, 4);
}

/// Yices is asked only LARK's bit-vector questions: another logic is refused before a process
/// sees it, with a message that says so, and the solver answers the next query.
#[test]
fn yices_refuses_other_logics_and_answers_the_next_query() {
    if !installed().contains(&SolverKind::Yices) {
        return;
    }
    let mut s = solver(SolverKind::Yices);
    let mut q = Query::new(Logic::QfLra);
    let r = q.declare_const("r", Sort::Real);
    q.assert(q.gt(r, q.rational(0, 1)));
    let refused = s.check(&q, EASY, &Never).unwrap_err();
    assert_eq!(refused.to_string(), "yices rejected the query: LARK asks yices only bit-vector (QF_BV) queries, not QF_LRA");
    assert_eq!(s.stats().starts, 0, "refused before a process started");
    assert_easy_answer(s.check(&easy_query(), EASY, &Never));
    assert_easy_answer(s.check(&easy_query(), EASY, &Never));
    assert_eq!(s.stats().starts, 1, "`(reset)` and the options again between queries, one process");
    // Its own limit is a backstop on its command line, longer than any query it is asked:
    // a longer query needs a new process, a shorter one does not.
    assert_easy_answer(s.check(&easy_query(), EASY * 3, &Never));
    assert_easy_answer(s.check(&easy_query(), EASY, &Never));
    assert_eq!(s.stats().starts, 2);
}

/// With a CPU-time limit, a solver that takes long by the clock without computing (as one on
/// a busy machine does) still answers; one that computes is stopped once its CPU time is spent;
/// one that never answers is stopped by the clock's backstop.
#[test]
fn a_cpu_time_limit_counts_what_the_solver_computes() {
    let idle = fake_solver("idle", "while read -r line; do case \"$line\" in *check-sat*) sleep 0.3; echo unsat;; esac; done");
    let mut by_clock = Solver::with_program(SolverKind::Z3, &idle);
    assert_eq!(by_clock.check(&easy_query(), Duration::from_millis(100), &Never), Ok(SatResult::Unknown("timeout after 100 ms".into())));
    let mut by_cpu = Solver::with_program(SolverKind::Z3, &idle);
    by_cpu.limit_cpu_time(true);
    assert_eq!(by_cpu.check(&easy_query(), Duration::from_millis(100), &Never), Ok(SatResult::Unsat));

    for kind in installed() {
        let mut s = solver(kind);
        s.limit_cpu_time(true);
        let started = Instant::now();
        let answer = s.check(&hard_query(), Duration::from_millis(100), &Never);
        let took = started.elapsed();
        assert_eq!(answer, Ok(SatResult::Unknown("timeout after 100 ms".into())), "{kind}");
        assert!(took < Duration::from_millis(1500), "{kind}: took {took:?}");
        assert_easy_answer(s.check(&easy_query(), EASY, &Never));
    }

    let hung = fake_solver("hangs-quietly", "while read -r line; do :; done");
    let mut s = Solver::with_program(SolverKind::Cvc5, &hung);
    s.limit_cpu_time(true);
    let started = Instant::now();
    assert_eq!(s.check(&easy_query(), Duration::from_millis(100), &Never), Ok(SatResult::Unknown("timeout after 100 ms".into())));
    // The clock's backstop: 4 × 100 ms, plus 300 ms of grace.
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(700) && took < Duration::from_millis(2500), "took {took:?}");
}

/// A z3 or Yices process answers each query as a fresh one would: which model a satisfiable
/// query gets must not depend on what the process answered before (the checker spreads its
/// questions over several processes, in an order that varies between runs).
#[test]
fn a_model_does_not_depend_on_the_queries_before_it() {
    let product = |name: &str, value: u128, floor: u128| {
        let mut q = Query::new(Logic::QfBv);
        let x = q.declare_const(&format!("{name}1"), Sort::BitVec(16));
        let y = q.declare_const(&format!("{name}2"), Sort::BitVec(16));
        q.assert(q.eq(q.bv_mul(x, y), q.bv(value, 16)));
        for v in [x, y] {
            q.assert(q.bv_ugt(v, q.bv(floor, 16)));
        }
        q
    };
    let asked = product("x", 0x3030, 1);
    let model = |answer: Result<SatResult, SmtError>| match answer {
        Ok(SatResult::Sat(m)) => (m.bv("x1").unwrap(), m.bv("x2").unwrap()),
        other => panic!("expected sat, got {other:?}"),
    };
    for kind in installed().into_iter().filter(|k| *k != SolverKind::Cvc5) {
        let fresh = model(solver(kind).check(&asked, EASY, &Never));
        let mut used = solver(kind);
        for (value, floor) in [(0x1234, 3), (0x4321, 2), (0x0f0f, 4)] {
            assert!(matches!(used.check(&product("a", value, floor), EASY, &Never), Ok(SatResult::Sat(_))));
        }
        assert_eq!(model(used.check(&asked, EASY, &Never)), fresh, "{kind}");
        assert_eq!(used.stats().starts, 1, "{kind}");
    }
}
