//! The interface files this repository ships parse without errors: every lark.toml (and each of
//! its sections names a kernel of a source file next to it), and every SentryWard input of the
//! comparison suite (whose `entry` names a kernel of its PTX).

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_lark_toml_parses_and_names_real_kernels() {
    let root = repo_root();
    let mut checked = 0;
    for rel in ["examples/lark.toml", "tests/corpus/lark.toml"] {
        let path = root.join(rel);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let iface = spec::parse_lark_toml(&path.display().to_string(), &text).unwrap_or_else(|e| panic!("{e}"));
        assert!(!iface.kernels.is_empty(), "{rel} describes no kernel");
        let typos = iface.sections_matching_nothing(path.parent().unwrap());
        assert!(typos.is_empty(), "{typos:?}");
        checked += 1;
    }
    assert_eq!(checked, 2);
}

/// `.entry NAME(` lines of a PTX module.
fn entries(ptx: &str) -> Vec<String> {
    ptx.lines().filter_map(|l| l.split(".entry").nth(1)).map(|rest| rest.trim().split(['(', ' ']).next().unwrap_or_default().to_string()).collect()
}

#[test]
fn every_sentryward_input_parses_and_names_its_kernel() {
    let root = repo_root();
    let dir = root.join("tests/compare/inputs");
    let index: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("_index.json")).unwrap()).unwrap();
    let mut checked = 0;
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    files.sort();
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if stem == "_index" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let iface = spec::parse_sentryward_json(&path.display().to_string(), &text, "*").unwrap_or_else(|e| panic!("{e}"));
        let Some(ptx) = index.get(&stem).and_then(|e| e.get("ptx")).and_then(|p| p.as_str()) else { panic!("{stem} is not in _index.json") };
        let kernels = entries(&std::fs::read_to_string(root.join(ptx)).unwrap());
        let names: Vec<&str> = kernels.iter().map(String::as_str).collect();
        let unknown = iface.unknown_entries(&names);
        assert!(unknown.is_empty(), "{unknown:?}");
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} inputs");
}
