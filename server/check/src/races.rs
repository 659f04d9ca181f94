//! Data races: two distinct threads, the same bytes, the same phase, at least one write, not
//! both atomic.
//!
//! For every pair of accesses to the same array or buffer, one query asks for two threads (of the
//! same block for `.shared`; of the whole launch for `.global`) whose path conditions hold, whose
//! loop iterations put both accesses in one barrier interval, and whose byte ranges overlap.
//! Cheap cases never reach the solver: different bases, two reads, two atomics, read-only spaces.

use crate::ctx::{Answer, Ctx, Undecided};
use crate::encode::bv;
use crate::ledger::FirstWitness;
use crate::query::{distinct_tids, same_block, Query};
use crate::witness::{Seed, Term, ThreadSpec, Witness};
use model::expr::Sym;
use model::expr::{ExprId, Exprs};
use model::ops::Space;
use model::phases::IterRel;
use model::symbolic::{Access, AccessKind, Base, Lifted};

/// A race between accesses `a1` (thread 0 of the witness) and `a2` (thread 1).
pub struct RaceWitness {
    pub a1: usize,
    pub a2: usize,
    pub witness: Witness,
    /// The race exists only for some values read from these buffers.
    pub input_dependent: Vec<String>,
}

/// The loads an expression depends on, as seeds for thread `t`; their names are wanted.
pub(crate) fn seeds_for(ctx: &Ctx, q: &mut Query, roots: &[ExprId], t: u8) -> Vec<Seed> {
    let mut out = Vec::new();
    for &e in roots {
        for (sym, acc) in ctx.loads_in(e) {
            let (Some(buffer @ (model::symbolic::Base::Param(_) | model::symbolic::Base::Field { .. })), Some(off)) = (acc.base, acc.offset) else { continue };
            let Some((var, bits)) = ctx.l.exprs.find_var(sym) else { continue };
            if bits == 0 {
                continue;
            }
            let offset = Term::of(q.enc.term(off, t));
            let value = Term::of(q.enc.term(var, t));
            for term in [&offset, &value] {
                if let Term::Name(n) = term {
                    if !n.starts_with('(') {
                        q.want(n.clone());
                    }
                }
            }
            out.push(Seed { buffer, offset, value, bytes: bits / 8 });
        }
    }
    out
}

pub enum RaceOutcome {
    Witness(RaceWitness),
    /// The pair could not be decided.
    Unknown {
        a1: usize,
        a2: usize,
        why: Undecided,
    },
}

/// Caps the work per kernel: after this many races the rest are not searched.
const MAX_RACES: usize = 16;

