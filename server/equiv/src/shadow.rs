//! The shadow run: the concrete interpreter decides everything (control flow, addresses,
//! scheduling, warp collectives), and this observer carries beside each register and memory
//! cell the term of the value it holds, in terms of the kernel's inputs.
//!
//! A value whose shadow is `None` is concrete: it does not depend on any input element (loop
//! counters, addresses, sizes). Anything input-dependent that the equivalence engine cannot
//! follow — an address or a branch computed from input values, bit-level operations on input
//! integers, a vote on input data — is recorded as a [`Problem`] (the shape ends `uncertified`),
//! or, for branches and guards, as a [`PathCondition`] the terms hold under.

use crate::term::{Fun, Term, TermId, Terms};
use model::interp::observe::{At, CollectiveLane, Observer, Place};
use model::interp::{BufferId, FloatVal, InstRef, Value};
use model::{BinOp, BoolOp, CmpOp, FloatCmp, FloatOp, Inst, Kernel, Op, Operand, RegId, UnOp};
use ptx::types::{type_class, TypeClass};
use std::collections::{BTreeMap, HashMap};

/// How a global buffer's initial contents appear in terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Element `i` is the input `Input { param, elem: i }`.
    Symbolic { param: u32, elem_bytes: u32 },
    /// An output: element `i` starts as `Initial { param, elem: i }`.
    Initial { param: u32, elem_bytes: u32 },
    /// Concrete data (index buffers with known contents, workspaces).
    Concrete,
}

#[derive(Clone, Copy, Debug)]
struct Cell {
    bytes: u32,
    term: Option<TermId>,
    /// The number of barriers its block had passed when it was written.
    written: u32,
}

/// Shared memory of one block when it passed a barrier: the cells holding input-dependent
/// values, with the phase in which each was written.
#[derive(Clone, Debug)]
pub struct SharedSnapshot {
    pub ctaid: [u32; 3],
    /// The number of barriers the block had passed, this one included.
    pub phase: u32,
    /// The barrier instruction.
    pub barrier: InstRef,
    pub cells: Vec<SharedCellTerm>,
}

/// One shared cell of a [`SharedSnapshot`].
#[derive(Clone, Copy, Debug)]
pub struct SharedCellTerm {
    /// The interpreter's shared slot (see `model::interp::Trace::shared_vars`).
    pub slot: u32,
    pub offset: u64,
    pub bytes: u32,
    pub term: TermId,
    /// The number of barriers the block had passed when the cell was written.
    pub written: u32,
}

/// The instruction that last wrote a global location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreSite {
    pub pc: InstRef,
    pub line: Option<u32>,
    pub at: At,
}

/// A condition on input values that the run's control flow depended on.
#[derive(Clone, Debug)]
pub struct PathCondition {
    pub term: TermId,
    /// Whether it held in the run.
    pub holds: bool,
    pub line: Option<u32>,
}

/// Something input-dependent the engine cannot follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub line: Option<u32>,
    pub what: String,
}

const MAX_PROBLEMS: usize = 8;

pub struct Shadow<'k> {
    k: &'k Kernel,
    pub terms: Terms,
    roles: HashMap<BufferId, Role>,
    regs: HashMap<u32, Vec<Option<TermId>>>,
    shared: BTreeMap<(u32, u64), Cell>,
    local: BTreeMap<(u32, u32, u64), Cell>,
    global: BTreeMap<(BufferId, u64), Cell>,
    pub stores: HashMap<(BufferId, u64), StoreSite>,
    /// The output parameters whose contents from before the kernel ran the kernel read (an
    /// accumulation: `atomicAdd(out, v)`, `out[i] += v`).
    pub read_initial: std::collections::BTreeSet<u32>,
    pub path_conditions: Vec<PathCondition>,
    pub problems: Vec<Problem>,
    /// Float conversions that round (identity under exact arithmetic), by line.
    pub roundings: Vec<Option<u32>>,
    /// The first execution of each store instruction: who stored what where.
    pub samples: HashMap<InstRef, Sample>,
    /// Shared memory at every barrier release, when asked for ([`Shadow::record_shared_states`]).
    pub shared_states: Option<Vec<SharedSnapshot>>,
    /// Set when snapshots stopped at [`MAX_SNAPSHOT_CELLS`].
    pub shared_states_truncated: bool,
    /// The number of barriers the running block has passed (blocks run one after another).
    block_phase: u32,
}

