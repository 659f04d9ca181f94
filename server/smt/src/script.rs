//! Reading an SMT-LIB script (a `.smt2` file, or text an encoder wrote) into a [`Query`].
//!
//! This is how dumped queries and fixtures are re-run, and how an encoder that already writes
//! SMT-LIB text can use the solver driver without rewriting its encoding. Declarations are
//! tracked (sorts of constants, so their model values are typed); asserted terms are taken as
//! written and checked by the solver. One query per script: `push`, `pop` and a second
//! `check-sat` are refused.

use crate::query::{Query, Symbol, Wanted};
use crate::sexp::{parse_all, symbol_name, Sexp, SexpKind, Span, SyntaxError};
use crate::sort::{Logic, Sort};
use easy_smt::SExpr;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    #[error("expected {expected}, found `{found}` at bytes {span:?}")]
    Unexpected { expected: &'static str, found: String, span: Span },
    #[error("`{command}` at bytes {span:?} is not supported in a query script: {why}")]
    Unsupported { command: String, why: &'static str, span: Span },
    #[error("`{name}` at bytes {span:?} is declared twice")]
    Redeclared { name: String, span: Span },
    #[error("unknown logic `{name}` at bytes {span:?}")]
    UnknownLogic { name: String, span: Span },
}

impl Query {
    /// A query from a whole script; the logic is the script's `set-logic`, or `ALL`.
    pub fn from_script(text: &str) -> Result<Query, ScriptError> {
        let mut q = Query::new(Logic::All);
        q.extend_script(text)?;
        Ok(q)
    }

    /// Adds a script's declarations, definitions and assertions to this query; its
    /// `get-value` terms become wanted terms (named by their text, or by the symbol).
    pub fn extend_script(&mut self, text: &str) -> Result<(), ScriptError> {
        let mut checked = false;
        for command in parse_all(text)? {
            let unexpected = |expected, e: &Sexp| ScriptError::Unexpected { expected, found: e.to_string(), span: e.span.clone() };
            let items = command.list().ok_or_else(|| unexpected("a command in parentheses", &command))?;
            let head = items.first().and_then(Sexp::atom).ok_or_else(|| unexpected("a command name", &command))?;
            let args = &items[1..];
            let unsupported = |why| ScriptError::Unsupported { command: head.to_string(), why, span: command.span.clone() };
            match (head, args) {
                ("set-option" | "set-info" | "get-info" | "get-model" | "exit" | "echo", _) => {}
                ("set-logic", [name]) => {
                    let text = name.atom().ok_or_else(|| unexpected("a logic name", name))?;
                    self.logic = Logic::from_name(text).ok_or_else(|| ScriptError::UnknownLogic { name: text.to_string(), span: name.span.clone() })?;
                }
                ("declare-const", [name, sort]) => {
                    let sort = read_sort(sort)?;
                    let name = self.declare_symbol(name, Symbol::Constant(sort))?;
                    self.push_command(&command);
                    let expr = self.ctx.atom(crate::sexp::symbol_text(&name).unwrap_or_default());
                    self.constants.push((name, expr, sort));
                }
                ("declare-fun", [name, params, result]) => {
                    let params = params.list().ok_or_else(|| unexpected("a list of argument sorts", params))?;
                    let result = read_sort(result)?;
                    let symbol = if params.is_empty() { Symbol::Constant(result) } else { Symbol::Function };
                    params.iter().map(read_sort).collect::<Result<Vec<_>, _>>()?;
                    let name = self.declare_symbol(name, symbol)?;
                    self.push_command(&command);
                    if params.is_empty() {
                        let expr = self.ctx.atom(crate::sexp::symbol_text(&name).unwrap_or_default());
                        self.constants.push((name, expr, result));
                    }
                }
                ("define-fun", [name, params, result, _body]) => {
                    let params = params.list().ok_or_else(|| unexpected("a list of parameters", params))?;
                    let sort = if params.is_empty() { read_sort(result).ok() } else { None };
                    self.declare_symbol(name, Symbol::Defined(sort))?;
                    self.push_command(&command);
                }
                ("assert", [_term]) => self.push_command(&command),
                ("check-sat", []) if !checked => checked = true,
                ("check-sat", []) => return Err(unsupported("a script is one query, with one `check-sat`")),
                ("get-value", [terms]) => {
                    let terms = terms.list().ok_or_else(|| unexpected("a list of terms", terms))?;
                    for term in terms {
                        let name = term.atom().map_or_else(|| term.to_string(), |a| symbol_name(a).to_string());
                        let sort = match self.symbols.get(&name) {
                            Some(Symbol::Constant(s)) | Some(Symbol::Defined(Some(s))) => Some(*s),
                            _ => None,
                        };
                        let expr = self.to_sexpr(term);
                        self.wanted.push(Wanted { name, expr, sort });
                    }
                }
                ("push" | "pop" | "reset" | "reset-assertions" | "check-sat-assuming", _) => {
                    return Err(unsupported("the solver driver manages scopes itself"));
                }
                ("declare-const" | "declare-fun" | "define-fun" | "assert" | "set-logic" | "get-value" | "check-sat", _) => {
                    return Err(unexpected("the command's arguments as SMT-LIB defines them", &command));
                }
                _ => return Err(unsupported("LARK queries use declare-const, declare-fun, define-fun and assert")),
            }
        }
        Ok(())
    }

    fn declare_symbol(&mut self, name: &Sexp, symbol: Symbol) -> Result<String, ScriptError> {
        let text = name.atom().ok_or_else(|| ScriptError::Unexpected { expected: "a symbol", found: name.to_string(), span: name.span.clone() })?;
        let plain = symbol_name(text).to_string();
        if self.symbols.contains_key(&plain) {
            return Err(ScriptError::Redeclared { name: plain, span: name.span.clone() });
        }
        self.symbols.insert(plain.clone(), symbol);
        self.declared.push(plain.clone());
        Ok(plain)
    }

    fn push_command(&mut self, command: &Sexp) {
        let expr = self.to_sexpr(command);
        self.commands.push(expr);
    }

    /// The easy-smt form of a parsed expression, built bottom-up without recursion.
    pub(crate) fn to_sexpr(&self, e: &Sexp) -> SExpr {
        // (node, its children converted so far)
        let mut stack: Vec<(&Sexp, Vec<SExpr>)> = vec![(e, Vec::new())];
        loop {
            let (node, done) = stack.last_mut().expect("the root stays on the stack until it is finished");
            let next = match &node.kind {
                SexpKind::List(items) => items.get(done.len()),
                _ => None,
            };
            if let Some(child) = next {
                stack.push((child, Vec::new()));
                continue;
            }
            let (node, done) = stack.pop().expect("just looked at");
            let expr = match &node.kind {
                SexpKind::Atom(a) => self.ctx.atom(a.as_str()),
                // easy-smt prints atoms verbatim, so a string literal keeps its quotes this way.
                SexpKind::Str(_) => self.ctx.atom(node.to_string()),
                SexpKind::List(_) => self.ctx.list(done),
            };
            match stack.last_mut() {
                Some((_, siblings)) => siblings.push(expr),
                None => return expr,
            }
        }
    }
}

/// `Bool`, `Int`, `Real` or `(_ BitVec n)`.
pub(crate) fn read_sort(e: &Sexp) -> Result<Sort, ScriptError> {
    let unexpected = || ScriptError::Unexpected { expected: "a sort (Bool, Int, Real or (_ BitVec n))", found: e.to_string(), span: e.span.clone() };
    match e.atom() {
        Some("Bool") => Ok(Sort::Bool),
        Some("Int") => Ok(Sort::Int),
        Some("Real") => Ok(Sort::Real),
        Some(_) => Err(unexpected()),
        None => match e.application("_") {
            Some([bv, width]) if bv.atom() == Some("BitVec") => match width.atom().and_then(|w| w.parse::<u32>().ok()) {
                Some(n) if n > 0 => Ok(Sort::BitVec(n)),
                _ => Err(unexpected()),
            },
            _ => Err(unexpected()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn a_dumped_query_reads_back() {
        let text = "; a dump\n(set-logic QF_BV)\n(set-option :produce-models true)\n(declare-const tid_x_1 (_ BitVec 32))\n(declare-fun |n 1| () Bool)\n\
                    (declare-fun f ((_ BitVec 32)) Bool)\n(define-fun d () (_ BitVec 32) (bvadd tid_x_1 #x00000001))\n(assert (f d))\n(check-sat)\n(get-value (tid_x_1 d (f d)))\n";
        let q = Query::from_script(text).unwrap();
        assert_eq!(q.logic(), Logic::QfBv);
        expect![[r#"
            (set-option :produce-models true)
            (set-logic QF_BV)
            (declare-const tid_x_1 (_ BitVec 32))
            (declare-fun |n 1| () Bool)
            (declare-fun f ((_ BitVec 32)) Bool)
            (define-fun d () (_ BitVec 32) (bvadd tid_x_1 #x00000001))
            (assert (f d))
            (check-sat)
            (get-value (tid_x_1 |n 1| d (f d)))
        "#]]
        .assert_eq(&q.to_smtlib());
        let requests: Vec<_> = q.model_requests().into_iter().map(|(name, _, sort)| (name, sort)).collect();
        assert_eq!(
            requests,
            [("tid_x_1".into(), Some(Sort::BitVec(32))), ("n 1".into(), Some(Sort::Bool)), ("d".into(), Some(Sort::BitVec(32))), ("(f d)".into(), None)]
        );
    }

    #[test]
    fn unsupported_and_malformed_scripts_say_where() {
        let check = |text: &str| Query::from_script(text).unwrap_err().to_string();
        assert_eq!(check("(push 1)"), "`push` at bytes 0..8 is not supported in a query script: the solver driver manages scopes itself");
        assert_eq!(
            check("(check-sat)\n(check-sat)"),
            "`check-sat` at bytes 12..23 is not supported in a query script: a script is one query, with one `check-sat`"
        );
        assert_eq!(check("(declare-const x (Array Int Int))"), "expected a sort (Bool, Int, Real or (_ BitVec n)), found `(Array Int Int)` at bytes 17..32");
        assert_eq!(check("(declare-const x Int)\n(declare-const x Real)"), "`x` at bytes 37..38 is declared twice");
        assert_eq!(check("(set-logic QF_ABV)"), "unknown logic `QF_ABV` at bytes 11..17");
        assert_eq!(check("(assert true"), "expected `)` to close the list opened at bytes 0..1, found the end of the text");
        assert_eq!(check("(assert true false)"), "expected the command's arguments as SMT-LIB defines them, found `(assert true false)` at bytes 0..19");
        assert_eq!(check("sat"), "expected a command in parentheses, found `sat` at bytes 0..3");
        assert_eq!(
            check("(declare-datatype T ((a)))"),
            "`declare-datatype` at bytes 0..26 is not supported in a query script: LARK queries use declare-const, declare-fun, define-fun and assert"
        );
    }
}
