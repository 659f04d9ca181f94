//! Just enough of CUDA's surface syntax for the editor: where a kernel's signature and body are,
//! and which braces enclose a line. Comments and string literals are blanked out first.

use std::ops::Range;

/// `text` with comments, string and character literals replaced by spaces (newlines kept), so
/// byte offsets are unchanged and braces inside them do not count.
pub(crate) fn mask(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, r: Range<usize>| {
        for x in &mut out[r] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
                blank(&mut out, i..end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
                blank(&mut out, i..end);
                i = end;
            }
            q @ (b'"' | b'\'') => {
                let mut j = i + 1;
                while j < b.len() && b[j] != q && b[j] != b'\n' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1..j.min(b.len()));
                i = (j + 1).min(b.len());
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces, inside comments and literals; multi-byte
    // characters there are blanked whole, so the result is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The byte range of the line containing `offset`, without its newline.
pub(crate) fn line_around(text: &str, offset: usize) -> Range<usize> {
    let start = text[..offset].rfind('\n').map_or(0, |p| p + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |p| offset + p);
    start..end
}

/// The offset of the brace matching the `{` at `open` (in masked text).
pub(crate) fn matching_close(masked: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in masked.bytes().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A kernel definition: the trimmed line of its `__global__` (where a lens goes) and the range
/// from that line to the closing brace of its body.
pub(crate) fn kernel_extent(text: &str, masked: &str, name: &str) -> Option<(Range<usize>, Range<usize>)> {
    let bytes = masked.as_bytes();
    let mut from = 0;
    while let Some(p) = masked[from..].find(name) {
        let at = from + p;
        from = at + name.len();
        if (at > 0 && is_ident(bytes[at - 1])) || bytes.get(from).is_some_and(|&c| is_ident(c)) {
            continue;
        }
        let after = masked[from..].trim_start();
        if !after.starts_with('(') {
            continue;
        }
        let stmt_start = masked[..at].rfind([';', '}', '{']).map_or(0, |x| x + 1);
        let Some(g) = masked[stmt_start..at].find("__global__") else { continue };
        let open_paren = masked.len() - after.len();
        let mut depth = 0;
        let mut close_paren = None;
        for (i, c) in masked.bytes().enumerate().skip(open_paren) {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        close_paren = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close_paren = close_paren?;
        let body = masked[close_paren..].find(['{', ';'])? + close_paren;
        if bytes[body] == b';' {
            continue;
        }
        let end = matching_close(masked, body).map_or(text.len(), |e| e + 1);
        let header_line = line_around(text, stmt_start + g);
        let h = &text[header_line.clone()];
        let header = header_line.start + (h.len() - h.trim_start().len())..header_line.start + h.trim_end().len();
        return Some((header, header_line.start..end));
    }
    None
}

/// The `{ ... }` blocks around `offset`, innermost first, as (open, close) brace offsets.
pub(crate) fn enclosing_blocks(masked: &str, offset: usize) -> Vec<(usize, usize)> {
    let bytes = masked.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut i = offset.min(bytes.len());
    while i > 0 {
        i -= 1;
        match bytes[i] {
            b'}' => depth += 1,
            b'{' if depth > 0 => depth -= 1,
            b'{' => {
                if let Some(close) = matching_close(masked, i) {
                    out.push((i, close));
                }
            }
            _ => {}
        }
    }
    out
}

/// The leading whitespace of the line containing `offset`.
pub(crate) fn indentation(text: &str, offset: usize) -> &str {
    let line = line_around(text, offset);
    let s = &text[line.clone()];
    &s[..s.len() - s.trim_start().len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "// reduce(x) { not this }\nextern \"C\" __global__ void reduce(const float* in,\n  float* out) {\n  const char* s = \"}\";\n  if (x) {\n    out[0] = 1;\n  }\n}\n__device__ void reduce2() {}\n";

    #[test]
    fn finds_kernel_bodies_past_comments_and_strings() {
        let m = mask(SRC);
        assert_eq!(m.len(), SRC.len());
        let (header, extent) = kernel_extent(SRC, &m, "reduce").unwrap();
        assert_eq!(&SRC[header], "extern \"C\" __global__ void reduce(const float* in,");
        assert!(SRC[extent].ends_with("  }\n}"));
        assert!(kernel_extent(SRC, &m, "reduce2").is_none());
    }

    #[test]
    fn lists_enclosing_blocks_innermost_first() {
        let m = mask(SRC);
        let at = SRC.find("out[0]").unwrap();
        let blocks = enclosing_blocks(&m, at);
        assert_eq!(blocks.len(), 2);
        assert_eq!(&SRC[blocks[0].0..blocks[0].1 + 1], "{\n    out[0] = 1;\n  }");
        assert_eq!(indentation(SRC, at), "    ");
    }
}
