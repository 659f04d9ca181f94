//! SMT-LIB encoding of model expressions for two thread copies.
//!
//! The two-thread reduction (as in GPUVerify and Faial) asks about two arbitrary distinct
//! threads: each thread-local symbol (`tid`, loop counters, loaded values) gets one copy per
//! thread (`tid_x_1`, `tid_x_2`), while uniform ones (`ntid`, parameters) are shared. Every
//! operator maps to the SMT-LIB bit-vector operator with the meaning `model::ops::eval_bin`
//! gives it, so the solver, the interpreter and constant folding agree.

use model::expr::{ExprId, Exprs, Node, Sym, BOOL};
use model::ops::*;
use std::collections::HashMap;
use std::fmt::Write;

pub struct Encoder<'a> {
    x: &'a Exprs,
    /// Declared constants in order, with their widths and the narrowing chosen when each was
    /// declared; rendered by [`Encoder::script`].
    decls: Vec<(String, u32, Option<Narrow>)>,
    defs: String,
    /// Declared constants and their widths.
    declared: HashMap<String, u32>,
    defined: HashMap<(ExprId, u8), String>,
    thread_dep: HashMap<ExprId, bool>,
    /// Whether both thread copies are in one block (see [`Encoder::assume_same_block`]), and
    /// which expressions vary between threads of one block.
    same_block: bool,
    /// Loops both copies are in the same iteration of (see [`Encoder::assume_same_iterations`]).
    same_iterations: Vec<model::cfg::LoopId>,
    /// Expressions both copies take the same value of (see [`Encoder::assume_same_value`]).
    same_values: Vec<ExprId>,
    /// Which expressions may take different values in the two copies, given the above.
    varies: HashMap<ExprId, bool>,
    /// Constants known to fit in fewer bits than their sort (see [`Narrow`]).
    narrow: HashMap<String, Narrow>,
}

/// Narrowings a witness tier adds to a query (see [`Encoder::script_narrowed`]): they hold
/// only for the small witnesses the tier asks for, whose assertions say exactly which.
pub type ExtraNarrowing = HashMap<String, Narrow>;

/// A constant whose every allowed value fits in `bits` bits: zero-extended (`signed: false`)
/// or sign-extended from them. Such a constant is declared with `bits` bits and defined at its
/// full width by the extension, so the solver's bit-blasting sees constant upper bits: a
/// multiplication of a thread index by a row length, for example, shrinks from 64×64 bits to
/// the few bits the interface allows, which is where hard queries spend their time.
///
/// Only facts that hold for every launch the query considers may narrow a constant (a block
/// size's upper bound, the interface's range of a parameter); narrowing then excludes nothing
/// the query's assertions allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Narrow {
    pub bits: u32,
    pub signed: bool,
}

impl Narrow {
    /// Values `0..=max`.
    pub fn unsigned_max(max: u128) -> Narrow {
        Narrow { bits: (u128::BITS - max.leading_zeros()).max(1), signed: false }
    }

    /// Values `lo..=hi` in two's complement.
    pub fn signed_range(lo: i128, hi: i128) -> Narrow {
        // Magnitude bits plus a sign bit; `!v` is the magnitude of a negative `v` less one.
        let bits = |v: i128| u128::BITS - (if v < 0 { !v } else { v } as u128).leading_zeros() + 1;
        Narrow { bits: bits(lo).max(bits(hi)), signed: true }
    }
}

pub fn sort(bits: u32) -> String {
    if bits == BOOL {
        "Bool".into()
    } else {
        format!("(_ BitVec {bits})")
    }
}

pub fn bv(value: u64, bits: u32) -> String {
    format!("(_ bv{} {bits})", value & mask(bits))
}

