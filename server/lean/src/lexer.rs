//! A lexer for Lean 4 source text, as much of it as the library index and the proof audit need.
//!
//! It follows Lean's own rules where they matter for what a piece of text *means*: comments
//! (`--`, nested `/- … -/`, doc comments `/-- -/` and `/-! -/`), string literals with escapes and
//! `{…}` interpolation, raw strings, character literals, and identifiers with `«…»` escaped
//! components (so `«sorry»` is the identifier `sorry`). Identifier characters are Lean's
//! (`isIdFirst`/`isIdRest`, `isLetterLike`, subscripts); everything else is a symbol.
//!
//! Every string literal is lexed as if it could be interpolated: code inside `{…}` becomes tokens
//! (marked `in_string`), because `s!"…"`, `m!"…"` and `throwError "…"` evaluate it. A plain
//! string whose braces happen to hold a forbidden word is thereby rejected by the audit, which is
//! the safe direction.

use std::ops::Range;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// An identifier, possibly dotted, possibly with `«…»` components (see [`Token::components`]).
    Ident,
    Number,
    /// A whole string literal (its interpolated code appears as separate tokens inside its span).
    Str,
    Char,
    /// `/-- … -/` or `/-! … -/`.
    DocComment,
    /// `#eval`, `#print`, …: a `#` immediately followed by an identifier.
    HashCommand,
    /// `@[`, the start of an attribute list.
    AttrOpen,
    /// `` `( ``, the start of a syntax quotation.
    Quotation,
    /// Anything else: `:=`, `::`, `#[`, or a single character.
    Symbol,
}

/// A token with its byte range in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Range<usize>,
    /// For identifiers: the components with `«»` removed (`x.«sorry»` is `["x", "sorry"]`).
    pub components: Vec<String>,
    /// Whether the token lies in the `{…}` of a string literal.
    pub in_string: bool,
    /// Column (in characters) of the token's first character.
    pub column: usize,
    /// Whether the token is the first on its line.
    pub line_start: bool,
}

impl Token {
    /// The identifier as one dotted name (`Lark.Op.mov`); empty for other tokens.
    pub fn name(&self) -> String {
        self.components.join(".")
    }

    /// The token's text.
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.span.clone()]
    }
}

/// Something the lexer could not read: an unterminated comment, string or escape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    pub span: Range<usize>,
    pub message: String,
}

/// Tokens in source order, and what could not be read.
#[derive(Clone, Debug, Default)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub errors: Vec<LexError>,
}

/// Lexes a whole Lean source text.
pub fn lex(src: &str) -> Lexed {
    let mut lx = Lexer { src, pos: 0, out: Lexed::default(), last_line_with_token: None };
    lx.code(None);
    lx.out
}

/// Lean's `isLetterLike`.
fn is_letter_like(c: char) -> bool {
    let v = c as u32;
    ((0x3b1..=0x3c9).contains(&v) && v != 0x3bb)
        || ((0x391..=0x3a9).contains(&v) && v != 0x3a0 && v != 0x3a3)
        || (0x3ca..=0x3fb).contains(&v)
        || (0x1f00..=0x1ffe).contains(&v)
        || (0x2100..=0x214f).contains(&v)
        || (0x1d49c..=0x1d59f).contains(&v)
}

/// Lean's `isSubScriptAlnum`.
fn is_subscript_alnum(c: char) -> bool {
    let v = c as u32;
    (0x2080..=0x2089).contains(&v) || (0x2090..=0x209c).contains(&v) || (0x1d62..=0x1d6a).contains(&v)
}

/// Lean's `isIdFirst`.
pub fn is_id_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || is_letter_like(c)
}

