//! Row-major indexing `y[row * cols + col]` guarded by `col < cols`, with the matrix sizes left
//! open (ranges): two threads store the same element only for the same row and column, which
//! the solver sees only with the row-major lemma (`check::query::add_index_lemmas`, stated
//! under the no-overflow assumption the report names). Without it the store was a "possible
//! race that the interpreter did not reproduce" after a solver timeout. The same kernel with an
//! off-by-one guard (`col <= cols`) still gets its finding: the lemma's premise excludes it.

use serde_json::Value;
use std::process::Command;

const TOML: &str = "[kernel.bias_2d]\nblock = [16, 16, 1]\n[kernel.bias_2d.params]\nrows = { range = [1, 4096] }\ncols = { range = [1, 4096] }\n";

fn check(dir: &std::path::Path, guard: &str) -> Value {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("lark.toml"), TOML).unwrap();
    let src = format!(
        "extern \"C\" __global__ void bias_2d(const float* x, const float* bias, float* y, int rows, int cols) {{\n\
         \x20 int col = blockIdx.x * blockDim.x + threadIdx.x;\n\
         \x20 int row = blockIdx.y * blockDim.y + threadIdx.y;\n\
         \x20 if (row < rows && {guard}) y[row * cols + col] = x[row * cols + col] + bias[col];\n}}\n"
    );
    std::fs::write(dir.join("bias_2d.cu"), src).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lark")).args(["check", "bias_2d.cu", "--format", "json"]).current_dir(dir).output().unwrap();
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    doc["kernels"][0].clone()
}

#[test]
fn a_guarded_row_major_store_is_verified_and_an_off_by_one_guard_is_not() {
    let dir = std::env::temp_dir().join(format!("lark-row-major-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    let ok = check(&dir.join("ok"), "col < cols");
    assert_eq!(ok["verdict"], "verified", "{ok:#}");
    let notes = ok["notes"].to_string();
    assert!(notes.contains("index_no_wrap") || notes.contains("IndexNoWrap"), "the assumption is named: {notes}");

    let bad = check(&dir.join("bad"), "col <= cols");
    let kinds: Vec<&str> = bad["findings"].as_array().unwrap().iter().filter_map(|f| f["kind"].as_str()).collect();
    assert_ne!(bad["verdict"], "verified", "{bad:#}");
    assert!(kinds.contains(&"race") || kinds.contains(&"out_of_bounds"), "{bad:#}");
    let _ = std::fs::remove_dir_all(&dir);
}
