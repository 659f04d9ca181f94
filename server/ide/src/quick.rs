//! The first look: a quick check of a kernel whose launch nobody declared, at one concrete
//! launch, so the editor has something to show within a second while the general check (every
//! launch the hardware allows, up to the kernel's whole budget) runs in the background.
//!
//! The launch is the one the author most likely makes: the block of the file's own launch site
//! (`<<<grid, block>>>`), else `__launch_bounds__(N)` read as N threads, else 256 threads (16x16
//! when the kernel reads the y index); a small grid (2 blocks along each axis the kernel reads).
//! Its findings are real at that launch (the interpreter replayed them), but only the general
//! check decides the verdict: they are shown as warnings that name the launch, never as errors,
//! and a first look never makes a kernel verified.

use check::{KernelReport, Options, Solver, Sources, Verdict};
use model::ops::Special;
use spec::{Dim, KernelSpec};

/// The first look's budget for one file: short enough that the first diagnostics of a typical
/// file arrive within a second. Its kernels share it (see [`kernel_budget_ms`]).
pub const FIRST_LOOK_BUDGET_MS: u64 = 700;
/// The least a kernel's first look is given however many kernels share the budget: a check at
/// a concrete launch that is not decided in this long is left to the general check.
const MIN_KERNEL_BUDGET_MS: u64 = 200;

/// The threads per block assumed when nothing in the sources says: the most common choice.
const COMMON_BLOCK: u64 = 256;
/// The tiles assumed for kernels that read the y index, by preference (the first that fits
/// under `__launch_bounds__`).
const COMMON_TILES: [[u64; 2]; 3] = [[16, 16], [16, 8], [8, 8]];
/// Blocks along each grid axis the kernel reads: two blocks show races between blocks, more
/// only cost time.
const SMALL_GRID: u64 = 2;

/// Where the launch of a first look came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchOrigin {
    /// The `<<<grid, block>>>` of a launch site in the `.cu` file.
    LaunchSite,
    /// `__launch_bounds__(N)`: N threads per block.
    LaunchBounds,
    /// Nothing in the sources: a common block size.
    Common,
}

/// The concrete launch a first look checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstLookLaunch {
    pub grid: [u64; 3],
    pub block: [u64; 3],
    pub origin: LaunchOrigin,
}

impl FirstLookLaunch {
    /// What a preliminary diagnostic adds to its message.
    pub fn message_suffix(&self) -> String {
        let dims = |d: &[u64; 3]| d.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        format!(" (at the launch LARK assumed for a first look: grid [{}] block [{}]; the full check is running)", dims(&self.grid), dims(&self.block))
    }
}

/// Whether the kernel's block is fixed by something the user wrote: an interface entry with a
/// `block` (not one read from a launch site, whose origin is the `.cu` file) or `.reqntid`.
/// Such kernels are checked at that block anyway, which is fast: they get no first look.
pub(crate) fn block_is_declared(k: &model::Kernel, spec: Option<&KernelSpec>) -> bool {
    let from_interface = spec.is_some_and(|s| s.block.is_some() && s.from_launch_site("block").is_none());
    from_interface || k.reqntid.is_some()
}

/// The launch a first look checks (see the module comment).
pub(crate) fn first_look_launch(k: &model::Kernel, spec: Option<&KernelSpec>) -> FirstLookLaunch {
    let exact = |d: &Option<[Dim; 3]>| d.as_ref().and_then(|d| Some([d[0].value()?, d[1].value()?, d[2].value()?]));
    let site_block = spec.and_then(|s| exact(&s.block));
    let site_grid = spec.and_then(|s| exact(&s.grid));
    let max = k.max_threads.filter(|n| (1..=1024).contains(n));
    let (block, origin) = match (site_block, max) {
        (Some(b), _) => (b, LaunchOrigin::LaunchSite),
        _ if k.reads(Special::Tid(1)) || k.reads(Special::Ntid(1)) => {
            let limit = max.unwrap_or(1024);
            let [x, y] = COMMON_TILES.iter().copied().find(|[x, y]| x * y <= limit).unwrap_or([limit, 1]);
            ([x, y, 1], if max.is_some() { LaunchOrigin::LaunchBounds } else { LaunchOrigin::Common })
        }
        (None, Some(n)) => ([n, 1, 1], LaunchOrigin::LaunchBounds),
        (None, None) => ([COMMON_BLOCK, 1, 1], LaunchOrigin::Common),
    };
    // A launch site's grid is usually sized by the data (`(n + 255) / 256`) and so not a number;
    // when it (or an interface's) is one, it is kept where it is small: more blocks only cost
    // time at a first look.
    let grid = std::array::from_fn(|d| {
        let read = k.reads(Special::Ctaid(d as u8)) || k.reads(Special::Nctaid(d as u8));
        match site_grid {
            Some(g) => g[d].min(SMALL_GRID),
            None if read => SMALL_GRID,
            None => 1,
        }
    });
    FirstLookLaunch { grid, block, origin }
}

