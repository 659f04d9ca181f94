//! Invariants of the loop registers the lifter summarises as havoc (any value), proved by
//! induction the way GPUVerify's Houdini infers loop invariants: guess simple candidate facts,
//! drop those the entry values break, then drop those one iteration breaks while assuming all
//! the others, until the rest hold. What survives holds at every iteration a thread runs, and
//! the queries assert it wherever the loop's havoc symbols appear (see `Ctx::assert_facts`).
//!
//! Why: a binary search `while (lo < hi) { mid = (lo + hi + 1) / 2; ... prefix[mid] ... }`
//! (sglang's MoE alignment) keeps `0 <= lo < hi <= n`, but with `lo` and `hi` as havoc
//! values `prefix[mid]` may be anywhere, and a correct kernel stayed uncertified ("possible
//! out-of-bounds access that the interpreter did not reproduce") even with a concrete launch.
//!
//! Candidates are signed comparisons (C's `int` loop variables) of each havoc register with
//! zero, with each havoc register's entry value, and with the other havoc registers. Every
//! query is one conjunction, and a counterexample drops all the candidates it breaks at once.
//! A query the solver does not answer proves nothing: that loop keeps no facts.

use crate::bind::Binding;
use crate::query::Query;
use model::budget::Budget;
use model::cfg::LoopId;
use model::expr::{ExprId, Exprs, Sym};
use model::ops::CmpOp;
use model::symbolic::{HavocStep, Lifted};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// At most this many havoc registers of one loop are guessed about (the candidates grow with
/// the square of it).
const MAX_REGS: usize = 6;

/// Rounds of dropping candidates per loop before giving up.
const MAX_ROUNDS: usize = 8;

/// One guess: a comparison over the iteration's `Header` symbols, and the same comparison
/// over the entry values, the latch values and the `Havoc` symbols.
struct Candidate {
    at_header: ExprId,
    at_entry: ExprId,
    at_latch: ExprId,
    at_havoc: ExprId,
}

/// Proves invariants of every loop's havoc registers and records them in
/// `lifted.havoc_facts`. `timeout` bounds each query.
pub fn strengthen(lifted: &mut Lifted, bind: &Binding, solver: &mut ::smt::Solver, timeout: Duration, budget: &Budget) {
    if lifted.loops.iter().flatten().all(|s| s.havoc_step.is_none()) {
        return;
    }
    let asked = havoc_registers_asked_about(lifted);
    for lp in 0..lifted.loops.len() {
        let (Some(Some(summary)), Some(Some(entered))) = (lifted.loops.get(lp), lifted.loop_entry_pc.get(lp)) else { continue };
        let Some(mut step) = summary.havoc_step.clone() else { continue };
        // Only registers some question depends on are worth a guess (a running sum or a
        // loaded value carried round a loop is havoc too, and nothing asks about it).
        step.regs.retain(|(r, _, _)| asked.contains(&Sym::Havoc { lp: lp as LoopId, reg: *r }));
        if step.regs.is_empty() {
            continue;
        }
        let entered = *entered;
        let lp = lp as LoopId;
        let candidates = candidates(&mut lifted.exprs, lp, &step);
        if candidates.is_empty() {
            continue;
        }
        let Some(kept) = houdini(&lifted.exprs, bind, solver, timeout, budget, entered, step.latch_pc, &candidates) else { continue };
        if kept.is_empty() {
            continue;
        }
        let x = &mut lifted.exprs;
        let mut all = x.boolean(true);
        for &c in &kept {
            all = x.and(all, candidates[c].at_havoc);
        }
        let not_entered = x.not(entered);
        let fact = x.or(not_entered, all);
        lifted.havoc_facts.push((lp, fact));
        crate::trace::line(|| format!("loop {lp}: {} of {} invariant candidates proved", kept.len(), candidates.len()));
    }
}

