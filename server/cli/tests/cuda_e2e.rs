//! `.cu` files through the real `lark` binary: local headers however the file is named (CLI
//! and editor), a compiler that prints more than a pipe buffer, notes, temporary paths, a
//! `--compiler` that is not one, and very long identifiers.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-cuda-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn lark(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lark")).args(args).current_dir(cwd).output().expect("lark runs")
}

fn text(o: &Output) -> String {
    format!("exit {:?}\nstdout:\n{}\nstderr:\n{}", o.status.code(), String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

const KERNEL: &str = r#"#include "compat.h"
#include "../include/util.h"
extern "C" __global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = twice(x[i]) * SCALE;
}
"#;

/// `proj/kernels/kernel.cu` with `compat.h` next to it, `proj/include/util.h` (which includes
/// `inner.h` next to itself) and an interface that makes the kernel verified.
fn project(name: &str) -> PathBuf {
    let root = scratch(name).join("proj");
    std::fs::create_dir_all(root.join("kernels")).unwrap();
    std::fs::create_dir_all(root.join("include")).unwrap();
    std::fs::write(root.join("kernels/compat.h"), "#pragma once\n#define SCALE 2.0f\n").unwrap();
    std::fs::write(root.join("include/util.h"), "#pragma once\n#include \"inner.h\"\n__device__ inline float twice(float v) { return INNER * v; }\n").unwrap();
    std::fs::write(root.join("include/inner.h"), "#define INNER 2.0f\n").unwrap();
    std::fs::write(root.join("kernels/kernel.cu"), KERNEL).unwrap();
    std::fs::write(
        root.join("kernels/lark.toml"),
        "[kernel.scale]\ngrid = [4, 1, 1]\nblock = [64, 1, 1]\n[kernel.scale.params]\nn = { value = 256 }\nx = { dtype = \"f32\", len = 256 }\n",
    )
    .unwrap();
    root
}

#[test]
fn quoted_includes_resolve_next_to_the_file_whatever_the_working_directory() {
    let root = project("cli-headers");
    let abs = root.join("kernels/kernel.cu").display().to_string();
    let cases: [(PathBuf, &str); 5] = [
        (root.join("kernels"), "kernel.cu"),
        (root.clone(), "kernels/kernel.cu"),
        (root.join("include"), "../kernels/kernel.cu"),
        (PathBuf::from("/"), &abs),
        (root.clone(), "include/../kernels/./kernel.cu"),
    ];
    for (cwd, file) in &cases {
        let o = lark(cwd, &["check", file]);
        assert_eq!(o.status.code(), Some(0), "`cd {} && lark check {file}`:\n{}", cwd.display(), text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("kernel scale: verified"), "{}", text(&o));
    }
    // The JSON names the real file, never the temporary copy the compiler saw.
    let o = lark(&root, &["check", "kernels/kernel.cu", "--format", "json"]);
    let all = text(&o);
    assert!(!all.contains("lark-cc"), "{all}");
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["kernels"][0]["verdict"], "verified", "{all}");
}

#[test]
fn the_editor_resolves_local_headers_of_unsaved_text() {
    let root = project("editor-headers");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve").current_dir("/");
    let mut c = StdioClient::spawn(cmd).unwrap();
    let root_uri = format!("file://{}", root.display());
    c.initialize(&root_uri, json!({})).unwrap();
    // Unsaved text: the kernel now writes one element past the end.
    let unsaved = KERNEL.replace("x[i] = twice", "x[i + 1] = twice");
    assert_ne!(unsaved, KERNEL);
    let uri = format!("file://{}", root.join("kernels/kernel.cu").display());
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri, "languageId": "cuda-cpp", "version": 1, "text": unsaved } }));
    let d = c
        .wait_for(Duration::from_secs(60), |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
        .expect("diagnostics for the .cu");
    let diags = d["params"]["diagnostics"].as_array().unwrap();
    assert!(diags.iter().all(|d| !d["message"].as_str().unwrap().contains("not found")), "{diags:#?}");
    assert!(diags.iter().any(|d| d["code"] == "out_of_bounds"), "the unsaved text was checked: {diags:#?}");
    assert!(!d.to_string().contains("lark-cc"), "{d}");
    c.shutdown(Duration::from_secs(10));
}

