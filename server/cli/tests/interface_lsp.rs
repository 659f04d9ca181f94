//! Interface facts in the editor, through `lark serve`: a race that needs particular values of an
//! index buffer is a warning with a re-checked quick fix that adds the assumption to lark.toml;
//! interface errors are errors on the kernel's header naming their place in the interface file;
//! conflicts between sources are information; a kernel cut short is an error, never verified.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lark-interface-lsp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join(".git")).unwrap();
    for (f, text) in files {
        std::fs::write(d.join(f), text).unwrap();
    }
    d
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

fn start(dir: &Path, options: Value) -> StdioClient {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve");
    let mut c = StdioClient::spawn(cmd).expect("lark serve starts");
    c.initialize(&uri(dir), options).expect("initialize answers");
    c
}

fn open(c: &mut StdioClient, path: &Path, language: &str) -> String {
    let u = uri(path);
    let text = std::fs::read_to_string(path).unwrap();
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": u, "languageId": language, "version": 1, "text": text } }));
    u
}

/// The diagnostics of the next `lark/fileStatus` round for `uri` whose kernels satisfy `done`.
fn diagnostics_when(c: &mut StdioClient, uri: &str, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let status = c
        .wait_for(LONG, |m| m["method"] == "lark/fileStatus" && m["params"]["uri"] == uri && done(&m["params"]["kernels"]))
        .unwrap_or_else(|| panic!("no such status for {uri}: {:#?}", c.inbox));
    let _ = status;
    let m = c
        .inbox
        .iter()
        .rev()
        .find(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
        .cloned()
        .or_else(|| c.wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri))
        .expect("diagnostics");
    m["params"]["diagnostics"].as_array().unwrap().clone()
}

fn diagnostics(c: &mut StdioClient, uri: &str) -> Vec<Value> {
    let m = c.wait_for(LONG, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri).expect("diagnostics");
    m["params"]["diagnostics"].as_array().unwrap().clone()
}

/// The reshape_and_cache tables of the corpus's lark.toml without the assumptions on
/// `slot_mapping`.
fn reshape_without_assumptions() -> String {
    let full = std::fs::read_to_string(repo().join("tests/corpus/lark.toml")).unwrap();
    let ours: String = full
        .split("\n[")
        .filter(|t| t.starts_with("kernel.reshape_and_cache]") || t.starts_with("kernel.reshape_and_cache.params]"))
        .map(|t| format!("[{t}\n"))
        .collect();
    let ours = ours.replace(", assume = [\"injective\", \"in_range(0, 4096)\"]", "");
    assert!(ours.contains("slot_mapping = { dtype = \"i64\", len = 128 }"), "{ours}");
    ours
}

