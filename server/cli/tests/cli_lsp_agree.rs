//! `lark check` and `lark serve` drive the engine through the same analysis host, so on every
//! corpus file they must agree: the same verdict per kernel (the CLI's JSON, the editor's code
//! lens), and the same findings (kind and PTX line) as the CLI reports and the editor diagnoses.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
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

/// A file as the CLI saw it: kernel verdicts, and findings with their lines.
type CliFile = (Vec<String>, Vec<(String, Vec<u64>)>);

/// Per file: the verdict of each kernel in file order, and the findings as (kind, the 1-based PTX
/// lines of its accesses or barrier). One `lark check` of all files (checked in parallel).
fn from_cli(files: &[PathBuf]) -> BTreeMap<PathBuf, CliFile> {
    let out = Command::new(env!("CARGO_BIN_EXE_lark")).arg("check").args(files).args(["--format", "json"]).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut by_file: BTreeMap<PathBuf, CliFile> = files.iter().map(|f| (f.clone(), Default::default())).collect();
    for k in doc["kernels"].as_array().unwrap() {
        let file = PathBuf::from(k["file"].as_str().unwrap());
        let entry = by_file.entry(file).or_default();
        entry.0.push(k["verdict"].as_str().unwrap().to_string());
        for f in k["findings"].as_array().unwrap() {
            let mut lines: Vec<u64> = f["accesses"].as_array().into_iter().flatten().filter_map(|a| a["ptx_line"].as_u64()).collect();
            lines.extend(f["barrier"]["ptx_line"].as_u64());
            entry.1.push((f["kind"].as_str().unwrap().to_string(), lines));
        }
    }
    by_file
}

#[test]
fn the_cli_and_the_language_server_agree_on_the_whole_corpus() {
    let dir = corpus();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "ptx")).collect();
    files.sort();
    assert!(files.len() >= 40, "{} corpus files", files.len());
    let cli = from_cli(&files);

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    c.initialize(&uri(&dir), json!({})).expect("initialize answers");
    // All files open at once, as in a workspace: the server checks them side by side.
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri(path), "languageId": "ptx", "version": 1, "text": text } }));
    }
    let mut disagreements = Vec::new();
    for path in &files {
        let (cli_verdicts, cli_findings) = &cli[path];
        let u = uri(path);
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
        let name = path.file_name().unwrap().to_string_lossy();
        if *cli_verdicts != lsp_verdicts {
            // A kernel near its time budget may run out of it in one run and not in the other
            // (the two run side by side with other checks): that is timing, not disagreement.
            let timing = cli_verdicts.len() == lsp_verdicts.len()
                && cli_verdicts.iter().zip(&lsp_verdicts).all(|(a, b)| a == b || a == "uncertified" || b == "uncertified");
            if timing {
                eprintln!("{name}: cli {cli_verdicts:?}, editor {lsp_verdicts:?} (a kernel ran out of its budget in one of them)");
                continue;
            }
            disagreements.push(format!("{name}: verdicts: cli {cli_verdicts:?}, editor {lsp_verdicts:?}"));
        }
        // Every finding the CLI reports is diagnosed with the same code on one of its lines (a
        // race is shown on one access, the other is related information).
        for (kind, lines) in cli_findings {
            if !lsp_findings.iter().any(|(code, line)| code == kind && lines.contains(line)) {
                disagreements.push(format!("{name}: the editor does not show the {kind} at lines {lines:?} (editor: {lsp_findings:?})"));
            }
        }
        for (code, line) in &lsp_findings {
            if !cli_findings.iter().any(|(kind, lines)| kind == code && lines.contains(line)) {
                disagreements.push(format!("{name}: only the editor shows a {code} at line {line}"));
            }
        }
    }
    let _ = c.shutdown(Duration::from_secs(10));
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
