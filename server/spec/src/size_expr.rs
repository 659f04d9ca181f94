//! Size expressions: the lengths, launch dimensions, shapes, offsets and strides of an interface
//! written in terms of scalar parameters (`"rows * cols"`, `"ceil_div(n, 256)"`).
//!
//! Grammar: integers, parameter names, `+ - * / %` (integer arithmetic; `/` and `%` floor like
//! Python's `//` and `%`), unary `-`, parentheses, and the two-argument functions `ceil_div`,
//! `min` and `max`. Every node keeps its byte span in the expression text so that an unknown name
//! is reported at its own column.

use std::collections::BTreeSet;
use std::fmt;
use std::ops::Range;

#[derive(Clone, Debug)]
pub struct SizeExpr {
    pub kind: ExprKind,
    /// Byte range in the expression's text (0..0 for expressions built in code).
    pub span: Range<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    Int(i128),
    /// A scalar parameter, by any of the names it goes by.
    Name(String),
    Neg(Box<SizeExpr>),
    Binary(BinOp, Box<SizeExpr>, Box<SizeExpr>),
    Call(Func, Box<SizeExpr>, Box<SizeExpr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Floor division.
    Div,
    /// The remainder of floor division (the sign of the divisor).
    Rem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    CeilDiv,
    Min,
    Max,
}

/// Two expressions are equal when they have the same structure, wherever they were written.
impl PartialEq for SizeExpr {
    fn eq(&self, other: &SizeExpr) -> bool {
        self.kind == other.kind
    }
}

impl Eq for SizeExpr {}

/// A syntax error in a size expression, at a byte range of its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    pub message: String,
    pub span: Range<usize>,
}

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A name with no value, at its span.
    Unknown(String, Range<usize>),
    DivisionByZero(Range<usize>),
    Overflow(Range<usize>),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unknown(n, _) => write!(f, "no value for `{n}`"),
            EvalError::DivisionByZero(_) => f.write_str("division by zero"),
            EvalError::Overflow(_) => f.write_str("arithmetic overflow"),
        }
    }
}

impl EvalError {
    pub fn span(&self) -> Range<usize> {
        match self {
            EvalError::Unknown(_, s) | EvalError::DivisionByZero(s) | EvalError::Overflow(s) => s.clone(),
        }
    }
}