/// Lean's `isIdRest`.
pub fn is_id_rest(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\'' || c == '!' || c == '?' || is_letter_like(c) || is_subscript_alnum(c)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    out: Lexed,
    /// Byte offset of the start of the line of the last token pushed.
    last_line_with_token: Option<usize>,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn starts_with(&self, s: &str) -> bool {
        self.src[self.pos..].starts_with(s)
    }

    fn line_start_of(&self, at: usize) -> usize {
        self.src[..at].rfind('\n').map_or(0, |i| i + 1)
    }

    fn push(&mut self, kind: TokenKind, start: usize, components: Vec<String>, in_string: bool) {
        let line = self.line_start_of(start);
        let column = self.src[line..start].chars().count();
        let line_start = self.last_line_with_token != Some(line);
        self.last_line_with_token = Some(line);
        self.out.tokens.push(Token { kind, span: start..self.pos, components, in_string, column, line_start });
    }

    fn error(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.out.errors.push(LexError { span, message: message.into() });
    }

    /// Lexes code until the end of input, or — inside a string interpolation, `depth` being
    /// `Some(0)` at its start — until the `}` that closes it (consumed).
    fn code(&mut self, mut depth: Option<usize>) {
        let in_string = depth.is_some();
        while let Some(c) = self.peek() {
            let start = self.pos;
            if c.is_whitespace() {
                self.bump();
            } else if self.starts_with("--") {
                match self.src[self.pos..].find('\n') {
                    Some(i) => self.pos += i,
                    None => self.pos = self.src.len(),
                }
            } else if self.starts_with("/-") {
                let doc = matches!(self.peek_at(2), Some('-') | Some('!')) && !self.starts_with("/--/");
                self.block_comment();
                if doc {
                    self.push(TokenKind::DocComment, start, Vec::new(), in_string);
                }
            } else if c == '"' {
                self.string(start, in_string);
            } else if c == '\'' && self.char_literal() {
                self.push(TokenKind::Char, start, Vec::new(), in_string);
            } else if c == '«' || is_id_first(c) {
                self.ident_or_raw_string(start, in_string);
            } else if c.is_ascii_digit() {
                self.number();
                self.push(TokenKind::Number, start, Vec::new(), in_string);
            } else if c == '#' && self.peek_at(1).is_some_and(is_id_first) {
                self.bump();
                let name_start = self.pos;
                while self.peek().is_some_and(is_id_rest) {
                    self.bump();
                }
                let name = self.src[name_start..self.pos].to_string();
                self.push(TokenKind::HashCommand, start, vec![name], in_string);
            } else if self.starts_with("@[") {
                self.pos += 2;
                self.push(TokenKind::AttrOpen, start, Vec::new(), in_string);
            } else if self.starts_with("`(") {
                self.pos += 2;
                self.push(TokenKind::Quotation, start, Vec::new(), in_string);
            } else if self.starts_with(":=") || self.starts_with("::") || self.starts_with("#[") {
                self.pos += 2;
                self.push(TokenKind::Symbol, start, Vec::new(), in_string);
            } else {
                self.bump();
                if let Some(d) = depth.as_mut() {
                    if c == '{' {
                        *d += 1;
                    } else if c == '}' {
                        if *d == 0 {
                            return;
                        }
                        *d -= 1;
                    }
                }
                self.push(TokenKind::Symbol, start, Vec::new(), in_string);
            }
        }
        if in_string {
            self.error(self.pos..self.pos, "expected `}` closing a string interpolation, found the end of the text");
        }
    }

    /// A nested block comment starting at `/-`.
    fn block_comment(&mut self) {
        let start = self.pos;
        self.pos += 2;
        let mut depth = 1usize;
        while depth > 0 {
            if self.starts_with("/-") {
                self.pos += 2;
                depth += 1;
            } else if self.starts_with("-/") {
                self.pos += 2;
                depth -= 1;
            } else if self.bump().is_none() {
                self.error(start..self.pos, "expected `-/` closing a comment, found the end of the text");
                return;
            }
        }
    }

    /// A string literal starting at `"`; `{…}` is lexed as code.
    fn string(&mut self, start: usize, in_string: bool) {
        self.bump();
        // The string token is pushed first so that tokens stay in source order; its span is
        // fixed up when the literal ends.
        let index = self.out.tokens.len();
        self.push(TokenKind::Str, start, Vec::new(), in_string);
        loop {
            match self.bump() {
                None => {
                    self.error(start..self.pos, "expected `\"` closing a string, found the end of the text");
                    break;
                }
                Some('\\') => {
                    if self.bump().is_none() {
                        self.error(start..self.pos, "expected an escape after `\\`, found the end of the text");
                        break;
                    }
                }
                Some('"') => break,
                Some('{') => self.code(Some(0)),
                Some(_) => {}
            }
        }
        self.out.tokens[index].span.end = self.pos;
    }

    /// A character literal at `'`, if one is there (`'a'`, `'\n'`, `'\x41'`, `'\u{3b1}'`).
    fn char_literal(&mut self) -> bool {
        let rest = &self.src[self.pos + 1..];
        let mut chars = rest.char_indices();
        let len = match chars.next() {
            Some((_, '\\')) => {
                // An escape: up to the next `'`, at most a few characters away.
                match rest[1..].char_indices().take(12).find(|(_, c)| *c == '\'') {
                    Some((i, _)) => 1 + i + 1,
                    None => return false,
                }
            }
            Some((_, c)) if c != '\'' => match chars.next() {
                Some((i, '\'')) => i + 1,
                _ => return false,
            },
            _ => return false,
        };
        self.pos += 1 + len;
        true
    }

    /// An identifier (components separated by `.`, each plain or `«…»`), or a raw string
    /// `r"…"` / `r#"…"#`.
    fn ident_or_raw_string(&mut self, start: usize, in_string: bool) {
        if self.starts_with("r\"") || self.starts_with("r#") {
            let hashes = self.src[self.pos + 1..].chars().take_while(|c| *c == '#').count();
            if self.src[self.pos + 1 + hashes..].starts_with('"') {
                self.pos += 2 + hashes;
                let close = format!("\"{}", "#".repeat(hashes));
                match self.src[self.pos..].find(&close) {
                    Some(i) => self.pos += i + close.len(),
                    None => {
                        self.pos = self.src.len();
                        self.error(start..self.pos, "expected the end of a raw string, found the end of the text");
                    }
                }
                self.push(TokenKind::Str, start, Vec::new(), in_string);
                return;
            }
        }
        let mut components = Vec::new();
        loop {
            if self.peek() == Some('«') {
                self.bump();
                let comp_start = self.pos;
                match self.src[self.pos..].find('»') {
                    Some(i) => {
                        components.push(self.src[comp_start..comp_start + i].to_string());
                        self.pos = comp_start + i + '»'.len_utf8();
                    }
                    None => {
                        self.pos = self.src.len();
                        self.error(start..self.pos, "expected `»` closing an escaped identifier, found the end of the text");
                        components.push(self.src[comp_start..].to_string());
                        break;
                    }
                }
            } else {
                let comp_start = self.pos;
                self.bump();
                while self.peek().is_some_and(is_id_rest) {
                    self.bump();
                }
                components.push(self.src[comp_start..self.pos].to_string());
            }
            // A further component follows a `.` directly (`Lark.Op.mov`, `x.«sorry»`).
            let continues = self.peek() == Some('.') && self.peek_at(1).is_some_and(|c| c == '«' || is_id_first(c));
            if !continues {
                break;
            }
            self.bump();
        }
        self.push(TokenKind::Ident, start, components, in_string);
    }

    /// A numeric literal: digits, letters (`0x1F`, `1e10`) and a `.` followed by a digit.
    fn number(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' || (c == '.' && self.peek_at(1).is_some_and(|d| d.is_ascii_digit())) {
                self.bump();
            } else {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<String> {
        lex(src).tokens.iter().filter(|t| t.kind == TokenKind::Ident).map(|t| t.name()).collect()
    }

    #[test]
    fn comments_nest_and_hide_their_contents() {
        assert_eq!(names("a /- b /- c -/ d -/ e -- f\ng"), ["a", "e", "g"]);
        assert!(lex("/- open /- nested -/").errors.len() == 1);
    }

    #[test]
    fn escaped_and_dotted_identifiers() {
        assert_eq!(names("x.«sorry» Lark.Op.mov h.1 «a b»"), ["x.sorry", "Lark.Op.mov", "h", "a b"]);
        assert_eq!(names("α₁ x' s! ℕ"), ["α₁", "x'", "s!", "ℕ"]);
    }

    #[test]
    fn strings_escapes_and_interpolation() {
        let l = lex(r#"s!"a \" {sorry} \{no}" 'x' '\n' r"raw {sorry}" b"#);
        let toks: Vec<(TokenKind, String, bool)> = l.tokens.iter().map(|t| (t.kind, t.name(), t.in_string)).collect();
        assert_eq!(
            toks,
            vec![
                (TokenKind::Ident, "s!".into(), false),
                (TokenKind::Str, "".into(), false),
                (TokenKind::Ident, "sorry".into(), true),
                (TokenKind::Char, "".into(), false),
                (TokenKind::Char, "".into(), false),
                (TokenKind::Str, "".into(), false),
                (TokenKind::Ident, "b".into(), false),
            ]
        );
        assert!(l.errors.is_empty(), "{:?}", l.errors);
    }

    #[test]
    fn nested_strings_inside_interpolation() {
        // The `"}"` inside the braces does not end the interpolation.
        let l = lex(r#"s!"{ "}" ++ sorry }" x"#);
        assert_eq!(
            l.tokens.iter().filter(|t| t.kind == TokenKind::Ident).map(|t| (t.name(), t.in_string)).collect::<Vec<_>>(),
            vec![("s!".to_string(), false), ("sorry".to_string(), true), ("x".to_string(), false)]
        );
    }

    #[test]
    fn commands_attributes_and_columns() {
        let l = lex("#eval 1\n  @[simp] theorem t := #[1]");
        let kinds: Vec<TokenKind> = l.tokens.iter().map(|t| t.kind).collect();
        assert_eq!(kinds[0], TokenKind::HashCommand);
        assert_eq!(l.tokens[0].components, ["eval"]);
        assert!(kinds.contains(&TokenKind::AttrOpen));
        let theorem = l.tokens.iter().find(|t| t.name() == "theorem").unwrap();
        assert!(!theorem.line_start);
        let at = l.tokens.iter().find(|t| t.kind == TokenKind::AttrOpen).unwrap();
        assert!(at.line_start && at.column == 2);
    }
}
