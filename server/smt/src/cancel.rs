//! Cancellation: how a caller tells a waiting query to stop.
//!
//! The language server cancels the analysis of a superseded edit; the solver checks the flag
//! every few milliseconds while it waits for an answer, kills the solver process when it is set
//! and returns [`crate::SmtError::Cancelled`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Anything that can say "stop now".
///
/// Implemented for [`CancelToken`], for a plain `AtomicBool` (or `Arc<AtomicBool>` through
/// deref) and for closures `Fn() -> bool`, so a caller that already has a cancellation check
/// passes it as it is.
pub trait Cancellation {
    fn is_cancelled(&self) -> bool;
}

/// A shared cancellation flag: clone it, hand one clone to the query, call [`CancelToken::cancel`]
/// on another.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

impl From<Arc<AtomicBool>> for CancelToken {
    fn from(flag: Arc<AtomicBool>) -> CancelToken {
        CancelToken(flag)
    }
}

impl Cancellation for CancelToken {
    fn is_cancelled(&self) -> bool {
        CancelToken::is_cancelled(self)
    }
}

impl Cancellation for AtomicBool {
    fn is_cancelled(&self) -> bool {
        self.load(Ordering::SeqCst)
    }
}

impl<F: Fn() -> bool + ?Sized> Cancellation for F {
    fn is_cancelled(&self) -> bool {
        self()
    }
}

/// A query nobody will cancel.
pub struct Never;

impl Cancellation for Never {
    fn is_cancelled(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(c: &(impl Cancellation + ?Sized)) -> bool {
        c.is_cancelled()
    }

    #[test]
    fn every_kind_of_flag_answers() {
        let token = CancelToken::new();
        let clone = token.clone();
        assert!(!ask(&token));
        clone.cancel();
        assert!(ask(&token));
        let flag = Arc::new(AtomicBool::new(true));
        assert!(ask(&*flag));
        assert!(ask(&CancelToken::from(flag)));
        let closure: &dyn Fn() -> bool = &|| false;
        assert!(!ask(closure));
        assert!(!ask(&Never));
    }
}