/// A kernel's share of the file's first-look budget, when `kernels` kernels of the file are checked.
pub(crate) fn kernel_budget_ms(kernels: usize) -> u64 {
    (FIRST_LOOK_BUDGET_MS / kernels.max(1) as u64).max(MIN_KERNEL_BUDGET_MS)
}

/// Checks the kernel at its first-look launch within `budget_ms`. The report keeps
/// only what a first look can say: its findings (to be shown as preliminary warnings). What it
/// left undecided is dropped, since the general check decides it, and the verdict is never
/// `verified`.
pub(crate) fn first_look(
    k: &model::Kernel,
    spec: Option<&KernelSpec>,
    src: &Sources,
    opts: &Options,
    budget_ms: u64,
    solver: &mut Solver,
) -> (KernelReport, FirstLookLaunch) {
    let launch = first_look_launch(k, spec);
    let mut s = spec.cloned().unwrap_or_default();
    s.block = Some(launch.block.map(Dim::exact));
    s.grid = Some(launch.grid.map(Dim::exact));
    let quick = Options { budget_ms, timeout_ms: Some(opts.timeout_ms().min(budget_ms)), ..opts.clone() };
    let mut report = check::check_kernel_guarded(k, Some(&s), src, &quick, solver);
    report.uncertified.clear();
    if report.verdict != Verdict::Error {
        report.settle_verdict();
    }
    if report.verdict == Verdict::Verified {
        report.verdict = Verdict::Uncertified;
    }
    (report, launch)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel of PTX that reads the given special registers (`%tid.x`, `%ctaid.y`, ...), with
    /// `directives` after its parameter list (`.maxntid 128, 1, 1`).
    fn kernel(reads: &[&str], directives: &str) -> model::Kernel {
        let movs: String = reads.iter().enumerate().map(|(n, r)| format!("  mov.u32 %r{n}, {r};\n")).collect();
        let text = format!(
            ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{directives}\n{{\n  .reg .b32 %r<8>;\n{movs}  ret;\n}}\n"
        );
        let parsed = ptx::parse(&text);
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        model::Kernel::lower(&parsed.module, &parsed.module.functions[0]).unwrap()
    }

    fn launch(k: &model::Kernel, spec: Option<&KernelSpec>) -> (LaunchOrigin, [u64; 3], [u64; 3]) {
        let l = first_look_launch(k, spec);
        (l.origin, l.grid, l.block)
    }

    #[test]
    fn a_launch_site_gives_the_block_and_a_small_grid() {
        let iface = spec::inferred_interface("__global__ void k(float* p) {}\nvoid go(float* p) { k<<<64, 128>>>(p); }\n", "k.cu");
        let s = iface.kernel("k").expect("the launch site is read");
        let k = kernel(&["%tid.x", "%ctaid.x"], "");
        assert!(!block_is_declared(&k, Some(s)), "a launch site is not a declaration");
        assert_eq!(launch(&k, Some(s)), (LaunchOrigin::LaunchSite, [2, 1, 1], [128, 1, 1]));
    }

    #[test]
    fn launch_bounds_give_the_threads_per_block() {
        let k = kernel(&["%tid.x", "%ctaid.x"], ".maxntid 128, 1, 1");
        assert_eq!(launch(&k, None), (LaunchOrigin::LaunchBounds, [2, 1, 1], [128, 1, 1]));
        let tile = kernel(&["%tid.x", "%tid.y"], ".maxntid 128, 1, 1");
        assert_eq!(launch(&tile, None), (LaunchOrigin::LaunchBounds, [1, 1, 1], [16, 8, 1]));
    }

    #[test]
    fn a_kernel_reading_the_y_index_gets_a_square_tile() {
        let k = kernel(&["%tid.x", "%tid.y", "%ctaid.x", "%ctaid.y"], "");
        assert_eq!(launch(&k, None), (LaunchOrigin::Common, [2, 2, 1], [16, 16, 1]));
    }

    #[test]
    fn otherwise_256_threads_and_one_block_per_axis_never_read() {
        let k = kernel(&["%tid.x"], "");
        assert_eq!(launch(&k, None), (LaunchOrigin::Common, [1, 1, 1], [256, 1, 1]));
        let wide = kernel(&["%tid.x", "%nctaid.x"], "");
        assert_eq!(launch(&wide, None), (LaunchOrigin::Common, [2, 1, 1], [256, 1, 1]));
    }

    #[test]
    fn a_declared_block_or_reqntid_gets_no_first_look() {
        let declared = KernelSpec { block: Some([Dim::exact(64), Dim::exact(1), Dim::exact(1)]), ..KernelSpec::default() };
        assert!(block_is_declared(&kernel(&["%tid.x"], ""), Some(&declared)));
        assert!(block_is_declared(&kernel(&["%tid.x"], ".reqntid 64, 1, 1"), None));
        assert!(!block_is_declared(&kernel(&["%tid.x"], ""), Some(&KernelSpec::default())));
    }
}
