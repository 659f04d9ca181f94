//! Byte offsets to line/column positions, in UTF-8 bytes (for terminals) or UTF-16 code units
//! (for LSP clients).

#[derive(Clone, Debug)]
pub struct LineIndex {
    /// Byte offset where each line starts.
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i as u32 + 1));
        LineIndex { line_starts }
    }

    /// Zero-based line and byte column of `offset`.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        (line as u32, offset - self.line_starts[line])
    }

    /// Zero-based line and UTF-16 column of `offset` within `text`.
    pub fn line_col_utf16(&self, text: &str, offset: u32) -> (u32, u32) {
        let (line, _) = self.line_col(offset);
        let start = self.line_starts[line as usize] as usize;
        let end = (offset as usize).min(text.len());
        let col = text.get(start..end).map_or(0, |s| s.encode_utf16().count());
        (line, col as u32)
    }

    /// Byte offset of a zero-based line and UTF-16 column, clamped to the line.
    pub fn offset_utf16(&self, text: &str, line: u32, col: u32) -> usize {
        let Some(&start) = self.line_starts.get(line as usize) else { return text.len() };
        let start = start as usize;
        let end = self.line_starts.get(line as usize + 1).map_or(text.len(), |&e| e as usize);
        let mut units = 0u32;
        for (i, ch) in text[start..end].char_indices() {
            if units >= col || ch == '\n' {
                return start + i;
            }
            units += ch.len_utf16() as u32;
        }
        end
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte range of a zero-based line, without its newline.
    pub fn line_range(&self, text: &str, line: u32) -> std::ops::Range<usize> {
        let start = self.line_starts.get(line as usize).map_or(text.len(), |&s| s as usize);
        let end = self.line_starts.get(line as usize + 1).map_or(text.len(), |&e| e as usize - 1);
        start..end.max(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_count_surrogate_pairs() {
        let text = "a\n// é😀x\n";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(idx.line_col(x), (1, 9));
        assert_eq!(idx.line_col_utf16(text, x), (1, 6));
        assert_eq!(idx.offset_utf16(text, 1, 6), x as usize);
        assert_eq!(idx.offset_utf16(text, 1, 99), text.len() - 1);
        assert_eq!(idx.offset_utf16(text, 9, 0), text.len());
    }
}
