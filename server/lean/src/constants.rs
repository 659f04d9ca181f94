//! The literal-constant hypotheses of a module.
//!
//! The equivalence engine reads a float literal of the kernel as the constant it rounds
//! (`1.4426950f` in `ex2(x * 1.4426950f)` as `log2(e) = 1/ln 2`, `0.7978845608f` as
//! `sqrt(2/pi)`; `equiv::constants`). In Lean the literal is its exact rational and `I.ln2`,
//! `I.pi`, `I.sqrt` are abstract, so an obligation that needs the reading is unprovable without
//! it. The module states each reading as an identity on `I : Ideal` (`I.ln2 * c = 1`,
//! `I.sqrt (2 / I.pi) = c`), collects them in `def LiteralConstants (I : Ideal) : Prop`, takes it
//! as a hypothesis of the equivalence obligations, and proves the identities jointly satisfiable
//! with an explicit model, `Ideal.withConstants ln2 pi sqrtTable` (lean/Lark/Ideal.lean), whose
//! values are found here and checked by Lean's kernel (`decide +kernel`).
//!
//! A literal read as a rational constant of the reference (`0.044715f` as `0.044715`, `1e-6f` as
//! `eps`) differs from it in exact arithmetic, and no hypothesis on `I` can help: the module
//! states the reference with the literal's value at that constant instead ([`Restated`]), as
//! PyTorch itself converts a Python scalar to a `float32` tensor's type.
//!
//! An identity with no such model is never stated: `I.exp 1 = c` has none for `c ≠ 1` (by
//! `exp_add`, `exp 1` is the `n`-th power of the rational `exp (1/n)` for every `n`), and two
//! readings can contradict each other (`pi` and `2/pi` rounded separately, two literals of
//! different precision for one reference constant). Such an identity is left out, with a comment in the module and a note saying
//! that the obligations that needed it cannot be proved: the kernel stays uncertified, never
//! certified by a vacuous hypothesis.
//!
//! Rust evaluates every identity exactly as Lean does under the model (`Rat` division by zero
//! is `0`, `sqrt` a table lookup), so what is stated is what Lean's `decide` will find true.

use crate::emit::names::comment_text;
use equiv::constants::{Known, Origin};
use equiv::facts::LiteralConstant;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use reference::{Graph, Node, NodeId, UnaryFn};
use std::fmt::Write as _;

/// A closed expression over the constants of an `Ideal`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CExpr {
    Rat(BigRational),
    Pi,
    Ln2,
    Add(Box<CExpr>, Box<CExpr>),
    Sub(Box<CExpr>, Box<CExpr>),
    Mul(Box<CExpr>, Box<CExpr>),
    Div(Box<CExpr>, Box<CExpr>),
    Neg(Box<CExpr>),
    /// `ratZPow a k`.
    Pow(Box<CExpr>, i64),
    /// `if a < 0 then -a else a`.
    Abs(Box<CExpr>),
    /// An ideal function (`exp`, `log`, `sqrt`, `rsqrt`, `tanh`, `erf`, `sin`, `cos`).
    Fun(&'static str, Box<CExpr>),
}

fn b(e: CExpr) -> Box<CExpr> {
    Box::new(e)
}

fn int(n: i64) -> CExpr {
    CExpr::Rat(BigRational::from_integer(n.into()))
}

impl CExpr {
    /// The constant of the catalogue.
    pub fn known(k: Known) -> CExpr {
        use CExpr::*;
        match k {
            Known::Pi => Pi,
            Known::InvPi => Div(b(int(1)), b(Pi)),
            Known::TwoOverPi => Div(b(int(2)), b(Pi)),
            Known::SqrtTwoOverPi => Fun("sqrt", b(Div(b(int(2)), b(Pi)))),
            Known::Sqrt2 => Fun("sqrt", b(int(2))),
            Known::InvSqrt2 => Div(b(int(1)), b(Fun("sqrt", b(int(2))))),
            Known::Ln2 => Ln2,
            Known::Log2E => Div(b(int(1)), b(Ln2)),
            Known::E => Fun("exp", b(int(1))),
        }
    }