pub(crate) fn floor_div(a: i128, b: i128) -> Option<i128> {
    let q = a.checked_div(b)?;
    Some(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
}

pub(crate) fn floor_rem(a: i128, b: i128) -> Option<i128> {
    a.checked_sub(b.checked_mul(floor_div(a, b)?)?)
}

pub(crate) fn ceil_div(a: i128, b: i128) -> Option<i128> {
    floor_div(a.checked_neg()?, b)?.checked_neg()
}

impl SizeExpr {
    pub fn int(v: i128) -> SizeExpr {
        SizeExpr { kind: ExprKind::Int(v), span: 0..0 }
    }

    pub fn name(n: &str) -> SizeExpr {
        SizeExpr { kind: ExprKind::Name(n.to_string()), span: 0..0 }
    }

    pub fn parse(text: &str) -> Result<SizeExpr, ExprError> {
        let tokens = lex(text)?;
        let mut p = Parser { tokens, pos: 0, end: text.len() };
        if p.tokens.is_empty() {
            return Err(ExprError { message: "empty size expression".into(), span: 0..text.len() });
        }
        let e = p.sum()?;
        if let Some(t) = p.tokens.get(p.pos) {
            return Err(ExprError { message: format!("expected an operator, found {}", t.tok.describe()), span: t.span.clone() });
        }
        Ok(e)
    }

    pub fn as_int(&self) -> Option<i128> {
        match self.kind {
            ExprKind::Int(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Name(n) => Some(n),
            _ => None,
        }
    }

    /// Every name the expression uses, with its span, in order of appearance.
    pub fn name_spans(&self) -> Vec<(&str, Range<usize>)> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let ExprKind::Name(n) = &e.kind {
                out.push((n.as_str(), e.span.clone()));
            }
        });
        out
    }

    /// The scalar parameters whose values the expression needs.
    pub fn names(&self) -> BTreeSet<String> {
        self.name_spans().into_iter().map(|(n, _)| n.to_string()).collect()
    }

    fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a SizeExpr)) {
        f(self);
        match &self.kind {
            ExprKind::Int(_) | ExprKind::Name(_) => {}
            ExprKind::Neg(a) => a.visit(f),
            ExprKind::Binary(_, a, b) | ExprKind::Call(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
        }
    }

    /// The same expression with names replaced where `rename` says so.
    pub fn rename(&self, rename: &dyn Fn(&str) -> Option<String>) -> SizeExpr {
        let kind = match &self.kind {
            ExprKind::Int(v) => ExprKind::Int(*v),
            ExprKind::Name(n) => ExprKind::Name(rename(n).unwrap_or_else(|| n.clone())),
            ExprKind::Neg(a) => ExprKind::Neg(Box::new(a.rename(rename))),
            ExprKind::Binary(op, a, b) => ExprKind::Binary(*op, Box::new(a.rename(rename)), Box::new(b.rename(rename))),
            ExprKind::Call(func, a, b) => ExprKind::Call(*func, Box::new(a.rename(rename)), Box::new(b.rename(rename))),
        };
        SizeExpr { kind, span: self.span.clone() }
    }

    /// The value, given the values of the names.
    pub fn eval(&self, value_of: &dyn Fn(&str) -> Option<i128>) -> Result<i128, EvalError> {
        let overflow = || EvalError::Overflow(self.span.clone());
        Ok(match &self.kind {
            ExprKind::Int(v) => *v,
            ExprKind::Name(n) => value_of(n).ok_or_else(|| EvalError::Unknown(n.clone(), self.span.clone()))?,
            ExprKind::Neg(a) => a.eval(value_of)?.checked_neg().ok_or_else(overflow)?,
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (a.eval(value_of)?, b.eval(value_of)?);
                if matches!(op, BinOp::Div | BinOp::Rem) && y == 0 {
                    return Err(EvalError::DivisionByZero(self.span.clone()));
                }
                match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div => floor_div(x, y),
                    BinOp::Rem => floor_rem(x, y),
                }
                .ok_or_else(overflow)?
            }
            ExprKind::Call(func, a, b) => {
                let (x, y) = (a.eval(value_of)?, b.eval(value_of)?);
                match func {
                    Func::CeilDiv if y == 0 => return Err(EvalError::DivisionByZero(self.span.clone())),
                    Func::CeilDiv => ceil_div(x, y).ok_or_else(overflow)?,
                    Func::Min => x.min(y),
                    Func::Max => x.max(y),
                }
            }
        })
    }

    /// An inclusive interval holding every value the expression takes when each name ranges
    /// over `range_of(name)`; `None` when a name is unbounded or a divisor may be zero.
    pub fn bounds(&self, range_of: &dyn Fn(&str) -> Option<(i128, i128)>) -> Option<(i128, i128)> {
        let corners = |a: (i128, i128), b: (i128, i128), f: fn(i128, i128) -> Option<i128>| -> Option<(i128, i128)> {
            let v = [f(a.0, b.0)?, f(a.0, b.1)?, f(a.1, b.0)?, f(a.1, b.1)?];
            Some((*v.iter().min()?, *v.iter().max()?))
        };
        let nonzero = |b: (i128, i128)| b.0 > 0 || b.1 < 0;
        match &self.kind {
            ExprKind::Int(v) => Some((*v, *v)),
            ExprKind::Name(n) => range_of(n).filter(|(lo, hi)| lo <= hi),
            ExprKind::Neg(a) => {
                let (lo, hi) = a.bounds(range_of)?;
                Some((hi.checked_neg()?, lo.checked_neg()?))
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (a.bounds(range_of)?, b.bounds(range_of)?);
                match op {
                    BinOp::Add => Some((x.0.checked_add(y.0)?, x.1.checked_add(y.1)?)),
                    BinOp::Sub => Some((x.0.checked_sub(y.1)?, x.1.checked_sub(y.0)?)),
                    BinOp::Mul => corners(x, y, i128::checked_mul),
                    // Floor division is monotone in each argument while the divisor keeps its
                    // sign, so the extremes lie at the corners.
                    BinOp::Div if nonzero(y) => corners(x, y, floor_div),
                    BinOp::Rem if y.0 > 0 && x.0 >= 0 && x.1 < y.0 => Some(x),
                    BinOp::Rem if y.0 > 0 => Some((0, y.1 - 1)),
                    BinOp::Rem if y.1 < 0 => Some((y.0 + 1, 0)),
                    BinOp::Div | BinOp::Rem => None,
                }
            }
            ExprKind::Call(func, a, b) => {
                let (x, y) = (a.bounds(range_of)?, b.bounds(range_of)?);
                match func {
                    Func::CeilDiv if nonzero(y) => corners(x, y, ceil_div),
                    Func::CeilDiv => None,
                    Func::Min => Some((x.0.min(y.0), x.1.min(y.1))),
                    Func::Max => Some((x.0.max(y.0), x.1.max(y.1))),
                }
            }
        }
    }

    fn precedence(&self) -> u8 {
        match &self.kind {
            ExprKind::Binary(BinOp::Add | BinOp::Sub, ..) => 1,
            ExprKind::Binary(..) => 2,
            ExprKind::Neg(_) => 3,
            _ => 4,
        }
    }
}

