//! Checking one kernel: lift, bind the interface, run the race, divergence and bounds checks,
//! replay every witness, and decide the verdict.

use crate::bind::Binding;
use crate::bounds::{self, BoundsOutcome};
use crate::ctx::Ctx;
use crate::query::{dims_of, thread_of, ThreadId};
use crate::races::{self, RaceOutcome};
use crate::replay;
use crate::report::*;
use crate::smt::Solver;
use crate::sync::{self, SyncOutcome};
use model::expr::Sym;
use model::interp::InterpError;
use model::phases::Phases;
use model::symbolic::{self, Access, Base, Lifted};
use model::Kernel;
use ptx::{LineIndex, Span};
use spec::KernelSpec;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct Options {
    /// Per SMT query.
    pub timeout_ms: u64,
    /// Decide checks by enumerating concrete launches when the interface fixes them (on by
    /// default; off to exercise the SMT encoding alone).
    pub enumerate: bool,
    /// Wall-clock budget for one kernel's solver checks; what is left when it runs out is
    /// reported uncertified.
    pub budget_ms: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options { timeout_ms: 2000, enumerate: true, budget_ms: 20_000 }
    }
}

/// Where the kernel's text came from, to report positions.
pub struct Sources<'a> {
    pub ptx: &'a str,
    pub index: &'a LineIndex,
    /// The name of the kernel's CUDA file (from `.file`), if its `.loc`s point to one.
    pub cu_file: Option<String>,
    /// Parameter names from the CUDA signature, if the `.cu` text was available.
    pub param_names: Option<Vec<String>>,
}

impl Sources<'_> {
    pub fn location(&self, span: Span, line: Option<u32>) -> Location {
        let ptx_line = self.index.line_col(span.start).0 + 1;
        match (line, &self.cu_file) {
            (Some(l), Some(f)) => Location { line: l, line_kind: LineKind::Cu, source: Some(f.clone()), ptx_line, ptx_span: [span.start, span.end] },
            _ => Location { line: ptx_line, line_kind: LineKind::Ptx, source: None, ptx_line, ptx_span: [span.start, span.end] },
        }
    }
}

/// The lifted model of a kernel with its phases, for dumps and hovers.
pub struct Analysis {
    pub lifted: Lifted,
    pub phases: Phases,
}

pub fn analyse(k: &Kernel) -> Analysis {
    let lifted = symbolic::lift(k);
    let phases = Phases::compute(k, &lifted);
    Analysis { lifted, phases }
}

/// `check_kernel`, with a panic in the engine turned into an `error` verdict (and a fresh solver,
/// since the old one may be mid-query): a bug in LARK must not take the CLI or the editor down.
pub fn check_kernel_guarded(k: &Kernel, spec: Option<&KernelSpec>, src: &Sources, opts: &Options, solver: &mut Solver) -> KernelReport {
    let started = Instant::now();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_kernel(k, spec, src, opts, solver)));
    r.unwrap_or_else(|p| {
        *solver = Solver::z3();
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        KernelReport::error(&k.name, format!("internal error in the engine: {msg}"), started.elapsed().as_secs_f64() * 1e3)
    })
}

