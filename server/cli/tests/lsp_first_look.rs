//! The first look end to end, through `lark serve`: a kernel opened with no `lark.toml` is
//! checked for every launch the hardware allows, which takes seconds on real kernels, so the
//! server first publishes a quick check at one assumed launch (only preliminary warnings, or
//! nothing), then the general check's diagnostics replace it, equal to what `lark check` says.
//! Times are printed, never asserted (CI machines are slow): the tests assert order and content.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/real");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ide/tests/fixtures");
const LONG: Duration = Duration::from_secs(120);
const FINDING_CODES: [&str; 4] = ["race", "barrier_divergence", "out_of_bounds", "mismatch"];

/// A folder with no `lark.toml` holding `files` (and the headers the real kernels include).
fn no_setup(name: &str, files: &[PathBuf]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-first-look-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let headers = std::fs::read_dir(REAL).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "h"));
    for f in files.iter().cloned().chain(headers) {
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    dir
}

/// A real kernel's `.ptx` and the `.cu` it was compiled from (`name` relative to `tests/real`,
/// e.g. `bugs/ggml_fa_partial_warp_sync`).
fn real(name: &str) -> Vec<PathBuf> {
    vec![Path::new(REAL).join(format!("{name}.ptx")), Path::new(REAL).join(format!("{name}.cu"))]
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

fn start(dir: &Path, options: Value) -> StdioClient {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve").env("LARK_DEBUG_PANIC", "1");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    c.initialize(&uri(dir), options).expect("initialize answers");
    c
}

fn open(c: &mut StdioClient, path: &Path) -> String {
    let u = uri(path);
    let language = if path.extension().is_some_and(|x| x == "ptx") { "ptx" } else { "cuda-cpp" };
    let text = std::fs::read_to_string(path).unwrap();
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": u, "languageId": language, "version": 1, "text": text } }));
    u
}

/// One `publishDiagnostics`, and when it arrived (since `since`).
struct Publish {
    at: Duration,
    diagnostics: Vec<Value>,
}

/// Every `publishDiagnostics` of `uri` at `version` up to the final one (the server sends
/// `lark/fileStatus` right after it), in the order they arrived. Messages for other versions
/// are counted in `others`.
fn publishes_until_final(c: &mut StdioClient, u: &str, version: i64, since: Instant) -> (Vec<Publish>, Vec<Value>) {
    let mut out = Vec::new();
    let mut others = Vec::new();
    loop {
        let m = c
            .wait_for(LONG, |m| (m["method"] == "textDocument/publishDiagnostics" || m["method"] == "lark/fileStatus") && m["params"]["uri"] == u)
            .unwrap_or_else(|| panic!("no final diagnostics for {u} v{version}"));
        if m["params"]["version"] != version {
            others.push(m);
            continue;
        }
        if m["method"] == "lark/fileStatus" {
            return (out, others);
        }
        out.push(Publish { at: since.elapsed(), diagnostics: m["params"]["diagnostics"].as_array().unwrap().clone() });
    }
}

fn is_preliminary(d: &Value) -> bool {
    d["data"]["preliminary"] == true
}

/// A finding as `lark check` reports it: its kind, whether it is a warning, and the 1-based PTX
/// lines of its accesses or barrier.
type CliFinding = (String, bool, Vec<u64>);

/// What `lark check` says of a file: each kernel's verdict, and its findings.
fn cli_check(path: &Path) -> (Vec<String>, Vec<CliFinding>) {
    let out = Command::new(env!("CARGO_BIN_EXE_lark")).arg("check").arg(path).args(["--format", "json"]).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut verdicts = Vec::new();
    let mut findings = Vec::new();
    for k in doc["kernels"].as_array().unwrap() {
        verdicts.push(k["verdict"].as_str().unwrap().to_string());
        for f in k["findings"].as_array().unwrap() {
            let mut lines: Vec<u64> = f["accesses"].as_array().into_iter().flatten().filter_map(|a| a["ptx_line"].as_u64()).collect();
            lines.extend(f["barrier"]["ptx_line"].as_u64());
            let undeclared_input = f["inputs"].as_array().into_iter().flatten().any(|i| i["declared"] == false);
            let warning = !f["assumed_launch"].is_null() || !f["assumed_scalars"].is_null() || !f["benign"].is_null() || undeclared_input;
            findings.push((f["kind"].as_str().unwrap().to_string(), warning, lines));
        }
    }
    (verdicts, findings)
}

/// The verdict lens of each kernel, in file order.
fn lens_verdicts(c: &mut StdioClient, u: &str) -> Vec<String> {
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": u } }), LONG).unwrap();
    lenses
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["command"]["command"] == "lark.recheck")
        .map(|l| l["command"]["title"].as_str().unwrap().split(" · ").next().unwrap().to_string())
        .collect()
}

