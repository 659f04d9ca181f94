//! "Certify kernel" in the editor: the prove loop for each Lean obligation of a kernel, run in
//! the background with work-done progress (one step per obligation) and a cancel button, and its
//! outcome shown where the user looks — the uncertified regions say why there is no certificate
//! ("Lean toolchain not found", "agent budget exhausted", "Lean rejected: …", "cancelled").
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

/// The certifications of this session, by document and kernel.
#[derive(Default)]
pub struct Certifications {
    runs: Mutex<HashMap<(String, String), Run>>,
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

impl State {
    /// Starts certifying `kernel` of `uri` in the background; `Err` when it cannot start.
    pub fn start_certify(self: &Arc<Self>, uri: Uri, kernel: String) -> Result<(), String> {
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
            let reason = state.certify(&uri, &kernel, cancel).await;
            if let Some(r) = lock(&state.certifications.runs).get_mut(&key) {
                r.status = Status::Done(reason);
            }
            state.republish(&uri).await;
        });
        Ok(())
    }

    /// The loop over the obligations; `None` when all were accepted by Lean.
    async fn certify(self: &Arc<Self>, uri: &Uri, kernel: &str, cancel: CancelToken) -> Option<String> {
        let Some(fa) = self.fresh_within(uri, COMMAND_WAIT).await else { return Some("the file is not open".into()) };
        let snapshot = lock(&self.host).snapshot();
        let name = kernel.to_string();
        let generated = tokio::task::spawn_blocking(move || snapshot.lean_module(&fa, Some(&name))).await;
        let g = match generated {
            Ok(Ok(g)) => g,
            Ok(Err(e)) => return Some(e),
            Err(e) => return Some(format!("generating the Lean module failed: {e}")),
        };
        let open: Vec<lean::obligations::Obligation> = g.open_obligations().cloned().collect();
        if open.is_empty() {
            return Some(format!("no obligation is stated ({})", g.notes.join("; ")));
        }
        let progress = self.progress_for(uri, kernel, &cancel).await;
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
        let mut agent = lock(&self.settings).agent();
        let mut failures = Vec::new();
        for (i, o) in open.iter().enumerate() {
            if cancel.is_cancelled() {
                progress.finish("cancelled").await;
                return Some("cancelled".into());
            }
            progress.report(&format!("{} ({}/{})", o.name, i + 1, open.len()), (i * 100 / open.len()) as u32).await;
            let req = agent::task::request(&g, o, lib.as_ref(), vec![format!("LARK's engine verified `{kernel}` at this launch")]);
            let budget = Budget { per_call: agent::Limits { cancel: cancel.clone(), ..agent::Limits::default() }, ..Budget::default() };
            let (policy, checker) = (policy.clone(), checker.clone());
            let (outcome, back) = tokio::task::spawn_blocking(move || {
                let checker = checker.as_deref().map(|c| c as &dyn Checker);
                let outcome = agent::prove(&req, agent.as_mut(), checker, &policy, &budget);
                (outcome, agent)
            })
            .await
            .unwrap_or_else(|e| (Outcome::NotProved { reason: format!("the prove loop failed: {e}"), attempts: vec![] }, lock(&self.settings).agent()));
            agent = back;
            if let Outcome::NotProved { reason, .. } = outcome {
                if reason == "cancelled" {
                    progress.finish("cancelled").await;
                    return Some("cancelled".into());
                }
                failures.push(format!("{}: {reason}", o.name));
            }
        }
        let summary = if failures.is_empty() { None } else { Some(failures.join("; ")) };
        progress.finish(summary.as_deref().unwrap_or("every obligation accepted by Lean")).await;
        summary
    }

    /// Work-done progress with a cancel button, when the client supports it.
    async fn progress_for(&self, uri: &Uri, kernel: &str, cancel: &CancelToken) -> Progress {
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
        let _ = cancel;
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