/// The havoc symbols the questions depend on: in an access's offset or path condition, a
/// barrier's or a warp collective's path condition, or a warp collective's mask.
fn havoc_registers_asked_about(lifted: &Lifted) -> HashSet<Sym> {
    let roots = lifted
        .accesses
        .iter()
        .flat_map(|a| [Some(a.pc), a.offset])
        .flatten()
        .chain(lifted.barriers.iter().map(|b| b.pc))
        .chain(lifted.warp_ops.iter().flat_map(|w| [w.pc, w.mask]));
    let mut seen = HashSet::new();
    for root in roots {
        seen.extend(lifted.exprs.symbols(root).into_iter().filter(|s| matches!(s, Sym::Havoc { .. })));
    }
    seen
}

/// The guesses about loop `lp`'s havoc registers (see the module comment).
fn candidates(x: &mut Exprs, lp: LoopId, step: &HavocStep) -> Vec<Candidate> {
    let mut at_entry = HashMap::new();
    let mut at_latch = HashMap::new();
    let mut at_havoc = HashMap::new();
    let mut heads = Vec::new();
    for &(r, init, next) in step.regs.iter().take(MAX_REGS) {
        let Some((h, bits)) = x.find_var(Sym::Header { lp, reg: r }) else { continue };
        at_entry.insert(Sym::Header { lp, reg: r }, init);
        at_latch.insert(Sym::Header { lp, reg: r }, next);
        at_havoc.insert(Sym::Header { lp, reg: r }, x.var(Sym::Havoc { lp, reg: r }, bits));
        heads.push((h, bits, init));
    }
    let mut guesses = Vec::new();
    for &(h, bits, _) in &heads {
        let zero = x.konst(0, bits);
        let mut bounds = vec![zero];
        bounds.extend(heads.iter().filter(|o| o.1 == bits).map(|o| o.2));
        for b in bounds {
            guesses.push(x.cmp(CmpOp::GeS, h, b));
            guesses.push(x.cmp(CmpOp::LeS, h, b));
        }
        for &(other, other_bits, _) in &heads {
            if other != h && other_bits == bits {
                guesses.push(x.cmp(CmpOp::LtS, h, other));
                guesses.push(x.cmp(CmpOp::LeS, h, other));
            }
        }
    }
    guesses.sort_unstable();
    guesses.dedup();
    let mut out = Vec::new();
    for g in guesses {
        if x.as_bool(g).is_some() {
            continue;
        }
        let c = Candidate { at_header: g, at_entry: x.subst(g, &at_entry), at_latch: x.subst(g, &at_latch), at_havoc: x.subst(g, &at_havoc) };
        if x.as_bool(c.at_havoc).is_none() {
            out.push(c);
        }
    }
    out
}

/// The candidates (indices) that hold on entry and are kept by every iteration, or `None`
/// when a query went unanswered.
#[allow(clippy::too_many_arguments)]
fn houdini(
    x: &Exprs,
    bind: &Binding,
    solver: &mut ::smt::Solver,
    timeout: Duration,
    budget: &Budget,
    entered: ExprId,
    latch_pc: ExprId,
    candidates: &[Candidate],
) -> Option<Vec<usize>> {
    let mut alive: Vec<usize> = (0..candidates.len()).collect();
    // Base: entering the loop, every kept candidate holds of the entry values.
    for _ in 0..MAX_ROUNDS {
        let goals: Vec<ExprId> = alive.iter().map(|&c| candidates[c].at_entry).collect();
        let broken = counterexample(x, bind, solver, timeout, budget, &[entered], &goals)?;
        if broken.is_empty() {
            break;
        }
        alive = alive.into_iter().enumerate().filter(|(i, _)| !broken.contains(i)).map(|(_, c)| c).collect();
        if alive.is_empty() {
            return Some(alive);
        }
    }
    // Step: assuming the kept candidates of an iteration's header values, the latch keeps them.
    for _ in 0..MAX_ROUNDS {
        let mut hyps: Vec<ExprId> = alive.iter().map(|&c| candidates[c].at_header).collect();
        hyps.push(latch_pc);
        let goals: Vec<ExprId> = alive.iter().map(|&c| candidates[c].at_latch).collect();
        let broken = counterexample(x, bind, solver, timeout, budget, &hyps, &goals)?;
        if broken.is_empty() {
            return Some(alive);
        }
        alive = alive.into_iter().enumerate().filter(|(i, _)| !broken.contains(i)).map(|(_, c)| c).collect();
        if alive.is_empty() {
            return Some(alive);
        }
    }
    None
}

