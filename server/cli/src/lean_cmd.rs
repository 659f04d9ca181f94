//! `lark lean emit`: the Lean module of each kernel of a file — the kernel as a term of the Lean
//! model, its segments, and the obligations LARK states about it, each pinned by a hash.

use agent::SegmentOutcome;
use clap::{Args, Subcommand};
use ide::{AnalysisHost, SourceFile};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum LeanCommand {
    /// Write the Lean module of each kernel (or of `--kernel`): to `--out DIR` as
    /// `<kernel>.lean`, else to standard output.
    Emit(EmitArgs),
}

#[derive(Args)]
// The agent's flags mean something only when it is asked for the segmentation.
#[command(
    mut_arg("agent", |a| a.requires("segment_agent")),
    mut_arg("endpoint", |a| a.requires("segment_agent")),
    mut_arg("model", |a| a.requires("segment_agent")),
    mut_arg("key_env", |a| a.requires("segment_agent")),
    mut_arg("attempts", |a| a.requires("segment_agent")),
    mut_arg("agent_timeout", |a| a.requires("segment_agent")),
    mut_arg("budget", |a| a.requires("segment_agent"))
)]
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
    /// Ask an agent for the segmentation (the built-in prover, or `--agent`/`--endpoint` as for
    /// `lark certify`), validated as for `--segments`, errors fed back until one is valid or the
    /// budget is spent; the accepted proposal is written beside the module as
    /// `<kernel>.segments.json`. Needs `--kernel`.
    #[arg(long, requires = "kernel", conflicts_with = "segments")]
    segment_agent: bool,
    #[command(flatten)]
    agent: crate::agent_args::AgentArgs,
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
    let mut proposal = match &args.segments {
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
    // An agent's segmentation, once accepted, is used exactly as a `--segments` file would be.
    let mut accepted = None;
    if args.segment_agent {
        match ask_for_segments(&args, &fa) {
            Ok(json) => {
                proposal = Some(json.clone());
                accepted = Some(json);
            }
            Err(why) => return fail(why),
        }
    }
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
        let stem = g.module.trim_start_matches("LarkGen.").to_string();
        match &args.out {
            Some(dir) => {
                let path = dir.join(format!("{stem}.lean"));
                if let Err(e) = write_atomically(&path, &g.text) {
                    return fail(e);
                }
                eprintln!("{}: {}", k.source_name, path.display());
            }
            None => print!("{}", g.text),
        }
        // The agent's accepted proposal, beside the module (in the current directory when the
        // module went to standard output), for `--segments` next time.
        if let Some(json) = &accepted {
            let path = args.out.as_deref().unwrap_or(Path::new(".")).join(format!("{stem}.segments.json"));
            if let Err(e) = write_atomically(&path, json) {
                return fail(e);
            }
            eprintln!("  the segmentation: {}", path.display());
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

/// Writes `text` to `path` beside and renames it, so an interrupted run never leaves half a file.
fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| format!("{}: {e}", path.display()))
}

/// Asks the agent the flags name for a segmentation of `--kernel` (`agent::segmentation`): the
/// accepted proposal as JSON, or every refused attempt and the reason it ended.
fn ask_for_segments(args: &EmitArgs, fa: &ide::FileAnalysis) -> Result<String, String> {
    let name = args.kernel.as_deref().unwrap_or_default();
    let k = fa.kernels.iter().find(|k| k.name == name || k.source_name == name).ok_or_else(|| format!("no kernel named `{name}` in this file"))?;
    let kernel = k.model().ok_or_else(|| format!("`{}` could not be lowered to the model", k.source_name))?;
    // The agent sees the PyTorch reference when one is bound and readable.
    let reference = k.spec.as_ref().and_then(|s| s.reference.as_ref()).and_then(|r| std::fs::read_to_string(&r.file).ok());
    let request = agent::segmentation::request(kernel, &fa.ptx, reference);
    let mut agent = args.agent.agent();
    let outcome = agent::propose_segmentation(kernel, &request, agent.as_mut(), &args.agent.budget());
    let attempts = match &outcome {
        SegmentOutcome::Accepted { attempts, .. } | SegmentOutcome::Refused { attempts, .. } => attempts,
    };
    let refused: Vec<String> = attempts.iter().enumerate().map(|(i, a)| format!("  attempt {}: refused: {}", i + 1, a.error)).collect();
    match outcome {
        SegmentOutcome::Accepted { proposal, segments, .. } => {
            let (segments, tries) = (count(segments.len(), "segment"), count(refused.len() + 1, "attempt"));
            eprintln!("{}: {segments} proposed by {}, accepted after {tries}", k.source_name, agent.name());
            for r in &refused {
                eprintln!("{r}");
            }
            serde_json::to_string_pretty(&proposal).map(|j| j + "\n").map_err(|e| e.to_string())
        }
        SegmentOutcome::Refused { reason, .. } => {
            let mut why = format!("{}: no segmentation from {}: {reason}", k.source_name, agent.name());
            for r in &refused {
                why.push('\n');
                why.push_str(r);
            }
            Err(why)
        }
    }
}

/// `1 attempt`, `3 attempts`.
fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
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
