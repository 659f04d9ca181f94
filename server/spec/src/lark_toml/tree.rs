//! A thin view of toml_edit's document that treats tables and inline tables, arrays and arrays
//! of tables alike, and keeps the byte span of every key and value; plus the parse context that
//! turns spans into [`Origin`]s and collects errors.

use crate::error::{LineIndex, Origin, SpecError};
use crate::size_expr::SizeExpr;
use std::ops::Range;
use toml_edit::{Item, Table, TableLike, Value};

#[derive(Clone, Copy)]
pub(crate) enum Node<'a> {
    Item(&'a Item),
    Table(&'a Table),
    Value(&'a Value),
}

impl<'a> Node<'a> {
    pub fn of(item: &'a Item) -> Node<'a> {
        match item {
            Item::Value(v) => Node::Value(v),
            Item::Table(t) => Node::Table(t),
            other => Node::Item(other),
        }
    }

    pub fn span(&self) -> Option<Range<usize>> {
        match self {
            Node::Item(i) => i.span(),
            Node::Table(t) => t.span(),
            Node::Value(v) => v.span(),
        }
    }

    /// "found a boolean": what the value is, for messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Node::Value(Value::String(_)) => "a string",
            Node::Value(Value::Integer(_)) => "an integer",
            Node::Value(Value::Float(_)) => "a float",
            Node::Value(Value::Boolean(_)) => "a boolean",
            Node::Value(Value::Datetime(_)) => "a datetime",
            Node::Value(Value::Array(_)) => "an array",
            Node::Value(Value::InlineTable(_)) | Node::Table(_) => "a table",
            Node::Item(Item::ArrayOfTables(_)) => "an array of tables",
            Node::Item(_) => "nothing",
        }
    }

    pub fn table(&self) -> Option<&'a dyn TableLike> {
        match self {
            Node::Table(t) => Some(*t as &dyn TableLike),
            Node::Value(Value::InlineTable(t)) => Some(t as &dyn TableLike),
            _ => None,
        }
    }

    pub fn array(&self) -> Option<Vec<Node<'a>>> {
        match self {
            Node::Value(Value::Array(a)) => Some(a.iter().map(Node::Value).collect()),
            Node::Item(Item::ArrayOfTables(a)) => Some(a.iter().map(Node::Table).collect()),
            _ => None,
        }
    }

    pub fn str(&self) -> Option<&'a str> {
        match self {
            Node::Value(Value::String(s)) => Some(s.value()),
            _ => None,
        }
    }

    pub fn integer(&self) -> Option<i64> {
        match self {
            Node::Value(Value::Integer(i)) => Some(*i.value()),
            _ => None,
        }
    }

    pub fn float(&self) -> Option<f64> {
        match self {
            Node::Value(Value::Float(f)) => Some(*f.value()),
            _ => None,
        }
    }

    pub fn boolean(&self) -> Option<bool> {
        match self {
            Node::Value(Value::Boolean(b)) => Some(*b.value()),
            _ => None,
        }
    }
}

/// One entry of a table: its key path, the span of its key, and its value.
#[derive(Clone)]
pub(crate) struct Field<'a> {
    /// The full key path, as shown to the user (`kernel.rmsnorm.params.x.len`).
    pub path: String,
    /// The key relative to the kernel (`params.x.len`), used for `KernelSpec::origins`.
    pub rel: String,
    pub key_span: Option<Range<usize>>,
    pub node: Node<'a>,
}

impl<'a> Field<'a> {
    /// The entries of this field's table, in the order written.
    pub fn entries(&self) -> Vec<(String, Field<'a>)> {
        let Some(t) = self.node.table() else { return Vec::new() };
        t.iter()
            .filter(|(_, item)| !item.is_none())
            .map(|(k, item)| {
                let key_span = t.key(k).and_then(|key| key.span());
                let seg = key_segment(k);
                let child = Field { path: join(&self.path, &seg), rel: join(&self.rel, &seg), key_span, node: Node::of(item) };
                (k.to_string(), child)
            })
            .collect()
    }

    pub fn elements(&self) -> Option<Vec<Field<'a>>> {
        let items = self.node.array()?;
        Some(
            items
                .into_iter()
                .enumerate()
                .map(|(i, node)| Field { path: format!("{}[{i}]", self.path), rel: format!("{}[{i}]", self.rel), key_span: None, node })
                .collect(),
        )
    }
}

pub(crate) fn join(parent: &str, seg: &str) -> String {
    if parent.is_empty() {
        seg.to_string()
    } else {
        format!("{parent}.{seg}")
    }
}

/// A key as written in a key path: bare when it can be, quoted otherwise (`kernel."a.b"`).
pub(crate) fn key_segment(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        k.to_string()
    } else {
        crate::write_toml::toml_string(k)
    }
}

