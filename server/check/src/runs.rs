//! Replay runs one check has made, kept by what determines them, so that candidates sharing a
//! witness's launch, values and memory are judged on one run per fill rather than one each.
//!
//! The questions of one kernel often get the same small counterexample: with no `lark.toml`,
//! every warp collective and shared store of vLLM's top-k gating loop was answered with one
//! launch and one `num_rows`, and each of those candidates replayed the same four runs again
//! (83 runs where 27 differ: 2.2 of its 3.7 s of replays). A run is determined by its launch
//! (geometry, blocks, arguments, which accesses it records), the sizes and fill of its buffers
//! and the values the witness writes into them; the judge that reads its trace is the caller's.
//!
//! Candidates are replayed on several threads at once (see `engine`), so a run one thread is
//! making is waited for by another that needs the same run, rather than made twice.

use crate::witness::{Fill, MemoryCell};
use model::interp::{InterpError, Launch, Trace};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// How many runs are kept per replaying thread: each keeps its trace, and candidates that share
/// a run are asked one after another. As many as one witness can make (`replay::RUNS_PER_WITNESS`): with fewer,
/// the runs of a witness that `replay::every_reproduction` replays under every fill pushed each
/// other out, and the next candidate with the same witness found none of them (llm.c's tiled
/// matmul replayed the same five runs twice, 0.6 s).
const KEPT: usize = crate::replay::RUNS_PER_WITNESS;

/// What a run did: the launch it ran (judges read its geometry and arguments), its trace and
/// how it ended.
pub struct Run {
    pub launch: Launch,
    pub trace: Trace,
    pub result: Result<(), InterpError>,
}

/// Everything a run's outcome depends on. The buffers' contents follow from their sizes, the
/// fill and the witness's memory values (a buffer the interface fills is the same in every run
/// of a check).
#[derive(Clone, PartialEq)]
pub struct RunKey {
    launch: Launch,
    sizes: Vec<u64>,
    memory: Vec<MemoryCell>,
    fill: Fill,
    /// A buffer left at zeros whatever the fill (see `replay::contents_needed`).
    zeroed: Option<model::symbolic::Base>,
}

impl RunKey {
    /// The key of a run about to start with `launch` on buffers of `sizes` bytes (filled with
    /// `fill`, then `memory` written): known before any buffer is filled (see
    /// `replay::Plan`). The launch's budget is not part of it: it says when to stop, not what
    /// the run does.
    pub fn new(launch: &Launch, sizes: Vec<u64>, memory: &[MemoryCell], fill: Fill) -> RunKey {
        RunKey { launch: Launch { budget: model::budget::Budget::unlimited(), ..launch.clone() }, sizes, memory: memory.to_vec(), fill, zeroed: None }
    }

    /// The key of the same run with buffer `zeroed` (if any) left at zeros.
    pub fn zeroing(self, zeroed: Option<model::symbolic::Base>) -> RunKey {
        RunKey { zeroed, ..self }
    }
}

/// The latest runs of one check, and the runs being made (see the module comment).
pub struct Runs {
    state: Mutex<State>,
    /// Signalled when a run being made is done (kept or not).
    made: Condvar,
    capacity: usize,
}

#[derive(Default)]
struct State {
    kept: VecDeque<(RunKey, Arc<Run>)>,
    making: Vec<RunKey>,
}

impl Default for Runs {
    fn default() -> Runs {
        Runs::new(1)
    }
}

impl Runs {
    /// Runs kept for `replayers` threads replaying at once.
    pub fn new(replayers: usize) -> Runs {
        Runs { state: Mutex::default(), made: Condvar::new(), capacity: KEPT * replayers.max(1) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run with this key, if one is kept.
    #[cfg(test)]
    fn find(&self, key: &RunKey) -> Option<Arc<Run>> {
        self.lock().find(key)
    }

    /// Keeps `run` under `key`, dropping the oldest beyond the capacity. A run the budget or a
    /// cancellation stopped is not kept: it says nothing about the kernel.
    #[cfg(test)]
    fn keep(&self, key: RunKey, run: Arc<Run>) {
        self.lock().keep(key, run, self.capacity);
    }

    /// The run with this key: a kept one, one another thread is making (waited for), or
    /// `make`'s (kept); whether it was made before.
    pub fn find_or_make(&self, key: RunKey, make: impl FnOnce() -> Run) -> (Arc<Run>, bool) {
        let mut state = self.lock();
        loop {
            if let Some(run) = state.find(&key) {
                return (run, true);
            }
            if !state.making.contains(&key) {
                break;
            }
            state = self.made.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.making.push(key.clone());
        drop(state);
        // The key leaves `making` however `make` ends (a panic too), or the waiters would wait
        // for ever.
        let making = Making { runs: self, key: &key };
        let run = Arc::new(make());
        self.lock().keep(key.clone(), run.clone(), self.capacity);
        drop(making);
        (run, false)
    }
}

/// A run being made; when dropped, its key leaves `making` and the waiters look again.
struct Making<'a> {
    runs: &'a Runs,
    key: &'a RunKey,
}

impl Drop for Making<'_> {
    fn drop(&mut self) {
        self.runs.lock().making.retain(|k| k != self.key);
        self.runs.made.notify_all();
    }
}

impl State {
    fn find(&self, key: &RunKey) -> Option<Arc<Run>> {
        self.kept.iter().find(|(k, _)| k == key).map(|(_, run)| run.clone())
    }

