//! The Lean side in the editor, through `lark serve` and a real LSP client, on a softmax with a
//! reference (`tests/lean`): hover on a line shows its segment and the Lean statement of that
//! segment's obligation, marked unproved; `lark.showLean` returns the generated module as a
//! read-only `lark-lean:` document; each segment of the verified kernel is an information-level
//! "uncertified region"; the code lens counts proved obligations (none: no certificate exists).

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(120);

fn lean_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lean").canonicalize().unwrap()
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

#[test]
fn hover_virtual_document_regions_and_lens_show_the_obligations() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    c.initialize(&uri(&lean_dir()), json!({})).expect("initialize answers");
    let path = lean_dir().join("softmax_rows.cu");
    let u = uri(&path);
    let text = std::fs::read_to_string(&path).unwrap();
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": u, "languageId": "cuda", "version": 1, "text": text } }));
    let published = c
        .wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == u.as_str() && m["params"]["version"] == 1)
        .unwrap_or_else(|| panic!("no diagnostics; inbox {:#?}", c.inbox));
    let diags = published["params"]["diagnostics"].as_array().unwrap().clone();

    // Uncertified regions: information, one per segment, naming it; nothing worse.
    assert!(diags.iter().all(|d| d["severity"] == 3), "{diags:#?}");
    let regions: Vec<&Value> = diags.iter().filter(|d| d["code"] == "uncertified-region").collect();
    assert!(regions.len() >= 3, "{diags:#?}");
    let store = regions.iter().find(|d| d["message"].as_str().unwrap().contains("store_loop")).unwrap_or_else(|| panic!("{regions:#?}"));
    assert_eq!(store["range"]["start"]["line"], 30, "the store loop is line 31: {store}");
    assert!(store["message"].as_str().unwrap().contains("has no Lean certificate"), "{store}");

    // Hover on the store (line 31): its segment, the statement of its obligation, unproved.
    let hover = c.request("textDocument/hover", json!({ "textDocument": { "uri": u }, "position": { "line": 30, "character": 40 } }), LONG).unwrap();
    let md = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(md.contains("**Lean** (`LarkGen.softmax_rows`, 0/5 obligations proved): line 31 is in segment"), "{md}");
    assert!(md.contains("`s11_store_loop` (loop computing and storing outputs)"), "{md}");
    assert!(md.contains("`s11_store_loop_agrees` — **unproved** (no certificate)"), "{md}");
    assert!(md.contains("```lean\ndef s11_store_loop_agrees : Prop :="), "{md}");
    assert!(md.contains("OutputsAgree g arg (RGraph.value I x reference) s11_store_loop_cells"), "{md}");
    assert!(md.contains("`race_free`, `barrier_aligned`, `in_bounds`, `completes` — **unproved** (no certificate)"), "{md}");
    assert!(!md.contains("**proved**") && !md.contains("certified"), "nothing is proved without Lean: {md}");

    // Hover on `s_max = red[0]` (line 19): what that segment leaves in shared memory, stated as
    // an intermediate statement (the row maximum is a node of the reference).
    let hover = c.request("textDocument/hover", json!({ "textDocument": { "uri": u }, "position": { "line": 18, "character": 20 } }), LONG).unwrap();
    let md = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(md.contains("_shared_exchange_establishes` — intermediate statement, unproved"), "{md}");
    assert!(md.contains("SharedAgree inputs r.snapshots (RGraph.value I x stateGraph)"), "{md}");
    assert!(md.contains("1 of them reference sub-expressions"), "{md}");

    // The code lens counts proved obligations, and opens the module.
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": u } }), LONG).unwrap();
    let lean_lens = lenses.as_array().unwrap().iter().find(|l| l["command"]["command"] == "lark.showLeanForFile").unwrap_or_else(|| panic!("{lenses:#?}"));
    assert_eq!(lean_lens["command"]["title"], "0/5 Lean obligations proved", "{lean_lens}");
    let args = lean_lens["command"]["arguments"].clone();
    assert_eq!(args[1], "softmax_rows", "{args}");

    // The command behind it returns the module as a lark-lean: document.
    let shown = c.request("workspace/executeCommand", json!({ "command": "lark.showLean", "arguments": args }), LONG).unwrap();
    assert_eq!(shown["uri"], "lark-lean:/softmax_rows.cu/softmax_rows.lean", "{shown}");
    let module = shown["text"].as_str().unwrap();
    assert!(module.starts_with("-- Generated by LARK from `softmax_rows.cu`"), "{}", &module[..200]);
    assert!(module.contains("namespace LarkGen.softmax_rows") && module.contains("theorem correct_of_obligations"), "{module}");
    // An unknown kernel is a clear error, not a crash.
    let err = c.request("workspace/executeCommand", json!({ "command": "lark.showLean", "arguments": [u, "nosuch"] }), LONG);
    assert!(format!("{err:?}").contains("no kernel named `nosuch`"), "{err:?}");
    let _ = c.shutdown(Duration::from_secs(10));
}
