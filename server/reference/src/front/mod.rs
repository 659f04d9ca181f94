//! The front end: Python source to tensor IR, with a real Python parser (`ruff_python_parser`).

mod convert;
mod decimal;
mod module;

use crate::error::{RefError, Result};
use crate::ir::Program;

pub use decimal::parse_float_literal;

/// Parses a reference file and converts the reference function (and the helpers it calls) to IR.
///
/// `entry` names the reference: a top-level function, or `Class.method` for an `nn.Module`.
/// Without it, the reference is the function `reference` if present, else the `forward` of the
/// only `nn.Module` subclass.
pub fn parse(source: &str, entry: Option<&str>) -> Result<Program> {
    let parsed = ruff_python_parser::parse_module(source).map_err(|e| RefError::new(module::span_of(&e.location), format!("syntax error: {}", e.error)))?;
    let module = parsed.syntax();
    let scan = module::scan(&module.body);
    convert::convert(source, &scan, entry)
}