impl fmt::Display for SizeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paren = |f: &mut fmt::Formatter<'_>, e: &SizeExpr, yes: bool| if yes { write!(f, "({e})") } else { write!(f, "{e}") };
        match &self.kind {
            ExprKind::Int(v) => write!(f, "{v}"),
            ExprKind::Name(n) => f.write_str(n),
            ExprKind::Neg(a) => {
                f.write_str("-")?;
                paren(f, a, a.precedence() < 3)
            }
            ExprKind::Binary(op, a, b) => {
                let p = self.precedence();
                paren(f, a, a.precedence() < p)?;
                f.write_str(match op {
                    BinOp::Add => " + ",
                    BinOp::Sub => " - ",
                    BinOp::Mul => " * ",
                    BinOp::Div => " / ",
                    BinOp::Rem => " % ",
                })?;
                // Left-associative: an operand on the right of equal precedence needs parentheses.
                paren(f, b, b.precedence() <= p)
            }
            ExprKind::Call(func, a, b) => {
                let name = match func {
                    Func::CeilDiv => "ceil_div",
                    Func::Min => "min",
                    Func::Max => "max",
                };
                write!(f, "{name}({a}, {b})")
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i128),
    Ident(String),
    Punct(char),
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Int(v) => format!("`{v}`"),
            Tok::Ident(n) => format!("`{n}`"),
            Tok::Punct(c) => format!("`{c}`"),
        }
    }
}

struct Token {
    tok: Tok,
    span: Range<usize>,
}

fn lex(text: &str) -> Result<Vec<Token>, ExprError> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let mut end = start + c.len_utf8();
        let mut take_while = |pred: fn(char) -> bool, end: &mut usize| {
            while let Some(&(i, c)) = chars.peek() {
                if !pred(c) {
                    break;
                }
                *end = i + c.len_utf8();
                chars.next();
            }
        };
        let tok = match c {
            c if c.is_whitespace() => continue,
            '0'..='9' => {
                take_while(|c| c.is_ascii_alphanumeric() || c == '_', &mut end);
                let digits = text[start..end].replace('_', "");
                let v = digits.parse::<i128>().map_err(|_| {
                    let message = if digits.bytes().all(|b| b.is_ascii_digit()) {
                        "integer too large".to_string()
                    } else {
                        format!("expected an integer, found `{}`", &text[start..end])
                    };
                    ExprError { message, span: start..end }
                })?;
                Tok::Int(v)
            }
            c if c.is_alphabetic() || c == '_' => {
                take_while(|c| c.is_alphanumeric() || c == '_', &mut end);
                Tok::Ident(text[start..end].to_string())
            }
            '+' | '-' | '*' | '/' | '%' | '(' | ')' | ',' => Tok::Punct(c),
            other => return Err(ExprError { message: format!("unexpected character `{other}` in a size expression"), span: start..end }),
        };
        out.push(Token { tok, span: start..end });
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    end: usize,
}

impl Parser {
    fn peek_punct(&self) -> Option<char> {
        match self.tokens.get(self.pos) {
            Some(Token { tok: Tok::Punct(c), .. }) => Some(*c),
            _ => None,
        }
    }

    fn error_here(&self, expected: &str) -> ExprError {
        match self.tokens.get(self.pos) {
            Some(t) => ExprError { message: format!("expected {expected}, found {}", t.tok.describe()), span: t.span.clone() },
            None => ExprError { message: format!("expected {expected}, found the end of the expression"), span: self.end..self.end },
        }
    }

