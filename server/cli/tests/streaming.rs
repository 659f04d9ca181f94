//! `lark check` prints each kernel's result as soon as it is known, not when every file is done:
//! a quick kernel's verdict is on stdout while a slow one is still being checked.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus").canonicalize().unwrap()
}

#[test]
fn a_quick_kernel_is_reported_while_a_slow_one_is_still_checked() {
    // vector_add takes about 0.1 s; histogram_shared's equivalence check takes several seconds.
    let mut child = Command::new(env!("CARGO_BIN_EXE_lark"))
        .args(["check", "vector_add.ptx", "histogram_shared.ptx"])
        .current_dir(corpus())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().expect("a first line").unwrap();
    let first_after = started.elapsed();
    let still_running = child.try_wait().unwrap().is_none();
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = child.wait().unwrap();
    let total = started.elapsed();
    assert!(first.starts_with("vector_add.ptx: kernel vector_add: verified"), "{first}");
    assert!(still_running, "the first verdict came only when the check ended ({first_after:?} of {total:?}); the rest: {rest:#?}");
    assert!(total > first_after + Duration::from_millis(500), "first line after {first_after:?}, end after {total:?}");
    assert!(rest.iter().any(|l| l.starts_with("histogram_shared.ptx: kernel histogram_shared:")), "{rest:#?}");
    // Exit codes are those of the whole run (histogram_shared is uncertified).
    assert_eq!(status.code(), Some(1));
}
