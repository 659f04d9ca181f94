use crate::state::State;
use crate::to_proto;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::{CodeLens, CodeLensParams};

pub async fn handle(state: &State, p: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
    let uri = p.text_document.uri;
    let Some(fa) = state.fresh(&uri).await else { return Ok(None) };
    // Counting the Lean obligations may evaluate the reference once: off the async threads.
    let snapshot = crate::state::lock(&state.host).snapshot();
    let lenses =
        tokio::task::spawn_blocking(move || snapshot.lenses(&fa).iter().map(|l| to_proto::code_lens(&fa, &uri, l)).collect()).await.unwrap_or_default();
    Ok(Some(lenses))
}
