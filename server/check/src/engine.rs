//! Checking one kernel: lift, bind the interface, run the race, divergence and bounds checks,
//! replay every witness, and decide the verdict.

use crate::bind::Binding;
use crate::bounds::{self, BoundsOutcome};
use crate::ctx::{Caches, Undecided};
use crate::query::ThreadId;
use crate::races::{self, RaceOutcome};
use crate::replay;
use crate::report::*;
use crate::schedule::{self, Check, Depth, Shared};
use crate::smt::{Solver, SolverKind};
use crate::sync::{self, SyncOutcome};
use crate::witness::{Fill, Witness, WitnessThread};
use model::expr::Sym;
use model::interp::{InterpError, Launch, Recording, Trace};
use model::symbolic::{Access, AccessKind, Base, Lifted};
use model::Kernel;
use ptx::{LineIndex, Span};
use spec::KernelSpec;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct Options {
    /// Per SMT query: the solver's CPU time (on Linux; the clock elsewhere), with the clock
    /// stopping a query at four times as long; `None`: the solver's own default (see
    /// [`Options::timeout_ms`]).
    pub timeout_ms: Option<u64>,
    /// Decide checks by enumerating concrete launches when the interface fixes them (on by
    /// default; off to exercise the SMT encoding alone).
    pub enumerate: bool,
    /// Wall-clock budget for one kernel's checks (solver, enumeration and replay); what is left
    /// when it runs out is reported uncertified.
    pub budget_ms: u64,
    /// Set by the caller when the result is no longer wanted; the check then stops within
    /// milliseconds (also in the middle of a solver query) and its report must be discarded.
    pub cancel: model::budget::CancelToken,
    /// The SMT solver (default: `LARK_SOLVER`, else Yices where installed, else Z3; see
    /// [`crate::smt::solver_from_env`]).
    pub solver: SolverKind,
    /// Workers that check one kernel's pairs, barriers and accesses at once, each with a solver
    /// process of its own; 0: one per core.
    pub jobs: usize,
    /// Report write-write races whose writes store the same value as races (by default they are
    /// tolerated warnings, as in GPUVerify).
    pub strict_races: bool,
    /// Fields of aggregate parameters (a `struct` passed by value) fixed for this check, which
    /// no interface can declare: the scalar confirmation's ordinary values (see
    /// `check::scalar_confirm`).
    pub pinned_fields: Vec<crate::witness::ParamField>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout_ms: None,
            enumerate: true,
            budget_ms: 20_000,
            cancel: model::budget::CancelToken::new(),
            solver: crate::smt::solver_from_env().unwrap_or_else(|_| SolverKind::preferred_for_bit_vectors()),
            jobs: 0,
            strict_races: false,
            pinned_fields: Vec::new(),
        }
    }
}

impl Options {
    /// The time per query: the one set, else the solver's default
    /// ([`SolverKind::default_timeout_ms`]), so that choosing another solver never leaves the
    /// first one's default behind.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(self.solver.default_timeout_ms())
    }
}

/// Where the kernel's text came from, to report positions.
pub struct Sources<'a> {
    pub ptx: &'a str,
    pub index: &'a LineIndex,
    /// The name of the kernel's CUDA file (from `.file`), if its `.loc`s point to one.
    pub cu_file: Option<String>,
    /// Parameter names from the CUDA signature, if the `.cu` text was available.
    pub param_names: Option<Vec<String>>,
    /// Names of the fields of structs passed by value, `(parameter, byte offset) -> "p.ncols"`,
    /// where the `.cu` defines the struct (see [`spec::field_names`]): messages use them.
    pub field_names: FieldNames,
}

/// `(parameter index, byte offset) -> "p.ncols"`.
pub type FieldNames = std::collections::BTreeMap<(u32, u32), String>;

/// The names of the fields of kernel `k`'s structs passed by value, from its `.cu` text.
pub fn field_names(k: &Kernel, cu: &str, source_name: &str) -> FieldNames {
    let Some(params) = spec::cu_params(cu, source_name) else { return FieldNames::new() };
    let struct_bytes: Vec<Option<u32>> = k.params.iter().map(|p| p.is_aggregate().then_some(p.bytes)).collect();
    spec::field_names(cu, &params, &struct_bytes)
}

impl Sources<'_> {
    pub fn location(&self, span: Span, line: Option<u32>) -> Location {
        let ptx_line = self.index.line_col(span.start).0 + 1;
        match (line, &self.cu_file) {
            (Some(l), Some(f)) => Location { line: l, line_kind: LineKind::Cu, source: Some(f.clone()), ptx_line, ptx_span: [span.start, span.end] },
            _ => Location { line: ptx_line, line_kind: LineKind::Ptx, source: None, ptx_line, ptx_span: [span.start, span.end] },
        }
    }
}

/// `check_kernel`, with a panic in the engine turned into an `error` verdict (and a fresh solver,
/// since the old one may be mid-query): a bug in LARK must not take the CLI or the editor down.
pub fn check_kernel_guarded(k: &Kernel, spec: Option<&KernelSpec>, src: &Sources, opts: &Options, solver: &mut Solver) -> KernelReport {
    check_kernel_guarded_in(k, spec, src, opts, solver, None)
}