pub fn check_kernel(k: &Kernel, spec: Option<&KernelSpec>, src: &Sources, opts: &Options, solver: &mut Solver) -> KernelReport {
    let started = Instant::now();
    let Analysis { mut lifted, phases } = analyse(k);
    let bind = Binding::new(k, spec, src.param_names.as_deref());
    let known = bind.known_values(k, &mut lifted.exprs);
    lifted.specialize(&known);
    let mut report = KernelReport {
        name: k.name.to_string(),
        verdict: Verdict::Verified,
        findings: Vec::new(),
        uncertified: Vec::new(),
        notes: bind.unmatched.iter().map(|n| format!("the interface names `{n}`, which is not a parameter of this kernel")).collect(),
        stats: Stats { accesses: lifted.accesses.len(), barriers: lifted.barriers.len(), ..Stats::default() },
    };
    for u in &lifted.unsupported {
        report.uncertified.push(Uncertified { reason: format!("unsupported: {}", u.reason), location: Some(src.location(u.span, u.line)) });
    }
    for a in &lifted.accesses {
        if a.base.is_none() && !matches!(a.space, model::ops::Space::Local | model::ops::Space::Param | model::ops::Space::Const) {
            report.uncertified.push(Uncertified {
                reason: format!("the address of this {} is not derived from a kernel parameter or a declared variable, so it is not checked", a.kind.name()),
                location: Some(src.location(a.span, a.line)),
            });
        }
    }
    let mut ctx = Ctx::new(k, &lifted, &phases, &bind, solver, opts.timeout_ms);
    if !opts.enumerate {
        ctx.launch = None;
    }
    ctx.deadline = Some(started + std::time::Duration::from_millis(opts.budget_ms));
    let race_outcomes = races::find(&mut ctx);
    let sync_outcomes = sync::find(&mut ctx);
    let bounds_outcomes = bounds::find(&mut ctx);
    report.stats.queries = ctx.queries;
    report.stats.enumerated = ctx.enumerated;
    report.stats.solver_millis = ctx.solver_time.as_secs_f64() * 1e3;
    let replay_started = Instant::now();
    let fx = Explain { k, l: &lifted, bind: &bind, src };
    for o in race_outcomes {
        match o {
            RaceOutcome::Witness(w) => fx.race(w, &mut report),
            RaceOutcome::Unknown { a1, a2, reason } => report.uncertified.push(Uncertified {
                reason: format!(
                    "race freedom between lines {} and {} not decided: {reason}",
                    line_of(src, &lifted.accesses[a1]),
                    line_of(src, &lifted.accesses[a2])
                ),
                location: Some(src.location(lifted.accesses[a1].span, lifted.accesses[a1].line)),
            }),
        }
    }
    for o in sync_outcomes {
        match o {
            SyncOutcome::Witness(w) => fx.divergence(w, &mut report),
            SyncOutcome::Unknown { site, reason } => {
                let inst = &k.cfg.blocks[site.0 as usize].insts[site.1];
                report
                    .uncertified
                    .push(Uncertified { reason: format!("barrier uniformity not decided: {reason}"), location: Some(src.location(inst.span, inst.line)) });
            }
        }
    }
    for o in bounds_outcomes {
        match o {
            BoundsOutcome::Witness(w) => fx.out_of_bounds(w, &mut report),
            BoundsOutcome::Unknown { access, reason } => {
                let a = &lifted.accesses[access];
                report.uncertified.push(Uncertified { reason: format!("bounds not decided: {reason}"), location: Some(src.location(a.span, a.line)) });
            }
        }
    }
    report.stats.replay_millis = replay_started.elapsed().as_secs_f64() * 1e3;
    // One finding per kind and set of lines: the same bug seen through several accesses or
    // launches is one bug.
    let mut seen_findings = std::collections::HashSet::new();
    report.findings.retain(|f| {
        let mut lines: Vec<u32> = f.accesses.iter().map(|a| a.location.line).chain(f.barrier.iter().map(|b| b.line)).collect();
        lines.sort();
        seen_findings.insert((f.kind.verdict(), lines))
    });
    let mut seen = std::collections::HashSet::new();
    report.uncertified.retain(|u| seen.insert((u.reason.clone(), u.location.as_ref().map(|l| l.line))));
    report.verdict =
        report.findings.iter().map(|f| f.kind.verdict()).min().unwrap_or(if report.uncertified.is_empty() { Verdict::Verified } else { Verdict::Uncertified });
    report.stats.millis = started.elapsed().as_secs_f64() * 1e3;
    report
}

/// The line an access is reported on: its CUDA line, or its PTX line when the PTX has no
/// `.loc` for it.
fn line_of(src: &Sources, a: &Access) -> String {
    src.location(a.span, a.line).line.to_string()
}