    fn keep(&mut self, key: RunKey, run: Arc<Run>, capacity: usize) {
        if matches!(run.result, Err(InterpError::Stopped(_))) {
            return;
        }
        self.kept.push_front((key, run));
        self.kept.truncate(capacity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::interp::Arg;

    fn run(result: Result<(), InterpError>) -> Arc<Run> {
        Arc::new(Run { launch: Launch::new([1, 1, 1], [32, 1, 1], vec![]), trace: Trace::default(), result })
    }

    #[test]
    fn a_run_is_found_by_what_determines_it_and_nothing_else() {
        let launch = Launch::new([2, 1, 1], [64, 1, 1], vec![Arg::u32(96)]);
        let runs = Runs::default();
        runs.keep(RunKey::new(&launch, vec![16], &[], Fill::Zero), run(Ok(())));
        // Another budget is the same run.
        let later = launch.clone().budget(model::budget::Budget::with_timeout(std::time::Duration::from_millis(5), model::budget::CancelToken::new()));
        assert!(runs.find(&RunKey::new(&later, vec![16], &[], Fill::Zero)).is_some());
        // Another fill, buffer size, scalar or witness value is another run.
        assert!(runs.find(&RunKey::new(&launch, vec![16], &[], Fill::One)).is_none());
        assert!(runs.find(&RunKey::new(&launch, vec![32], &[], Fill::Zero)).is_none());
        let other = Launch::new([2, 1, 1], [64, 1, 1], vec![Arg::u32(97)]);
        assert!(runs.find(&RunKey::new(&other, vec![16], &[], Fill::Zero)).is_none());
        let cell = MemoryCell { param: 0, field: None, byte_offset: 4, bytes: 4, value: 7 };
        assert!(runs.find(&RunKey::new(&launch, vec![16], &[cell], Fill::Zero)).is_none());
    }

    #[test]
    fn a_stopped_run_is_not_kept_and_only_the_latest_are() {
        let launch = |n: u32| Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::u32(n)]);
        let runs = Runs::default();
        runs.keep(RunKey::new(&launch(0), vec![4], &[], Fill::Zero), run(Err(InterpError::Stopped(model::budget::Stop::Deadline))));
        assert!(runs.find(&RunKey::new(&launch(0), vec![4], &[], Fill::Zero)).is_none(), "a budget's end says nothing about the kernel");
        for n in 1..=KEPT as u32 + 1 {
            runs.keep(RunKey::new(&launch(n), vec![4], &[], Fill::Zero), run(Ok(())));
        }
        assert!(runs.find(&RunKey::new(&launch(1), vec![4], &[], Fill::Zero)).is_none(), "the oldest goes");
        assert!(runs.find(&RunKey::new(&launch(KEPT as u32 + 1), vec![4], &[], Fill::Zero)).is_some());
    }

    /// Two threads that need one run at once make it once: the second waits for the first's.
    /// A run that ends in a panic lets the waiter make it.
    #[test]
    fn a_run_being_made_is_waited_for_and_not_made_twice() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let launch = Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::u32(3)]);
        let key = RunKey::new(&launch, vec![4], &[], Fill::Zero);
        let (runs, made) = (Runs::new(2), AtomicUsize::new(0));
        let make = || {
            made.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(100));
            Run { launch: launch.clone(), trace: Trace::default(), result: Ok(()) }
        };
        let reused: Vec<bool> = std::thread::scope(|s| {
            let both = [s.spawn(|| runs.find_or_make(key.clone(), make).1), s.spawn(|| runs.find_or_make(key.clone(), make).1)];
            both.map(|h| h.join().unwrap()).to_vec()
        });
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert_eq!(reused.iter().filter(|&&r| r).count(), 1, "{reused:?}");

        let other = RunKey::new(&launch, vec![8], &[], Fill::Zero);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runs.find_or_make(other.clone(), || panic!("a run that fails"))));
        assert!(panicked.is_err());
        let (_, reused) = runs.find_or_make(other, make);
        assert!(!reused);
        assert_eq!(made.load(Ordering::SeqCst), 2);
    }
}
