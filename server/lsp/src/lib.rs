//! The LARK language server: LSP over stdio (tower-lsp-server), on top of the `ide` crate.
//!
//! Nothing here decides anything about kernels. This crate keeps the documents (ropes, edited
//! incrementally in UTF-16 positions), converts between LSP and the analysis' byte ranges
//! (`from_proto`, `to_proto`), debounces edits, runs analyses on a bounded pool of threads and
//! publishes their results only while they are current (`state`); requests answer within a
//! second from the latest analysis, and fix searches go on in the background (`fix_search`).
//! The streams are read and written by `transport`, which answers malformed or oversized
//! messages itself and passes only well-formed ones to tower-lsp-server. The router below reads
//! like a table of contents: one handler per method in `handlers/`.

#![deny(clippy::print_stdout)]

mod certify;
mod commands;
mod fix_search;
mod from_proto;
mod guard;
mod handlers;
mod log;
mod pool;
mod segments;
mod settings;
mod state;
mod to_proto;
mod transport;

use handlers::*;
use serde_json::Value;
use state::State;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::*;
use tower_lsp_server::{LanguageServer, LspService};

pub use commands::{RECHECK, SHOW_MODEL};
pub use state::DEBOUNCE;

pub struct Server {
    state: Arc<State>,
}

impl LanguageServer for Server {
    async fn initialize(&self, p: InitializeParams) -> Result<InitializeResult> {
        guard::request("initialize", async { initialize::handle(&self.state, p) }).await
    }

    async fn initialized(&self, _: InitializedParams) {
        guard::notification("initialized", initialize::initialized(&self.state)).await
    }

    async fn shutdown(&self) -> Result<()> {
        self.state.shutdown.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        guard::notification("didOpen", async { did_open::handle(&self.state, p) }).await
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        guard::notification("didChange", async { did_change::handle(&self.state, p) }).await
    }

    async fn did_close(&self, p: DidCloseTextDocumentParams) {
        guard::notification("didClose", did_close::handle(&self.state, p)).await
    }

    async fn did_change_configuration(&self, p: DidChangeConfigurationParams) {
        guard::notification("didChangeConfiguration", did_change_configuration::handle(&self.state, p)).await
    }

    async fn did_change_watched_files(&self, p: DidChangeWatchedFilesParams) {
        guard::notification("didChangeWatchedFiles", async { did_change_watched_files::handle(&self.state, p) }).await
    }

    async fn hover(&self, p: HoverParams) -> Result<Option<Hover>> {
        guard::request("hover", hover::handle(&self.state, p)).await
    }

    async fn code_lens(&self, p: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        guard::request("codeLens", code_lens::handle(&self.state, p)).await
    }

    async fn code_action(&self, p: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        guard::request("codeAction", code_action::handle(&self.state, p)).await
    }

    async fn execute_command(&self, p: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        guard::request("executeCommand", execute_command::handle(&self.state, p)).await
    }
}

impl Server {
    async fn stats(&self) -> Result<Value> {
        guard::request("lark/stats", async { stats::handle(&self.state) }).await
    }

    /// `window/workDoneProgress/cancel`: the user pressed the cancel button of a progress
    /// (certifications and segmentation requests are the cancellable ones).
    async fn progress_cancel(&self, p: tower_lsp_server::lsp_types::WorkDoneProgressCancelParams) {
        let token = match p.token {
            tower_lsp_server::lsp_types::NumberOrString::String(s) => s,
            tower_lsp_server::lsp_types::NumberOrString::Number(n) => n.to_string(),
        };
        if !self.state.certifications.cancel_token(&token) {
            self.state.segmentations.cancel_token(&token);
        }
    }

    /// `lark/debugPanic`, only when `LARK_DEBUG_PANIC=1`: panics inside a request, so tests can
    /// see that the server survives it.
    async fn debug_panic(&self) -> Result<Value> {
        guard::request("lark/debugPanic", async {
            if std::env::var("LARK_DEBUG_PANIC").is_ok_and(|v| v == "1") {
                panic!("lark/debugPanic was asked to panic");
            }
            Err(tower_lsp_server::jsonrpc::Error::method_not_found())
        })
        .await
    }
}

pub use transport::MAX_MESSAGE_BYTES;

/// Serves LSP on stdin/stdout until `exit`. Returns whether `shutdown` came first (the exit
/// code is 0 then, 1 otherwise, as the protocol asks).
pub async fn serve_stdio() -> bool {
    serve(tokio::io::stdin(), tokio::io::stdout(), MAX_MESSAGE_BYTES).await
}

/// Serves LSP on any pair of streams, refusing messages larger than `limit` bytes.
pub async fn serve<I, O>(input: I, output: O, limit: usize) -> bool
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket) = LspService::build(|client| Server { state: Arc::new(State::new(client)) })
        .custom_method("lark/stats", Server::stats)
        .custom_method("lark/debugPanic", Server::debug_panic)
        .custom_method("window/workDoneProgress/cancel", Server::progress_cancel)
        .finish();
    let state = service.inner().state.clone();
    transport::serve(input, output, service, socket, limit).await;
    state.shutdown.load(Ordering::SeqCst)
}
