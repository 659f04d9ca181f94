//! "Certify kernel" in the editor: the prove loop for each Lean obligation of a kernel, run in
//! the background with work-done progress (one step per obligation) and a cancel button, and its
//! outcome shown where the user looks — the uncertified regions say why there is no certificate
//! ("Lean toolchain not found", "agent budget exhausted", "agent token budget exhausted: N of M
//! tokens used", "Lean rejected: …", "cancelled"). One token count covers the whole run.
//!
//! Nothing here decides anything: `agent::prove` audits every answer and only Lean accepts one.

use crate::state::{lock, State, COMMAND_WAIT};
use agent::prove::{Budget, Checker, Outcome};
use lean::audit::Policy;
use model::budget::CancelToken;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tower_lsp_server::lsp_types::{self as lsp, Uri};

/// Where a certification stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Running,
    /// Finished: `None` when every obligation was accepted by Lean, else why not.
    Done(Option<String>),
}

struct Run {
    cancel: CancelToken,
    token: Option<String>,
    status: Status,
}

/// The certifications of this session, by document and kernel, and what rechecking the
/// certificates found on disk gave.
#[derive(Default)]
pub struct Certifications {
    runs: Mutex<HashMap<(String, String), Run>>,
    /// By certificate directory: the lens title once a recheck finished, `None` while it runs.
    rechecks: Mutex<HashMap<std::path::PathBuf, Option<String>>>,
}

impl Certifications {
    /// Why a kernel has no certificate, when a certification ran or runs.
    pub fn reason(&self, uri: &str, kernel: &str) -> Option<String> {
        match &lock(&self.runs).get(&(uri.to_string(), kernel.to_string()))?.status {
            Status::Running => Some("certification running".into()),
            Status::Done(r) => r.clone(),
        }
    }

    /// Cancels the certification whose progress token this is; false when none has it.
    pub fn cancel_token(&self, token: &str) -> bool {
        let runs = lock(&self.runs);
        let run = runs.values().find(|r| r.token.as_deref() == Some(token));
        run.map(|r| r.cancel.cancel()).is_some()
    }

    /// Cancels a kernel's certification; false when none runs.
    pub fn cancel(&self, uri: &str, kernel: &str) -> bool {
        match lock(&self.runs).get(&(uri.to_string(), kernel.to_string())) {
            Some(r) if r.status == Status::Running => {
                r.cancel.cancel();
                true
            }
            _ => false,
        }
    }
}

impl Certifications {
    /// What the lens says about a certificate on disk; starts its recheck the first time one is
    /// asked about (the directories to recheck are returned through `start`).
    pub fn recheck_title(&self, dir: &std::path::Path, start: &Mutex<Vec<std::path::PathBuf>>) -> Option<String> {
        let mut rechecks = lock(&self.rechecks);
        match rechecks.get(dir) {
            Some(Some(title)) => Some(title.clone()),
            Some(None) => Some("Lean certificate on disk: rechecking…".into()),
            None => {
                rechecks.insert(dir.to_path_buf(), None);
                lock(start).push(dir.to_path_buf());
                Some("Lean certificate on disk: rechecking…".into())
            }
        }
    }
}

/// Rechecks a certificate with Lean alone; the lens title for the outcome. `certified` only when
/// Lean accepted every file of it in this run.
pub fn recheck_title(dir: &std::path::Path) -> String {
    let tc = match lean::toolchain::detect(&lean::library_dir()) {
        Ok(tc) => tc,
        Err(_) => return "Lean certificate on disk, not rechecked: Lean toolchain not found".into(),
    };
    let policy = lean::library::LibraryIndex::load(&lean::library_dir()).map_or_else(|_| Policy::default(), |l| Policy::for_library(&l));
    let checker = match agent::checker::LeanChecker::start(tc, policy, std::time::Duration::from_secs(3600)) {
        Ok(c) => c,
        Err(e) => return format!("Lean certificate on disk, not rechecked: {e}"),
    };
    match agent::certificate::recheck(dir, &checker) {
        Ok(_) => format!("certified (Lean {})", checker.toolchain.lean_version),
        Err(why) => format!("Lean certificate rejected: {}", why.lines().next().unwrap_or("")),
    }
}

impl State {
    /// Rechecks certificates found on disk in the background, then asks the client to refresh
    /// its lenses.
    pub fn start_rechecks(self: &Arc<Self>, dirs: Vec<std::path::PathBuf>) {
        for dir in dirs {
            let state = self.clone();
            tokio::spawn(async move {
                let d = dir.clone();
                let title =
                    tokio::task::spawn_blocking(move || recheck_title(&d)).await.unwrap_or_else(|e| format!("Lean certificate on disk, not rechecked: {e}"));
                lock(&state.certifications.rechecks).insert(dir, Some(title));
                if lock(&state.caps).code_lens_refresh {
                    let _ = state.client.send_request::<lsp::request::CodeLensRefresh>(()).await;
                }
            });
        }
    }

