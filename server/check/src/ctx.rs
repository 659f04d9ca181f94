//! What every check needs: the kernel, its lifted model and phases, the interface binding, the
//! solver, and the helpers that turn model symbols into query constraints.
//!
//! The checks of one kernel run on several workers (see `schedule`); each worker has a `Ctx`
//! of its own with its own solver process and counters, and they share the read-only kernel
//! facts and the cache of enumerated points.

use crate::answers::{AnswerCache, Source};
use crate::bind::Binding;
use crate::enumerate::Point;
use crate::query::Query;
use crate::smt::Outcome;
use model::cfg::{BlockId, LoopId};
use model::expr::{ExprId, Sym};
use model::phases::Phases;
use model::symbolic::{Access, AccessKind, Base, Lifted};
use model::Kernel;
use spec::Assumption;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// What one worker needs to answer the two-thread questions of one kernel: the lifted model,
/// its solver, the budget and the shared enumeration cache.
pub struct Ctx<'a> {
    pub k: &'a Kernel,
    pub l: &'a Lifted,
    pub phases: &'a Phases,
    pub bind: &'a Binding,
    /// This worker's solver process.
    pub solver: &'a mut ::smt::Solver,
    /// Per SMT query.
    pub timeout_ms: u64,
    pub queries: u64,
    /// Time spent waiting for the solver.
    pub solver_time: Duration,
    /// Polled before every query and during enumeration: when it runs out, the remaining
    /// checks are answered `Unknown` (uncertified); when it is cancelled, the result is
    /// discarded by the caller.
    pub budget: model::budget::Budget,
    /// Checks decided by exhaustive enumeration instead of the solver.
    pub enumerated: u64,
    /// The launch, when the interface fixes it (enables enumeration).
    pub launch: Option<crate::enumerate::Launch>,
    /// A race was ruled out with the row-major index lemma (an assumption the report names;
    /// see [`crate::query::Query::add_index_lemmas`]).
    pub relied_on_no_wrap: bool,
    /// Whether a satisfiable query is answered with its first model, without the tiers that
    /// look for a small witness (see [`Ctx::run_witness`]): set where only whether a witness
    /// exists matters (the launch confirmation's checks of a finding's own lines).
    pub decide_only: bool,
    /// Enumerated points, shared by the pairs an access is in and by the workers.
    pub points: &'a PointsCache,
    /// The answers of the queries asked so far, shared by the workers.
    answers: &'a AnswerCache,
    /// The rows each access keeps to (see [`crate::rows`]), shared by the workers.
    pub rows: &'a crate::rows::RowsCache,
    /// Probes that will not be asked again for questions alike (see [`Ctx::run_witness`]),
    /// shared by the workers.
    spent_probes: &'a Mutex<std::collections::HashSet<(Alike, Probe)>>,
    /// Whether a required witness tier of this kernel ran out of time (see
    /// [`Ctx::run_witness`]), shared by the workers.
    tier_timed_out: &'a std::sync::atomic::AtomicBool,
    /// Every open scalar's ordinary value (see [`Ctx::ordinary_tier`]), computed when first
    /// asked, shared by the workers.
    ordinary: &'a OnceLock<OrdinarySetting>,
    /// Where a question is posted for an idle worker to start while its restrictions are
    /// asked (see [`crate::prefetch`]); `None` with a single worker.
    pub prefetch: Option<&'a crate::prefetch::Prefetch>,
    /// Bases written somewhere in the kernel (others are read-only).
    written: BTreeSet<Base>,
    /// Per exit fact: the blocks reachable from the loop's exit.
    after_loop: Vec<(LoopId, ExprId, Vec<bool>)>,
}

/// The share of a query's time the query without index products gets before the full query
/// is asked (125 ms at Yices' default 1 s, 250 ms at z3's 2 s): a longer `--timeout-ms`
/// lengthens both. With no setup, every one of the 68 refutations on `tests/real` took Yices
/// under 100 ms, and each of the 6 that ran out of a quarter's time (llm.c's layernorm and
/// fused residual) was followed by a question answered `sat` in about 10 ms.
const INDEX_ABSTRACTION_SHARE: u64 = 8;

/// When a query stops early, answered as out of time after `after_ms`: once that much time has
/// passed and `when` holds (polled with the budget while the solver works).
#[derive(Clone, Copy)]
struct Cut<'c> {
    after_ms: u64,
    when: &'c dyn Fn() -> bool,
}

/// Whether a witness tier is required of a witness when it can be had, or only preferred (see
/// [`Ctx::run_witness`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TierKind {
    Required,
    Preference,
}

/// What a witness tier asks: assertions that pick small values, and the narrower declarations
/// those values allow (see [`crate::encode::Encoder::script_narrowed`]; the declarations make
/// the tier cheap, the assertions say exactly what it asks).
#[derive(Clone, Debug, Default)]
struct Tier {
    asserts: String,
    narrow: crate::encode::ExtraNarrowing,
}

impl Tier {
    /// `name` (a `bits`-wide constant) is at most `max`.
    fn at_most(&mut self, name: &str, max: u64, bits: u32) {
        self.asserts.push_str(&format!("(assert (bvule {name} {}))\n", crate::encode::bv(max, bits)));
        self.narrow_only(name, max);
    }

    /// `name` (a `bits`-wide constant) is `value`.
    fn equals(&mut self, name: &str, value: u64, bits: u32) {
        self.asserts.push_str(&format!("(assert (= {name} {}))\n", crate::encode::bv(value, bits)));
        self.narrow_only(name, value);
    }

    /// `name` is declared with the bits of `max`, which the query's or this tier's assertions
    /// already imply.
    fn narrow_only(&mut self, name: &str, max: u64) {
        self.tighten(name, crate::encode::Narrow::unsigned_max(max.into()));
    }

    /// The narrower of `name`'s narrowings so far and `narrow` (a tier's are all unsigned).
    fn tighten(&mut self, name: &str, narrow: crate::encode::Narrow) {
        let entry = self.narrow.entry(name.to_string()).or_insert(narrow);
        if narrow.bits < entry.bits {
            *entry = narrow;
        }
    }

    /// Both tiers' restrictions.
    fn and(&self, other: &Tier) -> Tier {
        let mut both = self.clone();
        both.asserts.push_str(&other.asserts);
        for (name, &narrow) in &other.narrow {
            both.tighten(name, narrow);
        }
        both
    }
}

