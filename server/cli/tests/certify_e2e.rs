//! `lark certify` and `lark recheck` end to end, with the labelled test-double agents of
//! `server/agent/tests/agents`. Where no Lean toolchain is installed (as on the machines this is
//! developed on) nothing can become a certificate: the run says so, exits 1 and writes nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn lean_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lean")
}

fn double(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent/tests/agents").join(name).canonicalize().unwrap().display().to_string()
}

fn lark(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lark")).args(args).current_dir(dir).output().unwrap()
}

fn lean_installed() -> bool {
    lean::toolchain::detect(&lean::library_dir()).is_ok()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-certify-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn without_lean_a_proof_that_passes_the_audit_is_still_no_certificate() {
    if lean_installed() {
        println!("skipped: Lean is installed here, so this run would check the proofs for real");
        return;
    }
    let store = scratch("store");
    let o = lark(&["certify", "softmax_rows.ptx", "--agent", &double("learns.sh"), "--store", store.to_str().unwrap()], &lean_dir());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Lean toolchain not found"), "{stderr}");
    // The agent heard the audit's objection and answered again.
    assert!(stderr.contains("attempt 1: the audit rejected the proof: the proof is rejected: `sorry` is not a proof"), "{stderr}");
    assert!(stderr.contains("attempt 2: passed the audit"), "{stderr}");
    assert!(stderr.contains("softmax_rows: not certified: 5 of 5 obligations have no proof Lean accepted"), "{stderr}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("certified ("), "no certificate line");
    assert!(!store.exists(), "nothing was written");
}

#[test]
fn a_hanging_agent_is_bounded_by_its_budget() {
    let started = Instant::now();
    let o = lark(
        &[
            "certify",
            "gelu_tanh.ptx",
            "--agent",
            &double("hang.sh"),
            "--agent-timeout",
            "1",
            "--budget",
            "2",
            "--attempts",
            "3",
            "--store",
            scratch("hang").to_str().unwrap(),
        ],
        &lean_dir(),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("did not answer within 1 s"), "{stderr}");
    // Five obligations, at most 2 s each, plus the analysis.
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
}

#[test]
fn only_kernels_the_engine_verified_are_sent_to_an_agent() {
    // A racy kernel of the corpus: no obligation is sent anywhere.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let o = lark(&["certify", "reduce_missing_sync.ptx", "--agent", &double("learns.sh"), "--store", scratch("race").to_str().unwrap()], &corpus);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not certified: the kernel is race, not verified by the engine"), "{stderr}");
    assert!(!stderr.contains("attempt 1"), "{stderr}");
}

#[test]
fn recheck_refuses_what_is_not_a_certificate() {
    let dir = scratch("recheck");
    std::fs::create_dir_all(&dir).unwrap();
    let o = lark(&["recheck", dir.to_str().unwrap()], &lean_dir());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("manifest.json"), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(dir.join("manifest.json"), "{ \"format\": 1 }").unwrap();
    let o = lark(&["recheck", dir.to_str().unwrap()], &lean_dir());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the manifest is not valid"), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
