//! SMT-LIB encoding of model expressions for two thread copies.
//!
//! The two-thread reduction (as in GPUVerify and Faial) asks about two arbitrary distinct
//! threads: each thread-local symbol (`tid`, loop counters, loaded values) gets one copy per
//! thread (`tid_x_1`, `tid_x_2`), while uniform ones (`ntid`, parameters) are shared. Every
//! operator maps to the SMT-LIB bit-vector operator with the meaning `model::ops::eval_bin`
//! gives it, so the solver, the interpreter and constant folding agree.

use model::expr::{ExprId, Exprs, Node, Sym, BOOL};
use model::ops::*;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

pub struct Encoder<'a> {
    x: &'a Exprs,
    decls: String,
    defs: String,
    declared: HashSet<String>,
    defined: HashMap<(ExprId, u8), String>,
    thread_dep: HashMap<ExprId, bool>,
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
        Encoder { x, decls: String::new(), defs: String::new(), declared: HashSet::new(), defined: HashMap::new(), thread_dep: HashMap::new() }
    }

    /// Declares a constant once.
    pub fn declare(&mut self, name: &str, bits: u32) {
        if self.declared.insert(name.to_string()) {
            let _ = writeln!(self.decls, "(declare-const {name} {})", sort(bits));
        }
    }

    pub fn is_declared(&self, name: &str) -> bool {
        self.declared.contains(name)
    }

    /// Declares a symbol's copy for thread `t` and returns its name.
    pub fn sym(&mut self, s: Sym, bits: u32, t: u8) -> String {
        let name = sym_name(s, t);
        self.declare(&name, bits);
        name
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
        let t = if self.depends_on_thread(e) { t } else { 0 };
        if let Some(n) = self.defined.get(&(e, t)) {
            return n.clone();
        }
        let bits = self.x.bits(e);
        let body = match self.x.node(e).clone() {
            Node::Const { value, bits } => return bv(value, bits),
            Node::Bool(b) => return b.to_string(),
            Node::Var { sym, bits } => return self.sym(sym, bits, t),
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
                    UnOp::Popc | UnOp::Clz | UnOp::Brev => {
                        // Not encoded bit by bit: an unconstrained value over-approximates.
                        let name = format!("u{e}_{t}");
                        self.declare(&name, bits);
                        self.defined.insert((e, t), name.clone());
                        return name;
                    }
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
        };
        let name = format!("n{e}_{t}");
        let _ = writeln!(self.defs, "(define-fun {name} () {} {body})", sort(bits));
        self.defined.insert((e, t), name.clone());
        name
    }

    /// Declarations and definitions so far, followed by `assertions`.
    pub fn script(&self, assertions: &[String]) -> String {
        let mut s = String::with_capacity(self.decls.len() + self.defs.len() + 256);
        s.push_str(&self.decls);
        s.push_str(&self.defs);
        for a in assertions {
            let _ = writeln!(s, "(assert {a})");
        }
        s
    }
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
}
