//! The audit of a proof before Lean sees it, and of Lean's `#print axioms` answer after.
//!
//! A certificate is a file made of a **pinned statement** — text LARK generated, pinned by the
//! SHA-256 of its exact bytes — followed by a **proof** an agent wrote (ARCHITECTURE.md, promise
//! 1). The audit is lexical, on the tokens of [`crate::lexer`], so comments and strings are seen
//! as Lean sees them: `sorry` in a comment is fine, `«sorry»` is `sorry`, code in a string's `{…}`
//! is code. It rejects:
//!
//! * `sorry`, `admit`, `sorryAx`, `stop` (which is `repeat sorry`);
//! * `axiom`; evaluation by the compiler: `native_decide`, `decide +native`, `bv_decide` (its
//!   proofs rest on `Lean.ofReduceBool`), `ofReduceBool`, `trustCompiler`;
//! * `implemented_by`, `extern`, `csimp`, `unsafe`, `partial`;
//! * metaprogramming: `macro`, `macro_rules`, `elab`, `syntax`, `notation`, `infix`…, `run_tac`,
//!   `run_cmd`, `run_elab`, `run_meta`, syntax quotations;
//! * commands of any kind: `#eval`, `#print`, `#exit`…, declarations (a redefinition of a library
//!   name is named as such), `attribute [...]`, `@[...]`, `namespace`/`section`/`end`,
//!   `open … ` without `in`; the proof is one term;
//! * `set_option` except resource and display options. `maxHeartbeats 0` is accepted: heartbeats
//!   only bound the elaborator's work, they do not weaken what is checked, and the runner's
//!   wall-clock timeout bounds the time. `debug.skipKernelTC` and every option outside the list
//!   are rejected;
//! * `open X in` unless `X` is a namespace of the library or of a core type (no `renaming`,
//!   `hiding`): opening arbitrary namespaces lets short names in the proof mean something other
//!   than the library's;
//! * any change to the pinned statement (a different hash, a different prefix, or a proof that
//!   changes how the statement's text reads).
//!
//! When the statement and the proof are compiled apart (`lean::certify`), [`audit_proof_module`]
//! also audits the proof module: it must start with the import of the statement module and the
//! theorem's header exactly as pinned, and declare nothing but that theorem — no pinned name
//! again, nothing in a namespace the statement declares or in LARK's `LarkPinned`/`LarkCheck`.
//!
//! After Lean accepted the file, [`check_axioms`] reads `#print axioms` and accepts only
//! `propext`, `Quot.sound` and `Classical.choice`.

use crate::lexer::{self, Token, TokenKind};
use crate::library::{DeclKind, LibraryIndex};
use sha2::{Digest, Sha256};
use std::ops::Range;
use std::path::Path;

/// The only axioms a certified theorem may depend on.
pub const ALLOWED_AXIOMS: [&str; 3] = ["propext", "Quot.sound", "Classical.choice"];

/// Which rule a finding breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    Sorry,
    Axiom,
    NativeEvaluation,
    CompilerDirective,
    Unsafe,
    Metaprogramming,
    Command,
    Redefinition,
    Attribute,
    Option,
    Open,
    Lexical,
}

/// One reason to reject a proof, with the byte range (in the audited text) it refers to.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub rule: Rule,
    pub span: Range<usize>,
    pub message: String,
}

/// Why a certificate cannot be accepted.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("the proof is rejected: {}", summary(.findings))]
    Rejected { findings: Vec<Finding> },
    #[error("the statement was changed: expected SHA-256 {expected}, found {found}")]
    StatementChanged { expected: String, found: String },
    #[error("the file does not start with the pinned statement (first difference at byte {at})")]
    PrefixChanged { at: usize },
    #[error("the pinned statement does not lex cleanly: {message}")]
    BadStatement { message: String },
    #[error("no `#print axioms` answer for `{theorem}` in Lean's output")]
    NoAxiomReport { theorem: String },
    #[error("`{theorem}` depends on axioms outside propext, Quot.sound, Classical.choice: {}", .axioms.join(", "))]
    DisallowedAxioms { theorem: String, axioms: Vec<String> },
}

