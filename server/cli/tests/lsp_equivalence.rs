//! The equivalence check in the editor, through `lark serve` and a real LSP client: a kernel that
//! computes the wrong thing gets a `mismatch` error on the store that writes the wrong element,
//! with the counterexample; hover on that store shows what the element should equal and what the
//! kernel computes; on the fixed kernel the store's hover shows its formula and no error.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(120);

fn equiv_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/equiv").canonicalize().unwrap()
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// Opens a `.cu` of the equivalence corpus and returns its diagnostics and the hover on `line`
/// (0-based).
fn diagnose_and_hover(c: &mut StdioClient, file: &str, line: u32) -> (Vec<Value>, String) {
    let path = equiv_dir().join(file);
    let u = uri(&path);
    let text = std::fs::read_to_string(&path).unwrap();
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": u, "languageId": "cuda", "version": 1, "text": text } }));
    let published = c
        .wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == u.as_str() && m["params"]["version"] == 1)
        .unwrap_or_else(|| panic!("no diagnostics for {file}; inbox {:#?}", c.inbox));
    let hover = c.request("textDocument/hover", json!({ "textDocument": { "uri": u }, "position": { "line": line, "character": 60 } }), LONG).unwrap();
    let md = hover["contents"]["value"].as_str().unwrap_or_default().to_string();
    (published["params"]["diagnostics"].as_array().unwrap().clone(), md)
}

#[test]
fn a_mismatch_is_an_error_on_the_store_and_hover_shows_both_formulas() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    c.initialize(&uri(&equiv_dir()), json!({})).expect("initialize answers");

    // softmax_rows_bug divides by the row max instead of the row sum (line 31).
    let (diags, md) = diagnose_and_hover(&mut c, "softmax_rows_bug.cu", 30);
    let mismatch: Vec<&Value> = diags.iter().filter(|d| d["code"] == "mismatch").collect();
    assert_eq!(mismatch.len(), 1, "{diags:#?}");
    let d = mismatch[0];
    assert_eq!(d["severity"], 1, "an error: {d}");
    assert_eq!(d["range"]["start"]["line"], 30, "on the store: {d}");
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("mismatch with the reference for cols="), "{message}");
    assert!(message.contains("but the reference computes"), "{message}");
    assert!(message.contains("written by thread"), "{message}");
    // The kernel's formula shows the bug: it divides by the row max (written as a range), at the
    // smaller of the two listed shapes (smallest shapes are checked first).
    assert!(message.contains("the kernel computes max(x[0, 0..99])⁻¹·exp(x[0, 0] - max(x[0, 0..99]))"), "{message}");
    assert!(md.contains("softmax_rows_bug") && md.contains("mismatch"), "{md}");
    assert!(md.contains("**mismatch**: mismatch with the reference"), "{md}");
    assert!(md.contains("the kernel computes") && md.contains("where the reference computes"), "{md}");

    // The fixed kernel: no error, and hover on the same store shows the formula it writes.
    let (diags, md) = diagnose_and_hover(&mut c, "softmax_rows.cu", 30);
    assert!(diags.iter().all(|d| d["severity"] != 1), "{diags:#?}");
    assert!(md.contains("softmax_rows`**: verified"), "{md}");
    assert!(md.contains("Values stored (equivalence check):"), "{md}");
    assert!(md.contains("- `y[0] = ") && md.contains("exp("), "{md}");
    let _ = c.shutdown(Duration::from_secs(10));
}
