//! `lark/stats`: counters for tests and benchmarks (kernel checks that ran, compiler runs).

use crate::state::{lock, State};
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::Result;

pub fn handle(state: &State) -> Result<Value> {
    let s = lock(&state.host).stats();
    Ok(json!({ "kernelChecks": s.kernel_checks, "compiles": s.compiles, "cachedKernels": s.cached_kernels }))
}
