//! What every check needs: the kernel, its lifted model and phases, the interface binding, the
//! solver, and the helpers that turn model symbols into query constraints.

use crate::bind::Binding;
use crate::query::Query;
use crate::smt::{SatResult, Solver};
use model::cfg::{BlockId, LoopId};
use model::expr::{ExprId, Sym};
use model::phases::Phases;
use model::symbolic::{Access, AccessKind, Base, Lifted};
use model::Kernel;
use spec::Assumption;
use std::collections::{BTreeSet, HashMap};

/// Enumerated points per (access, whole grid?, counters), or `None` where enumeration declined.
pub type PointCache = std::cell::RefCell<HashMap<(usize, bool, Vec<ExprId>), Option<std::rc::Rc<Vec<crate::enumerate::Point>>>>>;

pub struct Ctx<'a> {
    pub k: &'a Kernel,
    pub l: &'a Lifted,
    pub phases: &'a Phases,
    pub bind: &'a Binding,
    pub solver: &'a mut Solver,
    pub timeout_ms: u64,
    pub queries: u64,
    /// Time spent waiting for the solver.
    pub solver_time: std::time::Duration,
    /// Polled before every query and during enumeration: when it runs out, the remaining
    /// checks are answered `Unknown` (uncertified); when it is cancelled, the result is
    /// discarded by the caller.
    pub budget: model::budget::Budget,
    /// Checks decided by exhaustive enumeration instead of the solver.
    pub enumerated: u64,
    /// The launch, when the interface fixes it (enables enumeration).
    pub launch: Option<crate::enumerate::Launch>,
    /// Enumerated points per (access, whole grid?), shared by the pairs an access is in.
    pub points: PointCache,
    /// Bases written somewhere in the kernel (others are read-only).
    written: BTreeSet<Base>,
    /// Per exit fact: the blocks reachable from the loop's exit.
    after_loop: Vec<(LoopId, ExprId, Vec<bool>)>,
}

/// The outcome of one query.
pub enum Answer {
    Sat(HashMap<String, u64>),
    Unsat,
    Unknown(Undecided),
}

/// Why a query has no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undecided {
    /// The solver gave up or did not answer in time.
    Timeout { millis: u64 },
    /// The kernel's budget ran out before the query was asked.
    Budget,
    /// The solver failed or is missing.
    Failure(String),
    /// The caller no longer wants the result.
    Cancelled,
}

impl From<model::budget::Stop> for Undecided {
    fn from(stop: model::budget::Stop) -> Undecided {
        match stop {
            model::budget::Stop::Cancelled => Undecided::Cancelled,
            model::budget::Stop::Deadline => Undecided::Budget,
        }
    }
}

impl Undecided {
    /// The uncertified reason for an undecided `question`.
    pub fn reason(self, question: crate::report::Question) -> crate::report::Reason {
        use crate::report::Reason;
        match self {
            Undecided::Timeout { millis } => Reason::SolverTimeout { question, millis },
            // A cancelled check's report is discarded; if it is shown anyway, it is unfinished.
            Undecided::Budget | Undecided::Cancelled => Reason::BudgetExhausted { question },
            Undecided::Failure(message) => Reason::SolverFailure { question, message },
        }
    }
}

