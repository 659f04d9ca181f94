//! `lark bench`: throughput numbers printed, not asserted.

mod equiv_time;
mod lsp_latency;

use clap::Subcommand;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Parser throughput on a (large) PTX file: best of ROUNDS.
    Parse {
        file: String,
        #[arg(default_value_t = 5)]
        rounds: usize,
    },
    /// Edit-to-diagnostics latency of the language server on a generated module of many kernels.
    Lsp(lsp_latency::Options),
    /// Time of the equivalence check with the PyTorch reference, kernel by kernel.
    Equiv(equiv_time::Options),
}

pub fn run(cmd: BenchCommand) -> ExitCode {
    match cmd {
        BenchCommand::Parse { file, rounds } => bench_parse(&file, rounds),
        BenchCommand::Lsp(o) => lsp_latency::run(o),
        BenchCommand::Equiv(o) => equiv_time::run(o),
    }
}

fn bench_parse(file: &str, rounds: usize) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("lark bench: {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let mb = text.len() as f64 / 1e6;
    let mut best = f64::INFINITY;
    let mut instructions = 0;
    let mut errors = 0;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let parsed = ptx::parse(&text);
        let secs = t.elapsed().as_secs_f64();
        best = best.min(secs);
        instructions = parsed.module.functions.iter().map(|f| f.instructions().count()).sum::<usize>();
        errors = parsed.errors.len();
    }
    println!("parse: {mb:.1} MB, {instructions} instructions, {errors} errors; best of {rounds}: {:.1} ms = {:.0} MB/s", best * 1e3, mb / best);
    ExitCode::SUCCESS
}
