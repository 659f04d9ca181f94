use crate::state::State;
use std::sync::Arc;
use tower_lsp_server::lsp_types::DidCloseTextDocumentParams;

pub async fn handle(state: &Arc<State>, p: DidCloseTextDocumentParams) {
    state.close(&p.text_document.uri);
    state.segmentations.forget_document(p.text_document.uri.as_str());
    state.client.publish_diagnostics(p.text_document.uri, vec![], None).await;
}
