//! "Propose segments for `k` with the agent" in the editor: the `segment` task
//! (`agent::segmentation`) run in the background with work-done progress and a cancel button.
//! The agent's proposal is validated by `lean::segment` (the refusal fed back to the agent until
//! one is valid or the budget is spent); a valid one is kept for the document and kernel and cuts
//! the kernel's Lean module that `lark.showLean` shows, until the document is closed or the
//! proposal no longer fits the kernel (it is validated again each time it is used).
//!
//! A segmentation decides only how the obligations are cut; it proves nothing.

use crate::state::{lock, State, COMMAND_WAIT};
use agent::prove::Budget;
use agent::SegmentOutcome;
use model::budget::CancelToken;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tower_lsp_server::lsp_types::{self as lsp, Uri};

struct Run {
    cancel: CancelToken,
    token: Option<String>,
    running: bool,
}

/// The segmentation requests of this session and the proposals accepted, by document and kernel.
#[derive(Default)]
pub struct Segmentations {
    runs: Mutex<HashMap<(String, String), Run>>,
    /// The accepted proposal (JSON, `lean::segment::Proposal`).
    accepted: Mutex<HashMap<(String, String), String>>,
}

impl Segmentations {
    /// The proposal accepted for a kernel of a document, if any.
    pub fn proposal(&self, uri: &str, kernel: &str) -> Option<String> {
        lock(&self.accepted).get(&(uri.to_string(), kernel.to_string())).cloned()
    }

    /// Forgets a kernel's proposal (it no longer fits the kernel).
    pub fn forget(&self, uri: &str, kernel: &str) {
        lock(&self.accepted).remove(&(uri.to_string(), kernel.to_string()));
    }

    /// Forgets everything about a document (it was closed).
    pub fn forget_document(&self, uri: &str) {
        lock(&self.accepted).retain(|(u, _), _| u != uri);
    }

    /// Cancels the request whose progress token this is; false when none has it.
    pub fn cancel_token(&self, token: &str) -> bool {
        let runs = lock(&self.runs);
        runs.values().find(|r| r.running && r.token.as_deref() == Some(token)).map(|r| r.cancel.cancel()).is_some()
    }
}

type Running = tower_lsp_server::OngoingProgress<tower_lsp_server::Bounded, tower_lsp_server::Cancellable>;

impl State {
    /// Starts asking the agent for a segmentation of `kernel` of `uri` in the background; `Err`
    /// when one is already being asked for.
    pub fn start_segment_proposal(self: &Arc<Self>, uri: Uri, kernel: String) -> Result<(), String> {
        let key = (uri.to_string(), kernel.clone());
        let cancel = CancelToken::new();
        {
            let mut runs = lock(&self.segmentations.runs);
            if runs.get(&key).is_some_and(|r| r.running) {
                return Err(format!("segments for `{kernel}` are already being proposed"));
            }
            runs.insert(key.clone(), Run { cancel: cancel.clone(), token: None, running: true });
        }
        let state = self.clone();
        tokio::spawn(async move {
            let progress = state.segment_progress(&key, &kernel).await;
            let outcome = state.propose_segments(&uri, &kernel, cancel).await;
            if let Some(r) = lock(&state.segmentations.runs).get_mut(&key) {
                r.running = false;
            }
            let (message, kind) = match &outcome {
                Ok(text) => (text.clone(), lsp::MessageType::INFO),
                Err(why) => (format!("no segmentation of `{kernel}`: {why}"), lsp::MessageType::WARNING),
            };
            if let Some(p) = progress {
                p.finish_with_message(message.clone()).await;
            }
            state.client.show_message(kind, message).await;
        });
        Ok(())
    }

    /// The request itself: the accepted segmentation's summary, or why there is none.
    async fn propose_segments(self: &Arc<Self>, uri: &Uri, kernel: &str, cancel: CancelToken) -> Result<String, String> {
        let fa = self.fresh_within(uri, COMMAND_WAIT).await.ok_or("the file is not open")?;
        let mut agent = lock(&self.settings).agent();
        let agent_name = agent.name();
        let budget = Budget { per_call: agent::Limits { cancel, ..agent::Limits::default() }, ..Budget::default() };
        let snapshot = lock(&self.host).snapshot();
        let name = kernel.to_string();
        let asked = tokio::task::spawn_blocking(move || -> Result<(String, usize, usize), String> {
            let k = fa.kernels.iter().find(|k| k.name == name || k.source_name == name).ok_or_else(|| format!("no kernel named `{name}` in this file"))?;
            let model = k.model().ok_or_else(|| format!("`{}` could not be lowered to the model", k.source_name))?;
            // The agent sees the PyTorch reference when one is bound and readable.
            let reference = k.spec.as_ref().and_then(|s| s.reference.as_ref()).and_then(|r| std::fs::read_to_string(&r.file).ok());
            let request = agent::segmentation::request(model, &fa.ptx, reference);
            match agent::propose_segmentation(model, &request, agent.as_mut(), &budget) {
                SegmentOutcome::Accepted { proposal, segments, attempts } => {
                    let json = serde_json::to_string(&proposal).map_err(|e| e.to_string())?;
                    // The module is cut along it exactly as `lark.showLean` will: validated again
                    // by `lean::segment` through the analysis.
                    snapshot.lean_module_with_segments(&fa, Some(&k.name), &json)?;
                    Ok((json, segments.len(), attempts.len() + 1))
                }
                SegmentOutcome::Refused { reason, .. } => Err(reason),
            }
        })
        .await
        .map_err(|e| format!("the segment task failed: {e}"))??;
        let (json, segments, tries) = asked;
        lock(&self.segmentations.accepted).insert((uri.to_string(), kernel.to_string()), json);
        let plural = |n: usize, what: &str| if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") };
        Ok(format!(
            "`{kernel}`: {} proposed by {agent_name}, accepted after {}; `lark.showLean` shows the module cut along them",
            plural(segments, "segment"),
            plural(tries, "attempt")
        ))
    }

    /// Work-done progress with a cancel button, when the client supports it.
    async fn segment_progress(&self, key: &(String, String), kernel: &str) -> Option<Running> {
        if !lock(&self.caps).work_done_progress {
            return None;
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let token = format!("lark/segments/{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let number = lsp::NumberOrString::String(token.clone());
        if self.client.send_request::<lsp::request::WorkDoneProgressCreate>(lsp::WorkDoneProgressCreateParams { token: number.clone() }).await.is_err() {
            return None;
        }
        if let Some(r) = lock(&self.segmentations.runs).get_mut(key) {
            r.token = Some(token);
        }
        Some(self.client.progress(number, format!("LARK: proposing segments for {kernel}")).with_percentage(0).with_cancel_button().begin().await)
    }
}