fn summary(findings: &[Finding]) -> String {
    findings.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join("; ")
}

/// SHA-256 of a text, in lowercase hexadecimal.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A statement with the hash that pins it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pinned {
    statement: String,
    hash: String,
}

impl Pinned {
    /// Pins a statement LARK generated: everything a certificate file holds before the proof
    /// (imports, `open`s, `theorem name : type :=`). It must not leave a namespace open, since
    /// the proof may not close it.
    pub fn new(statement: impl Into<String>) -> Pinned {
        let statement = statement.into();
        let hash = sha256_hex(&statement);
        Pinned { statement, hash }
    }

    /// A statement read back from storage, checked against the hash recorded when it was pinned.
    pub fn with_hash(statement: impl Into<String>, expected: &str) -> Result<Pinned, AuditError> {
        let p = Pinned::new(statement);
        if p.hash != expected {
            return Err(AuditError::StatementChanged { expected: expected.to_string(), found: p.hash });
        }
        Ok(p)
    }

    pub fn statement(&self) -> &str {
        &self.statement
    }

    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// Audits a certificate file: it must be the pinned statement followed by an acceptable
    /// proof. Returns the proof text.
    pub fn audit_file<'f>(&self, file: &'f str, policy: &Policy) -> Result<&'f str, AuditError> {
        if !file.starts_with(&self.statement) {
            let at = file.bytes().zip(self.statement.bytes()).position(|(a, b)| a != b).unwrap_or(file.len().min(self.statement.len()));
            return Err(AuditError::PrefixChanged { at });
        }
        let boundary = self.statement.len();
        let alone = lexer::lex(&self.statement);
        if let Some(e) = alone.errors.first() {
            return Err(AuditError::BadStatement { message: e.message.clone() });
        }
        let whole = lexer::lex(file);
        let mut findings = Vec::new();
        // The proof must not change how the statement reads: the statement's tokens are the
        // file's tokens before the boundary, and no token straddles it.
        let before: Vec<&Token> = whole.tokens.iter().filter(|t| t.span.start < boundary).collect();
        let same = before.len() == alone.tokens.len() && before.iter().zip(&alone.tokens).all(|(a, b)| a.kind == b.kind && a.span == b.span);
        if !same || before.iter().any(|t| t.span.end > boundary) {
            findings.push(Finding { rule: Rule::Lexical, span: boundary..boundary, message: "the proof changes how the pinned statement reads".into() });
        }
        findings.extend(audit_tokens(file, &whole, boundary, policy));
        if findings.is_empty() {
            Ok(&file[boundary..])
        } else {
            Err(AuditError::Rejected { findings })
        }
    }
}

/// What an audit allows besides the fixed rules.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// Namespaces a proof may `open … in`.
    pub open_namespaces: Vec<String>,
    /// Names of the library (for naming redefinitions).
    pub library_names: std::collections::BTreeSet<String>,
}

/// Core namespaces a proof may open.
const CORE_NAMESPACES: &[&str] = &["Nat", "Int", "List", "Array", "BitVec", "Rat", "Bool", "Option", "Fin", "Prod", "Function", "Classical", "Decidable"];

impl Policy {
    /// The policy for proofs about the given library: its namespaces and the core ones may be
    /// opened.
    pub fn for_library(library: &LibraryIndex) -> Policy {
        let mut open_namespaces: Vec<String> = CORE_NAMESPACES.iter().map(|s| s.to_string()).collect();
        open_namespaces.extend(library.decls().filter(|d| d.kind == DeclKind::Namespace).map(|d| d.name.clone()));
        let library_names = library.decls().filter(|d| d.kind != DeclKind::Namespace).map(|d| d.name.clone()).collect();
        Policy { open_namespaces, library_names }
    }
}

