//! `LARK_SMT_DUMP=dir`: every query written to `dir` as a standalone `.smt2` script, to re-run
//! by hand (`z3 q123-00001.smt2`, `cvc5 …`, `yices-smt2 …`) or to turn into a test fixture. A
//! query that timed out is renamed `q123-00001.timeout.smt2`, so the hard ones are easy to find.

use crate::query::Query;
use crate::solver::SolverKind;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub const DUMP_ENV: &str = "LARK_SMT_DUMP";

static NEXT: AtomicU64 = AtomicU64::new(1);

/// Writes `query` when `LARK_SMT_DUMP` is set; returns the file written. Failing to write is
/// not the query's problem, so it is ignored (a debugging aid must not change results).
pub(crate) fn write(query: &Query, kind: SolverKind, timeout: Duration) -> Option<PathBuf> {
    let dir = std::env::var_os(DUMP_ENV).filter(|d| !d.is_empty())?;
    // The process id keeps runs that share a directory apart.
    let path = PathBuf::from(dir).join(format!("q{}-{:05}.smt2", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    let text = format!("; LARK query for {kind}, timeout {} ms\n{}", timeout.as_millis(), query.to_smtlib());
    std::fs::write(&path, text).ok()?;
    Some(path)
}

/// Renames a dumped query that timed out to `….timeout.smt2` (ignored when nothing was dumped).
pub(crate) fn mark_timed_out(dumped: Option<PathBuf>) {
    if let Some(path) = dumped {
        let _ = std::fs::rename(&path, path.with_extension("").with_extension("timeout.smt2"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_that_timed_out_is_renamed_beside_the_others() {
        let dir = std::env::temp_dir().join(format!("lark-dump-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("q1-00007.smt2");
        std::fs::write(&path, "(check-sat)\n").unwrap();
        mark_timed_out(Some(path.clone()));
        let renamed = dir.join("q1-00007.timeout.smt2");
        assert!(!path.exists() && renamed.exists(), "{:?}", std::fs::read_dir(&dir).unwrap().collect::<Vec<_>>());
        assert_eq!(std::fs::read_to_string(&renamed).unwrap(), "(check-sat)\n", "the query is kept, not lost");
        mark_timed_out(None);
        std::fs::remove_dir_all(&dir).ok();
    }
}
