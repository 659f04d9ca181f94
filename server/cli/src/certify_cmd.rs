//! `lark certify`: ask a proof agent for each Lean obligation of a kernel, check every proof with
//! Lean, and write a certificate only when Lean accepted them all. `lark recheck`: check a
//! certificate again with Lean alone, no agent.

use agent::certificate::{self, Manifest};
use agent::prove::{Checker, Outcome};
use clap::Args;
use lean::audit::Policy;
use lean::library::LibraryIndex;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct CertifyArgs {
    /// The .ptx, .cu or .cuh file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The kernel (PTX name, or source name for C++ kernels); default: every kernel of the file.
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    #[command(flatten)]
    agent: crate::agent_args::AgentArgs,
    /// Where certificates are written (default: `.lark/certificates` in the current directory).
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// An interface file, merged over the nearest lark.toml (as for `lark check`).
    #[arg(long, value_name = "FILE")]
    interface: Option<PathBuf>,
    /// The CUDA compiler for .cu files.
    #[arg(long, value_name = "PATH")]
    compiler: Option<String>,
}

#[derive(Args)]
pub struct RecheckArgs {
    /// A certificate directory (as `lark certify` wrote it).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

fn library() -> Option<LibraryIndex> {
    LibraryIndex::load(&lean::library_dir()).ok()
}

pub fn certify(args: CertifyArgs) -> ExitCode {
    let fail = |why: String| {
        eprintln!("lark: {}: {why}", args.file.display());
        ExitCode::from(2)
    };
    let settings = ide::Settings {
        compiler: ide::CompilerSettings { path: args.compiler.clone(), ..ide::CompilerSettings::default() },
        interface_file: args.interface.clone(),
        interface_file_kind: ide::SourceKind::InterfaceFile,
        workspace_root: std::env::current_dir().ok(),
        only_kernel: args.kernel.clone(),
        ..ide::Settings::default()
    };
    let (snapshot, fa) = match crate::lean_cmd::analyse_one(settings, &args.file) {
        Ok(r) => r,
        Err(why) => return fail(why),
    };
    let lib = library();
    let policy = lib.as_ref().map_or_else(Policy::default, Policy::for_library);
    // Lean first: without it nothing can become a certificate, and the agent is told so.
    let checker: Option<agent::checker::LeanChecker> = match lean::toolchain::detect(&lean::library_dir()) {
        Ok(tc) => {
            eprintln!("building the Lean library with {} …", tc.lean_version);
            match agent::checker::LeanChecker::start(tc, policy.clone(), Duration::from_secs(3600)) {
                Ok(c) => Some(c),
                Err(e) => return fail(e),
            }
        }
        Err(e) => {
            eprintln!("warning: {e}; proofs are audited but cannot be checked, so no certificate can be written");
            None
        }
    };
    let mut agent = args.agent.agent();
    if let Some(w) = args.agent.warning() {
        eprintln!("warning: {w}");
    }
    // One budget for the whole run: its token count covers every obligation of every kernel.
    let budget = args.agent.budget();
    let store = args.store.clone().unwrap_or_else(|| certificate::store_dir(Path::new(".")));
    let mut all_certified = true;
    for k in &fa.kernels {
        if k.report.verdict != check::Verdict::Verified {
            eprintln!("{}: not certified: the kernel is {}, not verified by the engine", k.source_name, k.report.verdict.as_str());
            all_certified = false;
            continue;
        }
        let g = match snapshot.lean_module(&fa, Some(&k.name)) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("{}: not certified: {e}", k.source_name);
                all_certified = false;
                continue;
            }
        };
        let open: Vec<_> = g.open_obligations().collect();
        if open.is_empty() {
            eprintln!("{}: not certified: no obligation is stated ({})", k.source_name, g.notes.join("; "));
            all_certified = false;
            continue;
        }
        // What the statement leaves out or states differently: a certificate is about exactly it.
        for note in &g.notes {
            eprintln!("{}: note on the statement: {note}", k.source_name);
        }
        let facts = vec![format!("LARK's engine verified `{}` for this launch and shape ({} ms)", k.source_name, k.report.stats.millis.round())];
        let mut entries = Vec::new();
        let mut files = vec![(certificate::MODULE_FILE.to_string(), g.text.clone())];
        let mut proved = true;
        for (i, o) in open.iter().enumerate() {
            let req = agent::task::request(&g, o, lib.as_ref(), facts.clone());
            eprintln!("[{}/{}] {}: {} (agent: {})", i + 1, open.len(), o.name, o.summary, agent.name());
            let outcome = agent::prove(&req, agent.as_mut(), checker.as_ref().map(|c| c as &dyn Checker), &policy, &budget);
            for (n, a) in outcome.attempts().iter().enumerate() {
                let why = a.errors.first().map_or("passed the audit".to_string(), |e| e.message.lines().next().unwrap_or("").to_string());
                eprintln!("      attempt {}: {why}", n + 1);
            }
            let tokens = budget.per_call.tokens.usage();
            if tokens.calls > 0 {
                let of = budget.tokens.map_or(String::new(), |limit| format!(" of {limit}"));
                eprintln!("      tokens so far: {}{of}{}", tokens.total, tokens.estimate_note());
            }
            match outcome {
                Outcome::Proved { file, axioms, .. } => {
                    eprintln!("      proved; Lean accepted it (axioms: {})", if axioms.is_empty() { "none".into() } else { axioms.join(", ") });
                    let (entry, file) = certificate::entry(&req, file, axioms);
                    entries.push(entry);
                    files.push(file);
                }
                Outcome::NotProved { reason, .. } => {
                    eprintln!("      not proved: {reason}");
                    proved = false;
                }
            }
        }
        if !proved {
            all_certified = false;
            eprintln!("{}: not certified: {} of {} obligations have no proof Lean accepted", k.source_name, open.len() - entries.len(), open.len());
            continue;
        }
        // Every obligation passed Lean: the certificate is written, atomically.
        let Some(checker) = &checker else { continue };
        let inputs = certificate::inputs(&fa.ptx, fa.interface_path.as_deref(), k.spec.as_ref().and_then(|s| s.reference.as_ref()).map(|r| r.file.as_path()));
        let manifest = Manifest::new(k.name.clone(), g.module.clone(), inputs, checker.toolchain.lean_version.clone(), agent.name(), entries)
            .with_statement_notes(g.notes.clone());
        match certificate::write(&store, &manifest, &files) {
            Ok(dir) => println!("{}: certified (Lean {}): {}", k.source_name, checker.toolchain.lean_version, dir.display()),
            Err(e) => return fail(e.to_string()),
        }
    }
    if all_certified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

pub fn recheck(args: RecheckArgs) -> ExitCode {
    let dir = &args.dir;
    // Unreadable or malformed: exit 2 before looking for Lean.
    if let Err(e) = certificate::read(dir) {
        eprintln!("lark: {e}");
        return ExitCode::from(2);
    }
    let tc = match lean::toolchain::detect(&lean::library_dir()) {
        Ok(tc) => tc,
        Err(e) => {
            eprintln!("lark: {}: cannot recheck without Lean: {e}", dir.display());
            return ExitCode::from(1);
        }
    };
    let lib = library();
    let policy = lib.as_ref().map_or_else(Policy::default, Policy::for_library);
    let checker = match agent::checker::LeanChecker::start(tc, policy, Duration::from_secs(3600)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("lark: {e}");
            return ExitCode::from(1);
        }
    };
    match certificate::recheck(dir, &checker) {
        Ok(m) => {
            println!("{}: certified (Lean {})", m.kernel, checker.toolchain.lean_version);
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("lark: {}: rejected: {why}", dir.display());
            ExitCode::from(1)
        }
    }
}
