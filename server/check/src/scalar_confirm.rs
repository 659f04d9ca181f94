//! Findings under scalar values nobody declared. A kernel opened with no `lark.toml` is checked
//! for every value of its integer parameters, and some findings need values its author never
//! passes: `N = 0` columns (every block then writes row 0), a row stride smaller than the row
//! (`input_stride < hidden_size`: rows overlap), a grid with more blocks than the `T` rows it
//! was sized for. Those are real behaviours of the code, but not bugs of the kernel as it is
//! called. (A capacity the code does not check, such as 256 experts in shared arrays for 64, is
//! found at ordinary values too and stays an error.)
//!
//! So a finding that still names the verdict after [`crate::launch_confirm`], and whose
//! counterexample sets scalar parameters the interface leaves open (or fields of a struct passed
//! by value that it leaves undeclared), is checked again with every such parameter and field at
//! one ordinary value ([`ORDINARY`]), on an undeclared grid of [`ORDINARY_GRID`]
//! blocks along each dimension the kernel reads: several blocks, warps and loop iterations, and
//! all sizes equal (no degenerate or overlapping shape). A finding that does not
//! occur there is kept as a warning naming the values that trigger it, and the kernel is
//! `uncertified` until the scalars are declared; one that does occur stays an error, and one
//! whose lines no re-check decides there in time is a warning that says so. A missing
//! barrier or a wrong index shows at ordinary sizes too, so real bugs keep their error.

use crate::engine::{check_kernel_guarded_in, finding_key, FindingKey, Focus, Options, Sources};
use crate::launch_confirm::clean_at_common_blocks;
use crate::report::{Finding, FindingKind, KernelReport, LaunchReport};
use crate::row_strides::{ordinary_strides, ParamSlot};
use crate::witness::ParamField;
use crate::Solver;
use model::ops::Special;
use model::symbolic::Lifted;
use model::Kernel;
use spec::{Dim, KernelSpec, ParamSpec, Scalar};
use std::collections::{BTreeMap, BTreeSet};

/// The value every open scalar takes in the re-check: whole warps (a kernel that assumes its
/// sizes are a multiple of 32 is ordinary), but not a multiple of the common block sizes (a
/// partial last block, where an early `return` before a barrier diverges, still shows), and
/// more than one tile of 32 or 64 (a barrier missing between two tiles still shows). Measured:
/// 256 hid two real early-return bugs of `tests/real/bugs` (every block full), 64 none.
pub const ORDINARY: i128 = 96;

/// The blocks along each grid dimension the kernel reads, when the grid is open: two blocks are
/// enough for any race between blocks, and few enough that a kernel whose grid is sized to the
/// problem (a transpose launched with one block per 32x32 tile, no bounds check) has no block
/// past the problem's end.
pub const ORDINARY_GRID: u64 = 2;

/// Which of the two scalar confirmations runs (see `scope`): the one before the launch
/// confirmation defers findings found at uncommon blocks to it; the one after it judges what
/// the launch confirmation left an error, reusing what the first found.
pub enum Pass<'a> {
    BeforeLaunch,
    /// `vanished`: findings the first pass saw vanish at ordinary values (and deferred).
    AfterLaunch {
        vanished: &'a BTreeMap<FindingKey, bool>,
    },
}

/// What a scalar confirmation judged: the findings it settled (the launch confirmation leaves
/// them alone), and those it saw vanish at ordinary values but deferred to the launch
/// confirmation (found at an uncommon block), each with whether only the common blocks showed
/// it gone (the re-check with the launch open left it undecided).
pub struct Judged {
    pub settled: BTreeSet<FindingKey>,
    pub vanished: BTreeMap<FindingKey, bool>,
}

