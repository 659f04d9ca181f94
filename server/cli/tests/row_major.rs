//! The row-major index lemma through `lark check`, on a kernel opened with no lark.toml: ggml's
//! rope pass-through indexing `row * ne0 + i0`, `i0` a global y index
//! (`server/check/tests/fixtures/rows_2d_copy.cu`), is race-free for every launch and size, and
//! the report says it relied on index arithmetic not wrapping around. Without the lemma the
//! race question runs out of time and the kernel is `uncertified`.

use std::path::Path;
use std::process::Command;

#[test]
fn a_row_copy_indexed_by_a_global_y_index_is_verified_with_no_setup() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../check/tests/fixtures");
    let dir = std::env::temp_dir().join(format!("lark-row-major-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for ext in ["cu", "ptx"] {
        std::fs::copy(fixtures.join(format!("rows_2d_copy.{ext}")), dir.join(format!("rows_2d_copy.{ext}"))).unwrap();
    }
    // The lemma's query takes about half a second, a quarter of the query's time: 8 s per query
    // keeps it clear of the parallel test run's load (see server/check/tests/row_major.rs).
    let o = Command::new(env!("CARGO_BIN_EXE_lark")).args(["check", "rows_2d_copy.ptx", "--timeout-ms", "8000"]).current_dir(&dir).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("kernel rows_2d_copy: verified"), "{out}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("does not overflow"), "the no-wrap assumption is named: {out}");
    assert_eq!(o.status.code(), Some(0), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
