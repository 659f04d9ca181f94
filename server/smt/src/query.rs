//! A query: declarations, definitions and assertions in one logic, plus the terms whose values a
//! model should report. Terms are easy-smt `SExpr`s in the query's own arena, each paired with
//! its [`Sort`]; the operations that build them are in `build.rs`, reading a whole `.smt2`
//! script into a query is in `script.rs`.

use crate::sexp::symbol_text;
use crate::sort::{Logic, Sort};
use easy_smt::{Context, ContextBuilder, SExpr};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// A term of a known sort, built by one [`Query`] and only meaningful there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Term {
    pub(crate) expr: SExpr,
    pub(crate) sort: Sort,
    pub(crate) query: u32,
}

impl Term {
    pub fn sort(&self) -> Sort {
        self.sort
    }
}

/// An uninterpreted function declared in a [`Query`] (`declare-fun` with arguments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Func {
    pub(crate) name: String,
    pub(crate) expr: SExpr,
    pub(crate) args: Arc<[Sort]>,
    pub(crate) ret: Sort,
    pub(crate) query: u32,
}

impl Func {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn arg_sorts(&self) -> &[Sort] {
        &self.args
    }

    pub fn result_sort(&self) -> Sort {
        self.ret
    }
}

/// A mistake in building a query. Building never fails on the spot (so term expressions stay
/// readable); mistakes are collected and [`crate::Solver::check`] refuses a query that has any.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("`{op}` expects {expected}, found {found}")]
    SortMismatch { op: String, expected: String, found: String },
    #[error("the model already reports a value named `{name}`")]
    ReportedTwice { name: String },
    #[error("`{op}` was given a term or function built by another query")]
    ForeignTerm { op: String },
    #[error("`{name}` is declared twice")]
    Redeclared { name: String },
    #[error("`{name}` has no SMT-LIB spelling (a symbol cannot contain `|` or `\\`)")]
    BadName { name: String },
    #[error("`(_ extract {hi} {lo})` does not fit a bit-vector of {bits} bits")]
    BadExtract { hi: u32, lo: u32, bits: u32 },
    #[error("the rational literal {numer}/0 has a zero denominator")]
    ZeroDenominator { numer: i64 },
    #[error("bit-vectors have at least one bit, found a width of 0 in `{op}`")]
    ZeroWidth { op: String },
}

/// What a declared name stands for: the sort checks and the model need it.
#[derive(Clone, Debug)]
pub(crate) enum Symbol {
    Constant(Sort),
    Function,
    /// A `define-fun`; scripts may define functions whose sort LARK does not track.
    Defined(Option<Sort>),
}

/// A term whose value the model reports under `name`.
#[derive(Clone, Debug)]
pub(crate) struct Wanted {
    pub name: String,
    pub expr: SExpr,
    pub sort: Option<Sort>,
}

/// A point to return to with [`Query::rollback`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    commands: usize,
    constants: usize,
    wanted: usize,
    declared: usize,
    query: u32,
}

static NEXT_QUERY_ID: AtomicU32 = AtomicU32::new(1);

/// Declarations, definitions and assertions in one logic.
///
/// ```
/// use smt::{Logic, Query, Sort};
/// let mut q = Query::new(Logic::QfBv);
/// let x = q.declare_const("x", Sort::BitVec(8));
/// q.assert(q.eq(q.bv_mul(x, q.bv(4, 8)), q.bv(12, 8)));
/// assert_eq!(q.to_smtlib(), "(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-const x (_ BitVec 8))\n(assert (= (bvmul x (_ bv4 8)) (_ bv12 8)))\n(check-sat)\n(get-value (x))\n");
/// ```
pub struct Query {
    pub(crate) id: u32,
    pub(crate) ctx: Context,
    pub(crate) logic: Logic,
    pub(crate) commands: Vec<SExpr>,
    pub(crate) symbols: HashMap<String, Symbol>,
    /// Declared names in order, so that a rollback can forget the later ones.
    pub(crate) declared: Vec<String>,
    /// Declared constants in order: the model reports each of them.
    pub(crate) constants: Vec<(String, SExpr, Sort)>,
    pub(crate) wanted: Vec<Wanted>,
    pub(crate) errors: RefCell<Vec<BuildError>>,
}

impl std::fmt::Debug for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query").field("logic", &self.logic).field("text", &self.to_smtlib()).finish()
    }
}