/// Whether an address or a path condition of `q` reads a value from memory (an index, whose
/// values a witness names: see `races::seeds_for`), wider than a flag.
fn reads_indices(q: &Query) -> bool {
    q.enc.declared_loaded_values().iter().any(|&(name, bits)| bits > 10 && q.wanted.iter().any(|w| w == name))
}

/// A one-dimensional block of a common size: 64, 128 or 256 threads (what kernels are
/// launched with, and what the launch confirmation compares with).
fn simple_block(threads: u8) -> Tier {
    let mut simple = Tier::default();
    simple.asserts.push_str("(assert (or (= ntid_x (_ bv64 32)) (= ntid_x (_ bv128 32)) (= ntid_x (_ bv256 32))))\n");
    simple.at_most("ntid_x", 256, 32);
    for d in ["y", "z"] {
        simple.at_most(&format!("ntid_{d}"), 1, 32);
    }
    for t in 1..=threads {
        simple.narrow_only(&format!("tid_x_{t}"), 255);
        simple.narrow_only(&format!("tid_y_{t}"), 0);
        simple.narrow_only(&format!("tid_z_{t}"), 0);
    }
    simple
}

/// The outcome of one query.
pub enum Answer {
    Sat(HashMap<String, u64>),
    Unsat,
    Unknown(Undecided),
}

impl Answer {
    /// `sat`, `unsat`, or why there is no answer (for traces).
    fn describe(&self) -> String {
        match self {
            Answer::Sat(_) => "sat".into(),
            Answer::Unsat => "unsat".into(),
            Answer::Unknown(why) => format!("{why:?}"),
        }
    }

    /// A model keeps the values the query reports (see [`Query::reported`]); the solver also
    /// gives the values of every other constant, which a witness must not read (a buffer's
    /// address is not a parameter value to show).
    fn reported(self, q: &Query) -> Answer {
        match self {
            Answer::Sat(mut model) => {
                retain_reported(&mut model, q);
                Answer::Sat(model)
            }
            other => other,
        }
    }
}

/// Keeps of `model` only the values `q` reports.
fn retain_reported(model: &mut HashMap<String, u64>, q: &Query) {
    let keep: BTreeSet<&str> = q.reported().into_iter().collect();
    model.retain(|name, _| keep.contains(name.as_str()));
}

/// Why a query has no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undecided {
    /// The solver gave up or did not answer in time.
    Timeout { millis: u64 },
    /// The kernel's budget ran out before the query was asked.
    Budget,
    /// The process reached its memory ceiling.
    Memory,
    /// The solver failed or is missing.
    Failure(String),
    /// The caller no longer wants the result.
    Cancelled,
}

impl From<model::budget::Stop> for Undecided {
    fn from(stop: model::budget::Stop) -> Undecided {
        match stop {
            model::budget::Stop::Cancelled => Undecided::Cancelled,
            model::budget::Stop::Deadline => Undecided::Budget,
            model::budget::Stop::Memory => Undecided::Memory,
        }
    }
}

impl Undecided {
    /// The uncertified reason for an undecided `question`.
    pub fn reason(self, question: crate::report::Question) -> crate::report::Reason {
        use crate::report::Reason;
        match self {
            Undecided::Timeout { millis } => Reason::SolverTimeout { question, millis },
            // A cancelled check's report is discarded; if it is shown anyway, it is unfinished.
            Undecided::Budget | Undecided::Cancelled => Reason::BudgetExhausted { question },
            Undecided::Memory => Reason::MemoryExhausted { question, ceiling_mb: (model::budget::memory_ceiling() >> 20) as u64 },
            Undecided::Failure(message) => Reason::SolverFailure { question, message },
        }
    }
}