/// What a parse needs: the file's name and text, its directory (for `values_file` and the
/// reference), and the errors found so far.
pub(crate) struct Ctx<'a> {
    pub file: &'a str,
    pub text: &'a str,
    pub dir: std::path::PathBuf,
    pub lines: LineIndex<'a>,
    pub errors: Vec<SpecError>,
}

impl<'a> Ctx<'a> {
    pub fn new(file: &'a str, text: &'a str) -> Ctx<'a> {
        let dir = std::path::Path::new(file).parent().map(std::path::Path::to_path_buf).unwrap_or_default();
        Ctx { file, text, dir, lines: LineIndex::new(text), errors: Vec::new() }
    }

    fn origin_at(&self, span: Option<Range<usize>>, key: &str) -> Origin {
        match span {
            Some(span) => self.lines.origin(self.file, span, key),
            None => Origin { file: self.file.to_string(), ..Origin::detached(key) },
        }
    }

    /// The place of a field's value (its key when the value has no span of its own).
    pub fn value_origin(&self, f: &Field) -> Origin {
        self.origin_at(f.node.span().or(f.key_span.clone()), &f.path)
    }

    /// The place of a field's key (its value when the key has no span).
    pub fn key_origin(&self, f: &Field) -> Origin {
        self.origin_at(f.key_span.clone().or(f.node.span()), &f.path)
    }

    /// The place of a string's first character inside its quotes, so that positions within the
    /// string (a name in a size expression) can be added to it. Strings with escapes keep the
    /// place of their opening quote.
    pub fn content_origin(&self, f: &Field) -> Origin {
        let origin = self.value_origin(f);
        let (Some(span), Some(value)) = (f.node.span(), f.node.str()) else { return origin };
        let raw = &self.text[span.clone()];
        let simple = raw.len() >= 2 && !raw.starts_with("\"\"\"") && !raw.starts_with("'''") && raw.get(1..raw.len() - 1) == Some(value);
        if simple {
            self.lines.origin(self.file, span.start + 1..span.end - 1, &f.path)
        } else {
            origin
        }
    }

    pub fn error(&mut self, origin: &Origin, message: impl Into<String>) {
        self.errors.push(SpecError::at(origin, message));
    }

    pub fn value_error(&mut self, f: &Field, message: impl Into<String>) {
        let o = self.value_origin(f);
        self.error(&o, message);
    }

    pub fn key_error(&mut self, f: &Field, message: impl Into<String>) {
        let o = self.key_origin(f);
        self.error(&o, message);
    }

    /// Reports every key of `f`'s table that is not in `allowed`.
    pub fn unknown_keys(&mut self, f: &Field, allowed: &[&str], expected: &str) -> bool {
        let mut ok = true;
        for (k, child) in f.entries() {
            if !allowed.contains(&k.as_str()) {
                self.key_error(&child, format!("unknown key `{k}` (expected {expected})"));
                ok = false;
            }
        }
        ok
    }

    /// An integer or a size expression (a string): `10`, `"10"`, `"rows * cols"`. Returns the
    /// expression and the place its text starts (names inside are placed relative to it).
    pub fn size_expr(&mut self, f: &Field, expected: &str) -> Option<(SizeExpr, Origin)> {
        if let Some(i) = f.node.integer() {
            return Some((SizeExpr::int(i as i128), self.value_origin(f)));
        }
        let Some(s) = f.node.str() else {
            self.value_error(f, format!("expected {expected}, found {}", f.node.describe()));
            return None;
        };
        let origin = self.content_origin(f);
        match SizeExpr::parse(s) {
            Ok(e) => Some((e, origin)),
            Err(e) => {
                let at = if origin.span.len() == s.len() { origin.shifted(&s[..e.span.start.min(s.len())]) } else { origin };
                self.error(&at, e.message);
                None
            }
        }
    }

    /// A string value.
    pub fn string(&mut self, f: &Field<'a>) -> Option<&'a str> {
        let s = f.node.str();
        if s.is_none() {
            self.value_error(f, format!("expected a string, found {}", f.node.describe()));
        }
        s
    }

    /// An array value (inline or an array of tables).
    pub fn array(&mut self, f: &Field<'a>) -> Option<Vec<Field<'a>>> {
        let a = f.elements();
        if a.is_none() {
            self.value_error(f, format!("expected an array, found {}", f.node.describe()));
        }
        a
    }

    /// A table value (inline or not).
    pub fn table(&mut self, f: &Field) -> bool {
        let ok = f.node.table().is_some();
        if !ok {
            self.value_error(f, format!("expected a table, found {}", f.node.describe()));
        }
        ok
    }
}