/// [`check_kernel_guarded`], asking only about `focus` when it is set (see [`Focus`]).
pub(crate) fn check_kernel_guarded_in(
    k: &Kernel,
    spec: Option<&KernelSpec>,
    src: &Sources,
    opts: &Options,
    solver: &mut Solver,
    focus: Option<&Focus>,
) -> KernelReport {
    let started = Instant::now();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_kernel_in(k, spec, src, opts, solver, focus)));
    r.unwrap_or_else(|p| {
        *solver = Solver::new();
        let message = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        KernelReport::error(&k.name, Reason::EngineError { message }, started.elapsed().as_secs_f64() * 1e3)
    })
}

pub fn check_kernel(k: &Kernel, spec: Option<&KernelSpec>, src: &Sources, opts: &Options, solver: &mut Solver) -> KernelReport {
    check_kernel_in(k, spec, src, opts, solver, None)
}

/// Findings a check is asked about (the launch and scalar confirmations'): their kinds and
/// source lines (sorted, as [`Finding::lines`] gives them).
///
/// A check focused on them runs only the questions whose answer can be one of those findings —
/// a question of the finding's kind on exactly its lines (a race pair between its two lines, a
/// barrier or an access on its line) — since only those can find it again or leave it
/// undecided. A question on a finding's line that can only find another finding (a race
/// between that line and a third, say) says nothing about it: asked in full, its witness made
/// the run an error and every block size inconclusive (ggml's rope with no setup: 7 s of
/// launch re-checks, about a finding each of them had decided). A question that can only find
/// one of the findings again (no other finding on its lines) is [`Depth::Decide`]d: a witness
/// for it is not minimised nor replayed but reported as an uncertified region on its lines
/// (found again or undecided, the finding is not clean there). A question whose lines are
/// also another finding's (a race on line 50 alone next to one between 50 and 60) is asked
/// in full, as without focus. The report of a focused check is for the confirmation only.
/// With `replay_all`, every question is asked in full: a witness the over-approximation admits
/// is replayed before it counts (for a confirmation whose clean answer matters more than its
/// speed).
pub(crate) struct Focus {
    pub findings: Vec<(FindingKind, Vec<u32>)>,
    pub replay_all: bool,
    /// A race question left undecided settles its pair of lines as a witness does (see
    /// [`Shared::undecided_settles_a_line`]).
    pub undecided_settles_a_line: bool,
}

impl Focus {
    /// How far to check a question of `kind` whose answer names `lines`: `None` when it names
    /// no line of a finding.
    fn depth(&self, kind: FindingKind, lines: &[u32]) -> Option<Depth> {
        let mut lines = lines.to_vec();
        lines.sort_unstable();
        lines.dedup();
        if !self.findings.iter().any(|(k, l)| *k == kind && *l == lines) {
            return None;
        }
        let touching_others = self.findings.iter().any(|(k, l)| (*k != kind || *l != lines) && l.iter().any(|x| lines.contains(x)));
        if self.replay_all || touching_others {
            Some(Depth::Full)
        } else {
            Some(Depth::Decide)
        }
    }
}

/// What names a finding across the confirmations: its kind and lines (a report keeps one finding
/// per kind and lines, and reorders its findings when it settles its verdict, so positions do
/// not last).
pub(crate) type FindingKey = (String, Vec<u32>);

pub(crate) fn finding_key(f: &Finding) -> FindingKey {
    (format!("{:?}", f.kind), f.lines())
}