    /// Starts certifying `kernel` of `uri` in the background; `Err` when it cannot start.
    /// With `segment`, only the obligations of that segment ("Certify this segment").
    pub fn start_certify(self: &Arc<Self>, uri: Uri, kernel: String, segment: Option<String>) -> Result<(), String> {
        let key = (uri.to_string(), kernel.clone());
        let cancel = CancelToken::new();
        {
            let mut runs = lock(&self.certifications.runs);
            if runs.get(&key).is_some_and(|r| r.status == Status::Running) {
                return Err(format!("`{kernel}` is already being certified"));
            }
            runs.insert(key.clone(), Run { cancel: cancel.clone(), token: None, status: Status::Running });
        }
        let state = self.clone();
        tokio::spawn(async move {
            let reason = state.certify(&uri, &kernel, segment.as_deref(), cancel).await;
            if let Some(r) = lock(&state.certifications.runs).get_mut(&key) {
                r.status = Status::Done(reason);
            }
            state.republish(&uri).await;
        });
        Ok(())
    }

    /// The loop over the obligations; `None` when all were accepted by Lean.
    async fn certify(self: &Arc<Self>, uri: &Uri, kernel: &str, segment: Option<&str>, cancel: CancelToken) -> Option<String> {
        let Some(fa) = self.fresh_within(uri, COMMAND_WAIT).await else { return Some("the file is not open".into()) };
        let snapshot = lock(&self.host).snapshot();
        let name = kernel.to_string();
        let generated = tokio::task::spawn_blocking(move || snapshot.lean_module(&fa, Some(&name))).await;
        let g = match generated {
            Ok(Ok(g)) => g,
            Ok(Err(e)) => return Some(e),
            Err(e) => return Some(format!("generating the Lean module failed: {e}")),
        };
        let index = segment.and_then(|name| g.segments.iter().position(|s| s.name == name));
        if let (Some(name), None) = (segment, index) {
            return Some(format!("no segment `{name}` in `{kernel}`"));
        }
        let open: Vec<lean::obligations::Obligation> = g.open_obligations().filter(|o| index.is_none() || o.segment == index).cloned().collect();
        if open.is_empty() {
            return Some(format!("no obligation is stated ({})", g.notes.join("; ")));
        }
        let progress = self.progress_for(uri, kernel).await;
        let lib = lean::library::LibraryIndex::load(&lean::library_dir()).ok();
        let policy = lib.as_ref().map_or_else(Policy::default, Policy::for_library);
        // Lean: without it nothing can be accepted, and the loop says so at the first audited proof.
        let checker = {
            let policy = policy.clone();
            tokio::task::spawn_blocking(move || match lean::toolchain::detect(&lean::library_dir()) {
                Ok(tc) => agent::checker::LeanChecker::start(tc, policy, std::time::Duration::from_secs(3600)).map(Some),
                Err(_) => Ok(None),
            })
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
        };
        let checker = match checker {
            Ok(c) => c.map(Arc::new),
            Err(e) => {
                progress.finish(&e).await;
                return Some(e);
            }
        };
        let (mut agent, token_budget) = {
            let settings = lock(&self.settings);
            (settings.agent(), settings.agent_token_budget)
        };
        let agent_name = agent.name();
        // One token count for the whole run: every obligation's budget shares it.
        let tokens = agent::TokenMeter::new();
        let mut failures = Vec::new();
        let mut entries = Vec::new();
        let mut files = vec![(agent::certificate::MODULE_FILE.to_string(), g.text.clone())];
        for (i, o) in open.iter().enumerate() {
            if cancel.is_cancelled() {
                progress.finish("cancelled").await;
                return Some("cancelled".into());
            }
            let spent = tokens.usage();
            let spent = if spent.calls > 0 { format!(", {} so far", spent.describe()) } else { String::new() };
            progress.report(&format!("{} ({}/{}){spent}", o.name, i + 1, open.len()), (i * 100 / open.len()) as u32).await;
            let req = agent::task::request(&g, o, lib.as_ref(), vec![format!("LARK's engine verified `{kernel}` at this launch")]);
            let budget = Budget {
                per_call: agent::Limits { cancel: cancel.clone(), tokens: tokens.clone(), ..agent::Limits::default() },
                tokens: token_budget,
                ..Budget::default()
            };
            let (policy, checker) = (policy.clone(), checker.clone());
            let asked = req.clone();
            let (outcome, back) = tokio::task::spawn_blocking(move || {
                let checker = checker.as_deref().map(|c| c as &dyn Checker);
                let outcome = agent::prove(&req, agent.as_mut(), checker, &policy, &budget);
                (outcome, agent)
            })
            .await
            .unwrap_or_else(|e| (Outcome::NotProved { reason: format!("the prove loop failed: {e}"), attempts: vec![] }, lock(&self.settings).agent()));
            agent = back;
            match outcome {
                Outcome::Proved { file, axioms, .. } => {
                    let (entry, file) = agent::certificate::entry(&asked, file, axioms);
                    entries.push(entry);
                    files.push(file);
                }
                Outcome::NotProved { reason, .. } if reason == "cancelled" => {
                    progress.finish("cancelled").await;
                    return Some("cancelled".into());
                }
                Outcome::NotProved { reason, .. } => failures.push(format!("{}: {reason}", o.name)),
            }
        }
        if !failures.is_empty() {
            let summary = failures.join("; ");
            progress.finish(&summary).await;
            return Some(summary);
        }
        if let Some(name) = segment {
            // Part of the kernel: its proofs are checked, but a certificate covers a whole kernel.
            let done = format!("segment `{name}`: every obligation accepted by Lean (the kernel's certificate needs the others too)");
            progress.finish(&done).await;
            return Some(done);
        }
        // Lean accepted every obligation: the certificate is written (atomically) where the
        // lens finds it, and the lens says so.
        let Some(checker) = checker else { return Some("Lean toolchain not found".into()) };
        let written = self.write_certificate(uri, kernel, &g, &checker, agent_name, entries, files).await;
        // A certificate proves exactly the module's statement: say what it leaves out or restates.
        let certified = if g.notes.is_empty() { "certified".to_string() } else { format!("certified; on the statement: {}", g.notes.join("; ")) };
        progress.finish(written.as_deref().unwrap_or(&certified)).await;
        written
    }

