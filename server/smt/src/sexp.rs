//! Reading SMT-LIB S-expressions: solver answers and `.smt2` scripts.
//!
//! easy-smt 0.3.2 keeps its parser private to its own process driver, so this module reads the
//! SMT-LIB 2.6 lexicon (§3.1: parentheses, symbols with `|quoted|` forms, string literals with
//! `""` escapes, `;` comments; numerals, decimals, `#x`/`#b` literals and keywords read as atoms)
//! into a tree with byte spans. It never recurses, so deeply nested input cannot overflow the
//! stack, and it can tell where the first complete expression of a growing buffer ends, which is
//! how answers are cut out of the solver's output stream.

use std::fmt;
use std::ops::Range;

/// Byte offsets into the text that was read.
pub type Span = Range<usize>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sexp {
    pub kind: SexpKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SexpKind {
    /// A symbol, keyword or literal exactly as written (a quoted symbol keeps its bars).
    Atom(String),
    /// A string literal's content, with `""` turned back into `"`.
    Str(String),
    List(Vec<Sexp>),
}

impl Sexp {
    pub fn atom(&self) -> Option<&str> {
        match &self.kind {
            SexpKind::Atom(a) => Some(a),
            _ => None,
        }
    }

    pub fn list(&self) -> Option<&[Sexp]> {
        match &self.kind {
            SexpKind::List(items) => Some(items),
            _ => None,
        }
    }

    pub fn string(&self) -> Option<&str> {
        match &self.kind {
            SexpKind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// `(head ...)` with the given head symbol: the arguments.
    pub fn application(&self, head: &str) -> Option<&[Sexp]> {
        let items = self.list()?;
        (items.first()?.atom()? == head).then(|| &items[1..])
    }
}

impl Drop for Sexp {
    /// Frees nested lists with a loop: the derived drop would recurse once per level, and a
    /// solver's answer can nest deeply.
    fn drop(&mut self) {
        let SexpKind::List(items) = &mut self.kind else { return };
        if items.iter().all(|i| i.list().is_none_or(<[Sexp]>::is_empty)) {
            return;
        }
        let mut stack = std::mem::take(items);
        while let Some(mut e) = stack.pop() {
            if let SexpKind::List(children) = &mut e.kind {
                stack.append(children);
            }
        }
    }
}

impl fmt::Display for Sexp {
    /// Prints the expression back as SMT-LIB (strings re-escaped), without recursion.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        enum Step<'a> {
            Node(&'a Sexp),
            Text(&'static str),
        }
        let mut todo = vec![Step::Node(self)];
        while let Some(step) = todo.pop() {
            match step {
                Step::Text(t) => f.write_str(t)?,
                Step::Node(e) => match &e.kind {
                    SexpKind::Atom(a) => f.write_str(a)?,
                    SexpKind::Str(s) => write!(f, "\"{}\"", s.replace('"', "\"\""))?,
                    SexpKind::List(items) => {
                        f.write_str("(")?;
                        todo.push(Step::Text(")"));
                        for (i, item) in items.iter().enumerate().rev() {
                            todo.push(Step::Node(item));
                            if i > 0 {
                                todo.push(Step::Text(" "));
                            }
                        }
                    }
                },
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    #[error("expected an expression, found `)` at bytes {span:?}")]
    UnexpectedClose { span: Span },
    #[error("expected `)` to close the list opened at bytes {span:?}, found the end of the text")]
    Unclosed { span: Span },
    #[error("expected `\"` to end the string literal at bytes {span:?}, found the end of the text")]
    UnterminatedString { span: Span },
    #[error("expected `|` to end the quoted symbol at bytes {span:?}, found the end of the text")]
    UnterminatedSymbol { span: Span },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Open,
    Close,
    Atom,
    Str,
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        Lexer { src, pos: 0 }
    }

    fn skip_blanks(&mut self) {
        let bytes = self.src.as_bytes();
        while self.pos < bytes.len() {
            match bytes[self.pos] {
                b';' => {
                    while self.pos < bytes.len() && bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                b if b.is_ascii_whitespace() => self.pos += 1,
                _ => break,
            }
        }
    }

    fn next_token(&mut self) -> Option<Result<(Token, Span), SyntaxError>> {
        self.skip_blanks();
        let bytes = self.src.as_bytes();
        let start = self.pos;
        let first = *bytes.get(start)?;
        let token = match first {
            b'(' => {
                self.pos += 1;
                Token::Open
            }
            b')' => {
                self.pos += 1;
                Token::Close
            }
            b'"' => {
                let mut i = start + 1;
                loop {
                    match bytes.get(i) {
                        None => return Some(Err(SyntaxError::UnterminatedString { span: start..self.src.len() })),
                        Some(b'"') if bytes.get(i + 1) == Some(&b'"') => i += 2,
                        Some(b'"') => break,
                        Some(_) => i += 1,
                    }
                }
                self.pos = i + 1;
                Token::Str
            }
            b'|' => match self.src[start + 1..].find('|') {
                Some(len) => {
                    self.pos = start + 1 + len + 1;
                    Token::Atom
                }
                None => return Some(Err(SyntaxError::UnterminatedSymbol { span: start..self.src.len() })),
            },
            _ => {
                let end = self.src[start..].find(|c: char| c.is_ascii_whitespace() || "()\";".contains(c)).map_or(self.src.len(), |n| start + n);
                self.pos = end;
                Token::Atom
            }
        };
        Some(Ok((token, start..self.pos)))
    }
}

/// Reads every top-level expression of `src`.
pub(crate) fn parse_all(src: &str) -> Result<Vec<Sexp>, SyntaxError> {
    let mut lexer = Lexer::new(src);
    let mut done = Vec::new();
    // Open lists: where each started and what it holds so far.
    let mut open: Vec<(usize, Vec<Sexp>)> = Vec::new();
    while let Some(token) = lexer.next_token() {
        let (token, span) = token?;
        let finished = match token {
            Token::Open => {
                open.push((span.start, Vec::new()));
                continue;
            }
            Token::Close => {
                let Some((start, items)) = open.pop() else {
                    return Err(SyntaxError::UnexpectedClose { span });
                };
                Sexp { kind: SexpKind::List(items), span: start..span.end }
            }
            Token::Atom => Sexp { kind: SexpKind::Atom(src[span.clone()].to_string()), span },
            Token::Str => Sexp { kind: SexpKind::Str(src[span.start + 1..span.end - 1].replace("\"\"", "\"")), span },
        };
        match open.last_mut() {
            Some((_, items)) => items.push(finished),
            None => done.push(finished),
        }
    }
    match open.pop() {
        Some((start, _)) => Err(SyntaxError::Unclosed { span: start..start + 1 }),
        None => Ok(done),
    }
}

/// Where the first complete top-level expression of a buffer that is still growing ends, or
/// `None` while more text is needed. A bare atom at the very end of the buffer may continue, so
/// it counts as complete only once something follows it. Text that can never become valid (a
/// stray `)`) is "complete" too, so that parsing it reports the error.
pub(crate) fn complete_prefix(src: &str) -> Option<usize> {
    let mut lexer = Lexer::new(src);
    let mut depth = 0usize;
    while let Some(token) = lexer.next_token() {
        let Ok((token, span)) = token else { return None };
        match token {
            Token::Open => depth += 1,
            Token::Close if depth == 0 => return Some(span.end),
            Token::Close => {
                depth -= 1;
                if depth == 0 {
                    return Some(span.end);
                }
            }
            Token::Str if depth == 0 => return Some(span.end),
            Token::Atom if depth == 0 => return (span.end < src.len()).then_some(span.end),
            Token::Atom | Token::Str => {}
        }
    }
    None
}

/// Whether `name` can be written as an SMT-LIB simple symbol (no bars needed).
pub(crate) fn is_simple_symbol(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    let ok = |c: char| c.is_ascii_alphanumeric() || "~!@$%^&*_-+=<>.?/".contains(c);
    ok(first) && !first.is_ascii_digit() && chars.all(ok) && !RESERVED.contains(&name)
}

/// SMT-LIB's reserved words, which a declared name must quote.
const RESERVED: [&str; 14] = ["_", "!", "as", "let", "exists", "forall", "match", "par", "BINARY", "DECIMAL", "HEXADECIMAL", "NUMERAL", "STRING", "check-sat"];

/// A symbol as SMT-LIB text: bare when it can be, `|quoted|` otherwise; `None` when no spelling
/// exists (a name containing `|` or `\`).
pub(crate) fn symbol_text(name: &str) -> Option<String> {
    if is_simple_symbol(name) {
        Some(name.to_string())
    } else if name.contains(['|', '\\']) {
        None
    } else {
        Some(format!("|{name}|"))
    }
}

/// The name a symbol denotes: `|a b|` and `a b` are the same symbol.
pub(crate) fn symbol_name(text: &str) -> &str {
    text.strip_prefix('|').and_then(|t| t.strip_suffix('|')).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    fn check(src: &str, expect: Expect) {
        let shown = match parse_all(src) {
            Ok(items) => items.iter().map(|e| format!("{e} @{:?}", e.span)).collect::<Vec<_>>().join("\n"),
            Err(e) => format!("error: {e}"),
        };
        expect.assert_eq(&shown);
    }

    #[test]
    fn reads_solver_answers_and_scripts() {
        check("sat\n", expect!["sat @0..3"]);
        check("((x (/ 1.0 3.0))\n (y (- 2.0))\n ((f x) 6.0))", expect!["((x (/ 1.0 3.0)) (y (- 2.0)) ((f x) 6.0)) @0..43"]);
        check("(error \"line 3: unknown constant \"\"y\"\"\") ; trailing", expect![[r#"(error "line 3: unknown constant ""y""") @0..40"#]]);
        check("(|a b| #x0f #b101 :named |(|)", expect!["(|a b| #x0f #b101 :named |(|) @0..29"]);
        check("(a ; comment (\n b)", expect!["(a b) @0..18"]);
    }

    #[test]
    fn reports_malformed_text_with_spans() {
        check("(a (b)", expect!["error: expected `)` to close the list opened at bytes 0..1, found the end of the text"]);
        check("a)", expect!["error: expected an expression, found `)` at bytes 1..2"]);
        check("(error \"oops", expect![[r#"error: expected `"` to end the string literal at bytes 7..12, found the end of the text"#]]);
        check("|abc", expect!["error: expected `|` to end the quoted symbol at bytes 0..4, found the end of the text"]);
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let depth = 200_000;
        let text = format!("{}x{}", "(".repeat(depth), ")".repeat(depth));
        let parsed = parse_all(&text).unwrap();
        assert_eq!(parsed[0].to_string().len(), text.len());
    }

    #[test]
    fn finds_the_end_of_the_first_complete_answer() {
        assert_eq!(complete_prefix(""), None);
        assert_eq!(complete_prefix("  ; only a comment\n"), None);
        assert_eq!(complete_prefix("sat"), None, "the atom may go on");
        assert_eq!(complete_prefix("sat\n"), Some(3));
        assert_eq!(complete_prefix("((x #x01)\n"), None);
        assert_eq!(complete_prefix("((x #x01)\n (y |)|))\nunsat\n"), Some(19));
        assert_eq!(complete_prefix("(error \"a ) b"), None, "inside a string");
        assert_eq!(complete_prefix(")"), Some(1), "a stray `)` is complete so that parsing reports it");
    }

    #[test]
    fn symbols_are_quoted_only_when_needed() {
        assert_eq!(symbol_text("tid_x_1").as_deref(), Some("tid_x_1"));
        assert_eq!(symbol_text("a b").as_deref(), Some("|a b|"));
        assert_eq!(symbol_text("1x").as_deref(), Some("|1x|"));
        assert_eq!(symbol_text("let").as_deref(), Some("|let|"));
        assert_eq!(symbol_text("").as_deref(), Some("||"));
        assert_eq!(symbol_text("a|b"), None);
        assert_eq!(symbol_name("|a b|"), "a b");
        assert_eq!(symbol_name("ab"), "ab");
    }
}