impl<'a> Ctx<'a> {
    pub fn new(
        k: &'a Kernel,
        l: &'a Lifted,
        phases: &'a Phases,
        bind: &'a Binding,
        solver: &'a mut ::smt::Solver,
        caches: &'a Caches,
        timeout_ms: u64,
    ) -> Ctx<'a> {
        let written = l.accesses.iter().filter(|a| a.kind != AccessKind::Read).filter_map(|a| a.base).collect();
        let after_loop = l
            .exit_facts
            .iter()
            .map(|&(lp, fact)| {
                let exits: Vec<BlockId> = k.cfg.loops[lp as usize].exits.iter().map(|e| e.1).collect();
                (lp, fact, reachable_from(k, &exits))
            })
            .collect();
        let mut ctx = Ctx {
            k,
            l,
            phases,
            bind,
            solver,
            timeout_ms,
            queries: 0,
            solver_time: Default::default(),
            budget: model::budget::Budget::unlimited(),
            enumerated: 0,
            launch: None,
            relied_on_no_wrap: false,
            decide_only: false,
            points: &caches.points,
            answers: &caches.answers,
            rows: &caches.rows,
            spent_probes: &caches.spent_probes,
            tier_timed_out: &caches.tier_timed_out,
            ordinary: &caches.ordinary,
            prefetch: None,
            written,
            after_loop,
        };
        ctx.launch = crate::enumerate::Launch::of(&ctx);
        ctx
    }

    /// Asks the solver about a query read for the driver, within `timeout_ms`. The kernel's
    /// budget (its deadline and the caller's cancellation) is polled while the solver works, so
    /// a cancelled check stops within milliseconds even in the middle of a hard query.
    fn ask_within(&mut self, query: &::smt::Query, timeout_ms: u64) -> Answer {
        self.ask_as(query, query.to_smtlib(), timeout_ms, None)
    }

    /// [`Ctx::ask_within`] for a query whose text (`query.to_smtlib()`, the answer cache's key)
    /// is rendered already, and maybe cut short (see [`Cut`]).
    fn ask_as(&mut self, query: &::smt::Query, text: String, timeout_ms: u64, cut: Option<Cut>) -> Answer {
        if let Err(stop) = self.budget.check() {
            return Answer::Unknown(Undecided::from(stop));
        }
        self.queries += 1;
        let (budget, solver) = (&self.budget, &mut *self.solver);
        let started = std::time::Instant::now();
        let cut_now = || cut.as_ref().is_some_and(|c| started.elapsed() >= Duration::from_millis(c.after_ms) && (c.when)());
        let (outcome, source) = self
            .answers
            .get_or_solve(text, timeout_ms, || crate::smt::ask(solver, query, Duration::from_millis(timeout_ms), &|| budget.check().is_err() || cut_now()).0);
        let spent = started.elapsed();
        self.solver_time += spent;
        crate::trace::line(|| {
            let what = match &outcome {
                Outcome::Sat(_) => "sat".to_string(),
                other => format!("{other:?}"),
            };
            let reused = if source == Source::Reused { " (answered before)" } else { "" };
            format!("query {} {what} {:.1} ms (limit {timeout_ms} ms){reused}", self.queries, spent.as_secs_f64() * 1e3)
        });
        match outcome {
            Outcome::Sat(model) => Answer::Sat(model),
            Outcome::Unsat => Answer::Unsat,
            Outcome::Timeout => Answer::Unknown(Undecided::Timeout { millis: timeout_ms }),
            Outcome::Failed(message) => Answer::Unknown(Undecided::Failure(message)),
            Outcome::Stopped => match self.budget.check() {
                Err(stop) => Answer::Unknown(Undecided::from(stop)),
                Ok(()) if cut_now() => Answer::Unknown(Undecided::Timeout { millis: cut.map_or(timeout_ms, |c| c.after_ms) }),
                Ok(()) => Answer::Unknown(Undecided::Cancelled),
            },
        }
    }

    /// Whether `query` is unsatisfiable, asked with at most `limit_ms` (an unknown is `false`).
    pub fn refutes_within(&mut self, query: &::smt::Query, limit_ms: u64) -> bool {
        matches!(self.ask_within(query, self.timeout_ms.min(limit_ms)), Answer::Unsat)
    }

    /// Asks the solver about `q`; a satisfiable query is asked again for a counterexample that is easy to
    /// read and cheap to replay (the replay runs the witness's blocks on buffers as large as
    /// its offsets, for as many loop iterations as its parameters ask): small block indices,
    /// parameters and offsets, a small one-dimensional block (else rows of whole warps), and
    /// the `prefer`red assertions (terms). Tighter tiers come first; the first model is kept when no tier has one.
    ///
    /// When the launch leaves the block size open, the tightest tier is asked first, with a
    /// quarter of the time: with every size and parameter free, the solver often cannot find
    /// even the plainest witness of a real finding (rows of stride 0 written by two blocks)
    /// within the query's time, while the tier, whose constants are declared a few bits wide,
    /// finds it in a fraction of a second. A model of the tier is a model of the query.
    ///
    /// Once the probe of a question runs out of time, the questions `alike` it are asked
    /// without one: their probes run out of time too (vLLM's MoE alignment, opened with no
    /// setup: sixteen probes of one counting statement, 0.65 s each, every one a timeout). The
    /// probe only saves time; skipping it changes no answer, since the tiers still look for
    /// a small witness of a satisfiable question. Where the small probe runs out of time (or is
    /// not asked), the question is also asked at ordinary values first (see
    /// [`Ctx::ordinary_probe`]).
    pub fn run_witness(&mut self, q: &Query, threads: u8, prefer: &[String], alike: Alike) -> Answer {
        if let Err(stop) = self.budget.check() {
            return Answer::Unknown(Undecided::from(stop));
        }
        // Built only for a probe or a satisfiable question (most questions are neither).
        let mut tiers = None;
        // The tightest tier is not asked again after the question when its probe was asked (it
        // said no or ran out of time) or skipped (an alike question's ran out of time): with
        // four times the time it did not find a witness either (ggml's rope: two more
        // timeouts, 2.5 s each; vLLM's MoE alignment: `unsat` after 1.4 to 1.7 s), and the
        // looser tiers still look for one.
        let skip_first_tier = self.bind.concrete_block().is_none();
        let spent = |p: Probe| lock(self.spent_probes).contains(&(alike.clone(), p));
        let small = skip_first_tier && !spent(Probe::Small);
        // Whether the tightest tier ran out of time, as the probe of this question or of one
        // alike: it counts as the first tier to time out (see the tiers below).
        let mut probe_timed_out = skip_first_tier && !small;
        let indices = reads_indices(q);
        let ordinary = (self.has_open_values() || indices) && !spent(Probe::Ordinary);
        // With a restriction to ask first, the question itself is posted for a worker out of
        // checks to start meanwhile (see `crate::prefetch`); a restriction that decides it withdraws
        // it (dropping `early`), and the question below waits for the answer being given.
        // Once an alike question (the same kind of question about the same lines) was
        // satisfiable or ran out of its whole time, the lines are reported undecided unless a
        // witness reproduces, and another pair of them only adds to the report with a witness
        // of its own: it gets a quarter of the time, as witness tiers do after a timeout
        // (PyTorch's ILP softmax with no setup: a second pair of one line ran a whole second
        // out for the same report).
        let alike_spent = spent(Probe::Question);
        let question_ms = if alike_spent { (self.timeout_ms / 4).max(1) } else { self.timeout_ms };
        let early = if small || ordinary || q.has_index_lemmas() { self.post_question(q, question_ms) } else { None };
        // A question whose address reads an index from memory is asked at ordinary values
        // first (see `ordinary_probe`): the small probe, whose sizes are free, ran out of time on
        // each such store of the KV-cache writes (0.65 s apiece) before the ordinary probe found
        // the race of two tokens with one slot.
        let indices_first = ordinary && small && indices;
        if indices_first {
            if let Some(found) = self.ordinary_probe(q, threads, &alike) {
                return found;
            }
        }
        // Whether the small probe left the question open for want of time (now, or for a
        // question alike).
        let mut small_ran_out = !small;
        if small {
            let built = self.witness_tiers(q, threads, prefer);
            let asked = std::time::Instant::now();
            let answer = self.ask_tier(q, &built[0].1, (self.timeout_ms / 4).max(1));
            crate::trace::line(|| format!("witness probe: {} ({:.0} ms)", answer.describe(), asked.elapsed().as_secs_f64() * 1e3));
            match answer {
                Answer::Sat(m) => return Answer::Sat(m).reported(q),
                Answer::Unknown(Undecided::Timeout { .. }) => {
                    lock(self.spent_probes).insert((alike.clone(), Probe::Small));
                    small_ran_out = true;
                    probe_timed_out = true;
                }
                Answer::Unknown(_) | Answer::Unsat => {}
            }
            tiers = Some(built);
        }
        if ordinary && !indices_first && small_ran_out {
            if let Some(found) = self.ordinary_probe(q, threads, &alike) {
                return found;
            }
        }
        // With index lemmas, the query without the products of its row-major offsets (see
        // `Query::index_abstraction`), before the question itself: its `unsat` is the
        // question's. It comes after the probe: a satisfiable question (most of those of a
        // kernel opened with no setup, at the launches nobody declared) is answered there, and
        // the abstraction, weaker still, spent its whole share being satisfiable first (llm.c's
        // fused classifier: about 0.6 s for each of a dozen racing pairs).
        if let Some(Ok(abstraction)) = q.index_abstraction() {
            let asked = std::time::Instant::now();
            let refuted = self.refutes_within(&abstraction, (self.timeout_ms / INDEX_ABSTRACTION_SHARE).max(1));
            crate::trace::line(|| format!("index abstraction: refuted {refuted} ({:.0} ms)", asked.elapsed().as_secs_f64() * 1e3));
            if refuted {
                // The row-major lemmas assume indices do not wrap; the report says so.
                self.relied_on_no_wrap = true;
                return Answer::Unsat;
            }
        }
        // Each thread's rank in its block as a free value first (see `crate::thread_rank`): a
        // proof that needs only `rank < threads` is quick there and slow through the products.
        // Half the query's time: a satisfiable question is mostly satisfiable here at once (the
        // abstraction is weaker), and a proof through a per-block store next to row-major
        // lemmas took 0.45 s of a quarter's 0.5 s.
        if let Some((Ok(abstraction), assumes_no_wrap)) = q.thread_rank_abstraction() {
            let asked = std::time::Instant::now();
            let refuted = self.refutes_within(&abstraction, (self.timeout_ms / 2).max(1));
            crate::trace::line(|| format!("thread-rank abstraction: refuted {refuted} ({:.0} ms)", asked.elapsed().as_secs_f64() * 1e3));
            if refuted {
                // The same stated assumption as the row-major lemmas': indices do not wrap.
                self.relied_on_no_wrap |= assumes_no_wrap;
                return Answer::Unsat;
            }
        }
        let (query, text) = match early {
            Some((query, posted)) => (query, posted.ask_now()),
            None => match q.to_smt() {
                Ok(query) => {
                    let text = query.to_smtlib();
                    (query, text)
                }
                Err(message) => return Answer::Unknown(Undecided::Failure(message)),
            },
        };
        // An alike question found satisfiable or out of time while this one runs cuts it at a
        // quarter, as if it had been asked after (PyTorch's ILP softmax with no setup: the
        // second pair of a line ran its whole second out while the first pair's question,
        // started earlier, was satisfiable).
        let asked = std::time::Instant::now();
        let spent_probes = self.spent_probes;
        let alike_now_spent = || lock(spent_probes).contains(&(alike.clone(), Probe::Question));
        let cut = (!alike_spent).then_some(Cut { after_ms: (self.timeout_ms / 4).max(1), when: &alike_now_spent });
        let first = self.ask_as(&query, text, question_ms, cut);
        crate::trace::line(|| format!("question: {} ({:.0} ms)", first.describe(), asked.elapsed().as_secs_f64() * 1e3));
        if matches!(first, Answer::Sat(_) | Answer::Unknown(Undecided::Timeout { .. })) {
            lock(self.spent_probes).insert((alike.clone(), Probe::Question));
        }
        let Answer::Sat(_) = first else { return first };
        if self.decide_only {
            return first.reported(q);
        }
        // A tier gets a query's full time until one times out: a witness with small values is
        // what the replay can run (with a quarter of it, the cross-block race of a KV-cache
        // write kept only a witness with 2^62-sized slots, which no replay reproduces). A tier
        // that times out is mostly one with no small witness that the solver cannot refute
        // (a race that needs a 32-bit index to wrap around: every tier forbids it, and each
        // took its full time, twice over, on ggml's rope); the tiers after it get a quarter
        // each, and a second timeout keeps the first model. A tier that is only a preference
        // (whole warps) gets a quarter, and its timeout does not cut the others'. Once a
        // required tier of the kernel has timed out, the later questions' tiers start at a
        // quarter too: the kernel's other races share its index arithmetic (vLLM's group
        // quantisation with no setup: a full second per tier on three questions, 3.4 s). The
        // small probe is the tightest required tier: where it ran out of time, the others start
        // at a quarter as well (vLLM's group quantisation: after its probe's 0.25 s, two
        // preferences' quarters and a full second for the next tier, none with a witness). So
        // do they for a question whose alike question was satisfiable or ran out of time
        // before it, as the question itself does: another pair of its lines only adds to the
        // report with a witness of its own.
        let tiers = tiers.unwrap_or_else(|| self.witness_tiers(q, threads, prefer));
        let mut timed_out = probe_timed_out || alike_spent || self.tier_timed_out.load(std::sync::atomic::Ordering::Relaxed);
        for (number, (kind, tier)) in tiers.iter().enumerate() {
            if number == 0 && skip_first_tier {
                continue;
            }
            let preference = *kind == TierKind::Preference;
            // Another worker's tier may have timed out meanwhile (an alike question's, still
            // in its tiers when this one started them).
            timed_out |= self.tier_timed_out.load(std::sync::atomic::Ordering::Relaxed);
            // Once a tier has timed out, the next timeout of a required tier ends the search:
            // a preference (only a nicer shape) is then skipped rather than given its quarter
            // first (vLLM's group quantisation: two preferences' quarters, then the required
            // tier's, none with a witness, on each of two questions).
            if preference && timed_out {
                continue;
            }
            let limit = if timed_out || preference { (self.timeout_ms / 4).max(1) } else { self.timeout_ms };
            let asked = std::time::Instant::now();
            let answer = self.ask_tier(q, tier, limit);
            crate::trace::line(|| format!("witness tier {}: {} ({:.0} ms)", number + 1, answer.describe(), asked.elapsed().as_secs_f64() * 1e3));
            match answer {
                Answer::Sat(m) => return Answer::Sat(m).reported(q),
                Answer::Unknown(Undecided::Timeout { .. }) if preference => {}
                Answer::Unknown(Undecided::Timeout { .. }) if timed_out => break,
                Answer::Unknown(Undecided::Timeout { .. }) => {
                    timed_out = true;
                    self.tier_timed_out.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Answer::Unknown(_) | Answer::Unsat => {}
            }
        }
        first.reported(q)
    }

    /// Where the small probe ran out of time (or was not asked: the block is declared), the
    /// question at the scalar confirmation's ordinary values, fixed, with small loaded values
    /// (see [`Ctx::ordinary_tier`]), when the interface leaves scalars or the grid open or an
    /// address or a path condition of the question reads memory. With every size free the
    /// solver must search products and divisions of unknowns (a KV-cache write's 64-bit
    /// `slot / block_size` times four sizes: the probe ran out of time, then the question,
    /// 2.6 s); with the sizes fixed it folds them, and a race through a repeated index value
    /// (two tokens with one slot) is found in a tenth of a second. Even with every size fixed,
    /// a free 64-bit slot divided by 96 kept each of the scalar confirmation's re-checks at the
    /// common blocks from an answer (2.5 s each); a slot below 128 is found at once. A witness
    /// there is also one the scalar confirmation finds at ordinary values. It is asked once
    /// for questions alike unless it finds one (those it could not answer, or ruled out at
    /// these values, are alike in that too). `Some` is the witness found.
    fn ordinary_probe(&mut self, q: &Query, threads: u8, alike: &Alike) -> Option<Answer> {
        let tier = self.ordinary_tier(q, threads);
        let asked = std::time::Instant::now();
        let answer = self.ask_tier(q, &tier, (self.timeout_ms / 4).max(1));
        crate::trace::line(|| format!("ordinary probe: {} ({:.0} ms)", answer.describe(), asked.elapsed().as_secs_f64() * 1e3));
        match answer {
            Answer::Sat(mut m) => {
                retain_reported(&mut m, q);
                // The open values the question does not mention are ordinary too: the replay
                // runs the whole kernel, and passed as zeros (vLLM's MoE alignment with a
                // `block_size` of 0: a loop bound of `n / 0`, 20 M steps, 3 s) they are not
                // what the probe asked about.
                for (name, value, _) in self.ordinary_params() {
                    m.entry(name).or_insert(value);
                }
                Some(Answer::Sat(m))
            }
            _ => {
                lock(self.spent_probes).insert((alike.clone(), Probe::Ordinary));
                None
            }
        }
    }

    /// Posts `q`'s question for a worker out of checks of its own (see [`crate::prefetch`]).
    fn post_question(&self, q: &Query, timeout_ms: u64) -> Option<(::smt::Query, crate::prefetch::Posted)> {
        let prefetch = self.prefetch?;
        let script = q.script();
        let query = crate::smt::read_query(&script).ok()?;
        let posted = prefetch.post(script, query.to_smtlib(), timeout_ms);
        Some((query, posted))
    }

    /// The witness tiers of [`Ctx::run_witness`], tightest first.
    fn witness_tiers(&self, q: &Query, threads: u8, prefer: &[String]) -> Vec<(TierKind, Tier)> {
        let preferred = Tier { asserts: prefer.iter().map(|p| format!("(assert {p})\n")).collect(), narrow: Default::default() };
        let mut small_grid = Tier::default();
        for d in ["x", "y", "z"] {
            small_grid.at_most(&format!("nctaid_{d}"), 4, 32);
        }
        // A one-dimensional block of a common size (64, 128 or 256 threads: what kernels are
        // launched with, and what the launch confirmation compares with, so a finding found
        // there needs no launch of its own), in a grid of at most 4 blocks a side.
        let simple = small_grid.and(&simple_block(threads));
        // Rows of whole warps (`ntid_x` a multiple of 32), in any second dimension: how a kernel
        // with a warp per row, or a lane group per row, is launched (vLLM's top-k gating takes
        // (32, 4)). When only a two-dimensional block shows a finding, a block such as (2, 64)
        // puts pieces of many rows in one warp, and its replay stops at a warp divergence
        // (lanes of one warp shuffling with lanes that returned early) before it reaches the
        // finding; (64, 2) shows the same finding with whole warps.
        let mut warp_rows = small_grid;
        warp_rows.asserts.push_str("(assert (= (bvurem ntid_x (_ bv32 32)) (_ bv0 32)))\n");
        // Parameters up to 128, loop iterations below 16 and offsets within the replay's default
        // buffer (1 MiB) first, in a simple block and then in any; then parameters up to 1024;
        // then up to 2^16 and within the largest buffer the replay makes. Small parameters come
        // before a simple block: a parameter is often a loop bound (the replay runs every
        // iteration), and witnesses with C = 32832 or k = 903 (found when only a 2-D block shows
        // the bug) made every replay of a tiled GEMM or a top-k loop run into the step limit.
        // Loaded values are small in the two tightest tiers only: a race through index values
        // that wrap a 64-bit offset around (two slots 2^53 apart writing one address) has a
        // witness with small offsets only when the values are huge, and the last tier must
        // still find it (the replay cannot run the first model's offsets near 2^63).
        let tiny = self.small_values(q, threads, 1 << 7, 1 << 20, true).and(&self.early_iterations(q, 15)).and(&preferred);
        let tight = self.small_values(q, threads, 1 << 10, 1 << 20, true).and(&preferred);
        let small = self.small_values(q, threads, 1 << 16, crate::replay::MAX_BUFFER_BYTES, false);
        let mut tiers = vec![
            (TierKind::Required, tiny.and(&simple)),
            // Parameters up to 1024 in a simple block, before any block: when the tightest tier
            // has no witness, a finding that needs only a longer loop (a grid-stride loop whose
            // body a thread past 192 reaches only with more than 128 elements: the CUDA
            // samples' histogram) is found here in milliseconds, with the block all but fixed,
            // where the same parameters in any block took 0.8 s per line. Only a preference: a
            // finding that needs another block is refuted here, or not in a quarter's time.
            (TierKind::Preference, tight.and(&simple)),
            (TierKind::Required, tiny.clone()),
            (TierKind::Required, tight),
            (TierKind::Required, small.and(&preferred)),
        ];
        if !preferred.asserts.is_empty() {
            tiers.push((TierKind::Required, small));
        }
        // Whole warps matter only to a kernel with warp collectives (where a replay can stop at
        // a divergence), and are only a preference (on ggml's ssm_scan it took 2.3 s to say no).
        if !self.l.warp_ops.is_empty() {
            tiers.insert(1, (TierKind::Preference, tiny.and(&warp_rows)));
        }
        tiers
    }

    /// Every open scalar's ordinary value (see `scalar_confirm::ordinary_setting`).
    fn ordinary_setting(&self) -> &OrdinarySetting {
        self.ordinary.get_or_init(|| crate::scalar_confirm::ordinary_setting(self.k, self.l, self.bind))
    }

    /// The open parameters and fields the kernel reads, by constant name (`p{index}_{offset}`),
    /// with their ordinary values and widths. A flag or a byte-wide field is left out (96
    /// would not fit).
    fn ordinary_params(&self) -> Vec<(String, u64, u32)> {
        let mut out = Vec::new();
        for (&(index, offset), &value) in self.ordinary_setting() {
            let sym = Sym::Param { index, offset };
            let Some((_, bits)) = self.l.exprs.find_var(sym) else { continue };
            if (8..=64).contains(&bits) && value < 1i128 << (bits - 1) {
                out.push((crate::encode::sym_name(sym, 0), value as u64, bits));
            }
        }
        out
    }

    /// Whether the interface leaves a scalar or the grid open (what [`Ctx::ordinary_tier`] fixes).
    fn has_open_values(&self) -> bool {
        self.bind.grid.iter().any(|d| d.value().is_none()) || !self.ordinary_setting().is_empty()
    }

    /// The scalar confirmation's ordinary setting as a witness tier: every open scalar and
    /// field at its ordinary value (see `scalar_confirm::ordinary_setting`), a simple block (when
    /// it is open), a grid of `ORDINARY_GRID` blocks along each open dimension, and small loaded values and
    /// offsets (as in the tightest tier).
    fn ordinary_tier(&self, q: &Query, threads: u8) -> Tier {
        let mut tier = if self.bind.concrete_block().is_none() { simple_block(threads) } else { Tier::default() };
        let declared = q.enc.declared_params();
        for (name, value, bits) in self.ordinary_params() {
            if declared.contains(&name.as_str()) {
                tier.equals(&name, value, bits);
            }
        }
        let grid = crate::scalar_confirm::ORDINARY_GRID;
        for (d, name) in ["x", "y", "z"].iter().enumerate() {
            if self.bind.grid[d].value().is_none() {
                tier.equals(&format!("nctaid_{name}"), grid, 32);
                for t in 1..=threads {
                    tier.narrow_only(&format!("ctaid_{name}_{t}"), grid - 1);
                }
            }
        }
        for (name, bits) in q.enc.declared_loaded_values() {
            if bits > 10 {
                tier.at_most(name, (1 << 7) - 1, bits);
            }
        }
        for name in ["off_1", "off_2"] {
            if q.enc.is_declared(name) {
                tier.at_most(name, crate::replay::MAX_BUFFER_BYTES - 1, 64);
            }
        }
        tier
    }

    /// Assertions for a small witness: block indices up to 3, scalar parameters and (with
    /// `small_loads`) values loaded from memory, wider than 10 bits, up to `param_max`, the
    /// offsets `off_1`/`off_2` below `offset_max`. A loaded value is mostly an index read from
    /// a buffer (a block table, a slot mapping, expert ids): a small one is what a witness
    /// shows best, and a free 32-bit value multiplied by sizes kept the probe of a paged-KV
    /// append from any answer in 10 s (with values up to 127: a witness in under a second).
    fn small_values(&self, q: &Query, threads: u8, param_max: u64, offset_max: u64, small_loads: bool) -> Tier {
        let mut small = Tier::default();
        for t in 1..=threads {
            for d in ["x", "y", "z"] {
                small.at_most(&format!("ctaid_{d}_{t}"), 3, 32);
            }
        }
        // Every parameter the query mentions, fields of aggregate parameters included.
        for name in q.enc.declared_params() {
            let Some((index, offset)) = name.strip_prefix('p').and_then(|r| r.split_once('_')) else { continue };
            let (Ok(index), Ok(offset)) = (index.parse(), offset.parse()) else { continue };
            if let Some((_, bits)) = self.l.exprs.find_var(Sym::Param { index, offset }) {
                if bits > 10 {
                    small.at_most(name, param_max, bits);
                }
            }
        }
        for (name, bits) in q.enc.declared_loaded_values() {
            if small_loads && bits > 10 {
                small.at_most(name, param_max, bits);
            }
        }
        for name in ["off_1", "off_2"] {
            if q.enc.is_declared(name) {
                small.at_most(name, offset_max - 1, 64);
            }
        }
        small
    }

    /// Assertions that every loop iteration the query names is at most `last`.
    fn early_iterations(&self, q: &Query, last: u64) -> Tier {
        let mut tier = Tier::default();
        for (name, bits) in q.enc.declared_counters() {
            tier.at_most(name, last, bits);
        }
        tier
    }

    /// Asks `q` restricted to `tier` within `limit_ms`.
    fn ask_tier(&mut self, q: &Query, tier: &Tier, limit_ms: u64) -> Answer {
        let mut query = match q.to_smt_narrowed(&tier.narrow) {
            Ok(query) => query,
            Err(message) => return Answer::Unknown(Undecided::Failure(message)),
        };
        match crate::smt::extend_query(&mut query, &tier.asserts) {
            Ok(()) => self.ask_within(&query, limit_ms),
            Err(message) => Answer::Unknown(Undecided::Failure(message)),
        }
    }

    /// The exit facts that matter for expressions `roots` at `block`: those of loops whose
    /// counter the roots (or an already chosen fact) mention. A fact about a counter nothing
    /// mentions constrains nothing and only costs the solver.
    pub fn relevant_facts(&self, block: BlockId, roots: &[ExprId]) -> Vec<(LoopId, ExprId)> {
        let candidates: Vec<(LoopId, ExprId)> = self
            .after_loop
            .iter()
            .filter(|(lp, _, reach)| !self.k.cfg.loops[*lp as usize].contains(block) && reach[block as usize])
            .map(|(lp, f, _)| (*lp, *f))
            .collect();
        let counters =
            |e: ExprId| -> Vec<LoopId> { self.l.exprs.symbols(e).into_iter().filter_map(|s| if let Sym::Counter(l) = s { Some(l) } else { None }).collect() };
        let mut wanted: BTreeSet<LoopId> = roots.iter().flat_map(|&r| counters(r)).collect();
        let mut chosen: Vec<(LoopId, ExprId)> = Vec::new();
        loop {
            let before = chosen.len();
            for &(lp, f) in &candidates {
                if wanted.contains(&lp) && !chosen.iter().any(|c| c.0 == lp) {
                    chosen.push((lp, f));
                    wanted.extend(counters(f));
                }
            }
            if chosen.len() == before {
                return chosen;
            }
        }
    }

    /// Asserts the exit facts for a site at `block`, and the invariants of the havoc registers
    /// its expressions mention, as seen by thread `t`; returns them.
    pub fn assert_facts(&self, q: &mut Query, block: BlockId, roots: &[ExprId], t: u8) -> Vec<ExprId> {
        let mut facts: Vec<ExprId> = self.relevant_facts(block, roots).into_iter().map(|(_, f)| f).collect();
        // The proved invariants of the loops whose havoc registers these mention (most kernels
        // have none, and then no expression is walked for them).
        if !self.l.havoc_facts.is_empty() {
            let havoc_loops: BTreeSet<LoopId> = roots
                .iter()
                .chain(&facts)
                .flat_map(|&e| self.l.exprs.symbols(e))
                .filter_map(|s| if let Sym::Havoc { lp, .. } = s { Some(lp) } else { None })
                .collect();
            facts.extend(self.l.havoc_facts.iter().filter(|(lp, _)| havoc_loops.contains(lp)).map(|(_, f)| *f));
        }
        for &f in &facts {
            let term = q.enc.term(f, t);
            q.asserts.push(term);
        }
        facts
    }

    /// The access whose result a `Value` symbol names, if it is a load.
    pub fn load_of(&self, s: Sym) -> Option<&'a Access> {
        crate::fixed::load_access(self.l, s)
    }

    /// Loaded values an expression depends on, with the access that loaded them.
    pub fn loads_in(&self, e: ExprId) -> Vec<(Sym, &'a Access)> {
        self.l.exprs.symbols(e).into_iter().filter_map(|s| self.load_of(s).map(|a| (s, a))).collect()
    }

    /// Adds what is known about loaded values the query mentions: a load from a buffer whose
    /// contents the interface fixes reads those contents (at every in-bounds offset), two loads
    /// of the same address of a buffer the kernel never writes return the same value, and the
    /// interface's assumptions (`injective`, `in_range`) about index buffers. `roots` are the
    /// expressions already encoded for threads 1 and 2.
    pub fn add_load_facts(&self, q: &mut Query, roots: &[ExprId], threads: u8) {
        let mut done = BTreeSet::new();
        let mut todo: Vec<Sym> = roots.iter().flat_map(|&r| self.l.exprs.symbols(r)).collect();
        let mut rounds = 0;
        while let Some(s) = todo.pop() {
            rounds += 1;
            if rounds > 256 || !done.insert(s) {
                continue;
            }
            let Some(a) = self.load_of(s) else { continue };
            let Some((vid, bits)) = self.l.exprs.find_var(s) else { continue };
            let Some(base) = a.base else { continue };
            if let Some(fixed) = crate::fixed::fixed_load(self.k, self.l, self.bind, s) {
                for t in 1..=threads {
                    let (v, o) = (q.enc.term(vid, t), q.enc.term(fixed.offset, t));
                    q.asserts.extend(fixed_value_facts(&fixed, &v, &o));
                }
                // The offset may itself be read from a fixed buffer (`table[row[i]]`).
                todo.extend(self.l.exprs.symbols(fixed.offset));
            }
            let read_only = !self.written.contains(&base);
            let assumptions: &[Assumption] = self.bind.assumptions(base);
            if threads == 2 && (read_only || assumptions.contains(&Assumption::Injective)) {
                let (a1, a2) = (q.enc.term(a.addr, 1), q.enc.term(a.addr, 2));
                let (v1, v2) = (q.enc.term(vid, 1), q.enc.term(vid, 2));
                if read_only {
                    q.asserts.push(format!("(=> (= {a1} {a2}) (= {v1} {v2}))"));
                }
                if assumptions.contains(&Assumption::Injective) {
                    q.asserts.push(format!("(=> (distinct {a1} {a2}) (distinct {v1} {v2}))"));
                }
                todo.extend(self.l.exprs.symbols(a.addr));
            }
            for asm in assumptions {
                if let Assumption::InRange(lo, hi) = asm {
                    if bits == 0 {
                        continue;
                    }
                    for t in 1..=threads {
                        let v = q.enc.term(vid, t);
                        q.asserts.push(format!("(bvsle {} {v})", crate::encode::bv(*lo as u64, bits)));
                        q.asserts.push(format!("(bvslt {v} {})", crate::encode::bv(*hi as u64, bits)));
                    }
                }
            }
        }
    }

    /// See [`target_name`].
    pub fn target_name(&self, a: &Access) -> String {
        target_name(self.k, self.bind, a)
    }
}

