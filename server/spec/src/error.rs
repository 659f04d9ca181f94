//! Errors with a place: every fact of an interface file remembers where it was written
//! ([`Origin`]), and every problem with it is a [`SpecError`] at that place.

use std::fmt;
use std::ops::Range;

/// Where a fact was written: the file, the 1-based line and column of its first character, its
/// byte range in the file, and its key path (`kernel.rmsnorm.params.x.len`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Origin {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub span: Range<usize>,
    pub key: String,
}

impl Origin {
    /// A fact given in code or on the command line: no file, no position.
    pub fn detached(key: impl Into<String>) -> Origin {
        Origin { key: key.into(), ..Origin::default() }
    }

    /// The place just after `text_before` on the same line (a name inside a size expression
    /// whose text starts here).
    pub fn shifted(&self, text_before: &str) -> Origin {
        self.advanced(text_before.len(), text_before.chars().count())
    }

    /// The place `bytes` bytes (`chars` characters) further on the same line.
    pub fn advanced(&self, bytes: usize, chars: usize) -> Origin {
        Origin {
            column: if self.line == 0 { 0 } else { self.column + chars as u32 },
            span: self.span.start + bytes..self.span.end.max(self.span.start + bytes),
            ..self.clone()
        }
    }

    /// The place of a part of a size expression written here (`span` in the expression's text,
    /// which is ASCII in all but exotic names).
    pub fn within(&self, span: &Range<usize>) -> Origin {
        let o = self.advanced(span.start, span.start);
        Origin { span: o.span.start..o.span.start + span.len(), ..o }
    }
}

/// A problem with an interface, at the place it was written. Messages are short and lowercase
/// ("expected an integer or a size expression, found a boolean").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct SpecError {
    pub file: String,
    /// 1-based; 0 when the fact has no place in a file (given in code or on the command line).
    pub line: u32,
    pub column: u32,
    /// Byte range in the file, when known.
    pub span: Option<Range<usize>>,
    /// The key path of the offending entry, e.g. `kernel.rmsnorm.params.x.len`; empty for a
    /// problem with the whole file (a syntax error).
    pub key: String,
    pub message: String,
}

impl SpecError {
    pub fn at(origin: &Origin, message: impl Into<String>) -> SpecError {
        SpecError {
            file: origin.file.clone(),
            line: origin.line,
            column: origin.column,
            span: (origin.line != 0).then(|| origin.span.clone()),
            key: origin.key.clone(),
            message: message.into(),
        }
    }

    /// A problem with a whole file (it cannot be read, or is not the expected kind of file).
    pub fn in_file(file: &str, message: impl Into<String>) -> SpecError {
        SpecError { file: file.to_string(), line: 0, column: 0, span: None, key: String::new(), message: message.into() }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut place = self.file.clone();
        if self.line != 0 {
            place = format!("{place}:{}:{}", self.line, self.column);
        }
        if !place.is_empty() {
            write!(f, "{place}: ")?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

/// Byte offsets to 1-based line and column (columns count characters, not bytes).
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        LineIndex { text, line_starts }
    }

    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let column = self.text.get(start..offset).map_or(offset - start, |s| s.chars().count());
        (line as u32 + 1, column as u32 + 1)
    }

    /// The byte offset of a 1-based line and column (for errors that only report those).
    pub fn offset(&self, line: usize, column: usize) -> usize {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else { return self.text.len() };
        let rest = &self.text[start..];
        start + rest.char_indices().nth(column.saturating_sub(1)).map_or(rest.len(), |(i, _)| i)
    }

    pub fn origin(&self, file: &str, span: Range<usize>, key: &str) -> Origin {
        let (line, column) = self.line_col(span.start);
        Origin { file: file.to_string(), line, column, span, key: key.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_are_one_based_and_count_characters() {
        let idx = LineIndex::new("ab\nçd\n\nx");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(3), (2, 1));
        assert_eq!(idx.line_col(5), (2, 2)); // after the two-byte ç
        assert_eq!(idx.line_col(8), (4, 1));
        assert_eq!(idx.offset(2, 2), 5);
        assert_eq!(idx.offset(9, 1), 9);
    }

    #[test]
    fn errors_print_place_key_and_message() {
        let o = Origin { file: "lark.toml".into(), line: 3, column: 7, span: 20..24, key: "kernel.k.block".into() };
        assert_eq!(SpecError::at(&o, "expected an array").to_string(), "lark.toml:3:7: kernel.k.block: expected an array");
        assert_eq!(SpecError::in_file("in.json", "cannot read").to_string(), "in.json: cannot read");
        assert_eq!(SpecError::at(&Origin::detached("kernel.k"), "no such kernel").to_string(), "kernel.k: no such kernel");
    }
}
