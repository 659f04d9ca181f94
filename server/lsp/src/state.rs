//! The server's state and its edit loop: documents (ropes), the analysis host, debounced and
//! cancellable analyses on a bounded pool of analysis threads, and
//! publishing with a version check, so a result for an older version of a document is never
//! published after a newer version arrived. An analysis publishes twice when the file has a
//! kernel without a declared launch: the first look (`ide::Analysis::first_look`, within about a
//! second), then the full analysis, whose diagnostics replace it.

use crate::log::{debug, error};
use crate::settings::ClientSettings;
use crate::to_proto::{self, EditCaps};
use ide::{AnalysisHost, FileAnalysis, FileKind, SourceFile};
use ropey::Rope;
use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tower_lsp_server::lsp_types::{self as lsp, notification::Notification, Uri};
use tower_lsp_server::Client;

/// Edits closer together than this are analysed once, after the last.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// How long hover, code lens and code action requests wait for the analysis of the current text
/// before answering from the latest one there is: they answer within a second even while a slow
/// kernel is re-checked after every keystroke.
pub const REQUEST_WAIT: Duration = Duration::from_millis(300);

/// How long a command the user ran (show the model) waits for the analysis of the current text.
pub const COMMAND_WAIT: Duration = Duration::from_secs(10);

/// `lark/fileStatus`: sent after every analysis of a file.
pub enum FileStatus {}

impl Notification for FileStatus {
    type Params = serde_json::Value;
    const METHOD: &'static str = "lark/fileStatus";
}

/// The latest analysis of a document: its version, and the result (`None` if it failed).
pub type Latest = Option<(i32, Option<Arc<FileAnalysis>>)>;

