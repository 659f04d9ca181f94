//! `lark lean emit` end to end: the module of each kernel written atomically to `--out` (the
//! same text as the golden module the analysis tests pin), the obligations and their pinned
//! hashes listed, segmentation proposals validated, and bad input refused with exit 2. An agent
//! asked for the segmentation (`--segment-agent`): the built-in one gives LARK's own cuts, and
//! labelled test doubles (`tests/agents/`) exercise the retries and the refusal.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lean_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lean")
}

fn lark(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lark")).args(args).current_dir(dir).output().unwrap()
}

/// A test-double agent of `tests/agents/`, run through `sh`, with its arguments.
fn double(name: &str, args: &[&Path]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents").join(name);
    let mut cmd = format!("sh {}", script.display());
    for a in args {
        cmd.push_str(&format!(" {}", a.display()));
    }
    cmd
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
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
    // GELU's `0.044715` is stated at the kernel's literal, and a note says so.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("note: the reference is stated with 12003091/268435456 ≈ 0.044714998453855515 where it writes 8943/200000 ≈ 0.044715"), "{stderr}");
    assert!(!stderr.contains("not stated as a hypothesis"), "{stderr}");
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

#[test]
fn the_built_in_agent_proposes_lark_s_own_segmentation_and_it_can_be_reused() {
    let out = scratch("agent-builtin");
    let golden = std::fs::read_to_string(lean_dir().join("golden/softmax_rows.lean")).unwrap();
    let o = lark(&["lean", "emit", "softmax_rows.ptx", "--kernel", "softmax_rows", "--segment-agent", "--out", out.to_str().unwrap()], &lean_dir());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("softmax_rows: 12 segments proposed by built-in prover, accepted after 1 attempt\n"), "{stderr}");
    assert_eq!(std::fs::read_to_string(out.join("softmax_rows.lean")).unwrap(), golden, "the same module as LARK's own segmentation");
    assert_eq!(names_in(&out), ["softmax_rows.lean", "softmax_rows.segments.json"]);
    assert!(stderr.contains(&format!("the segmentation: {}", out.join("softmax_rows.segments.json").display())), "{stderr}");

    // The proposal written is one `--segments` accepts, and it gives the same module again.
    let again = scratch("agent-builtin-again");
    let json = out.join("softmax_rows.segments.json");
    let o = lark(
        &["lean", "emit", "softmax_rows.ptx", "--kernel", "softmax_rows", "--segments", json.to_str().unwrap(), "--out", again.to_str().unwrap()],
        &lean_dir(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(again.join("softmax_rows.lean")).unwrap(), golden);
    assert_eq!(names_in(&again), ["softmax_rows.lean"], "only an agent's proposal is written out");

    // Without `--out` the module goes to standard output and the proposal to the current directory.
    let here = scratch("agent-builtin-here");
    std::fs::create_dir(here.join("references")).unwrap();
    for f in ["softmax_rows.ptx", "softmax_rows.cu", "lark.toml", "references/softmax.py"] {
        std::fs::copy(lean_dir().join(f), here.join(f)).unwrap();
    }
    let o = lark(&["lean", "emit", "softmax_rows.ptx", "--kernel", "softmax_rows", "--segment-agent"], &here);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), golden);
    assert_eq!(std::fs::read_to_string(here.join("softmax_rows.segments.json")).unwrap(), std::fs::read_to_string(&json).unwrap());

    // Usage errors: a file and an agent at once, an agent without `--kernel`, agent flags
    // without `--segment-agent`.
    for args in [
        &["--kernel", "softmax_rows", "--segment-agent", "--segments", json.to_str().unwrap()][..],
        &["--segment-agent"][..],
        &["--kernel", "softmax_rows", "--agent", "true"][..],
    ] {
        let o = lark(&[&["lean", "emit", "softmax_rows.ptx"][..], args].concat(), &lean_dir());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("error:") && o.stdout.is_empty(), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&again);
    let _ = std::fs::remove_dir_all(&here);
}

#[test]
fn a_command_agent_is_told_why_its_answers_were_refused_until_one_is_valid() {
    let dir = scratch("agent-third-time");
    let gap = dir.join("gap.json");
    std::fs::write(&gap, r#"{"segments": [{"name": "a", "start": 0, "stop": 10}, {"name": "b", "start": 11, "stop": 159}]}"#).unwrap();
    let good = dir.join("good.json");
    let proposal = r#"{"segments": [{"name": "everything", "start": 0, "stop": 159, "specification": "the whole softmax"}]}"#;
    std::fs::write(&good, proposal).unwrap();
    let out = dir.join("out");
    let agent = double("third_time.sh", &[&gap, &good]);
    let o = lark(
        &["lean", "emit", "softmax_rows.ptx", "--kernel", "softmax_rows", "--segment-agent", "--agent", &agent, "--out", out.to_str().unwrap()],
        &lean_dir(),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("softmax_rows: 1 segment proposed by command `{agent}`, accepted after 3 attempts\n")), "{stderr}");
    assert!(stderr.contains("  attempt 1: refused: the agent's answer is not usable"), "{stderr}");
    assert!(stderr.contains("  attempt 2: refused: segment 1 starts at 11, but the previous one stops at 10"), "{stderr}");
    let module = std::fs::read_to_string(out.join("softmax_rows.lean")).unwrap();
    assert!(module.contains("{ name := \"everything\", start := 0, stop := 159 }  -- the whole softmax"), "{module}");
    // The accepted proposal is written as it was accepted.
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("softmax_rows.segments.json")).unwrap()).unwrap();
    assert_eq!(written, serde_json::from_str::<serde_json::Value>(proposal).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_agent_without_a_usable_answer_is_refused_and_nothing_is_written() {
    let dir = scratch("agent-garbage");
    let out = dir.join("out");
    let agent = double("garbage.sh", &[]);
    let o = lark(
        &[
            "lean",
            "emit",
            "softmax_rows.ptx",
            "--kernel",
            "softmax_rows",
            "--segment-agent",
            "--agent",
            &agent,
            "--attempts",
            "3",
            "--out",
            out.to_str().unwrap(),
        ],
        &lean_dir(),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("softmax_rows: no segmentation from command `{agent}`: no valid segmentation in 3 attempts")), "{stderr}");
    for n in 1..=3 {
        assert!(stderr.contains(&format!("  attempt {n}: refused: the agent's answer is not usable")), "{stderr}");
    }
    assert!(!stderr.contains("attempt 4") && !stderr.contains("panicked"), "{stderr}");
    assert!(o.stdout.is_empty());
    assert!(!out.exists(), "nothing is written: {:?}", names_in(&out));
    let _ = std::fs::remove_dir_all(&dir);
}
