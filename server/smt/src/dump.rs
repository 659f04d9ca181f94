//! `LARK_SMT_DUMP=dir`: every query written to `dir` as a standalone `.smt2` script, to re-run
//! by hand (`z3 q123-00001.smt2`, `cvc5 q123-00001.smt2`) or to turn into a test fixture. A
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

/// Renames a dumped query that timed out to `…-timeout.smt2` (ignored when nothing was dumped).
pub(crate) fn mark_timed_out(dumped: Option<PathBuf>) {
    if let Some(path) = dumped {
        let _ = std::fs::rename(&path, path.with_extension("").with_extension("timeout.smt2"));
    }
}
