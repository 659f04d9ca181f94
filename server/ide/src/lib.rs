//! The façade the language server (and anything else that edits kernels live) talks to, after
//! rust-analyzer's `AnalysisHost`/`Analysis`: a host takes file and settings changes and hands
//! out immutable [`Analysis`] snapshots; queries run on snapshots, on any thread, and stop when
//! the host's change of their input cancels them. The host owns the solver processes (a pool
//! shared by all snapshots) and the cancellation tokens, so callers pass neither.
//!
//! Results are plain data with byte ranges into the analysed text ([`Diagnostic`], [`Hover`],
//! [`Lens`], [`Fix`]); nothing here knows about LSP. Kernel checks are cached by a hash of the
//! kernel's text, its interface entry and the options, so an edit re-checks only the kernels it
//! touched ([`Stats::kernel_checks`] counts the checks that ran).

#![deny(clippy::print_stdout)]

mod analyse;
mod cu;
mod db;
mod diagnostics;
mod fixes;
mod hover;
mod inputs;
mod lean;
mod lens;
mod quick;

pub use analyse::{FileAnalysis, KernelResult, Problem};
pub use diagnostics::{diagnostics, Diagnostic, Related};
pub use fixes::{FileEdit, Fix, TextEdit};
pub use hover::{hover, Hover};
pub use lean::region_diagnostics;
pub use lens::{lenses, Lens, LensCommand};
pub use quick::{FirstLookLaunch, LaunchOrigin, FIRST_LOOK_BUDGET_MS};

