//! Findings under a launch nobody declared. A kernel opened with no `lark.toml` is checked for
//! every block size the hardware allows; a kernel written for 256 threads (`__shared__ float
//! s[256]; s[threadIdx.x] = …`) then goes out of bounds with 768 — a real behaviour of the code,
//! but not a bug of the kernel as its author launches it. So when the block is not declared (by
//! the interface, `.reqntid` or `__launch_bounds__` alone) and the check finds something, the
//! kernel is checked again at the common block sizes: a finding that also occurs at each of them
//! stays an error; one that does not is kept as a warning naming the launch that triggers it,
//! and the kernel is `uncertified` until the launch is declared.

use crate::engine::{check_kernel_guarded_in, finding_key, FindingKey, Focus, Options, Sources};
use crate::report::{Finding, FindingKind, KernelReport};
use crate::Solver;
use model::ops::Special;
use model::Kernel;
use spec::{Dim, KernelSpec};
use std::collections::BTreeSet;

/// The block sizes kernels are most often launched with: one-dimensional blocks, and square
/// or warp-wide tiles (and 256 threads in x) for kernels that read the y index. A warp per row
/// with four or eight warps (`dim3 block(32, WARPS_PER_CTA)`) is how serving kernels (vLLM's
/// top-k gating, TensorRT-LLM's) lay out rows; under `__launch_bounds__(N)` the warp tile of
/// `N` threads is tried as well.
const COMMON_BLOCKS: [u64; 3] = [64, 128, 256];
const COMMON_TILES: [[u64; 2]; 4] = [[16, 16], [32, 8], [32, 4], [8, 8]];

/// Re-checks `report`'s findings at the common block sizes and marks those that need the
/// assumed launch (see the module comment), within `opts.budget_ms` for all sizes together.
/// The findings in `settled` were judged already (by the scalar confirmation).
pub fn confirm(
    k: &Kernel,
    spec: Option<&KernelSpec>,
    src: &Sources,
    opts: &Options,
    solver: &mut Solver,
    report: &mut KernelReport,
    settled: &BTreeSet<FindingKey>,
) {
    let Some(clean_at) = clean_at_common_blocks(k, spec, src, opts, solver, &report.findings, settled) else { return };
    crate::trace::line(|| {
        let lines: Vec<String> = report.findings.iter().zip(&clean_at.clean).map(|(f, c)| format!("{:?} clean at {c:?}", f.lines())).collect();
        format!("launch confirmation (settled {settled:?}): {lines:?}")
    });
    for (f, at) in report.findings.iter_mut().zip(clean_at.clean) {
        if !at.is_empty() {
            mark_assumed_launch(f, &at);
        }
    }
    report.settle_verdict();
}

/// Marks `f` as found only under an undeclared launch: it does not occur at the common block
/// sizes `clean` (as `[x, y]`).
pub(crate) fn mark_assumed_launch(f: &mut Finding, clean: &[[u64; 2]]) {
    let [x, y, z] = f.launch.block;
    let sizes: Vec<String> = clean.iter().map(|[a, b]| if *b == 1 { a.to_string() } else { format!("{a}x{b}") }).collect();
    f.assumed_launch = Some(format!(
        "found with a block of [{x}, {y}, {z}] threads, which no interface declares; with {} threads per block there is none — declare the launch in lark.toml",
        sizes.join(" or ")
    ));
}

/// The common block sizes a confirmation tried, and for each finding (by index) those at which
/// a run decided its lines and did not find it, and whether some run found it.
pub(crate) struct CleanAt {
    pub tried: Vec<[u64; 2]>,
    pub clean: Vec<Vec<[u64; 2]>>,
    pub found: Vec<bool>,
}

impl CleanAt {
    /// Whether the scalar confirmation lets finding `n` go at the common blocks: a
    /// one-dimensional block's size is a tuning knob, so it must be gone at every size tried (an
    /// early return that diverges at 128 threads but not at 64 is a bug); a two-dimensional
    /// tile (`tiles`) is usually part of the design (a transpose's 32x8 tile is wrong at
    /// 16x16), so one tile where it does not occur is enough, as in the launch confirmation.
    pub fn lets_go(&self, n: usize, tiles: bool) -> bool {
        if tiles {
            !self.clean[n].is_empty()
        } else {
            self.clean[n].len() == self.tried.len()
        }
    }
}

