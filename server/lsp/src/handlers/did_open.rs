use crate::state::State;
use ide::FileKind;
use std::sync::Arc;
use tower_lsp_server::lsp_types::DidOpenTextDocumentParams;

pub fn handle(state: &Arc<State>, p: DidOpenTextDocumentParams) {
    let doc = p.text_document;
    let kind = crate::from_proto::file_path(&doc.uri).and_then(|p| FileKind::from_path(&p)).or_else(|| FileKind::from_language_id(&doc.language_id));
    if let Some(kind) = kind {
        state.open(&doc.uri, kind, doc.text, doc.version);
    }
}
