//! Hash-consed symbolic expressions over bit-vectors and booleans.
//!
//! Every node is created through `Exprs`, which folds constants with the same functions the
//! interpreter uses (`ops::eval_*`) and applies a few algebraic identities, so that addresses
//! read like the source (`ctaid.x*ntid.x + tid.x`) and path conditions of if/else diamonds
//! collapse back to their dominator's condition.

use crate::cfg::{BlockId, LoopId};
use crate::ops::*;
use std::collections::HashMap;
use std::fmt::Write;

pub type ExprId = u32;

/// Width 0 is the boolean sort.
pub const BOOL: u32 = 0;

/// A symbolic leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sym {
    Special(Special),
    /// Bytes `offset..` of kernel parameter `index`.
    Param {
        index: u32,
        offset: u32,
    },
    /// The base address of a variable (a `.shared` array, a `.global` variable).
    VarBase(VarId),
    /// The iteration number of a loop (0 for the first pass through the body). After the loop it
    /// denotes the iteration in which the loop was left.
    Counter(LoopId),
    /// A loop-carried register value the lifter could not summarise: any value, per iteration.
    Havoc {
        lp: LoopId,
        reg: RegId,
    },
    /// A register's value at the loop header during the probe pass that finds induction variables.
    Header {
        lp: LoopId,
        reg: RegId,
    },
    /// A value produced by an instruction the model does not track precisely: a load's result
    /// (element `elem` of a vector load), a float operation, a shuffle, a vote.
    Value {
        block: BlockId,
        inst: u32,
        elem: u32,
    },
}

impl Sym {
    /// Whether two threads can see different values of this symbol.
    pub fn is_thread_local(self) -> bool {
        !matches!(self, Sym::Special(Special::Ntid(_) | Special::Nctaid(_)) | Sym::Param { .. } | Sym::VarBase(_))
    }

    /// Whether two threads of the same block see the same value (for `ctaid`).
    pub fn is_block_uniform(self) -> bool {
        !self.is_thread_local() || matches!(self, Sym::Special(Special::Ctaid(_)))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    Const { value: u64, bits: u32 },
    Bool(bool),
    Var { sym: Sym, bits: u32 },
    Bin { op: BinOp, a: ExprId, b: ExprId, bits: u32 },
    Un { op: UnOp, a: ExprId, bits: u32 },
    Ext { a: ExprId, from: u32, to: u32, signed: bool },
    Cmp { op: CmpOp, a: ExprId, b: ExprId },
    Not(ExprId),
    And(ExprId, ExprId),
    Or(ExprId, ExprId),
    Xor(ExprId, ExprId),
    Ite { c: ExprId, a: ExprId, b: ExprId },
}

#[derive(Clone, Debug, Default)]
pub struct Exprs {
    nodes: Vec<Node>,
    bits: Vec<u32>,
    ids: HashMap<Node, ExprId>,
}

impl Exprs {
    pub fn new() -> Exprs {
        Exprs::default()
    }

    pub fn node(&self, e: ExprId) -> &Node {
        &self.nodes[e as usize]
    }

