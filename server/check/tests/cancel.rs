//! Cancelling a check stops it within milliseconds, also while the solver is in the middle of
//! a hard query (the language server cancels the check of a superseded edit this way).

use check::{check_ptx, Context, Options, Solver, SolverKind};
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn a_cancelled_check_stops_mid_query() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/equiv");
    let ptx = std::fs::read_to_string(dir.join("geglu.ptx")).unwrap();
    let toml = dir.join("lark.toml");
    let iface = spec::parse_lark_toml(&toml.display().to_string(), &std::fs::read_to_string(&toml).unwrap()).unwrap();
    let cx = Context { interface: Some(&iface), cu_text: None, only: Some("geglu") };
    let mut solver = Solver::new();
    for kind in SolverKind::installed_noting_the_rest() {
        // geglu's race query takes the solvers seconds (two blocks' rows `t * d + i` with a
        // symbolic `d`); without a cancellation it would run to the minute-long limit.
        let opts = Options { timeout_ms: Some(60_000), budget_ms: 120_000, solver: kind, ..Options::default() };
        let cancel = opts.cancel.clone();
        let started = Instant::now();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            cancel.cancel();
        });
        let report = check_ptx("geglu.ptx", &ptx, &cx, &opts, &mut solver);
        let took = started.elapsed();
        canceller.join().unwrap();
        assert_eq!(report.kernels.len(), 1);
        let k = &report.kernels[0];
        assert!(k.stats.queries >= 1, "{kind}: the check reached the solver: {:?}", k.stats);
        assert!(took < Duration::from_millis(1300), "{kind}: the check stopped {took:?} after it started, 300 ms of it before the cancellation");
    }
}
