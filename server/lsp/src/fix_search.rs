//! Code-action fix searches that outlive the request that started them.
//!
//! Finding a barrier fix re-checks the kernel at each candidate place, which can take far longer
//! than a code-action request may wait (it answers within a second). So the search runs in the
//! background: a request waits for it until its own deadline and otherwise answers with nothing;
//! the editor's next request for the same place (they come with every cursor move) joins the
//! same search or finds its result. One search per document: asking about another place or
//! version cancels the previous one, and so do edits and closing the document (the analysis
//! host cancels the snapshot's token).

use crate::pool::Pool;
use crate::state::lock;
use ide::{AnalysisHost, CancelToken, FileAnalysis, Fix};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// The fixes of a finished search.
pub type Found = Arc<Vec<Fix>>;

struct Search {
    version: i32,
    range: Range<usize>,
    cancel: CancelToken,
    done: watch::Receiver<Option<Found>>,
}

#[derive(Default)]
pub struct FixSearches {
    by_doc: Mutex<HashMap<String, Search>>,
}

impl FixSearches {
    /// The search for `range` of this analysis: the one under way or finished, else a new one
    /// on `pool` (cancelling the document's previous search).
    pub fn start(&self, key: &str, host: &Mutex<AnalysisHost>, pool: &Pool, fa: &Arc<FileAnalysis>, range: Range<usize>) -> watch::Receiver<Option<Found>> {
        let mut by_doc = lock(&self.by_doc);
        if let Some(s) = by_doc.get(key) {
            if s.version == fa.version && s.range == range && !s.cancel.is_cancelled() {
                return s.done.clone();
            }
            s.cancel.cancel();
        }
        let cancel = CancelToken::new();
        let (tx, done) = watch::channel(None);
        let snapshot = lock(host).snapshot();
        let version = fa.version;
        let (fa, r, token) = (fa.clone(), range.clone(), cancel.clone());
        pool.spawn(move || {
            let fixes = snapshot.fixes(&fa, r, &token);
            // A cancelled search may have stopped early: its fixes are not the whole answer.
            if !token.is_cancelled() {
                tx.send_replace(Some(Arc::new(fixes)));
            }
        });
        by_doc.insert(key.to_string(), Search { version, range, cancel, done: done.clone() });
        done
    }

    /// Stops the document's search (it was closed).
    pub fn cancel(&self, key: &str) {
        if let Some(s) = lock(&self.by_doc).remove(key) {
            s.cancel.cancel();
        }
    }
}
