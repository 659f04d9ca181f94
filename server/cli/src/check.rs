//! `lark check`: verify kernels and print a report (text, JSON or SARIF).

use crate::args::Args;
use crate::inputs;
use crate::output;
use check::{Context, FileReport, Options, Solver, Verdict};
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: lark check FILE... [--format text|json|sarif] [--kernel NAME] [--interface lark.toml] [--input sentryward.json] [--dump-model] [--timeout-ms N] [--compiler PATH] [--arch sm_80] [-I DIR]";

pub fn run(argv: &[String]) -> ExitCode {
    let args = match Args::parse(argv, &["format", "kernel", "interface", "input", "timeout-ms", "compiler", "arch", "include"], &["dump-model"]) {
        Ok(a) => a,
        Err(e) => return usage_error(&e),
    };
    let format = args.value("format").unwrap_or("text");
    if !matches!(format, "text" | "json" | "sarif") {
        return usage_error(&format!("unknown format `{format}` (expected text, json or sarif)"));
    }
    if args.positionals.is_empty() {
        return usage_error("no input file");
    }
    let timeout_ms = match args.value("timeout-ms").map(str::parse::<u64>) {
        None => 2000,
        Some(Ok(t)) if t > 0 => t,
        Some(_) => return usage_error("--timeout-ms needs a positive number"),
    };
    let compile = cuda::CompileOptions {
        compiler: args.value("compiler").map(str::to_string),
        arch: args.value("arch").map(str::to_string),
        include_paths: args.values("include"),
        ..Default::default()
    };
    let opts = Options { timeout_ms, ..Options::default() };
    let mut solver = Solver::z3();
    let mut reports = Vec::new();
    let mut unusable = false;
    for path in &args.positionals {
        match check_one(Path::new(path), &args, &compile, &opts, &mut solver) {
            Ok((r, dump)) => {
                if let Some(d) = dump {
                    print!("{d}");
                }
                unusable |= r.kernels.is_empty() || !r.diagnostics.is_empty() && r.kernels.iter().all(|k| k.verdict == Verdict::Error);
                reports.push(r);
            }
            Err(e) => {
                eprintln!("lark: {path}: {e}");
                unusable = true;
            }
        }
    }
    match format {
        "json" => println!("{}", output::json(&reports)),
        "sarif" => println!("{}", output::sarif(&reports)),
        _ => reports.iter().for_each(|r| print!("{}", output::text(r))),
    }
    let findings = reports.iter().any(|r| !r.diagnostics.is_empty() || r.kernels.iter().any(|k| !matches!(k.verdict, Verdict::Verified | Verdict::Certified)));
    if unusable {
        ExitCode::from(2)
    } else if findings {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("lark check: {message}\n{USAGE}");
    ExitCode::from(2)
}

fn check_one(path: &Path, args: &Args, compile: &cuda::CompileOptions, opts: &Options, solver: &mut Solver) -> Result<(FileReport, Option<String>), String> {
    let loaded = inputs::load(path, compile)?;
    let file = path.display().to_string();
    if !loaded.compile_errors.is_empty() {
        let diagnostics = loaded
            .compile_errors
            .iter()
            .map(|(line, column, severity, message)| check::Diagnostic { severity: if severity == "error" { "error" } else { "warning" }, line: *line, column: *column, message: message.clone(), span: [0, 0] })
            .collect();
        return Ok((FileReport { file, kernels: vec![], diagnostics }, None));
    }
    let interface = inputs::interface_for(path, args.value("interface"), args.value("input"), args.value("kernel"))?;
    let cx = Context { interface: interface.as_ref(), cu_text: loaded.cu_text.as_deref(), only: args.value("kernel") };
    let report = check::check_ptx(&file, &loaded.ptx, &cx, opts, solver);
    let dump = args.has("dump-model").then(|| output::dump_models(&loaded.ptx, args.value("kernel")));
    Ok((report, dump))
}
