//! The scope of a check. A kernel whose interface lists the shapes its reference is checked at
//! (`[[kernel.X.reference.shapes]]`) is checked for exactly those shapes: races, divergence and
//! bounds at each shape's concrete launch (decided exactly by enumeration, in milliseconds),
//! like the equivalence. The report says so in a note; other values within the declared ranges
//! are not claimed. Every other kernel is checked for its whole interface.

use crate::engine::{check_kernel_guarded, Options, Sources};
use crate::report::{KernelReport, Note, Reason, Uncertified};
use crate::smt::Solver;
use model::Kernel;
use spec::KernelSpec;

/// The shapes a spec restricts its checks to, if any.
pub fn listed_shapes(spec: Option<&KernelSpec>) -> Option<&[std::collections::BTreeMap<String, i128>]> {
    let shapes = &spec?.reference.as_ref()?.shapes;
    (!shapes.is_empty()).then_some(shapes.as_slice())
}

/// `check_kernel_guarded` over the kernel's scope: its listed shapes, or its whole interface.
pub fn check_kernel_scoped(k: &Kernel, spec: Option<&KernelSpec>, src: &Sources, opts: &Options, solver: &mut Solver) -> KernelReport {
    crate::trace::line(|| format!("checking {}", k.name));
    let Some(shapes) = listed_shapes(spec) else {
        let started = std::time::Instant::now();
        let mut report = check_kernel_guarded(k, spec, src, opts, solver);
        crate::trace::recheck("check", &report);
        // Each confirmation spends what the check left of the kernel's budget, and at least a
        // quarter of it (the findings of a check that used it all are still confirmed). The
        // scalar confirmation goes first: its re-checks pin the open scalars, so they are
        // cheaper than the launch confirmation's, which keep them open, and a finding that
        // needs undeclared scalars shows at the common blocks too while they stay open (a row
        // stride of 0 overlaps rows at any block). It judges the findings whose counterexamples
        // need such values, except those found at a block that is not common and gone at
        // ordinary values (launch or scalars? the launch confirmation asks first); the launch
        // confirmation takes the rest, and what it leaves an error goes back to the scalars.
        // All of them end within a quarter of the budget past it: three passes with a quarter
        // each took llm.c's layernorm 27 s at a 20 s budget.
        let budget = |started: std::time::Instant| {
            let spent = started.elapsed().as_millis() as u64;
            let grace_left = (opts.budget_ms + opts.budget_ms / 4).saturating_sub(spent);
            Options { budget_ms: opts.budget_ms.saturating_sub(spent).max(opts.budget_ms / 4).min(grace_left).max(1), ..opts.clone() }
        };
        use crate::scalar_confirm::Pass;
        let none = std::collections::BTreeSet::new();
        let first = crate::scalar_confirm::confirm(k, spec, src, &budget(started), solver, &mut report, &none, Pass::BeforeLaunch);
        crate::launch_confirm::confirm(k, spec, src, &budget(started), solver, &mut report, &first.settled);
        let after = Pass::AfterLaunch { vanished: &first.vanished };
        crate::scalar_confirm::confirm(k, spec, src, &budget(started), solver, &mut report, &first.settled, after);
        return report;
    };
    let spec = spec.expect("listed shapes come from a spec");
    let mut merged: Option<KernelReport> = None;
    let mut names = Vec::new();
    for shape in shapes {
        let name = crate::render::shape(shape);
        let report = match spec.resolve(shape) {
            Ok(resolved) => check_kernel_guarded(k, Some(&resolved), src, opts, solver),
            Err(e) => {
                let mut r = KernelReport::error(&k.name, Reason::ShapeNotChecked { shape: name.clone(), why: e.to_string() }, 0.0);
                r.settle_verdict_keep_error();
                r
            }
        };
        names.push(name);
        merged = Some(match merged {
            None => report,
            Some(mut m) => {
                merge_into(&mut m, report);
                m
            }
        });
    }
    let mut report = merged.unwrap_or_else(|| check_kernel_guarded(k, Some(spec), src, opts, solver));
    report.notes.push(Note::CheckedShapes { shapes: names });
    report.settle_verdict();
    report
}

fn merge_into(m: &mut KernelReport, r: KernelReport) {
    for f in r.findings {
        let lines = |f: &crate::report::Finding| f.accesses.iter().map(|a| a.location.line).chain(f.barrier.iter().map(|b| b.line)).collect::<Vec<_>>();
        if !m.findings.iter().any(|g| g.kind == f.kind && lines(g) == lines(&f)) {
            m.findings.push(f);
        }
    }
    for u in r.uncertified {
        if !m.uncertified.iter().any(|v| v.reason == u.reason && v.location == u.location) {
            m.uncertified.push(u);
        }
    }
    for n in r.notes {
        if !m.notes.contains(&n) {
            m.notes.push(n);
        }
    }
    m.stats.millis += r.stats.millis;
    m.stats.queries += r.stats.queries;
    m.stats.enumerated += r.stats.enumerated;
    m.stats.solver_millis += r.stats.solver_millis;
    m.stats.replay_millis += r.stats.replay_millis;
    let _: Option<Uncertified> = None;
}
