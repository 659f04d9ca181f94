//! `lark bench`: throughput numbers printed, not asserted.

mod lsp_latency;

use std::process::ExitCode;
use std::time::Instant;

pub fn run(argv: &[String]) -> ExitCode {
    match argv {
        [what, file, rest @ ..] if what == "parse" => bench_parse(file, rest.first().and_then(|s| s.parse().ok()).unwrap_or(5)),
        [what, rest @ ..] if what == "lsp" => lsp_latency::run(rest),
        _ => {
            eprintln!("usage: lark bench parse FILE [ROUNDS]\n       lark bench lsp [--kernels N] [--edits N] [--corpus DIR] [--keep] [--log LEVEL]");
            ExitCode::from(2)
        }
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
