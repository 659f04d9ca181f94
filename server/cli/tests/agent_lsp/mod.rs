//! What the language-server tests of the agent actions (`lsp_certify.rs`, `lsp_segments.rs`)
//! share: the server started with a (labelled test-double) agent on the softmax of `tests/lean`,
//! and the progress notifications of one kind of background run.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub const LONG: Duration = Duration::from_secs(120);

pub fn lean_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lean").canonicalize().unwrap()
}

/// A labelled test-double agent script of `server/agent/tests/agents`.
pub fn double(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent/tests/agents").join(name).canonicalize().unwrap().display().to_string()
}

pub fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// Starts the server with `agent` as the agent command and opens the softmax; returns the
/// client and the document's URI once its first diagnostics arrived.
pub fn open_softmax(agent: &str) -> (StdioClient, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    c.initialize(&uri(&lean_dir()), json!({ "agent": { "command": agent } })).expect("initialize answers");
    let path = lean_dir().join("softmax_rows.cu");
    let u = uri(&path);
    let text = std::fs::read_to_string(&path).unwrap();
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": u, "languageId": "cuda", "version": 1, "text": text } }));
    c.wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == u.as_str()).expect("diagnostics");
    (c, u)
}

/// The next `$/progress` of `kind` (`begin`, `report`, `end`) whose token starts with `prefix`
/// (`lark/certify/`, `lark/segments/`).
pub fn progress(c: &mut StdioClient, prefix: &str, kind: &str) -> Value {
    c.wait_for(LONG, |m| {
        m["method"] == "$/progress" && m["params"]["value"]["kind"] == kind && m["params"]["token"].as_str().is_some_and(|t| t.starts_with(prefix))
    })
    .unwrap_or_else(|| panic!("no `{kind}` progress; inbox {:#?}", c.inbox))
}
