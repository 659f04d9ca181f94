//! The index of the real Lean library (`lean/`): it finds the main names, every file's scopes
//! balance, every import resolves, `Lark.lean` imports every module, and the library itself
//! contains nothing the audit would reject in a proof (`sorry`, `axiom`, native evaluation, …).

use lean::lexer::{self, TokenKind};
use lean::library::{DeclKind, LibraryIndex};
use std::collections::BTreeSet;

fn index() -> LibraryIndex {
    LibraryIndex::load(&lean::library_dir()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn finds_the_main_names() {
    let ix = index();
    let expected = [
        ("Lark.Value", DeclKind::Inductive),
        ("Lark.Value.bits", DeclKind::Constructor),
        ("Lark.FloatVal.finite", DeclKind::Constructor),
        ("Lark.FloatVal.ofBits", DeclKind::Def),
        ("Lark.Ideal", DeclKind::Structure),
        ("Lark.Ideal.exp_add", DeclKind::Field),
        ("Lark.Ideal.degenerate", DeclKind::Def),
        ("Lark.Ideal.nonempty", DeclKind::Theorem),
        ("Lark.BinOp.mulHiU", DeclKind::Constructor),
        ("Lark.evalBin", DeclKind::Def),
        ("Lark.evalUn", DeclKind::Def),
        ("Lark.evalCmp", DeclKind::Def),
        ("Lark.evalExt", DeclKind::Def),
        ("Lark.FloatOp.rsqrt", DeclKind::Constructor),
        ("Lark.evalFloat", DeclKind::Def),
        ("Lark.Space.local", DeclKind::Constructor),
        ("Lark.Op.fSetp", DeclKind::Constructor),
        ("Lark.Term.return", DeclKind::Constructor),
        ("Lark.Kernel", DeclKind::Structure),
        ("Lark.Kernel.cfg", DeclKind::Field),
        ("Lark.ThreadState.regs", DeclKind::Field),
        ("Lark.stepThread", DeclKind::Def),
        ("Lark.runThread", DeclKind::Def),
        ("Lark.runPhase", DeclKind::Abbrev),
        ("Lark.runKernel", DeclKind::Def),
        ("Lark.RaceFree", DeclKind::Def),
        ("Lark.BarrierAligned", DeclKind::Def),
        ("Lark.InBounds", DeclKind::Def),
        ("Lark.Terminates", DeclKind::Def),
        ("Lark.phase_order_independent", DeclKind::Theorem),
        ("Lark.runThread_frame", DeclKind::Theorem),
        ("Lark.applyLog_comm", DeclKind::Theorem),
        ("Lark.Distinct", DeclKind::Inductive),
        ("Lark.softmax", DeclKind::Def),
        ("Lark.matmul", DeclKind::Def),
    ];
    let mut missing = Vec::new();
    for (name, kind) in expected {
        match ix.get(name) {
            Some(d) if d.kind == kind => {}
            Some(d) => missing.push(format!("{name}: {:?}, expected {kind:?}", d.kind)),
            None => missing.push(format!("{name}: missing")),
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
    assert_eq!(ix.fields("Lark.Inst").unwrap(), ["guard", "op", "line"]);
    assert_eq!(ix.constructors("Lark.Term").unwrap(), ["goto", "branch", "return"]);
}

#[test]
fn imports_resolve_and_the_root_imports_everything() {
    let ix = index();
    let modules: BTreeSet<&str> = ix.files().iter().map(|f| f.module.as_str()).collect();
    for f in ix.files() {
        for i in &f.imports {
            assert!(modules.contains(i.as_str()) || i.starts_with("Init."), "{}: imports unknown module {i}", f.path.display());
        }
    }
    let root = ix.files().iter().find(|f| f.module == "Lark").expect("Lark.lean");
    let imported: BTreeSet<&str> = root.imports.iter().map(|s| s.as_str()).collect();
    for m in &modules {
        assert!(*m == "Lark" || imported.contains(m), "Lark.lean does not import {m}");
    }
}

#[test]
fn the_library_has_no_sorry_axiom_or_trusted_code() {
    const FORBIDDEN: &[&str] =
        &["sorry", "sorryAx", "admit", "axiom", "native_decide", "bv_decide", "ofReduceBool", "trustCompiler", "implemented_by", "extern", "unsafe", "partial"];
    let root = lean::library_dir();
    let ix = index();
    let mut found = Vec::new();
    for f in ix.files() {
        let text = std::fs::read_to_string(root.join(&f.path)).unwrap();
        for t in lexer::lex(&text).tokens.iter().filter(|t| t.kind == TokenKind::Ident) {
            if let Some(c) = t.components.iter().find(|c| FORBIDDEN.contains(&c.as_str())) {
                found.push(format!("{}: `{c}` at byte {}", f.path.display(), t.span.start));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_conformance_library_indexes_too() {
    let root = lean::library_dir();
    let mut ix = LibraryIndex::default();
    for rel in ["LarkTest.lean", "LarkTest/Conformance.lean"] {
        let text = std::fs::read_to_string(root.join(rel)).unwrap();
        ix.add_file(std::path::Path::new(rel), &text).unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(ix.contains("LarkTest.Conformance"));
}
