use crate::commands;
use crate::state::State;
use serde_json::Value;
use std::str::FromStr;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::{ExecuteCommandParams, LSPAny, Uri};

fn uri_arg(p: &ExecuteCommandParams) -> Result<Uri> {
    let s = p.arguments.first().and_then(Value::as_str).ok_or_else(|| Error::invalid_params(format!("{} expects [uri]", p.command)))?;
    Uri::from_str(s).map_err(|e| Error::invalid_params(format!("not a URI: {s}: {e}")))
}

pub async fn handle(state: &Arc<State>, p: ExecuteCommandParams) -> Result<Option<LSPAny>> {
    match p.command.as_str() {
        commands::RECHECK => {
            let uri = uri_arg(&p)?;
            if !state.recheck(&uri).await {
                return Err(Error::invalid_params(format!("{} is not open", uri.as_str())));
            }
            Ok(None)
        }
        commands::SHOW_MODEL | commands::SHOW_MODEL_FOR_FILE => {
            let uri = uri_arg(&p)?;
            let Some(fa) = state.fresh_within(&uri, crate::state::COMMAND_WAIT).await else {
                return Err(Error::invalid_params(format!("{} is not open", uri.as_str())));
            };
            let snapshot = crate::state::lock(&state.host).snapshot();
            Ok(Some(Value::String(snapshot.show_model(&fa))))
        }
        commands::SHOW_LEAN | commands::SHOW_LEAN_FOR_FILE => {
            let uri = uri_arg(&p)?;
            let kernel = p.arguments.get(1).and_then(Value::as_str).map(str::to_string);
            let Some(fa) = state.fresh_within(&uri, crate::state::COMMAND_WAIT).await else {
                return Err(Error::invalid_params(format!("{} is not open", uri.as_str())));
            };
            let snapshot = crate::state::lock(&state.host).snapshot();
            // The agent's segmentation, when one was accepted for this kernel and still fits it.
            let name = match &kernel {
                Some(n) => fa.kernels.iter().find(|k| k.name == *n || k.source_name == *n).map(|k| k.name.clone()),
                None => fa.kernels.first().map(|k| k.name.clone()),
            };
            let proposal = name.as_deref().and_then(|n| state.segmentations.proposal(uri.as_str(), n));
            let generated = tokio::task::spawn_blocking(move || {
                let by_agent = proposal.and_then(|p| snapshot.lean_module_with_segments(&fa, name.as_deref(), &p).ok().map(Arc::new));
                let agent = by_agent.is_some();
                let g = match by_agent {
                    Some(g) => Ok(g),
                    None => snapshot.lean_module(&fa, kernel.as_deref()),
                };
                g.map(|g| (g, fa, agent, name))
            })
            .await
            .map_err(|e| Error::invalid_params(format!("generating the Lean module failed: {e}")))?;
            let (g, fa, agent, name) = generated.map_err(Error::invalid_params)?;
            if !agent {
                if let Some(n) = &name {
                    state.segmentations.forget(uri.as_str(), n);
                }
            }
            let base = fa.path.as_ref().and_then(|p| p.file_name()).map_or_else(|| "untitled".to_string(), |n| n.to_string_lossy().into_owned());
            let kernel = g.module.trim_start_matches("LarkGen.").to_string();
            Ok(Some(serde_json::json!({
                "uri": format!("lark-lean:/{base}/{kernel}.lean"),
                "text": g.text,
                "kernel": kernel,
                "segmentation": if agent { "agent" } else { "lark" },
            })))
        }
        commands::PROPOSE_SEGMENTS => {
            let uri = uri_arg(&p)?;
            let kernel =
                p.arguments.get(1).and_then(Value::as_str).ok_or_else(|| Error::invalid_params(format!("{} expects [uri, kernel]", p.command)))?.to_string();
            state.start_segment_proposal(uri, kernel).map_err(Error::invalid_params)?;
            Ok(Some(serde_json::json!({ "started": true })))
        }
        commands::CERTIFY | commands::CANCEL_CERTIFY => {
            let uri = uri_arg(&p)?;
            let kernel =
                p.arguments.get(1).and_then(Value::as_str).ok_or_else(|| Error::invalid_params(format!("{} expects [uri, kernel]", p.command)))?.to_string();
            if p.command == commands::CANCEL_CERTIFY {
                return Ok(Some(Value::Bool(state.certifications.cancel(uri.as_str(), &kernel))));
            }
            let segment = p.arguments.get(2).and_then(Value::as_str).map(str::to_string);
            state.start_certify(uri, kernel, segment).map_err(Error::invalid_params)?;
            Ok(Some(serde_json::json!({ "started": true })))
        }
        other => Err(Error::invalid_params(format!("unknown command `{other}`"))),
    }
}