/// Audits a proof on its own (as it would follow a statement).
pub fn audit_proof(proof: &str, policy: &Policy) -> Vec<Finding> {
    let lexed = lexer::lex(proof);
    audit_tokens(proof, &lexed, 0, policy)
}

const SORRY: &[&str] = &["sorry", "sorryAx", "admit", "stop"];
const NATIVE: &[&str] = &["native_decide", "native", "bv_decide", "ofReduceBool", "ofReduceNat", "reduceBool", "reduceNat", "trustCompiler"];
const COMPILER: &[&str] = &["implemented_by", "extern", "csimp"];
const UNSAFE: &[&str] = &["unsafe", "partial"];
const META: &[&str] = &[
    "macro",
    "macro_rules",
    "elab",
    "elab_rules",
    "syntax",
    "notation",
    "infix",
    "infixl",
    "infixr",
    "prefix",
    "postfix",
    "declare_syntax_cat",
    "run_tac",
    "run_cmd",
    "run_elab",
    "run_meta",
    "simproc",
    "dsimproc",
    "register_simp_attr",
    "initialize",
    "builtin_initialize",
];
const COMMANDS: &[&str] = &[
    "theorem",
    "lemma",
    "def",
    "abbrev",
    "instance",
    "class",
    "structure",
    "inductive",
    "example",
    "opaque",
    "namespace",
    "section",
    "end",
    "variable",
    "universe",
    "export",
    "mutual",
    "noncomputable",
    "private",
    "protected",
    "import",
    "deriving",
    "local",
];
/// Options a proof may set (`set_option … in`); prefixes end with `.`.
const ALLOWED_OPTIONS: &[&str] = &[
    "maxHeartbeats",
    "maxRecDepth",
    "synthInstance.maxHeartbeats",
    "synthInstance.maxSize",
    "exponentiation.threshold",
    "diagnostics",
    "diagnostics.threshold",
    "linter.",
    "pp.",
    "trace.",
];

fn option_allowed(name: &str) -> bool {
    ALLOWED_OPTIONS.iter().any(|o| if o.ends_with('.') { name.starts_with(o) } else { name == *o })
}

fn audit_tokens(src: &str, lexed: &lexer::Lexed, from: usize, policy: &Policy) -> Vec<Finding> {
    let mut findings = Vec::new();
    for e in &lexed.errors {
        if e.span.end >= from {
            findings.push(Finding { rule: Rule::Lexical, span: e.span.clone(), message: e.message.clone() });
        }
    }
    let toks: Vec<&Token> = lexed.tokens.iter().filter(|t| t.span.start >= from).collect();
    let mut push = |rule: Rule, t: &Token, message: String| findings.push(Finding { rule, span: t.span.clone(), message });
    let word = |i: usize| toks.get(i).filter(|t| t.kind == TokenKind::Ident).map(|t| t.name());
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            TokenKind::HashCommand => push(Rule::Command, t, format!("`#{}` is a command; a proof is a single term", t.name())),
            TokenKind::AttrOpen => push(Rule::Attribute, t, "attributes (`@[…]`) are not allowed in a proof".into()),
            TokenKind::Quotation => push(Rule::Metaprogramming, t, "syntax quotations are not allowed in a proof".into()),
            TokenKind::Ident => {
                let name = t.name();
                for c in &t.components {
                    let c = c.as_str();
                    if SORRY.contains(&c) {
                        push(Rule::Sorry, t, format!("`{c}` is not a proof"));
                    } else if c == "axiom" {
                        push(Rule::Axiom, t, "`axiom` declares an assumption; a proof may not add one".into());
                    } else if NATIVE.contains(&c) {
                        push(Rule::NativeEvaluation, t, format!("`{c}` trusts the compiler (`Lean.ofReduceBool`)"));
                    } else if COMPILER.contains(&c) {
                        push(Rule::CompilerDirective, t, format!("`{c}` replaces what the kernel checks by compiled code"));
                    } else if UNSAFE.contains(&c) {
                        push(Rule::Unsafe, t, format!("`{c}` definitions are not checked by the kernel"));
                    } else if META.contains(&c) {
                        push(Rule::Metaprogramming, t, format!("`{c}` is metaprogramming; a proof may not extend Lean"));
                    } else if c == "attribute" {
                        push(Rule::Attribute, t, "`attribute` changes library declarations".into());
                    } else if COMMANDS.contains(&c) && t.components.len() == 1 {
                        let next = word(i + 1);
                        let redefined =
                            next.as_ref().filter(|n| policy.library_names.contains(*n) || policy.library_names.iter().any(|l| l.ends_with(&format!(".{n}"))));
                        match redefined {
                            Some(n) => push(Rule::Redefinition, t, format!("`{c} {n}` redefines a library name")),
                            None => push(Rule::Command, t, format!("`{c}` starts a new command; a proof is a single term")),
                        }
                    }
                }
                if name == "set_option" {
                    match word(i + 1) {
                        Some(opt) if option_allowed(&opt) => {
                            // `set_option NAME VALUE in`: anything else is a command.
                            if word(i + 3).as_deref() != Some("in") {
                                push(Rule::Command, t, format!("expected `set_option {opt} … in`, found a `set_option` command"));
                            }
                        }
                        Some(opt) => push(Rule::Option, t, format!("`set_option {opt}` is not allowed in a proof")),
                        None => push(Rule::Option, t, "expected an option name after `set_option`".into()),
                    }
                } else if name == "open" {
                    audit_open(src, &toks, i, policy, &mut push);
                }
            }
            _ => {}
        }
    }
    findings
}