fn check_kernel_in(k: &Kernel, spec: Option<&KernelSpec>, src: &Sources, opts: &Options, solver: &mut Solver, focus: Option<&Focus>) -> KernelReport {
    let started = Instant::now();
    let model::Analysis { mut lifted, phases } = model::analyse(k);
    let mut bind = Binding::new(k, spec, src.param_names.as_deref());
    bind.field_names = src.field_names.clone();
    bind.pinned_fields = opts.pinned_fields.clone();
    let (field_values, unencodable) = bind.declared_field_values(&lifted.exprs);
    bind.pinned_fields.extend(field_values);
    bind.unresolved_fields.extend(unencodable);
    bind.unresolved_fields.extend(bind.unused_field_buffers(&lifted));
    let assumed = bind.assume_unread_dimensions(spec, k, &lifted);
    let known = bind.known_values(k, &mut lifted.exprs);
    lifted.specialize(&known);
    let mut report = KernelReport {
        name: k.name.to_string(),
        verdict: Verdict::Verified,
        findings: Vec::new(),
        uncertified: Vec::new(),
        notes: bind
            .unmatched
            .iter()
            .map(|n| Note::UnmatchedParameter { name: n.clone() })
            .chain(bind.unresolved_fields.iter().map(|(key, why)| Note::UnresolvedField { key: key.clone(), why: why.clone() }))
            .collect(),
        equivalence: None,
        stats: Stats { accesses: lifted.accesses.len(), barriers: lifted.barriers.len(), ..Stats::default() },
    };
    if spec.is_none() {
        let kernel = spec::unmangled_name(&k.name).unwrap_or_else(|| k.name.to_string());
        report.notes.push(Note::NoInterface { kernel });
    }
    if !assumed.is_empty() {
        report.notes.push(Note::AssumedLaunch { facts: assumed });
    }
    if let Some(s) = spec {
        let from_source = |key: &str| s.from_launch_site(key);
        let mut facts = Vec::new();
        let dims = |d: &[spec::Dim; 3]| d.iter().map(|x| x.value().map_or_else(|| "?".into(), |v| v.to_string())).collect::<Vec<_>>().join(", ");
        if let (Some(b), Some(_)) = (&s.block, from_source("block")) {
            facts.push(format!("block = [{}]", dims(b)));
        }
        if let (Some(g), Some(_)) = (&s.grid, from_source("grid")) {
            facts.push(format!("grid = [{}]", dims(g)));
        }
        if let Some(o) = from_source("block").or_else(|| from_source("grid")) {
            let file = o.file.rsplit('/').next().unwrap_or(&o.file);
            report.notes.push(Note::InferredLaunch { site: format!("{file}:{}", o.line), facts });
        }
    }
    for u in &lifted.unsupported {
        report
            .uncertified
            .push(Uncertified::at(Reason::UnsupportedInstruction { opcode: u.opcode.to_string(), why: u.reason.clone() }, src.location(u.span, u.line)));
    }
    let budget = model::budget::Budget { deadline: started.checked_add(std::time::Duration::from_millis(opts.budget_ms)), cancel: opts.cancel.clone() };
    // A guess the solver cannot settle quickly is not worth the check's time: most settle in
    // tens of milliseconds once the launch is concrete. (A lent process starts on its first
    // query, so a kernel with nothing to prove costs nothing here.)
    let mut prover = solver.lend(opts.solver);
    for a in &lifted.accesses {
        if a.base.is_none() && !matches!(a.space, model::ops::Space::Local | model::ops::Space::Param | model::ops::Space::Const) {
            let is_arm = lifted.accesses.iter().filter(|b| (b.block, b.inst) == (a.block, a.inst)).count() > 1;
            if is_arm && crate::invariants::never_taken(&lifted.exprs, &bind, &mut prover, a.pc, std::time::Duration::from_millis(opts.timeout_ms()), &budget) {
                continue;
            }
            report.uncertified.push(Uncertified::at(Reason::UntrackedAddress { access: a.kind.name() }, src.location(a.span, a.line)));
        }
    }
    crate::invariants::strengthen(&mut lifted, &bind, &mut prover, std::time::Duration::from_millis((opts.timeout_ms() / 8).max(1)), &budget);
    solver.give_back(prover);
    let caches = Caches::default();
    let access_line = |a: &Access| src.location(a.span, a.line).line;
    let site_line = |block: model::BlockId, inst: usize| {
        let i = &k.cfg.blocks[block as usize].insts[inst];
        src.location(i.span, i.line).line
    };
    let depth = |c: Check| -> Option<Depth> {
        let focus = focus?;
        match c {
            Check::Race(i, j) => focus.depth(FindingKind::Race, &[access_line(&lifted.accesses[i]), access_line(&lifted.accesses[j])]),
            Check::Sync(block, inst) => focus.depth(FindingKind::BarrierDivergence, &[site_line(block, inst)]),
            Check::Bounds(i) => focus.depth(FindingKind::OutOfBounds, &[access_line(&lifted.accesses[i])]),
        }
    };
    let shared = Shared {
        k,
        l: &lifted,
        phases: &phases,
        bind: &bind,
        caches: &caches,
        timeout_ms: opts.timeout_ms(),
        budget: budget.clone(),
        enumerate: opts.enumerate,
        focus: focus.map(|_| &depth as &(dyn Fn(Check) -> Option<Depth> + Sync)),
        undecided_settles_a_line: focus.is_some_and(|f| f.undecided_settles_a_line),
    };
    let lent = (0..schedule::workers(opts.jobs)).map(|_| solver.lend(opts.solver)).collect();
    let (answers, lent) = schedule::run(&shared, lent);
    lent.into_iter().for_each(|s| solver.give_back(s));
    // The enumerated points can be large; the replays below do not need them.
    drop(caches);
    report.stats.queries = answers.queries;
    report.stats.enumerated = answers.enumerated;
    if answers.relied_on_no_wrap {
        report.notes.push(Note::IndexNoWrap);
    }
    report.stats.solver_millis = answers.solver_time.as_secs_f64() * 1e3;
    let (race_outcomes, sync_outcomes, bounds_outcomes) = (answers.races, answers.sync, answers.bounds);
    let replay_started = Instant::now();
    let warp_synced = phases.warp_reaches.is_some();
    // Every race candidate's runs record the accesses of all of them, so candidates that share
    // a counterexample's launch and values share its runs (see `runs`).
    let race_recording = Recording::only(
        race_outcomes
            .iter()
            .filter_map(|o| match o {
                RaceOutcome::Witness(w) => Some([w.a1, w.a2]),
                RaceOutcome::Unknown { .. } => None,
            })
            .flatten()
            .map(|i| (lifted.accesses[i].block, lifted.accesses[i].inst))
            .collect(),
    );
    let replayers = schedule::workers(opts.jobs);
    let runs = crate::runs::Runs::new(replayers);
    let fx = Explain { k, l: &lifted, bind: &bind, src, budget: &budget, strict_races: opts.strict_races, warp_synced, race_recording, runs: &runs };
    // A witness of a question the focus only decides is not replayed (see [`Focus`]).
    let decided = |c: Check, question: Question, lines: Vec<Location>, out: &mut Explanation| -> bool {
        if depth(c) != Some(Depth::Decide) {
            return false;
        }
        let mut lines = lines.into_iter();
        out.uncertified.push(Uncertified { reason: Reason::Unreproduced { question }, location: lines.next(), related: lines.collect() });
        true
    };
    let outcomes: Vec<Outcome> = race_outcomes
        .into_iter()
        .map(Outcome::Race)
        .chain(sync_outcomes.into_iter().map(Outcome::Sync))
        .chain(bounds_outcomes.into_iter().map(Outcome::Bounds))
        .collect();
    // Each outcome's replays on a thread of their own (see `in_order`), the report in the
    // outcomes' order.
    let schedule = distinct_launches_first(&outcomes);
    let explained = crate::in_order::map(outcomes, &schedule, replayers, |o| {
        let mut out = Explanation::default();
        match o {
            Outcome::Race(RaceOutcome::Witness(w)) => {
                let (x, y) = (&lifted.accesses[w.a1], &lifted.accesses[w.a2]);
                let at = vec![src.location(x.span, x.line), src.location(y.span, y.line)];
                if !decided(Check::Race(w.a1, w.a2), Question::Race, at, &mut out) {
                    fx.race(w, &mut out);
                }
            }
            Outcome::Race(RaceOutcome::Unknown { a1, a2, why }) => {
                let (x, y) = (&lifted.accesses[a1], &lifted.accesses[a2]);
                out.uncertified.push(Uncertified {
                    reason: why.reason(Question::Race),
                    location: Some(src.location(x.span, x.line)),
                    related: vec![src.location(y.span, y.line)],
                });
            }
            Outcome::Sync(SyncOutcome::Witness(w)) => {
                let (block, inst) = w.site;
                let i = &k.cfg.blocks[block as usize].insts[inst];
                let question = if w.warp { Question::WarpCollective } else { Question::Barrier };
                if !decided(Check::Sync(block, inst), question, vec![src.location(i.span, i.line)], &mut out) {
                    fx.divergence(w, &mut out);
                }
            }
            Outcome::Sync(SyncOutcome::Unknown { site, warp, why }) => {
                let inst = &k.cfg.blocks[site.0 as usize].insts[site.1];
                let question = if warp { Question::WarpCollective } else { Question::Barrier };
                out.uncertified.push(Uncertified::at(why.reason(question), src.location(inst.span, inst.line)));
            }
            Outcome::Bounds(BoundsOutcome::Witness(w)) => {
                let a = &lifted.accesses[w.access];
                if !decided(Check::Bounds(w.access), Question::Bounds, vec![src.location(a.span, a.line)], &mut out) {
                    fx.out_of_bounds(w, &mut out);
                }
            }
            Outcome::Bounds(BoundsOutcome::Unknown { access, why }) => {
                let a = &lifted.accesses[access];
                out.uncertified.push(Uncertified::at(why.reason(Question::Bounds), src.location(a.span, a.line)));
            }
        }
        out
    });
    for out in explained {
        report.findings.extend(out.findings);
        report.uncertified.extend(out.uncertified);
    }
    report.stats.replay_millis = replay_started.elapsed().as_secs_f64() * 1e3;
    // One finding per kind and set of lines: the same bug seen through several accesses or
    // launches is one bug.
    let mut seen_findings = std::collections::HashSet::new();
    report.findings.retain(|f| {
        let mut lines: Vec<u32> = f.accesses.iter().map(|a| a.location.line).chain(f.barrier.iter().map(|b| b.line)).collect();
        lines.sort();
        seen_findings.insert((f.kind.verdict(), lines))
    });
    let mut seen = std::collections::HashSet::new();
    report.uncertified.retain(|u| {
        let lines: Vec<u32> = u.location.iter().chain(&u.related).map(|l| l.line).collect();
        seen.insert((u.reason.clone(), lines))
    });
    report.settle_verdict();
    report.stats.millis = started.elapsed().as_secs_f64() * 1e3;
    report
}

