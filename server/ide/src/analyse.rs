//! Analysing one file: compile (for `.cu`, cached by content hash), parse, lower, and check each
//! kernel, taking unchanged kernels from the cache.
//!
//! A kernel's cache key is a hash of its PTX text with the `.loc` lines of its own source made
//! relative to the first one, the module variables it names, the name of its source file, its
//! interface entry, the parameter names from the `.cu` signature and the options. So typing a
//! line above a kernel (which moves all its `.loc` lines, and all its PTX positions) does not
//! re-check it: the cached report is rebased onto the current text instead (positions recomputed
//! from the current instructions, `line N` in messages shifted).

use crate::db::{lock, FileKeys};
use crate::inputs::InterfaceInput;
use crate::quick::{self, FirstLookLaunch};
use crate::{cu, Analysis, Cancelled, FileKind, Observer, Severity, SourceFile};
use check::{KernelReport, Location, Sources};
use model::budget::CancelToken;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// A problem with the file as a whole or at a place in it: parse and compile errors, a bad
/// interface file, a missing compiler.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub range: Range<usize>,
    pub severity: Severity,
    pub message: String,
    /// About the interface (an error in it, or a conflict between its sources), not the text.
    pub interface: bool,
}

/// The result of analysing one version of one file.
pub struct FileAnalysis {
    pub key: String,
    pub version: i32,
    pub kind: FileKind,
    pub path: Option<PathBuf>,
    /// The text analysed (what ranges refer to).
    pub text: Arc<str>,
    pub index: ptx::LineIndex,
    /// The PTX analysed: the text itself for `.ptx`, the compiler's output for `.cu`.
    pub ptx: Arc<str>,
    pub ptx_index: ptx::LineIndex,
    pub problems: Vec<Problem>,
    pub kernels: Vec<KernelResult>,
    /// Something the user should see outside the file (no compiler, ...).
    pub status: Option<String>,
    pub interface_path: Option<PathBuf>,
    /// Every source of interface facts merged, kernel by kernel, under the names each wrote.
    pub interface: Option<Arc<spec::Interface>>,
    /// What is wrong with the interface: unreadable files, syntax errors, entries that do not
    /// parse, sections or SentryWard entries that name no kernel, and entries that do not fit
    /// the kernel's parameters. Each also appears among `problems`; the kernels were checked
    /// with what remained, which may be weaker than what was meant.
    pub interface_errors: Vec<spec::SpecError>,
    /// The sources of interface facts, for re-checks with an edited interface.
    pub(crate) interface_input: InterfaceInput,
    /// The file name the compiler saw (`.loc` lines of this file are lines of `text`).
    pub compile_name: String,
    /// Where the time went (stage, milliseconds), for logs and benchmarks.
    pub timings: Vec<(&'static str, f64)>,
}

pub struct KernelResult {
    /// The PTX entry name.
    pub name: String,
    /// The name in the source (unmangled for C++ kernels).
    pub source_name: String,
    /// Positions refer to the current `ptx`.
    pub report: Arc<KernelReport>,
    /// Whether the engine ran for this analysis (false: the result came from the cache).
    pub checked: bool,
    /// The parsed module and the index of the kernel's function in it.
    parse: Arc<ptx::Parse>,
    func: usize,
    /// The lowered kernel of the current text, lowered on first use for cached kernels.
    model: OnceLock<Option<Arc<model::Kernel>>>,
    analysis: OnceLock<Arc<model::Analysis>>,
    /// The kernel's Lean module, generated on first use (`crate::lean`).
    pub(crate) lean: OnceLock<Result<Arc<::lean::obligations::Generated>, String>>,
    pub param_names: Option<Vec<String>>,
    /// Names of the fields of structs passed by value (`check::Sources::field_names`).
    pub field_names: check::FieldNames,
    /// Facts the sources of the interface disagreed on, and which one was used.
    pub interface_notes: Vec<spec::MergeNote>,
    /// The kernel's merged interface entry, as checked.
    pub spec: Option<Arc<spec::KernelSpec>>,
    /// The line a lens goes on: the kernel's signature (in `text`).
    pub header: Range<usize>,
    /// The whole kernel (in `text`).
    pub extent: Range<usize>,
    /// The `.entry` in `ptx`.
    pub func_span: ptx::Span,
    /// Set when `report` is a first look at one assumed launch (see [`crate::quick`]), not the
    /// kernel's check: its findings are preliminary and it has no verdict of its own.
    pub first_look: Option<FirstLookLaunch>,
}

impl KernelResult {
    /// The lowered kernel (of the current text); `None` when it cannot be lowered.
    pub fn model(&self) -> Option<&model::Kernel> {
        self.model.get_or_init(|| model::Kernel::lower(&self.parse.module, &self.parse.module.functions[self.func]).ok().map(Arc::new)).as_deref()
    }

