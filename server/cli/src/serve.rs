//! `lark serve`: the language server on stdin/stdout.

use clap::Args;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct ServeArgs {
    /// Speak LSP on stdin/stdout (the default and only transport; accepted for clients that pass it).
    #[arg(long)]
    stdio: bool,
    /// The client's process id (vscode-languageclient passes it; unused).
    #[arg(long = "clientProcessId", value_name = "PID")]
    client_process_id: Option<u32>,
}

pub fn run(_args: ServeArgs) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lark serve: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let clean = rt.block_on(lsp::serve_stdio());
    // The stdin reader may still be blocked on a client that keeps the pipe open; do not wait
    // for it (nor for analyses still running). Their solvers are stopped: one in the middle of
    // a query would not notice the exit until the query ends. (Again after the runtime is
    // down, for any an analysis started meanwhile.)
    check::smt::stop_all_solvers();
    rt.shutdown_timeout(Duration::from_millis(100));
    check::smt::stop_all_solvers();
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
