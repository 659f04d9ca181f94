//! An index of the declarations of the Lean library (`lean/Lark/**.lean`), read from the source
//! text with [`crate::lexer`]: namespaces and sections, `def`/`theorem`/`lemma`/`abbrev`/
//! `instance`/`class`/`structure`/`inductive`/`opaque`/`axiom` names, the constructors of
//! inductive types and the fields of structures. Golden tests use it to check that every name an
//! emitted module refers to exists; the audit uses it to recognise library names.
//!
//! It is not a Lean elaborator: it understands the layout the library is written in (commands at
//! the start of a line, constructors after `|`, one field per line), and reports what it cannot
//! balance — a `namespace` without its `end`, an `end` naming the wrong scope — as errors.

use crate::lexer::{self, Token, TokenKind};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// What a name denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeclKind {
    Namespace,
    Def,
    Theorem,
    Abbrev,
    Instance,
    Class,
    Structure,
    Inductive,
    Opaque,
    Axiom,
    Constructor,
    Field,
}

/// A declared name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    /// The full name, namespaces included (`Lark.Op.mov`).
    pub name: String,
    pub kind: DeclKind,
    /// The file, relative to the library root.
    pub file: PathBuf,
    pub span: Range<usize>,
}

/// One source file of the library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// Relative to the library root (`Lark/Exec.lean`).
    pub path: PathBuf,
    /// Its module name (`Lark.Exec`).
    pub module: String,
    pub imports: Vec<String>,
}

/// Why the library could not be indexed.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax { path: PathBuf, line: usize, column: usize, span: Range<usize>, message: String },
}

/// The declarations of a set of Lean files.
#[derive(Clone, Debug, Default)]
pub struct LibraryIndex {
    decls: BTreeMap<String, Decl>,
    fields: BTreeMap<String, Vec<String>>,
    constructors: BTreeMap<String, Vec<String>>,
    files: Vec<SourceFile>,
}

/// Keywords that start a declaration, and the kind they declare.
const DECL_KEYWORDS: &[(&str, DeclKind)] = &[
    ("def", DeclKind::Def),
    ("theorem", DeclKind::Theorem),
    ("lemma", DeclKind::Theorem),
    ("abbrev", DeclKind::Abbrev),
    ("instance", DeclKind::Instance),
    ("class", DeclKind::Class),
    ("structure", DeclKind::Structure),
    ("inductive", DeclKind::Inductive),
    ("opaque", DeclKind::Opaque),
    ("axiom", DeclKind::Axiom),
];

/// Words that may precede a declaration keyword on its line.
const MODIFIERS: &[&str] = &["private", "protected", "noncomputable", "partial", "unsafe", "nonrec"];

impl LibraryIndex {
    /// Indexes `Lark.lean` and every `.lean` file under `Lark/` in the Lake package at `root`
    /// (the repository's `lean/` directory).
    pub fn load(root: &Path) -> Result<LibraryIndex, LibraryError> {
        let mut paths = vec![PathBuf::from("Lark.lean")];
        collect_lean_files(root, Path::new("Lark"), &mut paths)?;
        let mut index = LibraryIndex::default();
        for rel in paths {
            let full = root.join(&rel);
            let text = std::fs::read_to_string(&full).map_err(|source| LibraryError::Io { path: full.clone(), source })?;
            index.add_file(&rel, &text)?;
        }
        Ok(index)
    }

    /// Indexes one file's text; `path` is relative to the library root.
    pub fn add_file(&mut self, path: &Path, text: &str) -> Result<(), LibraryError> {
        let lexed = lexer::lex(text);
        if let Some(e) = lexed.errors.first() {
            return Err(syntax_error(path, text, e.span.clone(), e.message.clone()));
        }
        let module = module_name(path);
        let mut scanner = Scanner { index: self, path, text, toks: &lexed.tokens, scopes: Vec::new(), imports: Vec::new() };
        scanner.scan()?;
        let imports = std::mem::take(&mut scanner.imports);
        self.files.push(SourceFile { path: path.to_path_buf(), module, imports });
        Ok(())
    }

    /// Is `name` declared (as a full name)?
    pub fn contains(&self, name: &str) -> bool {
        self.decls.contains_key(name)
    }

