use crate::state::State;
use crate::to_proto;
use std::sync::{Arc, Mutex};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::{CodeLens, CodeLensParams};

pub async fn handle(state: &Arc<State>, p: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
    let uri = p.text_document.uri;
    let Some(fa) = state.fresh(&uri).await else { return Ok(None) };
    // Counting the Lean obligations may evaluate the reference once: off the async threads. A
    // certificate found on disk is rechecked in the background the first time it is seen.
    let snapshot = crate::state::lock(&state.host).snapshot();
    let certs = state.clone();
    let to_recheck = Arc::new(Mutex::new(Vec::new()));
    let found = to_recheck.clone();
    let lenses = tokio::task::spawn_blocking(move || {
        let recheck = |dir: &std::path::Path| certs.certifications.recheck_title(dir, &found);
        snapshot.lenses_with(&fa, &recheck).iter().map(|l| to_proto::code_lens(&fa, &uri, l)).collect()
    })
    .await
    .unwrap_or_default();
    let dirs = std::mem::take(&mut *crate::state::lock(&to_recheck));
    state.start_rechecks(dirs);
    Ok(Some(lenses))
}
