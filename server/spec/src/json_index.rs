//! Positions in JSON text. `serde_json::Value` keeps none, so after serde_json has accepted a
//! document this scanner records, for every member and element, the byte span of its key and of
//! its value, by path (`launch.block_dim[2]`, `declarations[0].parameter`).

use crate::error::{LineIndex, Origin, SpecError};
use std::collections::HashMap;
use std::ops::Range;

#[derive(Clone, Debug, Default)]
pub(crate) struct Place {
    pub key: Option<Range<usize>>,
    pub value: Range<usize>,
}

/// A parsed JSON document with the places of its parts.
pub(crate) struct JsonDoc<'a> {
    pub file: &'a str,
    pub value: serde_json::Value,
    lines: LineIndex<'a>,
    places: HashMap<String, Place>,
    /// Keys that occur twice in one object (serde_json keeps the last silently).
    pub duplicates: Vec<(String, Range<usize>)>,
}

impl<'a> JsonDoc<'a> {
    /// Parses `text`; a syntax error carries serde_json's line and column.
    pub fn parse(file: &'a str, text: &'a str) -> Result<JsonDoc<'a>, SpecError> {
        let lines = LineIndex::new(text);
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            let (line, column) = (e.line() as u32, e.column() as u32);
            // serde_json counts the column of the character it stopped at; 0 means "before the
            // first character" at the end of the input.
            let offset = lines.offset(e.line(), e.column().max(1));
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message).to_string();
            SpecError { file: file.to_string(), line, column: column.max(1), span: Some(offset..offset), key: String::new(), message }
        })?;
        let mut scanner = Scanner { b: text.as_bytes(), pos: 0, places: HashMap::new(), duplicates: Vec::new() };
        scanner.value(String::new(), None);
        Ok(JsonDoc { file, value, lines, places: scanner.places, duplicates: scanner.duplicates })
    }

    /// The place of a value, for messages about the value.
    pub fn origin(&self, path: &str) -> Origin {
        let span = self.places.get(path).map(|p| p.value.clone()).unwrap_or(0..0);
        self.lines.origin(self.file, span, path)
    }

    /// The place of a member's key (for "unknown key" messages).
    pub fn key_origin(&self, path: &str) -> Origin {
        match self.places.get(path).and_then(|p| p.key.clone()) {
            Some(span) => self.lines.origin(self.file, span, path),
            None => self.origin(path),
        }
    }

    /// An error for every key that occurs twice in one object, at the second occurrence.
    pub fn duplicate_errors(&self) -> Vec<SpecError> {
        self.duplicates.iter().map(|(path, span)| SpecError::at(&self.lines.origin(self.file, span.clone(), path), "duplicate key")).collect()
    }

    pub fn error(&self, path: &str, message: impl Into<String>) -> SpecError {
        SpecError::at(&self.origin(path), message)
    }

    pub fn key_error(&self, path: &str, message: impl Into<String>) -> SpecError {
        SpecError::at(&self.key_origin(path), message)
    }
}

pub(crate) fn member_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

struct Scanner<'b> {
    b: &'b [u8],
    pos: usize,
    places: HashMap<String, Place>,
    duplicates: Vec<(String, Range<usize>)>,
}

impl Scanner<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.b.len() && matches!(self.b[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    /// Scans one value (the text is known to be valid JSON) and records its place.
    fn value(&mut self, path: String, key: Option<Range<usize>>) {
        self.skip_ws();
        let start = self.pos;
        match self.b.get(self.pos) {
            Some(b'{') => {
                self.pos += 1;
                let mut seen = std::collections::HashSet::new();
                loop {
                    self.skip_ws();
                    match self.b.get(self.pos) {
                        Some(b'}') | None => break,
                        Some(b',') => self.pos += 1,
                        Some(_) => {
                            let kstart = self.pos;
                            self.string();
                            let kspan = kstart..self.pos;
                            let name: String = serde_json::from_slice(&self.b[kspan.clone()]).unwrap_or_default();
                            self.skip_ws();
                            self.pos += 1; // ':'
                            let child = member_path(&path, &name);
                            if !seen.insert(name) {
                                self.duplicates.push((child.clone(), kspan.clone()));
                            }
                            self.value(child, Some(kspan));
                        }
                    }
                }
                self.pos += 1;
            }
            Some(b'[') => {
                self.pos += 1;
                let mut i = 0;
                loop {
                    self.skip_ws();
                    match self.b.get(self.pos) {
                        Some(b']') | None => break,
                        Some(b',') => self.pos += 1,
                        Some(_) => {
                            self.value(format!("{path}[{i}]"), None);
                            i += 1;
                        }
                    }
                }
                self.pos += 1;
            }
            Some(b'"') => self.string(),
            Some(_) => {
                while self.pos < self.b.len() && !matches!(self.b[self.pos], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                    self.pos += 1;
                }
            }
            None => {}
        }
        let end = self.pos.min(self.b.len());
        // The first occurrence of a duplicated key keeps its place (serde_json keeps the last
        // value, and the duplicate itself is reported).
        self.places.entry(path).or_insert(Place { key, value: start..end });
    }

    fn string(&mut self) {
        self.pos += 1;
        while self.pos < self.b.len() {
            match self.b[self.pos] {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return;
                }
                _ => self.pos += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keys_and_values_by_path() {
        let text = "{\"a\": [1, {\"b\\\"c\": true}],\n \"d\": {\"e\": \"x\"}, \"d\": 2}";
        let doc = JsonDoc::parse("t.json", text).unwrap();
        let o = doc.origin("a[1].b\"c");
        assert_eq!((o.line, o.column, &text[o.span.clone()]), (1, 20, "true"));
        let k = doc.key_origin("d.e");
        assert_eq!((k.line, k.column, &text[k.span.clone()]), (2, 8, "\"e\""));
        assert_eq!(&text[doc.origin("a[0]").span], "1");
        assert_eq!(doc.duplicates.len(), 1);
        assert_eq!(doc.duplicates[0].0, "d");
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let e = JsonDoc::parse("t.json", "{\n  \"a\": 1,\n  \"b\" 2\n}").err().unwrap();
        assert_eq!(e.to_string(), "t.json:3:7: expected `:`");
    }
}
