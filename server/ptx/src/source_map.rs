//! The `.file`/`.loc` source map: from an instruction back to the line of the `.cu` file it was
//! compiled from.

use crate::ast::{Module, SourceLoc};

#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<(u32, String)>,
}

impl SourceMap {
    pub fn new(module: &Module) -> SourceMap {
        SourceMap { files: module.files.iter().map(|f| (f.index, f.name.clone())).collect() }
    }

    /// The file name a `.loc` refers to, if its `.file` was declared.
    pub fn file_name(&self, loc: SourceLoc) -> Option<&str> {
        self.files.iter().find(|(i, _)| *i == loc.file).map(|(_, n)| n.as_str())
    }

    /// Resolves a `.loc` to `(file name, 1-based line)`. `.loc` line 0 means "no line" (compiler
    /// generated code) and resolves to `None`.
    pub fn resolve(&self, loc: SourceLoc) -> Option<(&str, u32)> {
        if loc.line == 0 {
            return None;
        }
        Some((self.file_name(loc)?, loc.line))
    }

    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(_, n)| n.as_str())
    }
}
