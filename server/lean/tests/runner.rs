//! The runner: timeouts kill the whole process tree, background processes do not keep a
//! finished run waiting, scratch workspaces are well-formed, and — where Lean is installed — a
//! file importing the library is checked for real.

use lean::runner::{group_members, run_with_timeout, Workspace};
use std::process::Command;
use std::time::Duration;

#[test]
fn a_timeout_kills_the_process_tree() {
    let mut cmd = Command::new("sh");
    // A child that starts grandchildren, as `lake` starts `lean`.
    cmd.args(["-c", "sleep 30 & sleep 30 & wait"]);
    let out = run_with_timeout(cmd, Duration::from_millis(300)).unwrap();
    assert!(out.timed_out);
    assert_eq!(out.status, None);
    assert!(out.elapsed < Duration::from_secs(10), "{:?}", out.elapsed);
    // Give the kernel a moment to reap, then nothing of the group may remain.
    std::thread::sleep(Duration::from_millis(100));
    assert!(group_members(out.pid as i32).is_empty(), "left behind: {:?}", group_members(out.pid as i32));
}

#[test]
fn a_finished_run_returns_its_output_without_waiting_for_background_processes() {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "sleep 30 & echo out; echo err >&2; exit 3"]);
    let out = run_with_timeout(cmd, Duration::from_secs(20)).unwrap();
    assert!(!out.timed_out);
    assert_eq!(out.status, Some(3));
    assert_eq!(out.stdout, "out\n");
    assert_eq!(out.stderr, "err\n");
    assert!(out.elapsed < Duration::from_secs(10), "{:?}", out.elapsed);
    std::thread::sleep(Duration::from_millis(100));
    assert!(group_members(out.pid as i32).is_empty());
}

#[test]
fn a_missing_program_is_a_typed_error() {
    let err = run_with_timeout(Command::new("/nonexistent/lake"), Duration::from_secs(1)).unwrap_err();
    assert!(err.to_string().starts_with("cannot start `/nonexistent/lake`: "), "{err}");
}