/// `open A B in`: every namespace allowed, no `renaming`/`hiding`, and the `in`. Names inside
/// parentheses (`open Nat (succ) in`) are explicit names, not namespaces.
fn audit_open(src: &str, toks: &[&Token], i: usize, policy: &Policy, push: &mut impl FnMut(Rule, &Token, String)) {
    let t = toks[i];
    let mut depth = 0i32;
    let mut has_in = false;
    let mut rest = toks[i + 1..].iter();
    while let Some(n) = rest.next() {
        match n.kind {
            TokenKind::Symbol => match n.text(src) {
                "(" => depth += 1,
                ")" => depth -= 1,
                _ => break,
            },
            TokenKind::Ident => {
                let name = n.name();
                match name.as_str() {
                    "in" => {
                        has_in = true;
                        break;
                    }
                    "renaming" | "hiding" => {
                        push(Rule::Open, n, format!("`open … {name}` can make library names mean something else"));
                        // What follows are the names renamed or hidden, up to the `in`.
                        has_in = rest.any(|m| m.kind == TokenKind::Ident && m.name() == "in");
                        break;
                    }
                    "scoped" => {}
                    ns if depth == 0 && !policy.open_namespaces.iter().any(|a| a == ns) => {
                        push(Rule::Open, n, format!("`open {ns}` is not allowed in a proof (only library and core namespaces)"))
                    }
                    _ => {}
                }
            }
            _ => break,
        }
    }
    if !has_in {
        push(Rule::Command, t, "expected `open … in`, found an `open` command".into());
    }
}

/// Namespaces only LARK's own files declare into (`lean::certify`'s goal and check).
const RESERVED_NAMESPACES: &[&str] = &["LarkPinned", "LarkCheck"];