/// Fixed contents are stated offset by offset up to this many elements; past it only the range
/// of the values is (the solver slows down on long case lists).
const MAX_FIXED_CASES: usize = 4096;

/// What a load of fixed contents reads, for value term `v` at offset term `o` (64-bit): the
/// element at each in-bounds, element-aligned offset, or for long contents the range of their
/// values. Other offsets (out of bounds or misaligned) leave the value free.
fn fixed_value_facts(f: &crate::fixed::FixedLoad, v: &str, o: &str) -> Vec<String> {
    use crate::encode::bv;
    let offsets: Vec<u64> = f.aligned_offsets().collect();
    let bits = f.bits.max(1);
    if offsets.len() <= MAX_FIXED_CASES {
        return offsets.iter().filter_map(|&off| Some(format!("(=> (= {o} {}) (= {v} {}))", bv(off, 64), bv(f.value_at(off)?, bits)))).collect();
    }
    let values: Vec<u64> = offsets.iter().filter_map(|&off| f.value_at(off)).collect();
    let (Some(lo), Some(hi), Some(last)) = (values.iter().min(), values.iter().max(), offsets.last()) else { return Vec::new() };
    let aligned = format!("(= (bvurem (bvadd {o} {}) {}) {})", bv(f.skip, 64), bv(f.width.max(1) as u64, 64), bv(0, 64));
    vec![format!("(=> (and (bvule {o} {}) {aligned}) (and (bvule {} {v}) (bvule {v} {})))", bv(*last, 64), bv(*lo, bits), bv(*hi, bits))]
}