    /// The constant sub-expression of the reference at `id`, as `RNode.eval` computes it;
    /// `None` for nodes outside this small language (comparisons, selections, ...).
    pub fn of_reference(g: &Graph, id: NodeId, depth: u32) -> Option<CExpr> {
        use CExpr::*;
        if depth > 64 {
            return None;
        }
        let r = |c: &NodeId| CExpr::of_reference(g, *c, depth + 1).map(Box::new);
        Some(match g.get(id)? {
            Node::Const(q) => Rat(q.clone()),
            Node::Pi => Pi,
            Node::E => Fun("exp", b(int(1))),
            Node::Add(x, y) => Add(r(x)?, r(y)?),
            Node::Sub(x, y) => Sub(r(x)?, r(y)?),
            Node::Mul(x, y) => Mul(r(x)?, r(y)?),
            Node::Div(x, y) => Div(r(x)?, r(y)?),
            Node::Neg(x) => Neg(r(x)?),
            Node::Pow(x, k) => Pow(r(x)?, i64::from(*k)),
            Node::Unary(UnaryFn::Abs, x) => Abs(r(x)?),
            Node::Unary(f, x) => Fun(f.name(), r(x)?),
            _ => return None,
        })
    }

    /// Whether it mentions the `Ideal` at all.
    fn mentions_ideal(&self) -> bool {
        match self {
            CExpr::Rat(_) => false,
            CExpr::Pi | CExpr::Ln2 | CExpr::Fun(..) => true,
            CExpr::Add(x, y) | CExpr::Sub(x, y) | CExpr::Mul(x, y) | CExpr::Div(x, y) => x.mentions_ideal() || y.mentions_ideal(),
            CExpr::Neg(x) | CExpr::Pow(x, _) | CExpr::Abs(x) => x.mentions_ideal(),
        }
    }

    /// The Lean term (inside the module: `open Lark`, `I : Ideal` bound).
    pub fn lean(&self) -> String {
        match self {
            CExpr::Rat(q) => rat(q),
            CExpr::Pi => "I.pi".into(),
            CExpr::Ln2 => "I.ln2".into(),
            CExpr::Add(x, y) => format!("({} + {})", x.lean(), y.lean()),
            CExpr::Sub(x, y) => format!("({} - {})", x.lean(), y.lean()),
            CExpr::Mul(x, y) => format!("({} * {})", x.lean(), y.lean()),
            CExpr::Div(x, y) => format!("({} / {})", x.lean(), y.lean()),
            CExpr::Neg(x) => format!("(-{})", x.lean()),
            CExpr::Pow(x, k) => format!("(ratZPow {} ({k}))", x.lean()),
            CExpr::Abs(x) => {
                let a = x.lean();
                format!("(if {a} < 0 then -{a} else {a})")
            }
            CExpr::Fun(f, x) => format!("(I.{f} {})", x.lean()),
        }
    }
}

/// A rational as a Lean `Rat` term: an integer as `(n : Rat)`, else as the rest of the module
/// writes them, `(mkRat n d)`.
pub fn rat(q: &BigRational) -> String {
    let (num, den) = (q.numer(), q.denom());
    if q.is_integer() {
        format!("({num} : Rat)")
    } else if num.is_negative() {
        format!("(mkRat ({num}) {den})")
    } else {
        format!("(mkRat {num} {den})")
    }
}

/// The model `Ideal.withConstants ln2 pi sqrtTable`, as far as it is chosen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    pub ln2: Option<BigRational>,
    pub pi: Option<BigRational>,
    /// `(argument, value)`, values non-negative.
    pub sqrt_table: Vec<(BigRational, BigRational)>,
}

/// The values of the model's constants nothing fixed (any value would do).
fn default_pi() -> BigRational {
    BigRational::new(355.into(), 113.into())
}

fn default_ln2() -> BigRational {
    BigRational::new(7.into(), 10.into())
}