impl Query {
    pub fn new(logic: Logic) -> Query {
        // Without a solver, building the context does no I/O and cannot fail.
        let ctx = ContextBuilder::new().without_solver().build().expect("an easy-smt context without a solver does no I/O");
        Query {
            id: NEXT_QUERY_ID.fetch_add(1, Ordering::Relaxed),
            ctx,
            logic,
            commands: Vec::new(),
            symbols: HashMap::new(),
            declared: Vec::new(),
            constants: Vec::new(),
            wanted: Vec::new(),
            errors: RefCell::new(Vec::new()),
        }
    }

    pub fn logic(&self) -> Logic {
        self.logic
    }

    pub fn set_logic(&mut self, logic: Logic) {
        self.logic = logic;
    }

    /// The mistakes made while building this query (see [`BuildError`]).
    pub fn build_errors(&self) -> Vec<BuildError> {
        self.errors.borrow().clone()
    }

    pub(crate) fn error(&self, e: BuildError) {
        self.errors.borrow_mut().push(e);
    }

    /// The SMT-LIB atom for a declared name, or `None` (with the error recorded) when the name
    /// has no spelling or is taken.
    fn new_symbol(&mut self, name: &str, symbol: Symbol) -> Option<SExpr> {
        let Some(text) = symbol_text(name) else {
            self.error(BuildError::BadName { name: name.to_string() });
            return None;
        };
        if self.symbols.contains_key(name) {
            self.error(BuildError::Redeclared { name: name.to_string() });
            return None;
        }
        self.symbols.insert(name.to_string(), symbol);
        self.declared.push(name.to_string());
        Some(self.ctx.atom(text))
    }

    pub(crate) fn sort_expr(&self, sort: Sort) -> SExpr {
        match sort {
            Sort::Bool => self.ctx.bool_sort(),
            Sort::Int => self.ctx.int_sort(),
            Sort::Real => self.ctx.real_sort(),
            Sort::BitVec(n) => self.ctx.bit_vec_sort(self.ctx.numeral(n)),
        }
    }

    /// `(declare-const name sort)`; the model reports its value.
    pub fn declare_const(&mut self, name: &str, sort: Sort) -> Term {
        if sort == Sort::BitVec(0) {
            self.error(BuildError::ZeroWidth { op: format!("declare-const {name}") });
        }
        let atom = self.new_symbol(name, Symbol::Constant(sort));
        let expr = atom.unwrap_or_else(|| self.ctx.atom(symbol_text(name).unwrap_or_default()));
        if atom.is_some() {
            let command = self.ctx.list(vec![self.ctx.atom("declare-const"), expr, self.sort_expr(sort)]);
            self.commands.push(command);
            self.constants.push((name.to_string(), expr, sort));
        }
        Term { expr, sort, query: self.id }
    }

    /// `(declare-fun name (args...) result)`: an uninterpreted function, applied with
    /// [`Query::apply`]. With no arguments this is a constant; use [`Query::declare_const`].
    pub fn declare_fun(&mut self, name: &str, args: &[Sort], result: Sort) -> Func {
        let atom = self.new_symbol(name, Symbol::Function);
        let expr = atom.unwrap_or_else(|| self.ctx.atom(symbol_text(name).unwrap_or_default()));
        if atom.is_some() {
            let arg_sorts = args.iter().map(|s| self.sort_expr(*s)).collect();
            let command = self.ctx.list(vec![self.ctx.atom("declare-fun"), expr, self.ctx.list(arg_sorts), self.sort_expr(result)]);
            self.commands.push(command);
        }
        Func { name: name.to_string(), expr, args: args.into(), ret: result, query: self.id }
    }

    /// `(define-fun name () sort value)`: a name for a term that is used several times, so the
    /// query text stays linear in the size of a shared term. The model does not report it
    /// unless asked with [`Query::want`].
    pub fn define(&mut self, name: &str, value: Term) -> Term {
        self.own("define-fun", &[value]);
        let atom = self.new_symbol(name, Symbol::Defined(Some(value.sort)));
        let expr = atom.unwrap_or_else(|| self.ctx.atom(symbol_text(name).unwrap_or_default()));
        if atom.is_some() {
            let command = self.ctx.list(vec![self.ctx.atom("define-fun"), expr, self.ctx.list(vec![]), self.sort_expr(value.sort), value.expr]);
            self.commands.push(command);
        }
        Term { expr, sort: value.sort, query: self.id }
    }

    /// `(assert condition)`.
    pub fn assert(&mut self, condition: Term) {
        if self.own("assert", &[condition]) {
            self.expect_sort("assert", condition, Sort::Bool);
        }
        let command = self.ctx.list(vec![self.ctx.atom("assert"), condition.expr]);
        self.commands.push(command);
    }

