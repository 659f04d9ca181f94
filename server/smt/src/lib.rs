//! SMT solvers for LARK: Z3, cvc5 and Yices 2 run as separate processes over SMT-LIB pipes, typed
//! terms to ask them with, and typed models back.
//!
//! LARK's engine asks bit-vector questions (`QF_BV`: can two threads touch the same byte in one
//! phase?) and, for equivalence with a PyTorch reference, questions over reals and uninterpreted
//! functions (`QF_UFLRA`, `QF_UFNRA`). This crate is the only place that talks to a solver.
//! Yices is asked only the bit-vector questions, where it is the fastest of the three (see
//! [`SolverKind::preferred_for_bit_vectors`]); z3 answers everything, cvc5 is the second opinion.
//!
//! ```no_run
//! use smt::{CancelToken, Logic, Query, SatResult, Solver, SolverKind, Sort};
//! use std::time::Duration;
//!
//! let mut q = Query::new(Logic::QfBv);
//! let x = q.declare_const("x", Sort::BitVec(8));
//! q.assert(q.eq(q.bv_mul(x, q.bv(4, 8)), q.bv(12, 8)));
//! let mut solver = Solver::new(SolverKind::Z3);
//! match solver.check(&q, Duration::from_millis(2000), &CancelToken::new())? {
//!     SatResult::Sat(model) => println!("x = {}", model.bv("x")?),
//!     SatResult::Unsat => println!("no such x"),
//!     SatResult::Unknown(reason) => println!("undecided: {reason}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Process model
//!
//! A [`Solver`] owns one solver process, started on its first query and reused: each query is
//! sent inside `(push 1)` … `(pop 1)`, so a small query costs a few milliseconds, not a process
//! start. The process is never trusted to behave: a crash, a hang, garbage on stdout or an
//! `(error ...)` answer ends that query (typed [`SmtError`], or `Unknown` for a timeout), the
//! process is killed, and the next query starts a fresh one. Nothing a solver does can take the
//! caller (the language server) down. Threads feed stdin and read stdout, so the caller never
//! blocks on a pipe and can always give up.
//!
//! # Timeouts
//!
//! Every query has a time limit. The solver's own limit is set (z3's `:timeout` per query;
//! cvc5's `--tlimit-per` on its command line, as cvc5 1.0.3 ignores it afterwards, so a cvc5
//! process is restarted when the limit changes; Yices has none, and its process is stopped by
//! the watchdog, then started afresh for the next query) and usually answers `unknown` in time. A
//! watchdog waits a grace period longer (100 ms plus half the limit, at most 2 s) and then kills
//! the process. Either way the result is `SatResult::Unknown("timeout after N ms")`, which the
//! engine reports as *uncertified*, never as verified.
//!
//! A limit on the clock makes answers depend on how busy the machine is. With
//! [`Solver::limit_cpu_time`] the limit counts the solver's CPU time instead (read from
//! `/proc/<pid>/schedstat` while waiting; Linux only, elsewhere the clock stays), and the clock
//! only stops a query at four times the limit. LARK's engine asks its queries this way, so a
//! verdict does not change because other programs, or the engine's own parallel workers,
//! share the cores.
//!
//! # Cancellation
//!
//! [`Solver::check`] takes anything [`Cancellation`]: a [`CancelToken`], an `AtomicBool`, or a
//! closure. It is checked every 5 ms while waiting; once set, the process is killed and
//! [`SmtError::Cancelled`] returned, typically within a few milliseconds. The language server
//! uses this to drop work for a superseded edit.
//!
//! # Terms and models
//!
//! A [`Query`] builds typed [`Term`]s of the [`Sort`]s `Bool`, `(_ BitVec n)`, `Int` and `Real`
//! and applies uninterpreted functions ([`Query::declare_fun`]). Operand sorts are checked as
//! terms are built; a mistake is collected and the query refused with
//! [`SmtError::IllFormed`], never a panic. A script that is already SMT-LIB text can be read with
//! [`Query::from_script`]. A satisfiable answer carries a [`Model`] with a typed [`Value`] for
//! every declared constant and every term asked for with [`Query::want`], read from whatever
//! spelling the solver chose (`#x1f`, `#b101`, `(_ bv31 32)`, `(/ 1.0 3.0)`, `(/ (- 1) 3)`).
//!
//! Solver differences worth knowing: both print models in their own spellings (read alike
//! here); cvc5 takes its time limit per process (see Timeouts); Debian's cvc5 1.0.3 has no
//! libpoly, so for nonlinear real problems that need irrational witnesses it gives up or runs to
//! its limit, where z3 answers with an algebraic number that the model reports as unavailable
//! ([`ValueError::Irrational`]).
//!
//! An encoder that already writes SMT-LIB text (as LARK's two-thread encoder does) can use the
//! driver unchanged: [`Query::extend_script`] adds its declarations, definitions and assertions;
//! [`Query::mark`] and [`Query::rollback`] try extra assertions and take them back.
//!
//! # Why easy-smt only builds terms
//!
//! Terms live in an [`easy_smt::Context`] arena and are printed by it. easy-smt's own solver
//! driver is not used: its `Context` reads answers with blocking calls and keeps the child
//! process private, so a hung query can be neither timed out nor cancelled from the caller's
//! thread, and it panics on some unexpected answers. Its S-expression parser is private to that
//! driver (0.3.2), so answers are read by this crate's SMT-LIB reader (`sexp.rs`).
//!
//! # Environment
//!
//! - `LARK_Z3`, `LARK_CVC5`, `LARK_YICES`: paths to the solver binaries (default: `z3`, `cvc5`,
//!   `yices-smt2` on `PATH`).
//!   A missing binary is [`SmtError::NotFound`], naming how to install it.
//! - `LARK_SMT_DUMP=dir`: every query is also written to `dir` as a standalone `.smt2` script.

mod build;
mod cancel;
mod dump;
mod model;
mod process;
mod query;
mod script;
mod sexp;
mod solver;
mod sort;
mod value;

pub use cancel::{CancelToken, Cancellation, Never};
pub use dump::DUMP_ENV;
pub use model::{Model, ModelError};
pub use process::stop_all as stop_all_solvers;
pub use query::{BuildError, Func, Mark, Query, Term};
pub use script::ScriptError;
pub use sexp::{Span, SyntaxError};
pub use solver::{SatResult, SmtError, Solver, SolverKind, SolverStats};
pub use sort::{Logic, Sort};
pub use value::{Value, ValueError};