use db::Db;
pub use model::budget::CancelToken;
pub use spec::{MergeNote, SourceKind, SpecError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the verdict words are explained (README sections with these anchors).
pub const DOCS_URL: &str = "https://github.com/lark-verifier/lark";

/// The documentation link for a verdict word (`race` → `…#race`).
pub fn docs_link(code: &str) -> String {
    // GitHub keeps underscores in heading anchors: `### barrier_divergence` → `#barrier_divergence`.
    format!("{DOCS_URL}#{code}")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// CUDA source, compiled to PTX first.
    Cu,
    /// PTX, analysed directly.
    Ptx,
}

impl FileKind {
    /// By file extension (`.cu`, `.cuh` / `.ptx`).
    pub fn from_path(path: &Path) -> Option<FileKind> {
        match path.extension()?.to_str()? {
            "cu" | "cuh" => Some(FileKind::Cu),
            "ptx" => Some(FileKind::Ptx),
            _ => None,
        }
    }

    /// By editor language id (`cuda-cpp` in VS Code, `cuda` in Neovim, `ptx`).
    pub fn from_language_id(id: &str) -> Option<FileKind> {
        match id {
            "cuda-cpp" | "cuda" | "cu" => Some(FileKind::Cu),
            "ptx" => Some(FileKind::Ptx),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

/// One open file, as the host knows it.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The file's bytes were not valid UTF-8 from this byte on (the text has replacement
    /// characters there; the rest is still analysed).
    pub invalid_utf8_at: Option<usize>,
    /// An opaque identity chosen by the caller (the language server uses the URI).
    pub key: String,
    /// The file on disk, when it has one: where `lark.toml` is looked for, and the name the
    /// compiler sees.
    pub path: Option<PathBuf>,
    pub kind: FileKind,
    pub text: Arc<str>,
    /// The editor's version of the text; results carry it back.
    pub version: i32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompilerSettings {
    /// `None`: find clang-19, clang or nvcc on PATH.
    pub path: Option<String>,
    pub arch: Option<String>,
    pub include_paths: Vec<String>,
    pub defines: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub compiler: CompilerSettings,
    /// Per SMT query (default: the solver's, [`check::SolverKind::default_timeout_ms`]).
    pub timeout_ms: Option<u64>,
    /// An interface file for every kernel (absolute, or relative to the workspace root), merged
    /// with the nearest `lark.toml` next to the file or above it.
    pub interface_file: Option<PathBuf>,
    /// Where `interface_file` stands among the sources of interface facts: an editor setting
    /// (below the nearest `lark.toml`; the default) or `--interface` on the command line (above
    /// it). See `spec`'s merge precedence.
    pub interface_file_kind: SourceKind,
    /// Where `compile_commands.json` is looked for, and what relative settings are relative to.
    pub workspace_root: Option<PathBuf>,
    /// A SentryWard kernel-input JSON that describes the kernels (as `lark check --input`); its
    /// facts take precedence over the interface file's.
    pub sentryward_input: Option<PathBuf>,
    /// The PyTorch reference and SentryWard's `reference_binding.json` for the kernel the
    /// SentryWard input describes (`--reference FILE --binding FILE`).
    pub reference_binding: Option<(PathBuf, PathBuf)>,
    /// Check only this kernel (PTX or source name), as `lark check --kernel`.
    pub only_kernel: Option<String>,
    /// The SMT solver (default: `LARK_SOLVER`, else Yices where installed, else Z3).
    pub solver: check::SolverKind,
    /// Workers per kernel check (0: one per core), as `check::Options::jobs`.
    pub jobs: usize,
    /// Report write-write races of equal values as races (`check::Options::strict_races`).
    pub strict_races: bool,
    /// Whether [`Analysis::first_look`] looks quickly at kernels without a declared block
    /// before their general check (on by default; off: it never has anything to show).
    pub first_look: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            compiler: CompilerSettings::default(),
            timeout_ms: None,
            interface_file: None,
            interface_file_kind: SourceKind::Editor,
            reference_binding: None,
            workspace_root: None,
            sentryward_input: None,
            only_kernel: None,
            solver: check::Options::default().solver,
            jobs: 0,
            strict_races: false,
            first_look: true,
        }
    }
}

impl SourceFile {
    /// A file in an editor buffer (always valid text).
    pub fn new(key: impl Into<String>, path: Option<PathBuf>, kind: FileKind, text: Arc<str>, version: i32) -> SourceFile {
        SourceFile { key: key.into(), path, kind, text, version, invalid_utf8_at: None }
    }

    /// A `.cu`/`.ptx` file read from disk; its key is its path as given. Invalid UTF-8 is
    /// replaced and remembered (reported as a problem at that byte), not an error.
    pub fn read(path: &Path) -> Result<SourceFile, String> {
        let kind = FileKind::from_path(path).ok_or_else(|| "not a .cu, .cuh or .ptx file".to_string())?;
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
        let invalid_utf8_at = std::str::from_utf8(&bytes).err().map(|e| e.valid_up_to());
        let text: Arc<str> = String::from_utf8_lossy(&bytes).into();
        let key = path.display().to_string();
        Ok(SourceFile { key, path: Some(path.to_path_buf()), kind, text, version: 0, invalid_utf8_at })
    }
}

/// The analysis was abandoned because a newer version of its input arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

/// Counters of work done, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Kernel checks that ran (cache misses), since the host was created.
    pub kernel_checks: u64,
    /// Compiler runs (cache misses).
    pub compiles: u64,
    /// Kernel results currently cached.
    pub cached_kernels: usize,
}

/// What an analysis tells its caller while it runs (`lark check` prints each kernel as it
/// finishes; the language server shows progress).
pub struct Observer<'a> {
    /// `(done, total)` before each kernel.
    pub progress: &'a dyn Fn(usize, usize),
    /// Each kernel's final report, as soon as it is known. Not called for a file whose
    /// interface has an error: nothing of such a file is reported as checked.
    pub checked: &'a dyn Fn(&check::KernelReport),
}

impl Default for Observer<'_> {
    fn default() -> Self {
        Observer { progress: &|_, _| {}, checked: &|_| {} }
    }
}

/// The mutable side: files and settings. Cheap to snapshot.
///
/// The host owns cancellation: each file has a token that is cancelled when the file changes or
/// is removed, and all tokens are cancelled when the settings change. An analysis started on a
/// snapshot stops within milliseconds once its input is superseded, and returns [`Cancelled`].
pub struct AnalysisHost {
    files: Arc<HashMap<String, SourceFile>>,
    settings: Arc<Settings>,
    db: Arc<Db>,
    tokens: Arc<HashMap<String, CancelToken>>,
    settings_token: CancelToken,
}

impl Default for AnalysisHost {
    fn default() -> Self {
        AnalysisHost::new(Settings::default())
    }
}

