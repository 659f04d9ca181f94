//! The one error type of the crate: a message about a byte range of the reference `.py` file.

use std::ops::Range;

/// Something in the reference that LARK cannot parse, does not support, or finds wrong (a shape
/// mismatch, an index out of range). `span` is a byte range of the `.py` source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RefError {
    pub span: Range<usize>,
    pub message: String,
}

impl RefError {
    pub fn new(span: Range<usize>, message: impl Into<String>) -> Self {
        RefError { span, message: message.into() }
    }

    /// "unsupported: `what` is not in the supported subset".
    pub fn unsupported(span: Range<usize>, what: &str) -> Self {
        RefError::new(span, format!("unsupported: `{what}` is not in the supported subset"))
    }

    /// "unsupported: DESCRIPTION", for constructs named in words ("while loops").
    pub fn unsupported_feature(span: Range<usize>, description: &str) -> Self {
        RefError::new(span, format!("unsupported: {description}"))
    }

    /// The 1-based line and column of the start of the span in `source` (columns count characters).
    pub fn line_col(&self, source: &str) -> (usize, usize) {
        let start = self.span.start.min(source.len());
        let before = source.get(..start).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |tail| tail.chars().count()) + 1;
        (line, column)
    }
}

pub type Result<T, E = RefError> = std::result::Result<T, E>;