impl<'a> Ctx<'a> {
    pub fn new(k: &'a Kernel, l: &'a Lifted, phases: &'a Phases, bind: &'a Binding, solver: &'a mut Solver, timeout_ms: u64) -> Ctx<'a> {
        let written = l.accesses.iter().filter(|a| a.kind != AccessKind::Read).filter_map(|a| a.base).collect();
        let after_loop = l
            .exit_facts
            .iter()
            .map(|&(lp, fact)| {
                let exits: Vec<BlockId> = k.cfg.loops[lp as usize].exits.iter().map(|e| e.1).collect();
                (lp, fact, reachable_from(k, &exits))
            })
            .collect();
        let mut ctx = Ctx {
            k,
            l,
            phases,
            bind,
            solver,
            timeout_ms,
            queries: 0,
            solver_time: Default::default(),
            budget: model::budget::Budget::unlimited(),
            enumerated: 0,
            launch: None,
            points: Default::default(),
            written,
            after_loop,
        };
        ctx.launch = crate::enumerate::Launch::of(&ctx);
        ctx
    }

    pub fn run(&mut self, q: &Query) -> Answer {
        if let Err(stop) = self.budget.check() {
            return Answer::Unknown(Undecided::from(stop));
        }
        self.queries += 1;
        let started = std::time::Instant::now();
        let answer = q.run(self.solver, self.timeout_ms);
        self.solver_time += started.elapsed();
        match answer {
            Ok(SatResult::Sat(m)) => Answer::Sat(m),
            Ok(SatResult::Unsat) => Answer::Unsat,
            Ok(SatResult::Unknown(_)) => Answer::Unknown(Undecided::Timeout { millis: self.timeout_ms }),
            Err(e) => Answer::Unknown(Undecided::Failure(e.to_string())),
        }
    }

    /// Like `run`, but a satisfiable query is asked again with small block indices and
    /// parameters, so the counterexample is easy to read and cheap to replay. Falls back to the
    /// first model when the small one does not exist.
    pub fn run_witness(&mut self, q: &mut Query, threads: u8) -> Answer {
        let first = self.run(q);
        let Answer::Sat(_) = first else { return first };
        let before = q.asserts.len();
        for t in 1..=threads {
            for d in ["x", "y", "z"] {
                q.asserts.push(format!("(bvule ctaid_{d}_{t} (_ bv3 32))"));
            }
        }
        for i in 0..self.k.params.len() as u32 {
            let s = Sym::Param { index: i, offset: 0 };
            if let Some((_, bits)) = self.l.exprs.find_var(s) {
                if bits > 16 && q.enc.is_declared(&crate::encode::sym_name(s, 0)) {
                    q.asserts.push(format!("(bvule {} {})", crate::encode::sym_name(s, 0), crate::encode::bv(1 << 16, bits)));
                }
            }
        }
        // Simplest first: a one-dimensional block of at most 256 threads.
        let simple = ["(= ntid_y (_ bv1 32))", "(= ntid_z (_ bv1 32))", "(bvule ntid_x (_ bv256 32))"];
        q.asserts.extend(simple.iter().map(|s| s.to_string()));
        let simplest = self.run(q);
        q.asserts.truncate(q.asserts.len() - simple.len());
        let small = match simplest {
            Answer::Sat(m) => Answer::Sat(m),
            _ => self.run(q),
        };
        q.asserts.truncate(before);
        match small {
            Answer::Sat(m) => Answer::Sat(m),
            _ => first,
        }
    }

    /// Facts about loops a site at `block` comes after (see `Lifted::exit_facts`).
    pub fn facts_for(&self, block: BlockId) -> Vec<ExprId> {
        self.after_loop.iter().filter(|(lp, _, reach)| !self.k.cfg.loops[*lp as usize].contains(block) && reach[block as usize]).map(|(_, f, _)| *f).collect()
    }

    /// The exit facts that matter for expressions `roots` at `block`: those of loops whose
    /// counter the roots (or an already chosen fact) mention. A fact about a counter nothing
    /// mentions constrains nothing and only costs the solver.
    pub fn relevant_facts(&self, block: BlockId, roots: &[ExprId]) -> Vec<(LoopId, ExprId)> {
        let candidates: Vec<(LoopId, ExprId)> = self
            .after_loop
            .iter()
            .filter(|(lp, _, reach)| !self.k.cfg.loops[*lp as usize].contains(block) && reach[block as usize])
            .map(|(lp, f, _)| (*lp, *f))
            .collect();
        let counters =
            |e: ExprId| -> Vec<LoopId> { self.l.exprs.symbols(e).into_iter().filter_map(|s| if let Sym::Counter(l) = s { Some(l) } else { None }).collect() };
        let mut wanted: BTreeSet<LoopId> = roots.iter().flat_map(|&r| counters(r)).collect();
        let mut chosen: Vec<(LoopId, ExprId)> = Vec::new();
        loop {
            let before = chosen.len();
            for &(lp, f) in &candidates {
                if wanted.contains(&lp) && !chosen.iter().any(|c| c.0 == lp) {
                    chosen.push((lp, f));
                    wanted.extend(counters(f));
                }
            }
            if chosen.len() == before {
                return chosen;
            }
        }
    }

    /// Asserts the exit facts for a site at `block` as seen by thread `t`; returns them.
    pub fn assert_facts(&self, q: &mut Query, block: BlockId, roots: &[ExprId], t: u8) -> Vec<ExprId> {
        let facts: Vec<ExprId> = self.relevant_facts(block, roots).into_iter().map(|(_, f)| f).collect();
        for &f in &facts {
            let term = q.enc.term(f, t);
            q.asserts.push(term);
        }
        facts
    }

    /// The access whose result a `Value` symbol names, if it is a load.
    pub fn load_of(&self, s: Sym) -> Option<&'a Access> {
        crate::fixed::load_access(self.l, s)
    }

    /// Loaded values an expression depends on, with the access that loaded them.
    pub fn loads_in(&self, e: ExprId) -> Vec<(Sym, &'a Access)> {
        self.l.exprs.symbols(e).into_iter().filter_map(|s| self.load_of(s).map(|a| (s, a))).collect()
    }

