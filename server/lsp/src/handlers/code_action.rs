use crate::state::{lock, State, REQUEST_WAIT};
use crate::{from_proto, to_proto};
use std::sync::Arc;
use std::time::Duration;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::{CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse};

/// How long a code action request waits for its fix search (after up to [`REQUEST_WAIT`] for
/// the analysis); a search that takes longer goes on in the background for the next request.
const FIX_WAIT: Duration = Duration::from_millis(400);

pub async fn handle(state: &Arc<State>, p: CodeActionParams) -> Result<Option<CodeActionResponse>> {
    if let Some(only) = &p.context.only {
        if !only.iter().any(|k| k == &CodeActionKind::QUICKFIX || k.as_str().is_empty()) {
            return Ok(None);
        }
    }
    let uri = p.text_document.uri;
    let Some(fa) = state.fresh_within(&uri, REQUEST_WAIT).await else { return Ok(None) };
    // Edits computed on an older text would land in the wrong place.
    if state.version(&uri) != Some(fa.version) {
        return Ok(Some(vec![]));
    }
    let range = from_proto::range(&fa, p.range);
    let mut done = state.fix_searches.start(&uri.to_string(), &state.host, &state.requests, &fa, range);
    let fixes = match tokio::time::timeout(FIX_WAIT, done.wait_for(Option::is_some)).await {
        Ok(Ok(found)) => found.clone().unwrap_or_default(),
        // Still searching (or the search was superseded): nothing to offer yet.
        _ => return Ok(Some(vec![])),
    };
    let caps = lock(&state.caps).edit;
    let actions: Vec<CodeActionOrCommand> =
        fixes.iter().filter_map(|f| to_proto::code_action(&fa, &uri, f, caps)).map(CodeActionOrCommand::CodeAction).collect();
    Ok(Some(actions))
}
