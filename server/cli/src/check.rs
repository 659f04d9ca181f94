//! `lark check`: verify kernels and print a report (text, JSON or SARIF).
//!
//! The files go through the same analysis host as the language server (`ide::AnalysisHost`), so
//! a kernel gets the same verdict, findings, notes and timing from both; this module only turns
//! command-line options into host settings and analyses into output.

use crate::output;
use check::{Diagnostic, FileReport, SolverKind, Verdict};
use clap::{Args, ValueEnum};
use ide::{Analysis, AnalysisHost, FileAnalysis, Severity, SourceFile};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct CheckArgs {
    /// The .ptx, .cu or .cuh files to check.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Check only this kernel (PTX name, or source name for C++ kernels).
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// An interface file, merged over the nearest lark.toml in the file's directory or above
    /// (its facts win where they disagree).
    #[arg(long, value_name = "FILE")]
    interface: Option<PathBuf>,
    /// A SentryWard kernel-input JSON, merged over the interface files (its facts win).
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// The PyTorch reference the kernel of `--input` must agree with (needs `--binding`).
    #[arg(long, value_name = "FILE", requires_all = ["input", "binding"])]
    reference: Option<PathBuf>,
    /// SentryWard's reference_binding.json: how the kernel's buffers bind to the reference's
    /// arguments and results (needs `--reference`).
    #[arg(long, value_name = "FILE", requires = "reference")]
    binding: Option<PathBuf>,
    /// Print the lifted model of each kernel, phase by phase.
    #[arg(long)]
    dump_model: bool,
    /// Report write-write races whose writes store the same value as races (by default they
    /// are warnings that leave the verdict alone, as in GPUVerify).
    #[arg(long)]
    strict_races: bool,
    /// Time limit per SMT query, in milliseconds (default: 1000 with Yices, 2000 with z3 or
    /// cvc5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: Option<u64>,
    /// The SMT solver, z3, cvc5 or yices (default: $LARK_SOLVER, else yices where installed,
    /// else z3).
    #[arg(long, value_name = "NAME", value_parser = parse_solver)]
    solver: Option<SolverKind>,
    /// The CUDA compiler for .cu files (default: clang-19, clang or nvcc on PATH).
    #[arg(long, value_name = "PATH")]
    compiler: Option<String>,
    /// The GPU architecture .cu files are compiled for.
    #[arg(long, value_name = "sm_XX")]
    arch: Option<String>,
    /// An include directory for .cu files (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<String>,
    /// A preprocessor definition for .cu files, NAME or NAME=VALUE (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Sarif,
}

/// Why a file could not be checked at all (exit code 2), with what there is to show about it
/// (its compile errors, say).
struct Unusable(String, Option<FileReport>);

fn parse_solver(name: &str) -> Result<SolverKind, String> {
    check::smt::parse_solver(name).map_err(|e| e.to_string())
}

pub fn run(args: CheckArgs) -> ExitCode {
    let solver = match args.solver.map_or_else(check::smt::solver_from_env, Ok) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("lark: {}: {e}", check::smt::SOLVER_ENV);
            return ExitCode::from(2);
        }
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Files are checked side by side, and the kernels of each on the cores left to it.
    let parallel_files = cores.min(args.files.len()).max(1);
    let settings = ide::Settings {
        compiler: ide::CompilerSettings {
            path: args.compiler.clone(),
            arch: args.arch.clone(),
            include_paths: args.include.clone(),
            defines: args.define.clone(),
        },
        timeout_ms: args.timeout_ms,
        interface_file: args.interface.clone(),
        interface_file_kind: ide::SourceKind::InterfaceFile,
        workspace_root: std::env::current_dir().ok(),
        sentryward_input: args.input.clone(),
        reference_binding: args.reference.clone().zip(args.binding.clone()),
        only_kernel: args.kernel.clone(),
        solver,
        jobs: (cores / parallel_files).max(1),
        strict_races: args.strict_races,
        // The command line waits for the verdicts: a first look has no one to show it to.
        first_look: false,
    };
    let mut host = AnalysisHost::new(settings);
    let keys: Vec<Result<String, String>> = args
        .files
        .iter()
        .map(|path| {
            let file = SourceFile::read(path)?;
            let key = file.key.clone();
            host.set_file(file);
            Ok(key)
        })
        .collect();
    // Nothing changes the host while the files are checked, so no analysis is cancelled.
    let snapshot = host.snapshot();
    // Text is printed kernel by kernel as each finishes (a file of many kernels shows its
    // first verdicts at once); JSON and SARIF are one document, and `--dump-model` prints the
    // models before the reports, so those wait for the end.
    let stream = args.format == Format::Text && !args.dump_model;
    let checked = in_parallel(parallel_files, args.files.len(), |n| match &keys[n] {
        Ok(key) => check_file(&snapshot, key, &args.files[n], &args, stream),
        Err(e) => Err(Unusable(e.clone(), None)),
    });
    let mut reports = Vec::new();
    let mut unusable = false;
    for (path, result) in args.files.iter().zip(checked) {
        match result {
            Ok((report, dump)) => {
                print!("{}", dump.unwrap_or_default());
                reports.push(report);
            }
            Err(Unusable(why, report)) => {
                eprintln!("lark: {}: {why}", path.display());
                reports.extend(report);
                unusable = true;
            }
        }
    }
    match args.format {
        Format::Json => println!("{}", output::json(&reports)),
        Format::Sarif => println!("{}", output::sarif(&reports)),
        // What was not streamed: the files' own diagnostics, and the kernels of files that
        // were not streamed.
        Format::Text => reports.iter().for_each(|r| print!("{}", output::text_rest(r, stream))),
    }
    // Notes (which source of the interface won a conflict, ...) change nothing.
    let findings = reports
        .iter()
        .any(|r| r.diagnostics.iter().any(|d| d.severity != "note") || r.kernels.iter().any(|k| !matches!(k.verdict, Verdict::Verified | Verdict::Certified)));
    if unusable {
        ExitCode::from(2)
    } else if findings {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `f(0)`, ..., `f(count - 1)` on up to `threads` threads, in order of `n`.
fn in_parallel<T: Send>(threads: usize, count: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let work = || {
            let mut mine = Vec::new();
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= count {
                    return mine;
                }
                mine.push((n, f(n)));
            }
        };
        let handles: Vec<_> = (0..threads.max(1)).map(|_| scope.spawn(work)).collect();
        // A panic in a worker is a bug in LARK: it ends `lark check` as it would without threads.
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    done.sort_by_key(|(n, _)| *n);
    done.into_iter().map(|(_, t)| t).collect()
}

