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
    // LARK_NO_ENUMERATE=1 forces the SMT path (to compare it with enumeration when debugging).
    let opts = Options { timeout_ms, enumerate: std::env::var_os("LARK_NO_ENUMERATE").is_none(), ..Options::default() };
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
            .map(|(line, column, severity, message)| check::Diagnostic {
                severity: if severity == "error" { "error" } else { "warning" },
                line: *line,
                column: *column,
                message: message.clone(),
                span: [0, 0],
            })
            .collect();
        return Ok((FileReport { file, kernels: vec![], diagnostics }, None));
    }
    let interface = inputs::interface_for(path, args.value("interface"), args.value("input"), args.value("kernel"))?;
    let cx = Context { interface: interface.as_ref(), cu_text: loaded.cu_text.as_deref(), only: args.value("kernel") };
    let mut report = check::check_ptx(&file, &loaded.ptx, &cx, opts, solver);
    if let Some(offset) = loaded.invalid_utf8_at {
        let (line, col) = ptx::LineIndex::new(&loaded.ptx).line_col(offset as u32);
        let message = format!("invalid UTF-8 at byte {offset}");
        report
            .diagnostics
            .insert(0, check::Diagnostic { severity: "error", line: line + 1, column: col + 1, message, span: [offset as u32, offset as u32 + 1] });
    }
    resolve_sources(&mut report, path);
    let dump = args.has("dump-model").then(|| output::dump_models(&loaded.ptx, args.value("kernel")));
    Ok((report, dump))
}

/// `.file` names in PTX are relative to where the compiler ran (the PTX's folder for our
/// corpus); report them relative to the working directory, like the PTX path itself.
fn resolve_sources(report: &mut FileReport, ptx_path: &Path) {
    let Some(dir) = ptx_path.parent().filter(|d| !d.as_os_str().is_empty()) else { return };
    let fix = |loc: &mut check::Location| {
        if let Some(src) = &loc.source {
            let p = Path::new(src);
            if p.is_relative() {
                let joined = dir.join(p.strip_prefix(".").unwrap_or(p));
                if joined.exists() {
                    loc.source = Some(joined.display().to_string());
                }
            }
        }
    };
    for k in &mut report.kernels {
        for f in &mut k.findings {
            f.accesses.iter_mut().for_each(|a| fix(&mut a.location));
            f.barrier.iter_mut().for_each(fix);
        }
        for u in &mut k.uncertified {
            u.location.iter_mut().for_each(fix);
        }
    }
}
