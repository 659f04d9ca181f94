//! `lark serve` end to end: the real binary, spoken to over stdio with JSON-RPC framing, on
//! corpus kernels copied into a temporary workspace.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus");
const LONG: Duration = Duration::from_secs(60);

fn workspace(name: &str, files: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-lsp-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(Path::new(CORPUS).join("lark.toml"), dir.join("lark.toml")).unwrap();
    for f in files {
        std::fs::copy(Path::new(CORPUS).join(f), dir.join(f)).unwrap();
    }
    dir
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

fn start(dir: &Path, options: Value) -> StdioClient {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve").env("LARK_DEBUG_PANIC", "1");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    let init = c.initialize(&uri(dir), options).expect("initialize answers");
    let cmds = &init["capabilities"]["executeCommandProvider"]["commands"];
    assert_eq!(cmds, &json!(["lark.recheck", "lark.showModel", "lark.showLean", "lark.certify", "lark.cancelCertify", "lark.proposeSegments"]));
    assert_eq!(init["capabilities"]["textDocumentSync"]["change"], 2, "incremental sync");
    c
}

fn open(c: &mut StdioClient, path: &Path, language: &str, text: &str) -> String {
    let u = uri(path);
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": u, "languageId": language, "version": 1, "text": text } }));
    u
}

/// The next `publishDiagnostics` for `uri` with `version`, skipping older ones.
fn diagnostics(c: &mut StdioClient, uri: &str, version: i64) -> Vec<Value> {
    let m = c
        .wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri && m["params"]["version"] == version)
        .unwrap_or_else(|| panic!("no diagnostics for {uri} v{version}; inbox: {:#?}", c.inbox));
    m["params"]["diagnostics"].as_array().unwrap().clone()
}

fn change(c: &mut StdioClient, uri: &str, version: i64, changes: Value) {
    c.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": changes }));
}

fn range(l1: usize, c1: usize, l2: usize, c2: usize) -> Value {
    json!({ "start": { "line": l1, "character": c1 }, "end": { "line": l2, "character": c2 } })
}

/// The UTF-16 column of byte offset `col` in `line`.
fn utf16(line: &str, col: usize) -> usize {
    line[..col].encode_utf16().count()
}