/// Turns witnesses into findings (after replay) or uncertified regions.
struct Explain<'a> {
    k: &'a Kernel,
    l: &'a Lifted,
    bind: &'a Binding,
    src: &'a Sources<'a>,
}

impl Explain<'_> {
    fn launch(&self, model: &HashMap<String, u64>) -> LaunchReport {
        let mut params = BTreeMap::new();
        for i in 0..self.k.params.len() as u32 {
            let s = Sym::Param { index: i, offset: 0 };
            if let (Some(v), Some((_, bits))) = (model.get(&crate::encode::sym_name(s, 0)), self.l.exprs.find_var(s)) {
                params.insert(self.bind.name(i).to_string(), model::ops::sext(*v, bits.max(1)));
            }
        }
        LaunchReport { grid: dims_of(model, "nctaid"), block: dims_of(model, "ntid"), params }
    }

    fn iterations(&self, a: &Access, model: &HashMap<String, u64>, t: u8) -> BTreeMap<String, u64> {
        a.loops.iter().filter_map(|&lp| model.get(&format!("k{lp}_{t}")).map(|v| (format!("k{lp}"), *v))).collect()
    }

    fn target(&self, a: &Access) -> String {
        crate::ctx::target_name(self.k, self.bind, a)
    }

    fn elem_bytes(&self, a: &Access) -> u64 {
        if let Some(Base::Param(p)) = a.base {
            if let Some(Some(spec::ParamSpec::Buffer { dtype: Some(d), .. })) = self.bind.params.get(p as usize) {
                return d.bytes();
            }
        }
        a.bytes.clamp(1, 8) as u64
    }

    fn access_report(&self, a: &Access, thread: usize, model: &HashMap<String, u64>) -> AccessReport {
        AccessReport {
            kind: a.kind.name(),
            space: a.space.name(),
            target: self.target(a),
            bytes: a.bytes,
            thread,
            location: self.src.location(a.span, a.line),
            iterations: self.iterations(a, model, thread as u8 + 1),
        }
    }

    fn race(&self, w: races::RaceWitness, report: &mut KernelReport) {
        let (a1, a2) = (&self.l.accesses[w.a1], &self.l.accesses[w.a2]);
        let (t1, t2) = (thread_of(&w.model, 1), thread_of(&w.model, 2));
        let off1 = w.offsets[0].as_ref().and_then(|n| w.model.get(n)).copied();
        let off2 = w.offsets[1].as_ref().and_then(|n| w.model.get(n)).copied();
        let loc1 = self.src.location(a1.span, a1.line);
        let min_bytes = self.min_bytes(&[(a1, off1), (a2, off2)]);
        let witness = replay::Witness { model: &w.model, blocks: vec![t1.block, t2.block], min_bytes: &min_bytes, seeds: &w.seeds };
        let confirmed =
            replay::first_reproduction(self.k, self.l, self.bind, &witness, |_, trace, _| replay::confirm_race(trace, a1, t1, a2, t2).map(|_| ())).is_some();
        if !confirmed && !w.input_dependent.is_empty() {
            report.uncertified.push(Uncertified {
                reason: format!(
                    "race freedom depends on the values read from {}: declare them in lark.toml, e.g. assume = [\"injective\"] or [\"in_range(lo, hi)\"]",
                    w.input_dependent.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
                ),
                location: Some(loc1),
            });
            return;
        }
        if !confirmed {
            report.uncertified.push(Uncertified {
                reason: format!(
                    "possible race between line {} and line {} that the interpreter did not reproduce; the engine over-approximates here",
                    line_of(self.src, a1),
                    line_of(self.src, a2)
                ),
                location: Some(loc1),
            });
            return;
        };
        let elem = self.elem_bytes(a1).min(self.elem_bytes(a2));
        // The byte both touch, as an offset into the target.
        let offset = off1.unwrap_or(0).max(off2.unwrap_or(0));
        let target = self.target(a1);
        let space = a1.space.name();
        let element = offset / elem;
        let (l1, l2) = (line_of(self.src, a1), line_of(self.src, a2));
        let verb = |a: &Access| match a.kind {
            symbolic::AccessKind::Read => "reads",
            symbolic::AccessKind::Write => "writes",
            symbolic::AccessKind::Atomic(_) => "atomically updates",
        };
        let sep = if t1.block != t2.block { "in another block (blocks are unordered)" } else { "with no barrier between them" };
        let mut message = format!(
            "data race on {space} {target}[{element}]: thread {t1} {} {target}[{element}] at line {l1} while thread {t2} {} it at line {l2}, {sep}",
            verb(a1),
            verb(a2)
        );
        let inputs = self.inputs(&w.seeds, &w.model);
        if !inputs.is_empty() {
            message.push_str(&format!(" (with input {})", inputs.join(", ")));
        }
        report.findings.push(Finding {
            kind: FindingKind::Race,
            message,
            accesses: vec![self.access_report(a1, 0, &w.model), self.access_report(a2, 1, &w.model)],
            threads: vec![t1, t2],
            address: Some(AddressReport { space, target, offset, element: Some(element), size: None }),
            barrier: None,
            launch: self.launch(&w.model),
            replayed: true,
        });
    }

    /// The loaded values a witness relies on, as `buffer[index] = value`.
    fn inputs(&self, seeds: &[races::Seed], model: &HashMap<String, u64>) -> Vec<String> {
        let mut out = Vec::new();
        for s in seeds {
            if let (Some(off), Some(v)) = (s.offset.value(model), s.value.value(model)) {
                let text = format!("{}[{}] = {}", self.bind.name(s.param), off / s.bytes.max(1) as u64, model::ops::sext(v, s.bytes * 8));
                if !out.contains(&text) {
                    out.push(text);
                }
            }
        }
        out
    }

    /// Bytes a buffer of unknown size needs so the witnessed offsets are inside it.
    fn min_bytes(&self, accesses: &[(&Access, Option<u64>)]) -> HashMap<u32, u64> {
        let mut out = HashMap::new();
        for (a, off) in accesses {
            if let (Some(Base::Param(p)), Some(o)) = (a.base, off) {
                let e = out.entry(p).or_insert(0);
                *e = (*e).max(o.saturating_add(a.bytes as u64).saturating_add(4096));
            }
        }
        out
    }

    fn divergence(&self, w: sync::DivergenceWitness, report: &mut KernelReport) {
        let inst = &self.k.cfg.blocks[w.site.0 as usize].insts[w.site.1];
        let loc = self.src.location(inst.span, inst.line);
        let t1 = thread_of(&w.model, 1);
        let line = loc.line.to_string();
        let no_sizes = HashMap::new();
        let witness = replay::Witness { model: &w.model, blocks: vec![t1.block], min_bytes: &no_sizes, seeds: &[] };
        let error = replay::first_reproduction(self.k, self.l, self.bind, &witness, |_, _, result| match (result, w.warp) {
            (Err(e @ InterpError::BarrierDivergence { .. }), false) | (Err(e @ InterpError::WarpDivergence { .. }), true) => Some(e.clone()),
            _ => None,
        });
        let Some(error) = error else {
            let what = if w.warp { "warp collective" } else { "barrier" };
            report.uncertified.push(Uncertified {
                reason: format!("the {what} at line {line} may not be reached by all threads; the interpreter did not reproduce it"),
                location: Some(loc),
            });
            return;
        };
        let (message, threads) = match error {
            InterpError::BarrierDivergence { block, arrived, missing, .. } => {
                let reached = arrived.first().copied().unwrap_or(t1.thread);
                let (other, how) = missing.first().map(|(t, wh)| (*t, wh.to_string())).unwrap_or((thread_of(&w.model, 2).thread, "does not".into()));
                let a = ThreadId { block, thread: reached };
                let b = ThreadId { block, thread: other };
                (format!("barrier divergence at line {line}: thread {a} waits at the barrier while thread {b} {how}"), vec![a, b])
            }
            InterpError::WarpDivergence { block, warp, mask, missing, reason, .. } => {
                let lane = missing.first().map(|(l, _)| *l).or(w.missing_lane.map(|l| l as u32)).unwrap_or(0);
                let a = ThreadId { block, thread: t1.thread };
                (
                    format!("warp divergence at line {line}: member mask {mask:#010x} of warp {warp} names lane {lane}, which does not arrive ({reason})"),
                    vec![a],
                )
            }
            _ => unreachable!("confirmed above"),
        };
        report.findings.push(Finding {
            kind: FindingKind::BarrierDivergence,
            message,
            accesses: vec![],
            threads,
            address: None,
            barrier: Some(loc),
            launch: self.launch(&w.model),
            replayed: true,
        });
    }

    fn out_of_bounds(&self, w: bounds::OobWitness, report: &mut KernelReport) {
        let a = &self.l.accesses[w.access];
        let t = thread_of(&w.model, 1);
        let off = w.offset.as_ref().and_then(|n| w.model.get(n)).copied().unwrap_or(0);
        let loc = self.src.location(a.span, a.line);
        // The interpreter survives out-of-bounds accesses in replays and lists them.
        let no_sizes = HashMap::new();
        let witness = replay::Witness { model: &w.model, blocks: vec![t.block], min_bytes: &no_sizes, seeds: &[] };
        let event = replay::first_reproduction(self.k, self.l, self.bind, &witness, |r, trace, _| {
            let mine: Vec<_> = trace.out_of_bounds.iter().filter(|e| e.inst == (a.block, a.inst)).cloned().collect();
            let e = mine.iter().find(|e| e.thread == t.thread && e.block == t.block).or(mine.first()).cloned()?;
            // The offset into the target, as the interpreter saw it.
            let offset = match (a.space, a.base) {
                (model::ops::Space::Shared, _) => trace.shared_var_at(e.addr).map(|(_, inner)| inner as i64).unwrap_or(e.addr as i64),
                (_, Some(Base::Param(p))) => match r.launch.args.get(p as usize) {
                    Some(model::interp::Arg::Buffer(id)) => e.addr.wrapping_sub(model::interp::Memory::base(*id)) as i64,
                    _ => e.addr as i64,
                },
                _ => e.addr as i64,
            };
            Some((e, offset))
        });
        let confirmed = event.is_some();
        let target = self.target(a);
        if !confirmed {
            report.uncertified.push(Uncertified {
                reason: format!(
                    "possible out-of-bounds {} of `{target}` at line {} that the interpreter did not reproduce",
                    a.kind.name(),
                    line_of(self.src, a)
                ),
                location: Some(loc),
            });
            return;
        }
        let (event, seen_offset) = event.expect("confirmed");
        let thread = ThreadId { block: event.block, thread: event.thread };
        let offset = if thread == t { off as i64 } else { seen_offset };
        let elem = self.elem_bytes(a) as i64;
        let size = w.size;
        let message = format!(
            "out-of-bounds {} of {target}[{}] ({} bytes at byte offset {offset}{}) by thread {thread} at line {}",
            a.kind.name(),
            offset.div_euclid(elem),
            a.bytes,
            size.map_or(String::new(), |s| format!("; `{target}` has {s} bytes")),
            line_of(self.src, a)
        );
        report.findings.push(Finding {
            kind: FindingKind::OutOfBounds,
            message,
            accesses: vec![self.access_report(a, 0, &w.model)],
            threads: vec![thread],
            address: Some(AddressReport { space: a.space.name(), target, offset: offset as u64, element: Some(offset.div_euclid(elem) as u64), size }),
            barrier: None,
            launch: self.launch(&w.model),
            replayed: true,
        });
    }
}