    /// Runs `f` on the lowered kernel without keeping it when it was not lowered already: for
    /// what every publish computes for every kernel, which must not hold every model in memory.
    pub fn with_model<T>(&self, f: impl FnOnce(&model::Kernel) -> T) -> Option<T> {
        if let Some(k) = self.model.get() {
            return k.as_deref().map(f);
        }
        let k = model::Kernel::lower(&self.parse.module, &self.parse.module.functions[self.func]).ok()?;
        Some(f(&k))
    }

    /// The lifted model and phases, computed on first use.
    pub fn lifted(&self) -> Option<&model::Analysis> {
        let k = self.model()?;
        Some(self.analysis.get_or_init(|| Arc::new(model::analyse(k))))
    }

    /// How a field of a struct passed by value is called: its `.cu` name when known
    /// (`p.ncols`), else its byte offset (`p+16`).
    pub fn field_name(&self, param: usize, offset: u32) -> String {
        self.field_names.get(&(param as u32, offset)).cloned().unwrap_or_else(|| format!("{}+{offset}", self.param_name(param)))
    }

    /// How a parameter is called: its `.cu` name when known, else `param_N`.
    pub fn param_name(&self, index: usize) -> String {
        if let Some(n) = self.param_names.as_ref().and_then(|ns| ns.get(index)).filter(|n| !n.is_empty()) {
            return n.clone();
        }
        match self.model() {
            Some(k) => k.params.get(index).map_or_else(|| format!("param_{index}"), |p| model::dump::short_param(&k.name, &p.name)),
            None => format!("param_{index}"),
        }
    }
}

impl FileAnalysis {
    /// The byte range of a zero-based line of `text`, without its indentation and trailing
    /// whitespace (the whole line when it is blank).
    pub fn line_range(&self, line: u32) -> Range<usize> {
        trimmed_line(&self.text, &self.index, line)
    }

    /// Zero-based line of `text` a report location is on, when it is in this file.
    pub fn loc_line(&self, loc: &Location) -> Option<u32> {
        match self.kind {
            FileKind::Ptx => Some(loc.ptx_line.saturating_sub(1)),
            FileKind::Cu => {
                let here = loc.line_kind == check::LineKind::Cu && loc.source.as_deref().is_some_and(|s| basename(s) == self.compile_name) && loc.line > 0;
                here.then(|| loc.line - 1)
            }
        }
    }

    pub fn loc_range(&self, loc: &Location) -> Option<Range<usize>> {
        self.loc_line(loc).map(|l| self.line_range(l))
    }

    /// The kernel whose text contains `offset`.
    pub fn kernel_at(&self, offset: usize) -> Option<&KernelResult> {
        self.kernels.iter().find(|k| k.extent.start <= offset && offset <= k.extent.end)
    }

    /// Zero-based line of a byte offset of `text`.
    pub fn line_of(&self, offset: usize) -> u32 {
        self.index.line_col(offset.min(self.text.len()) as u32).0
    }
}

pub(crate) fn trimmed_line(text: &str, index: &ptx::LineIndex, line: u32) -> Range<usize> {
    let r = index.line_range(text, line);
    let s = &text[r.clone()];
    let start = r.start + (s.len() - s.trim_start().len());
    let end = r.start + s.trim_end().len();
    if start >= end {
        r
    } else {
        start..end
    }
}

pub(crate) fn basename(p: &str) -> &str {
    p.rsplit(['/', '\\']).next().unwrap_or(p)
}

/// Which pass over a file an analysis is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pass {
    /// Every kernel checked for its declared (or every allowed) launch; results are cached.
    Full,
    /// Kernels without a declared block checked quickly at one assumed launch, results cached
    /// by the full pass taken as they are, and kernels with a declared block left out (see
    /// [`crate::quick`]). Nothing of it is cached or counted as a kernel check.
    FirstLook,
}

/// A compiler run's outcome, cached by content hash.
pub(crate) enum Compiled {
    Ptx(Arc<str>),
    /// Diagnostics of the compiled file, or the first line of the compiler's output.
    Failed(Vec<cuda::CuDiagnostic>, String),
    /// No compiler: not the file's fault.
    Missing(String),
    Other(String),
}

/// A checked kernel as the cache keeps it: the report, and for each position in it the index of
/// the instruction it points at, so the report can be moved onto a later version of the text.
pub(crate) struct CachedKernel {
    report: KernelReport,
    ordinals: Vec<Option<usize>>,
    func_start: u32,
    func_line: u32,
    /// The kernel's own source file (as the model chose it) and the first `.loc` line of each
    /// file, when the report was made.
    main_file: Option<u32>,
    bases: Vec<(u32, u32)>,
}