/// The most shared cells all snapshots together keep.
pub const MAX_SNAPSHOT_CELLS: usize = 200_000;

/// One store, for showing what a store instruction writes.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub at: At,
    pub place: Place,
    pub bytes: u32,
    pub term: Option<TermId>,
}

impl<'k> Shadow<'k> {
    pub fn new(k: &'k Kernel, roles: HashMap<BufferId, Role>) -> Shadow<'k> {
        Shadow {
            k,
            terms: Terms::default(),
            roles,
            regs: HashMap::new(),
            shared: BTreeMap::new(),
            local: BTreeMap::new(),
            global: BTreeMap::new(),
            stores: HashMap::new(),
            read_initial: Default::default(),
            path_conditions: Vec::new(),
            problems: Vec::new(),
            roundings: Vec::new(),
            samples: HashMap::new(),
            shared_states: None,
            shared_states_truncated: false,
            block_phase: 0,
        }
    }

    /// Keep [`Shadow::shared_states`] (the Lean segment specifications read them).
    pub fn record_shared_states(&mut self) {
        self.shared_states.get_or_insert_with(Vec::new);
    }

    /// The term of a global location after the run: what was stored there, or its initial
    /// contents (an input element, or `None` when concrete).
    pub fn global_term(&mut self, buffer: BufferId, offset: u64, bytes: u32) -> Result<Option<TermId>, String> {
        self.load_global(buffer, offset, bytes)
    }

    /// Whether no store of the run touched bytes `offset..offset + bytes` of `buffer`.
    pub fn untouched(&self, buffer: BufferId, offset: u64, bytes: u32) -> bool {
        !self.global.range((buffer, offset.saturating_sub(7))..(buffer, offset + bytes as u64)).any(|(&(_, o), c)| o + c.bytes as u64 > offset)
    }

    fn problem(&mut self, line: Option<u32>, what: impl Into<String>) {
        if self.problems.len() < MAX_PROBLEMS {
            let p = Problem { line, what: what.into() };
            if !self.problems.contains(&p) {
                self.problems.push(p);
            }
        }
    }

    fn regs_of(&mut self, linear: u32) -> &mut Vec<Option<TermId>> {
        let n = self.k.regs.len();
        self.regs.entry(linear).or_insert_with(|| vec![None; n])
    }

    fn reg(&self, linear: u32, r: RegId) -> Option<TermId> {
        self.regs.get(&linear).and_then(|rs| rs.get(r as usize).copied().flatten())
    }

    fn set(&mut self, linear: u32, r: RegId, t: Option<TermId>) {
        if let Some(slot) = self.regs_of(linear).get_mut(r as usize) {
            *slot = t;
        }
    }

    /// The shadow of an operand of thread `linear`.
    fn shadow(&mut self, linear: u32, o: &Operand) -> Option<TermId> {
        match o {
            Operand::Reg(r) => self.reg(linear, *r),
            Operand::NotReg(r) => self.reg(linear, *r).map(|t| self.terms.add(Term::Not(t))),
            _ => None,
        }
    }

    /// An operand as a float term: its shadow, or its concrete value as a literal.
    fn float_term(&mut self, linear: u32, o: &Operand, v: &Value, bits: u32) -> TermId {
        match self.shadow(linear, o) {
            Some(t) => t,
            None => {
                let f = v.float(bits);
                self.terms.float(&f, bits)
            }
        }
    }

    /// An operand as an integer term: its shadow, or its concrete value (signed).
    fn int_term(&mut self, linear: u32, o: &Operand, v: &Value, bits: u32, signed: bool) -> TermId {
        match self.shadow(linear, o) {
            Some(t) => t,
            None => {
                let b = v.bits(bits);
                let n: i128 = if signed { model::sext(b, bits) as i128 } else { b as i128 };
                self.terms.exact(num_rational::BigRational::from_integer(n.into()))
            }
        }
    }

    /// A predicate operand as a term (1 or 0 when concrete).
    fn bool_term(&mut self, linear: u32, o: &Operand, v: &Value) -> TermId {
        match self.shadow(linear, o) {
            Some(t) => t,
            None => self.terms.exact(num_rational::BigRational::from_integer((v.bool() as i64).into())),
        }
    }

    fn load(&mut self, at: &At, place: Place, bytes: u32, line: Option<u32>) -> Option<TermId> {
        let r = match place {
            Place::Global { buffer, offset } => self.load_global(buffer, offset, bytes),
            Place::Shared { slot, offset } => cell_at(&self.shared, (slot, offset), bytes),
            Place::Local { slot, offset } => cell_at(&self.local, (at.linear, slot, offset), bytes),
            Place::Discarded => Ok(None),
        };
        r.unwrap_or_else(|why| {
            self.problem(line, why);
            None
        })
    }

    fn load_global(&mut self, buffer: BufferId, offset: u64, bytes: u32) -> Result<Option<TermId>, String> {
        if let Some(found) = cell_at(&self.global, (buffer, offset), bytes)? {
            return Ok(Some(found));
        }
        if !self.untouched(buffer, offset, bytes) {
            return Ok(None); // overwritten with concrete values
        }
        match self.roles.get(&buffer).copied().unwrap_or(Role::Concrete) {
            Role::Concrete => Ok(None),
            Role::Symbolic { param, elem_bytes } | Role::Initial { param, elem_bytes } => {
                let initial = matches!(self.roles.get(&buffer), Some(Role::Initial { .. }));
                if bytes == elem_bytes && offset.is_multiple_of(elem_bytes as u64) {
                    let elem = offset / elem_bytes as u64;
                    if initial {
                        self.read_initial.insert(param);
                    }
                    Ok(Some(self.terms.add(if initial { Term::Initial { param, elem } } else { Term::Input { param, elem } })))
                } else {
                    Err(format!("a {bytes}-byte access at byte {offset} of a buffer of {elem_bytes}-byte elements (packed or misaligned data) is not followed"))
                }
            }
        }
    }

    fn store(&mut self, at: &At, pc: InstRef, place: Place, bytes: u32, term: Option<TermId>, line: Option<u32>) {
        self.samples.entry(pc).or_insert(Sample { at: *at, place, bytes, term });
        let cell = Cell { bytes, term, written: self.block_phase };
        match place {
            Place::Global { buffer, offset } => {
                overwrite(&mut self.global, (buffer, offset), cell, |k| k.1, |k, o| (k.0, o));
                self.stores.insert((buffer, offset), StoreSite { pc, line, at: *at });
            }
            Place::Shared { slot, offset } => overwrite(&mut self.shared, (slot, offset), cell, |k| k.1, |k, o| (k.0, o)),
            Place::Local { slot, offset } => overwrite(&mut self.local, (at.linear, slot, offset), cell, |k| k.2, |k, o| (k.0, k.1, o)),
            Place::Discarded => {}
        }
    }

    fn float_op(&mut self, at: &At, inst: &Inst, op: FloatOp, args: &[Operand], operands: &[Value], bits: u32) -> Option<TermId> {
        let any = args.iter().any(|a| self.shadow(at.linear, a).is_some());
        if !any {
            return None;
        }
        let mut ts = Vec::new();
        for (a, v) in args.iter().zip(operands) {
            ts.push(self.float_term(at.linear, a, v, bits));
        }
        let t = |i: usize| ts.get(i).copied();
        let term = match (op, t(0), t(1), t(2)) {
            (FloatOp::Add, Some(a), Some(b), _) => Term::Add(a, b),
            (FloatOp::Sub, Some(a), Some(b), _) => Term::Sub(a, b),
            (FloatOp::Mul, Some(a), Some(b), _) => Term::Mul(a, b),
            (FloatOp::Div, Some(a), Some(b), _) => Term::Div(a, b),
            (FloatOp::Fma, Some(a), Some(b), Some(c)) => Term::Fma(a, b, c),
            (FloatOp::Min, Some(a), Some(b), _) => Term::Min(a, b),
            (FloatOp::Max, Some(a), Some(b), _) => Term::Max(a, b),
            (FloatOp::Neg, Some(a), ..) => Term::Fun(Fun::Neg, a),
            (FloatOp::Abs, Some(a), ..) => Term::Fun(Fun::Abs, a),
            (FloatOp::Sqrt, Some(a), ..) => Term::Fun(Fun::Sqrt, a),
            (FloatOp::Rsqrt, Some(a), ..) => Term::Fun(Fun::Rsqrt, a),
            (FloatOp::Rcp, Some(a), ..) => Term::Fun(Fun::Rcp, a),
            (FloatOp::Ex2, Some(a), ..) => Term::Fun(Fun::Ex2, a),
            (FloatOp::Lg2, Some(a), ..) => Term::Fun(Fun::Lg2, a),
            (FloatOp::Sin, Some(a), ..) => Term::Fun(Fun::Sin, a),
            (FloatOp::Cos, Some(a), ..) => Term::Fun(Fun::Cos, a),
            (FloatOp::Tanh, Some(a), ..) => Term::Fun(Fun::Tanh, a),
            (FloatOp::Erf, Some(a), ..) => Term::Fun(Fun::Erf, a),
            _ => {
                self.problem(inst.line, format!("the float operation {op:?} on input values is not modelled"));
                return None;
            }
        };
        Some(self.terms.add(term))
    }

    #[allow(clippy::too_many_arguments)] // the observer's view of one instruction, passed through
    fn int_bin(&mut self, at: &At, inst: &Inst, op: BinOp, a: &Operand, b: &Operand, operands: &[Value], bits: u32) -> Option<TermId> {
        let (sa, sb) = (self.shadow(at.linear, a), self.shadow(at.linear, b));
        if sa.is_none() && sb.is_none() {
            return None;
        }
        let x = self.int_term(at.linear, a, &operands[0], bits, true);
        let y = self.int_term(at.linear, b, &operands[1], bits, true);
        let term = match op {
            BinOp::Add => Term::Add(x, y),
            BinOp::Sub => Term::Sub(x, y),
            BinOp::Mul => Term::Mul(x, y),
            BinOp::MinS => Term::Min(x, y),
            BinOp::MaxS => Term::Max(x, y),
            _ => {
                self.problem(inst.line, format!("the integer operation {op:?} on input values is not modelled (bit-level arithmetic on input integers)"));
                return None;
            }
        };
        Some(self.terms.add(term))
    }
}

/// The term of the cell at `key` if one of that width is there; an error if a cell of another
/// width overlaps it; `Ok(None)` if nothing was written there.
fn cell_at<K: Ord + Copy>(map: &BTreeMap<K, Cell>, key: K, bytes: u32) -> Result<Option<TermId>, String> {
    if let Some(c) = map.get(&key) {
        if c.bytes == bytes {
            return Ok(c.term);
        }
        if c.term.is_some() {
            return Err(format!("a {bytes}-byte read of a {}-byte input-dependent value is not followed", c.bytes));
        }
    }
    Ok(None)
}

/// Writes `cell` at `key`, dropping cells it overlaps.
fn overwrite<K: Ord + Copy>(map: &mut BTreeMap<K, Cell>, key: K, cell: Cell, offset: impl Fn(K) -> u64, with_offset: impl Fn(K, u64) -> K) {
    let at = offset(key);
    let lo = with_offset(key, at.saturating_sub(7));
    let hi = with_offset(key, at + cell.bytes as u64);
    let stale: Vec<K> = map.range(lo..hi).filter(|(&k, c)| offset(k) + c.bytes as u64 > at && k != key).map(|(&k, _)| k).collect();
    for k in stale {
        map.remove(&k);
    }
    map.insert(key, cell);
}

fn float_cmp_of(op: CmpOp) -> Option<FloatCmp> {
    Some(match op {
        CmpOp::Eq => FloatCmp::Eq,
        CmpOp::Ne => FloatCmp::Ne,
        CmpOp::LtS => FloatCmp::Lt,
        CmpOp::LeS => FloatCmp::Le,
        CmpOp::GtS => FloatCmp::Gt,
        CmpOp::GeS => FloatCmp::Ge,
        _ => return None,
    })
}

impl Observer for Shadow<'_> {
    fn executed(&mut self, at: &At, pc: InstRef, inst: &Inst, operands: &[Value], results: &[(RegId, Value)], places: &[Place]) {
        let line = inst.line;
        let lin = at.linear;
        match &inst.op {
            Op::Mov { dst, src, .. } => {
                let t = self.shadow(lin, src);
                self.set(lin, *dst, t);
            }
            Op::Bin { dst, op, a, b, bits } => {
                let t = self.int_bin(at, inst, *op, a, b, operands, *bits);
                self.set(lin, *dst, t);
            }
            Op::Un { dst, op, a, .. } => {
                let t = match (self.shadow(lin, a), op) {
                    (None, _) => None,
                    (Some(x), UnOp::Neg) => Some(self.terms.add(Term::Fun(Fun::Neg, x))),
                    (Some(x), UnOp::AbsS) => Some(self.terms.add(Term::Fun(Fun::Abs, x))),
                    (Some(_), op) => {
                        self.problem(line, format!("the integer operation {op:?} on input values is not modelled"));
                        None
                    }
                };
                self.set(lin, *dst, t);
            }
            Op::Ext { dst, a, from, to, .. } => {
                let t = self.shadow(lin, a);
                if t.is_some() && to < from {
                    self.problem(line, "truncating an input-dependent integer is not modelled");
                }
                self.set(lin, *dst, t);
            }
            Op::Setp { dst, dst_neg, cmp, a, b, bits, combine } => {
                let symbolic = self.shadow(lin, a).is_some() || self.shadow(lin, b).is_some();
                let c = match (symbolic, float_cmp_of(*cmp)) {
                    (false, _) => None,
                    (true, Some(fc)) => {
                        let x = self.int_term(lin, a, &operands[0], *bits, true);
                        let y = self.int_term(lin, b, &operands[1], *bits, true);
                        Some(self.terms.add(Term::Cmp(fc, x, y)))
                    }
                    (true, None) => {
                        self.problem(line, "an unsigned comparison of input-dependent integers is not modelled");
                        None
                    }
                };
                self.set_predicates(lin, *dst, *dst_neg, c, combine, operands.get(2));
            }
            Op::FSetp { dst, dst_neg, cmp, a, b, bits, combine } => {
                let symbolic = self.shadow(lin, a).is_some() || self.shadow(lin, b).is_some();
                let c = if symbolic {
                    let x = self.float_term(lin, a, &operands[0], *bits);
                    let y = self.float_term(lin, b, &operands[1], *bits);
                    Some(self.terms.add(Term::Cmp(*cmp, x, y)))
                } else {
                    None
                };
                self.set_predicates(lin, *dst, *dst_neg, c, combine, operands.get(2));
            }
            Op::Selp { dst, a, b, cond, bits } => {
                let t = match self.shadow(lin, cond) {
                    None => {
                        let chosen = if operands[2].bool() { a } else { b };
                        self.shadow(lin, chosen)
                    }
                    Some(c) => {
                        // A float immediate or parameter arrives as bits: the registers'
                        // declared types say a float is chosen (`selp.f32 %f3, 0fBFC00000, %f2`).
                        let float_reg = |o: &Operand| matches!(o, Operand::Reg(r) if self.k.regs.get(*r as usize).is_some_and(|i| i.float));
                        let is_float = matches!(operands[0], Value::Float(_))
                            || matches!(operands[1], Value::Float(_))
                            || self.k.regs.get(*dst as usize).is_some_and(|i| i.float)
                            || float_reg(a)
                            || float_reg(b);
                        let term =
                            |s: &mut Self, o: &Operand, v: &Value| if is_float { s.float_term(lin, o, v, *bits) } else { s.int_term(lin, o, v, *bits, true) };
                        let x = term(self, a, &operands[0]);
                        let y = term(self, b, &operands[1]);
                        Some(self.terms.add(Term::Select(c, x, y)))
                    }
                };
                self.set(lin, *dst, t);
            }
            Op::Pred { dst, op, a, b } => {
                let t = if self.shadow(lin, a).is_some() || self.shadow(lin, b).is_some() {
                    let x = self.bool_term(lin, a, &operands[0]);
                    let y = self.bool_term(lin, b, &operands[1]);
                    let t = match op {
                        BoolOp::And => Term::And(x, y),
                        BoolOp::Or => Term::Or(x, y),
                        BoolOp::Xor => {
                            let (nx, ny) = (self.terms.add(Term::Not(x)), self.terms.add(Term::Not(y)));
                            let (l, r) = (self.terms.add(Term::And(x, ny)), self.terms.add(Term::And(nx, y)));
                            Term::Or(l, r)
                        }
                    };
                    Some(self.terms.add(t))
                } else {
                    None
                };
                self.set(lin, *dst, t);
            }
            Op::PredNot { dst, a } => {
                let t = self.shadow(lin, a).map(|x| self.terms.add(Term::Not(x)));
                self.set(lin, *dst, t);
            }
            Op::Float { dst, op, args, bits } => {
                let t = self.float_op(at, inst, *op, args, operands, *bits);
                self.set(lin, *dst, t);
            }
            Op::Cvt { dst, a, from, to, rnd, sat } => {
                let t = self.shadow(lin, a);
                if t.is_some() {
                    let float = |ty: &str| type_class(ty) == Some(TypeClass::Float);
                    // `.rni`/`.rzi`/`.rmi`/`.rpi` between floats round to an integral value
                    // (`rintf`, `truncf`, `floorf`, `ceilf`) and `.sat` clamps to [0, 1]
                    // (`__saturatef`): functions of the value, not a change of precision, so
                    // not the identity the exact-arithmetic contract makes of a conversion (read
                    // as one, `rintf(x)` agreed with a reference `x` on integer inputs).
                    let integral = rnd.as_deref().and_then(model::interp::Rounding::from_modifier).is_some_and(|(_, integral)| integral);
                    match (float(from), float(to)) {
                        (true, true) if integral || *sat => self.problem(
                            line,
                            format!(
                                "`cvt{}{}{to}{from}` of an input-dependent float ({}) is not modelled",
                                rnd.as_deref().unwrap_or(""),
                                if *sat { ".sat" } else { "" },
                                if integral { "rounding to an integral value" } else { "clamping to [0, 1]" }
                            ),
                        ),
                        (true, true) if from != to => self.roundings.push(line),
                        (true, false) => self.problem(line, format!("converting an input-dependent float to `{to}` (rounding to an integer) is not modelled")),
                        _ => {}
                    }
                }
                self.set(lin, *dst, t);
            }
            Op::Ld { dsts, elem_bytes, .. } => {
                if self.shadow(lin, &inst.op.operands()[0].clone()).is_some() {
                    self.problem(line, "an address computed from input values (a data-dependent load) is not followed");
                }
                for (k, d) in dsts.iter().enumerate() {
                    let t = places.get(k).and_then(|&p| self.load(at, p, *elem_bytes, line));
                    self.set(lin, *d, t);
                }
            }
            Op::St { srcs, elem_bytes, .. } => {
                if self.shadow(lin, &inst.op.operands()[srcs.len()].clone()).is_some() {
                    self.problem(line, "an address computed from input values (a data-dependent store) is not followed");
                }
                for (k, s) in srcs.iter().enumerate() {
                    let t = self.shadow(lin, s);
                    if let Some(&p) = places.get(k) {
                        self.store(at, pc, p, *elem_bytes, t, line);
                    }
                }
            }
            Op::Atom { dst, op, args, bytes, float, .. } => {
                let Some(&place) = places.first() else { return };
                let old = self.load(at, place, *bytes, line);
                let arg = args.first().and_then(|a| self.shadow(lin, a));
                let new = match (old, arg) {
                    (None, None) => None,
                    _ if *float => {
                        let w = bytes * 8;
                        let old_value = results.first().map(|(_, v)| v.clone()).unwrap_or(Value::exact(FloatVal::zero()));
                        let o = match old {
                            Some(t) => t,
                            None => self.terms.float(&old_value.float(w), w),
                        };
                        let x = self.float_term(lin, &args[0], &operands[0], w);
                        match op {
                            model::AtomOp::Add => Some(self.terms.add(Term::Add(o, x))),
                            model::AtomOp::Min => Some(self.terms.add(Term::Min(o, x))),
                            model::AtomOp::Max => Some(self.terms.add(Term::Max(o, x))),
                            model::AtomOp::Exch => Some(x),
                            _ => {
                                self.problem(line, format!("the atomic {op:?} on input values is not modelled"));
                                None
                            }
                        }
                    }
                    _ => {
                        self.problem(line, format!("the integer atomic {op:?} on input values is not modelled"));
                        None
                    }
                };
                self.store(at, pc, place, *bytes, new, line);
                if let Some(d) = dst {
                    self.set(lin, *d, old);
                }
            }
            Op::Bar { .. } | Op::WarpSync { .. } | Op::Fence | Op::Bra { .. } | Op::Ret | Op::Exit | Op::Unsupported { .. } => {}
            Op::BarRed { dst, pred, .. } => {
                if self.shadow(lin, pred).is_some() {
                    self.problem(line, "a barrier reduction of input-dependent predicates is not modelled");
                }
                self.set(lin, *dst, None);
            }
            Op::Shfl { .. } | Op::Vote { .. } | Op::ActiveMask { .. } => {}
        }
    }

