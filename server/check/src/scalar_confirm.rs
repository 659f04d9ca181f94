//! Findings under scalar values nobody declared. A kernel opened with no `lark.toml` is checked
//! for every value of its integer parameters, and some findings need values its author never
//! passes: `N = 0` columns (every block then writes row 0), a row stride smaller than the row
//! (`input_stride < hidden_size`: rows overlap), 256 experts in a kernel whose shared arrays hold
//! 64. Those are real behaviours of the code, but not bugs of the kernel as it is called.
//!
//! So a finding that still names the verdict after [`crate::launch_confirm`], and whose
//! counterexample sets scalar parameters the interface leaves open, is checked again with those
//! parameters at one ordinary value ([`ORDINARY`]), on an undeclared grid of [`ORDINARY_GRID`]
//! blocks along each dimension the kernel reads: several blocks, warps and loop iterations, and
//! all sizes equal (no degenerate or overlapping shape). A finding that does not
//! occur there is kept as a warning naming the values that trigger it, and the kernel is
//! `uncertified` until the scalars are declared; one that does occur stays an error. A missing
//! barrier or a wrong index shows at ordinary sizes too, so real bugs keep their error.

use crate::engine::{check_kernel_guarded_in, finding_lines, Focus, Options, Sources};
use crate::report::{Finding, FindingKind, KernelReport, Verdict};
use crate::Solver;
use model::ops::Special;
use model::symbolic::Base;
use model::Kernel;
use spec::{Dim, KernelSpec, ParamSpec, Scalar};
use std::collections::{BTreeMap, BTreeSet};

/// The value every open scalar takes in the re-check: a size larger than a warp and smaller than
/// most blocks, so that several warps take part and loops over it can run more than once.
pub const ORDINARY: i128 = 64;

/// The blocks along each grid dimension the kernel reads, when the grid is open: two blocks are
/// enough for any race between blocks, and few enough that a kernel whose grid is sized to the
/// problem (a transpose launched with one block per 32x32 tile, no bounds check) has no block
/// past the problem's end.
pub const ORDINARY_GRID: u64 = 2;

/// Re-checks the findings that need undeclared scalar values (see the module comment) and marks
/// them, within `opts.budget_ms`.
pub fn confirm(k: &Kernel, spec: Option<&KernelSpec>, src: &Sources, opts: &Options, solver: &mut Solver, report: &mut KernelReport) {
    let open = open_scalars(k, spec, src);
    let candidates: Vec<usize> = (0..report.findings.len())
        .filter(|&n| {
            let f = &report.findings[n];
            f.kind != FindingKind::Mismatch && !f.is_warning() && f.witness.params.keys().any(|i| open.contains(i))
        })
        .collect();
    if candidates.is_empty() {
        return;
    }
    let pinned: BTreeSet<u32> = candidates.iter().flat_map(|&n| report.findings[n].witness.params.keys().copied()).filter(|i| open.contains(i)).collect();
    let mut s = spec.cloned().unwrap_or_default();
    for &i in &pinned {
        s.params.insert(format!("param_{i}"), ParamSpec::Scalar { value: Some(Scalar::Int(ORDINARY)), range: None });
    }
    // Blocks past an ordinary problem's last row are part of the ordinary launch too: a kernel
    // that takes one row per block (`t = blockIdx.x` over `T` rows) has rows overlap on a grid
    // larger than `T`, a relation between launch and scalars that only the caller keeps.
    let grid_pinned = s.grid.is_none();
    if grid_pinned {
        s.grid = Some([0u8, 1, 2].map(|d| Dim::exact(if k.reads(Special::Ctaid(d)) || k.reads(Special::Nctaid(d)) { ORDINARY_GRID } else { 1 })));
    }
    let focus = Focus { findings: candidates.iter().map(|&n| (report.findings[n].kind, finding_lines(&report.findings[n]))).collect(), replay_all: true };
    let started = std::time::Instant::now();
    let mut r = check_kernel_guarded_in(k, Some(&s), src, opts, solver, Some(&focus));
    if r.verdict == Verdict::Error {
        return;
    }
    // An ordinary setting has an ordinary block too: what the re-check finds only at a block
    // nobody declared (a transpose's tile written by 96 threads per row) is not found there.
    let left = opts.budget_ms.saturating_sub(started.elapsed().as_millis() as u64).max(opts.budget_ms / 4);
    crate::launch_confirm::confirm(k, Some(&s), src, &Options { budget_ms: left, ..opts.clone() }, solver, &mut r);
    let bind = crate::bind::Binding::new(k, None, src.param_names.as_deref());
    let names: BTreeMap<u32, String> = pinned.iter().map(|&i| (i, bind.name(i).to_string())).collect();
    for n in candidates {
        let lines = finding_lines(&report.findings[n]);
        let same = |g: &&Finding| g.kind == report.findings[n].kind && finding_lines(g) == lines;
        let found = r.findings.iter().filter(same).any(|g| !g.is_warning());
        let at_common_blocks = r.findings.iter().any(|g| same(&g) && g.assumed_launch.is_some());
        let undecided = r.uncertified.iter().any(|u| u.location.iter().chain(&u.related).any(|l| lines.contains(&l.line)));
        if found || undecided {
            continue;
        }
        let f = &mut report.findings[n];
        let set: Vec<&String> = f.witness.params.keys().filter_map(|i| names.get(i)).collect();
        let values: Vec<String> = set.iter().map(|name| format!("{name}={}", f.launch.params.get(*name).copied().unwrap_or_default())).collect();
        let ordinary: Vec<String> = set.iter().map(|name| name.to_string()).collect();
        f.assumed_scalars = Some(format!(
            "found with {}, which no interface declares; with {} = {ORDINARY}{}{} there is none — declare {} in lark.toml if {} can occur",
            values.join(", "),
            ordinary.join(" = "),
            if grid_pinned { format!(" on a grid of {ORDINARY_GRID} blocks along each dimension the kernel reads") } else { String::new() },
            if at_common_blocks { " and the common block sizes" } else { "" },
            if set.len() == 1 { "its value or range" } else { "their values or ranges" },
            if set.len() == 1 { "such a value" } else { "such values" },
        ));
    }
    report.settle_verdict();
}

/// The integer parameters the interface gives neither a value nor a range, that are not buffers.
fn open_scalars(k: &Kernel, spec: Option<&KernelSpec>, src: &Sources) -> BTreeSet<u32> {
    let lifted = model::symbolic::lift(k);
    let buffers: BTreeSet<u32> = lifted
        .accesses
        .iter()
        .filter_map(|a| match a.base {
            Some(Base::Param(p)) => Some(p),
            _ => None,
        })
        .collect();
    let bind = crate::bind::Binding::new(k, spec, src.param_names.as_deref());
    (0..k.params.len() as u32)
        .filter(|&i| {
            let p = &k.params[i as usize];
            let integer = !p.ty.starts_with(".f") && p.bits > 0 && p.bits <= 64 && p.bytes <= 8;
            let declared = matches!(bind.params[i as usize], Some(ParamSpec::Scalar { value: Some(_), .. } | ParamSpec::Scalar { range: Some(_), .. }) | Some(ParamSpec::Buffer { .. }));
            integer && !declared && !buffers.contains(&i)
        })
        .collect()
}
