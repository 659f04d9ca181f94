//! A hand-written, allocation-free PTX lexer.
//!
//! Tokens are byte ranges into the source; the parser slices the text when it needs it. Dotted
//! words (`.reg`, `.s32`, `.x`) are one token each, so `add.s32` lexes as `add` `.s32` and
//! `%tid.x` as `%tid` `.x`; the parser glues what belongs together.

use crate::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// `add`, `%r1`, `$L__BB0_2`, `_Z3fooPf`, `_`
    Ident,
    /// `.reg`, `.s32`, `.x`
    DotIdent,
    /// `42`, `0x1F`, `7U`
    Int,
    /// `0f3F800000`, `0d3FF0000000000000`, `1.5`
    Float,
    /// `"file.cu"`
    Str,
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Semi,
    Colon,
    Plus,
    Minus,
    At,
    Bang,
    Lt,
    Gt,
    Eq,
    Pipe,
    /// Anything else, including a lone `.` or `/`, a non-ASCII byte, or an unterminated string or
    /// comment. The parser reports it with its span.
    Unknown,
    Eof,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
    /// True when a newline separates this token from the previous one. Used for error recovery
    /// and to end `.loc` directives, which have no terminating `;`.
    pub newline_before: bool,
}

#[derive(Clone)]
pub struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'%'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        // A UTF-8 byte order mark (some Windows editors write one) is not a token.
        let pos = if text.starts_with('\u{feff}') { 3 } else { 0 };
        Lexer { bytes: text.as_bytes(), pos }
    }

    /// Skips whitespace and comments; returns whether a newline was crossed.
    fn skip_trivia(&mut self) -> bool {
        let mut newline = false;
        loop {
            match self.bytes.get(self.pos) {
                Some(b'\n') => {
                    newline = true;
                    self.pos += 1;
                }
                Some(b' ' | b'\t' | b'\r' | 0x0c) => self.pos += 1,
                Some(b'/') => match self.bytes.get(self.pos + 1) {
                    Some(b'/') => {
                        while let Some(&b) = self.bytes.get(self.pos) {
                            if b == b'\n' {
                                break;
                            }
                            self.pos += 1;
                        }
                    }
                    Some(b'*') => {
                        let start = self.pos;
                        let newline_before_comment = newline;
                        self.pos += 2;
                        loop {
                            match self.bytes.get(self.pos) {
                                None => {
                                    // Unterminated block comment: leave it as an Unknown token,
                                    // preceded only by the newlines before it.
                                    self.pos = start;
                                    return newline_before_comment;
                                }
                                Some(b'*') if self.bytes.get(self.pos + 1) == Some(&b'/') => {
                                    self.pos += 2;
                                    break;
                                }
                                Some(b'\n') => {
                                    newline = true;
                                    self.pos += 1;
                                }
                                Some(_) => self.pos += 1,
                            }
                        }
                    }
                    _ => return newline,
                },
                _ => return newline,
            }
        }
    }

    fn eat_while(&mut self, pred: impl Fn(u8) -> bool) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if !pred(b) {
                break;
            }
            self.pos += 1;
        }
    }

    /// The rest of a string literal after its opening quote. Strings do not span lines.
    fn string_rest(&mut self) -> TokenKind {
        let kind = loop {
            match self.bytes.get(self.pos) {
                None | Some(b'\n') => break TokenKind::Unknown,
                Some(b'\\') => {
                    self.pos += 2;
                    self.eat_while(|c| (0x80..0xc0).contains(&c));
                }
                Some(b'"') => {
                    self.pos += 1;
                    break TokenKind::Str;
                }
                Some(_) => self.pos += 1,
            }
        };
        // An escape at the very end of the input steps past it.
        self.pos = self.pos.min(self.bytes.len());
        kind
    }

    pub fn next_token(&mut self) -> Token {
        let newline_before = self.skip_trivia();
        let start = self.pos;
        let Some(&b) = self.bytes.get(self.pos) else {
            return Token { kind: TokenKind::Eof, span: Span::new(start, start), newline_before };
        };
        self.pos += 1;
        let kind = match b {
            b'{' => TokenKind::LBrace,
            b'}' => TokenKind::RBrace,
            b'(' => TokenKind::LParen,
            b')' => TokenKind::RParen,
            b'[' => TokenKind::LBracket,
            b']' => TokenKind::RBracket,
            b',' => TokenKind::Comma,
            b';' => TokenKind::Semi,
            b':' => TokenKind::Colon,
            b'+' => TokenKind::Plus,
            b'-' => TokenKind::Minus,
            b'@' => {
                // `@@DWARF` lines of old nvcc output: lex the directive as one identifier.
                if self.bytes.get(self.pos) == Some(&b'@') {
                    self.pos += 1;
                    self.eat_while(is_ident_continue);
                    TokenKind::Ident
                } else {
                    TokenKind::At
                }
            }
            b'!' => TokenKind::Bang,
            b'<' => TokenKind::Lt,
            b'>' => TokenKind::Gt,
            b'=' => TokenKind::Eq,
            b'|' => TokenKind::Pipe,
            b'"' => self.string_rest(),
            b'.' => {
                if self.bytes.get(self.pos).is_some_and(|&c| is_ident_start(c)) {
                    self.eat_while(is_ident_continue);
                    // Qualified modifiers are one word: `.shared::cta`, `.L1::no_allocate`,
                    // `.L2::256B`, `.mbarrier::complete_tx::bytes`.
                    while self.bytes.get(self.pos..self.pos + 2) == Some(b"::") && self.bytes.get(self.pos + 2).is_some_and(|&c| is_ident_continue(c)) {
                        self.pos += 2;
                        self.eat_while(is_ident_continue);
                    }
                    TokenKind::DotIdent
                } else {
                    TokenKind::Unknown
                }
            }
            b'0' if matches!(self.bytes.get(self.pos), Some(b'f' | b'F' | b'd' | b'D'))
                && self.bytes.get(self.pos + 1).is_some_and(|c| c.is_ascii_hexdigit()) =>
            {
                self.pos += 1;
                self.eat_while(|c| c.is_ascii_hexdigit());
                TokenKind::Float
            }
            b'0' if matches!(self.bytes.get(self.pos), Some(b'b' | b'B')) && matches!(self.bytes.get(self.pos + 1), Some(b'0' | b'1')) => {
                self.pos += 1;
                self.eat_while(|c| c == b'0' || c == b'1');
                if self.bytes.get(self.pos) == Some(&b'U') {
                    self.pos += 1;
                }
                TokenKind::Int
            }
            b'0' if matches!(self.bytes.get(self.pos), Some(b'x' | b'X')) => {
                self.pos += 1;
                self.eat_while(|c| c.is_ascii_hexdigit());
                if self.bytes.get(self.pos) == Some(&b'U') {
                    self.pos += 1;
                }
                TokenKind::Int
            }
            b'0'..=b'9' => {
                self.eat_while(|c| c.is_ascii_digit());
                if self.bytes.get(self.pos) == Some(&b'.') && self.bytes.get(self.pos + 1).is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                    self.eat_while(|c| c.is_ascii_digit());
                    if matches!(self.bytes.get(self.pos), Some(b'e' | b'E')) {
                        self.pos += 1;
                        if matches!(self.bytes.get(self.pos), Some(b'+' | b'-')) {
                            self.pos += 1;
                        }
                        self.eat_while(|c| c.is_ascii_digit());
                    }
                    TokenKind::Float
                } else {
                    if self.bytes.get(self.pos) == Some(&b'U') {
                        self.pos += 1;
                    }
                    TokenKind::Int
                }
            }
            c if is_ident_start(c) => {
                self.eat_while(is_ident_continue);
                TokenKind::Ident
            }
            c if c >= 0x80 => {
                // Skip the whole UTF-8 sequence so spans stay on character boundaries.
                self.eat_while(|c| (0x80..0xc0).contains(&c));
                TokenKind::Unknown
            }
            b'/' => {
                // An unterminated block comment lands here: swallow the rest of the file.
                if self.bytes.get(self.pos) == Some(&b'*') {
                    self.pos = self.bytes.len();
                }
                TokenKind::Unknown
            }
            _ => TokenKind::Unknown,
        };
        Token { kind, span: Span::new(start, self.pos), newline_before }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(TokenKind, &str)> {
        let mut lexer = Lexer::new(text);
        let mut out = Vec::new();
        loop {
            let t = lexer.next_token();
            if t.kind == TokenKind::Eof {
                return out;
            }
            out.push((t.kind, &text[t.span.range()]));
        }
    }

    #[test]
    fn lexes_instruction_with_modifiers_and_address() {
        use TokenKind::*;
        assert_eq!(
            kinds("@!%p1 ld.global.v4.f32 {%f1,_}, [%rd1+-8]; // c"),
            vec![
                (At, "@"),
                (Bang, "!"),
                (Ident, "%p1"),
                (Ident, "ld"),
                (DotIdent, ".global"),
                (DotIdent, ".v4"),
                (DotIdent, ".f32"),
                (LBrace, "{"),
                (Ident, "%f1"),
                (Comma, ","),
                (Ident, "_"),
                (RBrace, "}"),
                (Comma, ","),
                (LBracket, "["),
                (Ident, "%rd1"),
                (Plus, "+"),
                (Minus, "-"),
                (Int, "8"),
                (RBracket, "]"),
                (Semi, ";"),
            ]
        );
    }

    #[test]
    fn qualified_modifiers_are_one_token() {
        use TokenKind::*;
        assert_eq!(
            kinds("ld.global.L1::no_allocate.L2::256B.v4.f32 fence.proxy.async.shared::cta; $L:"),
            vec![
                (Ident, "ld"),
                (DotIdent, ".global"),
                (DotIdent, ".L1::no_allocate"),
                (DotIdent, ".L2::256B"),
                (DotIdent, ".v4"),
                (DotIdent, ".f32"),
                (Ident, "fence"),
                (DotIdent, ".proxy"),
                (DotIdent, ".async"),
                (DotIdent, ".shared::cta"),
                (Semi, ";"),
                (Ident, "$L"),
                (Colon, ":"),
            ]
        );
    }

    #[test]
    fn lexes_number_forms() {
        use TokenKind::*;
        assert_eq!(
            kinds("0f3F800000 0d3FF0000000000000 0x1fU 7.0 12 1.5e-3 0b101U"),
            vec![(Float, "0f3F800000"), (Float, "0d3FF0000000000000"), (Int, "0x1fU"), (Float, "7.0"), (Int, "12"), (Float, "1.5e-3"), (Int, "0b101U")]
        );
    }

    #[test]
    fn unterminated_things_do_not_loop() {
        for text in ["\"abc", "/* abc", "\"a\\", ".", "é", "\u{0}"] {
            let tokens = kinds(text);
            assert!(tokens.iter().all(|(k, _)| *k == TokenKind::Unknown), "{text:?}: {tokens:?}");
        }
    }
}
