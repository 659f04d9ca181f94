//! The JSON and SARIF field names are a contract with scripts and code-scanning pipelines: these
//! snapshots fix them. Timings are zeroed; everything else is compared exactly. After an
//! intended change, `UPDATE_SNAPSHOTS=1 cargo test -p lark --test output_snapshots` rewrites the
//! files, and the diff shows what changed for users.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Zeroes the fields that measure time, and writes the checkout's path as `<repo>`.
fn normalised(v: &mut Value, repo: &str) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "millis" || k.ends_with("_millis") {
                    *x = Value::from(0);
                } else {
                    normalised(x, repo);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| normalised(x, repo)),
        Value::String(s) if s.contains(repo) => *s = s.replace(repo, "<repo>"),
        _ => {}
    }
}

fn check_snapshot(name: &str, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_lark")).args(args).current_dir(repo()).output().unwrap();
    let mut doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    normalised(&mut doc, &repo().display().to_string());
    let actual = serde_json::to_string_pretty(&doc).unwrap() + "\n";
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&file, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e} (UPDATE_SNAPSHOTS=1 writes it)", file.display()));
    if expected != actual {
        let first = expected.lines().zip(actual.lines()).position(|(a, b)| a != b).unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from its snapshot from line {}:\n  snapshot: {:?}\n  now:      {:?}\n(UPDATE_SNAPSHOTS=1 rewrites it if the change is intended)",
            first + 1,
            expected.lines().nth(first),
            actual.lines().nth(first)
        );
    }
}

#[test]
fn json_of_a_race_an_out_of_bounds_and_a_verified_kernel() {
    check_snapshot(
        "check.json",
        &["check", "tests/corpus/reduce_missing_sync.ptx", "tests/corpus/forward_diff_oob.ptx", "tests/corpus/vector_add.ptx", "--format", "json"],
    );
}

#[test]
fn json_of_a_mismatch() {
    check_snapshot("mismatch.json", &["check", "tests/equiv/rmsnorm_eps_bug.ptx", "--format", "json"]);
}

#[test]
fn sarif_of_a_race_and_an_out_of_bounds() {
    check_snapshot("check.sarif.json", &["check", "tests/corpus/reduce_missing_sync.ptx", "tests/corpus/forward_diff_oob.ptx", "--format", "sarif"]);
}
