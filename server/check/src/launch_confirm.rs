//! Findings under a launch nobody declared. A kernel opened with no `lark.toml` is checked for
//! every block size the hardware allows; a kernel written for 256 threads (`__shared__ float
//! s[256]; s[threadIdx.x] = …`) then goes out of bounds with 768 — a real behaviour of the code,
//! but not a bug of the kernel as its author launches it. So when the block is not declared (by
//! the interface, `.reqntid` or `__launch_bounds__` alone) and the check finds something, the
//! kernel is checked again at the common block sizes: a finding that also occurs at each of them
//! stays an error; one that does not is kept as a warning naming the launch that triggers it,
//! and the kernel is `uncertified` until the launch is declared.

use crate::engine::{check_kernel_guarded, Options, Sources};
use crate::report::{FindingKind, KernelReport, Verdict};
use crate::Solver;
use model::ops::{Operand, Special};
use model::Kernel;
use spec::{Dim, KernelSpec};

/// The block sizes kernels are most often launched with (one-dimensional blocks).
const COMMON_BLOCKS: [u64; 3] = [64, 128, 256];

/// Re-checks `report`'s findings at the common block sizes and marks those that need the
/// assumed launch (see the module comment).
pub fn confirm(k: &Kernel, spec: Option<&KernelSpec>, src: &Sources, opts: &Options, solver: &mut Solver, report: &mut KernelReport) {
    let declared = spec.is_some_and(|s| s.block.is_some()) || k.reqntid.is_some();
    let kinds: Vec<FindingKind> = report.findings.iter().filter(|f| f.kind != FindingKind::Mismatch && f.assumed_launch.is_none()).map(|f| f.kind).collect();
    if declared || kinds.is_empty() || reads_more_than_x(k) {
        return;
    }
    let max = k.max_threads.unwrap_or(1024);
    let mut sizes: Vec<u64> = COMMON_BLOCKS.iter().copied().filter(|b| *b <= max).collect();
    if sizes.is_empty() {
        sizes.push(max);
    }
    // Each confirmation has a share of the kernel's budget.
    let share = Options { budget_ms: (opts.budget_ms / (sizes.len() as u64 + 1)).max(1000), ..opts.clone() };
    // For each kind found, the common block sizes at which a conclusive run does not find it.
    let mut clean_at: Vec<(FindingKind, Vec<u64>)> = Vec::new();
    for &b in &sizes {
        let mut s = spec.cloned().unwrap_or_default();
        s.block = Some([Dim::exact(b), Dim::exact(1), Dim::exact(1)]);
        let r = check_kernel_guarded(k, Some(&s), src, &share, solver);
        // Only a conclusive run clears a kind: one that ran out of time says nothing.
        if r.verdict == Verdict::Error || !r.uncertified.is_empty() {
            continue;
        }
        for kind in &kinds {
            if !r.findings.iter().any(|f| f.kind == *kind) {
                match clean_at.iter_mut().find(|(k2, _)| k2 == kind) {
                    Some((_, at)) if !at.contains(&b) => at.push(b),
                    Some(_) => {}
                    None => clean_at.push((*kind, vec![b])),
                }
            }
        }
    }
    for f in report.findings.iter_mut() {
        if let Some((_, at)) = clean_at.iter().find(|(kind, _)| *kind == f.kind) {
            let [x, y, z] = f.launch.block;
            let sizes: Vec<String> = at.iter().map(u64::to_string).collect();
            f.assumed_launch = Some(format!(
                "found with a block of [{x}, {y}, {z}] threads, which no interface declares; with {} threads per block there is none — declare the launch in lark.toml",
                sizes.join(" or ")
            ));
        }
    }
    report.settle_verdict();
}

/// Whether the kernel reads the y or z thread index or block size (then one-dimensional
/// blocks are not the common launches to compare with).
fn reads_more_than_x(k: &Kernel) -> bool {
    k.insts().flat_map(|(_, _, i)| i.op.operands()).any(|o| matches!(o, Operand::Special(Special::Tid(1 | 2) | Special::Ntid(1 | 2))))
}