    fn guard(&mut self, at: &At, _pc: InstRef, inst: &Inst, pred: RegId, executes: bool) {
        if let Some(term) = self.reg(at.linear, pred) {
            let t = match inst.guard {
                Some((_, true)) => self.terms.add(Term::Not(term)),
                _ => term,
            };
            self.path_conditions.push(PathCondition { term: t, holds: executes, line: inst.line });
        }
    }

    fn branch(&mut self, at: &At, cond: RegId, value: bool, line: Option<u32>) {
        if let Some(term) = self.reg(at.linear, cond) {
            self.path_conditions.push(PathCondition { term, holds: value, line });
        }
    }

    fn collective(&mut self, _pc: InstRef, inst: &Inst, lanes: &[CollectiveLane]) {
        match &inst.op {
            Op::Shfl { dst, pred_dst, src, .. } => {
                let new: Vec<(u32, Option<TermId>)> = lanes.iter().map(|l| (l.at.linear, l.source.and_then(|s| self.shadow(s, src)))).collect();
                for (lin, t) in new {
                    self.set(lin, *dst, t);
                    if let Some(p) = pred_dst {
                        self.set(lin, *p, None);
                    }
                }
            }
            Op::Vote { dst, pred, .. } => {
                if lanes.iter().any(|l| self.shadow(l.at.linear, pred).is_some()) {
                    self.problem(inst.line, "a warp vote on input-dependent predicates is not modelled");
                }
                for l in lanes {
                    self.set(l.at.linear, *dst, None);
                }
            }
            Op::ActiveMask { dst } => {
                for l in lanes {
                    self.set(l.at.linear, *dst, None);
                }
            }
            _ => {}
        }
    }

