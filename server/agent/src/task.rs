//! From a kernel's generated Lean module to the tasks of its certificate: the pinned statement
//! of each obligation's certificate theorem, and the request an agent receives for it.

use crate::protocol::ProveRequest;
use lean::audit::sha256_hex;
use lean::library::LibraryIndex;
use lean::obligations::{Generated, Obligation};

/// The certificate theorem's name for an obligation: `LarkGen.k.cert_race_free`.
pub fn theorem_name(g: &Generated, o: &Obligation) -> String {
    format!("{}.cert_{}", g.module, o.name)
}

/// The text a proof of `o` is appended to: the whole module, then the theorem's header. Its
/// SHA-256 pins it; a certificate file is this text followed by the proof.
pub fn statement(g: &Generated, o: &Obligation) -> String {
    format!("{}\n/-- Certificate: `{}` holds. -/\ntheorem {} : {}.{} :=\n", g.text.trim_end(), o.name, theorem_name(g, o), g.module, o.name)
}

/// The library declarations an obligation's statement mentions (full names, sorted).
fn library_names(o: &Obligation, lib: Option<&LibraryIndex>) -> Vec<String> {
    let Some(lib) = lib else { return vec![] };
    let lexed = lean::lexer::lex(&o.statement);
    let mut names: Vec<String> = lexed
        .tokens
        .iter()
        .filter(|t| t.kind == lean::lexer::TokenKind::Ident)
        .filter_map(|t| lib.resolve(&t.name(), &["Lark"]).map(|d| d.name.clone()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The request for a proof of `o`.
pub fn request(g: &Generated, o: &Obligation, lib: Option<&LibraryIndex>, facts: Vec<String>) -> ProveRequest {
    let statement = statement(g, o);
    ProveRequest {
        task: "prove".into(),
        obligation: o.name.clone(),
        theorem: theorem_name(g, o),
        statement_sha256: sha256_hex(&statement),
        statement,
        summary: o.summary.clone(),
        library: library_names(o, lib),
        facts,
        attempts: vec![],
        subgoal_of: None,
    }
}