#[test]
fn a_compiler_printing_more_than_a_pipe_buffer_is_read_to_the_end() {
    let dir = scratch("noisy");
    let warnings: String = (0..2000).map(|i| format!("#warning this is warning number {i} of a kernel that warns a great deal\n")).collect();
    let ok = format!("{warnings}extern \"C\" __global__ void k(float* x) {{ x[threadIdx.x] = 1.0f; }}\n");
    std::fs::write(dir.join("noisy.cu"), &ok).unwrap();
    std::fs::write(dir.join("broken.cu"), format!("{ok}int broken = nosuchthing;\n")).unwrap();
    let started = Instant::now();
    let o = lark(&dir, &["check", "noisy.cu"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("kernel k:"), "{}", text(&o));
    let o = lark(&dir, &["check", "broken.cu", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let diags = doc["diagnostics"].as_array().unwrap();
    assert!(diags.iter().any(|d| d["severity"] == "error" && d["line"] == 2002), "{diags:#?}");
    assert!(started.elapsed() < Duration::from_secs(25), "the compiler was blocked on a full pipe: {:?}", started.elapsed());
}

#[test]
fn notes_belong_to_their_error_and_no_temporary_path_is_shown() {
    let dir = scratch("notes");
    let src = "static __device__ void __syncwarp(unsigned m) {}\n__device__ int f(int a);\n__device__ float f(float a);\n\
               extern \"C\" __global__ void k(float* x, double d) {\n  x[0] = f(d);\n}\n";
    std::fs::write(dir.join("notes.cu"), src).unwrap();
    let o = lark(&dir, &["check", "notes.cu"]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(!all.contains("lark-cc") && !all.contains(&std::env::temp_dir().join("lark-").display().to_string()), "{all}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines().any(|l| l.starts_with("notes.cu:5:")
            && l.contains("error: call to 'f' is ambiguous (note: candidate function at line 2; note: candidate function at line 3)")),
        "{all}"
    );
    assert!(out.lines().any(|l| l.starts_with("notes.cu:1:") && l.contains("previous definition is here at lark_cuda_prelude.h:")), "{all}");
    assert!(!out.lines().any(|l| l.contains(": note: ") || l.contains(": warning: candidate")), "notes are not diagnostics of their own:\n{all}");
    let o = lark(&dir, &["check", "notes.cu", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let severities: Vec<&str> = doc["diagnostics"].as_array().unwrap().iter().map(|d| d["severity"].as_str().unwrap()).collect();
    assert!(severities.iter().all(|s| *s == "error"), "{severities:?}");
}

#[test]
fn a_compiler_option_that_is_not_a_cuda_compiler_is_refused() {
    let dir = scratch("notcc");
    std::fs::write(dir.join("k.cu"), "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n").unwrap();
    for p in ["/bin/true", "/bin/ls"] {
        let o = lark(&dir, &["check", "k.cu", "--compiler", p]);
        let all = text(&o);
        assert_eq!(o.status.code(), Some(2), "{all}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("`{p}` is not a working CUDA compiler: `--version` printed")), "{all}");
    }
}

#[test]
fn very_long_identifiers_are_elided_in_messages() {
    let dir = scratch("long");
    let name = format!("v{}", "x".repeat(5000));
    std::fs::write(dir.join("k.cu"), format!("extern \"C\" __global__ void k(float* p) {{\n  p[0] = {name};\n}}\n")).unwrap();
    let o = lark(&dir, &["check", "k.cu"]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(all.lines().all(|l| l.chars().count() < 300), "{all}");
    assert!(all.contains(&format!("'v{}…{}'", "x".repeat(59), "x".repeat(60))), "{all}");
}

/// C++ kernels in namespaces (and templates) are named by their demangled names: the interface
/// section `[kernel."ns::scale"]` (or `[kernel.scale]`) applies to `_ZN2ns5scaleIfEEvPT_i`,
/// and `--kernel` selects it by either name.
#[test]
fn namespaced_template_kernels_match_their_interface_by_demangled_name() {
    let dir = scratch("namespaced");
    std::fs::write(
        dir.join("k.cu"),
        "namespace ns {\ntemplate <typename T>\n__global__ void scale(T* x, int n) {\n  x[threadIdx.x] = x[threadIdx.x] * 2;\n}\ntemplate __global__ void scale<float>(float*, int);\n}\n",
    )
    .unwrap();
    for section in ["\"ns::scale\"", "scale"] {
        // 64 threads, 32 elements: out of bounds only if the section applied (without it the
        // buffer is unbounded).
        std::fs::write(
            dir.join("lark.toml"),
            format!("[kernel.{section}]\ngrid = [1, 1, 1]\nblock = [64, 1, 1]\n[kernel.{section}.params]\nx = {{ dtype = \"f32\", len = 32 }}\n"),
        )
        .unwrap();
        for only in [None, Some("ns::scale"), Some("scale")] {
            let mut args = vec!["check", "k.cu", "--format", "json"];
            args.extend(only.iter().flat_map(|k| ["--kernel", k]));
            let o = lark(&dir, &args);
            let doc: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
            let k = &doc["kernels"][0];
            assert_eq!(k["name"], "_ZN2ns5scaleIfEEvPT_i", "{section} {only:?}: {}", text(&o));
            assert_eq!(k["verdict"], "out_of_bounds", "{section} {only:?}: {}", text(&o));
            assert_eq!(k["findings"][0]["accesses"][0]["line"], 4, "{}", text(&o));
        }
    }
}
