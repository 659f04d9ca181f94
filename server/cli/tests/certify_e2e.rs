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

/// A TEST DOUBLE of a chat-completions server: answers each of `answers` connections with a
/// `sorry` proof (which the audit rejects) and a `usage` block of `tokens` tokens; returns the
/// requests it saw.
fn token_counting_endpoint(answers: usize, tokens: u64) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for _ in 0..answers {
            let (mut s, _) = listener.accept().unwrap();
            let got = lsp_test_client::fake_http::read_request(&mut s);
            seen.push(got);
            let body = serde_json::json!({
                "choices": [ { "message": { "role": "assistant", "content": "```lean\nby\n  sorry\n```" } } ],
                "usage": { "prompt_tokens": tokens - 100, "completion_tokens": 100, "total_tokens": tokens },
            })
            .to_string();
            lsp_test_client::fake_http::respond(&mut s, 200, &body);
        }
        seen
    });
    (url, handle)
}

#[test]
fn a_token_budget_covers_the_whole_run_and_then_nothing_more_is_asked() {
    // 600 tokens an answer, 1000 for the run: the first obligation's second answer spends it,
    // and the other four obligations ask nothing (the server answers two connections only).
    let (url, server) = token_counting_endpoint(2, 600);
    let store = scratch("tokens");
    let o = Command::new(env!("CARGO_BIN_EXE_lark"))
        .args(["certify", "gelu_tanh.ptx", "--endpoint", &url, "--model", "m", "--key-env", "LARK_E2E_TOKEN_KEY", "--token-budget", "1000"])
        .args(["--attempts", "6", "--store", store.to_str().unwrap()])
        .env("LARK_E2E_TOKEN_KEY", "sk-e2e-token-secret")
        .current_dir(lean_dir())
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("not proved: agent token budget exhausted: 1200 of 1000 tokens used").count(), 5, "{stderr}");
    assert!(stderr.contains("tokens so far: 1200 of 1000"), "{stderr}");
    // What the statement states differently from the reference is said before any proof.
    assert!(stderr.contains("gelu_tanh: note on the statement: the reference is stated with 12003091/268435456"), "{stderr}");
    assert!(stderr.contains("not certified"), "{stderr}");
    assert!(!stdout.contains("certified ("), "no certificate line: {stdout}");
    assert!(!store.exists(), "nothing was written");
    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen[0].contains("Bearer sk-e2e-token-secret"), "the key is sent to the endpoint");
    assert!(!stdout.contains("sk-e2e") && !stderr.contains("sk-e2e"), "the key is never printed: {stderr}");
}

#[test]
fn a_token_budget_for_a_command_agent_is_said_to_have_no_effect() {
    let o = lark(
        &[
            "certify",
            "gelu_tanh.ptx",
            "--agent",
            &double("garbage.sh"),
            "--attempts",
            "1",
            "--token-budget",
            "5",
            "--store",
            scratch("tokcmd").to_str().unwrap(),
        ],
        &lean_dir(),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--token-budget applies to --endpoint agents only"), "{stderr}");
    assert!(!stderr.contains("token budget exhausted"), "{stderr}");
}