/// What the workers of one check share besides the read-only kernel facts: the points they
/// enumerated, the answers the solver gave (see `answers`), and which questions' witness
/// probes ran out of time (see [`Ctx::run_witness`]).
#[derive(Default)]
pub struct Caches {
    pub points: PointsCache,
    pub answers: AnswerCache,
    rows: crate::rows::RowsCache,
    spent_probes: Mutex<std::collections::HashSet<(Alike, Probe)>>,
    tier_timed_out: std::sync::atomic::AtomicBool,
    ordinary: OnceLock<OrdinarySetting>,
}

/// Each open parameter slot's ordinary value (see `scalar_confirm::ordinary_setting`).
type OrdinarySetting = std::collections::BTreeMap<crate::row_strides::ParamSlot, i128>;

/// The restrictions [`Ctx::run_witness`] asks before a question: the small probe where the block
/// is open, the ordinary probe where scalars or the grid are open or an address reads an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Probe {
    /// The tightest witness tier: small values, chosen by the solver.
    Small,
    /// The scalar confirmation's ordinary values, fixed (see [`Ctx::ordinary_tier`]).
    Ordinary,
    /// Not a restriction: the question itself, found satisfiable or unanswered in its whole time.
    Question,
}

/// Which questions are alike for [`Ctx::run_witness`]'s probe: the same kind of question
/// about the same source lines (the accesses of one statement, its unrolled copies, one
/// statement's loads and stores).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Alike {
    question: crate::report::Question,
    lines: [Option<u32>; 2],
}