/// Checks one file; with `--dump-model`, also the text of its models.
fn check_file(snapshot: &Analysis, key: &str, path: &Path, args: &CheckArgs, stream: bool) -> Result<(FileReport, Option<String>), Unusable> {
    let print_kernel = |k: &check::KernelReport| {
        if stream {
            let mut one = FileReport { file: path.display().to_string(), kernels: vec![k.clone()], diagnostics: vec![] };
            resolve_sources(&mut one, path);
            // One write per kernel, so files checked side by side do not interleave lines.
            let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), output::text(&one).as_bytes());
        }
    };
    let observer = ide::Observer { checked: &print_kernel, ..ide::Observer::default() };
    let fa = snapshot.analyse_observed(key, &observer).map_err(|_| Unusable("the analysis was cancelled".into(), None))?;
    if !fa.interface_errors.is_empty() {
        // A typo in the interface weakens the check it was meant to make: nothing is reported as
        // checked until the interface says what it means.
        let mut report = file_report(&fa, path);
        report.kernels.clear();
        let interface: Vec<bool> = fa.problems.iter().map(|p| p.interface && p.severity == Severity::Error).collect();
        let mut keep = interface.into_iter();
        report.diagnostics.retain(|_| keep.next().unwrap_or(false));
        let n = fa.interface_errors.len();
        let why = if n == 1 { format!("interface error at {}", fa.interface_errors[0]) } else { format!("{n} interface errors; nothing was checked") };
        return Err(Unusable(why, Some(report)));
    }
    let mut report = file_report(&fa, path);
    if report.kernels.is_empty() {
        // A .cu that does not compile, a missing compiler, or a file without kernels.
        let why = match (&fa.status, report.diagnostics.iter().find(|d| d.severity == "error")) {
            (Some(s), _) => s.clone(),
            (None, Some(d)) => format!("{}:{}: {}", d.line, d.column, d.message),
            (None, None) if args.kernel.is_some() => format!("no kernel named `{}`", args.kernel.as_deref().unwrap_or_default()),
            (None, None) => "no kernels".into(),
        };
        return Err(Unusable(why, Some(report)));
    }
    resolve_sources(&mut report, path);
    Ok((report, args.dump_model.then(|| dump_models(&fa))))
}

/// The analysis as the CLI prints it: problems as line/column diagnostics, and the kernels'
/// reports.
fn file_report(fa: &FileAnalysis, path: &Path) -> FileReport {
    let diagnostics = fa
        .problems
        .iter()
        .map(|p| {
            let (line, col) = fa.index.line_col(p.range.start.min(fa.text.len()) as u32);
            Diagnostic {
                severity: match p.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Information | Severity::Hint => "note",
                },
                line: line + 1,
                column: col + 1,
                message: p.message.clone(),
                span: [p.range.start as u32, p.range.end as u32],
            }
        })
        .collect();
    FileReport { file: path.display().to_string(), kernels: fa.kernels.iter().map(|k| (*k.report).clone()).collect(), diagnostics }
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
            u.location.iter_mut().chain(u.related.iter_mut()).for_each(fix);
        }
    }
}

/// `--dump-model`: the lifted model of each kernel.
fn dump_models(fa: &FileAnalysis) -> String {
    let mut out = String::new();
    for k in &fa.kernels {
        match (k.model(), k.lifted()) {
            (Some(kernel), Some(a)) => out.push_str(&model::dump::dump(kernel, &a.lifted, &a.phases)),
            _ => out.push_str(&format!("kernel {}: cannot be lowered\n", k.name)),
        }
        out.push('\n');
    }
    out
}
