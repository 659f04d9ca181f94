//! `lark`: the command-line entry point. Argument parsing and output live here; all analysis is
//! in the library crates, driven through the same analysis host as the language server.

mod agent_args;
mod bench;
mod certify_cmd;
mod check;
mod lean_cmd;
mod memory;
mod output;
mod serve;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: memory::Counting = memory::Counting;

/// LARK: trustworthy GPU kernels. Finds data races, barrier divergence and out-of-bounds
/// accesses in CUDA and PTX kernels, each with a replayed counterexample.
#[derive(Parser)]
#[command(name = "lark", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check the kernels of .ptx or .cu files.
    Check(check::CheckArgs),
    /// The language server (LSP on stdin/stdout), as the VS Code extension starts it.
    Serve(serve::ServeArgs),
    /// Measure: parser throughput, or the language server's edit-to-diagnostics latency.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// The Lean side: emit each kernel's module of obligations.
    #[command(subcommand)]
    Lean(lean_cmd::LeanCommand),
    /// Prove a kernel's Lean obligations with an agent; write a certificate when Lean accepts
    /// every proof (exit 0 only then).
    Certify(certify_cmd::CertifyArgs),
    /// Check a certificate again with Lean alone.
    Recheck(certify_cmd::RecheckArgs),
}

fn main() -> ExitCode {
    quiet_broken_pipe();
    memory::set_ceiling();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout with exit 0; usage errors to stderr with exit 2.
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    match cli.command {
        Command::Check(a) => check::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Bench(b) => bench::run(b),
        Command::Lean(l) => lean_cmd::run(l),
        Command::Certify(a) => certify_cmd::certify(a),
        Command::Recheck(a) => certify_cmd::recheck(a),
    }
}

/// `lark check ... | head` must not panic when the reader goes away: end quietly instead.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or("");
        if msg.contains("Broken pipe") {
            std::process::exit(1);
        }
        default(info);
    }));
}
