//! From LSP to the analysis: positions (UTF-16) to byte offsets, incremental edits to ropes.

use ide::FileAnalysis;
use ropey::Rope;
use tower_lsp_server::lsp_types::{Position, TextDocumentContentChangeEvent, Uri};
use tower_lsp_server::UriExt;

/// A byte offset in the analysed text.
pub fn offset(fa: &FileAnalysis, pos: Position) -> usize {
    fa.index.offset_utf16(&fa.text, pos.line, pos.character)
}

pub fn range(fa: &FileAnalysis, r: tower_lsp_server::lsp_types::Range) -> std::ops::Range<usize> {
    let (a, b) = (offset(fa, r.start), offset(fa, r.end));
    a.min(b)..a.max(b)
}

/// The char index of an LSP position in a rope: columns count UTF-16 code units and are clamped
/// to the line (a position past the end of a line means its end, before the line break).
pub fn char_index(rope: &Rope, pos: Position) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let start = rope.line_to_char(line);
    let slice = rope.line(line);
    let mut content = slice.len_chars();
    while content > 0 && matches!(slice.char(content - 1), '\n' | '\r') {
        content -= 1;
    }
    let start16 = rope.char_to_utf16_cu(start);
    let end16 = rope.char_to_utf16_cu(start + content);
    rope.utf16_cu_to_char((start16 + pos.character as usize).min(end16))
}

/// Applies one `didChange` content change.
pub fn apply_change(rope: &mut Rope, change: &TextDocumentContentChangeEvent) {
    match change.range {
        None => *rope = Rope::from_str(&change.text),
        Some(r) => {
            let a = char_index(rope, r.start);
            let b = char_index(rope, r.end).max(a);
            rope.remove(a..b);
            rope.insert(a, &change.text);
        }
    }
}

pub fn file_path(uri: &Uri) -> Option<std::path::PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::lsp_types::Range;

    fn change(l1: u32, c1: u32, l2: u32, c2: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent { range: Some(Range::new(Position::new(l1, c1), Position::new(l2, c2))), range_length: None, text: text.into() }
    }

    #[test]
    fn edits_count_utf16_code_units() {
        // `é` is one UTF-16 unit, `😀` two.
        let mut rope = Rope::from_str("// é😀 x\r\nbar.sync 0;\n");
        apply_change(&mut rope, &change(0, 7, 0, 8, "y"));
        assert_eq!(rope.to_string(), "// é😀 y\r\nbar.sync 0;\n");
        apply_change(&mut rope, &change(0, 99, 1, 0, ""));
        assert_eq!(rope.to_string(), "// é😀 ybar.sync 0;\n", "a column past the end of a line stops before the line break");
        apply_change(&mut rope, &change(0, 8, 0, 11, "BAR"));
        assert_eq!(rope.to_string(), "// é😀 yBAR.sync 0;\n");
        apply_change(&mut rope, &change(5, 0, 5, 0, "end"));
        assert_eq!(rope.to_string(), "// é😀 yBAR.sync 0;\nend");
    }
}