fn div(x: &BigRational, y: &BigRational) -> BigRational {
    // Lean's `Rat` division: `x / 0 = 0`.
    if y.is_zero() {
        BigRational::zero()
    } else {
        x / y
    }
}

/// The most bits a value may have while the model is evaluated (a power with a huge exponent
/// is not evaluated; the identity is left out).
const MAX_BITS: u64 = 4096;

impl Witness {
    /// `Ideal.tableSqrt`: the first entry for `x` with a non-negative value, else 0.
    fn sqrt(&self, x: &BigRational) -> BigRational {
        self.sqrt_table.iter().find(|(a, v)| a == x && !v.is_negative()).map_or_else(BigRational::zero, |(_, v)| v.clone())
    }

    fn has_sqrt(&self, x: &BigRational) -> bool {
        self.sqrt_table.iter().any(|(a, v)| a == x && !v.is_negative())
    }

    /// Whether `e` has a value under the model as chosen so far: no unchosen constant and no
    /// square root at a point the table does not give.
    fn closed(&self, e: &CExpr) -> bool {
        match e {
            CExpr::Rat(_) => true,
            CExpr::Pi => self.pi.is_some(),
            CExpr::Ln2 => self.ln2.is_some(),
            CExpr::Add(x, y) | CExpr::Sub(x, y) | CExpr::Mul(x, y) | CExpr::Div(x, y) => self.closed(x) && self.closed(y),
            CExpr::Neg(x) | CExpr::Pow(x, _) | CExpr::Abs(x) => self.closed(x),
            CExpr::Fun(f, x) => self.closed(x) && (!matches!(*f, "sqrt" | "rsqrt") || self.eval(x).is_some_and(|v| self.has_sqrt(&v))),
        }
    }

    /// The value of `e` under the model `Ideal.withConstants` (unchosen constants at their
    /// defaults); `None` when a value grows too large to evaluate.
    pub fn eval(&self, e: &CExpr) -> Option<BigRational> {
        let v = match e {
            CExpr::Rat(q) => q.clone(),
            CExpr::Pi => self.pi.clone().unwrap_or_else(default_pi),
            CExpr::Ln2 => self.ln2.clone().unwrap_or_else(default_ln2),
            CExpr::Add(x, y) => self.eval(x)? + self.eval(y)?,
            CExpr::Sub(x, y) => self.eval(x)? - self.eval(y)?,
            CExpr::Mul(x, y) => self.eval(x)? * self.eval(y)?,
            CExpr::Div(x, y) => div(&self.eval(x)?, &self.eval(y)?),
            CExpr::Neg(x) => -self.eval(x)?,
            CExpr::Pow(x, k) => {
                // `ratZPow q k`: `q ^ k`, and `1 / q ^ n` for `k = -n`.
                let q = self.eval(x)?;
                let n = k.unsigned_abs();
                if n.saturating_mul(q.numer().bits().max(q.denom().bits())) > MAX_BITS {
                    return None;
                }
                let p = num_traits::pow::pow(q, n as usize);
                if *k < 0 {
                    div(&BigRational::one(), &p)
                } else {
                    p
                }
            }
            CExpr::Abs(x) => self.eval(x)?.abs(),
            CExpr::Fun(f, x) => {
                let a = self.eval(x)?;
                match *f {
                    "exp" | "cos" => BigRational::one(),
                    "log" | "sin" => BigRational::zero(),
                    // `(1 - 1) / (1 + 1)`
                    "tanh" => BigRational::zero(),
                    "erf" => a,
                    "sqrt" => self.sqrt(&a),
                    "rsqrt" => div(&BigRational::one(), &self.sqrt(&a)),
                    _ => return None,
                }
            }
        };
        (v.numer().bits() + v.denom().bits() <= 2 * MAX_BITS).then_some(v)
    }