    /// Width in bits, or `BOOL` (0).
    pub fn bits(&self, e: ExprId) -> u32 {
        self.bits[e as usize]
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    fn intern(&mut self, n: Node, bits: u32) -> ExprId {
        if let Some(&id) = self.ids.get(&n) {
            return id;
        }
        let id = self.nodes.len() as ExprId;
        self.nodes.push(n.clone());
        self.bits.push(bits);
        self.ids.insert(n, id);
        id
    }

    pub fn konst(&mut self, value: u64, bits: u32) -> ExprId {
        self.intern(Node::Const { value: value & mask(bits), bits }, bits)
    }

    pub fn boolean(&mut self, b: bool) -> ExprId {
        self.intern(Node::Bool(b), BOOL)
    }

    pub fn var(&mut self, sym: Sym, bits: u32) -> ExprId {
        self.intern(Node::Var { sym, bits }, bits)
    }

    /// The node of a symbol, if some expression uses it, with its width.
    pub fn find_var(&self, sym: Sym) -> Option<(ExprId, u32)> {
        [BOOL, 8, 16, 32, 64, 128].into_iter().find_map(|bits| self.ids.get(&Node::Var { sym, bits }).map(|&id| (id, bits)))
    }

    pub fn as_const(&self, e: ExprId) -> Option<u64> {
        match self.node(e) {
            Node::Const { value, .. } => Some(*value),
            _ => None,
        }
    }

    pub fn as_bool(&self, e: ExprId) -> Option<bool> {
        match self.node(e) {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn bin(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
        let bits = self.bits(a);
        debug_assert_eq!(bits, self.bits(b), "{op:?} on different widths");
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            return self.konst(eval_bin(op, x, y, bits), bits);
        }
        let (ca, cb) = (self.as_const(a), self.as_const(b));
        use BinOp::*;
        match op {
            Add | Or | Xor if cb == Some(0) => return a,
            Add | Or | Xor if ca == Some(0) => return b,
            Sub | Shl | LShr | AShr if cb == Some(0) => return a,
            Sub if a == b => return self.konst(0, bits),
            Sub => {
                if let Some(c) = cb {
                    let neg = self.konst(c.wrapping_neg(), bits);
                    return self.bin(Add, a, neg);
                }
            }
            Mul if cb == Some(1) => return a,
            Mul if ca == Some(1) => return b,
            Mul | And if cb == Some(0) || ca == Some(0) => return self.konst(0, bits),
            And if cb == Some(mask(bits)) => return a,
            And if a == b => return a,
            Mul if cb.is_some_and(|c| c.is_power_of_two()) => {
                let sh = self.konst(cb.unwrap().trailing_zeros() as u64, bits);
                return self.bin(Shl, a, sh);
            }
            DivU if cb.is_some_and(|c| c.is_power_of_two()) => {
                let sh = self.konst(cb.unwrap().trailing_zeros() as u64, bits);
                return self.bin(LShr, a, sh);
            }
            _ => {}
        }
        // Canonical order for commutative operators: constants on the right.
        let (a, b) = if matches!(op, Add | Mul | And | Or | Xor | MinU | MinS | MaxU | MaxS) && ca.is_some() { (b, a) } else { (a, b) };
        // (x + c1) + c2 = x + (c1 + c2)
        if op == Add {
            if let (Node::Bin { op: Add, a: x, b: c1, .. }, Some(c2)) = (self.node(a).clone(), self.as_const(b)) {
                if let Some(c1) = self.as_const(c1) {
                    let c = self.konst(c1.wrapping_add(c2), bits);
                    return self.bin(Add, x, c);
                }
            }
        }
        self.intern(Node::Bin { op, a, b, bits }, bits)
    }

    pub fn un(&mut self, op: UnOp, a: ExprId) -> ExprId {
        let bits = self.bits(a);
        if let Some(x) = self.as_const(a) {
            return self.konst(eval_un(op, x, bits), bits);
        }
        if let (UnOp::Not | UnOp::Neg, Node::Un { op: inner, a: x, .. }) = (op, self.node(a)) {
            if *inner == op {
                return *x;
            }
        }
        self.intern(Node::Un { op, a, bits }, bits)
    }

    pub fn ext(&mut self, a: ExprId, to: u32, signed: bool) -> ExprId {
        let from = self.bits(a);
        if from == to {
            return a;
        }
        if let Some(x) = self.as_const(a) {
            return self.konst(eval_ext(x, from, to, signed), to);
        }
        // Truncating an extension back to (or below) its source width.
        if let Node::Ext { a: inner, from: f0, .. } = *self.node(a) {
            if to <= f0 && to < from {
                return self.ext(inner, to, false);
            }
        }
        // A value of launch dimensions and thread indices that cannot reach its sign bit widens
        // the same either way; one spelling (signed) makes one term of the two a kernel writes
        // (clang's `mul.wide.u32` of a thread's rank for an address, `cvt.s64.s32` of the same
        // rank in the loop's no-overflow fact), which the solver would otherwise prove equal
        // through the products inside them (apex's layer norm: a race it could not refute).
        let signed = signed || (to > from && self.is_launch_value_below_sign(a));
        self.intern(Node::Ext { a, from, to, signed }, to)
    }

    /// Whether `e` is computed from launch dimensions, thread and block indices and constants
    /// alone and stays below its width's sign bit on every launch CUDA allows (see
    /// [`Exprs::hardware_max`]): either widening of it is the same value.
    pub fn is_launch_value_below_sign(&self, e: ExprId) -> bool {
        let bits = self.bits(e);
        bits > BOOL && self.hardware_max(e, 0).is_some_and(|m| m < 1u128 << (bits - 1))
    }

    /// The largest value `e` takes, as an unsigned number of its width, on any launch CUDA
    /// allows (at most 1024 threads a block, 64 along z, grids of 2^31 - 1 by 65535 by 65535
    /// blocks), when it is computed from launch dimensions, thread and block indices and
    /// constants without wrapping around; `None` otherwise (it reads anything else, or a bound
    /// does not fit its width).
    pub fn hardware_max(&self, e: ExprId, depth: u32) -> Option<u128> {
        use crate::ops::Special::*;
        self.max_within(e, depth, &|s| match s {
            Tid(2) => Some(63),
            Ntid(2) => Some(64),
            Tid(_) => Some(1023),
            Ntid(_) => Some(1024),
            Ctaid(0) => Some(0x7fff_fffe),
            Nctaid(0) => Some(0x7fff_ffff),
            Ctaid(_) => Some(65534),
            Nctaid(_) => Some(65535),
            LaneId => Some(31),
            WarpId | Timer => None,
        })
    }

    /// [`Exprs::hardware_max`] with each launch symbol at most `limit` of it (`None`: no bound):
    /// a launch narrower than the hardware's, such as an interface's.
    pub fn max_within(&self, e: ExprId, depth: u32, limit: &dyn Fn(crate::ops::Special) -> Option<u128>) -> Option<u128> {
        const MAX_DEPTH: u32 = 12;
        if depth > MAX_DEPTH {
            return None;
        }
        let bits = self.bits(e);
        if bits == BOOL || bits > 64 {
            return None;
        }
        let max = match *self.node(e) {
            Node::Const { value, .. } => value as u128,
            Node::Var { sym: Sym::Special(s), .. } => limit(s)?,
            Node::Bin { op, a, b, .. } => {
                // The right operand only where the left one allows an answer (this runs for
                // each unsigned widening the lifter builds).
                let ma = self.max_within(a, depth + 1, limit);
                if ma.is_none() && op != BinOp::And && op != BinOp::MinU {
                    return None;
                }
                let mb = self.max_within(b, depth + 1, limit);
                match op {
                    BinOp::Add => ma? + mb?,
                    BinOp::Mul => ma? * mb?,
                    BinOp::Shl => ma? << u32::try_from(self.as_const(b)?).ok().filter(|&n| n < 64)?,
                    // A constant shift or divisor shrinks the bound by as much (a group of 16
                    // lanes, `tid >> 4`, is at most 63 in 1024 threads); an unknown one at most
                    // keeps it.
                    BinOp::LShr => ma? >> self.as_const(b).map_or(0, |n| n.min(127)),
                    // Division by zero gives all ones; a nonzero constant divisor only shrinks.
                    BinOp::DivU if self.as_const(b).is_some_and(|d| d != 0) => ma? / self.as_const(b)? as u128,
                    BinOp::RemU => ma?,
                    BinOp::And => match (ma, mb) {
                        (Some(x), Some(y)) => x.min(y),
                        (Some(x), None) | (None, Some(x)) => x,
                        (None, None) => return None,
                    },
                    BinOp::Or | BinOp::Xor => {
                        let m = ma?.max(mb?);
                        (1u128 << (u128::BITS - m.leading_zeros())) - 1
                    }
                    BinOp::MinU => ma.unwrap_or(u128::MAX).min(mb.unwrap_or(u128::MAX)),
                    BinOp::MaxU => ma?.max(mb?),
                    _ => return None,
                }
            }
            Node::Ext { a, from, .. } => {
                // Either widening keeps a value below the source's sign bit.
                let m = self.max_within(a, depth + 1, limit)?;
                if m >= 1u128 << (from - 1) {
                    return None;
                }
                m
            }
            _ => return None,
        };
        (max < 1u128 << bits).then_some(max)
    }

    pub fn cmp(&mut self, op: CmpOp, a: ExprId, b: ExprId) -> ExprId {
        let bits = self.bits(a);
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            return self.boolean(eval_cmp(op, x, y, bits));
        }
        if a == b {
            return self.boolean(matches!(op, CmpOp::Eq | CmpOp::LeU | CmpOp::GeU | CmpOp::LeS | CmpOp::GeS));
        }
        self.intern(Node::Cmp { op, a, b }, BOOL)
    }

    pub fn not(&mut self, a: ExprId) -> ExprId {
        match *self.node(a) {
            Node::Bool(b) => self.boolean(!b),
            Node::Not(x) => x,
            Node::Cmp { op, a: x, b: y } => self.cmp(op.negate(), x, y),
            _ => self.intern(Node::Not(a), BOOL),
        }
    }

    pub fn and(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_bool(a), self.as_bool(b)) {
            (Some(false), _) | (_, Some(false)) => return self.boolean(false),
            (Some(true), _) => return b,
            (_, Some(true)) => return a,
            _ => {}
        }
        if a == b || self.implies_by_structure(a, b) {
            return a;
        }
        if self.implies_by_structure(b, a) {
            return b;
        }
        if self.not(a) == b {
            return self.boolean(false);
        }
        self.intern(Node::And(a, b), BOOL)
    }