    /// The declaration of a full name.
    pub fn get(&self, name: &str) -> Option<&Decl> {
        self.decls.get(name)
    }

    /// Resolves a name as Lean would with the namespaces `open` (tried in order, then the root).
    pub fn resolve(&self, name: &str, open: &[&str]) -> Option<&Decl> {
        open.iter().map(|ns| format!("{ns}.{name}")).find_map(|full| self.decls.get(&full)).or_else(|| self.decls.get(name))
    }

    /// Every declaration, by name.
    pub fn decls(&self) -> impl Iterator<Item = &Decl> {
        self.decls.values()
    }

    /// The fields of a structure (full name), in declaration order.
    pub fn fields(&self, structure: &str) -> Option<&[String]> {
        self.fields.get(structure).map(|v| v.as_slice())
    }

    /// The constructors of an inductive type (full name), in declaration order.
    pub fn constructors(&self, inductive: &str) -> Option<&[String]> {
        self.constructors.get(inductive).map(|v| v.as_slice())
    }

    /// Is `field` a field of some indexed structure?
    pub fn is_field_name(&self, field: &str) -> bool {
        self.fields.values().any(|fs| fs.iter().any(|f| f == field))
    }

    /// The indexed files, in the order they were added.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    fn declare(&mut self, name: String, kind: DeclKind, file: &Path, span: Range<usize>) {
        // A namespace can be opened many times; a real declaration wins over a namespace entry.
        if kind == DeclKind::Namespace && self.decls.contains_key(&name) {
            return;
        }
        self.decls.insert(name.clone(), Decl { name, kind, file: file.to_path_buf(), span });
    }
}

fn collect_lean_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<(), LibraryError> {
    let dir = root.join(rel);
    let entries = std::fs::read_dir(&dir).map_err(|source| LibraryError::Io { path: dir.clone(), source })?;
    let mut children: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| LibraryError::Io { path: dir.clone(), source })?;
        children.push(rel.join(entry.file_name()));
    }
    // Sorted, so that the index (and its errors) do not depend on directory order.
    children.sort();
    for child in children {
        if root.join(&child).is_dir() {
            collect_lean_files(root, &child, out)?;
        } else if child.extension().is_some_and(|e| e == "lean") {
            out.push(child);
        }
    }
    Ok(())
}

/// `Lark/Ops/Int.lean` → `Lark.Ops.Int`.
pub fn module_name(path: &Path) -> String {
    let stem = path.with_extension("");
    stem.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join(".")
}

fn syntax_error(path: &Path, text: &str, span: Range<usize>, message: String) -> LibraryError {
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    LibraryError::Syntax { path: path.to_path_buf(), line, column, span, message }
}

#[derive(Clone, Debug)]
enum Scope {
    Namespace(String),
    Section(Option<String>),
    Mutual,
}

struct Scanner<'a> {
    index: &'a mut LibraryIndex,
    path: &'a Path,
    text: &'a str,
    toks: &'a [Token],
    scopes: Vec<Scope>,
    imports: Vec<String>,
}

