//! `lark check` and `lark serve` drive the engine through the same analysis host, so on every
//! corpus file they must agree: the same verdict per kernel (the CLI's JSON, the editor's code
//! lens), and the same findings (kind and PTX line) as the CLI reports and the editor diagnoses.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(120);
const FINDING_CODES: [&str; 4] = ["race", "barrier_divergence", "out_of_bounds", "mismatch"];

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus").canonicalize().unwrap()
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// Per kernel in file order: verdict; and the findings as (kind, 1-based PTX line).
fn from_cli(path: &Path) -> (Vec<String>, BTreeSet<(String, u64)>) {
    let out = Command::new(env!("CARGO_BIN_EXE_lark")).args(["check", &path.display().to_string(), "--format", "json"]).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{}: {e}: {}", path.display(), String::from_utf8_lossy(&out.stderr)));
    let kernels = doc["kernels"].as_array().unwrap();
    let verdicts = kernels.iter().map(|k| k["verdict"].as_str().unwrap().to_string()).collect();
    let findings = kernels
        .iter()
        .flat_map(|k| k["findings"].as_array().unwrap().iter())
        .filter_map(|f| {
            let line = f["accesses"][0]["ptx_line"].as_u64().or_else(|| f["barrier"]["ptx_line"].as_u64())?;
            Some((f["kind"].as_str().unwrap().to_string(), line))
        })
        .collect();
    (verdicts, findings)
}

#[test]
fn the_cli_and_the_language_server_agree_on_the_whole_corpus() {
    let dir = corpus();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "ptx")).collect();
    files.sort();
    assert!(files.len() >= 40, "{} corpus files", files.len());

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    c.initialize(&uri(&dir), json!({})).expect("initialize answers");
    let mut disagreements = Vec::new();
    for path in &files {
        let (cli_verdicts, cli_findings) = from_cli(path);
        let u = uri(path);
        let text = std::fs::read_to_string(path).unwrap();
        c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": u, "languageId": "ptx", "version": 1, "text": text } }));
        let published = c
            .wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == u.as_str() && m["params"]["version"] == 1)
            .unwrap_or_else(|| panic!("no diagnostics for {}", path.display()));
        let lsp_findings: BTreeSet<(String, u64)> = published["params"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| {
                let code = d["code"].as_str()?;
                FINDING_CODES.contains(&code).then(|| (code.to_string(), d["range"]["start"]["line"].as_u64().unwrap() + 1))
            })
            .collect();
        let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": u } }), LONG).unwrap();
        let lsp_verdicts: Vec<String> = lenses
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["command"]["command"] == "lark.recheck")
            .map(|l| l["command"]["title"].as_str().unwrap().split(" · ").next().unwrap().to_string())
            .collect();
        c.notify("textDocument/didClose", json!({ "textDocument": { "uri": u } }));
        let name = path.file_name().unwrap().to_string_lossy();
        if cli_verdicts != lsp_verdicts {
            disagreements.push(format!("{name}: verdicts: cli {cli_verdicts:?}, editor {lsp_verdicts:?}"));
        }
        // Every finding the CLI reports is diagnosed on the same line with the same code (the
        // editor may show more diagnostics: the other access of a race, related notes).
        let missing: Vec<_> = cli_findings.difference(&lsp_findings).collect();
        if !missing.is_empty() {
            disagreements.push(format!("{name}: findings the editor does not show: {missing:?} (editor: {lsp_findings:?})"));
        }
        let extra: Vec<_> = lsp_findings.iter().filter(|(code, _)| !cli_findings.iter().any(|(k, _)| k == code)).collect();
        if !extra.is_empty() {
            disagreements.push(format!("{name}: kinds of finding only the editor shows: {extra:?}"));
        }
    }
    let _ = c.shutdown(Duration::from_secs(10));
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
