//! Questions started early on an idle core.
//!
//! A worker asks a question's cheap restrictions before the question itself: the witness probe,
//! then the index abstraction (see [`crate::ctx::Ctx::run_witness`]), each with a quarter of the
//! question's time. When they decide nothing, the question starts only after them: on llm.c's
//! causal softmax opened with no setup, 1.4 s of probe and abstraction, then 2.6 s of question,
//! while the other core had no check left to do. A worker that has run out of checks of its own
//! waits here instead of ending, and starts the questions the other workers post: the posting
//! worker asks the restrictions meanwhile, and then finds the question answered, or being
//! answered (the shared [`crate::answers::AnswerCache`] makes it wait for that answer rather
//! than solve it again). A question that a restriction decided is withdrawn, and its solve, if
//! started, stopped.
//!
//! Only workers out of checks of their own start posted questions, so nothing takes a core
//! from another worker's own checks; and a query gets the same answer whichever worker solves it (its limit counts CPU
//! time), so the answers do not change, only when they arrive.

use crate::answers::AnswerCache;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The questions posted for idle workers, shared by the workers of one [`crate::schedule::run`].
pub struct Prefetch {
    state: Mutex<State>,
    wake: Condvar,
}

struct State {
    /// Oldest first: the question whose restrictions have run longest is started first.
    posted: VecDeque<Arc<Request>>,
    /// Workers waiting here for a question to start.
    idle: usize,
    /// Workers still taking checks of their own (the ones that may post).
    working: usize,
}

/// One posted question: its script (a query is not shared between threads: each worker reads
/// its own), the text the poster will ask it under, and its limit.
pub struct Request {
    pub script: String,
    pub text: String,
    pub limit_ms: u64,
    state: AtomicU8,
}

/// Not yet started.
const POSTED: u8 = 0;
/// Being solved by an idle worker.
const TAKEN: u8 = 1;
/// No longer wanted before anyone started it.
const WITHDRAWN: u8 = 2;
/// No longer wanted while being solved: the solve stops.
const STOPPED: u8 = 3;

impl Request {
    /// Whether the poster no longer wants the answer (polled by the solve).
    pub fn stopped(&self) -> bool {
        self.state.load(Ordering::Acquire) == STOPPED
    }

    /// Solves the question on `solver` into `answers`, the poster's key and limit; it stops
    /// when the budget runs out or the poster no longer wants it.
    pub fn solve(&self, answers: &AnswerCache, solver: &mut ::smt::Solver, budget: &model::budget::Budget) {
        let stop = || budget.check().is_err() || self.stopped();
        answers.get_or_solve(self.text.clone(), self.limit_ms, || match crate::smt::read_query(&self.script) {
            Ok(query) => crate::smt::ask(solver, &query, std::time::Duration::from_millis(self.limit_ms), &stop).0,
            Err(message) => crate::smt::Outcome::Failed(message),
        });
    }
}

/// The poster's hold on a posted question. Dropped without [`Posted::ask_now`] (a restriction
/// decided the question), it withdraws the question, or stops its solve.
pub struct Posted {
    request: Option<Arc<Request>>,
}

impl Posted {
    /// The poster is about to ask the question itself, under the returned text (the key it
    /// was posted under): when no idle worker has started it, none will (the poster solves
    /// it); when one has, the poster's ask waits for its answer.
    pub fn ask_now(mut self) -> String {
        let request = self.request.take().expect("a posted question is asked once");
        let _ = request.state.compare_exchange(POSTED, WITHDRAWN, Ordering::AcqRel, Ordering::Acquire);
        request.text.clone()
    }
}

impl Drop for Posted {
    fn drop(&mut self) {
        if let Some(request) = self.request.take() {
            if request.state.compare_exchange(POSTED, WITHDRAWN, Ordering::AcqRel, Ordering::Acquire).is_err() {
                request.state.store(STOPPED, Ordering::Release);
            }
        }
    }
}

