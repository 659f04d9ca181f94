//! Stopping work early: a cancellation token that the caller sets when the result is no longer
//! wanted (a newer version of the file arrived, the request was cancelled), and a budget that adds
//! a deadline. Every long loop of the engine — enumeration, replay, the interpreter, solver
//! waits — polls a budget, so cancelled or expired work ends within milliseconds.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A shared flag: cancelled once, cancelled for good. Cloning shares the flag; [`joined`]
/// makes a token that is cancelled when either of two is.
///
/// [`joined`]: CancelToken::joined
#[derive(Clone, Debug, Default)]
pub struct CancelToken {
    flags: Vec<Arc<AtomicBool>>,
}

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken { flags: vec![Arc::new(AtomicBool::new(false))] }
    }

    /// Cancels this token (and every clone of it, and every token joined from it).
    pub fn cancel(&self) {
        if let Some(f) = self.flags.first() {
            f.store(true, Ordering::SeqCst);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.flags.iter().any(|f| f.load(Ordering::Relaxed))
    }

    /// A token cancelled when `self` or `other` is. Cancelling the joined token cancels `self`.
    pub fn joined(&self, other: &CancelToken) -> CancelToken {
        let mut flags = self.flags.clone();
        flags.extend(other.flags.iter().cloned());
        CancelToken { flags }
    }
}

/// Two tokens are equal when they share the same flags.
impl PartialEq for CancelToken {
    fn eq(&self, other: &CancelToken) -> bool {
        self.flags.len() == other.flags.len() && self.flags.iter().zip(&other.flags).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// Why work stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Cancelled,
    /// The time budget ran out.
    Deadline,
    /// The process holds more memory than the ceiling ([`set_memory_ceiling`]).
    Memory,
}

/// Bytes the process holds, as counted by an allocator that reports here (the `lark` binary
/// installs one; without it the count stays 0 and no ceiling applies).
pub static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
/// The memory ceiling in bytes; 0 for none.
static CEILING: AtomicUsize = AtomicUsize::new(0);
/// How many times a budget stopped work at the ceiling (see [`memory_stops`]).
static MEMORY_STOPS: AtomicUsize = AtomicUsize::new(0);

/// A count that grows whenever some check stops at the memory ceiling. A result computed while
/// it grew may be incomplete because of other work in the process (the ceiling is shared), so
/// callers that cache results compare it before and after and do not keep such a result.
pub fn memory_stops() -> usize {
    MEMORY_STOPS.load(Ordering::Relaxed)
}

/// Every budget stops its work once the process holds more than `bytes` (0: no ceiling). The
/// exact interpreter, replay, enumeration and normal forms poll their budget, so a check that
/// would exhaust memory ends as `uncertified` instead of taking the machine down.
pub fn set_memory_ceiling(bytes: usize) {
    CEILING.store(bytes, Ordering::Relaxed);
}

pub fn memory_ceiling() -> usize {
    CEILING.load(Ordering::Relaxed)
}

fn over_memory_ceiling() -> bool {
    let ceiling = CEILING.load(Ordering::Relaxed);
    ceiling != 0 && ALLOCATED.load(Ordering::Relaxed) > ceiling
}

/// A deadline and a cancellation token, polled together.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budget {
    pub deadline: Option<Instant>,
    pub cancel: CancelToken,
}

impl Budget {
    /// No deadline, never cancelled.
    pub fn unlimited() -> Budget {
        Budget::default()
    }

    pub fn with_timeout(timeout: Duration, cancel: CancelToken) -> Budget {
        Budget { deadline: Instant::now().checked_add(timeout), cancel }
    }

    /// This budget, with its deadline brought forward to at most `limit` from now (the same
    /// cancellation): a part of a check that must not take the whole budget.
    pub fn within(&self, limit: Duration) -> Budget {
        let soon = Instant::now().checked_add(limit);
        let deadline = match (self.deadline, soon) {
            (Some(d), Some(s)) => Some(d.min(s)),
            (d, s) => d.or(s),
        };
        Budget { deadline, cancel: self.cancel.clone() }
    }

    /// Why to stop now, if at all.
    pub fn check(&self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            return Err(Stop::Cancelled);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Stop::Deadline);
        }
        if over_memory_ceiling() {
            MEMORY_STOPS.fetch_add(1, Ordering::Relaxed);
            return Err(Stop::Memory);
        }
        Ok(())
    }

    pub fn remaining(&self) -> Option<Duration> {
        self.deadline.map(|d| d.saturating_duration_since(Instant::now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_tokens_see_either_cancellation() {
        let (a, b) = (CancelToken::new(), CancelToken::new());
        let j = a.joined(&b);
        assert!(!j.is_cancelled());
        b.cancel();
        assert!(j.is_cancelled() && !a.is_cancelled());
        let k = a.joined(&CancelToken::new());
        k.cancel();
        assert!(a.is_cancelled(), "cancelling a joined token cancels its first");
    }

    #[test]
    fn budgets_expire_and_cancel() {
        assert_eq!(Budget::unlimited().check(), Ok(()));
        let t = CancelToken::new();
        let b = Budget::with_timeout(Duration::from_secs(3600), t.clone());
        assert_eq!(b.check(), Ok(()));
        t.cancel();
        assert_eq!(b.check(), Err(Stop::Cancelled));
        let d = Budget::with_timeout(Duration::ZERO, CancelToken::new());
        assert_eq!(d.check(), Err(Stop::Deadline));
    }
}
