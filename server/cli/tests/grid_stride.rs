//! A grid-stride loop opened with no lark.toml: its two-thread queries carry the unique division
//! of `i = G + k*S` by the grid's thread count (`check::query::add_stride_lemmas`), under the
//! lifter's own no-overflow facts. cvc5 decides them in well under a second; z3's incremental
//! core times out on them and the query is asked again with the `qfbv` tactic, which decides it.
//! That took z3 about 1.8 s of CPU on the 2-core CI machine (2.3-2.4 s for the whole kernel,
//! measured 2026-12-02 in the morning), and 3.5 s on the same kind of machine later that day
//! (the `qfbv` tactic alone, on the dumped query, with nothing else running): past the 2 s
//! default, and under the load of the parallel test run past 4 s too. So the test gives each
//! query 10 s (what it tests is that the query is decidable by each solver, not the default's
//! margin, which this kernel does not have on every machine: see the session notes).

use std::process::Command;

#[test]
fn a_grid_stride_loop_without_setup_is_verified_with_either_solver() {
    let dir = std::env::temp_dir().join(format!("lark-grid-stride-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("saxpy.cu");
    std::fs::write(
        &file,
        "__global__ void saxpy(int n, float a, const float* x, float* y) {\n  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];\n}\n",
    )
    .unwrap();
    for solver in ["cvc5", "z3"] {
        let o = Command::new(env!("CARGO_BIN_EXE_lark"))
            .args(["check", "saxpy.cu", "--solver", solver, "--timeout-ms", "10000"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("kernel _Z5saxpyifPKfPf: verified"), "{solver}: {out}\n{}", String::from_utf8_lossy(&o.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
