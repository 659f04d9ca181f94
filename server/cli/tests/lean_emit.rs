//! `lark lean emit` end to end: the module of each kernel written atomically to `--out` (the
//! same text as the golden module the analysis tests pin), the obligations and their pinned
//! hashes listed, segmentation proposals validated, and bad input refused with exit 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lean_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lean")
}

fn lark(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lark")).args(args).current_dir(dir).output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-lean-emit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn emit_writes_the_module_and_lists_the_obligations() {
    let out = scratch("out");
    let o = lark(&["lean", "emit", "softmax_rows.ptx", "--out", out.to_str().unwrap()], &lean_dir());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let written = std::fs::read_to_string(out.join("softmax_rows.lean")).unwrap();
    let golden = std::fs::read_to_string(lean_dir().join("golden/softmax_rows.lean")).unwrap();
    assert_eq!(written, golden, "the CLI and the analysis generate the same module");
    assert!(stderr.contains("12 segments, 5 obligations to prove"), "{stderr}");
    assert!(stderr.contains("s11_store_loop_agrees (sha256 "), "{stderr}");
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, vec!["softmax_rows.lean".to_string()]);
    // Without --out the module goes to standard output.
    let o = lark(&["lean", "emit", "gelu_tanh.ptx"], &lean_dir());
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), std::fs::read_to_string(lean_dir().join("golden/gelu_tanh.lean")).unwrap());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_segmentation_proposal_is_used_when_valid_and_refused_otherwise() {
    let dir = scratch("segments");
    let good = dir.join("good.json");
    std::fs::write(&good, r#"{"segments": [{"name": "everything", "start": 0, "stop": 159, "specification": "the whole softmax"}]}"#).unwrap();
    let o = lark(&["lean", "emit", "softmax_rows.ptx", "--kernel", "softmax_rows", "--segments", good.to_str().unwrap()], &lean_dir());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("{ name := \"everything\", start := 0, stop := 159 }  -- the whole softmax"),
        "{}",
        &text[text.find("def segments").unwrap()..][..300]
    );
    assert!(text.contains("def everything_agrees : Prop"));

    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"segments": [{"name": "first", "start": 0, "stop": 100}]}"#).unwrap();
    let o = lark(&["lean", "emit", "softmax_rows.ptx", "--kernel", "softmax_rows", "--segments", bad.to_str().unwrap()], &lean_dir());
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("segmentation proposal refused: the segments stop at instruction 100, but the kernel has 159"), "{stderr}");
    assert!(o.stdout.is_empty());

    std::fs::write(&bad, "{ not json").unwrap();
    let o = lark(&["lean", "emit", "softmax_rows.ptx", "--kernel", "softmax_rows", "--segments", bad.to_str().unwrap()], &lean_dir());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not valid JSON"), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_refused_with_a_clear_error() {
    let o = lark(&["lean", "emit", "nosuch.ptx"], &lean_dir());
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("nosuch.ptx") && !stderr.contains("panicked"), "{stderr}");

    // Truncated PTX: an error, never a module of half a kernel.
    let dir = scratch("truncated");
    let ptx = std::fs::read_to_string(lean_dir().join("softmax_rows.ptx")).unwrap();
    std::fs::write(dir.join("t.ptx"), &ptx[..ptx.len() / 2]).unwrap();
    let o = lark(&["lean", "emit", "t.ptx"], &dir);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(!stderr.contains("panicked"), "{stderr}");

    // No lark.toml: the kernel and its segments, no obligation, and a note saying why.
    std::fs::copy(lean_dir().join("softmax_rows.ptx"), dir.join("s.ptx")).unwrap();
    let o = lark(&["lean", "emit", "s.ptx"], &dir);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("0 obligations to prove") && stderr.contains("the launch is not fixed"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