impl Scanner<'_> {
    fn namespace(&self) -> String {
        self.scopes
            .iter()
            .filter_map(|s| match s {
                Scope::Namespace(n) => Some(n.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(".")
    }

    fn qualify(&self, name: &str) -> String {
        if let Some(rest) = name.strip_prefix("_root_.") {
            return rest.to_string();
        }
        let ns = self.namespace();
        if ns.is_empty() {
            name.to_string()
        } else {
            format!("{ns}.{name}")
        }
    }

    fn err(&self, span: Range<usize>, message: impl Into<String>) -> LibraryError {
        syntax_error(self.path, self.text, span, message.into())
    }

    fn is_word(&self, i: usize, word: &str) -> bool {
        self.toks.get(i).is_some_and(|t| t.kind == TokenKind::Ident && t.components.len() == 1 && t.components[0] == word)
    }

    /// The next token on the same line as token `i`, if it is an identifier.
    fn ident_on_same_line(&self, i: usize) -> Option<&Token> {
        let next = self.toks.get(i + 1)?;
        (next.kind == TokenKind::Ident && !next.line_start).then_some(next)
    }

    fn scan(&mut self) -> Result<(), LibraryError> {
        let mut i = 0;
        while i < self.toks.len() {
            let t = &self.toks[i];
            if t.kind != TokenKind::Ident || t.in_string {
                i += 1;
                continue;
            }
            let word = t.name();
            match word.as_str() {
                "import" if t.line_start => {
                    if let Some(m) = self.ident_on_same_line(i) {
                        self.imports.push(m.name());
                        i += 1;
                    }
                }
                "namespace" if t.line_start => {
                    let Some(n) = self.ident_on_same_line(i) else { return Err(self.err(t.span.clone(), "expected a namespace name after `namespace`")) };
                    let (name, span) = (n.name(), n.span.clone());
                    self.scopes.push(Scope::Namespace(name));
                    let full = self.namespace();
                    self.index.declare(full, DeclKind::Namespace, self.path, span);
                    i += 1;
                }
                "section" if t.line_start => {
                    let name = self.ident_on_same_line(i).map(|n| n.name());
                    if name.is_some() {
                        i += 1;
                    }
                    self.scopes.push(Scope::Section(name));
                }
                "mutual" if t.line_start => self.scopes.push(Scope::Mutual),
                "end" if t.line_start => {
                    let name = self.ident_on_same_line(i).map(|n| n.name());
                    let Some(scope) = self.scopes.pop() else {
                        return Err(self.err(t.span.clone(), "`end` without an open namespace or section"));
                    };
                    let ok = match (&scope, &name) {
                        (Scope::Namespace(n), Some(m)) => n == m,
                        (Scope::Section(n), m) => n == m,
                        (Scope::Mutual, None) => true,
                        _ => false,
                    };
                    if !ok {
                        let expected = match &scope {
                            Scope::Namespace(n) => format!("`end {n}`"),
                            Scope::Section(Some(n)) => format!("`end {n}`"),
                            Scope::Section(None) | Scope::Mutual => "`end`".to_string(),
                        };
                        let found = match &name {
                            Some(m) => format!("`end {m}`"),
                            None => "`end`".to_string(),
                        };
                        return Err(self.err(t.span.clone(), format!("expected {expected}, found {found}")));
                    }
                    if name.is_some() {
                        i += 1;
                    }
                }
                _ => {
                    if let Some(kind) = self.decl_keyword_at(i) {
                        i = self.declaration(i, kind)?;
                        continue;
                    }
                }
            }
            i += 1;
        }
        if let Some(scope) = self.scopes.last() {
            let what = match scope {
                Scope::Namespace(n) => format!("expected `end {n}`, found the end of the file"),
                Scope::Section(Some(n)) => format!("expected `end {n}`, found the end of the file"),
                Scope::Section(None) | Scope::Mutual => "expected `end`, found the end of the file".to_string(),
            };
            let end = self.text.len();
            return Err(self.err(end..end, what));
        }
        Ok(())
    }

    /// Is token `i` a declaration keyword starting a command (first on its line, or after
    /// modifiers and attributes)?
    fn decl_keyword_at(&self, i: usize) -> Option<DeclKind> {
        let t = &self.toks[i];
        let word = t.name();
        let kind = DECL_KEYWORDS.iter().find(|(w, _)| *w == word).map(|(_, k)| *k)?;
        if t.line_start {
            return Some(kind);
        }
        let prev = &self.toks[i.checked_sub(1)?];
        let after_modifier = prev.kind == TokenKind::Ident && MODIFIERS.contains(&prev.name().as_str());
        let after_attribute = prev.kind == TokenKind::Symbol && prev.text(self.text) == "]";
        let class_inductive = word == "inductive" && prev.kind == TokenKind::Ident && prev.name() == "class";
        (after_modifier || after_attribute || class_inductive).then_some(kind)
    }

    /// A declaration at keyword `i`; returns the index of the first token after its body.
    fn declaration(&mut self, i: usize, kind: DeclKind) -> Result<usize, LibraryError> {
        // `class inductive`: the `class` keyword was already seen; `inductive` declares.
        if kind == DeclKind::Class && self.is_word(i + 1, "inductive") {
            return self.declaration(i + 1, DeclKind::Inductive);
        }
        let body_end = self.command_end(i + 1);
        let name_tok = self.toks.get(i + 1).filter(|n| n.kind == TokenKind::Ident);
        let Some(name_tok) = name_tok else {
            // An anonymous instance (`instance : Inhabited Value := …`).
            return Ok(body_end);
        };
        let full = self.qualify(&name_tok.name());
        self.index.declare(full.clone(), kind, self.path, name_tok.span.clone());
        match kind {
            DeclKind::Inductive => self.constructors(&full, i + 2, body_end),
            DeclKind::Structure | DeclKind::Class => self.fields(&full, i + 2, body_end),
            _ => {}
        }
        Ok(body_end)
    }

    /// The first token after the command starting before `from`: the next token at column 0
    /// that is not a `|` (constructors may be written at column 0), or the end.
    fn command_end(&self, from: usize) -> usize {
        (from..self.toks.len())
            .find(|&j| {
                let t = &self.toks[j];
                t.line_start && t.column == 0 && !(t.kind == TokenKind::Symbol && t.text(self.text) == "|")
            })
            .unwrap_or(self.toks.len())
    }

    fn constructors(&mut self, inductive: &str, from: usize, to: usize) {
        let mut ctors = Vec::new();
        for j in from..to {
            let t = &self.toks[j];
            if t.kind == TokenKind::Ident && t.name() == "deriving" && t.line_start {
                break;
            }
            let is_bar = t.kind == TokenKind::Symbol && t.text(self.text) == "|";
            if let (true, Some(next)) = (is_bar, self.toks.get(j + 1)) {
                if next.kind == TokenKind::Ident && j + 1 < to {
                    let name = next.name();
                    self.index.declare(format!("{inductive}.{name}"), DeclKind::Constructor, self.path, next.span.clone());
                    ctors.push(name);
                }
            }
        }
        self.index.constructors.insert(inductive.to_string(), ctors);
    }

    fn fields(&mut self, structure: &str, from: usize, to: usize) {
        let Some(where_at) = (from..to).find(|&j| self.is_word(j, "where")) else {
            self.index.fields.insert(structure.to_string(), Vec::new());
            return;
        };
        let mut fields = Vec::new();
        let mut j = where_at + 1;
        while j < to {
            let t = &self.toks[j];
            if t.kind == TokenKind::Ident && t.name() == "deriving" && t.line_start {
                break;
            }
            if t.line_start && t.kind == TokenKind::Ident {
                // `name : T`, `a b : T`, `name := v`, or a constructor name `mk ::`.
                let mut k = j;
                let mut names = Vec::new();
                while k < to && self.toks[k].kind == TokenKind::Ident && (k == j || !self.toks[k].line_start) {
                    names.push(self.toks[k].name());
                    k += 1;
                }
                let after = self.toks.get(k).filter(|_| k < to).map(|s| s.text(self.text));
                match after {
                    Some(":") | Some(":=") => {
                        for (n, idx) in names.iter().zip(j..k) {
                            self.index.declare(format!("{structure}.{n}"), DeclKind::Field, self.path, self.toks[idx].span.clone());
                            fields.push(n.clone());
                        }
                    }
                    Some("::") if names.len() == 1 => {
                        self.index.declare(format!("{structure}.{}", names[0]), DeclKind::Constructor, self.path, t.span.clone());
                    }
                    _ => {}
                }
                j = k.max(j + 1);
                continue;
            }
            j += 1;
        }
        self.index.fields.insert(structure.to_string(), fields);
    }
}

/// Names in generated Lean text (a module emitted by LARK, opening `Lark`) that neither the
/// library nor the text itself declares: qualified identifiers resolved under `open Lark`,
/// constructors written `.name` (some inductive of the library must have one of that name),
/// and the fields of structure instances (`name :=`). `locals` are the bound variables and core
/// names the text may use. Golden tests use it so that an emitted module can never refer to a
/// definition the library lacks.
pub fn unresolved_names(text: &str, lib: &LibraryIndex, locals: &dyn Fn(&str) -> bool) -> Vec<String> {
    const KEYWORDS: &[&str] = &["import", "namespace", "open", "def", "theorem", "end", "by", "fun", "at", "with", "if", "then", "else", "match"];
    let lexed = lexer::lex(text);
    if let Some(e) = lexed.errors.first() {
        return vec![format!("lexical error at byte {}: {}", e.span.start, e.message)];
    }
    let toks = &lexed.tokens;
    let declared_by = |w: &[Token]| w[0].kind == TokenKind::Ident && ["def", "theorem"].contains(&w[0].name().as_str());
    let own: Vec<String> = toks.windows(2).filter(|w| declared_by(w)).map(|w| w[1].name()).collect();
    let constructor_named = |n: &str| lib.decls().any(|d| d.kind == DeclKind::Constructor && d.name.rsplit('.').next() == Some(n));
    let mut unknown = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.kind != TokenKind::Ident || t.in_string {
            continue;
        }
        let name = t.name();
        let prev = i.checked_sub(1).map(|p| &toks[p]);
        let next = toks.get(i + 1);
        let symbol = |tok: Option<&Token>, s: &[&str]| tok.is_some_and(|p| p.kind == TokenKind::Symbol && s.contains(&p.text(text)));
        let after_keyword = prev.is_some_and(|p| p.kind == TokenKind::Ident && ["namespace", "end", "import", "def", "theorem"].contains(&p.name().as_str()));
        if after_keyword || KEYWORDS.contains(&name.as_str()) || locals(&name) || own.contains(&name) {
            continue;
        }
        // `.name` right after a `.`: a projection when the `.` touches a term before it
        // (`(…).toNat`, not checked), else an anonymous constructor.
        let dotted = symbol(prev, &["."]) && prev.is_some_and(|p| p.span.end == t.span.start);
        let before_dot = i.checked_sub(2).map(|p| &toks[p]);
        let projection =
            dotted && before_dot.is_some_and(|b| prev.is_some_and(|p| b.span.end == p.span.start) && (b.kind == TokenKind::Ident || b.text(text) == ")"));
        if projection {
            continue;
        }
        if dotted {
            if !constructor_named(&name) {
                unknown.push(format!(".{name}"));
            }
            continue;
        }
        // `{ name := …`, `, name := …` or a field on its own line; not `def k : Kernel :=`.
        let field_position = t.line_start || symbol(prev, &["{", ","]);
        if field_position && symbol(next, &[":="]) {
            if !lib.is_field_name(&name) {
                unknown.push(format!("field {name}"));
            }
            continue;
        }
        // `x.field` on a local or own definition (`inputs.args`, `kernel.flatInsts`).
        let head = t.components.first().map(String::as_str).unwrap_or_default();
        if t.components.len() > 1 && (locals(head) || own.iter().any(|o| o == head)) {
            continue;
        }
        if lib.resolve(&name, &["Lark"]).is_none() {
            unknown.push(name);
        }
    }
    unknown.sort();
    unknown.dedup();
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(text: &str) -> Result<LibraryIndex, LibraryError> {
        let mut ix = LibraryIndex::default();
        ix.add_file(Path::new("T.lean"), text)?;
        Ok(ix)
    }

    #[test]
    fn namespaces_declarations_constructors_and_fields() {
        let ix = index(
            "import Lark.Value\n\nnamespace A\n\n/-- doc -/\ninductive K where\n  | a | b (n : Nat)\n  deriving Repr\n\nstructure S where\n  x : Nat\n  y z : Int := 0\n  deriving Repr\n\n@[simp] theorem t : True := trivial\nprivate def S.f (s : S) : Nat := s.x\ninstance : Inhabited S := ⟨⟨0, 0, 0⟩⟩\nend A\n",
        )
        .unwrap();
        for n in ["A", "A.K", "A.K.a", "A.K.b", "A.S", "A.S.x", "A.S.y", "A.S.z", "A.t", "A.S.f"] {
            assert!(ix.contains(n), "{n} missing");
        }
        assert_eq!(ix.constructors("A.K").unwrap(), ["a", "b"]);
        assert_eq!(ix.fields("A.S").unwrap(), ["x", "y", "z"]);
        assert_eq!(ix.files()[0].imports, ["Lark.Value"]);
    }

    #[test]
    fn unbalanced_scopes_are_errors() {
        let e = index("namespace A\nsection\nend A\n").unwrap_err();
        assert_eq!(e.to_string(), "T.lean:3:1: expected `end`, found `end A`");
        let e = index("namespace A\n").unwrap_err();
        assert_eq!(e.to_string(), "T.lean:2:1: expected `end A`, found the end of the file");
        let e = index("end\n").unwrap_err();
        assert_eq!(e.to_string(), "T.lean:1:1: `end` without an open namespace or section");
    }
}
