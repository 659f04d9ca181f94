//! Panics stop at the request boundary: the request answers with an internal error and the
//! server keeps serving.

use crate::log::error;
use futures::FutureExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use tower_lsp_server::jsonrpc;

pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "panic".into())
}

pub async fn request<T>(method: &str, fut: impl Future<Output = jsonrpc::Result<T>>) -> jsonrpc::Result<T> {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(r) => r,
        Err(p) => {
            let msg = panic_message(&*p);
            error!("{method} failed: {msg}");
            Err(jsonrpc::Error { code: jsonrpc::ErrorCode::InternalError, message: format!("internal error in {method}: {msg}").into(), data: None })
        }
    }
}

pub async fn notification(method: &str, fut: impl Future<Output = ()>) {
    if let Err(p) = AssertUnwindSafe(fut).catch_unwind().await {
        error!("{method} failed: {}", panic_message(&*p));
    }
}