/// A question's outcome, to be explained (see [`Explain`]).
enum Outcome {
    Race(RaceOutcome),
    Sync(SyncOutcome),
    Bounds(BoundsOutcome),
}

impl Outcome {
    /// The counterexample to replay, if any.
    fn witness(&self) -> Option<&Witness> {
        match self {
            Outcome::Race(RaceOutcome::Witness(w)) => Some(&w.witness),
            Outcome::Sync(SyncOutcome::Witness(w)) => Some(&w.witness),
            Outcome::Bounds(BoundsOutcome::Witness(w)) => Some(&w.witness),
            _ => None,
        }
    }
}

/// The order in which outcomes are explained: the first outcome of each counterexample launch
/// (geometry, the blocks its threads are in, scalars and loaded values: what decides a run, see
/// `runs::RunKey`), then the second of each, and so on. Candidates sharing a launch share its runs (see `runs`): taken side by side, the second
/// waited for the first's run while another launch's runs waited for a thread (ggml's ssm_scan
/// with no setup: two candidates of one witness, then a 20 M-step run alone).
fn distinct_launches_first(outcomes: &[Outcome]) -> Vec<usize> {
    let blocks = |w: &Witness| w.threads.iter().map(|t| t.id.block).collect::<Vec<_>>();
    let same_launch = |a: &&Witness, b: &&Witness| {
        (a.grid, a.block, &a.params, &a.fields, &a.memory) == (b.grid, b.block, &b.params, &b.fields, &b.memory) && blocks(a) == blocks(b)
    };
    let launches: Vec<Option<&Witness>> = outcomes.iter().map(Outcome::witness).collect();
    crate::in_order::round_robin(&launches, same_launch)
}

