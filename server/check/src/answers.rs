//! Answers to the SMT queries of one check, shared by its workers, so that a query asked again
//! is not solved again.
//!
//! The engine asks the same query more than once, word for word: pairs of accesses whose
//! addresses, guards and phases read alike (the keys and the values of a bitonic sort's
//! compare-exchange, both indexed by `pos`), the same witness tier for two pairs of one line,
//! a probe a later question repeats. Measured on the corpus kernels opened with no setup:
//! 175 queries of llm.c's layernorm are 79 distinct ones, 85 of ggml's softmax are 33, 384 of
//! the bitonic sort are 207. A query is keyed by its whole text and its time limit, so an
//! answer is reused only for the very question it answered: a model, `unsat`, or a timeout
//! (a limit of CPU time, which the same query reaches again). A worker that asks a query
//! another worker is solving waits for that answer instead of solving it a second time.
//! Failures and stops are handed to whoever waits but not kept: they say something about the
//! solver process or the budget, not about the query.

use crate::smt::Outcome;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A query's text and its time limit in milliseconds.
type Key = (String, u64);

/// One answer, given once; whoever asks meanwhile waits for it.
type Cell = OnceLock<Outcome>;

/// The answers of one check (see the module comment).
#[derive(Default)]
pub struct AnswerCache {
    cells: Mutex<HashMap<Key, Arc<Cell>>>,
}

/// Whether an answer was solved by this call or reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Solved,
    Reused,
}

impl AnswerCache {
    /// The answer to `text` within `timeout_ms`: one given before (or being given by another
    /// worker, waited for), else `solve`'s. A solve another worker stopped (it no longer wanted
    /// the answer: see [`crate::prefetch`]) is no answer to this caller, who solves it itself.
    pub fn get_or_solve(&self, text: String, timeout_ms: u64, solve: impl FnOnce() -> Outcome) -> (Outcome, Source) {
        let key = (text, timeout_ms);
        let mut solve = Some(solve);
        loop {
            let cell = Arc::clone(lock(&self.cells).entry(key.clone()).or_default());
            let mut source = Source::Reused;
            let outcome = cell
                .get_or_init(|| {
                    source = Source::Solved;
                    // Taken once: a caller that solved does not go round again.
                    solve.take().map_or(Outcome::Stopped, |solve| solve())
                })
                .clone();
            if !kept(&outcome) {
                let mut cells = lock(&self.cells);
                if cells.get(&key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
                    cells.remove(&key);
                }
            }
            if source == Source::Reused && outcome == Outcome::Stopped {
                continue;
            }
            return (outcome, source);
        }
    }
}

/// Whether an outcome answers the query itself (rather than telling of the process or budget).
fn kept(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Sat(_) | Outcome::Unsat | Outcome::Timeout)
}

/// Locks the map; a worker that panicked while holding it left it consistent (entries are
/// inserted whole), so the lock is taken over rather than propagating the panic.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_query_asked_again_is_answered_from_the_first_answer() {
        let cache = AnswerCache::default();
        let solved = AtomicUsize::new(0);
        let solve = |o: Outcome| {
            let solved = &solved;
            move || {
                solved.fetch_add(1, Ordering::SeqCst);
                o
            }
        };
        assert_eq!(cache.get_or_solve("(assert q)".into(), 500, solve(Outcome::Unsat)), (Outcome::Unsat, Source::Solved));
        assert_eq!(cache.get_or_solve("(assert q)".into(), 500, solve(Outcome::Timeout)), (Outcome::Unsat, Source::Reused));
        assert_eq!(solved.load(Ordering::SeqCst), 1);
        // Another text, or the same text with another limit, is another question.
        assert_eq!(cache.get_or_solve("(assert r)".into(), 500, solve(Outcome::Timeout)).1, Source::Solved);
        assert_eq!(cache.get_or_solve("(assert q)".into(), 2000, solve(Outcome::Timeout)).1, Source::Solved);
        assert_eq!(cache.get_or_solve("(assert r)".into(), 500, solve(Outcome::Unsat)), (Outcome::Timeout, Source::Reused));
    }

    #[test]
    fn failures_and_stops_are_asked_again() {
        let cache = AnswerCache::default();
        for not_kept in [Outcome::Stopped, Outcome::Failed("z3 crashed".into())] {
            assert_eq!(cache.get_or_solve("(assert q)".into(), 500, || not_kept.clone()), (not_kept, Source::Solved));
        }
        assert_eq!(cache.get_or_solve("(assert q)".into(), 500, || Outcome::Unsat), (Outcome::Unsat, Source::Solved));
    }

    /// A solve that its asker stopped is solved again by whoever was waiting for it.
    #[test]
    fn a_stopped_solve_is_solved_again_by_a_waiter() {
        let cache = AnswerCache::default();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let answers = std::thread::scope(|s| {
            let stopped = s.spawn(|| {
                cache.get_or_solve("(assert q)".into(), 500, || {
                    started_tx.send(()).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    Outcome::Stopped
                })
            });
            started_rx.recv().unwrap();
            let waiter = cache.get_or_solve("(assert q)".into(), 500, || Outcome::Unsat);
            (stopped.join().unwrap(), waiter)
        });
        assert_eq!(answers, ((Outcome::Stopped, Source::Solved), (Outcome::Unsat, Source::Solved)));
    }

    /// Two workers asking one query at once: one solves it, the other waits for its answer.
    #[test]
    fn a_query_being_solved_is_waited_for() {
        let cache = AnswerCache::default();
        let solved = AtomicUsize::new(0);
        let answers: Vec<_> = std::thread::scope(|s| {
            let ask = || {
                cache.get_or_solve("(assert q)".into(), 500, || {
                    solved.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    Outcome::Unsat
                })
            };
            let workers: Vec<_> = (0..4).map(|_| s.spawn(ask)).collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert_eq!(solved.load(Ordering::SeqCst), 1);
        assert!(answers.iter().all(|(o, _)| *o == Outcome::Unsat));
        assert_eq!(answers.iter().filter(|(_, s)| *s == Source::Solved).count(), 1);
    }
}