/// Checks the kernel at the common block sizes, each run asking only about the lines of the
/// error `findings` not in `skip` (see [`Focus`]); `None` when the block is declared, there is
/// no such finding, or the kernel reads the z index (no common launch to compare with).
pub(crate) fn clean_at_common_blocks(
    k: &Kernel,
    spec: Option<&KernelSpec>,
    src: &Sources,
    opts: &Options,
    solver: &mut Solver,
    findings: &[Finding],
    skip: &BTreeSet<FindingKey>,
) -> Option<CleanAt> {
    let declared = spec.is_some_and(|s| s.block.is_some()) || k.reqntid.is_some();
    let candidates: Vec<usize> = (0..findings.len())
        .filter(|&n| findings[n].kind != FindingKind::Mismatch && !findings[n].is_warning() && !skip.contains(&finding_key(&findings[n])))
        .collect();
    if declared || candidates.is_empty() {
        return None;
    }
    let reads = BlockReads::of(k, &model::symbolic::lift(k));
    if reads.z {
        return None;
    }
    let sizes = common_sizes(k, reads);
    // Each block size has an equal share of the confirmation's budget (at least a second, so
    // the first sizes get more when the budget is short), and all end within it.
    let share_ms = (opts.budget_ms / sizes.len() as u64).max(1000);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(opts.budget_ms);
    // For each candidate finding, the common blocks at which a run decides its lines and does
    // not find it (a run that left those lines undecided says nothing about them). A finding
    // replayed with one of those blocks occurs there: no run needs to look again. Each run asks
    // only the questions that can name the lines of the findings still open (see [`Focus`]).
    let mut clean_at: Vec<Vec<[u64; 2]>> = vec![Vec::new(); findings.len()];
    let mut found_at_some = vec![false; findings.len()];
    for &[x, y] in &sizes {
        let open: Vec<usize> = candidates.iter().copied().filter(|&n| findings[n].launch.block.map(u64::from) != [x, y, 1]).collect();
        if open.is_empty() {
            continue;
        }
        let left_ms = deadline.saturating_duration_since(std::time::Instant::now()).as_millis() as u64;
        if left_ms == 0 {
            break;
        }
        let share = Options { budget_ms: share_ms.min(left_ms), ..opts.clone() };
        let focus =
            Focus { findings: open.iter().map(|&n| (findings[n].kind, findings[n].lines())).collect(), replay_all: false, undecided_settles_a_line: false };
        let mut s = spec.cloned().unwrap_or_default();
        s.block = Some([Dim::exact(x), Dim::exact(y), Dim::exact(1)]);
        let r = check_kernel_guarded_in(k, Some(&s), src, &share, solver, Some(&focus));
        crate::trace::recheck(&format!("launch re-check at {x}x{y}"), &r);
        // Each finding is judged by its own questions: another finding the run shows (a shared
        // line's race with a third line) says nothing about whether this one occurs.
        for &n in &open {
            let f = &findings[n];
            let lines = f.lines();
            let found = r.findings.iter().any(|g| g.kind == f.kind && g.lines() == lines);
            if !found && !r.leaves_undecided(&lines) {
                clean_at[n].push([x, y]);
            }
            found_at_some[n] |= found;
        }
    }
    Some(CleanAt { tried: sizes, clean: clean_at, found: found_at_some })
}

/// The common block sizes of kernel `k`, as `[x, y]` (see [`COMMON_BLOCKS`], [`COMMON_TILES`]),
/// within its `__launch_bounds__`.
pub(crate) fn common_sizes(k: &Kernel, reads: BlockReads) -> Vec<[u64; 2]> {
    let max = k.max_threads.unwrap_or(1024);
    let mut sizes: Vec<[u64; 2]> = if reads.y {
        // Kernels that read the y index are also launched with one-dimensional blocks (llama.cpp's
        // `blockIdx.x * blockDim.y + threadIdx.y` rows with `block_dims(1024, 1, 1)`).
        let warp_tile = k.max_threads.filter(|m| m % 32 == 0 && *m > 32).map(|m| [32, m / 32]);
        let mut tiles: Vec<[u64; 2]> = COMMON_TILES.iter().copied().chain([[256, 1]]).filter(|[x, y]| x * y <= max).collect();
        if let Some(t) = warp_tile.filter(|t| !tiles.contains(t)) {
            tiles.push(t);
        }
        tiles
    } else {
        COMMON_BLOCKS.iter().map(|&b| [b, 1]).filter(|[b, _]| *b <= max).collect()
    };
    if sizes.is_empty() {
        sizes.push([max, 1]);
    }
    sizes
}

/// Which block dimensions beyond x the kernel reads as dimensions: y (then two-dimensional
/// tiles are the common launches to compare with) and z (no common launch to compare with).
/// Reads inside the linear thread index and the thread count (cooperative groups'
/// `thread_rank()` and `size()`) do not count: they are the same in any block shape, and a
/// kernel that reads y and z only there indexes by `threadIdx.x`, for one-dimensional blocks
/// (see [`model::block_shape::dimensions_read_apart`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockReads {
    pub y: bool,
    pub z: bool,
}

impl BlockReads {
    pub fn of(k: &Kernel, lifted: &model::symbolic::Lifted) -> BlockReads {
        let apart = model::block_shape::dimensions_read_apart(lifted);
        BlockReads {
            y: (k.reads(Special::Tid(1)) || k.reads(Special::Ntid(1))) && apart[1],
            z: (k.reads(Special::Tid(2)) || k.reads(Special::Ntid(2))) && apart[2],
        }
    }
}
