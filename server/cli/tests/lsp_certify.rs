//! "Certify kernel" in the editor, through `lark serve` and a real LSP client, with the labelled
//! test-double agents of `server/agent/tests/agents`: the code action starts a certification with
//! work-done progress; it ends (here, without Lean, at the first audited proof) in uncertified
//! regions that say why; the cancel button stops a hanging agent; the server keeps serving.

mod agent_lsp;

use agent_lsp::{double, lean_dir, open_softmax, progress, uri, LONG};
use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

fn regions(c: &mut StdioClient, u: &str, containing: &str) -> Vec<Value> {
    let published = c
        .wait_for(LONG, |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == u
                && m["params"]["diagnostics"].as_array().is_some_and(|ds| ds.iter().any(|d| d["message"].as_str().is_some_and(|s| s.contains(containing))))
        })
        .unwrap_or_else(|| panic!("no regions saying `{containing}`; inbox {:#?}", c.inbox));
    published["params"]["diagnostics"].as_array().unwrap().iter().filter(|d| d["code"] == "uncertified-region").cloned().collect()
}

#[test]
fn the_certify_action_reports_progress_and_ends_in_regions_that_say_why() {
    let (mut c, u) = open_softmax(&double("learns.sh"));
    let actions = c.request("textDocument/codeAction", json!({ "textDocument": { "uri": u }, "range": { "start": { "line": 4, "character": 0 }, "end": { "line": 4, "character": 0 } }, "context": { "diagnostics": [] } }), LONG).unwrap();
    let certify = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"].as_str().is_some_and(|t| t.starts_with("Certify `softmax_rows` with Lean (command `")))
        .unwrap_or_else(|| panic!("{actions:#?}"));
    let command = &certify["command"];
    assert_eq!(command["command"], "lark.certify");
    let started = c.request("workspace/executeCommand", json!({ "command": "lark.certify", "arguments": command["arguments"] }), LONG).unwrap();
    assert_eq!(started["started"], true);
    let begin = progress(&mut c, "lark/certify/", "begin");
    assert_eq!(begin["params"]["value"]["title"], "LARK: certifying softmax_rows");
    assert_eq!(begin["params"]["value"]["cancellable"], true);
    let end = progress(&mut c, "lark/certify/", "end");
    let lean = lean::toolchain::detect(&lean::library_dir()).is_ok();
    if lean {
        println!("Lean is installed: the outcome depends on what it accepts; only the shape is checked");
    } else {
        assert!(end["params"]["value"]["message"].as_str().unwrap().contains("Lean toolchain not found"), "{end}");
    }
    let why = if lean { "has no Lean certificate (" } else { "race_free: Lean toolchain not found" };
    let rs = regions(&mut c, &u, why);
    assert!(rs.len() >= 3, "{rs:#?}");
    assert!(rs.iter().all(|d| d["severity"] == 3 && d["message"].as_str().unwrap().contains("has no Lean certificate (")), "{rs:#?}");
    // Nothing claims a certificate.
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": u } }), LONG).unwrap();
    assert!(lenses.as_array().unwrap().iter().any(|l| l["command"]["title"] == "0/5 Lean obligations proved"), "{lenses:#?}");
    let _ = c.shutdown(Duration::from_secs(10));
}

#[test]
fn the_cancel_button_stops_a_hanging_agent_and_the_server_keeps_serving() {
    let (mut c, u) = open_softmax(&double("hang.sh"));
    c.request("workspace/executeCommand", json!({ "command": "lark.certify", "arguments": [u, "softmax_rows"] }), LONG).unwrap();
    let begin = progress(&mut c, "lark/certify/", "begin");
    // A second certification of the same kernel is refused while the first runs.
    let again = c.request("workspace/executeCommand", json!({ "command": "lark.certify", "arguments": [u, "softmax_rows"] }), LONG);
    assert!(format!("{again:?}").contains("already being certified"), "{again:?}");
    let started = std::time::Instant::now();
    c.notify("window/workDoneProgress/cancel", json!({ "token": begin["params"]["token"] }));
    let end = progress(&mut c, "lark/certify/", "end");
    assert_eq!(end["params"]["value"]["message"], "cancelled", "{end}");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    let rs = regions(&mut c, &u, "(cancelled)");
    assert!(!rs.is_empty());
    let hover = c.request("textDocument/hover", json!({ "textDocument": { "uri": u }, "position": { "line": 30, "character": 40 } }), LONG).unwrap();
    assert!(hover["contents"]["value"].as_str().unwrap_or_default().contains("softmax_rows"), "{hover}");
    let _ = c.shutdown(Duration::from_secs(10));
}

#[test]
fn a_certificate_on_disk_is_shown_only_through_a_recheck() {
    // A workspace with the softmax PTX, its interface and reference, and a certificate keyed by
    // exactly these inputs whose file proves nothing: the lens may say the certificate is there,
    // and what a recheck found, but never "certified" without Lean accepting it.
    let dir = std::env::temp_dir().join(format!("lark-lsp-cert-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("references")).unwrap();
    for f in ["softmax_rows.ptx", "softmax_rows.cu", "lark.toml", "references/softmax.py"] {
        std::fs::copy(lean_dir().join(f), dir.join(f)).unwrap();
    }
    let ptx = std::fs::read_to_string(dir.join("softmax_rows.ptx")).unwrap();
    let inputs = agent::certificate::inputs(&ptx, Some(&dir.join("lark.toml")), Some(&dir.join("references/softmax.py")));
    let entry = agent::certificate::Entry {
        obligation: "race_free".into(),
        theorem: "LarkGen.softmax_rows.cert_race_free".into(),
        statement_sha256: "0".repeat(64),
        file: "race_free.lean".into(),
        axioms: vec![],
    };
    let manifest = agent::certificate::Manifest::new("softmax_rows".into(), "LarkGen.softmax_rows".into(), inputs, "4.24.0".into(), "test".into(), vec![entry]);
    agent::certificate::write(&agent::certificate::store_dir(&dir), &manifest, &[("race_free.lean".into(), "-- not a proof\n".into())]).unwrap();

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    c.initialize(&uri(&dir), json!({})).expect("initialize answers");
    let path = dir.join("softmax_rows.ptx");
    let u = uri(&path);
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": u, "languageId": "ptx", "version": 1, "text": ptx } }));
    c.wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == u.as_str()).expect("diagnostics");
    let lean_title = |c: &mut StdioClient| -> String {
        let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": u } }), LONG).unwrap();
        lenses
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["command"]["command"] == "lark.showLeanForFile")
            .map(|l| l["command"]["title"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let first = lean_title(&mut c);
    assert!(first.starts_with("Lean certificate on disk"), "{first}");
    // The recheck finishes in the background (without Lean: at once).
    let deadline = std::time::Instant::now() + LONG;
    let mut title = first;
    while title.ends_with("rechecking…") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        title = lean_title(&mut c);
    }
    assert!(!title.contains("certified ("), "a certificate Lean did not accept is shown as certified: {title}");
    if lean::toolchain::detect(&lean::library_dir()).is_ok() {
        assert!(title.starts_with("Lean certificate rejected"), "{title}");
    } else {
        assert_eq!(title, "Lean certificate on disk, not rechecked: Lean toolchain not found");
    }
    let _ = c.shutdown(Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_segment_with_its_own_obligation_can_be_certified_alone() {
    let (mut c, u) = open_softmax(&double("learns.sh"));
    // Line 31 stores the outputs: the store loop's segment has an obligation of its own.
    let actions = c.request("textDocument/codeAction", json!({ "textDocument": { "uri": u }, "range": { "start": { "line": 30, "character": 4 }, "end": { "line": 30, "character": 4 } }, "context": { "diagnostics": [] } }), LONG).unwrap();
    let titles: Vec<&str> = actions.as_array().unwrap().iter().filter_map(|a| a["title"].as_str()).collect();
    let segment = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"].as_str().is_some_and(|t| t.starts_with("Certify segment `s11_store_loop` of `softmax_rows`")))
        .unwrap_or_else(|| panic!("{titles:?}"));
    assert_eq!(segment["command"]["arguments"][2], "s11_store_loop");
    c.request("workspace/executeCommand", json!({ "command": "lark.certify", "arguments": segment["command"]["arguments"] }), LONG).unwrap();
    progress(&mut c, "lark/certify/", "begin");
    let end = progress(&mut c, "lark/certify/", "end");
    let message = end["params"]["value"]["message"].as_str().unwrap().to_string();
    assert!(message.starts_with("s11_store_loop_agrees: ") && !message.contains("race_free"), "only the segment's obligation: {message}");
    let _ = c.shutdown(Duration::from_secs(10));
}

/// A TEST DOUBLE of a chat-completions server: answers each of `answers` connections with a
/// `sorry` proof (which the audit rejects) and a `usage` block of `tokens` tokens; returns how
/// many requests it saw.
fn token_counting_endpoint(answers: usize, tokens: u64) -> (String, std::thread::JoinHandle<usize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        for _ in 0..answers {
            let (mut s, _) = listener.accept().unwrap();
            let _request = lsp_test_client::fake_http::read_request(&mut s);
            let body = json!({
                "choices": [ { "message": { "role": "assistant", "content": "```lean\nby\n  sorry\n```" } } ],
                "usage": { "prompt_tokens": tokens - 100, "completion_tokens": 100, "total_tokens": tokens },
            })
            .to_string();
            lsp_test_client::fake_http::respond(&mut s, 200, &body);
        }
        answers
    });
    (url, handle)
}

#[test]
fn the_agent_s_token_budget_ends_the_run_in_regions_that_say_so() {
    // 600 tokens an answer, `tokenBudget` 1000 for the run: two requests in all, however many
    // obligations the kernel has.
    let (url, server) = token_counting_endpoint(2, 600);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve").env("LARK_LSP_TOKEN_KEY", "sk-lsp-token-secret");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    let agent = json!({ "endpoint": url, "model": "m", "keyEnv": "LARK_LSP_TOKEN_KEY", "tokenBudget": 1000 });
    c.initialize(&uri(&lean_dir()), json!({ "agent": agent })).expect("initialize answers");
    let path = lean_dir().join("softmax_rows.cu");
    let u = uri(&path);
    let text = std::fs::read_to_string(&path).unwrap();
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": u, "languageId": "cuda", "version": 1, "text": text } }));
    c.wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == u.as_str()).expect("diagnostics");
    c.request("workspace/executeCommand", json!({ "command": "lark.certify", "arguments": [u, "softmax_rows"] }), LONG).unwrap();
    let end = progress(&mut c, "lark/certify/", "end");
    let message = end["params"]["value"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("agent token budget exhausted: 1200 of 1000 tokens used"), "{message}");
    let rs = regions(&mut c, &u, "agent token budget exhausted: 1200 of 1000 tokens used");
    assert!(!rs.is_empty());
    assert_eq!(server.join().unwrap(), 2);
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": u } }), LONG).unwrap();
    assert!(lenses.as_array().unwrap().iter().any(|l| l["command"]["title"] == "0/5 Lean obligations proved"), "{lenses:#?}");
    let shown = format!("{:?}", c.inbox);
    assert!(!shown.contains("sk-lsp") && !message.contains("sk-lsp"), "the key never appears in what the server sends");
    let _ = c.shutdown(Duration::from_secs(10));
}
