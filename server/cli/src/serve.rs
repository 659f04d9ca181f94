//! `lark serve`: the language server on stdin/stdout.

use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage: lark serve [--stdio]";

pub fn run(argv: &[String]) -> ExitCode {
    // Clients add transport flags (`--stdio`, vscode-languageclient's `--clientProcessId=N`).
    if let Some(bad) = argv.iter().find(|a| *a != "--stdio" && !a.starts_with("--clientProcessId")) {
        eprintln!("lark serve: unknown option `{bad}`\n{USAGE}");
        return ExitCode::from(2);
    }
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).max_blocking_threads(16).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lark serve: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let clean = rt.block_on(lsp::serve_stdio());
    // The stdin reader may still be blocked on a client that keeps the pipe open; do not wait
    // for it (nor for analyses still running).
    rt.shutdown_timeout(Duration::from_millis(100));
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