/// The code actions offered at the start of zero-based `line`, asked again (as an editor does
/// on cursor moves) until one whose title starts with `title` is among them: the server answers
/// within a moment with what it has, and a longer fix search (it re-checks the kernel with each
/// candidate assumption) goes on in the background for the next request.
fn code_actions(c: &mut StdioClient, u: &str, line: u64, title: &str) -> Value {
    let deadline = std::time::Instant::now() + LONG;
    loop {
        let actions = c
            .request(
                "textDocument/codeAction",
                json!({ "textDocument": { "uri": u }, "range": { "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 0 } }, "context": { "diagnostics": [] } }),
                LONG,
            )
            .unwrap();
        if actions.as_array().is_some_and(|a| a.iter().any(|x| x["title"].as_str().is_some_and(|t| t.starts_with(title))))
            || std::time::Instant::now() > deadline
        {
            return actions;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Applies the edits of a `WorkspaceEdit` entry (single-line ranges, ASCII) to `text`.
fn apply(text: &str, edits: &[Value]) -> String {
    let mut out = text.to_string();
    let mut edits = edits.to_vec();
    edits.sort_by_key(|e| std::cmp::Reverse((e["range"]["start"]["line"].as_u64(), e["range"]["start"]["character"].as_u64())));
    for e in edits {
        let at = |p: &Value| {
            let line = p["line"].as_u64().unwrap() as usize;
            let start: usize = out.split_inclusive('\n').take(line).map(str::len).sum();
            start + p["character"].as_u64().unwrap() as usize
        };
        let (a, b) = (at(&e["range"]["start"]), at(&e["range"]["end"]));
        out.replace_range(a..b, e["newText"].as_str().unwrap());
    }
    out
}

#[test]
fn a_race_on_undeclared_index_values_is_a_warning_fixed_by_a_rechecked_assumption() {
    let toml = reshape_without_assumptions();
    let dir = folder("assume", &[("lark.toml", &toml)]);
    for ext in ["cu", "ptx"] {
        std::fs::copy(repo().join(format!("tests/corpus/reshape_and_cache.{ext}")), dir.join(format!("reshape_and_cache.{ext}"))).unwrap();
    }
    let mut c = start(&dir, json!({}));
    let u = open(&mut c, &dir.join("reshape_and_cache.cu"), "cuda-cpp");
    let d = diagnostics(&mut c, &u);
    let races: Vec<&Value> = d.iter().filter(|x| x["code"] == "race").collect();
    assert!(!races.is_empty(), "{d:#?}");
    for r in &races {
        assert_eq!(r["severity"], 2, "a warning: {r:#}");
        assert!(r["message"].as_str().unwrap().contains("assume = [\"injective\"]"), "{r:#}");
    }
    let line = races[0]["range"]["start"]["line"].as_u64().unwrap();
    let title = "Assume `slot_mapping` is injective and in_range(0, 2097152) in lark.toml";
    let actions = code_actions(&mut c, &u, line, title);
    let fix = actions.as_array().unwrap().iter().find(|a| a["title"].as_str().unwrap().starts_with(title)).unwrap_or_else(|| panic!("{actions:#}"));
    let change = &fix["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["uri"], uri(&dir.join("lark.toml")));
    let edited = apply(&toml, change["edits"].as_array().unwrap());
    // Injective alone would not do: two distinct slots 2^53 apart write one address (the byte
    // offset wraps around), so the bound of the cache comes with it.
    assert!(edited.contains("slot_mapping = { dtype = \"i64\", len = 128, assume = [\"injective\", \"in_range(0, 2097152)\"] }"), "{edited}");

    // Applied and saved: the race is gone.
    std::fs::write(dir.join("lark.toml"), &edited).unwrap();
    c.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": uri(&dir.join("lark.toml")), "type": 2 }] }));
    let d = diagnostics_when(&mut c, &u, |ks| ks[0]["verdict"] != "race");
    assert!(d.iter().all(|x| x["code"] != "race"), "{d:#?}");
    c.shutdown(Duration::from_secs(10));
}

/// A scatter through an index buffer inside a struct passed by value (`g.idx`, a CUTLASS-style
/// `Params`): the race names it as the .cu does (`g.idx`), and the re-checked assumption goes
/// into lark.toml under that key; saved, the race is gone.
#[test]
fn an_index_buffer_inside_a_struct_gets_a_rechecked_assumption() {
    let cu = "struct Scatter {\n  const int* idx;\n  float* out;\n  int n;\n};\n\
              extern \"C\" __global__ void scatter(const float* x, Scatter g) {\n\
                int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < g.n) g.out[g.idx[i]] = x[i];\n}\n";
    let toml = "[kernel.scatter]\ngrid = [2, 1, 1]\nblock = [128, 1, 1]\n[kernel.scatter.params]\nx = { dtype = \"f32\", len = 256 }\ng.n = { value = 256 }\n";
    let dir = folder("struct-index", &[("lark.toml", toml), ("scatter.cu", cu)]);
    let mut c = start(&dir, json!({}));
    let u = open(&mut c, &dir.join("scatter.cu"), "cuda-cpp");
    let d = diagnostics(&mut c, &u);
    let race = d.iter().find(|x| x["code"] == "race").unwrap_or_else(|| panic!("{d:#?}"));
    assert_eq!(race["severity"], 2, "a warning: {race:#}");
    let message = race["message"].as_str().unwrap();
    assert!(message.contains("g.out[") && message.contains("`g.idx`") && message.contains("assume = [\"injective\"]"), "{message}");
    let line = race["range"]["start"]["line"].as_u64().unwrap();
    let title = "Assume `g.idx` is injective";
    let actions = code_actions(&mut c, &u, line, title);
    let fix = actions.as_array().unwrap().iter().find(|a| a["title"].as_str().unwrap().starts_with(title)).unwrap_or_else(|| panic!("{actions:#}"));
    let change = &fix["edit"]["documentChanges"][0];
    let edited = apply(toml, change["edits"].as_array().unwrap());
    assert!(edited.contains("\"g.idx\" = { assume = [\"injective\"] }"), "{edited}");
    std::fs::write(dir.join("lark.toml"), &edited).unwrap();
    c.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": uri(&dir.join("lark.toml")), "type": 2 }] }));
    let d = diagnostics_when(&mut c, &u, |ks| ks[0]["verdict"] != "race");
    assert!(d.iter().all(|x| x["code"] != "race"), "{d:#?}");
    c.shutdown(Duration::from_secs(10));
}

/// vLLM's expert counting (tests/real/bugs, `vllm_moe_align_zero_init_fixed`): shared counters
/// indexed by expert ids read from `topk_ids`.
const MOE_COUNT_CU: &str =
    "extern \"C\" __global__ void moe_count(const int* __restrict__ topk_ids, int* __restrict__ counts_out, const int numel, const int num_experts) {
  __shared__ int counts[256];
  if (threadIdx.x < num_experts) counts[threadIdx.x] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < numel; i += blockDim.x) atomicAdd(&counts[topk_ids[i]], 1);
  __syncthreads();
  if (threadIdx.x < num_experts) counts_out[threadIdx.x] = counts[threadIdx.x];
}
";

/// An out-of-bounds access through an index buffer whose contents the interface leaves open is
/// a warning naming the index value that triggers it and the bound that would exclude it; the
/// quick fix declares that bound, and is offered only because a re-check shows the access gone.
#[test]
fn an_out_of_bounds_index_from_an_undeclared_buffer_is_fixed_by_a_rechecked_bound() {
    let toml = "[kernel.moe_count]\ngrid = [1, 1, 1]\nblock = [256, 1, 1]\n[kernel.moe_count.params]\ntopk_ids = { dtype = \"i32\", len = 512 }\ncounts_out = { dtype = \"i32\", len = 64 }\nnumel = { value = 512 }\nnum_experts = { value = 64 }\n";
    let dir = folder("oob-index", &[("moe_count.cu", MOE_COUNT_CU), ("lark.toml", toml)]);
    let mut c = start(&dir, json!({}));
    let u = open(&mut c, &dir.join("moe_count.cu"), "cuda-cpp");
    let d = diagnostics_when(&mut c, &u, |ks| ks[0]["verdict"] == "out_of_bounds");
    let oob = d.iter().find(|x| x["code"] == "out_of_bounds").unwrap_or_else(|| panic!("{d:#?}"));
    assert_eq!(oob["severity"], 2, "a warning: {oob:#}");
    let message = oob["message"].as_str().unwrap();
    assert!(message.contains("(with input topk_ids["), "{message}");
    assert!(message.contains("declare assume = [\"in_range(0, 256)\"]"), "{message}");
    let line = oob["range"]["start"]["line"].as_u64().unwrap();
    assert_eq!(line, 4, "the atomicAdd: {oob:#}");
    let title = "Assume `topk_ids` is in_range(0, 256) in lark.toml (re-checked: the out-of-bounds access is gone)";
    let actions = code_actions(&mut c, &u, line, title);
    let fix = actions.as_array().unwrap().iter().find(|a| a["title"] == title).unwrap_or_else(|| panic!("{actions:#}"));
    let change = &fix["edit"]["documentChanges"][0];
    let edited = apply(toml, change["edits"].as_array().unwrap());
    assert!(edited.contains("topk_ids = { dtype = \"i32\", len = 512, assume = [\"in_range(0, 256)\"] }"), "{edited}");
    std::fs::write(dir.join("lark.toml"), &edited).unwrap();
    c.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": uri(&dir.join("lark.toml")), "type": 2 }] }));
    let d = diagnostics_when(&mut c, &u, |ks| ks[0]["verdict"] != "out_of_bounds");
    assert!(d.iter().all(|x| x["code"] != "out_of_bounds"), "{d:#?}");
    c.shutdown(Duration::from_secs(10));
}

const ADD_CU: &str = "extern \"C\" __global__ void add(const float* a, const float* b, float* c) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  c[i] = a[i] + b[i];\n}\n";

#[test]
fn interface_errors_and_conflicts_show_on_the_kernel_header() {
    let dir = folder(
        "errors",
        &[
            ("add.cu", ADD_CU),
            ("lark.toml", "[kernel.add]\ngrid = [8, 1, 1]\nblock = [256, 1, 1]\n[kernel.add.params]\nc = { dtype = \"f32\", len = \"nosuch\" }\n"),
            ("launch.toml", "[kernel.add]\ngrid = [4, 1, 1]\n"),
        ],
    );
    // The editor's interface file sits below the nearest lark.toml.
    let mut c = start(&dir, json!({ "interfaceFile": dir.join("launch.toml").display().to_string() }));
    let u = open(&mut c, &dir.join("add.cu"), "cuda-cpp");
    let d = diagnostics(&mut c, &u);
    let error = d
        .iter()
        .find(|x| x["message"].as_str().unwrap().contains("lark.toml:5:29: kernel.add.params.c.len: `nosuch` is not a scalar parameter"))
        .unwrap_or_else(|| panic!("{d:#?}"));
    assert_eq!((error["severity"].as_u64(), error["range"]["start"]["line"].as_u64()), (Some(1), Some(0)), "an error on the kernel's header: {error:#}");
    let note = d
        .iter()
        .find(|x| x["message"].as_str().unwrap().contains("`kernel.add.grid`: lark.toml says [8, 1, 1], editor settings says [4, 1, 1]; using lark.toml"));
    let note = note.unwrap_or_else(|| panic!("{d:#?}"));
    assert_eq!(note["severity"], 3, "information: {note:#}");
    c.shutdown(Duration::from_secs(10));
}

#[test]
fn a_kernel_cut_short_is_an_error_in_the_editor() {
    let text = std::fs::read(repo().join("tests/corpus/avgpool2_race.ptx")).unwrap();
    let dir = folder("cut", &[]);
    std::fs::write(dir.join("t.ptx"), &text[..970]).unwrap();
    let mut c = start(&dir, json!({}));
    let u = open(&mut c, &dir.join("t.ptx"), "ptx");
    let d = diagnostics_when(&mut c, &u, |ks| ks[0]["verdict"] == "error");
    assert!(d.iter().any(|x| x["severity"] == 1 && x["message"].as_str().unwrap().contains("expected `}`")), "{d:#?}");
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": { "uri": u } }), LONG).unwrap();
    let titles: Vec<&str> = lenses.as_array().unwrap().iter().map(|l| l["command"]["title"].as_str().unwrap_or("")).collect();
    assert!(titles.iter().any(|t| t.starts_with("error")) && !titles.iter().any(|t| t.starts_with("verified")), "{titles:?}");
    c.shutdown(Duration::from_secs(10));
}

/// A sum the blocks accumulate into `out[0]` with `atomicAdd`, opened with a reference but
/// without saying that the caller zeroes `out`: a mismatch naming `out[0]` as it was before the
/// kernel ran, and a quick fix, re-checked, that declares `assume = ["zeroed"]`; applied, the
/// kernel is verified.
#[test]
fn an_accumulation_mismatch_is_fixed_by_a_rechecked_zeroed_output() {
    let equiv = repo().join("tests/equiv");
    let cu = std::fs::read_to_string(equiv.join("total_sum.cu")).unwrap();
    let reference = std::fs::read_to_string(equiv.join("references/total_sum.py")).unwrap();
    let toml = "[kernel.total_sum]\ngrid = [\"ceil_div(n, 256)\", 1, 1]\nblock = [256, 1, 1]\n[kernel.total_sum.params]\n\
                out = { dtype = \"f32\", len = 1 }\nx = { dtype = \"f32\", len = \"n\" }\nn = { range = [1, 4096] }\n\
                [kernel.total_sum.reference]\nfile = \"total_sum.py\"\n[kernel.total_sum.reference.args]\nx = { buffer = \"x\", shape = [\"n\"] }\n\
                [[kernel.total_sum.reference.outputs]]\nbuffer = \"out\"\nshape = [1]\n[[kernel.total_sum.reference.shapes]]\nn = 700\n";
    let dir = folder("zeroed-output", &[("total_sum.cu", &cu), ("total_sum.py", &reference), ("lark.toml", toml)]);
    let mut c = start(&dir, json!({}));
    let u = open(&mut c, &dir.join("total_sum.cu"), "cuda-cpp");
    let d = diagnostics_when(&mut c, &u, |ks| ks[0]["verdict"] == "mismatch");
    let mismatch = d.iter().find(|x| x["code"] == "mismatch").unwrap_or_else(|| panic!("{d:#?}"));
    let message = mismatch["message"].as_str().unwrap();
    assert!(message.contains("out[0] (as it was before the kernel ran)"), "{message}");
    let line = mismatch["range"]["start"]["line"].as_u64().unwrap();
    let title = "Assume `out` is zeroed in lark.toml (re-checked: the mismatch is gone)";
    let actions = code_actions(&mut c, &u, line, title);
    let fix = actions.as_array().unwrap().iter().find(|a| a["title"] == title).unwrap_or_else(|| panic!("{actions:#}"));
    let edited = apply(toml, fix["edit"]["documentChanges"][0]["edits"].as_array().unwrap());
    assert!(edited.contains("out = { dtype = \"f32\", len = 1, assume = [\"zeroed\"] }"), "{edited}");
    std::fs::write(dir.join("lark.toml"), &edited).unwrap();
    c.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": uri(&dir.join("lark.toml")), "type": 2 }] }));
    let d = diagnostics_when(&mut c, &u, |ks| ks[0]["verdict"] == "verified");
    assert!(d.iter().all(|x| x["code"] != "mismatch"), "{d:#?}");
    c.shutdown(Duration::from_secs(10));
}

const SCALED_CU: &str = "struct scale_params {\n  int n;\n  float scale;\n};\n\
extern \"C\" __global__ void scaled(float* out, const float* x, const scale_params p) {\n\
  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < p.n) out[i] = x[i] * p.scale;\n}\n";

/// Fields of a struct passed by value, named in lark.toml, through `lark serve`: a name the
/// struct lacks is an interface error at its place in lark.toml that lists the struct's fields;
/// with the field named right the kernel shows no diagnostics (its length `p.n` is declared, so
/// the stores are in bounds).
#[test]
fn a_struct_field_named_in_lark_toml_is_resolved_or_reported_in_the_editor() {
    let toml = |field: &str| {
        format!(
            "[kernel.scaled]\ngrid = [2, 1, 1]\nblock = [256, 1, 1]\n[kernel.scaled.params]\nout = {{ dtype = \"f32\", len = 300 }}\n\
             x = {{ dtype = \"f32\", len = 300 }}\np.{field} = {{ value = 300 }}\n"
        )
    };
    let dir = folder("struct-fields", &[("scaled.cu", SCALED_CU), ("lark.toml", &toml("count"))]);
    let mut c = start(&dir, json!({}));
    let u = open(&mut c, &dir.join("scaled.cu"), "cuda-cpp");
    let d = diagnostics(&mut c, &u);
    let error = d
        .iter()
        .find(|x| x["message"].as_str().unwrap().contains("lark.toml:7:3: kernel.scaled.params.p.count: `count` is not a field of `p` (fields: n, scale)"))
        .unwrap_or_else(|| panic!("{d:#?}"));
    assert_eq!(error["severity"].as_u64(), Some(1), "{error:#}");
    c.shutdown(Duration::from_secs(10));

    std::fs::write(dir.join("lark.toml"), toml("n")).unwrap();
    let mut c = start(&dir, json!({}));
    let u = open(&mut c, &dir.join("scaled.cu"), "cuda-cpp");
    let d = diagnostics_when(&mut c, &u, |ks| ks.as_array().is_some_and(|ks| ks.iter().any(|k| k["verdict"] == "verified")));
    assert!(d.iter().all(|x| x["severity"].as_u64() != Some(1)), "no errors: {d:#?}");
    c.shutdown(Duration::from_secs(10));
}
