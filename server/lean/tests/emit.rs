//! Kernels of the corpus emitted as Lean terms: golden files for four kernels, and for every
//! corpus kernel a module whose scopes balance and whose every constructor, function, type and
//! field name exists in the Lean library.

use expect_test::expect_file;
use lean::emit::{emit_module, EmitOptions};
use lean::lexer::{self, TokenKind};
use lean::library::LibraryIndex;
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// Emits every kernel of a corpus PTX file as one module.
fn emit(file: &str) -> String {
    let text = std::fs::read_to_string(corpus().join(file)).unwrap();
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{file}: {:?}", parsed.errors);
    let kernels: Vec<model::Kernel> =
        model::lower_module(&parsed.module).into_iter().map(|(n, k)| k.unwrap_or_else(|e| panic!("{n}: {}", e.message))).collect();
    let module = Path::new(file).file_stem().unwrap().to_string_lossy().into_owned();
    let opts = EmitOptions { source: format!("tests/corpus/{file}"), module };
    emit_module(&opts, &kernels.iter().collect::<Vec<_>>())
}

fn library() -> LibraryIndex {
    LibraryIndex::load(&lean::library_dir()).unwrap_or_else(|e| panic!("{e}"))
}

/// Names in an emitted module that the library does not declare: qualified identifiers resolved
/// under `open Lark`, and the fields of structure instances (`name :=`).
fn unknown_names(text: &str, lib: &LibraryIndex) -> Vec<String> {
    // Names of the generated module itself and core names it uses.
    const CORE: &[&str] = &["none", "some", "true", "false", "List", "import", "namespace", "open", "def", "end", "Lark"];
    let lexed = lexer::lex(text);
    assert!(lexed.errors.is_empty(), "{:?}", lexed.errors);
    let toks = &lexed.tokens;
    let mut unknown = Vec::new();
    let own: Vec<String> = toks.windows(2).filter(|w| w[0].kind == TokenKind::Ident && w[0].name() == "def").map(|w| w[1].name()).collect();
    for (i, t) in toks.iter().enumerate() {
        if t.kind != TokenKind::Ident || t.in_string {
            continue;
        }
        let name = t.name();
        let prev = i.checked_sub(1).map(|p| &toks[p]);
        let next = toks.get(i + 1);
        let after_keyword = prev.is_some_and(|p| p.kind == TokenKind::Ident && ["namespace", "end", "import", "def"].contains(&p.name().as_str()));
        if after_keyword || CORE.contains(&name.as_str()) || own.contains(&name) {
            continue;
        }
        // `{ name := …`, `, name := …` or a field on its own line; not `def k : Kernel :=`.
        let field_position = t.line_start || prev.is_some_and(|p| p.kind == TokenKind::Symbol && ["{", ","].contains(&p.text(text)));
        let is_field = field_position && next.is_some_and(|n| n.kind == TokenKind::Symbol && n.text(text) == ":=");
        if is_field {
            if !lib.is_field_name(&name) {
                unknown.push(format!("field {name}"));
            }
        } else if lib.resolve(&name, &["Lark"]).is_none() {
            unknown.push(name);
        }
    }
    unknown.sort();
    unknown.dedup();
    unknown
}

#[test]
fn golden_vector_add() {
    expect_file!["golden/vector_add.lean"].assert_eq(&emit("vector_add.ptx"));
}

#[test]
fn golden_warp_reduce_shfl() {
    expect_file!["golden/warp_reduce_shfl.lean"].assert_eq(&emit("warp_reduce_shfl.ptx"));
}

#[test]
fn golden_matmul_tiled() {
    expect_file!["golden/matmul_tiled.lean"].assert_eq(&emit("matmul_tiled.ptx"));
}

#[test]
fn golden_softmax_row() {
    expect_file!["golden/softmax_row.lean"].assert_eq(&emit("softmax_row.ptx"));
}

#[test]
fn every_corpus_kernel_emits_a_module_naming_only_library_names() {
    let lib = library();
    let mut files: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".ptx"))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "corpus has {} PTX files", files.len());
    let mut problems = Vec::new();
    for f in &files {
        let text = emit(f);
        assert_eq!(text, emit(f), "{f}: emission is not deterministic");
        // Namespaces and `end`s balance (the index reports them otherwise).
        let mut ix = LibraryIndex::default();
        if let Err(e) = ix.add_file(Path::new(f), &text) {
            problems.push(format!("{f}: {e}"));
        }
        let unknown = unknown_names(&text, &lib);
        if !unknown.is_empty() {
            problems.push(format!("{f}: unknown names {unknown:?}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_name_check_catches_a_misspelt_constructor() {
    let lib = library();
    let bad = "namespace X\nopen Lark\ndef k : Kernel := { nme := \"k\", regs := [Op.movv 1 (Operand.reg 2) 32] }\nend X\n";
    assert_eq!(unknown_names(bad, &lib), ["Op.movv", "field nme"]);
}