/// Re-checks the findings that need undeclared scalar values (see the module comment), except
/// those in `skip`, and marks them, within `opts.budget_ms`. One that does occur at ordinary
/// values, but only at a block nobody declares, is replaced by the re-check's finding and marked
/// as needing that launch. Before the launch confirmation, one that vanishes at ordinary values
/// but was found at a block that is not common is left to it (see below); after it, one the
/// first pass saw vanish is marked without a second re-check (the question would be the same).
#[allow(clippy::too_many_arguments)]
pub fn confirm(
    k: &Kernel,
    spec: Option<&KernelSpec>,
    src: &Sources,
    opts: &Options,
    solver: &mut Solver,
    report: &mut KernelReport,
    skip: &BTreeSet<FindingKey>,
    pass: Pass,
) -> Judged {
    let lifted = model::symbolic::lift(k);
    let declared = crate::bind::Binding::new(k, spec, src.param_names.as_deref());
    let open = open_scalars(k, &lifted, &declared);
    let pointers = lifted.pointer_fields();
    let needs = |f: &Finding| open_values(k, &open, &pointers, &declared, f);
    // A write-write race tolerated as benign (both stores wrote one value in every replay) is
    // a candidate too: its replays ran at its counterexample's values, and at undeclared ones
    // the sameness can be the degenerate shape's (ggml's get_rows with every row stride 0:
    // source rows coincide as well as destination rows), while other undeclared values make
    // the stores differ. It is tolerated only where it is benign at ordinary values.
    let candidates: Vec<usize> = (0..report.findings.len())
        .filter(|&n| {
            let f = &report.findings[n];
            f.kind != FindingKind::Mismatch && !f.needs_undeclared_facts() && !skip.contains(&finding_key(f)) && !needs(f).is_empty()
        })
        .collect();
    let mut judged = Judged { settled: candidates.iter().map(|&n| finding_key(&report.findings[n])).collect(), vanished: BTreeMap::new() };
    let mut bind = crate::bind::Binding::new(k, None, src.param_names.as_deref());
    bind.field_names = src.field_names.clone();
    let grid_pinned = spec.is_none_or(|s| s.grid.is_none());
    // Every open value is ordinary in the re-check, not only those the findings' witnesses
    // name: a witness sets what its own query needed, and another open value (a mask's row
    // stride next to the row length the witness set) can make the same lines fail for a
    // reason of its own.
    let pinned: BTreeSet<OpenValue> = open.iter().map(|&i| OpenValue::Scalar(i)).chain(open_fields(k, &lifted, &declared)).collect();
    // Only a kernel with candidates is re-checked or marked.
    let strides = if candidates.is_empty() { BTreeMap::new() } else { ordinary_strides(&lifted, &slots(&pinned)) };
    let reads = crate::launch_confirm::BlockReads::of(k, &lifted);
    let sizes = crate::launch_confirm::common_sizes(k, reads);
    let ordinary_grid = |d: u8| if k.reads(Special::Ctaid(d)) || k.reads(Special::Nctaid(d)) { ORDINARY_GRID } else { 1 };
    // A finding whose (replayed) counterexample already has every open value at its ordinary
    // value, on the ordinary grid, at a common one-dimensional block, occurs at ordinary values:
    // it stays an error, and needs no re-check (the solver's ordinary probe finds such
    // counterexamples first where the general question is hard, see `Ctx::run_witness`; the
    // re-checks of those questions ran out of time or only decided them without a replay, and
    // the finding was shown as "not decided" at the very values it was found with). A tile
    // (a kernel that reads the y index) keeps the re-checks: one clean tile lets it go.
    // Every open value the kernel reads must be set (one the counterexample leaves unset was
    // replayed with a value of the replay's choosing).
    let read: Vec<OpenValue> =
        pinned.iter().copied().filter(|v| lifted.exprs.find_var(model::expr::Sym::Param { index: v.slot().0, offset: v.slot().1 }).is_some()).collect();
    let at_ordinary_values = |f: &Finding| {
        let [x, y, z] = f.launch.block.map(u64::from);
        let grid_ordinary = !grid_pinned || (0..3).all(|d| u64::from(f.launch.grid[d as usize]) == ordinary_grid(d));
        let set = needs(f);
        !reads.y
            && z == 1
            && sizes.contains(&[x, y])
            && grid_ordinary
            && read.iter().all(|v| set.iter().any(|(w, _)| w == v))
            && set.iter().all(|&(v, value)| i128::from(value) == strides.get(&v.slot()).copied().unwrap_or(ORDINARY))
    };
    let candidates: Vec<usize> = candidates.into_iter().filter(|&n| !at_ordinary_values(&report.findings[n])).collect();
    let mark = |f: &mut Finding, seen: Seen| mark_assumed_scalars(f, &needs(f), &strides, &bind, grid_pinned, seen);
    // After the launch confirmation, what the first pass saw vanish is marked as it found.
    let (defer_launches, candidates) = match pass {
        Pass::BeforeLaunch => (true, candidates),
        Pass::AfterLaunch { vanished } => {
            let mut rest = Vec::new();
            for n in candidates {
                match vanished.get(&finding_key(&report.findings[n])) {
                    Some(&only_at_common_blocks) => mark(&mut report.findings[n], Seen::Gone { at_common_blocks: only_at_common_blocks }),
                    None => rest.push(n),
                }
            }
            (false, rest)
        }
    };
    if candidates.is_empty() {
        report.settle_verdict();
        return judged;
    }
    // A finding whose counterexample has a block that is not a common one may need that launch
    // rather than its scalars: an ordinary size can hide a launch bug (with n = 96 the threads
    // past 96 of a 768-thread block return early, and a tile of 256 no longer overflows), and
    // one that a re-check here does not clear may still be cleared at the common blocks with the
    // scalars open. Unless it is let go here, it is the launch confirmation's question; what is
    // still an error after it comes back here.
    let uncommon: BTreeSet<FindingKey> = candidates
        .iter()
        .copied()
        .filter(|&n| {
            let [x, y, z] = report.findings[n].launch.block;
            defer_launches && (z != 1 || !sizes.contains(&[u64::from(x), u64::from(y)]))
        })
        .map(|n| finding_key(&report.findings[n]))
        .collect();
    let ordinary = |v: OpenValue| strides.get(&v.slot()).copied().unwrap_or(ORDINARY);
    let mut s = spec.cloned().unwrap_or_default();
    let mut pinned_fields = Vec::new();
    for v in &pinned {
        match *v {
            OpenValue::Scalar(i) => {
                s.params.insert(format!("param_{i}"), ParamSpec::Scalar { value: Some(Scalar::Int(ordinary(*v))), range: None });
            }
            OpenValue::Field(param, offset) => pinned_fields.push(ParamField { param, offset, value: ordinary(*v) as u64 }),
        }
    }
    // Blocks past an ordinary problem's last row are part of the ordinary launch too: a kernel
    // that takes one row per block (`t = blockIdx.x` over `T` rows) has rows overlap on a grid
    // larger than `T`, a relation between launch and scalars that only the caller keeps.
    if grid_pinned {
        s.grid = Some([0u8, 1, 2].map(|d| Dim::exact(ordinary_grid(d))));
    }
    let opts = Options { pinned_fields, ..opts.clone() };
    // A line it leaves undecided goes to the common blocks anyway, so its other pairs are not
    // asked (vLLM's rotary embedding: a second round of 0.5 s timeouts on each of two lines).
    let focus = Focus {
        findings: candidates.iter().map(|&n| (report.findings[n].kind, report.findings[n].lines())).collect(),
        replay_all: true,
        undecided_settles_a_line: true,
    };
    let started = std::time::Instant::now();
    // With the launch still open, a re-check whose rows are far apart can spend the whole
    // budget proving them apart (vLLM's rotary embedding: 19 s, then a second at each common
    // block); a finding there is found quickly, and what it leaves undecided is asked again at
    // the common blocks below, where everything is concrete. So it gets an eighth (a quarter
    // still ran out on the rotary embedding, 4.7 s for nothing it kept), and half the time per
    // query: a witness it finds comes quickly, and a question that needs more is decided at
    // the common blocks in milliseconds (ggml's rope: an `unsat` of 1.7 s with the launch
    // open, 2.0 s -> 1.2 s in all). A sixteenth of the budget cost llm.c's tiled matmul its
    // diagnosis (a finding at a 256-thread block read as one of its scalars).
    let open_launch = Options { budget_ms: (opts.budget_ms / 8).max(1), timeout_ms: Some((opts.timeout_ms() / 2).max(1)), ..opts.clone() };
    let r = check_kernel_guarded_in(k, Some(&s), src, &open_launch, solver, Some(&focus));
    crate::trace::recheck("scalar re-check at ordinary values", &r);
    // An ordinary setting has an ordinary block too: what the re-check finds only at blocks
    // nobody declares is not found there (see [`CleanAt::lets_go`] for the rule).
    let left = || Options { budget_ms: opts.budget_ms.saturating_sub(started.elapsed().as_millis() as u64).max(opts.budget_ms / 4), ..opts.clone() };
    let common = clean_at_common_blocks(k, Some(&s), src, &left(), solver, &r.findings, &BTreeSet::new());
    let tiles = reads.y;
    let found_at = |key: &FindingKey| {
        (0..r.findings.len())
            .any(|m| finding_key(&r.findings[m]) == *key && (r.findings[m].is_warning() || !common.as_ref().is_some_and(|c| c.lets_go(m, tiles))))
    };
    // Lines the re-check left undecided (its launch is open: products of block sizes can time
    // out even at ordinary values) are asked again at the common blocks, where launch and
    // scalars are both concrete; a finding gone there needs what no caller passes, and an error
    // that no run confirmed is not shown as one.
    let undecided: Vec<Finding> = candidates
        .iter()
        .map(|&n| &report.findings[n])
        .filter(|f| !found_at(&finding_key(f)) && r.leaves_undecided(&f.lines()))
        // Their counterexamples' blocks (at other values) say nothing about ordinary values.
        .map(|f| Finding { launch: LaunchReport { block: [0; 3], ..f.launch.clone() }, ..f.clone() })
        .collect();
    let again = if undecided.is_empty() { None } else { clean_at_common_blocks(k, Some(&s), src, &left(), solver, &undecided, &BTreeSet::new()) };
    let gone_at_common_blocks: BTreeSet<FindingKey> =
        (0..undecided.len()).filter(|&i| again.as_ref().is_some_and(|c| c.lets_go(i, tiles))).map(|i| finding_key(&undecided[i])).collect();
    // Those the common blocks show at ordinary values (and do not let go: a tile where it
    // does not occur is enough, see `CleanAt::lets_go`) occur there: they stay errors.
    let found_at_common_blocks: BTreeSet<FindingKey> =
        (0..undecided.len()).filter(|&i| again.as_ref().is_some_and(|c| c.found[i])).map(|i| finding_key(&undecided[i])).collect();
    for n in candidates {
        let key = finding_key(&report.findings[n]);
        let lines = &key.1;
        let matching: Vec<usize> = (0..r.findings.len()).filter(|&m| finding_key(&r.findings[m]) == key).collect();
        if found_at(&key) {
            if uncommon.contains(&key) {
                judged.settled.remove(&key);
            }
            // Tolerated at undeclared values but a race of two different stores at ordinary
            // ones (one the common blocks do not let go): the re-check's race is the finding.
            if report.findings[n].benign.is_some() {
                let real = |m: usize| r.findings[m].benign.is_none() && !common.as_ref().is_some_and(|c| c.lets_go(m, tiles));
                if let Some(&m) = matching.iter().find(|&&m| real(m)) {
                    report.findings[n] = r.findings[m].clone();
                }
            }
            continue;
        }
        if r.leaves_undecided(lines) && !gone_at_common_blocks.contains(&key) {
            // Found at uncommon blocks: the launch confirmation asks first, and what it leaves
            // an error comes back to the pass after it.
            if uncommon.contains(&key) {
                judged.settled.remove(&key);
                continue;
            }
            // Shown at ordinary values at a common block: an error. (Whether it is benign there
            // is not known here, so a race tolerated at undeclared values is no longer.)
            if found_at_common_blocks.contains(&key) {
                report.findings[n].benign = None;
                continue;
            }
            // Neither re-check decided its lines at ordinary values (their time ran out): its
            // only counterexample needs values no caller declared, so it is not shown as a bug
            // of the kernel as called (a correct kernel opened with no setup shows no errors,
            // and whether it does must not depend on how busy the machine was), but as a
            // warning that says what was not decided. The kernel stays `uncertified`.
            mark(&mut report.findings[n], Seen::Undecided);
            continue;
        }
        // At ordinary values it occurs, but only at blocks nobody declares: the launch is what
        // it needs. Its counterexample at ordinary values says so best.
        if let Some(&m) = matching.first() {
            let clean = common.as_ref().map_or(Vec::new(), |c| c.clean[m].clone());
            report.findings[n] = r.findings[m].clone();
            crate::launch_confirm::mark_assumed_launch(&mut report.findings[n], &clean);
            continue;
        }
        // It vanished at ordinary values, but was found at an uncommon block (see above).
        let only_at_common_blocks = gone_at_common_blocks.contains(&key);
        if uncommon.contains(&key) {
            judged.settled.remove(&key);
            judged.vanished.insert(key, only_at_common_blocks);
            continue;
        }
        mark(&mut report.findings[n], Seen::Gone { at_common_blocks: only_at_common_blocks });
    }
    report.settle_verdict();
    judged
}

