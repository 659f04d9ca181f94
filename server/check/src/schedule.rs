//! Running the checks of one kernel on all cores.
//!
//! A kernel's checks — one per pair of accesses that may race, one per barrier or warp
//! collective, one per access with a declared size — are independent questions. Workers, each
//! with a solver process and a [`Ctx`] of its own, take them in order from a shared counter,
//! so the first questions are answered first; the answers are put back in that order, and the
//! report does not depend on which worker answered what, or when. What the workers share is
//! read-only (the kernel, its model, the interface binding) or synchronised (the cache of
//! enumerated points, the ledger of races found).

use crate::bind::Binding;
use crate::bounds::{self, BoundsLedger, BoundsOutcome};
use crate::ctx::{Caches, Ctx};
use crate::prefetch::Prefetch;
use crate::races::{self, RaceLedger, RaceOutcome};
use crate::sync::{self, Site, SyncLedger, SyncOutcome};
use model::budget::Budget;
use model::phases::Phases;
use model::symbolic::Lifted;
use model::Kernel;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// What every worker's [`Ctx`] is made of.
pub struct Shared<'a> {
    pub k: &'a Kernel,
    pub l: &'a Lifted,
    pub phases: &'a Phases,
    pub bind: &'a Binding,
    pub caches: &'a Caches,
    pub timeout_ms: u64,
    pub budget: Budget,
    /// Whether checks may be decided by enumerating a concrete launch.
    pub enumerate: bool,
    /// Which checks to run, and how far (all of them, in full, when `None`): the launch
    /// confirmation asks only about the lines of the findings it confirms.
    pub focus: Option<&'a (dyn Fn(Check) -> Option<Depth> + Sync)>,
    /// A race question left undecided (out of time) settles its pair of lines as a witness
    /// does: their other pairs are not asked, and what they would have found is not reported.
    /// For a re-check whose undecided lines are asked again elsewhere (the scalar re-check with
    /// the launch open: at the common blocks, where everything is concrete); a line with an
    /// undecided pair can no longer be shown race-free, only found racing.
    pub undecided_settles_a_line: bool,
}

/// One check of a kernel, as [`Shared::focus`] sees it.
#[derive(Clone, Copy)]
pub enum Check {
    /// Accesses `i` and `j` may race.
    Race(usize, usize),
    /// The barrier or warp collective at (block, instruction).
    Sync(model::BlockId, usize),
    /// Access `i` stays in bounds.
    Bounds(usize),
}

/// How far a focused check goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Depth {
    /// Whether a witness exists is all that matters (its first model is kept as it is).
    Decide,
    /// As in a full check: a small witness, for the replay.
    Full,
}

impl Shared<'_> {
    fn ctx<'s>(&'s self, solver: &'s mut ::smt::Solver) -> Ctx<'s> {
        let mut ctx = Ctx::new(self.k, self.l, self.phases, self.bind, solver, self.caches, self.timeout_ms);
        if !self.enumerate {
            ctx.launch = None;
        }
        ctx.budget = self.budget.clone();
        ctx
    }
}

/// The answers to every check of a kernel, in the order they are reported.
pub struct Answers {
    pub races: Vec<RaceOutcome>,
    pub sync: Vec<SyncOutcome>,
    pub bounds: Vec<BoundsOutcome>,
    /// Summed over the workers.
    pub queries: u64,
    pub enumerated: u64,
    /// Some race was ruled out assuming signed index arithmetic does not wrap.
    pub relied_on_no_wrap: bool,
    /// Time the workers waited for their solvers, summed (it can exceed the check's time).
    pub solver_time: Duration,
}

/// One question.
#[derive(Clone, Copy)]
enum Item {
    /// The `n`th pair of [`races::pairs`].
    Race(usize),
    /// The `n`th site of [`sync::sites`].
    Sync(usize),
    /// Access `i`.
    Bounds(usize),
}

enum Answer {
    /// For the `n`th pair; `None`: the ledger said the pair need not be checked.
    Race(usize, Option<Option<RaceOutcome>>),
    /// For the `n`th site; `None` when it holds or was not checked.
    Sync(usize, Option<SyncOutcome>),
    Bounds(Option<BoundsOutcome>),
}

