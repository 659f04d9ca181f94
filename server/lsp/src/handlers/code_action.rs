use crate::state::{lock, State};
use crate::{from_proto, to_proto};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::{CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse};

/// Set when the request's future is dropped ($/cancelRequest), so the fix search stops.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
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
    let flag = Arc::new(AtomicBool::new(false));
    let _cancel = CancelOnDrop(flag.clone());
    let fa2 = fa.clone();
    let fixes = state
        .with_solver(move |solver| snapshot.fixes(&fa2, range, solver, &|| flag.load(Ordering::SeqCst)))
        .await
        .map_err(|e| Error { message: format!("internal error in code actions: {e}").into(), ..Error::internal_error() })?;
    let caps = lock(&state.caps).edit;
    let actions: Vec<CodeActionOrCommand> =
        fixes.iter().filter_map(|f| to_proto::code_action(&fa, &uri, f, caps)).map(CodeActionOrCommand::CodeAction).collect();
    Ok(Some(actions))
}