    fn barrier_released(&mut self, ctaid: [u32; 3], pc: InstRef, phase: u32) {
        self.block_phase = phase;
        let Some(states) = self.shared_states.as_mut() else { return };
        let kept: usize = states.iter().map(|s| s.cells.len()).sum();
        if kept + self.shared.len() > MAX_SNAPSHOT_CELLS {
            self.shared_states_truncated = true;
            return;
        }
        let cells: Vec<SharedCellTerm> = self
            .shared
            .iter()
            .filter_map(|(&(slot, offset), c)| c.term.map(|term| SharedCellTerm { slot, offset, bytes: c.bytes, term, written: c.written }))
            .collect();
        states.push(SharedSnapshot { ctaid, phase, barrier: pc, cells });
    }

    fn block_done(&mut self, _ctaid: [u32; 3]) {
        self.block_phase = 0;
        self.regs.clear();
        self.shared.clear();
        self.local.clear();
    }
}

impl Shadow<'_> {
    fn set_predicates(
        &mut self,
        lin: u32,
        dst: RegId,
        dst_neg: Option<RegId>,
        c: Option<TermId>,
        combine: &Option<(BoolOp, Operand)>,
        combine_value: Option<&Value>,
    ) {
        let (p, q) = match c {
            None => {
                // Concrete comparison; the combining predicate may still be symbolic.
                let sym = combine.as_ref().and_then(|(_, o)| self.shadow(lin, o));
                match (sym, combine) {
                    (Some(_), Some(_)) => {
                        self.problem(None, "a predicate combining a concrete comparison with input-dependent data is not modelled");
                        (None, None)
                    }
                    _ => (None, None),
                }
            }
            Some(c) => {
                let nc = self.terms.add(Term::Not(c));
                match combine {
                    None => (Some(c), Some(nc)),
                    Some((op, o)) => {
                        let v = combine_value.cloned().unwrap_or(Value::Bits(0));
                        let k = self.bool_term(lin, o, &v);
                        let f = |s: &mut Self, x: TermId| match op {
                            BoolOp::And => s.terms.add(Term::And(x, k)),
                            BoolOp::Or => s.terms.add(Term::Or(x, k)),
                            BoolOp::Xor => {
                                let (nx, nk) = (s.terms.add(Term::Not(x)), s.terms.add(Term::Not(k)));
                                let (l, r) = (s.terms.add(Term::And(x, nk)), s.terms.add(Term::And(nx, k)));
                                s.terms.add(Term::Or(l, r))
                            }
                        };
                        (Some(f(self, c)), Some(f(self, nc)))
                    }
                }
            }
        };
        self.set(lin, dst, p);
        if let Some(n) = dst_neg {
            self.set(lin, n, q);
        }
    }
}