/// The SMT name of a symbol for thread `t` (0 for uniform symbols).
pub fn sym_name(s: Sym, t: u8) -> String {
    const D: [&str; 3] = ["x", "y", "z"];
    let base = match s {
        Sym::Special(Special::Tid(d)) => format!("tid_{}", D[d as usize]),
        Sym::Special(Special::Ntid(d)) => format!("ntid_{}", D[d as usize]),
        Sym::Special(Special::Ctaid(d)) => format!("ctaid_{}", D[d as usize]),
        Sym::Special(Special::Nctaid(d)) => format!("nctaid_{}", D[d as usize]),
        Sym::Special(Special::LaneId) => "laneid".into(),
        Sym::Special(Special::WarpId) => "warpid".into(),
        Sym::Special(Special::Timer) => "clock".into(),
        Sym::Param { index, offset } => format!("p{index}_{offset}"),
        Sym::VarBase(v) => format!("base{v}"),
        Sym::Counter(l) => format!("k{l}"),
        Sym::Havoc { lp, reg } => format!("h{lp}_{reg}"),
        Sym::Header { lp, reg } => format!("hd{lp}_{reg}"),
        Sym::Value { block, inst, elem } => format!("v{block}_{inst}_{elem}"),
    };
    if s.is_thread_local() {
        format!("{base}_{t}")
    } else {
        base
    }
}

impl<'a> Encoder<'a> {
    pub fn new(x: &'a Exprs) -> Encoder<'a> {
        Encoder {
            x,
            decls: Vec::new(),
            defs: String::new(),
            declared: HashMap::new(),
            defined: HashMap::new(),
            thread_dep: HashMap::new(),
            same_block: false,
            same_iterations: Vec::new(),
            same_values: Vec::new(),
            varies: HashMap::new(),
            narrow: HashMap::new(),
        }
    }

    /// Declares the constant `name` narrow when it is declared (see [`Narrow`]), unless its
    /// sort is no wider.
    pub fn narrow(&mut self, name: &str, narrow: Narrow) {
        self.narrow.insert(name.to_string(), narrow);
    }

    /// The expressions the encoded terms are made of.
    pub fn exprs(&self) -> &'a Exprs {
        self.x
    }

    /// The name `e` is defined under for thread copy `t`, once encoded (constants and
    /// symbols have none).
    pub fn defined_name(&self, e: ExprId, t: u8) -> Option<&str> {
        self.defined.get(&(e, t)).map(String::as_str)
    }