/// The rope kernel of llama.cpp (ggml): with no interface, the general check takes most of its
/// budget (its findings need undeclared sizes: an odd row length overlaps two threads' pairs).
const SLOW_KERNEL: &str = "ggml_rope_neox";

/// A reconstruction of a llama.cpp bug (the SSM scan's missing barrier): with no interface the
/// general check takes seconds and its two races are errors at every launch, the same in every
/// run. (rope's findings are decided near the end of its budget, so which of them a run decides
/// varies; comparing two runs needs a kernel whose answer does not.)
const SLOW_BUGGY_KERNEL: &str = "bugs/ggml_ssm_scan_missing_sync";

#[test]
fn a_first_look_comes_first_and_the_general_check_replaces_it() {
    let files = real(SLOW_BUGGY_KERNEL);
    let dir = no_setup("slow", &files);
    let name = SLOW_BUGGY_KERNEL.rsplit('/').next().unwrap();
    let ptx = dir.join(format!("{name}.ptx"));
    let (cli_verdicts, cli_findings) = cli_check(&ptx);

    let mut c = start(&dir, json!({}));
    let started = Instant::now();
    let u = open(&mut c, &ptx);
    let (publishes, _) = publishes_until_final(&mut c, &u, 1, started);
    assert_eq!(publishes.len(), 2, "a first look, then the general check");
    let (first, last) = (&publishes[0], &publishes[1]);
    eprintln!("{name}: first look after {:?}, general check after {:?}", first.at, last.at);
    // The first look shows no error, and what it found says it is preliminary.
    for d in &first.diagnostics {
        assert!(d["severity"].as_u64().unwrap() >= 2, "a first look shows no error: {d:#}");
        if FINDING_CODES.contains(&d["code"].as_str().unwrap()) {
            assert!(is_preliminary(d), "{d:#}");
            assert!(d["message"].as_str().unwrap().contains("at the launch LARK assumed for a first look: grid ["), "{d:#}");
        }
    }
    // The general check's diagnostics are final and say what `lark check` says.
    assert!(last.diagnostics.iter().all(|d| !is_preliminary(d)), "{:#?}", last.diagnostics);
    let lsp_findings: Vec<(String, bool, u64)> = last
        .diagnostics
        .iter()
        .filter(|d| FINDING_CODES.contains(&d["code"].as_str().unwrap()))
        .map(|d| (d["code"].as_str().unwrap().to_string(), d["severity"] == 2, d["range"]["start"]["line"].as_u64().unwrap() + 1))
        .collect();
    // The same in every run, warnings included: every solver query is answered afresh, so the
    // editor's check and the CLI's find the same witnesses.
    assert_eq!(lsp_findings.len(), cli_findings.len(), "editor {lsp_findings:?}, cli {cli_findings:?}");
    for (kind, warning, lines) in &cli_findings {
        assert!(
            lsp_findings.iter().any(|(code, w, line)| code == kind && w == warning && lines.contains(line)),
            "the editor does not show the {kind} at lines {lines:?}: {lsp_findings:?}"
        );
    }
    assert!(cli_verdicts.iter().any(|v| v != "verified"), "the kernel has something to show: {cli_verdicts:?}");
    assert_eq!(lens_verdicts(&mut c, &u), cli_verdicts);
    c.shutdown(Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_edit_during_the_general_check_cancels_it() {
    let files = real(SLOW_KERNEL);
    let dir = no_setup("edit", &files);
    let ptx = dir.join(format!("{SLOW_KERNEL}.ptx"));
    let mut c = start(&dir, json!({}));
    let u = open(&mut c, &ptx);
    // The first look of version 1, then an edit while its general check runs.
    c.wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == u.as_str() && m["params"]["version"] == 1)
        .expect("a first look");
    let lines = std::fs::read_to_string(&ptx).unwrap().lines().count();
    let end = json!({ "line": lines, "character": 0 });
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": u, "version": 2 }, "contentChanges": [{ "range": { "start": end, "end": end }, "text": "// edited\n" }] }),
    );
    let (publishes, others) = publishes_until_final(&mut c, &u, 2, Instant::now());
    assert!(!publishes.is_empty());
    assert!(others.is_empty(), "nothing more of version 1 is published once version 2 arrived: {others:#?}");
    c.shutdown(Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_declared_launch_or_the_setting_off_publishes_once() {
    let fixture = Path::new(FIXTURES).join("no_setup_sized_shared.cu");
    // Declared: the kernel is checked at its launch at once.
    let dir = no_setup("declared", std::slice::from_ref(&fixture));
    std::fs::write(dir.join("lark.toml"), "[kernel.block_sum]\ngrid = [4, 1, 1]\nblock = [256, 1, 1]\n").unwrap();
    let mut c = start(&dir, json!({}));
    let u = open(&mut c, &dir.join("no_setup_sized_shared.cu"));
    let (publishes, _) = publishes_until_final(&mut c, &u, 1, Instant::now());
    assert_eq!(publishes.len(), 1, "{:#?}", publishes.iter().map(|p| &p.diagnostics).collect::<Vec<_>>());
    c.shutdown(Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(&dir);
    // Undeclared, with the first look turned off: only the general check is published.
    let dir = no_setup("off", &[fixture]);
    let mut c = start(&dir, json!({ "firstLook": false }));
    let u = open(&mut c, &dir.join("no_setup_sized_shared.cu"));
    let (publishes, _) = publishes_until_final(&mut c, &u, 1, Instant::now());
    assert_eq!(publishes.len(), 1);
    assert!(publishes[0].diagnostics.iter().any(|d| d["code"] == "out_of_bounds" && !is_preliminary(d)), "{:#?}", publishes[0].diagnostics);
    c.shutdown(Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Prints the time to the first and to the final publish for the no-setup fixtures and a few
/// real kernels, each opened alone in a fresh server. `LARK_FIRST_LOOK_MEASURE` names other
/// real kernels to measure instead (comma-separated, relative to `tests/real`).
#[test]
fn first_look_latency() {
    let mut cases: Vec<(String, Vec<PathBuf>, String)> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("no_setup_"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name.clone(), vec![p], name)
        })
        .collect();
    cases.sort();
    let measure = std::env::var("LARK_FIRST_LOOK_MEASURE").unwrap_or_else(|_| "ggml_get_rows,llmc_gelu,llmc_attention_permute".into());
    for name in measure.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let base = name.rsplit('/').next().unwrap_or(name);
        cases.push((base.to_string(), real(name), format!("{base}.ptx")));
    }
    eprintln!("{:<32} {:>12} {:>12} {:>16}  first look", "file", "first (ms)", "final (ms)", "without it (ms)");
    for (name, files, open_name) in cases {
        let dir = no_setup(&format!("latency-{name}"), &files);
        // Each in a fresh server (nothing cached), with the first look and without it.
        let run = |options: Value| {
            let mut c = start(&dir, options);
            let started = Instant::now();
            let u = open(&mut c, &dir.join(&open_name));
            let (publishes, _) = publishes_until_final(&mut c, &u, 1, started);
            c.shutdown(Duration::from_secs(10));
            publishes
        };
        let publishes = run(json!({}));
        let without = run(json!({ "firstLook": false }));
        let ms = |p: Option<&Publish>| p.map_or(0.0, |p| p.at.as_secs_f64() * 1e3);
        let preliminary = publishes.iter().flat_map(|p| &p.diagnostics).filter(|d| is_preliminary(d)).count();
        let look = if publishes.len() > 1 { format!("yes ({preliminary} preliminary)") } else { "none".to_string() };
        eprintln!("{name:<32} {:>12.0} {:>12.0} {:>16.0}  {look}", ms(publishes.first()), ms(publishes.last()), ms(without.last()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