    fn expect(&mut self, c: char) -> Result<Range<usize>, ExprError> {
        if self.peek_punct() == Some(c) {
            self.pos += 1;
            Ok(self.tokens[self.pos - 1].span.clone())
        } else {
            Err(self.error_here(&format!("`{c}`")))
        }
    }

    fn sum(&mut self) -> Result<SizeExpr, ExprError> {
        let mut lhs = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek_punct() {
            self.pos += 1;
            let rhs = self.product()?;
            let op = if op == '+' { BinOp::Add } else { BinOp::Sub };
            let span = lhs.span.start..rhs.span.end;
            lhs = SizeExpr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span };
        }
        Ok(lhs)
    }

    fn product(&mut self) -> Result<SizeExpr, ExprError> {
        let mut lhs = self.unary()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek_punct() {
            self.pos += 1;
            let rhs = self.unary()?;
            let op = match op {
                '*' => BinOp::Mul,
                '/' => BinOp::Div,
                _ => BinOp::Rem,
            };
            let span = lhs.span.start..rhs.span.end;
            lhs = SizeExpr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<SizeExpr, ExprError> {
        if self.peek_punct() == Some('-') {
            let start = self.tokens[self.pos].span.start;
            self.pos += 1;
            let a = self.unary()?;
            let span = start..a.span.end;
            return Ok(SizeExpr { kind: ExprKind::Neg(Box::new(a)), span });
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<SizeExpr, ExprError> {
        let Some(t) = self.tokens.get(self.pos) else { return Err(self.error_here("a number, a name or `(`")) };
        let span = t.span.clone();
        match t.tok.clone() {
            Tok::Int(v) => {
                self.pos += 1;
                Ok(SizeExpr { kind: ExprKind::Int(v), span })
            }
            Tok::Ident(name) => {
                self.pos += 1;
                if self.peek_punct() != Some('(') {
                    return Ok(SizeExpr { kind: ExprKind::Name(name), span });
                }
                let func = match name.as_str() {
                    "ceil_div" => Func::CeilDiv,
                    "min" => Func::Min,
                    "max" => Func::Max,
                    _ => return Err(ExprError { message: format!("unknown function `{name}` (expected ceil_div, min or max)"), span }),
                };
                self.pos += 1;
                let a = self.sum()?;
                if self.peek_punct() == Some(')') {
                    return Err(ExprError { message: format!("`{name}` takes 2 arguments, found 1"), span: span.start..self.tokens[self.pos].span.end });
                }
                self.expect(',')?;
                let b = self.sum()?;
                if self.peek_punct() == Some(',') {
                    return Err(ExprError { message: format!("`{name}` takes 2 arguments, found more"), span: self.tokens[self.pos].span.clone() });
                }
                let close = self.expect(')')?;
                Ok(SizeExpr { kind: ExprKind::Call(func, Box::new(a), Box::new(b)), span: span.start..close.end })
            }
            Tok::Punct('(') => {
                self.pos += 1;
                let inner = self.sum()?;
                let close = self.expect(')')?;
                Ok(SizeExpr { span: span.start..close.end, ..inner })
            }
            Tok::Punct(_) => Err(self.error_here("a number, a name or `(`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    fn check(text: &str, expect: Expect) {
        let got = match SizeExpr::parse(text) {
            Ok(e) => format!("{e}"),
            Err(e) => format!("error at {:?}: {}", e.span, e.message),
        };
        expect.assert_eq(&got);
    }

    #[test]
    fn parses_and_prints_canonically() {
        check("10", expect!["10"]);
        check("rows*cols", expect!["rows * cols"]);
        check(" (a + b) * c ", expect!["(a + b) * c"]);
        check("a - (b - c)", expect!["a - (b - c)"]);
        check("a - b - c", expect!["a - b - c"]);
        check("ceil_div(n, 256) * 256", expect!["ceil_div(n, 256) * 256"]);
        check("min(a, max(b, 4))", expect!["min(a, max(b, 4))"]);
        check("-a % 3", expect!["-a % 3"]);
        check("-(a + 1)", expect!["-(a + 1)"]);
        check("1_024", expect!["1024"]);
    }

    #[test]
    fn syntax_errors_point_at_the_token() {
        check("", expect!["error at 0..0: empty size expression"]);
        check("rows *", expect!["error at 6..6: expected a number, a name or `(`, found the end of the expression"]);
        check("rows cols", expect!["error at 5..9: expected an operator, found `cols`"]);
        check("(a + b", expect!["error at 6..6: expected `)`, found the end of the expression"]);
        check("floor(a, b)", expect!["error at 0..5: unknown function `floor` (expected ceil_div, min or max)"]);
        check("min(a)", expect!["error at 0..6: `min` takes 2 arguments, found 1"]);
        check("max(a, b, c)", expect!["error at 8..9: `max` takes 2 arguments, found more"]);
        check("n $ 2", expect!["error at 2..3: unexpected character `$` in a size expression"]);
        check("12ab", expect!["error at 0..4: expected an integer, found `12ab`"]);
        check("999999999999999999999999999999999999999999", expect!["error at 0..42: integer too large"]);
        check("a + )", expect!["error at 4..5: expected a number, a name or `(`, found `)`"]);
    }

    #[test]
    fn evaluates_with_floor_division() {
        let vals = |n: &str| match n {
            "a" => Some(-7),
            "b" => Some(2),
            "z" => Some(0),
            _ => None,
        };
        let ev = |t: &str| SizeExpr::parse(t).unwrap().eval(&vals);
        assert_eq!(ev("a / b"), Ok(-4));
        assert_eq!(ev("a % b"), Ok(1));
        assert_eq!(ev("7 % -2"), Ok(-1));
        assert_eq!(ev("ceil_div(7, b)"), Ok(4));
        assert_eq!(ev("ceil_div(a, b)"), Ok(-3));
        assert_eq!(ev("min(a, b) + max(a, b)"), Ok(-5));
        assert_eq!(ev("b / z"), Err(EvalError::DivisionByZero(0..5)));
        assert_eq!(ev("b * q"), Err(EvalError::Unknown("q".into(), 4..5)));
        assert_eq!(ev("170141183460469231731687303715884105727 + 1"), Err(EvalError::Overflow(0..43)));
    }

    #[test]
    fn names_and_renaming() {
        let e = SizeExpr::parse("rows * cols + rows").unwrap();
        assert_eq!(e.name_spans(), vec![("rows", 0..4), ("cols", 7..11), ("rows", 14..18)]);
        assert_eq!(e.names().into_iter().collect::<Vec<_>>(), vec!["cols", "rows"]);
        let r = e.rename(&|n| (n == "rows").then(|| "param_0".to_string()));
        assert_eq!(r.to_string(), "param_0 * cols + param_0");
        assert_eq!(SizeExpr::parse("a*b").unwrap(), SizeExpr::parse(" a * b ").unwrap());
        assert_ne!(SizeExpr::parse("a*b").unwrap(), SizeExpr::parse("b*a").unwrap());
    }

    /// The interval of every expression holds its value at every point of a small box: checked
    /// exhaustively over random expressions.
    #[test]
    fn bounds_hold_every_value() {
        use proptest::prelude::*;
        fn expr() -> impl Strategy<Value = String> {
            let leaf = prop_oneof![(-3i32..6).prop_map(|v| v.to_string()), Just("x".to_string()), Just("y".to_string())];
            leaf.prop_recursive(3, 16, 2, |inner| {
                (inner.clone(), inner, 0..8usize).prop_map(|(a, b, op)| match op {
                    0 => format!("({a} + {b})"),
                    1 => format!("({a} - {b})"),
                    2 => format!("({a} * {b})"),
                    3 => format!("({a} / {b})"),
                    4 => format!("({a} % {b})"),
                    5 => format!("ceil_div({a}, {b})"),
                    6 => format!("min({a}, {b})"),
                    _ => format!("-max({a}, {b})"),
                })
            })
        }
        proptest!(|(text in expr(), xlo in -4i128..4, xw in 0i128..4, ylo in -4i128..4, yw in 0i128..4)| {
            let e = SizeExpr::parse(&text).unwrap();
            let range = |n: &str| match n { "x" => Some((xlo, xlo + xw)), _ => Some((ylo, ylo + yw)) };
            if let Some((lo, hi)) = e.bounds(&range) {
                for x in xlo..=xlo + xw {
                    for y in ylo..=ylo + yw {
                        if let Ok(v) = e.eval(&|n| Some(if n == "x" { x } else { y })) {
                            prop_assert!(lo <= v && v <= hi, "{text} = {v} at x={x}, y={y}, outside [{lo}, {hi}]");
                        }
                    }
                }
            }
        });
    }
}