/// What one worker did: its answers by item number, and its counters.
struct Done {
    answers: Vec<(usize, Answer)>,
    queries: u64,
    relied_on_no_wrap: bool,
    enumerated: u64,
    solver_time: Duration,
}

/// The checks of the kernel, each once, on one worker per solver in `solvers` (at least one).
/// The solvers are handed back with the answers. A panic in a worker is resumed here, after
/// every worker has stopped.
pub fn run(shared: &Shared, solvers: Vec<::smt::Solver>) -> (Answers, Vec<::smt::Solver>) {
    let mut pairs = races::pairs(shared.l);
    if shared.undecided_settles_a_line {
        // One pair of each pair of lines first, then the second of each: workers ask about
        // different lines side by side, so a line's first timeout stops the line before its
        // other pairs start (each line's pairs keep their order, and with it the pair the
        // line reports).
        let keys: Vec<Option<_>> = pairs.iter().map(|&p| Some(races::lines_key(shared.l, p))).collect();
        pairs = crate::in_order::round_robin(&keys, |a, b| a == b).into_iter().map(|n| pairs[n]).collect();
    }
    let sites = sync::sites(shared.l);
    let items: Vec<Item> =
        (0..pairs.len()).map(Item::Race).chain((0..sites.len()).map(Item::Sync)).chain((0..shared.l.accesses.len()).map(Item::Bounds)).collect();
    let work = Work {
        shared,
        pairs: &pairs,
        sites: &sites,
        items: &items,
        next: AtomicUsize::new(0),
        ledger: RaceLedger::new(shared.undecided_settles_a_line),
        bounds_ledger: BoundsLedger::default(),
        sync_ledger: SyncLedger::default(),
        prefetch: (solvers.len() > 1).then(|| Prefetch::new(solvers.len())),
    };
    let (done, solvers) = if solvers.len() <= 1 {
        let mut solver = solvers.into_iter().next().unwrap_or_else(|| {
            let mut solver = ::smt::Solver::new(::smt::SolverKind::preferred_for_bit_vectors());
            solver.limit_cpu_time(true);
            solver
        });
        let done = work.worker(&mut solver);
        (vec![done], vec![solver])
    } else {
        let finished: Vec<std::thread::Result<(Done, ::smt::Solver)>> = std::thread::scope(|scope| {
            let work = &work;
            let handles: Vec<_> = solvers
                .into_iter()
                .map(|mut solver| {
                    scope.spawn(move || {
                        let done = work.worker(&mut solver);
                        (done, solver)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join()).collect()
        });
        let mut done = Vec::new();
        let mut solvers = Vec::new();
        for f in finished {
            match f {
                Ok((d, s)) => {
                    done.push(d);
                    solvers.push(s);
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        (done, solvers)
    };
    (work.collect(done), solvers)
}

struct Work<'a> {
    shared: &'a Shared<'a>,
    pairs: &'a [(usize, usize)],
    sites: &'a [Site],
    items: &'a [Item],
    /// The next item to take.
    next: AtomicUsize,
    ledger: RaceLedger,
    bounds_ledger: BoundsLedger,
    sync_ledger: SyncLedger,
    /// Questions posted for a worker out of checks of its own (with more than one worker).
    prefetch: Option<Prefetch>,
}

impl Work<'_> {
    /// Takes items until none is left, then starts the questions the other workers post
    /// until they are out of items too (see [`crate::prefetch`]).
    fn worker(&self, solver: &mut ::smt::Solver) -> Done {
        let Some(prefetch) = &self.prefetch else { return self.own_items(solver) };
        // A worker that panics is not waited for by the others (the panic is resumed in `run`).
        let done = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.own_items(solver))) {
            Ok(done) => done,
            Err(panic) => {
                prefetch.leave();
                std::panic::resume_unwind(panic)
            }
        };
        prefetch.help(|r| r.solve(&self.shared.caches.answers, solver, &self.shared.budget));
        done
    }

    /// Takes items until none is left.
    fn own_items(&self, solver: &mut ::smt::Solver) -> Done {
        let mut ctx = self.shared.ctx(solver);
        ctx.prefetch = self.prefetch.as_ref();
        let mut answers = Vec::new();
        loop {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(&item) = self.items.get(n) else { break };
            let depth = match self.shared.focus {
                None => Some(Depth::Full),
                Some(focus) => focus(match item {
                    Item::Race(p) => Check::Race(self.pairs[p].0, self.pairs[p].1),
                    Item::Sync(s) => Check::Sync(self.sites[s].block, self.sites[s].inst),
                    Item::Bounds(i) => Check::Bounds(i),
                }),
            };
            let Some(depth) = depth else {
                // Not asked about: answered as a check that found nothing (a race pair as one
                // the ledger skipped).
                answers.push((
                    n,
                    match item {
                        Item::Race(p) => Answer::Race(p, None),
                        Item::Sync(s) => Answer::Sync(s, None),
                        Item::Bounds(_) => Answer::Bounds(None),
                    },
                ));
                continue;
            };
            ctx.decide_only = depth == Depth::Decide;
            let answer = match item {
                Item::Race(p) => Answer::Race(
                    p,
                    self.ledger.worth_checking(self.shared.l, self.pairs, p).then(|| {
                        let (i, j) = self.pairs[p];
                        let outcome = races::check_pair(&mut ctx, i, j);
                        self.ledger.record(self.shared.l, self.pairs, p, &outcome);
                        outcome
                    }),
                ),
                Item::Sync(s) => Answer::Sync(
                    s,
                    if self.sync_ledger.worth_checking(self.sites, s) {
                        let outcome = sync::check_site(&mut ctx, &self.sites[s]);
                        self.sync_ledger.record(self.sites, s, &outcome);
                        outcome
                    } else {
                        None
                    },
                ),
                Item::Bounds(i) => Answer::Bounds(if self.bounds_ledger.worth_checking(self.shared.l, i) {
                    let outcome = bounds::check_access(&mut ctx, i);
                    self.bounds_ledger.record(self.shared.l, i, &outcome);
                    outcome
                } else {
                    None
                }),
            };
            answers.push((n, answer));
        }
        Done { answers, queries: ctx.queries, relied_on_no_wrap: ctx.relied_on_no_wrap, enumerated: ctx.enumerated, solver_time: ctx.solver_time }
    }

    /// The workers' answers in item order.
    fn collect(&self, done: Vec<Done>) -> Answers {
        let mut answers =
            Answers { races: vec![], sync: vec![], bounds: vec![], queries: 0, enumerated: 0, relied_on_no_wrap: false, solver_time: Duration::ZERO };
        let mut by_item: Vec<(usize, Answer)> = Vec::with_capacity(self.items.len());
        for d in done {
            answers.queries += d.queries;
            answers.enumerated += d.enumerated;
            answers.relied_on_no_wrap |= d.relied_on_no_wrap;
            answers.solver_time += d.solver_time;
            by_item.extend(d.answers);
        }
        by_item.sort_by_key(|(n, _)| *n);
        let mut sync = Vec::new();
        let mut races: Vec<Option<Option<RaceOutcome>>> = (0..self.pairs.len()).map(|_| None).collect();
        for (_, a) in by_item {
            match a {
                Answer::Race(p, o) => races[p] = o,
                Answer::Sync(s, o) => sync.extend(o.map(|o| (s, o))),
                Answer::Bounds(o) => answers.bounds.extend(o),
            }
        }
        answers.races = races::select(self.shared.l, self.pairs, races, self.shared.undecided_settles_a_line);
        answers.sync = SyncLedger::select(self.sites, sync);
        answers.bounds = BoundsLedger::select(self.shared.l, std::mem::take(&mut answers.bounds));
        answers
    }
}

/// How many workers a check gets: `jobs`, or one per core when `jobs` is 0.
pub fn workers(jobs: usize) -> usize {
    match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}
