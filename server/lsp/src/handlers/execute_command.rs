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
            let generated = tokio::task::spawn_blocking(move || snapshot.lean_module(&fa, kernel.as_deref()).map(|g| (g, fa)))
                .await
                .map_err(|e| Error::invalid_params(format!("generating the Lean module failed: {e}")))?;
            let (g, fa) = generated.map_err(Error::invalid_params)?;
            let base = fa.path.as_ref().and_then(|p| p.file_name()).map_or_else(|| "untitled".to_string(), |n| n.to_string_lossy().into_owned());
            let kernel = g.module.trim_start_matches("LarkGen.").to_string();
            Ok(Some(serde_json::json!({
                "uri": format!("lark-lean:/{base}/{kernel}.lean"),
                "text": g.text,
                "kernel": kernel,
            })))
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