    pub fn or(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_bool(a), self.as_bool(b)) {
            (Some(true), _) | (_, Some(true)) => return self.boolean(true),
            (Some(false), _) => return b,
            (_, Some(false)) => return a,
            _ => {}
        }
        if a == b || self.implies_by_structure(b, a) {
            return a;
        }
        if self.implies_by_structure(a, b) {
            return b;
        }
        if self.not(a) == b {
            return self.boolean(true);
        }
        // (x & c) | (x & !c) = x, the join of an if/else diamond.
        if let (Node::And(x1, c1), Node::And(x2, c2)) = (self.node(a).clone(), self.node(b).clone()) {
            if x1 == x2 && self.not(c1) == c2 {
                return x1;
            }
        }
        self.intern(Node::Or(a, b), BOOL)
    }

    /// `a` is a conjunction that contains `b` as a conjunct (so `a` implies `b`).
    fn implies_by_structure(&self, a: ExprId, b: ExprId) -> bool {
        let mut cur = a;
        for _ in 0..64 {
            match self.node(cur) {
                Node::And(x, y) => {
                    if *y == b || *x == b {
                        return true;
                    }
                    cur = *x;
                }
                _ => return false,
            }
        }
        false
    }

    pub fn xor(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_bool(a), self.as_bool(b)) {
            (Some(x), Some(y)) => self.boolean(x ^ y),
            (Some(false), _) => b,
            (_, Some(false)) => a,
            (Some(true), _) => self.not(b),
            (_, Some(true)) => self.not(a),
            _ if a == b => self.boolean(false),
            _ => self.intern(Node::Xor(a, b), BOOL),
        }
    }

    pub fn ite(&mut self, c: ExprId, a: ExprId, b: ExprId) -> ExprId {
        if a == b {
            return a;
        }
        match self.as_bool(c) {
            Some(true) => return a,
            Some(false) => return b,
            None => {}
        }
        if self.bits(a) == BOOL {
            // Boolean ite as and/or keeps path conditions in the shapes `or` simplifies.
            let l = self.and(c, a);
            let nc = self.not(c);
            let r = self.and(nc, b);
            return self.or(l, r);
        }
        let bits = self.bits(a);
        self.intern(Node::Ite { c, a, b }, bits)
    }

    /// Evaluates an expression where `env` gives every symbol a value (booleans are 0/1), with
    /// the same operator meanings as the interpreter. `None` when a symbol has no value.
    pub fn eval(&self, e: ExprId, env: &dyn Fn(Sym) -> Option<u64>, memo: &mut HashMap<ExprId, u64>) -> Option<u64> {
        if let Some(&v) = memo.get(&e) {
            return Some(v);
        }
        let v = match *self.node(e) {
            Node::Const { value, .. } => value,
            Node::Bool(b) => b as u64,
            Node::Var { sym, bits } => env(sym)? & if bits == BOOL { 1 } else { mask(bits) },
            Node::Bin { op, a, b, bits } => eval_bin(op, self.eval(a, env, memo)?, self.eval(b, env, memo)?, bits),
            Node::Un { op, a, bits } => eval_un(op, self.eval(a, env, memo)?, bits),
            Node::Ext { a, from, to, signed } => eval_ext(self.eval(a, env, memo)?, from, to, signed),
            Node::Cmp { op, a, b } => {
                let bits = self.bits(a);
                eval_cmp(op, self.eval(a, env, memo)?, self.eval(b, env, memo)?, bits) as u64
            }
            Node::Not(a) => 1 - self.eval(a, env, memo)?,
            Node::And(a, b) => {
                if self.eval(a, env, memo)? == 0 {
                    0
                } else {
                    self.eval(b, env, memo)?
                }
            }
            Node::Or(a, b) => {
                if self.eval(a, env, memo)? == 1 {
                    1
                } else {
                    self.eval(b, env, memo)?
                }
            }
            Node::Xor(a, b) => self.eval(a, env, memo)? ^ self.eval(b, env, memo)?,
            Node::Ite { c, a, b } => {
                if self.eval(c, env, memo)? == 1 {
                    self.eval(a, env, memo)?
                } else {
                    self.eval(b, env, memo)?
                }
            }
        };
        memo.insert(e, v);
        Some(v)
    }

    /// Replaces symbols by expressions (memoised over the DAG).
    pub fn subst(&mut self, e: ExprId, map: &HashMap<Sym, ExprId>) -> ExprId {
        let mut memo = HashMap::new();
        self.subst_rec(e, map, &mut memo)
    }

    /// Replaces symbols by expressions, and the nodes `nodes` maps by their images (which are
    /// not substituted further).
    pub fn subst_nodes(&mut self, e: ExprId, map: &HashMap<Sym, ExprId>, nodes: HashMap<ExprId, ExprId>) -> ExprId {
        let mut memo = nodes;
        self.subst_rec(e, map, &mut memo)
    }

    fn subst_rec(&mut self, e: ExprId, map: &HashMap<Sym, ExprId>, memo: &mut HashMap<ExprId, ExprId>) -> ExprId {
        if let Some(&r) = memo.get(&e) {
            return r;
        }
        let r = match self.node(e).clone() {
            Node::Const { .. } | Node::Bool(_) => e,
            Node::Var { sym, .. } => map.get(&sym).copied().unwrap_or(e),
            Node::Bin { op, a, b, .. } => {
                let (a, b) = (self.subst_rec(a, map, memo), self.subst_rec(b, map, memo));
                self.bin(op, a, b)
            }
            Node::Un { op, a, .. } => {
                let a = self.subst_rec(a, map, memo);
                self.un(op, a)
            }
            Node::Ext { a, to, signed, .. } => {
                let a = self.subst_rec(a, map, memo);
                self.ext(a, to, signed)
            }
            Node::Cmp { op, a, b } => {
                let (a, b) = (self.subst_rec(a, map, memo), self.subst_rec(b, map, memo));
                self.cmp(op, a, b)
            }
            Node::Not(a) => {
                let a = self.subst_rec(a, map, memo);
                self.not(a)
            }
            Node::And(a, b) => {
                let (a, b) = (self.subst_rec(a, map, memo), self.subst_rec(b, map, memo));
                self.and(a, b)
            }
            Node::Or(a, b) => {
                let (a, b) = (self.subst_rec(a, map, memo), self.subst_rec(b, map, memo));
                self.or(a, b)
            }
            Node::Xor(a, b) => {
                let (a, b) = (self.subst_rec(a, map, memo), self.subst_rec(b, map, memo));
                self.xor(a, b)
            }
            Node::Ite { c, a, b } => {
                let (c, a, b) = (self.subst_rec(c, map, memo), self.subst_rec(a, map, memo), self.subst_rec(b, map, memo));
                self.ite(c, a, b)
            }
        };
        memo.insert(e, r);
        r
    }

    /// The children of a node.
    pub fn children(&self, e: ExprId) -> Vec<ExprId> {
        match *self.node(e) {
            Node::Const { .. } | Node::Bool(_) | Node::Var { .. } => vec![],
            Node::Bin { a, b, .. } | Node::Cmp { a, b, .. } | Node::And(a, b) | Node::Or(a, b) | Node::Xor(a, b) => vec![a, b],
            Node::Un { a, .. } | Node::Ext { a, .. } | Node::Not(a) => vec![a],
            Node::Ite { c, a, b } => vec![c, a, b],
        }
    }

    /// All symbols an expression mentions.
    pub fn symbols(&self, e: ExprId) -> Vec<Sym> {
        let mut seen = std::collections::HashSet::new();
        let mut out = std::collections::BTreeSet::new();
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            if let Node::Var { sym, .. } = self.node(x) {
                out.insert(*sym);
            }
            stack.extend(self.children(x));
        }
        out.into_iter().collect()
    }

    /// Infix rendering for dumps and hovers; `name` renders leaves. Deep expressions are cut.
    pub fn display(&self, e: ExprId, name: &dyn Fn(Sym) -> String) -> String {
        let mut s = String::new();
        self.render(e, name, &mut s, 0);
        s
    }

    fn render(&self, e: ExprId, name: &dyn Fn(Sym) -> String, out: &mut String, depth: u32) {
        if depth > 12 || out.len() > 400 {
            out.push('…');
            return;
        }
        let sub = |x: ExprId, out: &mut String| {
            let atomic = matches!(self.node(x), Node::Const { .. } | Node::Bool(_) | Node::Var { .. } | Node::Ext { .. });
            if !atomic {
                out.push('(');
            }
            self.render(x, name, out, depth + 1);
            if !atomic {
                out.push(')');
            }
        };
        match *self.node(e) {
            Node::Const { value, bits } => {
                let v = sext(value, bits);
                let _ = if (-4096..=65536).contains(&v) { write!(out, "{v}") } else { write!(out, "{value:#x}") };
            }
            Node::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Node::Var { sym, .. } => out.push_str(&name(sym)),
            Node::Bin { op, a, b, .. } => {
                let sym = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::MulHiU | BinOp::MulHiS => "*hi",
                    BinOp::DivU | BinOp::DivS => "/",
                    BinOp::RemU | BinOp::RemS => "%",
                    BinOp::Shl => "<<",
                    BinOp::LShr => ">>",
                    BinOp::AShr => ">>s",
                    BinOp::And => "&",
                    BinOp::Or => "|",
                    BinOp::Xor => "^",
                    BinOp::MinU | BinOp::MinS => "min",
                    BinOp::MaxU | BinOp::MaxS => "max",
                };
                sub(a, out);
                let _ = write!(out, " {sym} ");
                sub(b, out);
            }
            Node::Un { op, a, .. } => {
                let _ = write!(out, "{op:?}(").map(|_| ());
                self.render(a, name, out, depth + 1);
                out.push(')');
            }
            Node::Ext { a, .. } => self.render(a, name, out, depth + 1),
            Node::Cmp { op, a, b } => {
                let sym = match op {
                    CmpOp::Eq => "==",
                    CmpOp::Ne => "!=",
                    CmpOp::LtU | CmpOp::LtS => "<",
                    CmpOp::LeU | CmpOp::LeS => "<=",
                    CmpOp::GtU | CmpOp::GtS => ">",
                    CmpOp::GeU | CmpOp::GeS => ">=",
                };
                sub(a, out);
                let _ = write!(out, " {sym} ");
                sub(b, out);
            }
            Node::Not(a) => {
                out.push('!');
                sub(a, out);
            }
            Node::And(a, b) | Node::Or(a, b) | Node::Xor(a, b) => {
                let sym = match self.node(e) {
                    Node::And(..) => " && ",
                    Node::Or(..) => " || ",
                    _ => " ^ ",
                };
                sub(a, out);
                out.push_str(sym);
                sub(b, out);
            }
            Node::Ite { c, a, b } => {
                sub(c, out);
                out.push_str(" ? ");
                sub(a, out);
                out.push_str(" : ");
                sub(b, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_of_launch_dimensions_below_its_sign_bit_widens_signed() {
        let mut x = Exprs::new();
        let (tid_x, tid_y) = (x.var(Sym::Special(Special::Tid(0)), 32), x.var(Sym::Special(Special::Tid(1)), 32));
        let ntid_x = x.var(Sym::Special(Special::Ntid(0)), 32);
        let ty = x.bin(BinOp::Mul, tid_y, ntid_x);
        let rank = x.bin(BinOp::Add, ty, tid_x);
        assert_eq!(x.hardware_max(rank, 0), Some(1023 * 1024 + 1023));
        // Unsigned and signed widenings of a thread's rank are one node, signed.
        let (u, s) = (x.ext(rank, 64, false), x.ext(rank, 64, true));
        assert_eq!(u, s);
        assert!(matches!(x.node(u), Node::Ext { signed: true, .. }));
        // A global index can reach the sign bit (2^31 - 1 blocks of 1024 threads): it keeps
        // the widening the kernel wrote, as does anything read from a parameter.
        let ctaid = x.var(Sym::Special(Special::Ctaid(0)), 32);
        let block = x.bin(BinOp::Mul, ctaid, ntid_x);
        let global = x.bin(BinOp::Add, block, tid_x);
        assert_eq!(x.hardware_max(global, 0), None);
        let wide = x.ext(global, 64, false);
        assert!(matches!(x.node(wide), Node::Ext { signed: false, .. }));
        let n = x.var(Sym::Param { index: 0, offset: 0 }, 32);
        let wrapped = x.bin(BinOp::And, n, tid_x);
        assert_eq!(x.hardware_max(wrapped, 0), Some(1023));
        let wide = x.ext(n, 64, false);
        assert!(matches!(x.node(wide), Node::Ext { signed: false, .. }));
        // Division by a value that may be zero gives all ones.
        let by_n = x.bin(BinOp::DivU, tid_x, n);
        assert_eq!(x.hardware_max(by_n, 0), None);
        // A 16-bit copy of a value that does not fit 15 bits keeps its widening.
        let narrow = x.ext(rank, 16, false);
        assert_eq!(x.hardware_max(narrow, 0), None);
    }

    #[test]
    fn folds_and_simplifies() {
        let mut x = Exprs::new();
        let t = x.var(Sym::Special(Special::Tid(0)), 32);
        let four = x.konst(4, 32);
        let a = x.bin(BinOp::Mul, t, four);
        let b = x.bin(BinOp::Mul, t, four);
        assert_eq!(a, b, "hash-consed");
        assert!(matches!(x.node(a), Node::Bin { op: BinOp::Shl, .. }));
        let one = x.konst(1, 32);
        let two = x.konst(2, 32);
        let a1 = x.bin(BinOp::Add, a, one);
        let a2 = x.bin(BinOp::Add, a1, one);
        let a3 = x.bin(BinOp::Add, a, two);
        assert_eq!(a2, a3);
        let c = x.cmp(CmpOp::LtU, t, four);
        let nc = x.not(c);
        assert!(matches!(x.node(nc), Node::Cmp { op: CmpOp::GeU, .. }));
        let p = x.var(Sym::Param { index: 0, offset: 0 }, 32);
        let pz = x.cmp(CmpOp::Eq, p, one);
        let l = x.and(pz, c);
        let r = x.and(pz, nc);
        assert_eq!(x.or(l, r), pz, "diamond join collapses");
        let name = |s: Sym| format!("{s:?}");
        let seven = x.konst(7, 32);
        assert_eq!(x.display(seven, &name), "7");
    }
}