/// Every source position a report holds, so a cached report can be moved onto a new version
/// of the text; messages are rendered from these, so nothing else needs moving.
fn locations_mut(r: &mut KernelReport) -> impl Iterator<Item = &mut Location> {
    r.findings
        .iter_mut()
        .flat_map(|f| {
            let other = match &mut f.divergence {
                Some(check::Divergence::Barrier { other } | check::Divergence::Warp { other, .. }) => match other {
                    check::Whereabouts::AtBarrier { location } | check::Whereabouts::AtCollective { location } => Some(location),
                    _ => None,
                },
                Some(check::Divergence::OutsideMask { .. }) | None => None,
            };
            f.accesses.iter_mut().map(|a| &mut a.location).chain(f.barrier.iter_mut()).chain(other)
        })
        .chain(r.uncertified.iter_mut().flat_map(|u| u.location.iter_mut().chain(u.related.iter_mut())))
}

impl CachedKernel {
    fn new(report: &KernelReport, func: &ptx::Function, src: &Sources, main_file: Option<u32>, bases: Vec<(u32, u32)>) -> CachedKernel {
        let by_span: HashMap<(u32, u32), usize> = func.instructions().enumerate().map(|(n, i)| ((i.span.start, i.span.end), n)).collect();
        let mut report = report.clone();
        let ordinals = locations_mut(&mut report).map(|l| by_span.get(&(l.ptx_span[0], l.ptx_span[1])).copied()).collect();
        CachedKernel { report, ordinals, func_start: func.span.start, func_line: src.index.line_col(func.span.start).0, main_file, bases }
    }

    /// The report with positions for the current text of the same kernel: PTX positions from
    /// the current instructions (same order, same text but for `.loc` lines), CUDA lines
    /// shifted as the kernel's `.loc` lines were.
    fn rebased(&self, func: &ptx::Function, src: &Sources, bases: &[(u32, u32)]) -> KernelReport {
        let mut r = self.report.clone();
        let insts: Vec<&ptx::Instruction> = func.instructions().collect();
        let db = func.span.start as i64 - self.func_start as i64;
        let dl = src.index.line_col(func.span.start).0 as i64 - self.func_line as i64;
        let base = |bs: &[(u32, u32)]| self.main_file.and_then(|m| bs.iter().find(|(f, _)| *f == m)).map(|(_, b)| *b as i64);
        let dcu = match (base(&self.bases), base(bases)) {
            (Some(old), Some(new)) => new - old,
            _ => 0,
        };
        for (loc, ord) in locations_mut(&mut r).zip(&self.ordinals) {
            match ord.and_then(|o| insts.get(o)) {
                Some(i) => {
                    loc.ptx_span = [i.span.start, i.span.end];
                    loc.ptx_line = src.index.line_col(i.span.start).0 + 1;
                }
                None => {
                    loc.ptx_span = [(loc.ptx_span[0] as i64 + db) as u32, (loc.ptx_span[1] as i64 + db) as u32];
                    loc.ptx_line = (loc.ptx_line as i64 + dl) as u32;
                }
            }
            match loc.line_kind {
                check::LineKind::Ptx => loc.line = loc.ptx_line,
                check::LineKind::Cu => {
                    loc.line = (loc.line as i64 + dcu).max(1) as u32;
                    loc.source = src.cu_file.clone().or(loc.source.take());
                }
            }
        }
        r
    }
}

struct KeyInput<'a> {
    ptx: &'a str,
    func: &'a ptx::Function,
    module: &'a ptx::Module,
    spec: Option<&'a spec::KernelSpec>,
    param_names: &'a Option<Vec<String>>,
    field_names: &'a check::FieldNames,
    opts: &'a check::Options,
    /// The reference's text, when the spec binds one (an edit of the `.py` re-checks).
    reference: Option<Arc<String>>,
}

/// Bump when the engine's results for the same input may change.
const ENGINE_SALT: &str = concat!("lark-engine-", env!("CARGO_PKG_VERSION"));

/// The cache key of a kernel check: its fingerprint (which does not change when the kernel only
/// moves), its interface entry, its parameter names and the engine's options.
fn kernel_key(i: &KeyInput) -> (u64, Vec<(u32, u32)>) {
    let model::fingerprint::Relocatable { fingerprint, bases } = model::fingerprint::fingerprint(i.ptx, i.module, i.func);
    let mut h = DefaultHasher::new();
    ENGINE_SALT.hash(&mut h);
    fingerprint.hash(&mut h);
    format!("{:?}", i.spec).hash(&mut h);
    i.param_names.hash(&mut h);
    i.field_names.hash(&mut h);
    i.reference.hash(&mut h);
    // The options that change results (not the cancellation token).
    (i.opts.timeout_ms(), i.opts.enumerate, i.opts.budget_ms, i.opts.solver).hash(&mut h);
    (h.finish(), bases)
}