    /// Adds what is known about loaded values the query mentions: a load from a buffer whose
    /// contents the interface fixes reads those contents (at every in-bounds offset), two loads
    /// of the same address of a buffer the kernel never writes return the same value, and the
    /// interface's assumptions (`injective`, `in_range`) about index buffers. `roots` are the
    /// expressions already encoded for threads 1 and 2.
    pub fn add_load_facts(&self, q: &mut Query, roots: &[ExprId], threads: u8) {
        let mut done = BTreeSet::new();
        let mut todo: Vec<Sym> = roots.iter().flat_map(|&r| self.l.exprs.symbols(r)).collect();
        let mut rounds = 0;
        while let Some(s) = todo.pop() {
            rounds += 1;
            if rounds > 256 || !done.insert(s) {
                continue;
            }
            let Some(a) = self.load_of(s) else { continue };
            let Some((vid, bits)) = self.l.exprs.find_var(s) else { continue };
            let Some(base) = a.base else { continue };
            if let Some(fixed) = crate::fixed::fixed_load(self.k, self.l, self.bind, s) {
                for t in 1..=threads {
                    let (v, o) = (q.enc.term(vid, t), q.enc.term(fixed.offset, t));
                    q.asserts.extend(fixed_value_facts(&fixed, &v, &o));
                }
                // The offset may itself be read from a fixed buffer (`table[row[i]]`).
                todo.extend(self.l.exprs.symbols(fixed.offset));
            }
            let read_only = !self.written.contains(&base);
            let assumptions: &[Assumption] = match base {
                Base::Param(p) => self.bind.assumptions(p),
                Base::Var(_) => &[],
            };
            if threads == 2 && (read_only || assumptions.contains(&Assumption::Injective)) {
                let (a1, a2) = (q.enc.term(a.addr, 1), q.enc.term(a.addr, 2));
                let (v1, v2) = (q.enc.term(vid, 1), q.enc.term(vid, 2));
                if read_only {
                    q.asserts.push(format!("(=> (= {a1} {a2}) (= {v1} {v2}))"));
                }
                if assumptions.contains(&Assumption::Injective) {
                    q.asserts.push(format!("(=> (distinct {a1} {a2}) (distinct {v1} {v2}))"));
                }
                todo.extend(self.l.exprs.symbols(a.addr));
            }
            for asm in assumptions {
                if let Assumption::InRange(lo, hi) = asm {
                    if bits == 0 {
                        continue;
                    }
                    for t in 1..=threads {
                        let v = q.enc.term(vid, t);
                        q.asserts.push(format!("(bvsle {} {v})", crate::encode::bv(*lo as u64, bits)));
                        q.asserts.push(format!("(bvslt {v} {})", crate::encode::bv(*hi as u64, bits)));
                    }
                }
            }
        }
    }

    /// See [`target_name`].
    pub fn target_name(&self, a: &Access) -> String {
        target_name(self.k, self.bind, a)
    }
}

/// Fixed contents are stated offset by offset up to this many elements; past it only the range
/// of the values is (the solver slows down on long case lists).
const MAX_FIXED_CASES: usize = 4096;

/// What a load of fixed contents reads, for value term `v` at offset term `o` (64-bit): the
/// element at each in-bounds, element-aligned offset, or for long contents the range of their
/// values. Other offsets (out of bounds or misaligned) leave the value free.
fn fixed_value_facts(f: &crate::fixed::FixedLoad, v: &str, o: &str) -> Vec<String> {
    use crate::encode::bv;
    let offsets: Vec<u64> = f.aligned_offsets().collect();
    let bits = f.bits.max(1);
    if offsets.len() <= MAX_FIXED_CASES {
        return offsets.iter().filter_map(|&off| Some(format!("(=> (= {o} {}) (= {v} {}))", bv(off, 64), bv(f.value_at(off)?, bits)))).collect();
    }
    let values: Vec<u64> = offsets.iter().filter_map(|&off| f.value_at(off)).collect();
    let (Some(lo), Some(hi), Some(last)) = (values.iter().min(), values.iter().max(), offsets.last()) else { return Vec::new() };
    let aligned = format!("(= (bvurem (bvadd {o} {}) {}) {})", bv(f.skip, 64), bv(f.width.max(1) as u64, 64), bv(0, 64));
    vec![format!("(=> (and (bvule {o} {}) {aligned}) (and (bvule {} {v}) (bvule {v} {})))", bv(*last, 64), bv(*lo, bits), bv(*hi, bits))]
}

/// The name of what an access touches, for messages: `s` (shared array), `out` (buffer).
pub fn target_name(k: &Kernel, bind: &Binding, a: &Access) -> String {
    match a.base {
        Some(Base::Var(v)) => demangle_local(&k.vars[v as usize].name),
        Some(Base::Param(p)) => bind.name(p).to_string(),
        None => "memory".into(),
    }
}

fn reachable_from(k: &Kernel, starts: &[BlockId]) -> Vec<bool> {
    let mut seen = vec![false; k.cfg.blocks.len()];
    let mut stack: Vec<BlockId> = starts.to_vec();
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut seen[b as usize], true) {
            stack.extend(k.cfg.blocks[b as usize].successors());
        }
    }
    seen
}

/// `_ZZ6reduceE1s` (a function-local static) → `s`.
pub fn demangle_local(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("_ZZ") {
        if let Some(pos) = rest.find('E') {
            let tail = &rest[pos + 1..];
            let digits: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
            if let Ok(n) = digits.parse::<usize>() {
                if let Some(id) = tail.get(digits.len()..digits.len() + n) {
                    return id.to_string();
                }
            }
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn demangles_function_local_statics() {
        assert_eq!(super::demangle_local("_ZZ6reduceE1s"), "s");
        assert_eq!(super::demangle_local("_ZZ26matmul_missing_second_syncE2As"), "As");
        assert_eq!(super::demangle_local("smem"), "smem");
    }
}
