use crate::state::State;
use std::sync::Arc;
use tower_lsp_server::lsp_types::DidChangeTextDocumentParams;

/// Synchronous on purpose: the edit is applied before any other message is handled.
pub fn handle(state: &Arc<State>, p: DidChangeTextDocumentParams) {
    state.change(&p.text_document.uri, p.text_document.version, &p.content_changes);
}