fn compile_options(an: &Analysis, path: &Path) -> cuda::CompileOptions {
    let s = an.settings();
    let (cc_includes, cc_defines) = an.db.inputs.compile_flags(s, path);
    let mut include_paths: Vec<String> = s
        .compiler
        .include_paths
        .iter()
        .map(|p| match &s.workspace_root {
            Some(root) if Path::new(p).is_relative() => root.join(p).display().to_string(),
            _ => p.clone(),
        })
        .collect();
    include_paths.extend(cc_includes);
    let mut defines = s.compiler.defines.clone();
    defines.extend(cc_defines);
    cuda::CompileOptions {
        compiler: s.compiler.path.clone().filter(|p| !p.is_empty()),
        arch: s.compiler.arch.clone().filter(|a| !a.is_empty()),
        include_paths,
        defines,
        timeout: None,
    }
}

/// Compiles `.cu` text, through the cache. Returns the cache key too.
pub(crate) fn compile(an: &Analysis, path: &Path, text: &str) -> (u64, Arc<Compiled>) {
    let opts = compile_options(an, path);
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    path.hash(&mut h);
    format!("{opts:?}").hash(&mut h);
    let key = h.finish();
    if let Some(c) = lock(&an.db.compiles).get(&key) {
        return (key, c);
    }
    an.db.count_compile();
    let out = match cuda::compile(path, text, &opts) {
        Ok(ptx) => Compiled::Ptx(ptx.into()),
        Err(cuda::CompileError::Failed { diagnostics, stderr }) => {
            let first = stderr.lines().find(|l| l.contains("error")).or_else(|| stderr.lines().next()).unwrap_or("compilation failed").to_string();
            Compiled::Failed(diagnostics, first)
        }
        Err(e @ cuda::CompileError::Missing { .. }) => Compiled::Missing(e.to_string()),
        Err(e) => Compiled::Other(e.to_string()),
    };
    let out = Arc::new(out);
    // A missing compiler may be installed a moment later: do not remember that.
    if !matches!(*out, Compiled::Missing(_)) {
        lock(&an.db.compiles).insert(key, out.clone());
    }
    (key, out)
}

fn compile_path(file: &SourceFile) -> PathBuf {
    file.path.clone().unwrap_or_else(|| PathBuf::from(if file.kind == FileKind::Cu { "kernel.cu" } else { "kernel.ptx" }))
}

pub(crate) fn analyse_file(an: &Analysis, file: &SourceFile, cancel: &CancelToken, observer: &Observer, pass: Pass) -> Result<FileAnalysis, Cancelled> {
    let index = ptx::LineIndex::new(&file.text);
    let path = compile_path(file);
    let mut iface = an.db.inputs.interface_for(an.settings(), file.path.as_deref());
    // A `.cu` that launches its kernels says with which block (the lowest-precedence facts).
    if file.kind == FileKind::Cu {
        iface = iface.with_launch_sites(&path, &file.text);
    }
    let mut fa = FileAnalysis {
        key: file.key.clone(),
        version: file.version,
        kind: file.kind,
        path: file.path.clone(),
        text: file.text.clone(),
        index,
        ptx: file.text.clone(),
        ptx_index: ptx::LineIndex::new(""),
        problems: vec![],
        kernels: vec![],
        status: None,
        interface_path: iface.path.clone(),
        interface: iface.merged(),
        interface_errors: iface.errors.clone(),
        interface_input: iface.clone(),
        compile_name: path.file_name().map_or_else(|| "kernel.cu".into(), |n| n.to_string_lossy().into_owned()),
        timings: vec![],
    };
    for e in &iface.errors {
        fa.problems.push(interface_problem(fa.line_range(0), e));
    }
    if let Some(at) = file.invalid_utf8_at {
        let line = fa.line_of(at);
        fa.problems.push(Problem {
            range: at..(at + 1).min(fa.text.len()).max(at),
            severity: Severity::Error,
            message: format!("invalid UTF-8 at byte {at}"),
            interface: false,
        });
        let _ = line;
    }
    let mut keys = FileKeys::default();
    let cu_text: Option<Arc<str>> = match file.kind {
        FileKind::Ptx => file.path.as_deref().and_then(|p| companion_cu_text(an, p, &file.text)),
        FileKind::Cu => {
            let t = Instant::now();
            let (ckey, compiled) = compile(an, &path, &file.text);
            fa.timings.push(("compile", ms(t)));
            keys.compile = Some(ckey);
            match &*compiled {
                Compiled::Ptx(p) => fa.ptx = p.clone(),
                Compiled::Failed(diags, first) => {
                    let mut any = false;
                    for d in diags.iter().filter(|d| d.severity == "error" || d.severity == "warning") {
                        any |= d.severity == "error";
                        let range = line_col_range(&fa, d.line, d.column);
                        let severity = if d.severity == "error" { Severity::Error } else { Severity::Warning };
                        fa.problems.push(Problem { range, severity, message: d.message_with_notes(), interface: false });
                    }
                    if !any {
                        fa.problems.push(Problem {
                            range: fa.line_range(0),
                            severity: Severity::Error,
                            message: format!("compilation failed: {first}"),
                            interface: false,
                        });
                    }
                    an.db.record_file(&file.key, keys);
                    return Ok(fa);
                }
                Compiled::Missing(m) => {
                    fa.status = Some(m.clone());
                    fa.problems.push(Problem { range: fa.line_range(0), severity: Severity::Warning, message: format!("not checked: {m}"), interface: false });
                    an.db.record_file(&file.key, keys);
                    return Ok(fa);
                }
                Compiled::Other(m) => {
                    fa.status = Some(m.clone());
                    fa.problems.push(Problem { range: fa.line_range(0), severity: Severity::Error, message: format!("not checked: {m}"), interface: false });
                    an.db.record_file(&file.key, keys);
                    return Ok(fa);
                }
            }
            Some(file.text.clone())
        }
    };
    fa.ptx_index = if file.kind == FileKind::Ptx { fa.index.clone() } else { ptx::LineIndex::new(&fa.ptx) };
    let only = an.settings().only_kernel.clone();
    check_module(an, &mut fa, &iface, cu_text.as_deref(), only.as_deref(), cancel, observer, &mut keys, pass)?;
    // A first look leaves out kernels: the keys of the full pass are the file's.
    if pass == Pass::Full {
        an.db.record_file(&file.key, keys);
    }
    Ok(fa)
}