pub struct Doc {
    pub rope: Rope,
    pub version: i32,
    pub kind: FileKind,
    pub path: Option<PathBuf>,
    /// The version analyses compare against to notice they are stale.
    pub current: Arc<AtomicI32>,
    pub last_change: Instant,
    pub pending: Option<tokio::task::AbortHandle>,
    pub latest: watch::Sender<Latest>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct ClientCaps {
    pub edit: EditCaps,
    pub code_lens_refresh: bool,
    pub watch_files: bool,
    pub configuration: bool,
    pub work_done_progress: bool,
}

pub struct State {
    pub client: Client,
    pub host: Mutex<AnalysisHost>,
    pub docs: Mutex<HashMap<String, Doc>>,
    /// Where analyses run.
    pub pool: crate::pool::Pool,
    /// Where request work (fix searches) runs, so it never queues behind analyses.
    pub requests: crate::pool::Pool,
    pub fix_searches: crate::fix_search::FixSearches,
    publish: tokio::sync::Mutex<()>,
    pub caps: Mutex<ClientCaps>,
    pub settings: Mutex<ClientSettings>,
    pub workspace_root: Mutex<Option<PathBuf>>,
    pub shutdown: AtomicBool,
    warned: AtomicBool,
    /// "Certify kernel" runs and their outcomes.
    pub certifications: crate::certify::Certifications,
    /// "Propose segments" requests and the segmentations accepted.
    pub segmentations: crate::segments::Segmentations,
}

/// Locks a mutex; a panic while it was held does not make the server unusable.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    pub fn new(client: Client) -> State {
        State {
            client,
            host: Mutex::new(AnalysisHost::default()),
            docs: Mutex::default(),
            pool: crate::pool::Pool::per_core(),
            requests: crate::pool::Pool::new(2),
            fix_searches: Default::default(),
            publish: tokio::sync::Mutex::new(()),
            caps: Mutex::default(),
            settings: Mutex::default(),
            workspace_root: Mutex::default(),
            shutdown: AtomicBool::new(false),
            warned: AtomicBool::new(false),
            certifications: Default::default(),
            segmentations: Default::default(),
        }
    }

    pub fn apply_settings(&self, s: ClientSettings) {
        if let Some(l) = crate::log::Level::parse(&s.log_level) {
            crate::log::set_level(l);
        }
        let root = lock(&self.workspace_root).clone();
        lock(&self.host).set_settings(s.to_ide(root));
        *lock(&self.settings) = s;
    }

    /// Starts tracking a document and analyses it right away.
    pub fn open(self: &Arc<Self>, uri: &Uri, kind: FileKind, text: String, version: i32) {
        let key = uri.to_string();
        let path = crate::from_proto::file_path(uri);
        {
            let mut docs = lock(&self.docs);
            let doc = Doc {
                rope: Rope::from_str(&text),
                version,
                kind,
                path: path.clone(),
                current: Arc::new(AtomicI32::new(version)),
                last_change: Instant::now(),
                pending: None,
                latest: watch::channel(None).0,
            };
            if let Some(old) = docs.insert(key.clone(), doc) {
                old.current.store(i32::MIN, Ordering::SeqCst);
                if let Some(h) = old.pending {
                    h.abort();
                }
            }
            lock(&self.host).set_file(SourceFile::new(key.clone(), path, kind, text.into(), version));
        }
        self.schedule(&key, Duration::ZERO);
    }

    /// Applies edits to a document before anything else can run (no `.await` here), then
    /// schedules its analysis: at once after a quiet spell, else after the debounce delay.
    pub fn change(self: &Arc<Self>, uri: &Uri, version: i32, changes: &[lsp::TextDocumentContentChangeEvent]) {
        let key = uri.to_string();
        let delay = {
            let mut docs = lock(&self.docs);
            let Some(doc) = docs.get_mut(&key) else { return };
            for c in changes {
                crate::from_proto::apply_change(&mut doc.rope, c);
            }
            doc.version = version;
            doc.current.store(version, Ordering::SeqCst);
            let now = Instant::now();
            let quiet = now.duration_since(doc.last_change) >= DEBOUNCE;
            doc.last_change = now;
            lock(&self.host).set_file(SourceFile::new(key.clone(), doc.path.clone(), doc.kind, doc.rope.to_string().into(), version));
            if quiet {
                Duration::ZERO
            } else {
                DEBOUNCE
            }
        };
        self.schedule(&key, delay);
    }

    pub fn close(&self, uri: &Uri) {
        let key = uri.to_string();
        self.fix_searches.cancel(&key);
        let mut docs = lock(&self.docs);
        if let Some(doc) = docs.remove(&key) {
            doc.current.store(i32::MIN, Ordering::SeqCst);
            if let Some(h) = doc.pending {
                h.abort();
            }
        }
        lock(&self.host).remove_file(&key);
    }

    /// (Re)starts the analysis of a document after `delay`; a pending one is dropped.
    pub fn schedule(self: &Arc<Self>, key: &str, delay: Duration) {
        let mut docs = lock(&self.docs);
        let Some(doc) = docs.get_mut(key) else { return };
        if let Some(h) = doc.pending.take() {
            h.abort();
        }
        let version = doc.version;
        let this = self.clone();
        let key = key.to_string();
        let task = tokio::spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            this.analyse_and_publish(key, version).await;
        });
        doc.pending = Some(task.abort_handle());
    }

    /// Re-analyses every open document (settings or interface files changed).
    pub fn schedule_all(self: &Arc<Self>) {
        let keys: Vec<String> = lock(&self.docs).keys().cloned().collect();
        for k in keys {
            self.schedule(&k, Duration::ZERO);
        }
    }

    async fn analyse_and_publish(self: &Arc<Self>, key: String, version: i32) {
        let Some(current) = lock(&self.docs).get(&key).map(|d| d.current.clone()) else { return };
        if current.load(Ordering::SeqCst) != version {
            return;
        }
        let snapshot = lock(&self.host).snapshot();
        let started = Instant::now();
        let Ok(uri) = Uri::from_str(&key) else { return };
        let look = snapshot.clone();
        let k = key.clone();
        match self.pool.run(move || look.first_look(&k)).await {
            Ok(Ok(Some(fa))) => {
                debug!("{key} v{version}: first look in {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
                self.publish_first_look(&uri, version, &fa).await;
            }
            Ok(Ok(None)) => {}
            Ok(Err(ide::Cancelled)) => {
                debug!("{key} v{version}: first look cancelled by a newer version");
                return;
            }
            // The full analysis still runs: a failed first look only costs the early diagnostics.
            Err(panic) => error!("{key} v{version}: the first look failed: {panic}"),
        }
        let k = key.clone();
        let (tx, rx) = watch::channel((0usize, 0usize));
        tokio::spawn(self.clone().report_progress(key.clone(), rx));
        let result = self
            .pool
            .run(move || {
                let progress = |done, total| {
                    tx.send_replace((done, total));
                };
                snapshot.analyse_with_progress(&k, &progress)
            })
            .await;
        match result {
            Ok(Ok(fa)) => {
                let stages: Vec<String> = fa.timings.iter().map(|(s, t)| format!("{s} {t:.1}")).collect();
                debug!(
                    "{key} v{version}: analysed in {:.1} ms ({} kernels checked; ms: {})",
                    started.elapsed().as_secs_f64() * 1e3,
                    fa.kernels.iter().filter(|k| k.checked).count(),
                    stages.join(", ")
                );
                self.publish(&uri, version, Some(fa)).await;
            }
            Ok(Err(ide::Cancelled)) => debug!("{key} v{version}: cancelled by a newer version"),
            Err(panic) => {
                error!("{key} v{version}: the analysis failed: {panic}");
                self.publish_failure(&uri, version, &panic).await;
            }
        }
    }

    /// Shows work-done progress for an analysis that takes more than half a second: kernels
    /// checked out of all. Ends when the analysis drops its sender.
    async fn report_progress(self: Arc<Self>, key: String, mut rx: watch::Receiver<(usize, usize)>) {
        async fn sender_gone(rx: &mut watch::Receiver<(usize, usize)>) {
            while rx.changed().await.is_ok() {}
        }
        if !lock(&self.caps).work_done_progress || tokio::time::timeout(Duration::from_millis(500), sender_gone(&mut rx)).await.is_ok() {
            return;
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let token = lsp::NumberOrString::String(format!("lark/check/{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        let created = self.client.send_request::<lsp::request::WorkDoneProgressCreate>(lsp::WorkDoneProgressCreateParams { token: token.clone() }).await;
        if created.is_err() {
            return;
        }
        let file = key.rsplit('/').next().unwrap_or(&key).to_string();
        let progress = self.client.progress(token, format!("LARK: checking {file}")).with_percentage(0).begin().await;
        loop {
            let (done, total) = *rx.borrow_and_update();
            if total > 0 {
                progress.report_with_message(format!("{done}/{total} kernels"), (done * 100 / total) as u32).await;
            }
            if rx.changed().await.is_err() {
                break;
            }
        }
        progress.finish().await;
    }

    /// Publishes the latest analysis of a document again (after a certification changed what its
    /// uncertified regions say).
    pub async fn republish(self: &Arc<Self>, uri: &Uri) {
        let latest = lock(&self.docs).get(&uri.to_string()).and_then(|d| d.latest.borrow().clone());
        if let Some((version, fa)) = latest {
            self.publish(uri, version, fa).await;
        }
    }

    /// Publishes an analysis unless its document changed meanwhile.
    async fn publish(self: &Arc<Self>, uri: &Uri, version: i32, fa: Option<Arc<FileAnalysis>>) {
        let _order = self.publish.lock().await;
        {
            let docs = lock(&self.docs);
            let Some(doc) = docs.get(&uri.to_string()) else { return };
            if doc.version != version {
                return;
            }
            doc.latest.send_replace(Some((version, fa.clone())));
        }
        let Some(fa) = fa else { return };
        self.client.publish_diagnostics(uri.clone(), self.diagnostics(uri, &fa), Some(version)).await;
        self.client.send_notification::<FileStatus>(to_proto::file_status(uri, Some(&fa))).await;
        if let Some(s) = &fa.status {
            if !self.warned.swap(true, Ordering::SeqCst) {
                self.client.show_message(lsp::MessageType::WARNING, format!("LARK: {s}")).await;
            }
        }
        if lock(&self.caps).code_lens_refresh {
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ = client.code_lens_refresh().await;
            });
        }
    }

    /// Publishes a first look unless the document changed meanwhile. It is not the document's
    /// latest analysis: hovers, lenses and code actions wait for the full one.
    async fn publish_first_look(self: &Arc<Self>, uri: &Uri, version: i32, fa: &FileAnalysis) {
        let _order = self.publish.lock().await;
        if lock(&self.docs).get(&uri.to_string()).is_none_or(|d| d.version != version) {
            return;
        }
        self.client.publish_diagnostics(uri.clone(), self.diagnostics(uri, fa), Some(version)).await;
    }

    /// An analysis's diagnostics in LSP terms, with the uncertified regions of verified kernels.
    fn diagnostics(&self, uri: &Uri, fa: &FileAnalysis) -> Vec<lsp::Diagnostic> {
        let reason = |kernel: &str| self.certifications.reason(uri.as_str(), kernel);
        let regions = ide::region_diagnostics(fa, &reason);
        ide::diagnostics(fa).iter().chain(&regions).map(|d| to_proto::diagnostic(fa, uri, d)).collect()
    }

    async fn publish_failure(self: &Arc<Self>, uri: &Uri, version: i32, message: &str) {
        self.publish(uri, version, None).await;
        let _order = self.publish.lock().await;
        if lock(&self.docs).get(&uri.to_string()).is_none_or(|d| d.version != version) {
            return;
        }
        let d = lsp::Diagnostic {
            range: lsp::Range::default(),
            severity: Some(lsp::DiagnosticSeverity::ERROR),
            code: Some(lsp::NumberOrString::String("error".into())),
            source: Some("lark".into()),
            message: format!("internal error: the analysis failed ({message}); the server keeps running"),
            ..Default::default()
        };
        self.client.publish_diagnostics(uri.clone(), vec![d], Some(version)).await;
        self.client.send_notification::<FileStatus>(to_proto::file_status(uri, None)).await;
    }

    /// The document's current version, if it is open.
    pub fn version(&self, uri: &Uri) -> Option<i32> {
        lock(&self.docs).get(&uri.to_string()).map(|d| d.version)
    }

    /// The analysis of the document's current text, waiting for it up to [`REQUEST_WAIT`] when
    /// it is under way; after that, the latest one there is (of an older version, or none).
    pub async fn fresh(&self, uri: &Uri) -> Option<Arc<FileAnalysis>> {
        self.fresh_within(uri, REQUEST_WAIT).await
    }

    /// [`State::fresh`], waiting up to `wait`.
    pub async fn fresh_within(&self, uri: &Uri, wait: Duration) -> Option<Arc<FileAnalysis>> {
        let (mut rx, version) = {
            let docs = lock(&self.docs);
            let doc = docs.get(&uri.to_string())?;
            (doc.latest.subscribe(), doc.version)
        };
        let wait_for_current = async {
            loop {
                if let Some((v, fa)) = rx.borrow_and_update().clone() {
                    if v >= version {
                        return fa;
                    }
                }
                if rx.changed().await.is_err() {
                    return None;
                }
            }
        };
        match tokio::time::timeout(wait, wait_for_current).await {
            Ok(fa) => fa,
            Err(_) => lock(&self.docs).get(&uri.to_string()).and_then(|d| d.latest.borrow().clone()).and_then(|(_, fa)| fa),
        }
    }

    /// Drops the document's cached results, analyses it again, and waits for the result.
    pub async fn recheck(self: &Arc<Self>, uri: &Uri) -> bool {
        let key = uri.to_string();
        let mut rx = match lock(&self.docs).get(&key) {
            Some(d) => d.latest.subscribe(),
            None => return false,
        };
        rx.borrow_and_update();
        lock(&self.host).invalidate(&key);
        self.schedule(&key, Duration::ZERO);
        let _ = tokio::time::timeout(Duration::from_secs(300), rx.changed()).await;
        true
    }
}
