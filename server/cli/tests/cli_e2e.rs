//! `lark` end to end: the real binary on corpus kernels and on bad input, checking exit codes, the
//! text report, the JSON fields tools rely on, SARIF 2.1.0, `.cu` compilation through clang-19,
//! SentryWard inputs and the interface's assumptions. clang-19 and z3 are installed by
//! `scripts/install-deps.sh`, so every test here runs.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn corpus(name: &str) -> String {
    repo().join("tests/corpus").join(name).display().to_string()
}

/// Runs `lark ARGS` from the repository root.
fn lark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lark")).args(args).current_dir(repo()).output().expect("lark runs")
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
    let out = lark(args);
    Run {
        code: out.status.code().expect("lark exited normally, not by a signal"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}\n--- stdout\n{}\n--- stderr\n{}", self.code, self.stdout, self.stderr)
    }
}

fn json(args: &[&str]) -> (i32, Value) {
    let r = run(args);
    let v = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {r:?}"));
    (r.code, v)
}

/// A fresh directory under the system temp dir, named after the test.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lark-cli-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn kernel<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["kernels"].as_array().unwrap().iter().find(|k| k["name"] == name).unwrap_or_else(|| panic!("no kernel {name}: {doc:#}"))
}

fn lines(finding: &Value) -> Vec<u64> {
    finding["accesses"].as_array().unwrap().iter().map(|a| a["line"].as_u64().unwrap()).collect()
}

// ----- version, verdicts, exit codes -----------------------------------------------------------

