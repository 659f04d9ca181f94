use crate::state::State;
use crate::{from_proto, to_proto};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::{Hover, HoverParams};

pub async fn handle(state: &State, p: HoverParams) -> Result<Option<Hover>> {
    let pos = p.text_document_position_params;
    let Some(fa) = state.fresh(&pos.text_document.uri).await else { return Ok(None) };
    let offset = from_proto::offset(&fa, pos.position);
    // The Lean part may evaluate the reference once (then it is cached): off the async threads.
    let snapshot = crate::state::lock(&state.host).snapshot();
    Ok(tokio::task::spawn_blocking(move || snapshot.hover(&fa, offset).map(|h| to_proto::hover(&fa, h))).await.unwrap_or(None))
}