/// What the re-checks at ordinary values saw of a finding.
#[derive(Clone, Copy)]
enum Seen {
    /// It does not occur there (at the common block sizes when `at_common_blocks`: the re-check
    /// with the launch open left it undecided).
    Gone { at_common_blocks: bool },
    /// No re-check decided its lines there within its time.
    Undecided,
}

/// Marks `f` as found only at the undeclared values `set` (its counterexample's), with what
/// the re-checks at [`ORDINARY`] values, row `strides` apart (on an ordinary grid when
/// `grid_pinned`) saw of it.
fn mark_assumed_scalars(
    f: &mut Finding,
    set: &[(OpenValue, i64)],
    strides: &BTreeMap<ParamSlot, i128>,
    bind: &crate::bind::Binding,
    grid_pinned: bool,
    seen: Seen,
) {
    // Benign at the undeclared values, but not shown benign at ordinary ones: the sameness
    // of the stores is that shape's, not the kernel's, so it is not claimed.
    f.benign = None;
    let name = |v: OpenValue| match v {
        OpenValue::Scalar(i) => bind.name(i).to_string(),
        OpenValue::Field(i, offset) => bind.field_name(i, offset),
    };
    let values: Vec<String> = set.iter().map(|&(v, value)| format!("{}={value}", name(v))).collect();
    let sizes: Vec<String> = set.iter().filter(|(v, _)| !strides.contains_key(&v.slot())).map(|&(v, _)| name(v)).collect();
    let apart: Vec<String> = set.iter().filter_map(|&(v, _)| Some(format!("{} = {}", name(v), strides.get(&v.slot())?))).collect();
    let ordinary = match (sizes.is_empty(), apart.is_empty()) {
        (false, true) => format!("{} = {ORDINARY} (every undeclared integer parameter at {ORDINARY})", sizes.join(" = ")),
        (false, false) => format!(
            "{} = {ORDINARY} and the row strides {} (every undeclared integer parameter at {ORDINARY}, strides apart)",
            sizes.join(" = "),
            apart.join(", ")
        ),
        (true, _) => format!("the row strides {} (every other undeclared integer parameter at {ORDINARY})", apart.join(", ")),
    };
    // A field of a struct passed by value is declared under the name the message uses: by field
    // name where the kernel's .cu defines the struct (`p.ncols = { value = ... }`), else by
    // byte offset, quoted (`"p+16" = { value = ... }`).
    let key = |n: String| if spec::field_key(&n).is_some() { format!("`\"{n}\"`") } else { format!("`{n}`") };
    let fields: Vec<String> = set.iter().filter(|(v, _)| matches!(v, OpenValue::Field(..))).map(|&(v, _)| key(name(v))).collect();
    let by_name = if fields.iter().all(|f| !f.contains('+')) { "" } else { ", or `p.field` by name" };
    let remedy = format!(
        "declare {} in lark.toml if {} can occur{}",
        if set.len() == 1 { "its value or range" } else { "their values or ranges" },
        if set.len() == 1 { "such a value" } else { "such values" },
        match fields.len() {
            0 => String::new(),
            1 => format!(" ({} is a field of a struct passed by value: `{} = {{ value = ... }}`{by_name})", fields[0], fields[0].trim_matches('`')),
            _ if by_name.is_empty() => format!(" ({} are fields of a struct passed by value, declared as `p.field = {{ value = ... }}`)", fields.join(", ")),
            _ => format!(" ({} are fields of a struct passed by value, declared as `\"p+OFFSET\" = {{ value = ... }}`{by_name})", fields.join(", ")),
        }
    );
    let grid = if grid_pinned { format!(" on a grid of {ORDINARY_GRID} blocks along each dimension the kernel reads") } else { String::new() };
    let values = values.join(", ");
    f.assumed_scalars = Some(match seen {
        Seen::Gone { at_common_blocks } => format!(
            "found with {values}, which no interface declares; with {ordinary}{grid}{} there is none — {remedy}",
            // The re-check with the launch open did not decide it; those at the common blocks did.
            if at_common_blocks { " at the common block sizes" } else { "" },
        ),
        Seen::Undecided => format!(
            "found with {values}, which no interface declares; whether it occurs with {ordinary}{grid} was not decided within the time limit — {remedy}"
        ),
    });
}