    /// Chooses what `e` leaves open so that it evaluates to `target`; `false` when this
    /// procedure finds no choice (the model is then left as it was).
    fn solve(&mut self, e: &CExpr, target: &BigRational) -> bool {
        let saved = self.clone();
        let ok = self.solve_inner(e, target) && self.eval(e).as_ref() == Some(target);
        if !ok {
            *self = saved;
        }
        ok
    }

    fn solve_inner(&mut self, e: &CExpr, target: &BigRational) -> bool {
        if self.closed(e) {
            return self.eval(e).as_ref() == Some(target);
        }
        match e {
            CExpr::Pi => {
                self.pi = Some(target.clone());
                true
            }
            CExpr::Ln2 => {
                self.ln2 = Some(target.clone());
                true
            }
            CExpr::Neg(x) => self.solve_inner(x, &-target),
            CExpr::Add(x, y) if self.closed(y) => self.eval(y).is_some_and(|v| self.solve_inner(x, &(target - v))),
            CExpr::Add(x, y) if self.closed(x) => self.eval(x).is_some_and(|v| self.solve_inner(y, &(target - v))),
            CExpr::Sub(x, y) if self.closed(y) => self.eval(y).is_some_and(|v| self.solve_inner(x, &(target + v))),
            CExpr::Sub(x, y) if self.closed(x) => self.eval(x).is_some_and(|v| self.solve_inner(y, &(v - target))),
            CExpr::Mul(x, y) if self.closed(y) => self.eval(y).is_some_and(|v| !v.is_zero() && self.solve_inner(x, &(target / v))),
            CExpr::Mul(x, y) if self.closed(x) => self.eval(x).is_some_and(|v| !v.is_zero() && self.solve_inner(y, &(target / v))),
            CExpr::Div(x, y) if self.closed(y) => self.eval(y).is_some_and(|v| !v.is_zero() && self.solve_inner(x, &(target * v))),
            CExpr::Div(x, y) if self.closed(x) => self.eval(x).is_some_and(|v| !v.is_zero() && !target.is_zero() && self.solve_inner(y, &(v / target))),
            CExpr::Fun(f @ ("sqrt" | "rsqrt"), x) => {
                self.fix_defaults(x);
                let Some(point) = self.eval(x) else { return false };
                if self.has_sqrt(&point) {
                    return self.eval(e).as_ref() == Some(target);
                }
                let value = if *f == "sqrt" { target.clone() } else { div(&BigRational::one(), target) };
                if value.is_negative() || (*f == "rsqrt" && target.is_zero()) {
                    return false;
                }
                self.sqrt_table.push((point, value));
                true
            }
            _ => {
                self.fix_defaults(e);
                self.eval(e).as_ref() == Some(target)
            }
        }
    }

    /// Fixes the constants `e` mentions that are still unchosen at their defaults.
    fn fix_defaults(&mut self, e: &CExpr) {
        match e {
            CExpr::Rat(_) => {}
            CExpr::Pi => {
                self.pi.get_or_insert_with(default_pi);
            }
            CExpr::Ln2 => {
                self.ln2.get_or_insert_with(default_ln2);
            }
            CExpr::Add(x, y) | CExpr::Sub(x, y) | CExpr::Mul(x, y) | CExpr::Div(x, y) => {
                self.fix_defaults(x);
                self.fix_defaults(y);
            }
            CExpr::Neg(x) | CExpr::Pow(x, _) | CExpr::Abs(x) | CExpr::Fun(_, x) => self.fix_defaults(x),
        }
    }

    /// `Ideal.withConstants ln2 pi [table]` as a Lean term.
    pub fn lean(&self) -> String {
        let table: Vec<String> = self.sqrt_table.iter().map(|(a, v)| format!("({}, {})", rat(a), rat(v))).collect();
        format!(
            "Ideal.withConstants {} {} [{}]",
            rat(&self.ln2.clone().unwrap_or_else(default_ln2)),
            rat(&self.pi.clone().unwrap_or_else(default_pi)),
            table.join(", ")
        )
    }
}

/// One literal read as a constant: `lhs = rhs` on `I`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub lhs: CExpr,
    pub rhs: CExpr,
    /// For people: which literal, read as what.
    pub about: String,
}