#[test]
fn version() {
    let r = run(&["--version"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.trim(), format!("lark {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn racy_kernel_text_report() {
    let r = run(&["check", &corpus("matmul_missing_second_sync.ptx")]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("kernel matmul_missing_second_sync: race"), "{r:?}");
    assert!(r.stdout.contains("error[race]"), "{r:?}");
    // The two conflicting accesses, each with its .cu line.
    assert!(r.stdout.contains("matmul_missing_second_sync.cu:11: write of 4 bytes by thread"), "{r:?}");
    assert!(r.stdout.contains("matmul_missing_second_sync.cu:15: read of 4 bytes by thread"), "{r:?}");
    assert!(r.stdout.contains("launch: grid [8, 8, 1] block [16, 16, 1]"), "{r:?}");
}

#[test]
fn correct_kernel_is_verified_and_exits_0() {
    let r = run(&["check", &corpus("vector_add.ptx")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("kernel vector_add: verified"), "{r:?}");
    let (code, doc) = json(&["check", &corpus("vector_add.ptx"), "--format", "json"]);
    assert_eq!(code, 0);
    let k = kernel(&doc, "vector_add");
    assert_eq!(k["verdict"], "verified");
    assert_eq!(k["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn a_store_racing_with_itself_on_equal_values_is_a_warning_unless_races_are_strict() {
    // Every lane stores its warp's shuffle-reduced sum to the warp's slot: equal values.
    let file = corpus("warp_sums_all_lanes.ptx");
    let r = run(&["check", &file]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("kernel warp_sums_all_lanes: verified"), "{r:?}");
    assert!(r.stdout.contains("warning[race]") && r.stdout.contains("tolerated: every thread that executes this store writes the same value"), "{r:?}");
    let (_, doc) = json(&["check", &file, "--format", "json"]);
    let f = &kernel(&doc, "warp_sums_all_lanes")["findings"][0];
    assert!(f["benign"].is_string(), "{f:#}");
    assert_eq!(lines(f), vec![11, 11]);
    let (_, sarif) = json(&["check", &file, "--format", "sarif"]);
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["level"], "warning", "{result:#}");
    // Strict: a race, and the exit code says so.
    let r = run(&["check", &file, "--strict-races"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("kernel warp_sums_all_lanes: race") && r.stdout.contains("error[race]") && !r.stdout.contains("tolerated"), "{r:?}");
    // Without the barrier, thread 0's reads of the slots race with the stores: still a race.
    let r = run(&["check", &corpus("warp_sums_all_lanes_nosync.ptx")]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("kernel warp_sums_all_lanes_nosync: race") && r.stdout.contains("read of 4 bytes"), "{r:?}");
}

#[test]
fn json_race_fields() {
    let (code, doc) = json(&["check", &corpus("reduce_missing_sync.ptx"), "--format", "json"]);
    assert_eq!(code, 1);
    assert!(doc["lark_version"].is_string());
    assert_eq!(doc["diagnostics"].as_array().unwrap().len(), 0);
    let k = kernel(&doc, "reduce_missing_sync");
    assert_eq!(k["verdict"], "race");
    let f = &k["findings"][0];
    assert_eq!(f["kind"], "race");
    assert_eq!(lines(f), [10, 10]);
    let kinds: Vec<&str> = f["accesses"].as_array().unwrap().iter().map(|a| a["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"write"), "{kinds:?}");
    for a in f["accesses"].as_array().unwrap() {
        assert_eq!(a["space"], "shared");
        assert_eq!(a["target"], "s");
        assert!(a["thread"].as_u64().unwrap() < 2);
    }
    let threads = f["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    for t in threads {
        assert_eq!(t["block"].as_array().unwrap().len(), 3, "{t}");
        assert_eq!(t["thread"].as_array().unwrap().len(), 3, "{t}");
    }
    assert_ne!(threads[0], threads[1]);
    assert_eq!(f["address"]["space"], "shared");
    assert_eq!(f["address"]["target"], "s");
    assert!(f["address"]["offset"].is_u64());
    assert_eq!(f["launch"]["grid"], serde_json::json!([64, 1, 1]));
}

#[test]
fn json_divergence_carries_the_barrier_line() {
    let (code, doc) = json(&["check", &corpus("blur_early_return.ptx"), "--format", "json"]);
    assert_eq!(code, 1);
    let k = kernel(&doc, "blur_early_return");
    assert_eq!(k["verdict"], "barrier_divergence");
    let f = &k["findings"][0];
    assert_eq!(f["kind"], "barrier_divergence");
    assert_eq!(f["barrier"]["line"], 11, "{f:#}");
}

#[test]
fn json_out_of_bounds() {
    let (code, doc) = json(&["check", &corpus("forward_diff_oob.ptx"), "--format", "json"]);
    assert_eq!(code, 1);
    let k = kernel(&doc, "forward_diff_oob");
    assert_eq!(k["verdict"], "out_of_bounds");
    assert_eq!(k["findings"][0]["kind"], "out_of_bounds");
    assert_eq!(lines(&k["findings"][0])[0], 5);
}

#[test]
fn sarif_report() {
    let r = run(&["check", &corpus("matmul_missing_second_sync.ptx"), &corpus("blur_early_return.ptx"), "--format", "sarif"]);
    assert_eq!(r.code, 1, "{r:?}");
    let doc: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {r:?}"));
    assert_eq!(doc["version"], "2.1.0");
    let run = &doc["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "lark");
    let rules: Vec<&str> = run["tool"]["driver"]["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    let mut unique = rules.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), rules.len(), "one rule per kind: {rules:?}");
    for kind in ["race", "barrier_divergence", "out_of_bounds", "uncertified"] {
        assert!(rules.contains(&kind), "no rule `{kind}`: {rules:?}");
    }
    let results = run["results"].as_array().unwrap();
    for res in results {
        assert!(rules.contains(&res["ruleId"].as_str().unwrap()), "{res}");
        assert!(!res["locations"].as_array().unwrap().is_empty(), "{res}");
    }
    let line = |l: &Value| l["physicalLocation"]["region"]["startLine"].as_u64().unwrap();
    let race = results.iter().find(|r| r["ruleId"] == "race" && r["message"]["text"].as_str().unwrap().contains("As[")).expect("the As race");
    assert_eq!(line(&race["locations"][0]), 11);
    assert_eq!(race["relatedLocations"].as_array().unwrap().len(), 1);
    assert_eq!(line(&race["relatedLocations"][0]), 15);
    let uri = race["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
    assert!(uri.ends_with("matmul_missing_second_sync.cu"), "{uri}");
    let div = results.iter().find(|r| r["ruleId"] == "barrier_divergence").expect("the divergence");
    assert_eq!(line(&div["locations"][0]), 11);
}

// ----- .cu input -------------------------------------------------------------------------------

#[test]
fn cu_input_reports_cu_lines() {
    let (code, doc) = json(&["check", &corpus("matmul_missing_second_sync.cu"), "--format", "json"]);
    assert_eq!(code, 1, "{doc:#}");
    let k = kernel(&doc, "matmul_missing_second_sync");
    assert_eq!(k["verdict"], "race");
    let f = k["findings"].as_array().unwrap().iter().find(|f| f["address"]["target"] == "As").expect("the As race");
    assert_eq!(lines(f), [11, 15]);
    assert!(f["accesses"][0]["source"].as_str().unwrap_or(doc["kernels"][0]["file"].as_str().unwrap()).ends_with("matmul_missing_second_sync.cu"));
}

#[test]
fn cu_syntax_error_is_reported_on_its_line() {
    let dir = temp_dir("cu-syntax");
    let cu = dir.join("bad.cu");
    std::fs::write(&cu, "extern \"C\" __global__ void bad(float *a) {\n  int i = threadIdx.x;\n  a[i] = 1.0f +;\n}\n").unwrap();
    let cu = cu.display().to_string();
    let r = run(&["check", &cu]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.contains("bad.cu:3:"), "{r:?}");
    assert!(r.stdout.contains("error"), "{r:?}");
    let (_, doc) = json(&["check", &cu, "--format", "json"]);
    let d = &doc["diagnostics"][0];
    assert_eq!(d["line"], 3, "{doc:#}");
    assert_eq!(d["severity"], "error");
    assert!(d["message"].as_str().unwrap().contains("expected expression"), "{d}");
}

#[test]
fn missing_compiler_is_a_clear_error() {
    let r = run(&["check", &corpus("vector_add.cu"), "--compiler", "/nonexistent"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no CUDA compiler found"), "{r:?}");
    assert!(r.stderr.contains("/nonexistent"), "{r:?}");
    assert!(!r.stdout.contains("verified"), "{r:?}");
}

// ----- interfaces ------------------------------------------------------------------------------

#[test]
fn sentryward_input_gives_the_lark_toml_verdict() {
    // The SentryWard schema has no buffer lengths or element assumptions; they come from the
    // lark.toml found for the file (forward_diff_oob needs the lengths, reshape_and_cache the
    // assumptions).
    for name in ["vector_add", "reduce_missing_sync", "blur_early_return", "histogram_shared", "scan_missing_sync", "forward_diff_oob", "reshape_and_cache"] {
        let ptx = corpus(&format!("{name}.ptx"));
        let input = repo().join(format!("tests/compare/inputs/{name}.json")).display().to_string();
        let (c1, toml) = json(&["check", &ptx, "--format", "json"]);
        let (c2, sw) = json(&["check", &ptx, "--input", &input, "--format", "json"]);
        assert_eq!(kernel(&toml, name)["verdict"], kernel(&sw, name)["verdict"], "{name}");
        assert_eq!(c1, c2, "{name}");
        let lines_of = |d: &Value| kernel(d, name)["findings"].as_array().unwrap().iter().map(lines).collect::<Vec<_>>();
        assert_eq!(lines_of(&toml), lines_of(&sw), "{name}");
    }
}

#[test]
fn missing_assumption_makes_the_kernel_uncertified() {
    let dir = temp_dir("no-assume");
    let full = std::fs::read_to_string(repo().join("tests/corpus/lark.toml")).unwrap();
    // The reshape_and_cache tables, less the `assume` on slot_mapping.
    let ours: String = full
        .split("\n[")
        .filter(|t| t.starts_with("kernel.reshape_and_cache]") || t.starts_with("kernel.reshape_and_cache.params]"))
        .map(|t| format!("[{t}\n"))
        .collect();
    assert!(ours.contains("assume = [\"injective\", \"in_range(0, 4096)\"]"), "{ours}");
    let ours = ours.replace(", assume = [\"injective\", \"in_range(0, 4096)\"]", "");
    assert!(ours.contains("slot_mapping = { dtype = \"i64\", len = 128 }"), "{ours}");
    let toml = dir.join("lark.toml");
    std::fs::write(&toml, &ours).unwrap();
    let ptx = corpus("reshape_and_cache.ptx");

    let (code, doc) = json(&["check", &ptx, "--format", "json"]);
    assert_eq!((code, kernel(&doc, "reshape_and_cache")["verdict"].as_str()), (0, Some("verified")), "with the assumption");

    // Without it, the race needs two equal slots: reported with those values and the
    // assumption that would exclude it, or (when no replay shows it) left uncertified. (An
    // `--interface` file is merged over the corpus's lark.toml and cannot take its assumption
    // away, so the kernel is checked from a folder whose lark.toml is ours.)
    std::fs::copy(&ptx, dir.join("reshape_and_cache.ptx")).unwrap();
    std::fs::copy(corpus("reshape_and_cache.cu"), dir.join("reshape_and_cache.cu")).unwrap();
    let ptx = dir.join("reshape_and_cache.ptx").display().to_string();
    let (code, doc) = json(&["check", &ptx, "--format", "json"]);
    assert_eq!(code, 1);
    let k = kernel(&doc, "reshape_and_cache");
    let with_inputs = k["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == "race" && f["inputs"].as_array().is_some_and(|i| i.iter().all(|v| v["buffer"] == "slot_mapping") && i.len() >= 2));
    let loaded = k["uncertified"].as_array().unwrap().iter().any(|u| u["kind"] == "loaded_values" && u["buffers"] == serde_json::json!(["slot_mapping"]));
    assert!(with_inputs || loaded, "{k:#}");
    let r = run(&["check", &ptx]);
    assert!(r.stdout.contains("assume = [\"injective\"]") && r.stdout.contains("`slot_mapping`"), "{r:?}");
}

#[test]
fn dump_model_prints_phases() {
    let r = run(&["check", &corpus("reduce_sum_shared.ptx"), "--dump-model"]);
    assert_eq!(r.code, 0, "{r:?}");
    for needle in [
        "kernel reduce_sum_shared",
        "loop L0 (counter k0) at line 10",
        "phase from kernel entry:",
        "phase after barrier at line 9:",
        "phase after barrier at line 14:",
        "unsupported instructions: 0",
        "kernel reduce_sum_shared: verified",
    ] {
        assert!(r.stdout.contains(needle), "no `{needle}` in {r:?}");
    }
}

// ----- unusable input: exit code 2 -------------------------------------------------------------

#[test]
fn missing_file() {
    let r = run(&["check", "/nonexistent/kernel.ptx"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("/nonexistent/kernel.ptx") && r.stderr.contains("cannot read"), "{r:?}");
}

#[test]
fn binary_garbage_file() {
    let dir = temp_dir("garbage");
    let path = dir.join("garbage.ptx");
    // Deterministic bytes, most of them invalid UTF-8.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8 | 0x80
        })
        .collect();
    std::fs::write(&path, bytes).unwrap();
    let r = run(&["check", &path.display().to_string()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.contains("error"), "{r:?}");
    let (code, doc) = json(&["check", &path.display().to_string(), "--format", "json"]);
    assert_eq!(code, 2);
    assert!(!doc["diagnostics"].as_array().unwrap().is_empty(), "{doc:#}");
    assert!(doc["kernels"].as_array().unwrap().is_empty(), "{doc:#}");
}

#[test]
fn empty_file() {
    let dir = temp_dir("empty");
    let path = dir.join("empty.ptx");
    std::fs::write(&path, "").unwrap();
    let r = run(&["check", &path.display().to_string()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.contains("empty PTX file"), "{r:?}");
}

#[test]
fn unknown_options_and_commands() {
    for args in [
        &["check", "--frobnicate", "x.ptx"][..],
        &["check", "x.ptx", "--format", "xml"],
        &["check"],
        &["check", "x.ptx", "--timeout-ms", "soon"],
        &["check", "x.ptx", "--format"],
        &["frobnicate"],
        &[],
    ] {
        let r = run(args);
        assert_eq!(r.code, 2, "lark {args:?}: {r:?}");
        assert!(r.stderr.contains("Usage: lark") || r.stderr.contains("For more information, try '--help'"), "lark {args:?}: {r:?}");
        assert!(r.stdout.is_empty(), "lark {args:?}: {r:?}");
    }
    let r = run(&["check", "--frobnicate", "x.ptx"]);
    assert!(r.stderr.contains("unexpected argument '--frobnicate'"), "{r:?}");
    // Help is not an error: usage on stdout, exit 0, for the program and every command.
    for args in [&["--help"][..], &["-h"], &["check", "--help"], &["check", "-h"], &["serve", "--help"], &["bench", "--help"], &["bench", "lsp", "--help"]] {
        let r = run(args);
        assert_eq!(r.code, 0, "lark {args:?}: {r:?}");
        assert!(r.stdout.contains("Usage: lark"), "lark {args:?}: {r:?}");
    }
}

// ----- warp-synchronous code, missing interface, encoding errors -------------------------------

const WARP_CU: &str = r#"extern "C" __global__ void warp_tail(float* out) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = t;
  s[t + 32] = t;
  __syncwarp();
  for (int off = 16; off > 0; off >>= 1) {
    float v = s[t + off];
    __syncwarp();
    s[t] += v;
    __syncwarp();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void warp_tail_racy(float* out) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = t;
  s[t + 32] = t;
  __syncwarp();
  for (int off = 16; off > 0; off >>= 1) {
    s[t] += s[t + off];
    __syncwarp();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
"#;

/// `__syncwarp()` orders the lanes of a warp: the shared-memory warp reduction with a sync
/// between the read and the write is race-free, the one without it races on the same line.
#[test]
fn syncwarp_orders_lanes_of_one_warp() {
    let dir = temp_dir("syncwarp");
    std::fs::write(dir.join("warp.cu"), WARP_CU).unwrap();
    std::fs::write(
        dir.join("lark.toml"),
        "[kernel.warp_tail]\ngrid = [4, 1, 1]\nblock = [32, 1, 1]\n[kernel.warp_tail_racy]\ngrid = [4, 1, 1]\nblock = [32, 1, 1]\n",
    )
    .unwrap();
    let file = dir.join("warp.cu").display().to_string();
    let (code, doc) = json(&["check", &file, "--format", "json"]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(kernel(&doc, "warp_tail")["verdict"], "verified", "{doc:#}");
    let racy = kernel(&doc, "warp_tail_racy");
    assert_eq!(racy["verdict"], "race", "{doc:#}");
    assert_eq!(lines(&racy["findings"][0]), vec![22, 22]);
}

/// Without an interface the report says what was assumed and how to make the check exact.
#[test]
fn a_kernel_without_interface_gets_a_note() {
    let dir = temp_dir("no-interface");
    std::fs::copy(corpus("vector_add.ptx"), dir.join("k.ptx")).unwrap();
    let file = dir.join("k.ptx").display().to_string();
    let (_, doc) = json(&["check", &file, "--format", "json"]);
    let notes = kernel(&doc, "vector_add")["notes"].to_string();
    assert!(notes.contains("no interface") && notes.contains("lark.toml"), "{doc:#}");
}

/// Invalid UTF-8 in a PTX comment is reported where it is, and the rest is still checked.
#[test]
fn invalid_utf8_in_ptx_is_reported_and_the_rest_checked() {
    let dir = temp_dir("utf8");
    let mut bytes = std::fs::read(corpus("vector_add.ptx")).unwrap();
    bytes.splice(0..0, b"// \xff\xfe\n".iter().copied());
    std::fs::write(dir.join("k.ptx"), bytes).unwrap();
    let file = dir.join("k.ptx").display().to_string();
    let (code, doc) = json(&["check", &file, "--format", "json"]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["diagnostics"][0]["message"], "invalid UTF-8 at byte 3", "{doc:#}");
    assert_eq!(doc["diagnostics"][0]["line"], 1);
    assert!(!kernel(&doc, "vector_add")["verdict"].is_null());
}

/// The memory ceiling (`LARK_MEMORY_MB`) stops a check that needs more memory than allowed: the
/// kernel is `uncertified` with that reason, quickly, never `verified` and never a crash. (The
/// equivalence check of reshape_and_cache holds two 2-million-element caches.)
#[test]
fn a_check_over_the_memory_ceiling_is_uncertified_with_the_reason() {
    let out = Command::new(env!("CARGO_BIN_EXE_lark"))
        .args(["check", &corpus("reshape_and_cache.ptx"), "--format", "json"])
        .env("LARK_MEMORY_MB", "100")
        .current_dir(repo())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let k = kernel(&doc, "reshape_and_cache");
    assert_eq!((out.status.code(), k["verdict"].as_str()), (Some(1), Some("uncertified")), "{doc:#}");
    let reasons: Vec<&str> = k["uncertified"].as_array().unwrap().iter().filter_map(|u| u["message"].as_str()).collect();
    assert!(reasons.iter().any(|m| m.contains("the memory ceiling for checks (100 MB")), "{reasons:?}");
    // Without the ceiling the same kernel is verified (see the corpus): the reason is the ceiling.
    let bad =
        Command::new(env!("CARGO_BIN_EXE_lark")).args(["check", &corpus("vector_add.ptx")]).env("LARK_MEMORY_MB", "lots").current_dir(repo()).output().unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("LARK_MEMORY_MB: expected a number of megabytes, found `lots`"), "{bad:?}");
    assert_eq!(bad.status.code(), Some(0), "an unreadable setting falls back to the default: {bad:?}");
}

/// The time per SMT query is the solver's own default when not set: 1 s for Yices, 2 s for z3
/// (a check that chooses z3 does not keep Yices' default); `--timeout-ms` sets it for either.
/// ggml's quantize opened with no setup asks a race question no solver answers in seconds, so
/// its uncertified region names the limit it ran into.
#[test]
fn the_time_per_query_is_the_solvers_default_unless_set() {
    let dir = std::env::temp_dir().join(format!("lark-timeout-default-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join("ggml_quantize_q8_1.ptx");
    std::fs::copy(repo().join("tests/real/ggml_quantize_q8_1.ptx"), &ptx).unwrap();
    let limits = |extra: &[&str]| -> Vec<u64> {
        let mut args = vec!["check", "--format", "json"];
        args.extend_from_slice(extra);
        let path = ptx.display().to_string();
        args.push(&path);
        let r = run(&args);
        let report: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"));
        let kernels = report["kernels"].as_array().unwrap();
        kernels
            .iter()
            .flat_map(|k| k["uncertified"].as_array().unwrap())
            .filter(|u| u["kind"] == "solver_timeout")
            .map(|u| u["millis"].as_u64().unwrap())
            .collect()
    };
    let all_at = |limits: Vec<u64>, ms: u64, what: &str| {
        assert!(!limits.is_empty() && limits.iter().all(|&l| l == ms), "{what}: a timeout at {ms} ms, found {limits:?}");
    };
    all_at(limits(&["--solver", "z3"]), 2000, "z3's default");
    all_at(limits(&["--solver", "z3", "--timeout-ms", "300"]), 300, "z3 with --timeout-ms 300");
    if check::SolverKind::Yices.is_installed() {
        all_at(limits(&["--solver", "yices"]), 1000, "Yices' default");
    } else {
        eprintln!("{}", check::SolverKind::Yices.skipped_note());
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A `.cu` file as projects write it, compiled with no CUDA SDK and no lark.toml: CUDA's math,
/// `cuda_fp16.h` and cooperative groups compile (through LARK's prelude and stand-ins); a block
/// reduction that syncs its last warp with a mask computed from the block size has no race; a
/// half-warp mask run by the whole warp is a divergence naming the lane outside it; a
/// concatenation reading through a select between two pointers is checked (not untracked);
/// `erff` (libdevice) is read as erf, so an elementwise GELU is checked; `log1pf` is the
/// prelude's `logf(1 + x)`, so a softplus is checked too; `atanf`, which no instruction computes
/// and LARK does not name, leaves its kernel uncertified, never verified.
#[test]
fn a_project_style_cu_file_compiles_and_each_kernel_gets_its_verdict() {
    let dir = temp_dir("project-style");
    let src = r#"#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cstdint>
namespace cg = cooperative_groups;

extern "C" __global__ void sigmoid_half(__half* y, const __half* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2half(1.0f / (1.0f + expf(-__half2float(x[i]))));
}

extern "C" __global__ void block_sum(const float* in, float* out) {
  __shared__ float s[1024];
  s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  unsigned mask = (unsigned)((1ull << (blockDim.x / 32)) - 1);
  if (threadIdx.x < blockDim.x / 32) {
    float acc = 0.0f;
    for (int i = 0; i < 32; ++i) acc += s[threadIdx.x * 32 + i];
    __syncwarp(mask);
    s[threadIdx.x] = acc;
  }
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0] + s[1];
}

extern "C" __global__ void half_max(const float* in, float* out) {
  float v = in[threadIdx.x];
  v = fmaxf(v, __shfl_xor_sync(0x0000ffffu, v, 1));
  out[threadIdx.x] = v;
}

extern "C" __global__ void tile_max(const float* in, float* out) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  float v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, warp.shfl_xor(v, o));
  if (warp.thread_rank() == 0) out[threadIdx.x / 32] = v;
}

extern "C" __global__ void concat(float* out, const float* a, const float* b, int n1, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n1 + n2) out[i] = i < n1 ? a[i] : b[i - n1];
}

extern "C" __global__ void gelu_erf(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f));
}

extern "C" __global__ void softplus(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = log1pf(expf(x[i]));
}

extern "C" __global__ void arctan(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = atanf(x[i]);
}
"#;
    let file = dir.join("kernels.cu");
    std::fs::write(&file, src).unwrap();
    let (code, doc) = json(&["check", &file.display().to_string(), "--format", "json"]);
    assert_eq!(code, 1, "half_max and arctan are not verified: {doc:#}");
    for name in ["sigmoid_half", "block_sum", "tile_max", "concat", "gelu_erf", "softplus"] {
        let k = kernel(&doc, name);
        assert_eq!(k["verdict"], "verified", "{name}: {k:#}");
    }
    let half = kernel(&doc, "half_max");
    assert_eq!(half["verdict"], "barrier_divergence", "{half:#}");
    let message = half["findings"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("member mask 0x0000ffff, which does not name it"), "{message}");
    let arctan = kernel(&doc, "arctan");
    assert_eq!(arctan["verdict"], "uncertified", "{arctan:#}");
    let reasons = arctan["uncertified"].to_string();
    assert!(reasons.contains("__nv_atanf"), "{reasons}");
}

/// A sum accumulated into `out[0]` with `atomicAdd`: without knowing that the caller zeroes
/// `out`, the kernel computes `sum + out[0] (as it was before the kernel ran)`, a mismatch whose
/// message says how to declare the zeroing; with `assume = ["zeroed"]` it is verified.
#[test]
fn an_accumulation_into_an_output_is_verified_once_the_output_is_declared_zeroed() {
    let dir = temp_dir("zeroed-output");
    let equiv = repo().join("tests/equiv");
    std::fs::copy(equiv.join("total_sum.cu"), dir.join("total_sum.cu")).unwrap();
    std::fs::copy(equiv.join("total_sum.ptx"), dir.join("total_sum.ptx")).unwrap();
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::copy(equiv.join("references/total_sum.py"), dir.join("references/total_sum.py")).unwrap();
    let toml = |assume: &str| {
        format!(
            "[kernel.total_sum]\ngrid = [\"ceil_div(n, 256)\", 1, 1]\nblock = [256, 1, 1]\n[kernel.total_sum.params]\n\
             out = {{ dtype = \"f32\", len = 1{assume} }}\nx = {{ dtype = \"f32\", len = \"n\" }}\nn = {{ range = [1, 4096] }}\n\
             [kernel.total_sum.reference]\nfile = \"references/total_sum.py\"\n[kernel.total_sum.reference.args]\nx = {{ buffer = \"x\", shape = [\"n\"] }}\n\
             [[kernel.total_sum.reference.outputs]]\nbuffer = \"out\"\nshape = [1]\n[[kernel.total_sum.reference.shapes]]\nn = 700\n"
        )
    };
    let ptx = dir.join("total_sum.ptx").display().to_string();
    std::fs::write(dir.join("lark.toml"), toml("")).unwrap();
    let r = run(&["check", &ptx]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("error[mismatch]"), "{r:?}");
    assert!(r.stdout.contains("out[0] (as it was before the kernel ran)"), "{r:?}");
    assert!(r.stdout.contains(r#"declare it in lark.toml: `out = { ..., assume = ["zeroed"] }`"#), "{r:?}");
    std::fs::write(dir.join("lark.toml"), toml(", assume = [\"zeroed\"]")).unwrap();
    let (code, doc) = json(&["check", &ptx, "--format", "json"]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(kernel(&doc, "total_sum")["verdict"], "verified", "{doc:#}");
}

/// A loop whose test scales its induction variable (`i * 4 < n`, PyTorch's `offset * ILP <
/// size` in `int`) is read as C++ reads it, without the product overflowing: the loop ends where
/// it ends, and its accesses are in bounds (`uncertified`, "did not reproduce", when `i * 4`
/// could wrap to a small number for an `i` near 2^30). The same loop with `<=` reads one element
/// past the end, which is still found.
#[test]
fn a_loop_test_on_a_scaled_induction_variable_does_not_wrap() {
    let dir = temp_dir("scaled-loop");
    let source = |name: &str, cmp: &str| {
        format!("extern \"C\" __global__ void {name}(float* out, const float* in, int n) {{\n  for (int i = threadIdx.x; i * 4 {cmp} n; i += blockDim.x) out[i] = in[i] * 2.0f;\n}}\n")
    };
    std::fs::write(dir.join("scaled.cu"), source("scaled", "<") + &source("scaled_bug", "<=")).unwrap();
    let entry = |name: &str| {
        format!(
            "[kernel.{name}]\ngrid = [1, 1, 1]\nblock = [[32, 1024], 1, 1]\n[kernel.{name}.params]\nout = {{ dtype = \"f32\", len = 250 }}\n\
             in = {{ dtype = \"f32\", len = 250 }}\nn = {{ range = [1, 1000] }}\n"
        )
    };
    std::fs::write(dir.join("lark.toml"), entry("scaled") + &entry("scaled_bug")).unwrap();
    let (code, doc) = json(&["check", &dir.join("scaled.cu").display().to_string(), "--format", "json"]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(kernel(&doc, "scaled")["verdict"], "verified", "{doc:#}");
    assert_eq!(kernel(&doc, "scaled_bug")["verdict"], "out_of_bounds", "{doc:#}");
}

/// A kernel that takes its length and scale in a struct passed by value: with the fields
/// declared by name (offsets read from the struct in the .cu), the race check and the
/// equivalence run both use them: `verified` against `x * 0.5`, and a mismatch when the
/// declared scale is not the reference's (the run passed zeros for the struct before, so the
/// kernel wrote nothing and could only disagree).
#[test]
fn the_fields_of_a_struct_passed_by_value_reach_the_equivalence_run() {
    let dir = temp_dir("struct-fields");
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(
        dir.join("scaled.cu"),
        "struct scale_params {\n  int n;\n  float scale;\n};\n\
         extern \"C\" __global__ void scaled(float* out, const float* x, const scale_params p) {\n\
           int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < p.n) out[i] = x[i] * p.scale;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("references/scaled.py"), "def reference(x):\n    return x * 0.5\n").unwrap();
    let toml = |scale: &str| {
        format!(
            "[kernel.scaled]\ngrid = [2, 1, 1]\nblock = [256, 1, 1]\n[kernel.scaled.params]\nout = {{ dtype = \"f32\", len = 300 }}\nx = {{ dtype = \"f32\", len = 300 }}\n\
             p.n = {{ value = 300 }}\np.scale = {{ value = {scale} }}\n[kernel.scaled.reference]\nfile = \"references/scaled.py\"\n[kernel.scaled.reference.args]\n\
             x = {{ buffer = \"x\", shape = [300] }}\n[[kernel.scaled.reference.outputs]]\nbuffer = \"out\"\nshape = [300]\n"
        )
    };
    let cu = dir.join("scaled.cu").display().to_string();
    std::fs::write(dir.join("lark.toml"), toml("0.5")).unwrap();
    let (code, doc) = json(&["check", &cu, "--format", "json"]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(kernel(&doc, "scaled")["verdict"], "verified", "{doc:#}");
    std::fs::write(dir.join("lark.toml"), toml("0.25")).unwrap();
    let r = run(&["check", &cu]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("error[mismatch]"), "{r:?}");
}

/// A pointer inside a struct passed by value (`Rows::out`) points to a buffer of its own. With
/// no setup a race through it is found and named as the .cu names the field (it was an
/// "untracked address", uncertified);
/// declared in lark.toml by field name, with a length, its bounds are checked and a correct
/// kernel is verified.
#[test]
fn a_pointer_inside_a_struct_passed_by_value_is_a_buffer_of_its_own() {
    let dir = temp_dir("pointer-fields");
    std::fs::write(
        dir.join("rows.cu"),
        "struct Rows {\n  float* out;\n  const float* in;\n  int n;\n};\n\
         extern \"C\" __global__ void scale_rows(Rows r) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < r.n) r.out[i] = 2.0f * r.in[i];\n}\n\
         extern \"C\" __global__ void last_writer_wins(Rows r) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < r.n) r.out[0] = r.in[i];\n}\n",
    )
    .unwrap();
    let cu = dir.join("rows.cu").display().to_string();
    let (_, doc) = json(&["check", &cu, "--format", "json"]);
    assert_eq!(kernel(&doc, "scale_rows")["verdict"], "verified", "{doc:#}");
    assert_eq!(kernel(&doc, "last_writer_wins")["verdict"], "race", "{doc:#}");
    assert!(kernel(&doc, "last_writer_wins")["uncertified"].as_array().unwrap().is_empty(), "{doc:#}");
    let r = run(&["check", &cu]);
    assert!(r.stdout.contains("data race on global r.out[0]"), "{r:?}");
    assert!(r.stdout.contains("rows.cu:12: error[race]"), "{r:?}");
    let toml = |n: u32| {
        format!(
            "[kernel.scale_rows]\ngrid = [2, 1, 1]\nblock = [256, 1, 1]\n[kernel.scale_rows.params]\n\
             r.out = {{ dtype = \"f32\", len = 300 }}\nr.in = {{ dtype = \"f32\", len = 300 }}\nr.n = {{ value = {n} }}\n"
        )
    };
    std::fs::write(dir.join("lark.toml"), toml(300)).unwrap();
    let (code, doc) = json(&["check", &cu, "--format", "json", "--kernel", "scale_rows"]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(kernel(&doc, "scale_rows")["verdict"], "verified", "{doc:#}");
    std::fs::write(dir.join("lark.toml"), toml(301)).unwrap();
    let r = run(&["check", &cu, "--kernel", "scale_rows"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("error[out_of_bounds]"), "{r:?}");
    assert!(r.stdout.contains("`r.in` has 1200 bytes"), "{r:?}");
    // A buffer declared where the kernel reads no pointer (`n`, by offset) is a note that says so.
    std::fs::write(dir.join("lark.toml"), toml(300).replace("r.n = { value = 300 }", "\"r+16\" = { dtype = \"i32\", len = 4 }")).unwrap();
    let r = run(&["check", &cu, "--kernel", "scale_rows"]);
    assert!(r.stdout.contains("`r.n` names no field this check can place, so it is ignored: declared as a buffer, but it reads 32 bits there"), "{r:?}");
    assert!(r.stdout.contains("the kernel's pointers in this struct: `r.out`, `r.in`"), "{r:?}");
}

/// The equivalence run gives each pointer inside a struct its buffer, writing its address into
/// the struct's bytes, and a reference binds such a field by name or by offset: a kernel that
/// reads and writes through `Rows` is verified, and a wrong one is a mismatch naming the store
/// that wrote the wrong element. A pointer field the kernel reads but lark.toml does not declare
/// leaves the equivalence unchecked with the reason (before, the run passed a null pointer).
#[test]
fn the_equivalence_run_passes_the_buffers_of_pointers_inside_a_struct() {
    let dir = temp_dir("pointer-field-equiv");
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(
        dir.join("s.cu"),
        "struct Rows {\n  float* out;\n  const float* in;\n  int n;\n};\n\
         extern \"C\" __global__ void scale_rows(Rows r) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < r.n) r.out[i] = 2.0f * r.in[i];\n}\n\
         extern \"C\" __global__ void scale_rows_bug(Rows r) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < r.n) r.out[i] = 2.0f * r.in[i] + (i == 7 ? 1.0f : 0.0f);\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("references/s.py"), "def reference(x):\n    return x * 2\n").unwrap();
    let entry = |kernel: &str, out: &str, input: &str, declare_in: bool| {
        let declared_in = if declare_in { format!("{input} = {{ dtype = \"f32\", len = 300 }}\n") } else { String::new() };
        format!(
            "[kernel.{kernel}]\ngrid = [2, 1, 1]\nblock = [256, 1, 1]\n[kernel.{kernel}.params]\n{out} = {{ dtype = \"f32\", len = 300 }}\n{declared_in}\
             r.n = {{ value = 300 }}\n[kernel.{kernel}.reference]\nfile = \"references/s.py\"\n[kernel.{kernel}.reference.args]\n\
             x = {{ buffer = {input}, shape = [300] }}\n[[kernel.{kernel}.reference.outputs]]\nbuffer = {out}\nshape = [300]\n"
        )
    };
    let cu = dir.join("s.cu").display().to_string();
    let toml = entry("scale_rows", "\"r.out\"", "\"r.in\"", true) + &entry("scale_rows_bug", "\"r+0\"", "\"r+8\"", true);
    std::fs::write(dir.join("lark.toml"), toml).unwrap();
    let (code, doc) = json(&["check", &cu, "--format", "json"]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(kernel(&doc, "scale_rows")["verdict"], "verified", "{doc:#}");
    assert_eq!(kernel(&doc, "scale_rows_bug")["verdict"], "mismatch", "{doc:#}");
    let r = run(&["check", &cu, "--kernel", "scale_rows_bug"]);
    assert!(r.stdout.contains("s.cu:12: error[mismatch]") && r.stdout.contains("[7] is 7 but the reference computes 6"), "{r:?}");
    // `r.in` not declared: the run has no buffer for it.
    std::fs::write(dir.join("lark.toml"), entry("scale_rows", "\"r.out\"", "\"r.in\"", false)).unwrap();
    let r = run(&["check", &cu, "--kernel", "scale_rows"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("kernel scale_rows: uncertified"), "{r:?}");
    assert!(
        r.stdout.contains("the kernel reads memory through the pointer `r.in` inside a struct passed by value: the equivalence run needs its buffer declared"),
        "{r:?}"
    );
    assert!(!r.stdout.contains("mismatch"), "{r:?}");
}

/// A declared field whose value the run cannot pass (a `__half` read at 16 bits) leaves the
/// equivalence unchecked with the reason, rather than passing zeros for it (a kernel scaling by
/// zero disagreed with its reference: a false mismatch).
#[test]
fn a_declared_field_the_run_cannot_pass_leaves_the_equivalence_unchecked() {
    let dir = temp_dir("half-field");
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(
        dir.join("h.cu"),
        "#include <cuda_fp16.h>\nstruct hp {\n  int n;\n  __half scale;\n};\n\
         extern \"C\" __global__ void h(float* out, const float* x, const hp p) {\n\
           int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < p.n) out[i] = x[i] * __half2float(p.scale);\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("references/h.py"), "def reference(x):\n    return x * 0.5\n").unwrap();
    std::fs::write(
        dir.join("lark.toml"),
        "[kernel.h]\ngrid = [2, 1, 1]\nblock = [256, 1, 1]\n[kernel.h.params]\nout = { dtype = \"f32\", len = 300 }\nx = { dtype = \"f32\", len = 300 }\n\
         p.n = { value = 300 }\np.scale = { value = 0.5 }\n[kernel.h.reference]\nfile = \"references/h.py\"\n[kernel.h.reference.args]\n\
         x = { buffer = \"x\", shape = [300] }\n[[kernel.h.reference.outputs]]\nbuffer = \"out\"\nshape = [300]\n",
    )
    .unwrap();
    let r = run(&["check", &dir.join("h.cu").display().to_string()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("kernel h: uncertified"), "{r:?}");
    assert!(!r.stdout.contains("error[mismatch]"), "{r:?}");
    assert!(r.stdout.contains("the declared field `p.scale` cannot be passed to the kernel: the kernel reads it as 16 bits"), "{r:?}");
}

/// A directory with `<name>.cu`, an elementwise kernel `name(float* out, const float* x, int n)`
/// storing `expression` (of `v = x[i]`), its `reference` in `references/<name>.py`, and a
/// lark.toml binding them for `n` elements.
fn elementwise_project(tag: &str, name: &str, expression: &str, reference: &str, n: usize) -> PathBuf {
    let dir = temp_dir(tag);
    std::fs::create_dir_all(dir.join("references")).unwrap();
    let cu = format!(
        "extern \"C\" __global__ void {name}(float* out, const float* x, int n) {{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) {{\n    float v = x[i];\n    out[i] = {expression};\n  }}\n}}\n"
    );
    std::fs::write(dir.join(format!("{name}.cu")), cu).unwrap();
    std::fs::write(dir.join(format!("references/{name}.py")), reference).unwrap();
    let toml = format!(
        "[kernel.{name}]\ngrid = [\"ceil_div(n, 256)\", 1, 1]\nblock = [256, 1, 1]\n[kernel.{name}.params]\nout = {{ dtype = \"f32\", len = \"n\" }}\nx = {{ dtype = \"f32\", len = \"n\" }}\n\
         n = {{ range = [1, 4096] }}\n[kernel.{name}.reference]\nfile = \"references/{name}.py\"\n[kernel.{name}.reference.args]\nx = {{ buffer = \"x\", shape = [\"n\"] }}\n\
         [[kernel.{name}.reference.outputs]]\nbuffer = \"out\"\nshape = [\"n\"]\n[[kernel.{name}.reference.shapes]]\nn = {n}\n"
    );
    std::fs::write(dir.join("lark.toml"), toml).unwrap();
    dir
}

/// Activation kernels against `torch.nn.functional`: Mish through `log1pf` (the prelude's
/// `logf(1 + x)`) is verified against `F.mish`; an ELU with the `- 1` left out is a mismatch at
/// its store, found at an input on the other side of its `x > 0` branch than the first run took,
/// so the message gives both values and the reference's formula, not the first path's formula
/// as the kernel's.
#[test]
fn activation_kernels_are_checked_against_torch_nn_functional() {
    let dir =
        elementwise_project("mish", "mish", "v * tanhf(log1pf(expf(v)))", "import torch.nn.functional as F\ndef reference(x):\n    return F.mish(x)\n", 300);
    let r = run(&["check", &dir.join("mish.cu").display().to_string()]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("kernel mish: verified"), "{r:?}");
    let dir = elementwise_project("elu", "elu", "v > 0.0f ? v : expf(v)", "import torch.nn.functional as F\ndef reference(x):\n    return F.elu(x)\n", 1);
    let r = run(&["check", &dir.join("elu.cu").display().to_string()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("elu.cu:5: error[mismatch]"), "{r:?}");
    assert!(r.stdout.contains("; the reference computes (x[0] > 0 ? x[0] : -1 + exp(x[0]))"), "{r:?}");
    assert!(!r.stdout.contains("the kernel computes x[0]"), "{r:?}");
}

/// `rintf(x)` compiles to `cvt.rni.f32.f32`: a rounding to an integral value, not a change of
/// precision. Read as the identity (as conversions between float formats are), it agreed with
/// a reference `x` on the drawn integer inputs and was `verified`; it is `uncertified`, naming
/// the instruction.
#[test]
fn rounding_a_float_to_an_integral_value_is_not_read_as_the_identity() {
    let dir = elementwise_project("rint", "r", "rintf(v)", "def reference(x):\n    return x\n", 300);
    let r = run(&["check", &dir.join("r.cu").display().to_string()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("kernel r: uncertified"), "{r:?}");
    assert!(r.stdout.contains("`cvt.rni.f32.f32` of an input-dependent float (rounding to an integral value) is not modelled"), "{r:?}");
}
