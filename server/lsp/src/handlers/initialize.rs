use crate::commands;
use crate::log::info;
use crate::settings::{find_lark, ClientSettings};
use crate::state::{lock, ClientCaps, State};
use crate::to_proto::EditCaps;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::*;

pub fn handle(state: &Arc<State>, p: InitializeParams) -> Result<InitializeResult> {
    let c = &p.capabilities;
    let ws = c.workspace.as_ref();
    let edit = ws.and_then(|w| w.workspace_edit.as_ref());
    *lock(&state.caps) = ClientCaps {
        edit: EditCaps {
            document_changes: edit.and_then(|e| e.document_changes).unwrap_or(false),
            create_files: edit.and_then(|e| e.resource_operations.as_ref()).is_some_and(|ops| ops.contains(&ResourceOperationKind::Create)),
        },
        code_lens_refresh: ws.and_then(|w| w.code_lens.as_ref()).and_then(|c| c.refresh_support).unwrap_or(false),
        watch_files: ws.and_then(|w| w.did_change_watched_files.as_ref()).and_then(|d| d.dynamic_registration).unwrap_or(false),
        configuration: ws.and_then(|w| w.configuration).unwrap_or(false),
        work_done_progress: c.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false),
    };
    #[allow(deprecated)]
    let root = p
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .and_then(|f| crate::from_proto::file_path(&f.uri))
        .or_else(|| p.root_uri.as_ref().and_then(crate::from_proto::file_path));
    *lock(&state.workspace_root) = root.clone();
    let settings = p.initialization_options.as_ref().and_then(find_lark).map(ClientSettings::from_json).unwrap_or_default();
    state.apply_settings(settings);
    info!("lark {} serving {}", env!("CARGO_PKG_VERSION"), root.as_deref().map_or("(no workspace)".into(), |r| r.display().to_string()));
    Ok(InitializeResult {
        capabilities: ServerCapabilities {
            position_encoding: Some(PositionEncodingKind::UTF16),
            text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            })),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
                resolve_provider: Some(false),
                work_done_progress_options: Default::default(),
            })),
            execute_command_provider: Some(ExecuteCommandOptions {
                commands: commands::ALL.iter().map(|c| c.to_string()).collect(),
                work_done_progress_options: Default::default(),
            }),
            ..Default::default()
        },
        server_info: Some(ServerInfo { name: "lark".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
    })
}

/// Watches interface files and the compilation database when the client can.
pub async fn initialized(state: &Arc<State>) {
    if !lock(&state.caps).watch_files {
        return;
    }
    let watchers = ["**/lark.toml", "**/*.lark.toml", "**/compile_commands.json"]
        .iter()
        .map(|g| FileSystemWatcher { glob_pattern: GlobPattern::String(g.to_string()), kind: None })
        .collect();
    let options = serde_json::to_value(DidChangeWatchedFilesRegistrationOptions { watchers }).ok();
    let reg = Registration { id: "lark-watch".into(), method: "workspace/didChangeWatchedFiles".into(), register_options: options };
    if let Err(e) = state.client.register_capability(vec![reg]).await {
        crate::log::warning!("the client refused file watching: {e}");
    }
}