/// A value a counterexample sets that no interface declares: an integer parameter, or a field
/// (by byte offset) of an aggregate parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum OpenValue {
    Scalar(u32),
    Field(u32, u32),
}

impl OpenValue {
    /// The parameter slot it is (a scalar is the slot at offset 0).
    fn slot(self) -> ParamSlot {
        match self {
            OpenValue::Scalar(i) => (i, 0),
            OpenValue::Field(i, offset) => (i, offset),
        }
    }
}

/// The open values `f`'s counterexample sets, with the values it gives them. A pointer inside a
/// struct (`pointers`) is not one: replays give it a buffer of its own, whatever its value.
fn open_values(k: &Kernel, open: &BTreeSet<u32>, pointers: &BTreeSet<(u32, u32)>, bind: &crate::bind::Binding, f: &Finding) -> Vec<(OpenValue, i64)> {
    let aggregate = |i: u32| k.params.get(i as usize).is_some_and(|p| p.is_aggregate());
    let undeclared = |i: u32, offset: u32| bind.declared_field(i, offset).is_none() && !pointers.contains(&(i, offset));
    let mut out = Vec::new();
    for (&i, &raw) in &f.witness.params {
        if aggregate(i) {
            if undeclared(i, 0) {
                out.push((OpenValue::Field(i, 0), raw as i64));
            }
        } else if open.contains(&i) {
            out.push((OpenValue::Scalar(i), scalar_value(k, i, raw)));
        }
    }
    out.extend(f.witness.fields.iter().filter(|x| undeclared(x.param, x.offset)).map(|x| (OpenValue::Field(x.param, x.offset), x.value as i64)));
    out
}

