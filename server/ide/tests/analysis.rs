//! The `ide` façade on corpus kernels: diagnostics, hovers, lenses, fixes, and the per-kernel
//! cache (an edit re-checks only the kernel it touched).

use ide::{AnalysisHost, FileAnalysis, FileKind, Settings, SourceFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus");

/// A fresh directory with `lark.toml` and the given corpus files copied in.
fn workspace(name: &str, files: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-ide-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(Path::new(CORPUS).join("lark.toml"), dir.join("lark.toml")).unwrap();
    for f in files {
        std::fs::copy(Path::new(CORPUS).join(f), dir.join(f)).unwrap();
    }
    dir
}

fn open(host: &mut AnalysisHost, path: &Path, text: &str, version: i32) -> String {
    let key = format!("file://{}", path.display());
    host.set_file(SourceFile::new(key.clone(), Some(path.to_path_buf()), FileKind::from_path(path).unwrap(), text.into(), version));
    key
}

fn analyse(host: &AnalysisHost, key: &str) -> Arc<FileAnalysis> {
    host.snapshot().analyse(key).unwrap()
}

fn line_of(fa: &FileAnalysis, range: &std::ops::Range<usize>) -> u32 {
    fa.line_of(range.start) + 1
}

#[test]
fn a_race_in_cuda_is_an_error_with_the_other_access_related_and_a_barrier_fix() {
    let dir = workspace("cu", &["reduce_missing_sync.cu"]);
    let path = dir.join("reduce_missing_sync.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut host = AnalysisHost::new(Settings::default());
    let key = open(&mut host, &path, &text, 1);
    let fa = analyse(&host, &key);
    assert_eq!(fa.kernels.len(), 1, "{:?}", fa.problems);
    let diags = ide::diagnostics(&fa);
    let race = diags.iter().find(|d| d.code == "race").expect("a race diagnostic");
    assert_eq!(line_of(&fa, &race.range), 10);
    assert_eq!(&fa.text[race.range.clone()], "s[tid] += s[tid + stride];");
    assert!(race.message.contains("data race on shared s["), "{}", race.message);
    assert_eq!(race.related.len(), 1);
    assert_eq!(line_of(&fa, &race.related[0].range), 10);
    assert_eq!(race.data.as_ref().unwrap()["kernel"], "reduce_missing_sync");

    let at = fa.text.find("s[tid] +=").unwrap();
    let hover = ide::hover(&fa, at).expect("a hover");
    assert!(hover.markdown.contains("reduce_missing_sync`**: race"), "{}", hover.markdown);
    assert!(hover.markdown.contains("the phase after the barrier at line 7"), "{}", hover.markdown);
    assert!(hover.markdown.contains("read shared `s["), "{}", hover.markdown);
    assert!(hover.markdown.contains("write shared `s["), "{}", hover.markdown);

    let lenses = ide::lenses(&fa);
    assert!(lenses[0].title.starts_with("race · "), "{:?}", lenses);
    assert_eq!(line_of(&fa, &lenses[0].range), 2);

    let fixes = host.snapshot().fixes(&fa, race.range.clone(), &ide::CancelToken::new());
    let fix = fixes.iter().find(|f| f.title.contains("__syncthreads")).expect("a barrier fix");
    let edit = &fix.edits[0].edits[0];
    let mut fixed = text.clone();
    fixed.replace_range(edit.range.clone(), &edit.new_text);
    assert_eq!(fixed.lines().nth(11), Some("    __syncthreads();"), "{fixed}");
    let checks = host.stats().kernel_checks;
    open(&mut host, &path, &fixed, 2);
    let fa = analyse(&host, &key);
    assert!(ide::diagnostics(&fa).iter().all(|d| d.code != "race"), "{:?}", ide::diagnostics(&fa));
    assert_eq!(host.stats().kernel_checks, checks, "the fix was checked already: its result is cached");
}

#[test]
fn a_race_in_ptx_is_reported_on_ptx_lines_and_fixed_with_bar_sync() {
    let dir = workspace("ptx", &["reduce_missing_sync.ptx", "reduce_missing_sync.cu"]);
    let path = dir.join("reduce_missing_sync.ptx");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut host = AnalysisHost::new(Settings::default());
    let key = open(&mut host, &path, &text, 1);
    let fa = analyse(&host, &key);
    let diags = ide::diagnostics(&fa);
    let race = diags.iter().find(|d| d.code == "race").expect("a race diagnostic");
    assert!(fa.text[race.range.clone()].starts_with("st.shared.f32"), "{}", &fa.text[race.range.clone()]);
    assert!(fa.text[race.related[0].range.clone()].starts_with("ld.shared.f32"));
    let fixes = host.snapshot().fixes(&fa, race.range.clone(), &ide::CancelToken::new());
    let fix = fixes.iter().find(|f| f.title.contains("bar.sync 0;")).expect("a barrier fix");
    let edit = &fix.edits[0].edits[0];
    let mut fixed = text.clone();
    fixed.replace_range(edit.range.clone(), &edit.new_text);
    open(&mut host, &path, &fixed, 2);
    let fa = analyse(&host, &key);
    assert!(ide::diagnostics(&fa).iter().all(|d| d.code != "race"));
}

#[test]
fn an_edit_rechecks_only_the_kernel_it_touched() {
    let dir = workspace("two", &["reduce_two_pass.cu"]);
    let path = dir.join("reduce_two_pass.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut host = AnalysisHost::new(Settings::default());
    let key = open(&mut host, &path, &text, 1);
    let fa = analyse(&host, &key);
    assert_eq!(fa.kernels.len(), 2);
    assert_eq!(host.stats().kernel_checks, 2);
    assert!(fa.kernels.iter().all(|k| k.checked));

    // Break the first kernel's loop (the barrier goes) and add a line to it: the second kernel
    // moves down by one line but is not checked again.
    let edited = text.replacen("    __syncthreads();\n  }\n  if (threadIdx.x == 0) partials", "  }\n\n\n  if (threadIdx.x == 0) partials", 1);
    assert_ne!(edited, text);
    open(&mut host, &path, &edited, 2);
    let fa2 = analyse(&host, &key);
    assert_eq!(host.stats().kernel_checks, 3, "only sum_partials is checked again");
    assert!(fa2.kernels[0].checked && !fa2.kernels[1].checked);
    assert_eq!(fa2.kernels[0].report.verdict, check::Verdict::Race);
    // The cached kernel's positions follow the text.
    let (l1, l2) = (fa.kernels[1].header.start, fa2.kernels[1].header.start);
    assert_eq!(fa2.line_of(l2), fa.line_of(l1) + 1);
    let d = ide::diagnostics(&fa2);
    let race = d.iter().find(|d| d.code == "race").unwrap();
    assert!(race.message.contains("line 11"), "{}", race.message);
}

#[test]
fn the_interface_stub_parses_and_names_the_cuda_parameters() {
    let dir = workspace("stub", &["reduce_missing_sync.cu"]);
    std::fs::remove_file(dir.join("lark.toml")).unwrap();
    let path = dir.join("reduce_missing_sync.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut host = AnalysisHost::new(Settings::default());
    let key = open(&mut host, &path, &text, 1);
    let fa = analyse(&host, &key);
    let at = text.find("__shared__").unwrap();
    let fixes = host.snapshot().fixes(&fa, at..at, &ide::CancelToken::new());
    // Its out-of-bounds warnings need a launch nobody declared: the stub is offered to declare it.
    let stub = fixes.iter().find(|f| f.title.contains("interface stub") || f.title.starts_with("Declare the launch of")).expect("a stub fix");
    let e = &stub.edits[0];
    assert!(e.create);
    assert_eq!(e.path.as_deref(), Some(dir.join("lark.toml").as_path()));
    let toml = &e.edits[0].new_text;
    assert!(toml.contains("[kernel.reduce_missing_sync]"), "{toml}");
    assert!(toml.contains("input = { dtype = \"f32\", len = \"n\" }"), "{toml}");
    assert!(toml.contains("n = { value = 1024 }"), "{toml}");
    let i = spec::parse_lark_toml("lark.toml", toml).expect("the stub parses");
    assert!(i.kernel("reduce_missing_sync").is_some());
}

/// A struct passed by value gets one line per field the kernel reads, by name (the struct is
/// defined in the .cu; by byte offset otherwise): a value for a scalar, the buffer for a pointer
/// the kernel reads through; and the stub parses.
#[test]
fn the_interface_stub_lists_the_fields_a_kernel_reads_of_a_struct_passed_by_value() {
    let dir = workspace("stub-struct", &[]);
    let path = dir.join("scaled.cu");
    let text = "struct scale_params {\n  int n;\n  float scale;\n  const float* bias;\n};\n\
                extern \"C\" __global__ void scaled(float* out, const float* x, const scale_params p) {\n\
                  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < p.n) out[i] = x[i] * p.scale + p.bias[i];\n}\n";
    std::fs::write(&path, text).unwrap();
    let mut host = AnalysisHost::new(Settings::default());
    let key = open(&mut host, &path, text, 1);
    let fa = analyse(&host, &key);
    let at = text.find("out[i]").unwrap();
    let fixes = host.snapshot().fixes(&fa, at..at, &ide::CancelToken::new());
    let fix = fixes.iter().find(|f| f.title.contains("interface stub") || f.title.starts_with("Declare the")).expect("a stub fix");
    let stub = fix.edits[0].edits[0].new_text.clone();
    assert!(stub.contains("\"p.n\" = { value = 1024 }"), "{stub}");
    assert!(stub.contains("\"p.scale\" = { value = 1024 }"), "{stub}");
    assert!(stub.contains("\"p.bias\" = { dtype = \"f32\", len = 1024 }  # a pointer in the struct"), "{stub}");
    assert!(!stub.contains("\np = "), "the struct itself takes no value: {stub}");
    spec::parse_lark_toml("lark.toml", &stub).expect("the stub parses");
}

#[test]
fn a_missing_compiler_is_a_diagnostic_and_a_status() {
    let dir = workspace("nocc", &["reduce_missing_sync.cu"]);
    let path = dir.join("reduce_missing_sync.cu");
    let mut settings = Settings::default();
    settings.compiler.path = Some("/nonexistent/clang-99".into());
    let mut host = AnalysisHost::new(settings);
    let key = open(&mut host, &path, &std::fs::read_to_string(&path).unwrap(), 1);
    let fa = analyse(&host, &key);
    assert!(fa.status.as_deref().unwrap().contains("no CUDA compiler found"));
    let d = ide::diagnostics(&fa);
    assert_eq!(d.len(), 1);
    assert!(d[0].message.contains("no CUDA compiler found"), "{}", d[0].message);
}

#[test]
fn compile_errors_are_diagnostics_on_their_lines() {
    let dir = workspace("ccerr", &[]);
    let path = dir.join("bad.cu");
    let text = "extern \"C\" __global__ void k(float* x) {\n  x[threadIdx.x] = nope;\n}\n";
    let mut host = AnalysisHost::new(Settings::default());
    let key = open(&mut host, &path, text, 1);
    let fa = analyse(&host, &key);
    let d = ide::diagnostics(&fa);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(fa.line_of(d[0].range.start), 1);
    assert!(d[0].message.contains("nope"));
}

#[test]
fn compile_commands_json_in_the_workspace_root_gives_defines_and_include_dirs() {
    let dir = workspace("ccdb", &[]);
    // The corpus's interface names no kernel of this folder (and none names `k`): its sections
    // would be reported as typos.
    std::fs::remove_file(dir.join("lark.toml")).unwrap();
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(dir.join("inc/scale.h"), "#define SCALE_BY 2.0f\n").unwrap();
    let path = dir.join("k.cu");
    let text =
        "#include \"scale.h\"\n#ifndef ON\n#error ON must be defined\n#endif\nextern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= SCALE_BY; }\n";
    let db = serde_json::json!([{ "directory": dir, "file": "k.cu", "command": "clang++ -Iinc -DON=1 -c k.cu" }]);
    std::fs::write(dir.join("compile_commands.json"), db.to_string()).unwrap();

    let mut host = AnalysisHost::new(Settings::default());
    let key = open(&mut host, &path, text, 1);
    let fa = analyse(&host, &key);
    assert!(ide::diagnostics(&fa).iter().any(|d| d.code == "error"), "without the database the file does not compile");

    host.set_settings(Settings { workspace_root: Some(dir.clone()), ..Settings::default() });
    let fa = analyse(&host, &key);
    assert!(fa.problems.is_empty(), "{:?}", fa.problems);
    assert_eq!(fa.kernels.len(), 1);
}