/// Asks whether `hyps` imply every one of `goals` for one thread, under the launch and the
/// interface's facts: `Some(vec![])` when they do, else the positions of the goals the
/// solver's counterexample breaks; `None` when the solver gives no answer (or a model that
/// breaks none of them, which would never end).
fn counterexample(
    x: &Exprs,
    bind: &Binding,
    solver: &mut ::smt::Solver,
    timeout: Duration,
    budget: &Budget,
    hyps: &[ExprId],
    goals: &[ExprId],
) -> Option<Vec<usize>> {
    // A goal that folded to a constant needs no solver (and has no name a model reports).
    let folded: Vec<usize> = goals.iter().enumerate().filter(|(_, &g)| x.as_bool(g) == Some(false)).map(|(i, _)| i).collect();
    if !folded.is_empty() {
        return Some(folded);
    }
    budget.check().ok()?;
    let mut q = Query::new(x, bind, 1);
    for &h in hyps {
        let term = q.enc.term(h, 1);
        q.asserts.push(term);
    }
    let names: Vec<String> = goals.iter().map(|&g| q.enc.term(g, 1)).collect();
    q.asserts.push(format!("(not (and true {}))", names.join(" ")));
    for n in &names {
        q.want(n.clone());
    }
    let roots: Vec<ExprId> = hyps.iter().chain(goals).copied().collect();
    q.add_param_facts(x, bind, &roots);
    let query = q.to_smt().ok()?;
    let (outcome, spent) = crate::smt::ask(solver, &query, timeout, &|| budget.check().is_err());
    crate::trace::line(|| {
        let what = match &outcome {
            crate::smt::Outcome::Sat(_) => "sat".to_string(),
            other => format!("{other:?}"),
        };
        format!("invariant query of {} goals: {what} in {:.1} ms", goals.len(), spent.as_secs_f64() * 1e3)
    });
    match outcome {
        crate::smt::Outcome::Unsat => Some(Vec::new()),
        crate::smt::Outcome::Sat(model) => {
            let broken: Vec<usize> = names.iter().enumerate().filter(|(_, n)| model.get(n.as_str()) == Some(&0)).map(|(i, _)| i).collect();
            (!broken.is_empty()).then_some(broken)
        }
        _ => None,
    }
}

/// Whether no thread of any launch the binding allows meets `pc`, as the solver shows within
/// `timeout`: an arm of a select between pointers whose condition contradicts the select's own
/// test (`p = m ? m + o : 0; q = p ? p : w`: the null arm of `q` is never taken). Unknown is
/// false.
pub fn never_taken(x: &Exprs, bind: &Binding, solver: &mut ::smt::Solver, pc: ExprId, timeout: std::time::Duration, budget: &Budget) -> bool {
    if x.as_bool(pc) == Some(false) {
        return true;
    }
    if budget.check().is_err() {
        return false;
    }
    let mut q = Query::new(x, bind, 1);
    let term = q.enc.term(pc, 1);
    q.asserts.push(term);
    q.add_param_facts(x, bind, &[pc]);
    let Ok(query) = q.to_smt() else { return false };
    let (outcome, _) = crate::smt::ask(solver, &query, timeout, &|| budget.check().is_err());
    matches!(outcome, crate::smt::Outcome::Unsat)
}