    /// Writes the certificate of a kernel whose every obligation Lean accepted; `Some(why)` when
    /// it could not be written.
    #[allow(clippy::too_many_arguments)]
    async fn write_certificate(
        &self,
        uri: &Uri,
        kernel: &str,
        g: &lean::obligations::Generated,
        checker: &agent::checker::LeanChecker,
        agent_name: String,
        entries: Vec<agent::certificate::Entry>,
        files: Vec<(String, String)>,
    ) -> Option<String> {
        let fa = self.fresh_within(uri, COMMAND_WAIT).await?;
        let k = fa.kernels.iter().find(|k| k.name == kernel)?;
        let root = lock(&self.workspace_root).clone().or_else(|| fa.path.as_ref()?.parent().map(std::path::Path::to_path_buf))?;
        let reference = k.spec.as_ref().and_then(|s| s.reference.as_ref()).map(|r| r.file.clone());
        let inputs = agent::certificate::inputs(&fa.ptx, fa.interface_path.as_deref(), reference.as_deref());
        let version = checker.toolchain.lean_version.clone();
        let manifest = agent::certificate::Manifest::new(kernel.to_string(), g.module.clone(), inputs, version.clone(), agent_name, entries)
            .with_statement_notes(g.notes.clone());
        match agent::certificate::write(&agent::certificate::store_dir(&root), &manifest, &files) {
            Ok(dir) => {
                lock(&self.certifications.rechecks).insert(dir, Some(format!("certified (Lean {version})")));
                None
            }
            Err(e) => Some(format!("the certificate could not be written: {e}")),
        }
    }

    /// Work-done progress with a cancel button, when the client supports it.
    async fn progress_for(&self, uri: &Uri, kernel: &str) -> Progress {
        if !lock(&self.caps).work_done_progress {
            return Progress(None);
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let token = format!("lark/certify/{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let number = lsp::NumberOrString::String(token.clone());
        if self.client.send_request::<lsp::request::WorkDoneProgressCreate>(lsp::WorkDoneProgressCreateParams { token: number.clone() }).await.is_err() {
            return Progress(None);
        }
        if let Some(r) = lock(&self.certifications.runs).get_mut(&(uri.to_string(), kernel.to_string())) {
            r.token = Some(token);
        }
        let p = self.client.progress(number, format!("LARK: certifying {kernel}")).with_percentage(0).with_cancel_button().begin().await;
        Progress(Some(p))
    }
}

type Running = tower_lsp_server::OngoingProgress<tower_lsp_server::Bounded, tower_lsp_server::Cancellable>;

struct Progress(Option<Running>);

impl Progress {
    async fn report(&self, message: &str, percentage: u32) {
        if let Some(p) = &self.0 {
            p.report_with_message(message.to_string(), percentage, Some(true)).await;
        }
    }

    async fn finish(self, message: &str) {
        if let Some(p) = self.0 {
            p.finish_with_message(message.to_string()).await;
        }
    }
}