impl Prefetch {
    /// A board for `workers` workers, all of them taking checks of their own.
    pub fn new(workers: usize) -> Prefetch {
        Prefetch { state: Mutex::new(State { posted: VecDeque::new(), idle: 0, working: workers }), wake: Condvar::new() }
    }

    /// Posts the query of `script` (asked under `text` within `limit_ms`) for the next worker
    /// that runs out of checks of its own (or one waiting already).
    pub fn post(&self, script: String, text: String, limit_ms: u64) -> Posted {
        let mut state = lock(&self.state);
        // Each worker has one question posted at most (it withdraws it before its next one).
        state.posted.retain(|r| r.state.load(Ordering::Acquire) == POSTED);
        let request = Arc::new(Request { script, text, limit_ms, state: AtomicU8::new(POSTED) });
        state.posted.push_back(Arc::clone(&request));
        if state.idle > 0 {
            self.wake.notify_one();
        }
        Posted { request: Some(request) }
    }

    /// Called by a worker with no checks of its own left: starts the questions the others post
    /// (`solve` answers one), until every worker is out of checks.
    pub fn help(&self, mut solve: impl FnMut(&Request)) {
        let mut state = self.out_of_checks();
        loop {
            if let Some(request) = state.posted.pop_front() {
                if request.state.compare_exchange(POSTED, TAKEN, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                    drop(state);
                    solve(&request);
                    state = lock(&self.state);
                }
                continue;
            }
            if state.working == 0 {
                return;
            }
            state.idle += 1;
            state = self.wake.wait(state).unwrap_or_else(|e| e.into_inner());
            state.idle -= 1;
        }
    }
}

impl Prefetch {
    /// A worker stopped taking checks of its own without helping (it panicked): the others do
    /// not wait for its posts.
    pub fn leave(&self) {
        drop(self.out_of_checks());
    }

    /// A worker has no checks of its own left. The last one wakes the workers waiting for
    /// questions, to end.
    fn out_of_checks(&self) -> MutexGuard<'_, State> {
        let mut state = lock(&self.state);
        state.working = state.working.saturating_sub(1);
        if state.working == 0 {
            self.wake.notify_all();
        }
        state
    }
}

/// A worker that panicked while holding the lock left the state whole (every change is one
/// statement), so the lock is taken over.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    fn query() -> String {
        "(declare-const x (_ BitVec 8))\n(assert (= x x))\n".into()
    }

    /// A question withdrawn before a worker started it (a restriction decided it, or its
    /// poster asks it now) is never solved.
    #[test]
    fn a_question_withdrawn_before_it_starts_is_never_solved() {
        let board = Prefetch::new(1);
        let decided = board.post(query(), "decided".into(), 500);
        let asked = board.post(query(), "asked".into(), 500);
        drop(decided);
        asked.ask_now();
        // The only worker runs out of checks: it finds two withdrawn questions and ends.
        board.help(|r| panic!("solved `{}`, which nobody wants", r.text));
        assert!(lock(&board.state).posted.is_empty());
    }

    fn taken(board: &Prefetch) -> bool {
        let state = lock(&board.state);
        state.posted.is_empty() && state.idle == 0
    }

    /// A question dropped while being solved is stopped: its solve sees `stopped`.
    #[test]
    fn a_question_no_longer_wanted_stops_its_solve() {
        let board = Prefetch::new(2);
        let saw_stop = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let helper = s.spawn(|| {
                board.help(|r| {
                    let started = std::time::Instant::now();
                    while !r.stopped() && started.elapsed() < Duration::from_secs(10) {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    if r.stopped() {
                        saw_stop.fetch_add(1, Ordering::SeqCst);
                    }
                })
            });
            let posted = board.post(query(), "q".into(), 500);
            while !taken(&board) {
                std::thread::sleep(Duration::from_millis(1));
            }
            drop(posted);
            board.help(|_| {});
            helper.join().unwrap();
        });
        assert_eq!(saw_stop.load(Ordering::SeqCst), 1);
    }
}