/// The open document's text of the `.cu` a PTX file came from, else the file on disk.
fn companion_cu_text(an: &Analysis, ptx_path: &Path, ptx_text: &str) -> Option<Arc<str>> {
    let cu = crate::inputs::companion_cu(ptx_path, ptx_text)?;
    let want = crate::inputs::normalize(&cu);
    if let Some(f) = an.files.values().find(|f| f.path.as_deref().map(crate::inputs::normalize).as_ref() == Some(&want)) {
        return Some(f.text.clone());
    }
    std::fs::read_to_string(cu).ok().map(Into::into)
}

/// A compiler message's range: from its column to the end of the line.
fn line_col_range(fa: &FileAnalysis, line: u32, column: u32) -> Range<usize> {
    let line0 = line.saturating_sub(1);
    let whole = fa.line_range(line0);
    let raw = fa.index.line_range(&fa.text, line0);
    let start = (raw.start + column.saturating_sub(1) as usize).min(raw.end);
    if start >= whole.end || start < whole.start {
        whole
    } else {
        start..whole.end
    }
}

/// Parses and checks the PTX of `fa`, filling its kernels. With `only`, just that kernel.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_module(
    an: &Analysis,
    fa: &mut FileAnalysis,
    iface: &InterfaceInput,
    cu_text: Option<&str>,
    only: Option<&str>,
    cancel: &CancelToken,
    observer: &Observer,
    keys: &mut FileKeys,
    pass: Pass,
) -> Result<(), Cancelled> {
    let ptx_text = fa.ptx.clone();
    let t = Instant::now();
    let parsed = Arc::new(ptx::parse(&ptx_text));
    fa.timings.push(("parse", ms(t)));
    let t = Instant::now();
    let mut engine = 0.0;
    for e in &parsed.errors {
        let range = match fa.kind {
            FileKind::Ptx => span_range(fa, e.span),
            FileKind::Cu => fa.line_range(0),
        };
        let message = match fa.kind {
            FileKind::Ptx => e.message.clone(),
            FileKind::Cu => format!("the compiler's PTX does not parse: {}", e.message),
        };
        fa.problems.push(Problem { range, severity: Severity::Error, message, interface: false });
    }
    let map = ptx::SourceMap::new(&parsed.module);
    let opts = engine_options(an.settings(), cancel);
    let masked = (fa.kind == FileKind::Cu).then(|| cu::mask(&fa.text));
    // `--kernel` names a kernel by its PTX name, or a C++ kernel by its qualified or plain name.
    let wanted =
        |f: &ptx::Function| f.kind == ptx::FunctionKind::Entry && f.body.is_some() && only.is_none_or(|o| spec::kernel_aliases(&f.name).iter().any(|n| n == o));
    let kernel_names: Vec<&str> = parsed.module.functions.iter().filter(|f| f.kind == ptx::FunctionKind::Entry).map(|f| f.name.as_str()).collect();
    for e in iface.unknown_entries(&kernel_names) {
        fa.problems.push(interface_problem(fa.line_range(0), &e));
        fa.interface_errors.push(e);
    }
    // Every kernel's interface first: an error in any of them means nothing of the file is
    // reported as checked, so it must be known before the first report is passed on.
    let setups: Vec<KernelSetup> = parsed
        .module
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| wanted(f))
        .map(|(fi, func)| kernel_setup(fa, iface, cu_text, masked.as_ref(), fi, func))
        .collect();
    // A section that names no kernel anywhere is a typo that matters here when a kernel of this
    // file has no entry: it may be the entry that was meant for it.
    if setups.iter().any(|k| !iface.has_kernel(&k.name)) {
        for e in an.db.inputs.unmatched_sections(iface) {
            fa.problems.push(interface_problem(fa.line_range(0), &e));
            fa.interface_errors.push(e);
        }
    }
    let clean_interface = fa.interface_errors.is_empty() && setups.iter().all(|k| k.ki.errors.is_empty());
    let total = setups.len();
    let first_look_budget_ms = quick::kernel_budget_ms(total);
    for (done, setup) in setups.into_iter().enumerate() {
        let KernelSetup { fi, name, source_name, header, extent, param_names, field_names, ki } = setup;
        let func = &parsed.module.functions[fi];
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        (observer.progress)(done, total);
        for e in &ki.errors {
            fa.problems.push(interface_problem(header.clone(), e));
        }
        for n in &ki.notes {
            fa.problems.push(Problem { range: header.clone(), severity: Severity::Information, message: merge_note_message(n), interface: true });
        }
        fa.interface_errors.extend(ki.errors);
        let spec = ki.spec.as_ref();
        let incomplete = check::incomplete_parse(&parsed, func, &ptx_text);
        let reference = spec.and_then(|s| s.reference.as_ref()).and_then(|r| an.db.inputs.reference_text(&r.file).ok());
        let (key, bases) = kernel_key(&KeyInput {
            ptx: &ptx_text,
            func,
            module: &parsed.module,
            spec,
            param_names: &param_names,
            field_names: &field_names,
            opts: &opts,
            reference,
        });
        let file_name = |main_file: Option<u32>| main_file.and_then(|f| map.file_name(ptx::SourceLoc { file: f, line: 1, col: 0 })).map(str::to_string);
        let sources = |main_file: Option<u32>| Sources {
            ptx: &ptx_text,
            index: &fa.ptx_index,
            cu_file: file_name(main_file),
            param_names: param_names.clone(),
            field_names: field_names.clone(),
        };
        let model = OnceLock::new();
        let cached = if incomplete.is_some() { None } else { lock(&an.db.kernels).get(&key) };
        let mut first_look = None;
        let (report, checked) = match cached {
            // What did not parse is not in the model: checking the rest would prove something
            // about another kernel.
            _ if incomplete.is_some() => {
                let message = incomplete.clone().unwrap_or_default();
                (KernelReport::error(&name, check::Reason::IncompleteParse { message }, 0.0), false)
            }
            // Only kernels that lowered are cached, and this one has the same text.
            Some(c) => {
                keys.kernels.push(key);
                (c.rebased(func, &sources(c.main_file), &bases), false)
            }
            None if pass == Pass::FirstLook => match model::Kernel::lower(&parsed.module, func) {
                Ok(kernel) if !quick::block_is_declared(&kernel, spec) => {
                    let (report, launch) =
                        an.db.with_solver(|solver| quick::first_look(&kernel, spec, &sources(kernel.main_file), &opts, first_look_budget_ms, solver));
                    if cancel.is_cancelled() {
                        return Err(Cancelled);
                    }
                    first_look = Some(launch);
                    let _ = model.set(Some(Arc::new(kernel)));
                    (report, true)
                }
                // A kernel with a declared block has a fast check of its own, and one that does
                // not lower is reported by the full pass: neither has anything to show first.
                _ => continue,
            },
            None => match model::Kernel::lower(&parsed.module, func) {
                Ok(kernel) => {
                    let te = Instant::now();
                    let src = sources(kernel.main_file);
                    let memory_stops = model::budget::memory_stops();
                    let mut report = an.db.with_solver(|solver| check::check_kernel_scoped(&kernel, spec, &src, &opts, solver));
                    if let Some(spec) = spec.filter(|s| s.reference.is_some()) {
                        equivalence(an, &kernel, spec, &src, &opts, &mut report);
                    }
                    // A cancelled check stopped early: its report is unfinished and must not be
                    // cached or shown.
                    if cancel.is_cancelled() {
                        return Err(Cancelled);
                    }
                    engine += ms(te);
                    an.db.count_check();
                    keys.kernels.push(key);
                    // A check that some work stopped at the shared memory ceiling meanwhile may
                    // be incomplete for reasons outside this kernel: shown, not cached, so the
                    // next analysis checks it again.
                    if model::budget::memory_stops() == memory_stops {
                        lock(&an.db.kernels).insert(key, Arc::new(CachedKernel::new(&report, func, &src, kernel.main_file, bases)));
                    }
                    let _ = model.set(Some(Arc::new(kernel)));
                    (report, true)
                }
                Err(e) => {
                    let range = if fa.kind == FileKind::Ptx { span_range(fa, e.span) } else { header.clone() };
                    fa.problems.push(Problem { range, severity: Severity::Error, message: e.message.clone(), interface: false });
                    let _ = model.set(None);
                    let report = KernelReport::error(&name, check::Reason::NotLowered { message: e.message.clone() }, 0.0);
                    (report, false)
                }
            },
        };
        if clean_interface && first_look.is_none() {
            (observer.checked)(&report);
        }
        fa.kernels.push(KernelResult {
            name,
            source_name,
            report: Arc::new(report),
            checked,
            parse: parsed.clone(),
            func: fi,
            model,
            analysis: OnceLock::new(),
            lean: OnceLock::new(),
            param_names,
            field_names,
            interface_notes: ki.notes,
            spec: ki.spec.map(Arc::new),
            header,
            extent,
            func_span: func.span,
            first_look,
        });
    }
    fa.timings.push(("kernels", ms(t)));
    fa.timings.push(("engine", engine));
    Ok(())
}

