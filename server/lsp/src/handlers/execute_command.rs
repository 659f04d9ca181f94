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
        other => Err(Error::invalid_params(format!("unknown command `{other}`"))),
    }
}
