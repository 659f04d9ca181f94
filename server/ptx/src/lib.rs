//! The PTX front end: lexer, error-recovering parser, syntax tree with byte spans, and the
//! `.file`/`.loc` source map.
//!
//! ```
//! let parsed = ptx::parse(".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n");
//! assert!(parsed.errors.is_empty());
//! assert_eq!(parsed.module.functions[0].name, "k");
//! ```

pub mod ast;
pub mod lexer;
mod line_index;
pub mod parser;
pub mod source_map;
pub mod types;

pub use ast::*;
pub use line_index::LineIndex;
pub use source_map::SourceMap;

/// A half-open byte range in the source text. `u32` keeps tokens small; inputs above 4 GiB are
/// rejected before lexing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A syntax error with the span it refers to. Messages are short and lowercase:
/// "expected `;`, found `}`".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Parse {
    pub module: Module,
    pub errors: Vec<Diagnostic>,
}

/// Largest input accepted: spans are `u32`.
pub const MAX_INPUT_BYTES: usize = u32::MAX as usize;

/// Parses PTX text. Never fails: errors come back with the module that could be read.
pub fn parse(text: &str) -> Parse {
    if text.len() > MAX_INPUT_BYTES {
        return Parse { module: Module::default(), errors: vec![Diagnostic { span: Span::default(), message: "input larger than 4 GiB".into() }] };
    }
    let (module, mut errors) = parser::Parser::new(text).parse_module();
    if text.trim().is_empty() {
        errors.push(Diagnostic { span: Span::default(), message: "empty PTX file".into() });
    } else if module.functions.is_empty() && errors.is_empty() {
        errors.push(Diagnostic { span: Span::new(text.len(), text.len()), message: "no `.entry` or `.func` in the module".into() });
    }
    Parse { module, errors }
}

/// Parses raw bytes: invalid UTF-8 is reported at its first offending byte, and the rest is
/// parsed with the bad bytes replaced, so a stray byte in a comment costs one error, not the file.
pub fn parse_bytes(bytes: &[u8]) -> (String, Parse) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_string(), parse(text)),
        Err(e) => {
            let at = e.valid_up_to();
            let text = String::from_utf8_lossy(bytes).into_owned();
            let mut parse = parse(&text);
            // The span is in the returned text, where the bad sequence became one U+FFFD.
            let span = Span::new(at, at + char::REPLACEMENT_CHARACTER.len_utf8());
            parse.errors.insert(0, Diagnostic { span, message: format!("invalid UTF-8 at byte {at}") });
            (text, parse)
        }
    }
}
