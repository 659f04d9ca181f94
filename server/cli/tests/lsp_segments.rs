//! "Propose segments for `k` with the agent" in the editor, through `lark serve` and a real LSP
//! client, with the labelled test-double agents of `server/agent/tests/agents` (`segments.sh`
//! answers with the proposal in a file, `hang.sh` never answers): the code action starts the
//! `segment` task with work-done progress; a refused proposal is fed back and a valid one cuts the
//! module `lark.showLean` shows; a proposal that never validates leaves LARK's cuts; the cancel
//! button stops a hanging agent.

mod agent_lsp;

use agent_lsp::{double, open_softmax, progress, LONG};
use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-lsp-segments-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn show_lean(c: &mut StdioClient, u: &str) -> Value {
    c.request("workspace/executeCommand", json!({ "command": "lark.showLean", "arguments": [u, "softmax_rows"] }), LONG).unwrap()
}

/// How many instructions the kernel has: where LARK's last segment stops.
fn instruction_count(module: &str) -> usize {
    let segments = &module[module.find("def segments").unwrap()..];
    let segments = &segments[..segments.find("\n\n").unwrap()];
    segments.lines().filter_map(|l| l.split("stop := ").nth(1)).filter_map(|r| r.split(' ').next()?.parse().ok()).max().unwrap()
}

/// Writes the two proposals the double reads: a refused one (it covers only part of the
/// kernel), then one segment over all `n` instructions.
fn proposals(dir: &Path, n: usize) -> (PathBuf, PathBuf) {
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"segments": [{"name": "first", "start": 0, "stop": 3}]}"#).unwrap();
    let good = dir.join("good.json");
    std::fs::write(&good, format!(r#"{{"segments": [{{"name": "everything", "start": 0, "stop": {n}, "specification": "the whole softmax"}}]}}"#)).unwrap();
    (bad, good)
}

#[test]
fn the_agent_s_valid_segmentation_cuts_the_module_shown() {
    // The kernel's size, from a first server whose agent is never asked.
    let (mut c, u) = open_softmax("false");
    let before = show_lean(&mut c, &u);
    assert_eq!(before["segmentation"], "lark", "{before}");
    let n = instruction_count(before["text"].as_str().unwrap());
    let _ = c.shutdown(Duration::from_secs(10));

    let dir = scratch("accepted");
    let (bad, good) = proposals(&dir, n);
    let (mut c, u) = open_softmax(&format!("sh {} {} {}", double("segments.sh"), bad.display(), good.display()));
    let actions = c.request("textDocument/codeAction", json!({ "textDocument": { "uri": u }, "range": { "start": { "line": 4, "character": 0 }, "end": { "line": 4, "character": 0 } }, "context": { "diagnostics": [] } }), LONG).unwrap();
    let propose = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"].as_str().is_some_and(|t| t.starts_with("Propose segments for `softmax_rows` with the agent (command `")))
        .unwrap_or_else(|| panic!("{actions:#?}"));
    assert_eq!(propose["command"]["command"], "lark.proposeSegments");
    assert_eq!(propose["command"]["arguments"], json!([u, "softmax_rows"]));
    let started =
        c.request("workspace/executeCommand", json!({ "command": "lark.proposeSegments", "arguments": propose["command"]["arguments"] }), LONG).unwrap();
    assert_eq!(started["started"], true);
    let begin = progress(&mut c, "lark/segments/", "begin");
    assert_eq!(begin["params"]["value"]["title"], "LARK: proposing segments for softmax_rows");
    assert_eq!(begin["params"]["value"]["cancellable"], true);
    let end = progress(&mut c, "lark/segments/", "end");
    let message = end["params"]["value"]["message"].as_str().unwrap().to_string();
    // The first proposal was refused and fed back; the second was accepted.
    assert!(message.starts_with("`softmax_rows`: 1 segment proposed by command `") && message.contains("accepted after 2 attempts"), "{message}");
    let shown = c.wait_for(LONG, |m| m["method"] == "window/showMessage" && m["params"]["message"] == message.as_str()).expect("the outcome is shown");
    assert_eq!(shown["params"]["type"], 3);
    let after = show_lean(&mut c, &u);
    assert_eq!(after["segmentation"], "agent", "{after}");
    let text = after["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("{{ name := \"everything\", start := 0, stop := {n} }}  -- the whole softmax")),
        "{}",
        &text[text.find("def segments").unwrap()..][..300]
    );
    assert!(text.contains("def everything_agrees : Prop"));
    // Nothing is certified by a segmentation.
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": u } }), LONG).unwrap();
    assert!(!format!("{lenses}").contains("certified"), "{lenses:#}");
    let _ = c.shutdown(Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_segmentation_that_never_validates_leaves_lark_s_cuts() {
    let dir = scratch("refused");
    let (bad, _) = proposals(&dir, 0);
    let (mut c, u) = open_softmax(&format!("sh {} {}", double("segments.sh"), bad.display()));
    c.request("workspace/executeCommand", json!({ "command": "lark.proposeSegments", "arguments": [u, "softmax_rows"] }), LONG).unwrap();
    progress(&mut c, "lark/segments/", "begin");
    let end = progress(&mut c, "lark/segments/", "end");
    let message = end["params"]["value"]["message"].as_str().unwrap().to_string();
    assert!(message.starts_with("no segmentation of `softmax_rows`: no valid segmentation in 6 attempts; last: "), "{message}");
    let shown = c.wait_for(LONG, |m| m["method"] == "window/showMessage" && m["params"]["message"] == message.as_str()).expect("the outcome is shown");
    assert_eq!(shown["params"]["type"], 2);
    let after = show_lean(&mut c, &u);
    assert_eq!(after["segmentation"], "lark", "{after}");
    assert!(!after["text"].as_str().unwrap().contains("name := \"first\""));
    let _ = c.shutdown(Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_cancel_button_stops_a_hanging_segment_agent() {
    let (mut c, u) = open_softmax(&double("hang.sh"));
    c.request("workspace/executeCommand", json!({ "command": "lark.proposeSegments", "arguments": [u, "softmax_rows"] }), LONG).unwrap();
    let begin = progress(&mut c, "lark/segments/", "begin");
    // A second request for the same kernel is refused while the first runs.
    let again = c.request("workspace/executeCommand", json!({ "command": "lark.proposeSegments", "arguments": [u, "softmax_rows"] }), LONG);
    assert!(format!("{again:?}").contains("already being proposed"), "{again:?}");
    let started = std::time::Instant::now();
    c.notify("window/workDoneProgress/cancel", json!({ "token": begin["params"]["token"] }));
    let end = progress(&mut c, "lark/segments/", "end");
    assert_eq!(end["params"]["value"]["message"], "no segmentation of `softmax_rows`: cancelled", "{end}");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    // The server keeps serving, with LARK's cuts.
    assert_eq!(show_lean(&mut c, &u)["segmentation"], "lark");
    let _ = c.shutdown(Duration::from_secs(10));
}