    /// The expressions encoded so far, with the thread copy each was encoded for (0: shared).
    pub fn encoded(&self) -> Vec<(ExprId, u8)> {
        let mut v: Vec<(ExprId, u8)> = self.defined.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// The constants declared narrow: they are defined terms, so a model reports them only
    /// when asked.
    pub fn narrowed(&self) -> Vec<&str> {
        self.narrowed_with(&ExtraNarrowing::new())
    }

    /// Declares a constant once.
    pub fn declare(&mut self, name: &str, bits: u32) {
        if self.declared.insert(name.to_string(), bits).is_some() {
            return;
        }
        let narrow = self.narrow.get(name).copied().filter(|n| bits != BOOL && n.bits < bits);
        self.decls.push((name.to_string(), bits, narrow));
    }

    /// The narrowing of a constant declared with `bits` bits and `own` narrowing, when a tier
    /// adds `extra`: the tighter of the two. An unsigned extra range is tighter than a signed
    /// one of more bits (its values `0..2^e` lie within `-2^(n-1)..2^(n-1)` when `e < n`).
    fn effective(bits: u32, own: Option<Narrow>, extra: Option<Narrow>) -> Option<Narrow> {
        let extra = extra.filter(|e| bits != BOOL && e.bits < bits);
        match (own, extra) {
            (Some(n), Some(e)) if e.bits < n.bits && (!e.signed || n.signed) => Some(e),
            (Some(n), _) => Some(n),
            (None, e) => e,
        }
    }

    /// The constants a script with `extra` narrowings declares narrow (defined terms, whose
    /// values a model gives only when asked).
    pub fn narrowed_with(&self, extra: &ExtraNarrowing) -> Vec<&str> {
        self.decls.iter().filter(|(name, bits, own)| Self::effective(*bits, *own, extra.get(name).copied()).is_some()).map(|(name, ..)| name.as_str()).collect()
    }

    pub fn is_declared(&self, name: &str) -> bool {
        self.declared.contains_key(name)
    }

    /// The loop counters (iteration numbers, `k{loop}_{thread}`) the formulas mention, with
    /// their widths, sorted.
    pub fn declared_counters(&self) -> Vec<(&str, u32)> {
        self.declared_indexed('k')
    }

    /// The kernel parameters (and fields of aggregate parameters, `p{index}_{offset}`) the
    /// formulas mention, by name, sorted: a counterexample fixes them, and its replay passes them.
    pub fn declared_params(&self) -> Vec<&str> {
        self.declared_indexed('p').into_iter().map(|(name, _)| name).collect()
    }

    /// The values loaded from memory (`v{block}_{inst}_{elem}_{thread}`) the formulas mention,
    /// with their widths, sorted.
    pub fn declared_loaded_values(&self) -> Vec<(&str, u32)> {
        self.declared_where(|n| n.strip_prefix('v').is_some_and(|r| r.split('_').count() == 4 && r.split('_').all(|d| d.parse::<u32>().is_ok())))
    }

    /// The declared constants whose names `keep` accepts, with their widths, sorted.
    fn declared_where(&self, keep: impl Fn(&str) -> bool) -> Vec<(&str, u32)> {
        let mut names: Vec<(&str, u32)> = self.declared.iter().filter(|(n, _)| keep(n)).map(|(n, b)| (n.as_str(), *b)).collect();
        names.sort_unstable();
        names
    }

    /// The declared constants named `{prefix}{number}_{number}`, with their widths, sorted.
    fn declared_indexed(&self, prefix: char) -> Vec<(&str, u32)> {
        self.declared_where(|n| {
            n.strip_prefix(prefix).and_then(|r| r.split_once('_')).is_some_and(|(i, j)| i.parse::<u32>().is_ok() && j.parse::<u32>().is_ok())
        })
    }

    /// Declares a symbol's copy for thread `t` and returns its name.
    pub fn sym(&mut self, s: Sym, bits: u32, t: u8) -> String {
        let name = sym_name(s, t);
        self.declare(&name, bits);
        name
    }

    /// Both thread copies are in one block (the query asserts it): an expression that only
    /// the block index makes differ between threads (a row `blockIdx.x * rows + ...` before
    /// the thread's part) is encoded once, for copy 1, instead of once per copy and left to the
    /// solver to prove equal — which z3's incremental core does not do before it searches.
    /// Call it before encoding any term.
    pub fn assume_same_block(&mut self) {
        debug_assert!(self.defined.is_empty(), "terms were encoded before the threads shared a block");
        self.same_block = true;
    }

    /// Both thread copies (of one block, see [`Encoder::assume_same_block`]) are in the same
    /// iteration of each of `loops` (the query asserts it): a loop counter of these loops is
    /// then as uniform as the block index, and a term made of such counters and uniform values
    /// (a barrier's path condition in a loop, `k * ntid.y < n`) is encoded once, for copy 1.
    /// Left as one term per copy with the counters asserted equal, Yices' incremental mode does
    /// not substitute the equality and bit-blasts two copies of every product of counters and
    /// launch sizes, then has to prove the two multipliers equal: PyTorch's embedding backward
    /// with no setup had two barrier questions time out after 1 s each that are now `p ∧ ¬p`.
    /// Call it before encoding any term.
    pub fn assume_same_iterations(&mut self, loops: &[model::cfg::LoopId]) {
        debug_assert!(self.same_block, "same iterations are only shared within one block");
        debug_assert!(self.defined.is_empty(), "terms were encoded before the threads shared their iterations");
        self.same_iterations.extend_from_slice(loops);
    }

    /// Both thread copies take the same value of `e` (the query restricts itself to such
    /// pairs, see [`crate::rows`]): `e` and every term made of it and of uniform values are
    /// encoded once, for copy 1, as [`Encoder::assume_same_block`] does for a block's terms.
    /// The caller ties copy 2's own value to it ([`Encoder::own_term`]), so the query stays
    /// exact: a model of it is a model of the question without the sharing. Call it before
    /// encoding any term.
    pub fn assume_same_value(&mut self, e: ExprId) {
        debug_assert!(self.defined.is_empty(), "terms were encoded before the copies shared a value");
        self.same_values.push(e);
    }

    /// Whether `e` may differ between the two copies: it mentions a thread-local symbol that
    /// neither the shared block, the shared iterations nor a shared value makes common.
    fn varies(&mut self, e: ExprId) -> bool {
        if let Some(&d) = self.varies.get(&e) {
            return d;
        }
        let d = !self.same_values.contains(&e)
            && match self.x.node(e) {
                Node::Var { sym: Sym::Counter(lp), .. } => !(self.same_block && self.same_iterations.contains(lp)),
                Node::Var { sym, .. } => sym.is_thread_local() && !(self.same_block && sym.is_block_uniform()),
                _ => self.x.children(e).into_iter().any(|c| self.varies(c)),
            };
        self.varies.insert(e, d);
        d
    }

    fn depends_on_thread(&mut self, e: ExprId) -> bool {
        if let Some(&d) = self.thread_dep.get(&e) {
            return d;
        }
        let d = match self.x.node(e) {
            Node::Var { sym, .. } => sym.is_thread_local(),
            _ => self.x.children(e).into_iter().any(|c| self.depends_on_thread(c)),
        };
        self.thread_dep.insert(e, d);
        d
    }

    /// The SMT term for `e` as seen by thread `t` (1 or 2). Shared subterms are defined once.
    pub fn term(&mut self, e: ExprId, t: u8) -> String {
        let t = match self.depends_on_thread(e) {
            false => 0,
            true if !self.varies(e) => 1,
            true => t,
        };
        if let Some(n) = self.defined.get(&(e, t)) {
            return n.clone();
        }
        match *self.x.node(e) {
            Node::Const { value, bits } => return bv(value, bits),
            Node::Bool(b) => return b.to_string(),
            Node::Var { sym, bits } => return self.sym(sym, bits, t),
            _ => {}
        }
        let body = self.body(e, t);
        let name = format!("n{e}_{t}");
        let _ = writeln!(self.defs, "(define-fun {name} () {} {body})", sort(self.x.bits(e)));
        self.defined.insert((e, t), name.clone());
        name
    }

    /// Copy `t`'s own value of `e`, even where `e` is shared (see
    /// [`Encoder::assume_same_value`]): its operation applied to its operands' terms.
    pub fn own_term(&mut self, e: ExprId, t: u8) -> String {
        match *self.x.node(e) {
            Node::Var { sym, bits } if sym.is_thread_local() => self.sym(sym, bits, t),
            Node::Const { .. } | Node::Bool(_) | Node::Var { .. } => self.term(e, t),
            _ => self.body(e, t),
        }
    }

    /// The SMT expression of `e`'s operation over its operands' terms in copy `t` (a leaf is its
    /// own term).
    fn body(&mut self, e: ExprId, t: u8) -> String {
        match self.x.node(e).clone() {
            Node::Const { .. } | Node::Bool(_) | Node::Var { .. } => self.term(e, t),
            Node::Bin { op, a, b, bits } => {
                let (a, b) = (self.term(a, t), self.term(b, t));
                match op {
                    BinOp::Add => format!("(bvadd {a} {b})"),
                    BinOp::Sub => format!("(bvsub {a} {b})"),
                    BinOp::Mul => format!("(bvmul {a} {b})"),
                    BinOp::MulHiU => format!("((_ extract {} {bits}) (bvmul ((_ zero_extend {bits}) {a}) ((_ zero_extend {bits}) {b})))", 2 * bits - 1),
                    BinOp::MulHiS => format!("((_ extract {} {bits}) (bvmul ((_ sign_extend {bits}) {a}) ((_ sign_extend {bits}) {b})))", 2 * bits - 1),
                    BinOp::DivU => format!("(bvudiv {a} {b})"),
                    BinOp::DivS => format!("(bvsdiv {a} {b})"),
                    BinOp::RemU => format!("(bvurem {a} {b})"),
                    BinOp::RemS => format!("(bvsrem {a} {b})"),
                    BinOp::Shl => format!("(bvshl {a} {b})"),
                    BinOp::LShr => format!("(bvlshr {a} {b})"),
                    BinOp::AShr => format!("(bvashr {a} {b})"),
                    BinOp::And => format!("(bvand {a} {b})"),
                    BinOp::Or => format!("(bvor {a} {b})"),
                    BinOp::Xor => format!("(bvxor {a} {b})"),
                    BinOp::MinU => format!("(ite (bvule {a} {b}) {a} {b})"),
                    BinOp::MinS => format!("(ite (bvsle {a} {b}) {a} {b})"),
                    BinOp::MaxU => format!("(ite (bvuge {a} {b}) {a} {b})"),
                    BinOp::MaxS => format!("(ite (bvsge {a} {b}) {a} {b})"),
                }
            }
            Node::Un { op, a, bits } => {
                let a = self.term(a, t);
                match op {
                    UnOp::Not => format!("(bvnot {a})"),
                    UnOp::Neg => format!("(bvneg {a})"),
                    UnOp::AbsS => format!("(ite (bvslt {a} {}) (bvneg {a}) {a})", bv(0, bits)),
                    UnOp::Popc => popc(&a, bits),
                    UnOp::Clz => clz(&a, bits),
                    UnOp::Brev => brev(&a, bits),
                }
            }
            Node::Ext { a, from, to, signed } => {
                let a = self.term(a, t);
                if to > from {
                    format!("((_ {} {}) {a})", if signed { "sign_extend" } else { "zero_extend" }, to - from)
                } else {
                    format!("((_ extract {} 0) {a})", to - 1)
                }
            }
            Node::Cmp { op, a, b } => {
                let (a, b) = (self.term(a, t), self.term(b, t));
                let f = match op {
                    CmpOp::Eq => "=",
                    CmpOp::Ne => "distinct",
                    CmpOp::LtU => "bvult",
                    CmpOp::LeU => "bvule",
                    CmpOp::GtU => "bvugt",
                    CmpOp::GeU => "bvuge",
                    CmpOp::LtS => "bvslt",
                    CmpOp::LeS => "bvsle",
                    CmpOp::GtS => "bvsgt",
                    CmpOp::GeS => "bvsge",
                };
                format!("({f} {a} {b})")
            }
            Node::Not(a) => format!("(not {})", self.term(a, t)),
            Node::And(a, b) => format!("(and {} {})", self.term(a, t), self.term(b, t)),
            Node::Or(a, b) => format!("(or {} {})", self.term(a, t), self.term(b, t)),
            Node::Xor(a, b) => format!("(xor {} {})", self.term(a, t), self.term(b, t)),
            Node::Ite { c, a, b } => format!("(ite {} {} {})", self.term(c, t), self.term(a, t), self.term(b, t)),
        }
    }

    /// Declarations and definitions so far, followed by `assertions`.
    pub fn script(&self, assertions: &[String]) -> String {
        self.script_narrowed(assertions, &ExtraNarrowing::new())
    }

    /// [`Encoder::script`] with constants declared narrower by `extra` (a witness tier's
    /// small values: the solver bit-blasts a multiplication by a 7-bit parameter, not a
    /// 64-bit one, and answers such a tier in milliseconds where asserting the same bounds
    /// took it seconds). The narrowing excludes values, so the caller asserts what it means.
    pub fn script_narrowed(&self, assertions: &[String], extra: &ExtraNarrowing) -> String {
        let mut s = String::with_capacity(64 * self.decls.len() + self.defs.len() + 256);
        for (name, bits, own) in &self.decls {
            match Self::effective(*bits, *own, extra.get(name).copied()) {
                Some(n) => {
                    let extend = if n.signed { "sign_extend" } else { "zero_extend" };
                    let _ = writeln!(s, "(declare-const {name}__w {})", sort(n.bits));
                    let _ = writeln!(s, "(define-fun {name} () {} ((_ {extend} {}) {name}__w))", sort(*bits), bits - n.bits);
                }
                None => {
                    let _ = writeln!(s, "(declare-const {name} {})", sort(*bits));
                }
            }
        }
        s.push_str(&self.defs);
        for a in assertions {
            let _ = writeln!(s, "(assert {a})");
        }
        s
    }
}

/// Bit `i` of `a` as a 1-bit vector.
fn bit(a: &str, i: u32) -> String {
    format!("((_ extract {i} {i}) {a})")
}

/// The number of one bits of the `bits`-wide `a` (`eval_un(Popc)`), as a sum of its bits.
fn popc(a: &str, bits: u32) -> String {
    let terms: Vec<String> = (0..bits).map(|i| if bits == 1 { bit(a, i) } else { format!("((_ zero_extend {}) {})", bits - 1, bit(a, i)) }).collect();
    if terms.len() == 1 {
        terms[0].clone()
    } else {
        format!("(bvadd {})", terms.join(" "))
    }
}

/// The leading zeros of the `bits`-wide `a` (`eval_un(Clz)`, `bits` for 0): the position of the
/// highest one bit, found from the top.
fn clz(a: &str, bits: u32) -> String {
    let mut e = bv(bits as u64, bits);
    for i in 0..bits {
        e = format!("(ite (= {} #b1) {} {e})", bit(a, i), bv((bits - 1 - i) as u64, bits));
    }
    e
}

/// The bits of `a` in reverse order (`eval_un(Brev)`): bit 0 becomes the most significant.
fn brev(a: &str, bits: u32) -> String {
    if bits == 1 {
        return a.to_string();
    }
    let parts: Vec<String> = (0..bits).map(|i| bit(a, i)).collect();
    format!("(concat {})", parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smt::{ask, read_query, Outcome};
    use std::time::Duration;

    /// Every operator's SMT encoding agrees with `eval_bin` on sample values (checked by Z3).
    #[test]
    fn encoding_agrees_with_the_interpreter_semantics() {
        let ops = [
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::MulHiU,
            BinOp::MulHiS,
            BinOp::DivU,
            BinOp::DivS,
            BinOp::RemU,
            BinOp::RemS,
            BinOp::Shl,
            BinOp::LShr,
            BinOp::AShr,
            BinOp::And,
            BinOp::Or,
            BinOp::Xor,
            BinOp::MinU,
            BinOp::MinS,
            BinOp::MaxU,
            BinOp::MaxS,
        ];
        let samples: [(u64, u64); 6] = [(7, 2), (0xffff_fff9, 2), (5, 0), (0x8000_0000, 31), (3, 40), (0xffff_ffff, 0xffff_ffff)];
        let mut solver = ::smt::Solver::new(::smt::SolverKind::Z3);
        let mut asserts = Vec::new();
        let mut x = Exprs::new();
        let a = x.var(Sym::Param { index: 0, offset: 0 }, 32);
        let b = x.var(Sym::Param { index: 1, offset: 0 }, 32);
        let mut terms = Vec::new();
        for op in ops {
            terms.push((op, x.bin(op, a, b)));
        }
        for (va, vb) in samples {
            let mut enc = Encoder::new(&x);
            asserts.clear();
            let na = enc.term(a, 1);
            let nb = enc.term(b, 1);
            asserts.push(format!("(= {na} {})", bv(va, 32)));
            asserts.push(format!("(= {nb} {})", bv(vb, 32)));
            for (op, e) in &terms {
                let t = enc.term(*e, 1);
                asserts.push(format!("(= {t} {})", bv(eval_bin(*op, va, vb, 32), 32)));
            }
            let (r, _) = ask(&mut solver, &read_query(&enc.script(&asserts)).unwrap(), Duration::from_secs(2), &::smt::Never);
            assert!(matches!(r, Outcome::Sat(_)), "disagreement for ({va:#x}, {vb:#x}): {r:?}");
        }
    }

    /// `popc`, `clz` and `brev` are encoded bit by bit: for each sample and width, the encoded
    /// term can only equal `eval_un`'s value (asserting anything else is unsatisfiable).
    #[test]
    fn bit_counting_operators_are_encoded_exactly() {
        let mut solver = ::smt::Solver::new(::smt::SolverKind::Z3);
        for bits in [8u32, 16, 32, 64] {
            let m = mask(bits);
            for v in [0u64, 1, 0x80, 0x8000_0001, 0x0f0f_1234_5678_9abc, m, m >> 1] {
                let v = v & m;
                for op in [UnOp::Popc, UnOp::Clz, UnOp::Brev, UnOp::Not, UnOp::Neg, UnOp::AbsS] {
                    let mut x = Exprs::new();
                    let a = x.var(Sym::Param { index: 0, offset: 0 }, bits);
                    let e = x.un(op, a);
                    let mut enc = Encoder::new(&x);
                    let na = enc.term(a, 1);
                    let ne = enc.term(e, 1);
                    let want = eval_un(op, v, bits);
                    let script = enc.script(&[format!("(= {na} {})", bv(v, bits)), format!("(distinct {ne} {})", bv(want, bits))]);
                    let (r, _) = ask(&mut solver, &read_query(&script).unwrap(), Duration::from_secs(2), &::smt::Never);
                    assert!(matches!(r, Outcome::Unsat), "{op:?} on {bits}-bit {v:#x} can differ from {want:#x}: {r:?}");
                }
            }
        }
    }
}

#[cfg(test)]
mod same_iteration_tests {
    use super::*;
    use model::ops::Special;

    /// In one block and the same iteration of loop 0, a barrier's condition `k0 * ntid.x < n`
    /// is one term for both copies (the question is `p ∧ ¬p`), while a condition with the
    /// thread index, or the counter of a loop the copies may be in different iterations of,
    /// stays one term per copy.
    #[test]
    fn a_condition_of_shared_iterations_and_uniform_values_is_one_term() {
        let mut x = Exprs::new();
        let k0 = x.var(Sym::Counter(0), 32);
        let k1 = x.var(Sym::Counter(1), 32);
        let ntid = x.var(Sym::Special(Special::Ntid(0)), 32);
        let tid = x.var(Sym::Special(Special::Tid(0)), 32);
        let n = x.var(Sym::Param { index: 0, offset: 0 }, 32);
        let start = x.bin(BinOp::Mul, k0, ntid);
        let uniform = x.cmp(CmpOp::LtS, start, n);
        let with_tid = x.bin(BinOp::Add, start, tid);
        let per_thread = x.cmp(CmpOp::LtS, with_tid, n);
        let other_loop = x.bin(BinOp::Mul, k1, ntid);
        let other = x.cmp(CmpOp::LtS, other_loop, n);

        let mut enc = Encoder::new(&x);
        enc.assume_same_block();
        enc.assume_same_iterations(&[0]);
        assert_eq!(enc.term(uniform, 1), enc.term(uniform, 2));
        assert_ne!(enc.term(per_thread, 1), enc.term(per_thread, 2));
        assert_ne!(enc.term(other, 1), enc.term(other, 2));

        let mut enc = Encoder::new(&x);
        enc.assume_same_block();
        assert_ne!(enc.term(uniform, 1), enc.term(uniform, 2), "without the assumption the counters are the copies' own");
    }
}

#[cfg(test)]
mod narrow_tests {
    use super::*;
    use crate::smt::{ask, read_query, Outcome};
    use std::time::Duration;

    #[test]
    fn narrow_widths() {
        assert_eq!(Narrow::unsigned_max(0), Narrow { bits: 1, signed: false });
        assert_eq!(Narrow::unsigned_max(255), Narrow { bits: 8, signed: false });
        assert_eq!(Narrow::unsigned_max(256), Narrow { bits: 9, signed: false });
        assert_eq!(Narrow::signed_range(-1, 0), Narrow { bits: 1, signed: true });
        assert_eq!(Narrow::signed_range(-128, 127), Narrow { bits: 8, signed: true });
        assert_eq!(Narrow::signed_range(-129, 0), Narrow { bits: 9, signed: true });
        assert_eq!(Narrow::signed_range(5, 5), Narrow { bits: 4, signed: true });
    }

    /// A narrow constant takes exactly the values of its range at its full width (asked of Z3
    /// at the boundaries), and a sort no wider than the narrow width is declared as it is.
    #[test]
    fn a_narrow_constant_covers_its_range_and_no_more() {
        let x = Exprs::new();
        let mut solver = ::smt::Solver::new(::smt::SolverKind::Z3);
        let cases: [(Narrow, &[(i64, bool)]); 2] = [
            (Narrow::unsigned_max(1000), &[(0, true), (1000, true), (1023, true), (1024, false), (-1, false)]),
            (Narrow::signed_range(-3, 2), &[(-4, true), (-3, true), (3, true), (4, false), (-5, false)]),
        ];
        for (narrow, values) in cases {
            for &(v, fits) in values {
                let mut enc = Encoder::new(&x);
                enc.narrow("c", narrow);
                enc.declare("c", 32);
                assert_eq!(enc.narrowed(), ["c"]);
                let script = enc.script(&[format!("(= c {})", bv(v as u64, 32))]);
                let (answer, _) = ask(&mut solver, &read_query(&script).unwrap(), Duration::from_secs(5), &::smt::Never);
                assert_eq!(matches!(answer, Outcome::Sat(_)), fits, "{narrow:?} and {v}: {answer:?}");
            }
        }
        let mut enc = Encoder::new(&x);
        enc.narrow("b", Narrow::unsigned_max(1000));
        enc.declare("b", 8);
        assert!(enc.narrowed().is_empty());
        assert_eq!(enc.script(&[]), "(declare-const b (_ BitVec 8))\n");
    }

    /// A witness tier's narrowing applies where it is tighter than the constant's own (an
    /// unsigned range also inside a signed one), and leaves the query's own script alone.
    #[test]
    fn a_tier_narrows_a_constant_only_where_that_is_tighter() {
        let x = Exprs::new();
        let mut enc = Encoder::new(&x);
        enc.narrow("a", Narrow::unsigned_max(1000));
        enc.narrow("s", Narrow::signed_range(-100, 100));
        for (name, bits) in [("a", 32), ("b", 64), ("c", 32), ("s", 32), ("t", 32)] {
            enc.declare(name, bits);
        }
        let extra: ExtraNarrowing = [
            ("a", Narrow::unsigned_max(3)),
            ("b", Narrow::unsigned_max(127)),
            ("c", Narrow::unsigned_max(1 << 40)),
            ("s", Narrow::unsigned_max(15)),
            ("t", Narrow::signed_range(-1, 1)),
        ]
        .into_iter()
        .map(|(n, w)| (n.to_string(), w))
        .collect();
        let script = enc.script_narrowed(&[], &extra);
        for line in
            ["(declare-const a__w (_ BitVec 2))", "(declare-const b__w (_ BitVec 7))", "(declare-const c (_ BitVec 32))", "(declare-const s__w (_ BitVec 4))"]
        {
            assert!(script.contains(line), "{line} in {script}");
        }
        assert!(script.contains("(define-fun t () (_ BitVec 32) ((_ sign_extend 30) t__w))"), "{script}");
        assert_eq!(enc.narrowed_with(&extra), ["a", "b", "s", "t"]);
        assert!(enc.script(&[]).contains("(declare-const a__w (_ BitVec 10))"));
        assert_eq!(enc.narrowed(), ["a", "s"]);
    }
}

#[cfg(test)]
mod same_value_tests {
    use super::*;
    use model::ops::Special;

    /// With the row `tid >> 4` shared, the group's start `ctaid * n + (tid >> 4) * n` is one
    /// term for both copies only where the block is shared too; the lane `tid & 15` stays each
    /// copy's own; and copy 2's own row is its operation over its own thread index (what the
    /// caller ties to the shared term).
    #[test]
    fn a_shared_value_makes_the_terms_built_on_it_common() {
        let mut x = Exprs::new();
        let tid = x.var(Sym::Special(Special::Tid(0)), 32);
        let ctaid = x.var(Sym::Special(Special::Ctaid(0)), 32);
        let n = x.var(Sym::Param { index: 0, offset: 0 }, 32);
        let four = x.konst(4, 32);
        let fifteen = x.konst(15, 32);
        let row = x.bin(BinOp::LShr, tid, four);
        let lane = x.bin(BinOp::And, tid, fifteen);
        let in_block = x.bin(BinOp::Mul, row, n);
        let block_start = x.bin(BinOp::Mul, ctaid, n);
        let start = x.bin(BinOp::Add, block_start, in_block);

        let mut enc = Encoder::new(&x);
        enc.assume_same_value(row);
        assert_eq!(enc.term(in_block, 1), enc.term(in_block, 2));
        assert_ne!(enc.term(start, 1), enc.term(start, 2), "the blocks may differ");
        assert_ne!(enc.term(lane, 1), enc.term(lane, 2));
        assert_eq!(enc.own_term(row, 2), "(bvlshr tid_x_2 (_ bv4 32))");
        assert_eq!(enc.own_term(ctaid, 2), "ctaid_x_2");

        let mut enc = Encoder::new(&x);
        enc.assume_same_block();
        enc.assume_same_value(row);
        assert_eq!(enc.term(start, 1), enc.term(start, 2));
    }
}