/// Audits a proof module before Lean sees it: it must be `prefix` (the import of the statement
/// module and the theorem's header as pinned) followed by a proof the audit accepts, and it may
/// declare nothing but `theorem`: no pinned name again, nothing in a namespace the statement
/// module declares (or in LARK's own `LarkPinned`, `LarkCheck`).
pub fn audit_proof_module(text: &str, prefix: &str, theorem: &str, statement_module: &str, policy: &Policy) -> Result<(), AuditError> {
    if !text.starts_with(prefix) {
        let at = text.bytes().zip(prefix.bytes()).position(|(a, b)| a != b).unwrap_or(text.len().min(prefix.len()));
        return Err(AuditError::PrefixChanged { at });
    }
    let mut pinned = LibraryIndex::default();
    pinned.add_file(Path::new("Statement.lean"), statement_module).map_err(|e| AuditError::BadStatement { message: e.to_string() })?;
    let mut namespaces: Vec<String> = pinned.decls().filter(|d| d.kind == DeclKind::Namespace).map(|d| d.name.clone()).collect();
    namespaces.extend(RESERVED_NAMESPACES.iter().map(|s| s.to_string()));
    let inside = |name: &str| namespaces.iter().find(|ns| name == ns.as_str() || name.starts_with(&format!("{ns}."))).cloned();
    let mut findings = Vec::new();
    let mut declared = LibraryIndex::default();
    match declared.add_file(Path::new("Proof.lean"), text) {
        Err(e) => findings.push(Finding { rule: Rule::Lexical, span: prefix.len()..text.len(), message: e.to_string() }),
        Ok(()) => {
            for d in declared.decls().filter(|d| !matches!(d.kind, DeclKind::Constructor | DeclKind::Field)) {
                let message = if d.kind == DeclKind::Namespace {
                    match inside(&d.name) {
                        Some(ns) => format!("`namespace {}` enters the pinned namespace `{ns}`", d.name),
                        None => format!("`namespace {}`: a proof module holds only the certificate theorem", d.name),
                    }
                } else if d.name == theorem {
                    continue;
                } else if pinned.contains(&d.name) {
                    findings.push(Finding {
                        rule: Rule::Redefinition,
                        span: d.span.clone(),
                        message: format!("`{}` re-declares a name of the pinned statement", d.name),
                    });
                    continue;
                } else if let Some(ns) = inside(&d.name) {
                    format!("`{}` declares into the pinned namespace `{ns}`", d.name)
                } else {
                    format!("`{}`: a proof module declares only the certificate theorem `{theorem}`", d.name)
                };
                findings.push(Finding { rule: Rule::Command, span: d.span.clone(), message });
            }
        }
    }
    let lexed = lexer::lex(text);
    findings.extend(audit_tokens(text, &lexed, prefix.len(), policy));
    if findings.is_empty() {
        Ok(())
    } else {
        Err(AuditError::Rejected { findings })
    }
}

/// Reads `#print axioms` from Lean's output: the axioms `theorem` depends on, if they are all
/// allowed.
pub fn check_axioms(output: &str, theorem: &str) -> Result<Vec<String>, AuditError> {
    let quoted = format!("'{theorem}'");
    let Some(at) = output.find(&quoted) else { return Err(AuditError::NoAxiomReport { theorem: theorem.to_string() }) };
    let rest = &output[at + quoted.len()..];
    let rest = rest.trim_start();
    if rest.starts_with("does not depend on any axioms") {
        return Ok(Vec::new());
    }
    let Some(list) = rest.strip_prefix("depends on axioms:").map(str::trim_start) else {
        return Err(AuditError::NoAxiomReport { theorem: theorem.to_string() });
    };
    let Some(inner) = list.strip_prefix('[').and_then(|l| l.split_once(']')).map(|(inner, _)| inner) else {
        return Err(AuditError::NoAxiomReport { theorem: theorem.to_string() });
    };
    let axioms: Vec<String> = inner.split(',').map(|a| a.trim().replace(['«', '»'], "")).filter(|a| !a.is_empty()).collect();
    let bad: Vec<String> = axioms.iter().filter(|a| !ALLOWED_AXIOMS.contains(&a.as_str())).cloned().collect();
    if bad.is_empty() {
        Ok(axioms)
    } else {
        Err(AuditError::DisallowedAxioms { theorem: theorem.to_string(), axioms: bad })
    }
}