/// What explaining one outcome adds to the report.
#[derive(Default)]
struct Explanation {
    findings: Vec<Finding>,
    uncertified: Vec<Uncertified>,
}

/// Turns witnesses into findings (after replay) or uncertified regions.
struct Explain<'a> {
    k: &'a Kernel,
    l: &'a Lifted,
    bind: &'a Binding,
    src: &'a Sources<'a>,
    /// Replays stop when it runs out.
    budget: &'a model::budget::Budget,
    strict_races: bool,
    /// Whether warp syncs order some accesses (then a replay cannot show a race inside a warp).
    warp_synced: bool,
    /// What race replays record: the accesses of every race candidate.
    race_recording: Recording,
    runs: &'a crate::runs::Runs,
}

impl Explain<'_> {
    fn launch(&self, w: &Witness) -> LaunchReport {
        let mut params = BTreeMap::new();
        // A field of a struct passed by value goes by its name (`p.ncols`) or its byte offset
        // (`p+16`), as lark.toml declares it.
        let aggregate = |i: u32| self.k.params.get(i as usize).is_some_and(|p| p.is_aggregate());
        let fields = w.params.iter().map(|(&i, &v)| (i, 0, v)).chain(w.fields.iter().map(|f| (f.param, f.offset, f.value)));
        // Pointers are the replay's own buffers, whatever the solver made of them.
        let (pointers, pointer_fields) = (self.l.pointer_params(), self.l.pointer_fields());
        let pointer = |i: u32, offset: u32| if aggregate(i) { pointer_fields.contains(&(i, offset)) } else { pointers.contains(&i) };
        for (i, offset, v) in fields.filter(|&(i, offset, _)| !pointer(i, offset)) {
            if let Some((_, bits)) = self.l.exprs.find_var(Sym::Param { index: i, offset }) {
                let name = if aggregate(i) { self.bind.field_name(i, offset) } else { self.bind.name(i).to_string() };
                params.insert(name, model::ops::sext(v, bits.max(1)));
            }
        }
        LaunchReport { grid: w.grid, block: w.block, params }
    }

    fn location(&self, a: &Access) -> Location {
        self.src.location(a.span, a.line)
    }

    fn target(&self, a: &Access) -> String {
        crate::ctx::target_name(self.k, self.bind, a)
    }

    fn elem_bytes(&self, a: &Access) -> u64 {
        if let Some(spec::ParamSpec::Buffer { dtype: Some(d), .. }) = a.base.and_then(|b| self.bind.buffer_spec(b)) {
            return d.bytes();
        }
        a.bytes.clamp(1, 8) as u64
    }

    fn access_report(&self, a: &Access, thread: usize, w: &Witness) -> AccessReport {
        let iterations =
            w.threads.get(thread).map(|t| a.loops.iter().filter_map(|lp| t.iterations.get(lp).map(|v| (format!("k{lp}"), *v))).collect()).unwrap_or_default();
        AccessReport { kind: a.kind.name(), space: a.space.name(), target: self.target(a), bytes: a.bytes, thread, location: self.location(a), iterations }
    }

    /// The loaded values a witness relies on, by buffer name and element.
    fn inputs(&self, w: &Witness) -> Vec<InputValue> {
        w.memory
            .iter()
            .map(|c| InputValue {
                buffer: self.bind.base_name(c.buffer()),
                element: c.byte_offset / c.bytes.max(1) as u64,
                value: model::ops::sext(c.value, c.bytes * 8),
                declared: self.bind.base_fixed_bytes(c.buffer()).is_some(),
            })
            .collect()
    }

    fn race(&self, rw: races::RaceWitness, report: &mut Explanation) {
        let (a1, a2) = (&self.l.accesses[rw.a1], &self.l.accesses[rw.a2]);
        let mut w = rw.witness;
        let (t1, t2) = (w.thread(0), w.thread(1));
        let (off1, off2) = (w.offset(0), w.offset(1));
        let min_bytes = self.min_bytes(&[(a1, off1), (a2, off2)]);
        // One store instruction may race with itself harmlessly (every lane stores the same
        // reduced value): then the race must reproduce, and look harmless, under every fill, and
        // some replay must store a nonzero value (zeros everywhere may only mean the witness's
        // block did no work). Two different instructions are always a race.
        let may_be_benign = rw.a1 == rw.a2 && a1.kind == AccessKind::Write && !self.strict_races;
        let reproduced = if may_be_benign {
            replay::every_reproduction(
                &self.replay_inputs(&w, &min_bytes, self.race_recording.clone()),
                |_, trace, _| replay::confirm_race(trace, a1, t1, a2, t2).map(|_| replay::same_value_writes(trace, a1)),
                // One run with different values settles it: a real race.
                |same| same.is_none(),
            )
        } else {
            // The solver's two threads come from an over-approximation; when no run shows
            // them racing, the same runs may still show the two accesses racing between others.
            let exact = |_: &Launch, trace: &Trace, _: &_| replay::confirm_race(trace, a1, t1, a2, t2).map(|_| ());
            let observed =
                |launch: &Launch, trace: &Trace, _: &_| {
                    replay::any_race(trace, a1, a2, self.warp_synced, launch.block).map(|(e1, e2)| {
                        [(e1, replay::target_offset(launch, trace, a1, e1)), (e2, replay::target_offset(launch, trace, a2, e2))].map(|(e, offset)| {
                            WitnessThread { id: ThreadId { block: e.block, thread: e.thread }, iterations: e.iterations.iter().copied().collect(), offset }
                        })
                    })
                };
            match replay::first_reproduction_or(&self.replay_inputs(&w, &min_bytes, self.race_recording.clone()), exact, observed) {
                Ok(Some((replay::Recognised::AsAsked(()), fill))) => Ok(vec![(None, fill)]),
                Ok(Some((replay::Recognised::Otherwise(threads), fill))) => {
                    w.threads = threads.to_vec();
                    Ok(vec![(None, fill)])
                }
                Ok(None) => Ok(Vec::new()),
                Err(stop) => Err(stop),
            }
        };
        let benign = match &reproduced {
            Ok(runs)
                if may_be_benign && !runs.is_empty() && runs.iter().all(|(same, _)| same.is_some()) && runs.iter().any(|(same, _)| *same == Some(true)) =>
            {
                Some(format!(
                    "every thread that executes this store writes the same value to the same address (in each of {} replays with different inputs)",
                    runs.len()
                ))
            }
            _ => None,
        };
        let fill = match reproduced {
            // The witness keeps a standard fill (the extra run of the benign test sets scalars
            // the witness does not record).
            Ok(r) => r.iter().map(|(_, fill)| *fill).find(|f| replay::FILLS.contains(f)),
            Err(stop) => {
                let reason = Undecided::from(stop).reason(Question::Race);
                report.uncertified.push(Uncertified { reason, location: Some(self.location(a1)), related: vec![self.location(a2)] });
                return;
            }
        };
        let Some(fill) = fill else {
            let reason = if rw.input_dependent.is_empty() {
                Reason::Unreproduced { question: Question::Race }
            } else {
                Reason::LoadedValues { question: Question::Race, buffers: rw.input_dependent }
            };
            report.uncertified.push(Uncertified { reason, location: Some(self.location(a1)), related: vec![self.location(a2)] });
            return;
        };
        w.fill = Some(fill);
        // The threads and offsets the replay showed (the solver's, or two others of the run).
        let (t1, t2) = (w.thread(0), w.thread(1));
        // A race that zeros do not show depends on what the buffers hold; when the witness
        // sets input values, the message names those instead.
        let contents_needed = if fill == Fill::Zero || !w.memory.is_empty() { Vec::new() } else { self.contents_needed(a1, a2, &w, &min_bytes, fill) };
        let (off1, off2) = (w.offset(0), w.offset(1));
        let elem = self.elem_bytes(a1).min(self.elem_bytes(a2));
        // The byte both touch, as an offset into the target.
        let offset = off1.unwrap_or(0).max(off2.unwrap_or(0));
        report.findings.push(Finding {
            kind: FindingKind::Race,
            accesses: vec![self.access_report(a1, 0, &w), self.access_report(a2, 1, &w)],
            threads: vec![t1, t2],
            address: Some(AddressReport { space: a1.space.name(), target: self.target(a1), offset, element: Some(offset / elem), size: None }),
            barrier: None,
            divergence: None,
            inputs: self.inputs(&w),
            mismatch: None,
            launch: self.launch(&w),
            witness: w,
            replayed: true,
            assumed_launch: None,
            assumed_scalars: None,
            benign,
            contents_needed,
        });
    }

    /// The input buffers whose contents under `fill` the race of `a1` and `a2` between
    /// witness `w`'s threads needs (see [`replay::contents_needed`]); none when the budget ends
    /// first (the finding stands, with its fill).
    fn contents_needed(&self, a1: &Access, a2: &Access, w: &Witness, min_bytes: &HashMap<Base, u64>, fill: Fill) -> Vec<String> {
        let mut read: Vec<Base> = Vec::new();
        for a in &self.l.accesses {
            if let (AccessKind::Read, Some(b @ (Base::Param(_) | Base::Field { .. }))) = (a.kind, a.base) {
                if self.bind.base_fixed_bytes(b).is_none() && !read.contains(&b) {
                    read.push(b);
                }
            }
        }
        let (t1, t2) = (w.thread(0), w.thread(1));
        let inputs = self.replay_inputs(w, min_bytes, self.race_recording.clone());
        match replay::contents_needed(&inputs, fill, &read, |_, trace, _| replay::confirm_race(trace, a1, t1, a2, t2).map(|_| ())) {
            Ok(needed) => needed.iter().map(|&b| self.bind.base_name(b)).collect(),
            Err(_) => Vec::new(),
        }
    }

    fn replay_inputs<'b>(&'b self, w: &'b Witness, min_bytes: &'b HashMap<Base, u64>, recording: Recording) -> replay::ReplayInputs<'b> {
        replay::ReplayInputs { k: self.k, l: self.l, bind: self.bind, w, min_bytes, budget: self.budget, recording, runs: self.runs }
    }

    /// Bytes a buffer of unknown size needs so the witnessed offsets are inside it.
    fn min_bytes(&self, accesses: &[(&Access, Option<u64>)]) -> HashMap<Base, u64> {
        let mut out = HashMap::new();
        for (a, off) in accesses {
            if let (Some(b @ (Base::Param(_) | Base::Field { .. })), Some(o)) = (a.base, off) {
                let e = out.entry(b).or_insert(0);
                *e = (*e).max(o.saturating_add(a.bytes as u64).saturating_add(4096));
            }
        }
        out
    }

    /// The place of an instruction of the kernel, by its CFG position.
    fn inst_location(&self, (block, inst): (model::BlockId, usize)) -> Option<Location> {
        let i = self.k.cfg.blocks.get(block as usize)?.insts.get(inst)?;
        Some(self.src.location(i.span, i.line))
    }

    fn whereabouts(&self, w: &model::interp::Whereabouts) -> Whereabouts {
        use model::interp::Whereabouts as W;
        match w {
            W::Exited => Whereabouts::Exited,
            W::AtBarrier { inst, .. } => self.inst_location(*inst).map_or(Whereabouts::DoesNotArrive, |location| Whereabouts::AtBarrier { location }),
            W::AtCollective { inst, .. } => self.inst_location(*inst).map_or(Whereabouts::DoesNotArrive, |location| Whereabouts::AtCollective { location }),
            W::NoSuchThread => Whereabouts::NoSuchThread,
            W::Running => Whereabouts::DoesNotArrive,
        }
    }

    fn divergence(&self, dw: sync::DivergenceWitness, report: &mut Explanation) {
        let inst = &self.k.cfg.blocks[dw.site.0 as usize].insts[dw.site.1];
        let loc = self.src.location(inst.span, inst.line);
        let mut w = dw.witness;
        let t1 = w.thread(0);
        let warp = dw.warp;
        let no_sizes = HashMap::new();
        let reproduced = replay::first_reproduction(&self.replay_inputs(&w, &no_sizes, Recording::Off), |_, _, result| match (result, warp) {
            (Err(e @ InterpError::BarrierDivergence { .. }), false) | (Err(e @ InterpError::WarpDivergence { .. }), true) => Some(e.clone()),
            _ => None,
        });
        let question = if warp { Question::WarpCollective } else { Question::Barrier };
        let (error, fill) = match reproduced {
            Ok(Some(r)) => r,
            Ok(None) => {
                report.uncertified.push(Uncertified::at(Reason::Unreproduced { question }, loc));
                return;
            }
            Err(stop) => {
                report.uncertified.push(Uncertified::at(Undecided::from(stop).reason(question), loc));
                return;
            }
        };
        w.fill = Some(fill);
        let (threads, divergence) = match error {
            InterpError::BarrierDivergence { block, arrived, missing, .. } => {
                let reached = arrived.first().copied().unwrap_or(t1.thread);
                let (other, state) = match missing.first() {
                    Some((t, wh)) => (*t, self.whereabouts(wh)),
                    None => (w.thread(1).thread, Whereabouts::DoesNotArrive),
                };
                (vec![ThreadId { block, thread: reached }, ThreadId { block, thread: other }], Divergence::Barrier { other: state })
            }
            InterpError::WarpDivergence { block, warp, mask, ref reason, .. } if dw.outside_mask && reason == model::interp::OUTSIDE_OWN_MASK => {
                let t = w.thread(0).thread;
                let lane = (t[0] + t[1] * w.block[0] + t[2] * w.block[0] * w.block[1]) % 32;
                (vec![ThreadId { block, thread: t }], Divergence::OutsideMask { warp, mask, lane })
            }
            InterpError::WarpDivergence { block, warp, mask, missing, .. } => {
                let (lane, state) = match missing.first() {
                    Some((l, wh)) => (*l, self.whereabouts(wh)),
                    None => (w.missing_lane.unwrap_or(0), Whereabouts::DoesNotArrive),
                };
                (vec![ThreadId { block, thread: t1.thread }], Divergence::Warp { warp, mask, lane, other: state })
            }
            _ => unreachable!("the judge accepts only divergence errors"),
        };
        report.findings.push(Finding {
            kind: FindingKind::BarrierDivergence,
            accesses: vec![],
            threads,
            address: None,
            barrier: Some(loc),
            divergence: Some(divergence),
            inputs: vec![],
            mismatch: None,
            launch: self.launch(&w),
            witness: w,
            replayed: true,
            assumed_launch: None,
            assumed_scalars: None,
            benign: None,
            contents_needed: Vec::new(),
        });
    }

    fn out_of_bounds(&self, ow: bounds::OobWitness, report: &mut Explanation) {
        let a = &self.l.accesses[ow.access];
        let mut w = ow.witness;
        let t = w.thread(0);
        let off = w.offset(0).unwrap_or(0);
        // The interpreter survives out-of-bounds accesses in replays and lists them.
        let no_sizes = HashMap::new();
        let reproduced = replay::first_reproduction(&self.replay_inputs(&w, &no_sizes, Recording::Off), |launch, trace, _| {
            let mine: Vec<_> = trace.out_of_bounds.iter().filter(|e| e.inst == (a.block, a.inst)).cloned().collect();
            let e = mine.iter().find(|e| e.thread == t.thread && e.block == t.block).or(mine.first()).cloned()?;
            // The offset into the target, as the interpreter saw it.
            let offset = match (a.space, a.base) {
                (model::ops::Space::Shared, _) => trace.shared_var_at(e.addr).map(|(_, inner)| inner as i64),
                (_, Some(base)) => replay::buffer_address(launch, base).map(|start| e.addr.wrapping_sub(start) as i64),
                _ => None,
            };
            Some((e, offset))
        });
        let ((event, seen_offset), fill) = match reproduced {
            Ok(Some(r)) => r,
            Ok(None) => {
                report.uncertified.push(Uncertified::at(Reason::Unreproduced { question: Question::Bounds }, self.location(a)));
                return;
            }
            Err(stop) => {
                report.uncertified.push(Uncertified::at(Undecided::from(stop).reason(Question::Bounds), self.location(a)));
                return;
            }
        };
        w.fill = Some(fill);
        let thread = ThreadId { block: event.block, thread: event.thread };
        // The report describes what the replay did: the solver's iteration can be one the
        // over-approximation admits while the same thread goes out of bounds in another.
        let offset = match seen_offset {
            Some(seen) => {
                w.threads[0] = WitnessThread { id: thread, iterations: event.iterations.iter().copied().collect(), offset: Some(seen as u64) };
                seen
            }
            None if thread == t => off as i64,
            None => event.addr as i64,
        };
        let elem = self.elem_bytes(a) as i64;
        report.findings.push(Finding {
            kind: FindingKind::OutOfBounds,
            accesses: vec![self.access_report(a, 0, &w)],
            threads: vec![thread],
            address: Some(AddressReport {
                space: a.space.name(),
                target: self.target(a),
                offset: offset as u64,
                element: Some(offset.div_euclid(elem) as u64),
                size: ow.size,
            }),
            barrier: None,
            divergence: None,
            inputs: self.inputs(&w),
            mismatch: None,
            launch: self.launch(&w),
            witness: w,
            replayed: true,
            assumed_launch: None,
            assumed_scalars: None,
            benign: None,
            contents_needed: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{Depth, FindingKind, Focus};

    /// A focused check asks only the questions that can find one of its findings: it only
    /// decides those that can merely find one of them again, and asks in full those on lines
    /// another finding shares.
    #[test]
    fn focus_depth_by_lines_and_kind() {
        let focus = Focus {
            findings: vec![
                (FindingKind::Race, vec![9]),
                (FindingKind::Race, vec![50, 60]),
                (FindingKind::OutOfBounds, vec![70]),
                (FindingKind::Race, vec![70]),
            ],
            replay_all: false,
            undecided_settles_a_line: false,
        };
        assert_eq!(focus.depth(FindingKind::Race, &[9, 9]), Some(Depth::Decide));
        assert_eq!(focus.depth(FindingKind::Race, &[60, 50]), Some(Depth::Decide));
        assert_eq!(focus.depth(FindingKind::Race, &[50, 50]), None, "a race on line 50 alone is another finding");
        assert_eq!(focus.depth(FindingKind::Race, &[9, 12]), None, "it cannot find the race on line 9 alone");
        assert_eq!(focus.depth(FindingKind::BarrierDivergence, &[9]), None, "another kind on the finding's line");
        assert_eq!(focus.depth(FindingKind::OutOfBounds, &[70]), Some(Depth::Full), "the race on line 70 shares its line");
        assert_eq!(focus.depth(FindingKind::Race, &[70, 70]), Some(Depth::Full));
        assert_eq!(focus.depth(FindingKind::Race, &[12, 13]), None);
        assert_eq!(focus.depth(FindingKind::OutOfBounds, &[51]), None);
    }
}