    /// Asks the model to report the value of `term` under `name` (for example a function
    /// application, or a defined term). Declared constants are reported without asking.
    pub fn want(&mut self, name: &str, term: Term) {
        self.own("want", &[term]);
        let taken = self.constants.iter().any(|(n, ..)| n == name) || self.wanted.iter().any(|w| w.name == name);
        if taken {
            self.error(BuildError::ReportedTwice { name: name.to_string() });
            return;
        }
        self.wanted.push(Wanted { name: name.to_string(), expr: term.expr, sort: Some(term.sort) });
    }

    /// The declared constant or defined term `name`, as a term.
    pub fn lookup(&self, name: &str) -> Option<Term> {
        let sort = match self.symbols.get(name)? {
            Symbol::Constant(s) => *s,
            Symbol::Defined(Some(s)) => *s,
            Symbol::Defined(None) | Symbol::Function => return None,
        };
        Some(Term { expr: self.ctx.atom(symbol_text(name)?), sort, query: self.id })
    }

    /// Where the query is now; [`Query::rollback`] returns to it (to try extra assertions and
    /// take them back, as a smaller counterexample is searched for).
    pub fn mark(&self) -> Mark {
        Mark { commands: self.commands.len(), constants: self.constants.len(), wanted: self.wanted.len(), declared: self.declared.len(), query: self.id }
    }

    /// Forgets every declaration, definition, assertion and wanted term added after `mark`.
    pub fn rollback(&mut self, mark: Mark) {
        if mark.query != self.id {
            self.error(BuildError::ForeignTerm { op: "rollback".into() });
            return;
        }
        self.commands.truncate(mark.commands);
        self.constants.truncate(mark.constants);
        self.wanted.truncate(mark.wanted);
        for name in self.declared.drain(mark.declared.min(self.declared.len())..) {
            self.symbols.remove(&name);
        }
    }

    /// Whether every term is from this query; records the mistake when not.
    pub(crate) fn own(&self, op: &str, terms: &[Term]) -> bool {
        let ok = terms.iter().all(|t| t.query == self.id);
        if !ok {
            self.error(BuildError::ForeignTerm { op: op.to_string() });
        }
        ok
    }

    pub(crate) fn expect_sort(&self, op: &str, t: Term, sort: Sort) -> bool {
        let ok = t.sort == sort;
        if !ok {
            self.error(BuildError::SortMismatch { op: op.to_string(), expected: sort.to_string(), found: t.sort.to_string() });
        }
        ok
    }

    /// The declarations, definitions and assertions, one command per line.
    pub(crate) fn body(&self) -> String {
        let mut text = String::new();
        for c in &self.commands {
            let _ = writeln!(text, "{}", self.ctx.display(*c));
        }
        text
    }

    /// What the model reports, in order: declared constants, then wanted terms not already
    /// among them. Each entry is (name, SMT-LIB text of the term, sort when known).
    pub(crate) fn model_requests(&self) -> Vec<(String, String, Option<Sort>)> {
        let mut seen = std::collections::HashSet::new();
        let constants = self.constants.iter().map(|(name, expr, sort)| (name.clone(), *expr, Some(*sort)));
        let wanted = self.wanted.iter().map(|w| (w.name.clone(), w.expr, w.sort));
        constants
            .chain(wanted)
            .filter(|(name, ..)| seen.insert(name.clone()))
            .map(|(name, expr, sort)| (name, self.ctx.display(expr).to_string(), sort))
            .collect()
    }

    /// The query as a standalone SMT-LIB script that any solver can run: logic, declarations,
    /// assertions, `check-sat` and a `get-value` for what the model reports.
    pub fn to_smtlib(&self) -> String {
        // Options before the logic: Yices refuses `:produce-models` after `set-logic`.
        let mut text = format!("(set-option :produce-models true)\n(set-logic {})\n", self.logic);
        text.push_str(&self.body());
        text.push_str("(check-sat)\n");
        let requests = self.model_requests();
        if !requests.is_empty() {
            let terms: Vec<&str> = requests.iter().map(|(_, t, _)| t.as_str()).collect();
            let _ = writeln!(text, "(get-value ({}))", terms.join(" "));
        }
        text
    }

    /// The text of a term, as the solver will see it.
    pub fn display(&self, term: Term) -> String {
        if term.query != self.id {
            return "<a term of another query>".into();
        }
        self.ctx.display(term.expr).to_string()
    }
}