fn may_race(a: &Access, b: &Access) -> bool {
    if a.space != b.space || !matches!(a.space, Space::Shared | Space::Global) {
        return false;
    }
    if a.kind == AccessKind::Read && b.kind == AccessKind::Read {
        return false;
    }
    if matches!(a.kind, AccessKind::Atomic(_)) && matches!(b.kind, AccessKind::Atomic(_)) {
        return false;
    }
    match (a.base, b.base) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The pairs of accesses (`i <= j`) that could race, in the order they are checked and
/// reported.
pub fn pairs(l: &Lifted) -> Vec<(usize, usize)> {
    let n = l.accesses.len();
    (0..n).flat_map(|i| (i..n).map(move |j| (i, j))).filter(|&(i, j)| may_race(&l.accesses[i], &l.accesses[j])).collect()
}

/// Pairs of one key show the same bug: two source lines on one array or buffer.
pub type LinesKey = (Option<u32>, Option<u32>, Option<Base>);

pub fn lines_key(l: &Lifted, (i, j): (usize, usize)) -> LinesKey {
    let (a, b) = (&l.accesses[i], &l.accesses[j]);
    (a.line, b.line, a.base)
}

/// Which pairs are still worth checking when pairs are checked in parallel.
///
/// Pairs are reported as if checked one after another: one witness per pair of source lines
/// (the rest is noise), and no pair after the [`MAX_RACES`]th witness. A worker asks
/// [`RaceLedger::worth_checking`] before it checks pair number `p` (see [`crate::ledger`]), and
/// [`select`] applies the sequential rule, with its cap, to the outcomes exactly. Where an
/// undecided pair settles its lines too (`schedule::Shared::undecided_settles_a_line`), the
/// first undecided pair of a pair of lines is the last one checked, as the first witness is.
pub struct RaceLedger {
    witnessed: FirstWitness<LinesKey>,
    undecided: Option<FirstWitness<LinesKey>>,
}

impl RaceLedger {
    pub fn new(undecided_settles_a_line: bool) -> RaceLedger {
        RaceLedger { witnessed: FirstWitness::default(), undecided: undecided_settles_a_line.then(FirstWitness::default) }
    }

    pub fn worth_checking(&self, l: &Lifted, pairs: &[(usize, usize)], p: usize) -> bool {
        let key = lines_key(l, pairs[p]);
        self.witnessed.worth_checking(Some(&key), p)
            && self.undecided.as_ref().is_none_or(|u| u.worth_checking(Some(&key), p))
            && self.witnessed.keys_witnessed_before(p) < MAX_RACES
    }

    /// Records the outcome of pair number `p`.
    pub fn record(&self, l: &Lifted, pairs: &[(usize, usize)], p: usize, outcome: &Option<RaceOutcome>) {
        match (outcome, &self.undecided) {
            (Some(RaceOutcome::Witness(_)), _) => self.witnessed.record_witness(Some(lines_key(l, pairs[p])), p),
            (Some(RaceOutcome::Unknown { .. }), Some(undecided)) => undecided.record_witness(Some(lines_key(l, pairs[p])), p),
            _ => {}
        }
    }
}

/// The outcomes to report, from the outcomes of `pairs` (`None` where a pair was not checked):
/// what checking the pairs one after another would report (with an undecided pair settling its
/// lines when `undecided_settles_a_line`, see [`RaceLedger`]).
pub fn select(l: &Lifted, pairs: &[(usize, usize)], outcomes: Vec<Option<Option<RaceOutcome>>>, undecided_settles_a_line: bool) -> Vec<RaceOutcome> {
    let witness = |o: &RaceOutcome| matches!(o, RaceOutcome::Witness(_));
    select_by(outcomes, |p| lines_key(l, pairs[p]), witness, undecided_settles_a_line)
}

/// [`select`] over any keys: `witness` tells a witness from an undecided outcome.
fn select_by<K: std::hash::Hash + Eq, O>(
    outcomes: Vec<Option<Option<O>>>,
    key: impl Fn(usize) -> K,
    witness: impl Fn(&O) -> bool,
    undecided_settles: bool,
) -> Vec<O> {
    let mut out = Vec::new();
    let mut lines_done = std::collections::HashSet::new();
    let mut lines_undecided = std::collections::HashSet::new();
    for (p, outcome) in outcomes.into_iter().enumerate() {
        if lines_done.len() >= MAX_RACES {
            break;
        }
        let key = key(p);
        if lines_done.contains(&key) || lines_undecided.contains(&key) {
            continue;
        }
        // A pair the ledger let through is checked; one it skipped is skipped here too.
        let Some(Some(o)) = outcome else { continue };
        if witness(&o) {
            lines_done.insert(key);
        } else if undecided_settles {
            lines_undecided.insert(key);
        }
        out.push(o);
    }
    out
}

/// The loop counters a phase relation mentions, as expressions.
pub fn phase_counters(ctx: &Ctx, phase: &[Vec<IterRel>]) -> Vec<ExprId> {
    let mut loops: Vec<model::cfg::LoopId> = phase
        .iter()
        .flatten()
        .map(|r| match *r {
            IterRel::Eq(lp) => lp,
            IterRel::Succ { lp, .. }
            | IterRel::Gt { lp, .. }
            | IterRel::Ge { lp, .. }
            | IterRel::Zero { lp, .. }
            | IterRel::Pos { lp, .. }
            | IterRel::NotEntered { lp, .. } => lp,
        })
        .collect();
    loops.sort();
    loops.dedup();
    loops.into_iter().filter_map(|lp| ctx.l.exprs.find_var(Sym::Counter(lp)).map(|(e, _)| e)).collect()
}

/// SMT constraint for "in the same phase": one of the ways (a disjunction), with the ways of
/// `phase` it keeps. Ways that repeat, or that add conditions to another way (`A and B` beside
/// `A`), are dropped: the phase relation lists one way per pair of paths, which for code after
/// several loops can be dozens of copies of a few conditions.
fn phase_formula(q: &mut Query, l: &model::symbolic::Lifted, phase: &[Vec<IterRel>]) -> (String, Vec<Vec<IterRel>>) {
    let mut ways: Vec<(Vec<String>, &Vec<IterRel>)> = phase.iter().map(|rels| (iter_parts(q, l, rels), rels)).collect();
    for (w, _) in &mut ways {
        w.sort();
        w.dedup();
    }
    ways.sort_by_key(|(w, _)| w.len());
    let mut kept: Vec<(Vec<String>, &Vec<IterRel>)> = Vec::new();
    for (w, rels) in ways {
        if !kept.iter().any(|(k, _)| k.iter().all(|p| w.contains(p))) {
            kept.push((w, rels));
        }
    }
    let rels = kept.iter().map(|(_, rels)| (*rels).clone()).collect();
    let disjuncts: Vec<String> = kept.into_iter().map(|(w, _)| conjunction(w)).collect();
    let term = if disjuncts.is_empty() { "false".to_string() } else { format!("(or {})", disjuncts.join(" ")) };
    (term, rels)
}

fn conjunction(parts: Vec<String>) -> String {
    if parts.is_empty() {
        "true".into()
    } else {
        format!("(and {})", parts.join(" "))
    }
}

/// SMT constraints on loop counters for one way of being in the same phase (a conjunction).
fn iter_parts(q: &mut Query, l: &model::symbolic::Lifted, rels: &[IterRel]) -> Vec<String> {
    let mut parts = Vec::new();
    for r in rels {
        let (lp, second) = match *r {
            IterRel::Eq(lp) => (lp, true),
            IterRel::NotEntered { lp, second } => {
                if let Some(Some(entry)) = l.loop_entry_pc.get(lp as usize) {
                    let t = q.enc.term(*entry, if second { 2 } else { 1 });
                    parts.push(format!("(not {t})"));
                }
                continue;
            }
            IterRel::Succ { lp, second }
            | IterRel::Gt { lp, second }
            | IterRel::Ge { lp, second }
            | IterRel::Zero { lp, second }
            | IterRel::Pos { lp, second } => (lp, second),
        };
        let k1 = q.enc.sym(Sym::Counter(lp), model::symbolic::COUNTER_BITS, 1);
        let k2 = q.enc.sym(Sym::Counter(lp), model::symbolic::COUNTER_BITS, 2);
        let (lo, hi) = if second { (&k1, &k2) } else { (&k2, &k1) };
        let one = bv(1, model::symbolic::COUNTER_BITS);
        let zero = bv(0, model::symbolic::COUNTER_BITS);
        parts.push(match r {
            IterRel::Eq(_) => format!("(= {k1} {k2})"),
            IterRel::Succ { .. } => format!("(= {hi} (bvadd {lo} {one}))"),
            IterRel::Gt { .. } => format!("(bvugt {hi} {lo})"),
            IterRel::Ge { .. } => format!("(bvuge {hi} {lo})"),
            IterRel::Zero { .. } => format!("(= {} {zero})", if second { &k2 } else { &k1 }),
            IterRel::Pos { .. } => format!("(distinct {} {zero})", if second { &k2 } else { &k1 }),
            IterRel::NotEntered { .. } => unreachable!("handled above"),
        });
    }
    parts
}

/// Whether path conditions `pc1` and `pc2` both hold only for one and the same thread of a
/// block of at most `block` threads along each dimension: a dimension has one thread, or both
/// conditions require the same index along it (`tid.x == 0` among their conjuncts).
fn only_one_thread(x: &Exprs, block: [u64; 3], pc1: ExprId, pc2: ExprId) -> bool {
    let (p1, p2) = (pinned_thread_index(x, pc1), pinned_thread_index(x, pc2));
    (0..3).all(|d| block[d] == 1 || (p1[d].is_some() && p1[d] == p2[d]))
}

/// The thread index along each dimension that condition `pc` requires, from its conjuncts
/// `tid.d == c` (or `!(tid.d != c)`).
fn pinned_thread_index(x: &Exprs, pc: ExprId) -> [Option<u64>; 3] {
    use model::expr::Node;
    use model::ops::CmpOp;
    let mut pinned = [None; 3];
    let mut stack = vec![(pc, true)];
    while let Some((e, positive)) = stack.pop() {
        match (x.node(e).clone(), positive) {
            (Node::And(l, r), true) => stack.extend([(l, true), (r, true)]),
            (Node::Not(inner), _) => stack.push((inner, !positive)),
            (Node::Cmp { op, a, b }, _) if (op == CmpOp::Eq) == positive && matches!(op, CmpOp::Eq | CmpOp::Ne) => {
                let tid = |v: ExprId| match x.node(v) {
                    Node::Var { sym: Sym::Special(model::ops::Special::Tid(d)), .. } => Some(*d as usize),
                    _ => None,
                };
                let pin = match (tid(a), tid(b)) {
                    (Some(d), None) => x.as_const(b).map(|c| (d, c)),
                    (None, Some(d)) => x.as_const(a).map(|c| (d, c)),
                    _ => None,
                };
                if let Some((d, c)) = pin.filter(|(d, _)| *d < 3) {
                    pinned[d] = Some(c);
                }
            }
            _ => {}
        }
    }
    pinned
}

/// Decides whether accesses `i` and `j` race: `None` when they cannot.
pub fn check_pair(ctx: &mut Ctx, i: usize, j: usize) -> Option<RaceOutcome> {
    let (a, b) = (&ctx.l.accesses[i], &ctx.l.accesses[j]);
    let (Some(o1), Some(o2)) = (a.offset, b.offset) else { return None };
    let phase = ctx.phases.same_phase(i, j);
    if a.space == Space::Shared && phase.is_empty() {
        return None;
    }
    if let Some(launch) = &ctx.launch {
        if let Some(decided) = crate::enumerate::race(ctx, launch, i, j) {
            ctx.enumerated += 1;
            return match decided {
                crate::enumerate::Decided::Holds => None,
                crate::enumerate::Decided::Witness(witness) => Some(RaceOutcome::Witness(RaceWitness { a1: i, a2: j, witness, input_dependent: vec![] })),
            };
        }
    }
    let x = &ctx.l.exprs;
    // The two threads of a race in shared memory are distinct threads of one block: accesses
    // that only one thread of each block makes (`if (threadIdx.x == 0)`, a block's serial
    // prefix sum) cannot race with each other, and each question would cost the solver its
    // query (vLLM's MoE alignment: 170 questions about thread 0's loop over experts).
    if a.space == Space::Shared && only_one_thread(x, ctx.bind.block.map(|d| d.hi), a.pc, b.pc) {
        return None;
    }
    // Accesses that keep to rows of one stride overlap only within a row: the question is
    // asked of threads in the same row, each row's terms encoded once (see `crate::rows`).
    let rows = if a.space == b.space { crate::rows::common(ctx, i, j) } else { Vec::new() };
    let mut q = Query::new(x, ctx.bind, 2);
    if a.space == Space::Shared {
        q.enc.assume_same_block();
    }
    for (r1, r2) in &rows {
        if r1.index == r2.index {
            q.enc.assume_same_value(r1.index.e);
        }
    }
    for (r1, r2) in &rows {
        let same = if r1.index == r2.index {
            format!("(= {} {})", q.enc.term(r1.index.e, 1), q.enc.own_term(r1.index.e, 2))
        } else {
            format!("(= {} {})", q.factor_term(x, &r1.index, 1), q.factor_term(x, &r2.index, 2))
        };
        q.asserts.push(same);
    }
    let pc1 = q.enc.term(a.pc, 1);
    let pc2 = q.enc.term(b.pc, 2);
    let t1 = q.enc.term(o1, 1);
    let t2 = q.enc.term(o2, 2);
    let (mut phase_term, kept_ways) = phase_formula(&mut q, ctx.l, &phase);
    let warp_phase = ctx.phases.same_warp_phase(i, j);
    let masked_phase = ctx.phases.same_masked_warp_phase(i, j).filter(|_| masks_are_thread_functions(ctx));
    if warp_phase.is_some() || masked_phase.is_some() {
        // Lanes of one warp are also ordered by full-warp syncs, and by the syncs of any mask
        // when every such mask names both lanes.
        let mut warp_term = match &warp_phase {
            Some(w) => phase_formula(&mut q, ctx.l, w).0,
            None => phase_term.clone(),
        };
        if let Some(masked) = &masked_phase {
            let (masked_term, _) = phase_formula(&mut q, ctx.l, masked);
            let in_masks = both_lanes_in_every_mask(&mut q, ctx);
            warp_term = format!("(ite {in_masks} {masked_term} {warp_term})");
        }
        let same_warp = format!("(= (bvlshr {} (_ bv5 32)) (bvlshr {} (_ bv5 32)))", q.linear_tid(1), q.linear_tid(2));
        phase_term = format!("(ite {same_warp} {warp_term} {phase_term})");
    }
    q.asserts.push(pc1);
    q.asserts.push(pc2);
    let sb = same_block();
    let dt = distinct_tids();
    match a.space {
        Space::Shared => {
            q.asserts.push(sb);
            q.asserts.push(dt);
            q.asserts.push(phase_term);
        }
        _ => {
            // Blocks are unordered: any two threads of different blocks share every phase.
            q.asserts.push(format!("(or (not {sb}) (and {dt} {phase_term}))"));
        }
    }
    let (w1, w2) = (bv(a.bytes as u64, 64), bv(b.bytes as u64, 64));
    q.asserts.push(format!("(bvult {t1} (bvadd {t2} {w2}))"));
    q.asserts.push(format!("(bvult {t2} (bvadd {t1} {w1}))"));
    let mut roots = vec![a.pc, b.pc, o1, o2];
    if masked_phase.is_some() {
        roots.extend(ctx.phases.sync_masks.iter().copied());
    }
    // The phase relation can name the counter of a loop an access comes after (its exit
    // iteration): that loop's exit fact is needed even if the access itself does not mention it.
    // Only the ways the formula kept: a loop named only in a way that merely adds conditions
    // to another is not in the query, and its exit fact would only cost the solver (vLLM's
    // small-batch MoE alignment: an earlier 64-bit grid-stride loop's exit fact, a 64-bit
    // product of its counter and the block size, took a race question from 0.4 s to 2.5 s).
    let counters = phase_counters(ctx, &kept_ways);
    let with = |base: [ExprId; 2]| base.iter().copied().chain(counters.iter().copied()).collect::<Vec<_>>();
    roots.extend(ctx.assert_facts(&mut q, a.block, &with([a.pc, o1]), 1));
    roots.extend(ctx.assert_facts(&mut q, b.block, &with([b.pc, o2]), 2));
    ctx.add_load_facts(&mut q, &roots, 2);
    q.add_param_facts(x, ctx.bind, &roots);
    q.add_stride_lemmas(x, ctx.bind);
    let index_lemmas = q.add_index_lemmas(x, o1, o2);
    crate::trace::line(|| format!("race question, lines {:?} and {:?}: {index_lemmas} row-major lemmas", a.line, b.line));
    for (t, acc) in [(1u8, a), (2u8, b)] {
        for &lp in &acc.loops {
            let k = q.enc.sym(Sym::Counter(lp), model::symbolic::COUNTER_BITS, t);
            q.want(k);
        }
    }
    let mut seeds = seeds_for(ctx, &mut q, &[a.pc, o1], 1);
    seeds.extend(seeds_for(ctx, &mut q, &[b.pc, o2], 2));
    // Named offsets, so the model always has their values.
    for (name, term) in [("off_1", &t1), ("off_2", &t2)] {
        q.enc.declare(name, 64);
        q.asserts.push(format!("(= {name} {term})"));
        q.want(name.into());
    }
    let offsets = [Term::Name("off_1".into()), Term::Name("off_2".into())];
    // Witnesses inside the array or buffer first: the replay can show those (past its end,
    // the accesses are out of bounds, which the bounds check reports).
    let mut inside = Vec::new();
    if let Some(size) = a.base.and_then(|base| crate::bounds::declared_size(ctx, base)) {
        let limit = q.size_term(x, &size);
        for (name, acc) in [("off_1", a), ("off_2", b)] {
            inside.push(format!("(bvule (bvadd {name} {}) {limit})", bv(acc.bytes as u64, 64)));
        }
    }
    match ctx.run_witness(&q, 2, &inside, crate::ctx::Alike::race(a.line, b.line)) {
        Answer::Unsat => {
            ctx.relied_on_no_wrap |= index_lemmas > 0 || rows.iter().any(|(r1, r2)| !(r1.exact && r2.exact));
            None
        }
        Answer::Unknown(why) => Some(RaceOutcome::Unknown { a1: i, a2: j, why }),
        Answer::Sat(model) => {
            let mut input_dependent: Vec<String> = Vec::new();
            for e in [o1, o2] {
                // Buffers whose contents the interface fixes are not open to assumptions.
                for (_, acc) in ctx.loads_in(e).into_iter().filter(|(s, _)| crate::fixed::fixed_load(ctx.k, ctx.l, ctx.bind, *s).is_none()) {
                    let name = ctx.target_name(acc);
                    if !input_dependent.contains(&name) {
                        input_dependent.push(name);
                    }
                }
            }
            let threads =
                [ThreadSpec { copy: 1, loops: &a.loops, offset: Some(&offsets[0]) }, ThreadSpec { copy: 2, loops: &b.loops, offset: Some(&offsets[1]) }];
            let witness = Witness::from_model(&model, &threads, ctx.k.params.len() as u32, &seeds);
            Some(RaceOutcome::Witness(RaceWitness { a1: i, a2: j, witness, input_dependent }))
        }
    }
}

pub fn parse_const(term: &str) -> Option<u64> {
    let rest = term.strip_prefix("(_ bv")?;
    rest.split_whitespace().next()?.parse().ok()
}

/// Whether the masks of the masked warp syncs are functions of the thread and the launch
/// (ids, sizes, parameters) alone: then both copies of a query compute them, and a pair of
/// lanes that every mask names is ordered by the syncs ([`model::phases::Phases::masked_warp_reaches`]).
/// A mask read from memory, built in a loop or from a clock is not followed: its syncs order
/// nothing here.
pub fn masks_are_thread_functions(ctx: &Ctx) -> bool {
    use model::ops::Special;
    ctx.phases
        .sync_masks
        .iter()
        .all(|&m| ctx.l.exprs.symbols(m).iter().all(|s| matches!(s, Sym::Special(sp) if *sp != Special::Timer) || matches!(s, Sym::Param { .. })))
}

/// `(and ...)`: the lanes of threads 1 and 2 are in every masked warp sync's mask, as each
/// thread computes it.
fn both_lanes_in_every_mask(q: &mut Query, ctx: &Ctx) -> String {
    let lanes = [format!("(bvand {} (_ bv31 32))", q.linear_tid(1)), format!("(bvand {} (_ bv31 32))", q.linear_tid(2))];
    let mut conj = Vec::new();
    for &m in &ctx.phases.sync_masks {
        for t in [1u8, 2] {
            let mask = q.enc.term(m, t);
            for lane in &lanes {
                conj.push(format!("(not (= (bvand {mask} (bvshl (_ bv1 32) {lane})) (_ bv0 32)))"));
            }
        }
    }
    if conj.is_empty() {
        "true".into()
    } else {
        format!("(and {})", conj.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::{only_one_thread, select_by};

    /// What checking pairs one after another reports: per key, nothing after the first witness,
    /// and, where an undecided pair settles its key, nothing after the first undecided pair.
    /// Pairs the ledger skipped (`None`) are skipped.
    #[test]
    fn a_key_ends_at_its_first_witness_and_where_asked_at_its_first_undecided_pair() {
        // (key, outcome): 'w' a witness, 'u' undecided.
        let outcomes = || vec![Some(Some((1, 'u'))), Some(Some((1, 'w'))), Some(Some((2, 'w'))), Some(Some((2, 'u'))), None, Some(Some((1, 'w')))];
        let keys = [1, 1, 2, 2, 1, 1];
        let run = |settles| select_by(outcomes(), |p| keys[p], |o: &(u8, char)| o.1 == 'w', settles);
        assert_eq!(run(false), vec![(1, 'u'), (1, 'w'), (2, 'w')]);
        assert_eq!(run(true), vec![(1, 'u'), (2, 'w')]);
    }
    use model::expr::{Exprs, Sym};
    use model::ops::{CmpOp, Special};

    /// Accesses under `threadIdx.x == 0` in a one-dimensional block are one thread's; under
    /// different indices, or with a dimension left open, they are two threads'.
    #[test]
    fn accesses_that_one_thread_makes_are_told_from_conditions_on_its_index() {
        let mut x = Exprs::new();
        let tid = |x: &mut Exprs, d: u8| x.var(Sym::Special(Special::Tid(d)), 32);
        let (tx, ty) = (tid(&mut x, 0), tid(&mut x, 1));
        let (zero, one) = (x.konst(0, 32), x.konst(1, 32));
        let n = x.var(Sym::Param { index: 0, offset: 0 }, 32);
        let first = x.cmp(CmpOp::Eq, tx, zero);
        let in_range = x.cmp(CmpOp::LtS, one, n);
        let guarded = x.and(first, in_range);
        let not_other = {
            let ne = x.cmp(CmpOp::Ne, zero, tx);
            x.not(ne)
        };
        let second = x.cmp(CmpOp::Eq, tx, one);
        let row_zero = x.cmp(CmpOp::Eq, ty, zero);
        let both = x.and(first, row_zero);
        assert!(only_one_thread(&x, [256, 1, 1], guarded, not_other));
        assert!(!only_one_thread(&x, [256, 1, 1], guarded, second), "threads 0 and 1");
        assert!(!only_one_thread(&x, [256, 1, 1], guarded, in_range), "any thread");
        assert!(!only_one_thread(&x, [32, 8, 1], guarded, guarded), "one thread per row of a 2-D block");
        assert!(only_one_thread(&x, [32, 8, 1], both, both));
        let either = x.or(first, in_range);
        assert!(!only_one_thread(&x, [256, 1, 1], either, either), "a disjunction pins nothing");
    }
}
