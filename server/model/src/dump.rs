//! A human-readable dump of the lifted model (`lark check --dump-model`): what LARK thinks the
//! kernel does, phase by phase.

use crate::expr::{ExprId, Sym};
use crate::phases::{Phases, Start};
use crate::symbolic::{Base, IvKind, Lifted};
use crate::Kernel;
use std::fmt::Write;

/// How a symbol is written in dumps, hovers and explanations.
pub fn sym_name(k: &Kernel, s: Sym) -> String {
    match s {
        Sym::Special(sp) => sp.name(),
        Sym::Param { index, offset } => {
            let base = k.params.get(index as usize).map_or_else(|| format!("param{index}"), |p| short_param(&k.name, &p.name));
            if offset == 0 {
                base
            } else {
                format!("{base}+{offset}")
            }
        }
        Sym::VarBase(v) => format!("&{}", k.vars.get(v as usize).map_or("?", |v| v.name.as_str())),
        Sym::Counter(l) => format!("k{l}"),
        Sym::Havoc { lp, reg } => format!("any({}@L{lp})", reg_name(k, reg)),
        Sym::Header { lp, reg } => format!("hdr({}@L{lp})", reg_name(k, reg)),
        Sym::Value { block, inst, elem } => {
            let line = k.cfg.blocks.get(block as usize).and_then(|b| b.insts.get(inst as usize)).and_then(|i| i.line);
            match (line, elem) {
                (Some(l), 0) => format!("v@{l}"),
                (Some(l), e) => format!("v@{l}.{e}"),
                (None, _) => format!("v{block}_{inst}_{elem}"),
            }
        }
    }
}

/// `reduce_param_2` → `param_2`: clang names parameters after the kernel.
pub fn short_param(kernel: &str, p: &str) -> String {
    p.strip_prefix(kernel).and_then(|s| s.strip_prefix('_')).unwrap_or(p).to_string()
}

fn reg_name(k: &Kernel, r: u32) -> &str {
    k.regs.get(r as usize).map_or("?", |r| r.name.as_str())
}

pub fn expr(k: &Kernel, l: &Lifted, e: ExprId) -> String {
    l.exprs.display(e, &|s| sym_name(k, s))
}

pub fn dump(k: &Kernel, l: &Lifted, phases: &Phases) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "kernel {}", k.name);
    let params: Vec<String> = k.params.iter().map(|p| format!("{}: {}", short_param(&k.name, &p.name), p.ty.trim_start_matches('.'))).collect();
    let _ = writeln!(out, "  params: {}", params.join(", "));
    for v in &k.vars {
        let size = v.size.map_or_else(|| "dynamic".to_string(), |s| format!("{s} bytes"));
        let _ = writeln!(out, "  {} {} ({size})", v.space.name(), v.name);
    }
    let used: std::collections::HashSet<Sym> = l
        .accesses
        .iter()
        .flat_map(|a| [a.addr, a.pc])
        .chain(l.barriers.iter().map(|b| b.pc))
        .chain(l.warp_ops.iter().flat_map(|w| [w.pc, w.mask]))
        .flat_map(|e| l.exprs.symbols(e))
        .collect();
    for (i, lp) in k.cfg.loops.iter().enumerate() {
        let line = k.cfg.blocks[lp.header as usize].insts.iter().find_map(|x| x.line);
        let _ = write!(out, "  loop L{i} (counter k{i}) at line {}", line.map_or("?".into(), |l| l.to_string()));
        if let Some(p) = lp.parent {
            let _ = write!(out, ", inside L{p}");
        }
        let _ = writeln!(out);
        if let Some(s) = &l.loops[i] {
            let mut ivs: Vec<_> = s.ivs.iter().filter(|(_, kind, _)| *kind != IvKind::Invariant).collect();
            ivs.sort_by_key(|(r, _, _)| reg_name(k, *r).to_string());
            let mut unknown = 0;
            for (r, kind, value) in ivs {
                let what = match kind {
                    IvKind::Affine { .. } => "affine",
                    IvKind::Shr { .. } => "halving",
                    IvKind::Shl { .. } => "doubling",
                    IvKind::Derived => "derived",
                    // Only the unknown values the checks depend on are worth a line.
                    _ if !used.contains(&Sym::Havoc { lp: i as u32, reg: *r }) => {
                        unknown += 1;
                        continue;
                    }
                    _ => "unknown: any value in each iteration",
                };
                let _ = writeln!(out, "    {} = {} ({what})", reg_name(k, *r), expr(k, l, *value));
            }
            if unknown > 0 {
                let _ = writeln!(out, "    ({unknown} other loop-carried registers, e.g. accumulators, that no address or branch depends on)");
            }
            let _ = writeln!(out, "    iteration k{i} runs if {}", if s.bounded { expr(k, l, s.guard) } else { "(not stated: any iteration)".into() });
        }
    }
    let mut starts: Vec<Start> = vec![Start::Entry];
    starts.extend(l.barriers.iter().map(|b| Start::Barrier(b.block, b.inst)));
    for start in starts {
        let header = match start {
            Start::Entry => "phase from kernel entry".to_string(),
            Start::Barrier(b, i) => {
                let line = k.cfg.blocks[b as usize].insts[i].line;
                format!("phase after barrier at line {}", line.map_or("?".into(), |l| l.to_string()))
            }
        };
        let _ = writeln!(out, "  {header}:");
        let mut any = false;
        for (ai, a) in l.accesses.iter().enumerate() {
            let reaches: Vec<_> = phases.reaches[ai].iter().filter(|r| r.start == start).collect();
            if reaches.is_empty() {
                continue;
            }
            any = true;
            let target = match a.base {
                Some(Base::Var(v)) => k.vars[v as usize].name.to_string(),
                Some(Base::Param(p)) => short_param(&k.name, &k.params[p as usize].name),
                Some(Base::Field { param, offset }) => sym_name(k, Sym::Param { index: param, offset }),
                None => "?".into(),
            };
            let addr = match a.offset {
                Some(o) => format!("{target}[{}]", expr(k, l, o)),
                None => format!("[{}]", expr(k, l, a.addr)),
            };
            let iters: Vec<String> = reaches
                .iter()
                .flat_map(|r| r.rels.iter())
                .filter(|(_, rel)| !matches!(rel, crate::phases::Rel::Any))
                .map(|(lp, rel)| format!("k{lp}:{rel:?}"))
                .collect();
            let _ = writeln!(
                out,
                "    line {:>4}  {:<6} {:<6} {addr} ({} bytes){}",
                a.line.map_or("?".into(), |l| l.to_string()),
                a.kind.name(),
                a.space.name(),
                a.bytes,
                if iters.is_empty() { String::new() } else { format!(" [{}]", iters.join(" ")) }
            );
            let pc = expr(k, l, a.pc);
            if pc != "true" {
                let _ = writeln!(out, "                 when {pc}");
            }
        }
        if !any {
            let _ = writeln!(out, "    (no memory accesses)");
        }
    }
    for w in &l.warp_ops {
        let _ = writeln!(out, "  warp {:?} at line {} mask {}", w.kind, w.line.map_or("?".into(), |l| l.to_string()), expr(k, l, w.mask));
    }
    let _ = writeln!(out, "  unsupported instructions: {}", l.unsupported.len());
    for u in &l.unsupported {
        let _ = writeln!(out, "    line {}: {}", u.line.map_or("?".into(), |l| l.to_string()), u.reason);
    }
    out
}
