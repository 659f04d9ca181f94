//! `lark`: the command-line entry point. Argument parsing and output live here; all analysis is
//! in the library crates.

mod args;
mod bench;
mod check;
mod inputs;
mod output;
mod serve;

use std::process::ExitCode;

const USAGE: &str = "\
usage: lark <command> [options]

commands:
  check FILE...      check kernels in .ptx or .cu files
      --format text|json|sarif   output format (default text)
      --kernel NAME              only this kernel
      --interface FILE           the interface (default: nearest lark.toml)
      --input FILE               a SentryWard kernel-input JSON as the interface
      --dump-model               print the lifted model, phase by phase
      --timeout-ms N             per SMT query (default 2000)
      --compiler PATH, --arch sm_XX, -I DIR   for .cu files
  serve              the language server (LSP on stdin/stdout)
  bench parse FILE   parse throughput on a (large) PTX file
  bench lsp          edit-to-diagnostics latency of the language server on a generated module
  --version          print the version
";

fn main() -> ExitCode {
    quiet_broken_pipe();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match argv.first().map(String::as_str) {
        Some("--version" | "-V" | "version") => {
            println!("lark {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("check") => check::run(&argv[1..]),
        Some("bench") => bench::run(&argv[1..]),
        Some("serve") => serve::run(&argv[1..]),
        Some("--help" | "-h" | "help") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("lark: unknown command `{other}`\n\n{USAGE}");
            ExitCode::from(2)
        }
        None => {
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
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