/// What a kernel's check needs from its file and interface, known before any kernel is checked.
struct KernelSetup {
    fi: usize,
    name: String,
    source_name: String,
    header: Range<usize>,
    extent: Range<usize>,
    param_names: Option<Vec<String>>,
    field_names: check::FieldNames,
    ki: crate::inputs::KernelInterface,
}

fn kernel_setup(fa: &FileAnalysis, iface: &InterfaceInput, cu_text: Option<&str>, masked: Option<&String>, fi: usize, func: &ptx::Function) -> KernelSetup {
    let name = func.name.to_string();
    let source_name = spec::unmangled_name(&name).unwrap_or_else(|| name.clone());
    let (header, extent) = match (masked, fa.kind) {
        (Some(m), FileKind::Cu) => cu::kernel_extent(&fa.text, m, &source_name).unwrap_or((fa.line_range(0), 0..0)),
        _ => {
            let line = fa.index.line_col(func.name_span.start).0;
            (fa.line_range(line), func.span.range())
        }
    };
    let cu_params = cu_text.and_then(|cu| spec::cu_params(cu, &source_name));
    let param_names = cu_params.as_ref().map(|ps| ps.iter().map(|p| p.name.clone()).collect::<Vec<_>>());
    let declared = |names: &[&str]| iface.layers.iter().find_map(|l| l.interface.kernel(&name)?.param(names)).map(spec::ParamSpec::is_buffer);
    let params = crate::inputs::param_names(func, cu_params.as_deref(), &declared);
    let fields = cu_text.zip(cu_params).map(|(cu, ps)| crate::inputs::FieldSource::new(cu, ps, func));
    let field_names = fields.as_ref().map(|f| f.names(func)).unwrap_or_default();
    let ki = iface.kernel(&name, &params, fields.as_ref());
    KernelSetup { fi, name, source_name, header, extent, param_names, field_names, ki }
}