impl Identity {
    pub fn lean(&self) -> String {
        format!("{} = {}", strip(&self.lhs.lean()), self.rhs.lean())
    }
}

/// A term without its outer parentheses (for the left side of an equation; never an `if`,
/// whose `else` branch would take the equation in).
fn strip(s: &str) -> &str {
    if s.starts_with('(') && s.ends_with(')') && !s.starts_with("(if ") {
        // Only when the outer pair encloses everything.
        let mut depth = 0i32;
        for (i, c) in s.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 && i + 1 < s.len() {
                        return s;
                    }
                }
                _ => {}
            }
        }
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// The hypotheses of a module: those stated (with a model of all of them) and those left out.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub stated: Vec<Identity>,
    pub witness: Witness,
    /// An identity the engine used that is not stated, and why.
    pub left_out: Vec<(String, String)>,
    /// Rational constants of the reference stated at the value of the kernel's literal.
    pub restated: Vec<Restated>,
}

/// A rational constant of the reference (`eps = 1e-6`, GELU's `0.044715`) that a kernel literal
/// rounds: the module states the reference with the literal's exact value there. PyTorch does
/// the same: a Python scalar combined with a `float32` tensor is converted to `float32` first,
/// so the reference computes with exactly the rounded value (rounding itself is out of scope,
/// ARCHITECTURE.md). No hypothesis is needed, and the obligation stays provable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restated {
    /// The constant's node in the lowered reference graph.
    pub node: NodeId,
    /// The constant as the reference writes it.
    pub written: BigRational,
    /// The value stated: the literal's, with the reading's sign undone.
    pub value: BigRational,
    pub about: String,
}

/// A literal's exact value for people: `0f3FB8AA3B = 12102203/8388608`.
/// A rational for people: `1/1000000 ≈ 0.000001`.
fn show(q: &BigRational) -> String {
    let approx = q.to_f64().map_or(String::new(), |v| format!(" ≈ {v}"));
    format!("{}/{}{approx}", q.numer(), q.denom())
}

fn describe(l: &LiteralConstant) -> String {
    let approx = l.value.to_f64().map_or(String::new(), |v| format!(" ≈ {v}"));
    format!("the {}-bit literal {}/{}{approx}", l.bits, l.value.numer(), l.value.denom())
}