/// The fields of aggregate parameters the kernel reads (by byte offset) that the interface
/// does not declare, but for pointers (see [`open_values`]).
fn open_fields(k: &Kernel, lifted: &Lifted, bind: &crate::bind::Binding) -> Vec<OpenValue> {
    let mut fields = Vec::new();
    let pointers = lifted.pointer_fields();
    for (i, p) in k.params.iter().enumerate().filter(|(_, p)| p.is_aggregate()) {
        for offset in 0..p.bytes {
            let read = lifted.exprs.find_var(model::expr::Sym::Param { index: i as u32, offset }).is_some();
            if read && bind.declared_field(i as u32, offset).is_none() && !pointers.contains(&(i as u32, offset)) {
                fields.push(OpenValue::Field(i as u32, offset));
            }
        }
    }
    fields
}

/// A scalar parameter's raw bits as the signed number its width makes them.
fn scalar_value(k: &Kernel, i: u32, raw: u64) -> i64 {
    let bits = k.params.get(i as usize).map_or(64, |p| p.bits.clamp(1, 64));
    model::ops::sext(raw, bits)
}

/// The slots of open values.
fn slots(open: &BTreeSet<OpenValue>) -> BTreeSet<ParamSlot> {
    open.iter().map(|v| v.slot()).collect()
}