#[test]
fn scratch_workspaces_require_the_library() {
    let root = std::env::temp_dir().join(format!("lark-ws-test-{}", std::process::id()));
    let ws = Workspace::create(&root, &lean::library_dir()).unwrap();
    let lakefile = std::fs::read_to_string(ws.dir.join("lakefile.toml")).unwrap();
    let lib = lean::library_dir().canonicalize().unwrap();
    assert_eq!(lakefile, format!("name = \"lark_scratch\"\n\n[[require]]\nname = \"lark\"\npath = \"{}\"\n", lib.display()));
    assert_eq!(std::fs::read_to_string(ws.dir.join("lean-toolchain")).unwrap(), std::fs::read_to_string(lib.join("lean-toolchain")).unwrap());
    let f = ws.write_file("Obligation_1.lean", "import Lark\n").unwrap();
    assert_eq!(f, ws.dir.join("Obligation_1.lean"));
    for bad in ["../escape.lean", "a/b.lean", ".hidden.lean", "x.txt", "sp ace.lean"] {
        assert!(ws.write_file(bad, "").is_err(), "{bad}");
    }
    ws.remove().unwrap();
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn checks_a_file_with_real_lean_where_installed() {
    let tc = match lean::toolchain::detect(&lean::library_dir()) {
        Ok(tc) => tc,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    let root = std::env::temp_dir().join(format!("lark-ws-real-{}", std::process::id()));
    let ws = Workspace::create(&root, &lean::library_dir()).unwrap();
    let built = ws.build_library(&tc, Duration::from_secs(1800)).unwrap();
    assert!(built.accepted(), "lake build Lark: {:#?}", built.messages);
    let good = ws
        .write_file(
            "Good.lean",
            "import Lark\nexample : Lark.evalBin Lark.BinOp.add (5 : BitVec 8) 3 = 8 := by decide\n#print axioms Lark.phase_order_independent\n",
        )
        .unwrap();
    let r = ws.check_file(&tc, &good, Duration::from_secs(600)).unwrap();
    assert!(r.accepted(), "{:#?}", r.messages);
    let axioms = lean::check_axioms(&format!("{}{}", r.output.stdout, r.output.stderr), "Lark.phase_order_independent");
    assert!(axioms.is_ok(), "{axioms:?}");
    let bad = ws.write_file("Bad.lean", "import Lark\nexample : (1 : Nat) = 2 := by decide\n").unwrap();
    let r = ws.check_file(&tc, &bad, Duration::from_secs(600)).unwrap();
    assert!(!r.accepted());
    assert!(r.messages.iter().any(|m| m.severity == lean::Severity::Error && m.line == 2), "{:#?}", r.messages);
    // A whole certificate: audited, checked, axioms read back.
    let pinned = lean::Pinned::new("import Lark\n\ntheorem lark_t : Lark.evalBin Lark.BinOp.divU (7 : BitVec 32) 0 = -1 :=");
    let policy = lean::Policy::for_library(&lean::LibraryIndex::load(&lean::library_dir()).unwrap());
    let accepted = lean::check_certificate(&ws, &tc, &pinned, &format!("{} by decide", pinned.statement()), "lark_t", &policy, Duration::from_secs(600));
    let accepted = accepted.unwrap_or_else(|e| panic!("{e}"));
    assert!(accepted.axioms.iter().all(|a| lean::audit::ALLOWED_AXIOMS.contains(&a.as_str())));
    let false_statement = lean::Pinned::new("import Lark\n\ntheorem lark_f : Lark.evalBin Lark.BinOp.divU (7 : BitVec 32) 0 = 0 :=");
    let wrong =
        lean::check_certificate(&ws, &tc, &false_statement, &format!("{} by decide", false_statement.statement()), "lark_f", &policy, Duration::from_secs(600));
    assert!(matches!(wrong, Err(lean::CertifyError::Rejected(_))), "{wrong:?}");
    ws.remove().unwrap();
}

#[test]
fn a_certificate_is_audited_before_lean_runs() {
    // The audit rejects before any process starts, so this needs no Lean: the stand-in `lake`
    // would fail loudly if it were run.
    let root = std::env::temp_dir().join(format!("lark-cert-{}", std::process::id()));
    let ws = Workspace::create(&root, &lean::library_dir()).unwrap();
    let never = lean::Toolchain {
        lean: lean::toolchain::Tool { path: "/nonexistent/lean".into(), version_line: String::new() },
        lake: lean::toolchain::Tool { path: "/nonexistent/lake".into(), version_line: String::new() },
        elan: None,
        lean_version: "4.24.0".into(),
        pinned: "leanprover/lean4:v4.24.0".into(),
    };
    let pinned = lean::Pinned::new("import Lark\n\ntheorem t : (2 : Nat) = 2 :=");
    let policy = lean::Policy::for_library(&lean::LibraryIndex::load(&lean::library_dir()).unwrap());
    let file = format!("{} by sorry", pinned.statement());
    match lean::check_certificate(&ws, &never, &pinned, &file, "t", &policy, Duration::from_secs(5)) {
        Err(lean::CertifyError::Audit(lean::AuditError::Rejected { findings })) => assert_eq!(findings[0].message, "`sorry` is not a proof"),
        other => panic!("{other:?}"),
    }
    // An accepted proof reaches Lean, here the missing stand-in.
    let file = format!("{} rfl", pinned.statement());
    assert!(matches!(lean::check_certificate(&ws, &never, &pinned, &file, "t", &policy, Duration::from_secs(5)), Err(lean::CertifyError::Runner(_))));
    assert!(matches!(
        lean::check_certificate(&ws, &never, &pinned, &file, "t; #eval 1", &policy, Duration::from_secs(5)),
        Err(lean::CertifyError::BadTheoremName(_))
    ));
    ws.remove().unwrap();
    let _ = std::fs::remove_dir_all(root);
}