/// The least time an equivalence check is given, however long the race check took: enough for
/// the concrete run that finds most mismatches on small shapes.
const MIN_EQUIVALENCE_MS: u64 = 500;

/// Adds the equivalence check with the kernel's reference to its report. Only a kernel free of
/// races, divergence and out-of-bounds accesses has a result to compare: otherwise the check
/// is skipped (the report already says why the kernel is wrong).
fn equivalence(an: &Analysis, kernel: &model::Kernel, spec: &spec::KernelSpec, src: &Sources, opts: &check::Options, report: &mut KernelReport) {
    let Some(reference) = &spec.reference else { return };
    // A tolerated (benign) race leaves the memory as it is: the kernel still has a result.
    if report.findings.iter().any(|f| f.benign.is_none()) || report.verdict == check::Verdict::Error {
        return;
    }
    let file = reference.file.display().to_string();
    let text = match an.db.inputs.reference_text(&reference.file) {
        Ok(t) => t,
        Err(message) => {
            report.uncertified.push(check::Uncertified {
                reason: check::Reason::ReferenceError { file, line: 0, column: 0, message },
                location: None,
                related: vec![],
            });
            report.settle_verdict();
            return;
        }
    };
    let started = Instant::now();
    // One budget per kernel: the equivalence check has what the race check left of it.
    let left = opts.budget_ms.saturating_sub(report.stats.millis as u64).max(MIN_EQUIVALENCE_MS);
    let budget = model::budget::Budget::with_timeout(std::time::Duration::from_millis(left), opts.cancel.clone());
    let request = equiv::Request {
        kernel,
        spec,
        source_names: src.param_names.as_deref(),
        reference_file: &file,
        reference_text: &text,
        sources: src,
        budget,
        solver: Some(opts.solver),
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| equiv::check(&request))).unwrap_or_else(|p| {
        let message = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        equiv::Outcome {
            uncertified: vec![check::Uncertified {
                reason: check::Reason::EngineError { message: format!("in the equivalence check: {message}") },
                location: None,
                related: vec![],
            }],
            ..Default::default()
        }
    });
    report.findings.extend(outcome.findings);
    report.uncertified.extend(outcome.uncertified);
    report.equivalence = outcome.summary;
    report.stats.millis += started.elapsed().as_secs_f64() * 1e3;
    report.settle_verdict();
}

