//! Kernels of the corpus emitted as Lean terms: golden files for four kernels, and for every
//! corpus kernel a module whose scopes balance and whose every constructor, function, type and
//! field name exists in the Lean library.

use expect_test::expect_file;
use lean::emit::{emit_module, EmitOptions};
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

/// Names in an emitted module that the library does not declare.
fn unknown_names(text: &str, lib: &LibraryIndex) -> Vec<String> {
    lean::library::unresolved_names(text, lib, &|n| ["none", "some", "true", "false", "List", "Lark"].contains(&n))
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
