//! `lark lean emit`: the Lean module of each kernel of a file — the kernel as a term of the Lean
//! model, its segments, and the obligations LARK states about it, each pinned by a hash.

use clap::{Args, Subcommand};
use ide::{AnalysisHost, SourceFile};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum LeanCommand {
    /// Write the Lean module of each kernel (or of `--kernel`): to `--out DIR` as
    /// `<kernel>.lean`, else to standard output.
    Emit(EmitArgs),
}

#[derive(Args)]
pub struct EmitArgs {
    /// The .ptx, .cu or .cuh file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Only this kernel (PTX name, or source name for C++ kernels).
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Write `<kernel>.lean` files into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// A segmentation proposal (JSON: `{"segments": [{"name", "start", "stop", "specification"?}]}`
    /// over the kernel's flat instruction list), validated before use; needs `--kernel`.
    #[arg(long, value_name = "FILE", requires = "kernel")]
    segments: Option<PathBuf>,
    /// An interface file, merged over the nearest lark.toml (as for `lark check`).
    #[arg(long, value_name = "FILE")]
    interface: Option<PathBuf>,
    /// A SentryWard kernel-input JSON (as for `lark check`).
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// The PyTorch reference (needs `--input` and `--binding`, as for `lark check`).
    #[arg(long, value_name = "FILE", requires_all = ["input", "binding"])]
    reference: Option<PathBuf>,
    /// SentryWard's reference_binding.json (needs `--reference`).
    #[arg(long, value_name = "FILE", requires = "reference")]
    binding: Option<PathBuf>,
    /// The CUDA compiler for .cu files.
    #[arg(long, value_name = "PATH")]
    compiler: Option<String>,
    /// The GPU architecture .cu files are compiled for.
    #[arg(long, value_name = "sm_XX")]
    arch: Option<String>,
}

pub fn run(cmd: LeanCommand) -> ExitCode {
    match cmd {
        LeanCommand::Emit(a) => emit(a),
    }
}

fn emit(args: EmitArgs) -> ExitCode {
    let fail = |why: String| {
        eprintln!("lark: {}: {why}", args.file.display());
        ExitCode::from(2)
    };
    let settings = ide::Settings {
        compiler: ide::CompilerSettings { path: args.compiler.clone(), arch: args.arch.clone(), include_paths: vec![], defines: vec![] },
        interface_file: args.interface.clone(),
        interface_file_kind: ide::SourceKind::InterfaceFile,
        workspace_root: std::env::current_dir().ok(),
        sentryward_input: args.input.clone(),
        reference_binding: args.reference.clone().zip(args.binding.clone()),
        only_kernel: args.kernel.clone(),
        ..ide::Settings::default()
    };
    let proposal = match &args.segments {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => Some(t),
            Err(e) => return fail(format!("{}: {e}", p.display())),
        },
        None => None,
    };
    let (snapshot, fa) = match analyse_one(settings, &args.file) {
        Ok(r) => r,
        Err(why) => return fail(why),
    };
    if let Some(dir) = &args.out {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return fail(format!("{}: {e}", dir.display()));
        }
    }
    let mut status = ExitCode::SUCCESS;
    for k in &fa.kernels {
        let generated = match &proposal {
            Some(p) => snapshot.lean_module_with_segments(&fa, Some(&k.name), p).map(std::sync::Arc::new),
            None => snapshot.lean_module(&fa, Some(&k.name)),
        };
        let g = match generated {
            Ok(g) => g,
            Err(e) => {
                eprintln!("lark: {}: {}: {e}", args.file.display(), k.source_name);
                status = ExitCode::from(2);
                continue;
            }
        };
        match &args.out {
            Some(dir) => {
                let path = dir.join(format!("{}.lean", g.module.trim_start_matches("LarkGen.")));
                // Written beside and renamed, so an interrupted run never leaves half a module.
                let tmp = path.with_extension("lean.tmp");
                if let Err(e) = std::fs::write(&tmp, &g.text).and_then(|_| std::fs::rename(&tmp, &path)) {
                    return fail(format!("{}: {e}", path.display()));
                }
                eprintln!("{}: {}", k.source_name, path.display());
            }
            None => print!("{}", g.text),
        }
        eprintln!("  {} segments, {} obligations to prove:", g.segments.len(), g.open_obligations().count());
        for o in g.open_obligations() {
            eprintln!("    {} (sha256 {}): {}", o.name, &o.hash[..16], o.summary);
        }
        for n in &g.notes {
            eprintln!("  note: {n}");
        }
    }
    status
}

/// Analyses one file for the Lean commands: the snapshot and its analysis, or why the file has
/// no kernel to state (unreadable, an interface error, nothing that compiles).
pub fn analyse_one(settings: ide::Settings, path: &std::path::Path) -> Result<(ide::Analysis, std::sync::Arc<ide::FileAnalysis>), String> {
    let mut host = AnalysisHost::new(settings);
    let file = SourceFile::read(path)?;
    let key = file.key.clone();
    host.set_file(file);
    let snapshot = host.snapshot();
    let fa = snapshot.analyse(&key).map_err(|_| "the analysis was cancelled".to_string())?;
    if let Some(e) = fa.interface_errors.first() {
        return Err(format!("interface error at {e}"));
    }
    if fa.kernels.is_empty() {
        return Err(fa.status.clone().or_else(|| fa.problems.first().map(|p| p.message.clone())).unwrap_or_else(|| "no kernels".into()));
    }
    Ok((snapshot, fa))
}