impl Alike {
    pub fn race(a: Option<u32>, b: Option<u32>) -> Alike {
        Alike { question: crate::report::Question::Race, lines: [a.min(b), a.max(b)] }
    }

    /// A question about one line: bounds, a barrier, a warp collective.
    pub fn at(question: crate::report::Question, line: Option<u32>) -> Alike {
        Alike { question, lines: [line, None] }
    }
}

/// What a set of enumerated points is keyed by: the access, whether the whole grid was
/// enumerated (or block 0 alone), and the loop counters given their real values.
pub type PointsKey = (usize, bool, Vec<ExprId>);

/// Points kept at most per check (about 100 bytes each): a set that would go past this is
/// handed to whoever waits for it but not kept, and recomputed when asked for again.
const KEPT_POINTS: usize = 1 << 21;

/// Enumerated points of the accesses of one kernel, shared by the workers that check it. A set
/// is computed once: a worker that asks for a set another worker is computing waits for it
/// instead of computing it again. Every pair an access is in needs its set, so keeping the
/// sets (within [`KEPT_POINTS`]) is what makes enumeration of a large launch affordable.
#[derive(Default)]
pub struct PointsCache {
    sets: Mutex<KeptSets>,
}

#[derive(Default)]
struct KeptSets {
    cells: HashMap<PointsKey, Arc<PointsCell>>,
    /// Points in the sets kept.
    points: usize,
}

