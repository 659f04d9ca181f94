//! `LARK_TRACE=1`: what the engine spends its time on, one line per event on stderr (each SMT
//! query, each replay, each confirmation re-check). A debugging aid: it never changes a result.

use crate::report::KernelReport;
use std::sync::OnceLock;

/// Whether `LARK_TRACE` is set (read once: queries and replays ask for every event).
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("LARK_TRACE").is_some_and(|v| !v.is_empty() && v != "0"))
}

/// One line on stderr, when tracing, stamped with the seconds since the first traced event
/// (so a trace shows where a check's time went between its events) and the thread that wrote
/// it (the workers of a check interleave their lines).
pub(crate) fn line(text: impl FnOnce() -> String) {
    if enabled() {
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        let elapsed = START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64();
        let thread = format!("{:?}", std::thread::current().id());
        let thread = thread.trim_start_matches("ThreadId(").trim_end_matches(')');
        eprintln!("lark trace: [{elapsed:7.3} t{thread}] {}", text());
    }
}

/// The outcome of a confirmation's re-check `r`, described by `what`.
pub(crate) fn recheck(what: &str, r: &KernelReport) {
    line(|| {
        let errors: Vec<Vec<u32>> = r.findings.iter().filter(|f| !f.is_warning()).map(crate::report::Finding::lines).collect();
        let undecided: Vec<String> = r.uncertified.iter().map(|u| format!("{:?}", u.reason)).collect();
        format!("{what}: {:?}, errors at lines {errors:?}, undecided {undecided:?}", r.verdict)
    });
}