/// The ordinary value of every slot the binding leaves open (see the module comment): what the
/// re-check gives each, and what the solver's ordinary probe (see `Ctx::run_witness`) asks for,
/// so that a witness found there is one the re-check would find.
pub(crate) fn ordinary_setting(k: &Kernel, lifted: &Lifted, bind: &crate::bind::Binding) -> BTreeMap<ParamSlot, i128> {
    let open: BTreeSet<OpenValue> = open_scalars(k, lifted, bind).into_iter().map(OpenValue::Scalar).chain(open_fields(k, lifted, bind)).collect();
    let strides = ordinary_strides(lifted, &slots(&open));
    open.iter().map(|v| (v.slot(), strides.get(&v.slot()).copied().unwrap_or(ORDINARY))).collect()
}

/// The integer parameters the interface gives neither a value nor a range, that are not buffers.
fn open_scalars(k: &Kernel, lifted: &Lifted, bind: &crate::bind::Binding) -> BTreeSet<u32> {
    let buffers = lifted.pointer_params();
    (0..k.params.len() as u32)
        .filter(|&i| {
            let p = &k.params[i as usize];
            let integer = !p.ty.starts_with(".f") && p.bits > 0 && p.bits <= 64 && p.bytes <= 8;
            let declared = matches!(
                bind.params[i as usize],
                Some(ParamSpec::Scalar { value: Some(_), .. } | ParamSpec::Scalar { range: Some(_), .. }) | Some(ParamSpec::Buffer { .. })
            );
            integer && !declared && !buffers.contains(&i)
        })
        .collect()
}
