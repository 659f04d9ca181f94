//! With a Lean toolchain on `PATH`: `lake build` the library, `lake build LarkTest` (the
//! conformance examples generated from `model::ops`), and check every golden emitted module in a
//! scratch workspace. Without one, each test prints why it is skipped and returns (Lean cannot
//! be installed on the machines this project is developed on; see lean/README.md).

use lean::runner::{build_in_place, Workspace};
use std::time::Duration;

fn toolchain() -> Option<lean::Toolchain> {
    match lean::toolchain::detect(&lean::library_dir()) {
        Ok(tc) => Some(tc),
        Err(e) => {
            println!("skipped: {e}");
            None
        }
    }
}

#[test]
fn the_library_and_its_conformance_examples_build() {
    let Some(tc) = toolchain() else { return };
    for target in ["Lark", "LarkTest"] {
        let r = build_in_place(&tc, &lean::library_dir(), target, Duration::from_secs(3600)).unwrap();
        assert!(r.accepted(), "lake build {target}:\n{}\n{}", r.output.stdout, r.output.stderr);
    }
}

/// Checks every module of `dir` (relative to this crate) in a fresh scratch workspace with the
/// library built; returns how many there were.
fn check_every_module(tc: &lean::Toolchain, dir: &str) -> usize {
    let root = std::env::temp_dir().join(format!("lark-golden-{}-{}", std::process::id(), dir.replace('/', "_")));
    let ws = Workspace::create(&root, &lean::library_dir()).unwrap();
    let built = ws.build_library(tc, Duration::from_secs(3600)).unwrap();
    assert!(built.accepted(), "{:#?}", built.messages);
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut names: Vec<String> = std::fs::read_dir(&golden).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in &names {
        let text = std::fs::read_to_string(golden.join(name)).unwrap();
        let file = ws.write_file(name, &text).unwrap();
        let r = ws.check_file(tc, &file, Duration::from_secs(600)).unwrap();
        assert!(r.accepted(), "{name}: {:#?}", r.messages);
    }
    ws.remove().unwrap();
    names.len()
}

#[test]
fn the_golden_kernel_modules_check() {
    let Some(tc) = toolchain() else { return };
    check_every_module(&tc, "tests/golden");
}

/// The golden obligation modules (`tests/lean/golden`, generated through the analysis by
/// `server/ide/tests/lean_obligations.rs`): their definitions elaborate, and the theorems LARK
/// proves in them (`segments_cover`, `segments_concat`, `correct_of_obligations`) are accepted.
#[test]
fn the_golden_obligation_modules_check() {
    let Some(tc) = toolchain() else { return };
    let n = check_every_module(&tc, "../../tests/lean/golden");
    assert!(n >= 4, "{n} modules");
}