impl AnalysisHost {
    pub fn new(settings: Settings) -> AnalysisHost {
        AnalysisHost { files: Arc::default(), settings: Arc::new(settings), db: Arc::default(), tokens: Arc::default(), settings_token: CancelToken::new() }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// New settings apply to the next analysis; cached kernel results stay valid where their
    /// inputs did not change (the options are part of their key).
    pub fn set_settings(&mut self, settings: Settings) {
        if *self.settings != settings {
            self.settings_token.cancel();
            self.settings_token = CancelToken::new();
        }
        self.settings = Arc::new(settings);
    }

    /// Adds a file or replaces its text; analyses of its older text are cancelled.
    pub fn set_file(&mut self, file: SourceFile) {
        self.renew_token(&file.key);
        Arc::make_mut(&mut self.files).insert(file.key.clone(), file);
    }

    /// Removes a file; analyses of it are cancelled.
    pub fn remove_file(&mut self, key: &str) {
        if let Some(t) = Arc::make_mut(&mut self.tokens).remove(key) {
            t.cancel();
        }
        Arc::make_mut(&mut self.files).remove(key);
        self.db.forget_file(key);
    }

    fn renew_token(&mut self, key: &str) {
        if let Some(old) = Arc::make_mut(&mut self.tokens).insert(key.to_string(), CancelToken::new()) {
            old.cancel();
        }
    }

    pub fn file(&self, key: &str) -> Option<&SourceFile> {
        self.files.get(key)
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Drops every cached result of the file (its kernels, its compilation), so the next
    /// analysis checks it from scratch.
    pub fn invalidate(&mut self, key: &str) {
        self.renew_token(key);
        self.db.invalidate_file(key);
    }

    pub fn snapshot(&self) -> Analysis {
        Analysis {
            files: self.files.clone(),
            settings: self.settings.clone(),
            db: self.db.clone(),
            tokens: self.tokens.clone(),
            settings_token: self.settings_token.clone(),
        }
    }

    pub fn stats(&self) -> Stats {
        self.db.stats()
    }
}

/// An immutable view of the host at one moment. Send it to a worker thread and query it there.
#[derive(Clone)]
pub struct Analysis {
    files: Arc<HashMap<String, SourceFile>>,
    settings: Arc<Settings>,
    db: Arc<Db>,
    tokens: Arc<HashMap<String, CancelToken>>,
    settings_token: CancelToken,
}

impl Analysis {
    pub fn file(&self, key: &str) -> Option<&SourceFile> {
        self.files.get(key)
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn stats(&self) -> Stats {
        self.db.stats()
    }

    /// The token that is cancelled when this snapshot's version of `key` (or its settings) is
    /// superseded.
    pub fn cancel_token(&self, key: &str) -> CancelToken {
        match self.tokens.get(key) {
            Some(t) => t.joined(&self.settings_token),
            None => self.settings_token.clone(),
        }
    }

    /// Compiles (for `.cu`), parses and checks the file. Kernels whose inputs are unchanged come
    /// from the cache. Returns [`Cancelled`] when the file or the settings changed meanwhile.
    pub fn analyse(&self, key: &str) -> Result<Arc<FileAnalysis>, Cancelled> {
        self.analyse_observed(key, &Observer::default())
    }

    /// Like [`Analysis::analyse`], calling `progress(done, total)` before each kernel.
    pub fn analyse_with_progress(&self, key: &str, progress: &dyn Fn(usize, usize)) -> Result<Arc<FileAnalysis>, Cancelled> {
        self.analyse_observed(key, &Observer { progress, ..Observer::default() })
    }

    /// Like [`Analysis::analyse`], telling `observer` of each kernel as the analysis goes.
    pub fn analyse_observed(&self, key: &str, observer: &Observer) -> Result<Arc<FileAnalysis>, Cancelled> {
        let file = self.files.get(key).ok_or(Cancelled)?;
        let cancel = self.cancel_token(key);
        analyse::analyse_file(self, file, &cancel, observer, analyse::Pass::Full).map(Arc::new)
    }

    /// A first look at the file, for an editor to show while [`Analysis::analyse`] runs: each
    /// kernel whose block no interface declares is checked quickly at one assumed launch (see
    /// [`FirstLookLaunch`]; its [`KernelResult::first_look`] is set and its findings become
    /// preliminary warnings), kernels whose result is cached come as they are, and kernels with
    /// a declared block are left out. `None` when no kernel needed a first look (the full
    /// analysis has nothing slow to wait for) or the settings turn it off. Nothing of it is
    /// cached: the full analysis still checks every kernel.
    pub fn first_look(&self, key: &str) -> Result<Option<Arc<FileAnalysis>>, Cancelled> {
        if !self.settings.first_look {
            return Ok(None);
        }
        let file = self.files.get(key).ok_or(Cancelled)?;
        let cancel = self.cancel_token(key);
        let fa = analyse::analyse_file(self, file, &cancel, &Observer::default(), analyse::Pass::FirstLook)?;
        Ok(fa.kernels.iter().any(|k| k.first_look.is_some()).then(|| Arc::new(fa)))
    }

    /// Code actions for a byte range of an analysed file: interface stubs for kernels without an
    /// interface entry, and missing barriers for races, offered only when re-checking the edited
    /// text shows the race gone and no new barrier divergence. `request` is cancelled by the
    /// caller when the request is; the file's own token also stops the search.
    pub fn fixes(&self, fa: &FileAnalysis, range: std::ops::Range<usize>, request: &CancelToken) -> Vec<Fix> {
        let cancel = self.cancel_token(&fa.key).joined(request);
        fixes::fixes(self, fa, range, &cancel)
    }

    /// The lifted model of every kernel of the file, phase by phase.
    pub fn show_model(&self, fa: &FileAnalysis) -> String {
        hover::show_model(fa)
    }

    /// The Lean module of a kernel of the file (the first one when `kernel` is `None`): its
    /// definitions, segments and obligations.
    pub fn lean_module(&self, fa: &FileAnalysis, kernel: Option<&str>) -> Result<Arc<::lean::obligations::Generated>, String> {
        let k = match kernel {
            Some(name) => {
                fa.kernels.iter().find(|k| k.name == name || k.source_name == name).ok_or_else(|| format!("no kernel named `{name}` in this file"))?
            }
            None => fa.kernels.first().ok_or("the file has no kernels")?,
        };
        lean::module(self, fa, k)
    }

    /// Like [`Analysis::lean_module`], cut along an external segmentation proposal (JSON),
    /// which is validated first.
    pub fn lean_module_with_segments(&self, fa: &FileAnalysis, kernel: Option<&str>, proposal: &str) -> Result<::lean::obligations::Generated, String> {
        let k = match kernel {
            Some(name) => {
                fa.kernels.iter().find(|k| k.name == name || k.source_name == name).ok_or_else(|| format!("no kernel named `{name}` in this file"))?
            }
            None => fa.kernels.first().ok_or("the file has no kernels")?,
        };
        lean::module_with_segments(self, fa, k, proposal)
    }

    /// The segments of a kernel with a required obligation of their own (outputs they store) that have
    /// instructions on the zero-based line: what "Certify this segment" offers there.
    pub fn certifiable_segments_at(&self, fa: &FileAnalysis, kernel: &str, line0: u32) -> Vec<String> {
        let Some(k) = fa.kernels.iter().find(|k| k.name == kernel) else { return vec![] };
        let Ok(g) = lean::module(self, fa, k) else { return vec![] };
        lean::segments_at(fa, k, &g.segments, line0)
            .into_iter()
            .filter(|s| g.open_obligations().any(|o| o.segment == Some(*s)))
            .map(|s| g.segments[s].name.clone())
            .collect()
    }

    /// A hover with the Lean part (the line's segment and its obligations) after the engine's.
    pub fn hover(&self, fa: &FileAnalysis, offset: usize) -> Option<Hover> {
        let mut h = hover::hover(fa, offset)?;
        if let Some(section) = lean::hover_section(self, fa, offset) {
            h.markdown.push_str(&section);
        }
        Some(h)
    }

    /// Code lenses, with each kernel's count of proved Lean obligations.
    pub fn lenses(&self, fa: &FileAnalysis) -> Vec<Lens> {
        self.lenses_with(fa, &|_| None)
    }

    /// Code lenses; `recheck(dir)` is what a recheck of a certificate on disk found, if one ran.
    pub fn lenses_with(&self, fa: &FileAnalysis, recheck: &dyn Fn(&std::path::Path) -> Option<String>) -> Vec<Lens> {
        let mut out = lens::lenses(fa);
        for k in fa.kernels.iter().filter(|k| k.report.verdict != check::Verdict::Error) {
            if let Some(title) = lean::lens_title(self, fa, k, recheck) {
                out.push(Lens { range: k.header.clone(), title, command: LensCommand::ShowLean, kernel: k.name.clone() });
            }
        }
        // Each kernel's lenses together, in the order of the file.
        out.sort_by_key(|l| l.range.start);
        out
    }
}
