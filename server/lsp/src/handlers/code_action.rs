use crate::state::{lock, State};
use crate::{from_proto, to_proto};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::{CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse};

/// Cancels the fix search when the request's future is dropped ($/cancelRequest).
struct CancelOnDrop(ide::CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

pub async fn handle(state: &Arc<State>, p: CodeActionParams) -> Result<Option<CodeActionResponse>> {
    if let Some(only) = &p.context.only {
        if !only.iter().any(|k| k == &CodeActionKind::QUICKFIX || k.as_str().is_empty()) {
            return Ok(None);
        }
    }
    let uri = p.text_document.uri;
    let Some(fa) = state.fresh(&uri).await else { return Ok(None) };
    let range = from_proto::range(&fa, p.range);
    let snapshot = lock(&state.host).snapshot();
    let request = ide::CancelToken::new();
    let _cancel = CancelOnDrop(request.clone());
    let fa2 = fa.clone();
    let fixes = state
        .pool
        .run(move || snapshot.fixes(&fa2, range, &request))
        .await
        .map_err(|e| Error { message: format!("internal error in code actions: {e}").into(), ..Error::internal_error() })?;
    let caps = lock(&state.caps).edit;
    let actions: Vec<CodeActionOrCommand> =
        fixes.iter().filter_map(|f| to_proto::code_action(&fa, &uri, f, caps)).map(CodeActionOrCommand::CodeAction).collect();
    Ok(Some(actions))
}