/// One set of points, filled once; `None` inside: the access is not enumerable.
type PointsCell = OnceLock<Option<Arc<Vec<Point>>>>;

impl PointsCache {
    /// Points of access `access` already enumerated (over the whole grid, or block 0 alone),
    /// under any counters: they all hold its every instance and offset. `None` when no such
    /// set is complete yet.
    pub fn ready(&self, access: usize, whole_grid: bool) -> Option<Arc<Vec<Point>>> {
        let sets = lock(&self.sets);
        sets.cells.iter().filter(|((n, whole, _), _)| *n == access && *whole == whole_grid).find_map(|(_, cell)| cell.get().cloned().flatten())
    }

    /// The points under `key`, from `compute` (`None`: not enumerable) the first time.
    pub fn get_or_compute(&self, key: PointsKey, compute: impl FnOnce() -> Option<Vec<Point>>) -> Option<Arc<Vec<Point>>> {
        let cell = Arc::clone(lock(&self.sets).cells.entry(key.clone()).or_default());
        let mut computed = false;
        let points = cell
            .get_or_init(|| {
                computed = true;
                compute().map(Arc::new)
            })
            .clone();
        if let (true, Some(p)) = (computed, &points) {
            let mut sets = lock(&self.sets);
            if sets.points + p.len() <= KEPT_POINTS {
                sets.points += p.len();
            } else {
                sets.cells.remove(&key);
            }
        }
        points
    }
}

