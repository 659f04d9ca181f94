//! The certificate store: written and read back, found only for exactly its inputs, and atomic
//! under a real `kill -9` — a killed writer leaves the old certificate or the complete new one.

use agent::certificate::{self, Entry, KeyInputs, Manifest};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn inputs(tag: &str) -> KeyInputs {
    KeyInputs { ptx_sha256: format!("ptx-{tag}"), interface_sha256: "iface".into(), reference_sha256: "ref".into(), library_sha256: "lib".into() }
}

/// A certificate whose every file says which `version` wrote it (big enough that a write takes
/// a while).
fn certificate(version: u32) -> (Manifest, Vec<(String, String)>) {
    let files: Vec<(String, String)> = (0..8).map(|i| (format!("ob{i}.lean"), format!("-- version {version}\n{}", "x".repeat(200_000)))).collect();
    let entries = files
        .iter()
        .map(|(f, _)| Entry {
            obligation: f.trim_end_matches(".lean").into(),
            theorem: format!("T.{f}"),
            statement_sha256: "s".into(),
            file: f.clone(),
            axioms: vec!["propext".into()],
        })
        .collect();
    (Manifest::new("k".into(), "LarkGen.k".into(), inputs("a"), format!("4.24.0 (version {version})"), "test".into(), entries), files)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-certs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_certificate_is_written_read_and_found_only_for_its_inputs() {
    let root = scratch("rw");
    let (m, files) = certificate(1);
    let dir = certificate::write(&root, &m, &files).unwrap();
    let (read, read_files) = certificate::read(&dir).unwrap();
    assert_eq!(read, m);
    assert_eq!(read_files, files);
    assert_eq!(certificate::find(&root, "k", &inputs("a")), Some(dir.clone()));
    assert_eq!(certificate::find(&root, "k", &inputs("b")), None, "another PTX is another key");
    assert_eq!(certificate::find(&root, "other", &inputs("a")), None);
    // A tampered manifest (key not the hash of its inputs) is refused.
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap().replace("ptx-a", "ptx-z");
    std::fs::write(dir.join("manifest.json"), text).unwrap();
    assert!(certificate::read(&dir).is_err());
    // A file name that is not plain is refused before anything is written.
    let (m2, _) = certificate(2);
    assert!(certificate::write(&root, &m2, &[("../escape.lean".into(), "x".into())]).is_err());
    let _ = std::fs::remove_dir_all(&root);
}

/// The child of the kill test: writes certificates of increasing versions until killed.
#[test]
fn writer_child() {
    let Ok(root) = std::env::var("LARK_CERT_WRITER_ROOT") else { return };
    for version in 2.. {
        let (m, files) = certificate(version);
        certificate::write(Path::new(&root), &m, &files).unwrap();
    }
}

#[test]
fn a_writer_killed_at_any_moment_leaves_the_old_or_the_complete_new_certificate() {
    let root = scratch("kill");
    let (m, files) = certificate(1);
    let dir = certificate::write(&root, &m, &files).unwrap();
    for round in 0..12 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "writer_child", "--nocapture", "--test-threads=1"])
            .env("LARK_CERT_WRITER_ROOT", &root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(40 + 37 * round));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // What a reader finds after recovery: one complete certificate, every file of one version.
        certificate::recover(&root).unwrap();
        let (read, read_files) = certificate::read(&dir).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let version = read.toolchain.split("version ").nth(1).unwrap().trim_end_matches(')').to_string();
        for (name, text) in &read_files {
            assert!(text.starts_with(&format!("-- version {version}\n")), "round {round}: {name} is not from version {version}");
            assert_eq!(text.len(), format!("-- version {version}\n").len() + 200_000, "round {round}: {name} is truncated");
        }
        let leftovers: Vec<String> =
            std::fs::read_dir(&root).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with('.')).collect();
        assert!(leftovers.is_empty(), "round {round}: {leftovers:?}");
    }
    let _ = std::fs::remove_dir_all(&root);
}
