use crate::settings::{find_lark, ClientSettings};
use crate::state::{lock, State};
use std::sync::Arc;
use tower_lsp_server::lsp_types::{ConfigurationItem, DidChangeConfigurationParams};

/// New settings: pushed as `{settings: {lark: ...}}`, or pulled with `workspace/configuration`
/// when the client only says that something changed.
pub async fn handle(state: &Arc<State>, p: DidChangeConfigurationParams) {
    let pushed = find_lark(&p.settings).cloned();
    let value = match pushed {
        Some(v) => Some(v),
        None if lock(&state.caps).configuration => {
            let item = ConfigurationItem { scope_uri: None, section: Some("lark".into()) };
            state.client.configuration(vec![item]).await.ok().and_then(|mut v| v.pop()).filter(|v| v.is_object())
        }
        None => None,
    };
    if let Some(v) = value {
        state.apply_settings(ClientSettings::from_json(&v));
        state.schedule_all();
    }
}
