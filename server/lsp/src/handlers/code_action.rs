use crate::state::{lock, State, REQUEST_WAIT};
use crate::{from_proto, to_proto};
use std::sync::Arc;
use std::time::Duration;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::{self as lsp, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse};

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
    let mut done = state.fix_searches.start(&uri.to_string(), &state.host, &state.requests, &fa, range.clone());
    let fixes = match tokio::time::timeout(FIX_WAIT, done.wait_for(Option::is_some)).await {
        Ok(Ok(found)) => found.clone().unwrap_or_default(),
        // Still searching (or the search was superseded): nothing to offer yet.
        _ => return Ok(Some(vec![])),
    };
    let caps = lock(&state.caps).edit;
    let mut actions: Vec<CodeActionOrCommand> =
        fixes.iter().filter_map(|f| to_proto::code_action(&fa, &uri, f, caps)).map(CodeActionOrCommand::CodeAction).collect();
    // "Certify": for each kernel the engine verified that the range touches, and for the
    // segments on the range's line that have an obligation of their own; and "Propose segments"
    // for each such kernel (the agent's cuts for its Lean module).
    let agent = lock(&state.settings).agent().name();
    let verified: Vec<&ide::KernelResult> = fa
        .kernels
        .iter()
        .filter(|k| k.report.verdict == check::Verdict::Verified && k.extent.start <= range.end && range.start <= k.extent.end.max(k.header.end))
        .collect();
    let line0 = fa.line_of(range.start);
    let segments: Vec<(String, Vec<String>)> = {
        let snapshot = lock(&state.host).snapshot();
        let (fa2, names) = (fa.clone(), verified.iter().map(|k| k.name.clone()).collect::<Vec<_>>());
        tokio::task::spawn_blocking(move || names.into_iter().map(|n| (n.clone(), snapshot.certifiable_segments_at(&fa2, &n, line0))).collect())
            .await
            .unwrap_or_default()
    };
    for k in verified {
        let arg = |s: &str| serde_json::Value::String(s.to_string());
        actions.push(CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: format!("Certify `{}` with Lean ({agent})", k.source_name),
            command: Some(lsp::Command {
                title: "Certify kernel".into(),
                command: crate::commands::CERTIFY.into(),
                arguments: Some(vec![arg(uri.as_str()), arg(&k.name)]),
            }),
            ..Default::default()
        }));
        actions.push(CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: format!("Propose segments for `{}` with the agent ({agent})", k.source_name),
            command: Some(lsp::Command {
                title: "Propose segments".into(),
                command: crate::commands::PROPOSE_SEGMENTS.into(),
                arguments: Some(vec![arg(uri.as_str()), arg(&k.name)]),
            }),
            ..Default::default()
        }));
        for seg in segments.iter().filter(|(n, _)| *n == k.name).flat_map(|(_, s)| s) {
            actions.push(CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: format!("Certify segment `{seg}` of `{}` with Lean ({agent})", k.source_name),
                command: Some(lsp::Command {
                    title: "Certify this segment".into(),
                    command: crate::commands::CERTIFY.into(),
                    arguments: Some(vec![arg(uri.as_str()), arg(&k.name), arg(seg)]),
                }),
                ..Default::default()
            }));
        }
    }
    Ok(Some(actions))
}
