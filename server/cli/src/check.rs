//! `lark check`: parse (and later verify) kernels and print a report.

use crate::args::Args;
use serde::Serialize;
use std::process::ExitCode;

#[derive(Serialize)]
struct FileReport {
    file: String,
    kernels: Vec<KernelReport>,
    diagnostics: Vec<DiagnosticReport>,
}

#[derive(Serialize)]
struct KernelReport {
    name: String,
    line: u32,
    params: Vec<ParamReport>,
    shared: Vec<SharedReport>,
}

#[derive(Serialize)]
struct ParamReport {
    name: String,
    #[serde(rename = "type")]
    ty: String,
}

#[derive(Serialize)]
struct SharedReport {
    name: String,
    bytes: Option<u64>,
}

#[derive(Serialize)]
struct DiagnosticReport {
    severity: &'static str,
    line: u32,
    column: u32,
    message: String,
}

pub fn run(argv: &[String]) -> ExitCode {
    let args = match Args::parse(argv, &["format", "kernel"], &[]) {
        Ok(a) => a,
        Err(e) => return usage_error(&e),
    };
    let format = args.value("format").unwrap_or("text");
    if !matches!(format, "text" | "json") {
        return usage_error(&format!("unknown format `{format}` (expected text or json)"));
    }
    if args.positionals.is_empty() {
        return usage_error("no input file");
    }
    let mut reports = Vec::new();
    let mut unusable = false;
    for path in &args.positionals {
        match check_file(path, args.value("kernel")) {
            Ok(r) => reports.push(r),
            Err(e) => {
                eprintln!("lark: {path}: {e}");
                unusable = true;
            }
        }
    }
    let findings = reports.iter().any(|r| !r.diagnostics.is_empty());
    match format {
        "json" => {
            let doc = serde_json::json!({ "version": env!("CARGO_PKG_VERSION"), "files": reports });
            println!("{}", serde_json::to_string_pretty(&doc).expect("report serialises"));
        }
        _ => reports.iter().for_each(print_text),
    }
    if unusable || reports.iter().any(|r| r.kernels.is_empty() && !r.diagnostics.is_empty()) {
        ExitCode::from(2)
    } else if findings {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("lark check: {message}\nusage: lark check FILE... [--format text|json] [--kernel NAME]");
    ExitCode::from(2)
}

fn check_file(path: &str, only: Option<&str>) -> Result<FileReport, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let (text, parsed) = ptx::parse_bytes(&bytes);
    let index = ptx::LineIndex::new(&text);
    let diagnostics = parsed
        .errors
        .iter()
        .map(|d| {
            let (line, col) = index.line_col(d.span.start);
            DiagnosticReport { severity: "error", line: line + 1, column: col + 1, message: d.message.clone() }
        })
        .collect();
    let kernels = parsed
        .module
        .functions
        .iter()
        .filter(|f| f.kind == ptx::FunctionKind::Entry && f.body.is_some())
        .filter(|f| only.is_none_or(|k| f.name == k))
        .map(|f| KernelReport {
            name: f.name.to_string(),
            line: index.line_col(f.name_span.start).0 + 1,
            params: f.params.iter().map(|p| ParamReport { name: p.name.to_string(), ty: p.ty.trim_start_matches('.').to_string() }).collect(),
            shared: f
                .body
                .iter()
                .flatten()
                .filter_map(|s| match s {
                    ptx::Statement::Var(v) if v.space == ".shared" => Some(v),
                    _ => None,
                })
                .chain(parsed.module.variables.iter().filter(|v| v.space == ".shared"))
                .map(|v| SharedReport { name: v.name.to_string(), bytes: v.size_bytes() })
                .collect(),
        })
        .collect();
    Ok(FileReport { file: path.to_string(), kernels, diagnostics })
}

fn print_text(r: &FileReport) {
    for d in &r.diagnostics {
        println!("{}:{}:{}: {}: {}", r.file, d.line, d.column, d.severity, d.message);
    }
    for k in &r.kernels {
        let params: Vec<String> = k.params.iter().map(|p| format!("{}: {}", p.name, p.ty)).collect();
        println!("{}:{}: kernel {}({})", r.file, k.line, k.name, params.join(", "));
        for s in &k.shared {
            match s.bytes {
                Some(b) => println!("    shared {} ({b} bytes)", s.name),
                None => println!("    shared {} (dynamic size)", s.name),
            }
        }
    }
}