/// A problem with the interface, shown at `range` of the checked file (the kernel's header, or
/// the first line for the interface as a whole), naming the place in the interface file.
fn interface_problem(range: Range<usize>, e: &spec::SpecError) -> Problem {
    Problem { range, severity: Severity::Error, message: format!("interface error at {e}"), interface: true }
}

/// A conflict between two sources of interface facts, and where the value that lost is.
pub(crate) fn merge_note_message(n: &spec::MergeNote) -> String {
    let at =
        n.ignored_origin.as_ref().filter(|o| o.line != 0).map_or(String::new(), |o| format!(" (the ignored value is at {}:{}:{})", o.file, o.line, o.column));
    format!("interface: {n}{at}")
}

/// The engine's options for an analysis: the settings' solver, timeout and workers, and `cancel`.
/// `LARK_NO_ENUMERATE=1` forces the SMT path (to compare it with enumeration when debugging).
fn engine_options(settings: &crate::Settings, cancel: &CancelToken) -> check::Options {
    check::Options {
        timeout_ms: settings.timeout_ms,
        enumerate: std::env::var_os("LARK_NO_ENUMERATE").is_none(),
        cancel: cancel.clone(),
        solver: settings.solver,
        jobs: settings.jobs,
        strict_races: settings.strict_races,
        ..Default::default()
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

fn span_range(fa: &FileAnalysis, span: ptx::Span) -> Range<usize> {
    let (s, e) = (span.start as usize, (span.end as usize).min(fa.text.len()));
    if s < e {
        s..e
    } else {
        let line = fa.index.line_col(span.start.min(fa.text.len() as u32)).0;
        fa.line_range(line)
    }
}

/// Checks one kernel of an edited version of an analysed file (for fixes), through the same
/// caches as a real analysis, so that applying the fix finds its result ready.
pub(crate) fn recheck_text(an: &Analysis, fa: &FileAnalysis, text: Arc<str>, only: &str, cancel: &CancelToken) -> Option<FileAnalysis> {
    recheck(an, fa, text, &fa.interface_input, only, cancel)
}

/// Checks one kernel of an analysed file (its text possibly edited) against `iface` (possibly
/// an edited interface).
pub(crate) fn recheck(an: &Analysis, fa: &FileAnalysis, text: Arc<str>, iface: &InterfaceInput, only: &str, cancel: &CancelToken) -> Option<FileAnalysis> {
    let mut efa = FileAnalysis {
        key: fa.key.clone(),
        version: fa.version,
        kind: fa.kind,
        path: fa.path.clone(),
        index: ptx::LineIndex::new(&text),
        text: text.clone(),
        ptx: text.clone(),
        ptx_index: ptx::LineIndex::new(""),
        problems: vec![],
        kernels: vec![],
        status: None,
        interface_path: iface.path.clone(),
        interface: iface.merged(),
        interface_errors: vec![],
        interface_input: iface.clone(),
        compile_name: fa.compile_name.clone(),
        timings: vec![],
    };
    let path = fa.path.clone().unwrap_or_else(|| PathBuf::from(&fa.compile_name));
    let cu_text: Option<Arc<str>> = match fa.kind {
        FileKind::Cu => match &*compile(an, &path, &text).1 {
            Compiled::Ptx(p) => {
                efa.ptx = p.clone();
                Some(text.clone())
            }
            _ => return None,
        },
        FileKind::Ptx => fa.path.as_deref().and_then(|p| companion_cu_text(an, p, &text)),
    };
    efa.ptx_index = ptx::LineIndex::new(&efa.ptx);
    check_module(an, &mut efa, iface, cu_text.as_deref(), Some(only), cancel, &Observer::default(), &mut FileKeys::default(), Pass::Full).ok()?;
    Some(efa)
}