/// Chooses the hypotheses for the literals `literals` the engine read as constants, `graph`
/// being the reference's lowered graph (for readings as reference constants).
pub fn plan(literals: &[LiteralConstant], graph: &Graph) -> Plan {
    let mut candidates: Vec<(Identity, Option<String>)> = Vec::new();
    let mut restated: Vec<Restated> = Vec::new();
    for l in literals {
        // The constant itself equals the literal's value with the reading's sign undone, and
        // its reciprocal taken for a reading as a reciprocal.
        let value = if l.negated { -l.value.clone() } else { l.value.clone() };
        let value = if l.reciprocal && !value.is_zero() { value.recip() } else { value };
        if let Origin::Reference(id) = l.origin {
            let written = CExpr::of_reference(graph, id, 0).filter(|e| !e.mentions_ideal()).and_then(|e| Witness::default().eval(&e));
            if let Some(written) = written.filter(|w| *w != value) {
                let about = format!("{} read as {}the reference's constant {}", describe(l), if l.reciprocal { "one over " } else { "" }, show(&written));
                match restated.iter().find(|r| r.node == id) {
                    Some(r) if r.value != value => candidates.push((
                        Identity { lhs: CExpr::Rat(written.clone()), rhs: CExpr::Rat(value), about },
                        Some(format!("another literal, {}, already stands for that constant", show(&r.value))),
                    )),
                    Some(_) => {}
                    None => restated.push(Restated { node: id, written, value, about }),
                }
                continue;
            }
        }
        let (lhs, name) = match l.origin {
            Origin::Catalogue(k) => (Some(CExpr::known(k)), l.name.trim_start_matches('-').to_string()),
            Origin::Reference(id) => (CExpr::of_reference(graph, id, 0), format!("the reference's constant (node {})", id.index())),
        };
        let about = format!("{} read as {}{}{name}", describe(l), if l.negated { "minus " } else { "" }, if l.reciprocal { "one over " } else { "" });
        let Some(lhs) = lhs else {
            candidates
                .push((Identity { lhs: CExpr::Rat(value.clone()), rhs: CExpr::Rat(value), about }, Some("LARK cannot write that constant in Lean".into())));
            continue;
        };
        // `log2(e) = c` is stated as `I.ln2 * c = 1`, which needs no division.
        let identity = if l.origin == Origin::Catalogue(Known::Log2E) {
            Identity { lhs: CExpr::Mul(b(CExpr::Ln2), b(CExpr::Rat(value))), rhs: int(1), about }
        } else {
            Identity { lhs, rhs: CExpr::Rat(value), about }
        };
        // `c` and `-c` read as `K` and `-K` are one identity.
        match candidates.iter_mut().find(|(i, _)| i.lhs == identity.lhs && i.rhs == identity.rhs) {
            Some((same, _)) => {
                same.about.push_str("; and ");
                same.about.push_str(&identity.about);
            }
            None => candidates.push((identity, None)),
        }
    }
    // Readings that fix a constant directly first, then the rest, each in the order given.
    let direct = |i: &Identity| matches!(&i.lhs, CExpr::Pi | CExpr::Ln2) || matches!(&i.lhs, CExpr::Mul(x, _) if **x == CExpr::Ln2);
    candidates.sort_by_key(|(i, _)| !direct(i));
    let mut out = Plan { restated, ..Plan::default() };
    let mut accepted = Vec::new();
    for (identity, refused) in candidates {
        if let Some(why) = refused {
            out.left_out.push((identity.about, why));
            continue;
        }
        let CExpr::Rat(target) = &identity.rhs else { continue };
        if !identity.lhs.mentions_ideal() {
            let why = match out.witness.eval(&identity.lhs) {
                Some(v) if &v == target => None,
                _ => Some("in exact arithmetic the literal differs from the constant, so no hypothesis on `I` can make them equal".to_string()),
            };
            if let Some(why) = why {
                out.left_out.push((identity.about.clone(), why));
                continue;
            }
        }
        if out.witness.solve(&identity.lhs, target) {
            accepted.push(identity);
        } else {
            let why = match &identity.lhs {
                CExpr::Fun("exp", x) if !matches!(&**x, CExpr::Rat(q) if q.is_zero()) => format!(
                    "`{} = {}` has no model in `Rat` together with the `Ideal` laws (`exp_add` makes `exp a` the `n`-th power of the rational `exp (a/n)` for every `n`)",
                    strip(&identity.lhs.lean()),
                    identity.rhs.lean()
                ),
                _ => format!(
                    "LARK found no model in `Rat` of `{} = {}` together with the `Ideal` laws and the other literal hypotheses",
                    strip(&identity.lhs.lean()),
                    identity.rhs.lean()
                ),
            };
            out.left_out.push((identity.about.clone(), why));
        }
    }
    // What a later choice changed (a square root given at a point an earlier identity read as
    // 0) is checked again: only identities true in the final model are stated.
    for identity in accepted {
        let CExpr::Rat(target) = &identity.rhs else { continue };
        if out.witness.eval(&identity.lhs).as_ref() == Some(target) {
            out.stated.push(identity);
        } else {
            let why = "it conflicts with the model the other literal hypotheses need".to_string();
            out.left_out.push((identity.about.clone(), why));
        }
    }
    out
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.stated.is_empty() && self.left_out.is_empty()
    }

    /// The definitions the module states: `LiteralConstants` (when something is stated) and a
    /// comment naming what is left out.
    pub fn defs(&self) -> String {
        let mut out = String::new();
        if !self.stated.is_empty() {
            out.push_str(
                "/-- The readings of the kernel's literals the equivalence engine used, as identities on the\n\
                 ideal functions: each literal stands for the constant it rounds. They are hypotheses of the\n\
                 equivalence obligations; `literal_constants_satisfiable` shows them jointly satisfiable. -/\n\
                 def LiteralConstants (I : Ideal) : Prop :=\n",
            );
            let lines: Vec<String> = self.stated.iter().map(|i| format!("  -- {}\n  {}", comment_text(&i.about), i.lean())).collect();
            out.push_str(&lines.join(" ∧\n"));
            out.push_str("\n\n");
        }
        if !self.left_out.is_empty() {
            out.push_str("/-! Readings of literals the equivalence engine used that are NOT stated, because they have no\nmodel LARK can exhibit: the equivalence obligations are stated without them and cannot be proved\nwhere a proof needs them, so the kernel stays uncertified for that reason.\n\n");
            for (about, why) in &self.left_out {
                let _ = writeln!(out, "* {}: {}", comment_text(about).replace("-/", "- /"), comment_text(why).replace("-/", "- /"));
            }
            out.push_str("-/\n\n");
        }
        out
    }

    /// The theorem that the stated hypotheses are satisfiable (empty when none is stated).
    pub fn satisfiable_theorem(&self) -> String {
        if self.stated.is_empty() {
            return String::new();
        }
        format!(
            "/-- The literal hypotheses are jointly satisfiable, so no obligation assuming them is vacuous:\n\
             `Ideal.withConstants` with these values satisfies each (checked by computation). -/\n\
             theorem literal_constants_satisfiable : ∃ I : Ideal, LiteralConstants I :=\n  \
             ⟨{}, by\n    unfold LiteralConstants\n    first\n    | decide +kernel\n    | decide⟩\n\n",
            self.witness.lean()
        )
    }

    /// One note per identity left out and per reference constant restated.
    pub fn notes(&self) -> Vec<String> {
        let left_out = self.left_out.iter().map(|(about, why)| {
            format!(
                "not stated as a hypothesis: {about} ({why}); an equivalence obligation whose proof needs it cannot be proved, so the kernel stays uncertified"
            )
        });
        let restated = self.restated.iter().map(|r| {
            format!(
                "the reference is stated with {} where it writes {} ({}; PyTorch converts a Python scalar to a float32 tensor's type the same way)",
                show(&r.value),
                show(&r.written),
                r.about
            )
        });
        left_out.chain(restated).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    fn lit(value: BigRational, known: Known, negated: bool) -> LiteralConstant {
        LiteralConstant {
            bits: 32,
            value,
            origin: Origin::Catalogue(known),
            negated,
            reciprocal: false,
            name: format!("{}{known:?}", if negated { "-" } else { "" }),
        }
    }

    #[test]
    fn log2e_is_stated_with_a_model() {
        let c = q(12102203, 8388608);
        let p = plan(&[lit(c.clone(), Known::Log2E, false), lit(-c.clone(), Known::Log2E, true)], &Graph::default());
        assert!(p.left_out.is_empty(), "{:?}", p.left_out);
        // The literal and its negation make one identity.
        assert_eq!(p.stated.len(), 1);
        assert_eq!(p.stated[0].lean(), "I.ln2 * (mkRat 12102203 8388608) = (1 : Rat)");
        assert!(p.stated[0].about.contains("; and the 32-bit literal -12102203/8388608"), "{}", p.stated[0].about);
        assert_eq!(p.witness.ln2, Some(q(8388608, 12102203)));
        assert!(p.satisfiable_theorem().contains("Ideal.withConstants (mkRat 8388608 12102203) (mkRat 355 113) []"));
    }

    #[test]
    fn sqrt_of_two_over_pi_uses_the_table_and_pi_first() {
        let pi = q(13176795, 4194304);
        let s = q(6692950, 8388608);
        let p = plan(&[lit(s.clone(), Known::SqrtTwoOverPi, false), lit(pi.clone(), Known::Pi, false)], &Graph::default());
        assert!(p.left_out.is_empty(), "{:?}", p.left_out);
        assert_eq!(p.witness.pi, Some(pi.clone()));
        assert_eq!(p.witness.sqrt_table, vec![(q(2, 1) / pi, s)]);
        assert_eq!(p.stated[1].lean(), "I.sqrt ((2 : Rat) / I.pi) = (mkRat 3346475 4194304)");
    }

    #[test]
    fn e_and_contradictory_readings_are_left_out() {
        let e = q(11401337, 4194304);
        let p = plan(&[lit(e, Known::E, false)], &Graph::default());
        assert!(p.stated.is_empty());
        assert!(p.left_out[0].1.contains("no model in `Rat`"), "{:?}", p.left_out);
        assert!(p.defs().contains("NOT stated"));
        assert_eq!(p.satisfiable_theorem(), "");
        // `pi` and `2/pi` rounded separately: the second contradicts the first.
        let pi = q(13176795, 4194304);
        let two_over_pi = q(10680707, 16777216);
        let p = plan(&[lit(two_over_pi, Known::TwoOverPi, false), lit(pi, Known::Pi, false)], &Graph::default());
        assert_eq!(p.stated.len(), 1);
        assert_eq!(p.stated[0].lhs, CExpr::Pi);
        assert_eq!(p.left_out.len(), 1);
    }

    #[test]
    fn a_rational_reference_constant_is_restated_at_the_literal_and_two_literals_conflict() {
        let mut g = Graph::default();
        let id = g.constant(q(44715, 1_000_000));
        let reading =
            |value: BigRational| LiteralConstant { bits: 32, value, origin: Origin::Reference(id), negated: false, reciprocal: false, name: "c".into() };
        let f32 = q(12003091, 268435456);
        let p = plan(&[reading(f32.clone())], &g);
        assert!(p.stated.is_empty() && p.left_out.is_empty(), "{p:?}");
        assert_eq!(p.restated, vec![Restated { node: id, written: q(44715, 1_000_000), value: f32.clone(), about: p.restated[0].about.clone() }]);
        // A second literal of another precision for the same constant cannot also be its value.
        let f16 = q(733, 16384);
        let p = plan(&[reading(f32), reading(f16)], &g);
        assert_eq!(p.restated.len(), 1);
        assert!(p.left_out[0].1.contains("already stands for that constant"), "{:?}", p.left_out);
    }

    #[test]
    fn a_literal_read_as_a_reciprocal_states_the_constant_as_one_over_the_literal() {
        // `x * (1.0f / 768)` against `x / 768`: the constant 768 is restated at 1/literal.
        let mut g = Graph::default();
        let id = g.constant(q(768, 1));
        let literal = q(11184811, 8589934592);
        let reading = LiteralConstant { bits: 32, value: literal.clone(), origin: Origin::Reference(id), negated: false, reciprocal: true, name: "1/c".into() };
        let p = plan(&[reading], &g);
        assert!(p.stated.is_empty() && p.left_out.is_empty(), "{p:?}");
        assert_eq!(p.restated[0].written, q(768, 1));
        assert_eq!(p.restated[0].value, literal.recip());
        assert!(p.restated[0].about.contains("read as one over the reference's constant 768"), "{}", p.restated[0].about);
        // `x * 0.08838834764f` against `x / math.sqrt(128)`: `I.sqrt 128 = 1/literal`.
        let mut g = Graph::default();
        let n = g.constant(q(128, 1));
        let root = g.unary(reference::UnaryFn::Sqrt, n);
        let literal = q(11863283, 134217728);
        let reading =
            LiteralConstant { bits: 32, value: literal.clone(), origin: Origin::Reference(root), negated: false, reciprocal: true, name: "1/c".into() };
        let p = plan(&[reading], &g);
        assert!(p.left_out.is_empty(), "{:?}", p.left_out);
        assert_eq!(p.stated[0].lean(), "I.sqrt (128 : Rat) = (mkRat 134217728 11863283)");
    }
}