/// Locks the cache; a worker that panicked while holding it left consistent data (entries are
/// inserted whole), so the lock is taken over rather than propagating the panic.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The name of what an access touches, for messages: `s` (shared array), `out` (buffer).
pub fn target_name(k: &Kernel, bind: &Binding, a: &Access) -> String {
    match a.base {
        Some(Base::Var(v)) => demangle_local(&k.vars[v as usize].name),
        Some(b @ (Base::Param(_) | Base::Field { .. })) => bind.base_name(b),
        None => "memory".into(),
    }
}

fn reachable_from(k: &Kernel, starts: &[BlockId]) -> Vec<bool> {
    let mut seen = vec![false; k.cfg.blocks.len()];
    let mut stack: Vec<BlockId> = starts.to_vec();
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut seen[b as usize], true) {
            stack.extend(k.cfg.blocks[b as usize].successors());
        }
    }
    seen
}

/// `_ZZ6reduceE1s` (a function-local static) → `s`.
pub fn demangle_local(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("_ZZ") {
        if let Some(pos) = rest.find('E') {
            let tail = &rest[pos + 1..];
            let digits: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
            if let Ok(n) = digits.parse::<usize>() {
                if let Some(id) = tail.get(digits.len()..digits.len() + n) {
                    return id.to_string();
                }
            }
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn demangles_function_local_statics() {
        assert_eq!(super::demangle_local("_ZZ6reduceE1s"), "s");
        assert_eq!(super::demangle_local("_ZZ26matmul_missing_second_syncE2As"), "As");
        assert_eq!(super::demangle_local("smem"), "smem");
    }
}