/// The code actions for `range`, asked again (as an editor does on cursor moves) until one
/// whose title contains `title` is among them: the server answers within a second with what it
/// has, and a longer fix search goes on in the background.
fn code_actions_with(c: &mut StdioClient, uri: &str, range: &Value, diagnostics: Value, title: &str) -> Vec<Value> {
    let deadline = Instant::now() + LONG;
    loop {
        let params = json!({ "textDocument": { "uri": uri }, "range": range, "context": { "diagnostics": diagnostics } });
        let started = Instant::now();
        let actions = c.request("textDocument/codeAction", params, LONG).unwrap().as_array().cloned().unwrap_or_default();
        assert!(started.elapsed() < Duration::from_secs(2), "a code action request took {:?}", started.elapsed());
        if actions.iter().any(|a| a["title"].as_str().unwrap().contains(title)) {
            return actions;
        }
        assert!(Instant::now() < deadline, "no code action with `{title}`: {actions:#?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn race(diags: &[Value]) -> &Value {
    diags.iter().find(|d| d["code"] == "race").unwrap_or_else(|| panic!("no race in {diags:#?}"))
}

/// Applies LSP text edits (as a client would) to `text`.
fn apply(text: &str, edits: &[Value]) -> String {
    let mut out = text.to_string();
    let mut edits = edits.to_vec();
    edits.sort_by_key(|e| std::cmp::Reverse((e["range"]["start"]["line"].as_u64(), e["range"]["start"]["character"].as_u64())));
    for e in edits {
        let at = |p: &Value| {
            let line = p["line"].as_u64().unwrap() as usize;
            let start: usize = out.split_inclusive('\n').take(line).map(str::len).sum();
            let l = out[start..].split('\n').next().unwrap();
            let mut units = 0;
            let want = p["character"].as_u64().unwrap() as usize;
            start
                + l.char_indices()
                    .find(|(_, ch)| {
                        let r = units >= want;
                        units += ch.len_utf16();
                        r
                    })
                    .map_or(l.len(), |(i, _)| i)
        };
        let (a, b) = (at(&e["range"]["start"]), at(&e["range"]["end"]));
        out.replace_range(a..b, e["newText"].as_str().unwrap());
    }
    out
}

#[test]
fn races_in_cuda_and_ptx_are_diagnosed_explained_fixed_and_cleared() {
    let dir = workspace("race", &["reduce_missing_sync.cu", "reduce_missing_sync.ptx"]);
    let mut c = start(&dir, json!({ "smt": { "timeoutMs": 2000 } }));
    let cu_path = dir.join("reduce_missing_sync.cu");
    let cu_text = std::fs::read_to_string(&cu_path).unwrap();
    let cu = open(&mut c, &cu_path, "cuda-cpp", &cu_text);
    let ptx_path = dir.join("reduce_missing_sync.ptx");
    let ptx_text = std::fs::read_to_string(&ptx_path).unwrap();
    let ptx = open(&mut c, &ptx_path, "ptx", &ptx_text);

    // The race in the .cu: on line 10 (0-based 9), the other access related, the counterexample
    // in the message, the finding in `data`.
    let d = diagnostics(&mut c, &cu, 1);
    let r = race(&d);
    assert_eq!(r["source"], "lark");
    assert_eq!(r["severity"], 1);
    assert_eq!(r["codeDescription"]["href"], "https://github.com/lark-verifier/lark#race");
    assert_eq!(r["range"], range(9, 6, 9, 32), "the trimmed line `s[tid] += s[tid + stride];`");
    let msg = r["message"].as_str().unwrap();
    assert!(msg.starts_with("data race on shared s[") && msg.contains("thread (0,0,0)/(") && msg.contains("at line 10"), "{msg}");
    assert_eq!(r["relatedInformation"][0]["location"]["uri"], cu);
    assert_eq!(r["relatedInformation"][0]["location"]["range"]["start"]["line"], 9);
    assert_eq!(r["data"]["kind"], "race");
    assert_eq!(r["data"]["kernel"], "reduce_missing_sync");
    assert_eq!(r["data"]["accesses"].as_array().unwrap().len(), 2);
    let status = c.notification("lark/fileStatus", Some(&cu), LONG).expect("a file status");
    assert_eq!(status["params"]["kernels"][0]["name"], "reduce_missing_sync");
    assert_eq!(status["params"]["kernels"][0]["verdict"], "race");
    assert!(status["params"]["kernels"][0]["millis"].as_f64().unwrap() > 0.0);

    // The same race in the .ptx, on PTX lines (the `.loc`s point into the .cu).
    let ptx_diags = diagnostics(&mut c, &ptx, 1);
    let r = race(&ptx_diags);
    let line = r["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(ptx_text.lines().nth(line).unwrap().trim().starts_with("st.shared.f32"), "{r}");
    let related = r["relatedInformation"][0]["location"]["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(ptx_text.lines().nth(related).unwrap().trim().starts_with("ld.shared.f32"));

    // Hover on line 10 of the .cu: verdict, phase, accesses with symbolic addresses.
    let h = c.request("textDocument/hover", json!({ "textDocument": { "uri": cu }, "position": { "line": 9, "character": 8 } }), LONG).unwrap();
    let md = h["contents"]["value"].as_str().unwrap();
    assert_eq!(h["contents"]["kind"], "markdown");
    assert!(md.contains("**`reduce_missing_sync`**: race"), "{md}");
    assert!(md.contains("the phase after the barrier at line 7"), "{md}");
    assert!(md.contains("- read shared `s[") && md.contains("- write shared `s["), "{md}");

    // Code lenses above the kernel: verdict and time, recheck and show model.
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": cu } }), LONG).unwrap();
    let lenses = lenses.as_array().unwrap();
    assert_eq!(lenses[0]["range"]["start"]["line"], 1);
    let title = lenses[0]["command"]["title"].as_str().unwrap();
    assert!(title.starts_with("race · ") && title.ends_with(" ms"), "{title}");
    assert_eq!(lenses[0]["command"]["command"], "lark.recheck");
    assert_eq!(lenses[0]["command"]["arguments"], json!([cu]));
    assert_eq!(lenses[1]["command"]["command"], "lark.showModelForFile");

    // Commands.
    let model = c.request("workspace/executeCommand", json!({ "command": "lark.showModel", "arguments": [cu] }), LONG).unwrap();
    assert!(model.as_str().unwrap().contains("kernel reduce_missing_sync"), "{model}");
    assert!(model.as_str().unwrap().contains("phase after barrier at line 7"), "{model}");
    let before = c.request("lark/stats", Value::Null, LONG).unwrap()["kernelChecks"].as_u64().unwrap();
    assert_eq!(c.request("workspace/executeCommand", json!({ "command": "lark.recheck", "arguments": [cu] }), LONG).unwrap(), Value::Null);
    assert_eq!(race(&diagnostics(&mut c, &cu, 1))["code"], "race");
    let after = c.request("lark/stats", Value::Null, LONG).unwrap()["kernelChecks"].as_u64().unwrap();
    assert_eq!(after, before + 1, "recheck drops the cache");

    // Insert the barrier in the .cu by hand, after the `if` inside the loop: the race is gone.
    change(&mut c, &cu, 2, json!([{ "range": range(11, 0, 11, 0), "text": "    __syncthreads();\n" }]));
    let d = diagnostics(&mut c, &cu, 2);
    assert!(d.iter().all(|d| d["code"] != "race" && d["severity"] == 3), "{d:#?}");

    // The barrier code action on the .ptx race, applied, re-checked: the race is gone.
    let r = race(&ptx_diags).clone();
    let actions = code_actions_with(&mut c, &ptx, &r["range"], json!([r]), "bar.sync 0;");
    let fix = actions.iter().find(|a| a["title"].as_str().unwrap().contains("bar.sync 0;")).unwrap_or_else(|| panic!("no barrier fix in {actions:#?}"));
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(fix["isPreferred"], true);
    assert_eq!(fix["diagnostics"][0]["code"], "race");
    let doc_edit = &fix["edit"]["documentChanges"][0];
    assert_eq!(doc_edit["textDocument"]["uri"], ptx);
    let fixed = apply(&ptx_text, doc_edit["edits"].as_array().unwrap());
    assert!(fixed.contains("bar.sync 0;\n") && fixed.lines().count() == ptx_text.lines().count() + 1);
    change(&mut c, &ptx, 2, json!([{ "text": fixed }]));
    let d = diagnostics(&mut c, &ptx, 2);
    assert!(d.iter().all(|d| d["code"] != "race" && d["code"] != "barrier_divergence"), "{d:#?}");

    let status = c.shutdown(Duration::from_secs(10)).expect("the server exits after shutdown + exit, stdin still open");
    assert!(status.success(), "{status:?}");
}

#[test]
fn the_cuda_barrier_code_action_is_rechecked_before_it_is_offered() {
    let dir = workspace("cufix", &["reduce_missing_sync.cu"]);
    let mut c = start(&dir, json!({}));
    let path = dir.join("reduce_missing_sync.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let u = open(&mut c, &path, "cuda-cpp", &text);
    let r = race(&diagnostics(&mut c, &u, 1)).clone();
    let actions = code_actions_with(&mut c, &u, &r["range"], json!([r]), "__syncthreads();");
    let fix = actions.iter().find(|a| a["title"].as_str().unwrap().contains("__syncthreads();")).unwrap_or_else(|| panic!("{actions:#?}"));
    // Not before line 10 (inside the `if`: divergence), but after the `if`, inside the loop.
    assert!(fix["title"].as_str().unwrap().contains("before line 12"), "{}", fix["title"]);
    let fixed = apply(&text, fix["edit"]["documentChanges"][0]["edits"].as_array().unwrap());
    assert_eq!(fixed.lines().nth(11), Some("    __syncthreads();"));
    change(&mut c, &u, 2, json!([{ "text": fixed }]));
    assert!(diagnostics(&mut c, &u, 2).iter().all(|d| d["code"] != "race"));
    c.shutdown(Duration::from_secs(10));
}

#[test]
fn rapid_edits_never_publish_stale_results() {
    let dir = workspace("rapid", &["reduce_missing_sync.cu"]);
    let mut c = start(&dir, json!({}));
    let path = dir.join("reduce_missing_sync.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let u = open(&mut c, &path, "cuda-cpp", &text);
    diagnostics(&mut c, &u, 1);
    // Ten versions in quick succession: the kernel's shared array grows, so every version is a
    // different kernel to check.
    for v in 2..=11 {
        let line3 = format!("  __shared__ float s[{}];", 256 + v);
        change(&mut c, &u, v, json!([{ "range": range(2, 0, 2, 100), "text": line3 }]));
        std::thread::sleep(Duration::from_millis(15));
    }
    let is_publish = |m: &Value| m["method"] == "textDocument/publishDiagnostics";
    let mut versions = vec![1];
    while versions.last() != Some(&11) {
        let m = c.wait_for(LONG, is_publish).unwrap_or_else(|| panic!("the last version was not published; saw {versions:?}"));
        versions.push(m["params"]["version"].as_i64().unwrap());
    }
    assert!(versions.windows(2).all(|w| w[0] <= w[1]), "published versions go back: {versions:?}");
    // Anything published afterwards would be stale.
    let later = c.wait_for(Duration::from_millis(1500), is_publish);
    assert!(later.is_none(), "published after the last version: {later:#?}");
    c.shutdown(Duration::from_secs(10));
}

#[test]
fn garbage_text_a_missing_compiler_and_a_panic_leave_the_server_serving() {
    let dir = workspace("bad", &["reduce_missing_sync.cu"]);
    let mut c = start(&dir, json!({}));
    // Truncated, garbage PTX.
    let bad = dir.join("bad.ptx");
    let u = open(&mut c, &bad, "ptx", ".version 7.0\n.target sm_80\n.visible .entry k(\n  .param .u64 p\n{\n  ld.param.u64 %rd1, [p\n  @@@ ??? \u{1F600}\n");
    let d = diagnostics(&mut c, &u, 1);
    assert!(!d.is_empty() && d.iter().all(|d| d["code"] == "error" && d["severity"] == 1), "{d:#?}");
    let status = c.notification("lark/fileStatus", Some(&u), LONG).unwrap();
    assert!(status["params"]["kernels"].as_array().unwrap().iter().all(|k| k["verdict"] == "error"), "{status}");

    // A compiler that does not exist: a diagnostic, a status, a message; no crash.
    c.notify("workspace/didChangeConfiguration", json!({ "settings": { "lark": { "compiler": { "path": "/nonexistent/clang-99" } } } }));
    let cu_path = dir.join("reduce_missing_sync.cu");
    let cu = open(&mut c, &cu_path, "cuda-cpp", &std::fs::read_to_string(&cu_path).unwrap());
    let d = diagnostics(&mut c, &cu, 1);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0]["message"].as_str().unwrap().contains("no CUDA compiler found"), "{d:#?}");
    let st = c.notification("lark/fileStatus", Some(&cu), LONG).unwrap();
    assert_eq!(st["params"]["kernels"], json!([]));
    assert!(st["params"]["status"].as_str().unwrap().contains("no CUDA compiler"));
    let shown = c.notification("window/showMessage", None, LONG).expect("the missing compiler is shown");
    assert!(shown["params"]["message"].as_str().unwrap().contains("no CUDA compiler"));

    // A panic inside a request is an error answer, and the server goes on.
    let e = c.request("lark/debugPanic", Value::Null, LONG).unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("internal error"), "{e}");
    // Settings back to normal: the .cu is checked.
    c.notify("workspace/didChangeConfiguration", json!({ "settings": { "lark": { "compiler": { "path": "" } } } }));
    let d = diagnostics(&mut c, &cu, 1);
    assert!(d.iter().any(|d| d["code"] == "race"), "{d:#?}");
    let h = c.request("textDocument/hover", json!({ "textDocument": { "uri": cu }, "position": { "line": 9, "character": 4 } }), LONG).unwrap();
    assert!(h["contents"]["value"].as_str().unwrap().contains("race"));
    let status = c.shutdown(Duration::from_secs(10)).expect("exits");
    assert!(status.success());
}

#[test]
fn positions_count_utf16_code_units_around_non_ascii_comments() {
    // With the .cu beside it, so that the interface's parameter names (the .cu's) are known.
    let dir = workspace("utf16", &["reduce_missing_sync.ptx", "reduce_missing_sync.cu"]);
    let mut c = start(&dir, json!({}));
    let path = dir.join("reduce_missing_sync.ptx");
    let original = std::fs::read_to_string(&path).unwrap();
    // Non-ASCII comments above the racy store and on its own line.
    let store = "\tst.shared.f32 \t[%rd3], %f6;";
    assert_eq!(original.matches(store).count(), 1);
    let text = original.replace(store, &format!("\t// réduction — 😀 ü\n\t/* é😀 */ {}", store.trim_start()));
    let u = open(&mut c, &path, "ptx", &text);
    let d = diagnostics(&mut c, &u, 1);
    let r = race(&d);
    let line_no = r["range"]["start"]["line"].as_u64().unwrap() as usize;
    let line = text.lines().nth(line_no).unwrap();
    assert!(line.starts_with("\t/* é😀 */ st.shared"), "{line}");
    assert_eq!(r["range"], range(line_no, 1, line_no, utf16(line, line.len())), "columns in UTF-16 units, not bytes ({} bytes)", line.len());

    // Hover after the emoji answers for that line.
    let col = utf16(line, line.find("st.shared").unwrap());
    let h = c.request("textDocument/hover", json!({ "textDocument": { "uri": u }, "position": { "line": line_no, "character": col } }), LONG).unwrap();
    assert_eq!(h["range"], range(line_no, 1, line_no, utf16(line, line.len())));
    assert!(h["contents"]["value"].as_str().unwrap().contains("write shared"), "{h}");

    // Replace the store (after the emoji on the same line) with a register move: if the server
    // counted bytes, the edit would land inside the comment and break the PTX.
    let from = utf16(line, line.find("st.shared").unwrap());
    let to = utf16(line, line.len());
    change(&mut c, &u, 2, json!([{ "range": range(line_no, from, line_no, to), "text": "mov.f32 \t%f6, %f6;" }]));
    let d = diagnostics(&mut c, &u, 2);
    assert!(d.iter().all(|d| d["code"] != "race" && d["code"] != "error"), "{d:#?}");
    c.shutdown(Duration::from_secs(10));
}

#[test]
fn an_edit_rechecks_only_the_kernel_it_touched() {
    let dir = workspace("two", &["reduce_two_pass.cu"]);
    let mut c = start(&dir, json!({}));
    let path = dir.join("reduce_two_pass.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let u = open(&mut c, &path, "cuda-cpp", &text);
    let d = diagnostics(&mut c, &u, 1);
    assert!(d.iter().all(|d| d["severity"] != 1), "{d:#?}");
    let stats = |c: &mut StdioClient| c.request("lark/stats", Value::Null, LONG).unwrap()["kernelChecks"].as_u64().unwrap();
    assert_eq!(stats(&mut c), 2);
    // Drop the barrier inside the first kernel's loop (line 12) and add two lines: the second
    // kernel moves down but is not checked again.
    assert_eq!(text.lines().nth(11), Some("    __syncthreads();"));
    change(&mut c, &u, 2, json!([{ "range": range(11, 0, 12, 0), "text": "    // no barrier\n\n\n" }]));
    let d = diagnostics(&mut c, &u, 2);
    let started = Instant::now();
    assert_eq!(stats(&mut c), 3, "only the edited kernel is checked again");
    let r = race(&d);
    assert_eq!(r["range"]["start"]["line"], 10);
    let st = c.wait_for(LONG, |m| m["method"] == "lark/fileStatus" && m["params"]["version"] == 2).unwrap();
    assert_eq!(st["params"]["kernels"][0]["checked"], true);
    assert_eq!(st["params"]["kernels"][1]["checked"], false);
    assert!(started.elapsed() < LONG);
    // The second kernel's lens follows it down two lines.
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": u } }), LONG).unwrap();
    let lines: Vec<u64> = lenses.as_array().unwrap().iter().map(|l| l["range"]["start"]["line"].as_u64().unwrap()).collect();
    // Verdict, model and Lean obligations for each kernel.
    assert_eq!(lines, vec![3, 3, 3, 18, 18, 18]);
    c.shutdown(Duration::from_secs(10));
}

#[test]
fn an_interface_stub_is_offered_and_the_interface_is_reread_when_it_changes() {
    let dir = workspace("iface", &["vector_add.cu"]);
    std::fs::write(dir.join("lark.toml"), "# no interfaces yet\n").unwrap();
    let mut c = start(&dir, json!({}));
    let path = dir.join("vector_add.cu");
    let u = open(&mut c, &path, "cuda-cpp", &std::fs::read_to_string(&path).unwrap());
    diagnostics(&mut c, &u, 1);
    let reg = c.wait_for(LONG, |m| m["method"] == "client/registerCapability").expect("the server watches interface files");
    let globs = reg["params"]["registrations"][0]["registerOptions"]["watchers"].to_string();
    assert!(globs.contains("**/lark.toml"), "{globs}");

    // A kernel without an interface entry: the stub goes to the end of the lark.toml.
    let toml_uri = uri(&dir.join("lark.toml"));
    let actions = code_actions_with(&mut c, &u, &range(2, 0, 2, 0), json!([]), "interface stub");
    let stub = actions.iter().find(|a| a["title"].as_str().unwrap().contains("interface stub")).unwrap_or_else(|| panic!("{actions:#?}"));
    let e = &stub["edit"]["documentChanges"][0];
    assert_eq!(e["textDocument"]["uri"], toml_uri);
    let edits = e["edits"].as_array().unwrap();
    assert_eq!(edits[0]["range"], range(1, 0, 1, 0));
    let text = apply("# no interfaces yet\n", edits);
    assert!(text.contains("[kernel.vector_add]\ngrid = [1, 1, 1]"), "{text}");
    assert!(text.contains("a = { dtype = \"f32\", len = \"n\" }"), "{text}");
    std::fs::write(dir.join("lark.toml"), text).unwrap();

    // The client says the file changed: the kernel is checked against the new interface.
    c.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": toml_uri, "type": 2 }] }));
    let status = c.wait_for(LONG, |m| m["method"] == "lark/fileStatus" && m["params"]["kernels"][0]["verdict"] == "verified");
    assert!(status.is_some(), "not re-checked with the new interface: {:#?}", c.inbox);
    c.shutdown(Duration::from_secs(10));
}

#[test]
fn a_benign_race_is_a_warning_in_the_editor_and_an_error_with_strict_races() {
    // Every lane stores its warp's sum to the warp's slot: the same value, a tolerated race.
    let dir = workspace("benign", &["warp_sums_all_lanes.cu", "warp_sums_all_lanes.ptx"]);
    let path = dir.join("warp_sums_all_lanes.ptx");
    let text = std::fs::read_to_string(&path).unwrap();
    let severities = |options: Value| {
        let mut c = start(&dir, options);
        let u = open(&mut c, &path, "ptx", &text);
        let d = diagnostics(&mut c, &u, 1);
        c.shutdown(Duration::from_secs(10));
        d.iter()
            .filter(|x| x["code"] == "race")
            .map(|x| (x["severity"].as_u64(), x["message"].as_str().unwrap_or("").contains("tolerated")))
            .collect::<Vec<_>>()
    };
    assert_eq!(severities(json!({})), vec![(Some(2), true)], "a warning that says it is tolerated");
    assert_eq!(severities(json!({ "strictRaces": true })), vec![(Some(1), false)], "with lark.strictRaces, an error");
}
