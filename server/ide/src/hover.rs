//! Hover on a line of a kernel: the kernel's verdict, the phases the line belongs to, the memory
//! accesses on the line with their symbolic addresses, and the findings that involve it. And the
//! whole-file model dump behind "Show model".

use crate::analyse::{FileAnalysis, KernelResult};
use crate::FileKind;
use model::phases::Start;
use model::symbolic::Base;
use model::Kernel;
use std::collections::HashSet;
use std::fmt::Write;
use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub struct Hover {
    pub range: Range<usize>,
    pub markdown: String,
}

/// `12 ms`, `1.3 s`.
pub(crate) fn format_millis(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{} ms", ms.round() as u64)
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// The line (1-based, in the file's own numbering) of an instruction, if it is in this file.
pub(crate) fn inst_line(fa: &FileAnalysis, inst: &model::Inst) -> Option<u32> {
    match fa.kind {
        FileKind::Ptx => Some(fa.ptx_index.line_col(inst.span.start).0 + 1),
        FileKind::Cu => inst.line,
    }
}

pub(crate) fn target_name(kr: &KernelResult, k: &Kernel, base: Option<Base>) -> String {
    match base {
        Some(Base::Var(v)) => k.vars.get(v as usize).map_or_else(|| "?".into(), |v| check::demangle_local(&v.name)),
        Some(Base::Param(p)) => kr.param_name(p as usize),
        Some(Base::Field { param, offset }) => kr.field_name(param as usize, offset),
        None => "memory".into(),
    }
}

fn phase_name(fa: &FileAnalysis, k: &Kernel, s: Start) -> String {
    match s {
        Start::Entry => "the phase from the kernel entry".into(),
        Start::Barrier(b, i) => {
            let line = k.cfg.blocks.get(b as usize).and_then(|blk| blk.insts.get(i)).and_then(|inst| inst_line(fa, inst));
            format!("the phase after the barrier at line {}", line.map_or("?".into(), |l| l.to_string()))
        }
    }
}

pub fn hover(fa: &FileAnalysis, offset: usize) -> Option<Hover> {
    let kr = fa.kernel_at(offset)?;
    let line0 = fa.line_of(offset);
    let range = fa.line_range(line0);
    let r = &kr.report;
    let mut md = format!("**`{}`**: {} · {}\n", kr.source_name, r.verdict.as_str(), format_millis(r.stats.millis));
    if let (Some(k), Some(a)) = (kr.model(), kr.lifted()) {
        let positions: HashSet<(u32, usize)> = k.insts().filter(|(_, _, i)| inst_line(fa, i) == Some(line0 + 1)).map(|(b, n, _)| (b, n)).collect();
        if !positions.is_empty() {
            let phases: Vec<String> = model::phases::starts_reaching(k, &positions).into_iter().map(|s| phase_name(fa, k, s)).collect();
            if !phases.is_empty() {
                let _ = writeln!(md, "\nLine {} is in {}.", line0 + 1, join_or(&phases));
            }
            let mut any = false;
            for acc in a.lifted.accesses.iter().filter(|x| positions.contains(&(x.block, x.inst))) {
                if !any {
                    md.push_str("\nMemory accesses:\n");
                    any = true;
                }
                let target = target_name(kr, k, acc.base);
                let addr = match acc.offset {
                    Some(o) => format!("{target}[{}]", model::dump::expr(k, &a.lifted, o)),
                    None => format!("[{}]", model::dump::expr(k, &a.lifted, acc.addr)),
                };
                let pc = model::dump::expr(k, &a.lifted, acc.pc);
                let when = if pc == "true" { String::new() } else { format!(" when `{pc}`") };
                let _ = writeln!(md, "- {} {} `{addr}` ({} bytes; indices in bytes){when}", acc.kind.name(), acc.space.name(), acc.bytes);
            }
        }
    }
    let on_line = |l: &check::Location| fa.loc_line(l) == Some(line0);
    // What the stores on this line write, as formulas over the inputs, from the equivalence
    // check's shadow run (one thread, one checked shape): the facts the Lean segments state.
    if let Some(eq) = &r.equivalence {
        let stores: Vec<_> = eq.stores.iter().filter(|s| on_line(&s.location)).collect();
        if !stores.is_empty() {
            md.push_str(
                "
Values stored (equivalence check):
",
            );
            for s in stores {
                let shape = if s.scalars.is_empty() { String::new() } else { format!(", {}", check::render::shape(&s.scalars)) };
                let _ = writeln!(md, "- `{} = {}` (thread {}{shape})", s.target, s.formula, s.thread);
            }
        }
    }
    let findings: Vec<_> = r.findings.iter().filter(|f| f.accesses.iter().any(|x| on_line(&x.location)) || f.barrier.as_ref().is_some_and(on_line)).collect();
    if !findings.is_empty() {
        md.push('\n');
        for f in findings {
            let _ = writeln!(md, "- **{}**: {}", f.kind.verdict().as_str(), check::render::finding_message(f));
        }
    }
    for u in r.uncertified.iter().filter(|u| u.location.as_ref().is_some_and(on_line)) {
        let _ = writeln!(md, "- uncertified: {}", check::render::uncertified_message(u));
    }
    Some(Hover { range, markdown: md })
}

fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

pub(crate) fn show_model(fa: &FileAnalysis) -> String {
    let mut out = String::new();
    for kr in &fa.kernels {
        match (kr.model(), kr.lifted()) {
            (Some(k), Some(a)) => {
                let _ = writeln!(out, "// verdict: {}", kr.report.verdict.as_str());
                out.push_str(&model::dump::dump(k, &a.lifted, &a.phases));
            }
            _ => {
                let why = kr.report.uncertified.first().map_or_else(|| "it could not be lowered".to_string(), check::render::uncertified_message);
                let _ = writeln!(out, "kernel {}: no model: {why}", kr.name);
            }
        }
        out.push('\n');
    }
    if fa.kernels.is_empty() {
        out.push_str(match &fa.status {
            Some(s) => s,
            None if !fa.problems.is_empty() => "no kernels: the file has errors",
            None => "no kernels in this file",
        });
        out.push('\n');
    }
    out
}
