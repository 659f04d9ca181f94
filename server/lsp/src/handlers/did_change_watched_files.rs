use crate::state::State;
use std::sync::Arc;
use tower_lsp_server::lsp_types::DidChangeWatchedFilesParams;

/// An interface file or the compilation database changed: everything open is checked again
/// (cached kernels whose interface entry did not change stay cached).
pub fn handle(state: &Arc<State>, p: DidChangeWatchedFilesParams) {
    let relevant = p.changes.iter().any(|c| {
        let s = c.uri.as_str();
        s.ends_with(".toml") || s.ends_with("compile_commands.json") || s.ends_with(".cu") || s.ends_with(".cuh") || s.ends_with(".h")
    });
    if relevant {
        state.schedule_all();
    }
}
