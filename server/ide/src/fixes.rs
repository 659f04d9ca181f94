//! Code actions as plain edits: an interface stub for a kernel without an interface entry, a
//! missing barrier for a race, and an assumption about an index buffer for a race that needs two
//! equal values in it. A barrier is offered only where re-checking the edited text shows the race
//! gone and no new barrier divergence; candidate places are tried from the later access outwards
//! (its line, then around each enclosing block). An assumption is offered only where re-checking
//! the kernel against the edited lark.toml shows the race gone; so is `assume = ["zeroed"]` for an
//! output a mismatching kernel accumulates into, offered only where the mismatch is then gone.

use crate::analyse::{self, FileAnalysis, KernelResult};
use crate::db::lock;
use crate::diagnostics::primary_access;
use crate::{cu, Analysis, FileKind};
use check::{Finding, FindingKind};
use model::budget::CancelToken;
use model::symbolic::Base;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub struct TextEdit {
    pub range: Range<usize>,
    pub new_text: String,
}

/// Edits to one file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileEdit {
    /// An open file, by the key it was given to the host.
    pub key: Option<String>,
    /// A file on disk (when `key` is `None`).
    pub path: Option<PathBuf>,
    /// The file does not exist yet: create it, then apply the edits.
    pub create: bool,
    /// The text the edit ranges refer to.
    pub original: Arc<str>,
    pub edits: Vec<TextEdit>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<FileEdit>,
    /// The diagnostic it resolves: its range in the file and its code.
    pub resolves: Option<(Range<usize>, &'static str)>,
    pub preferred: bool,
}

/// How many places a barrier is tried at, and for how long, before giving up.
const MAX_BARRIER_CANDIDATES: usize = 8;
const BARRIER_BUDGET: std::time::Duration = std::time::Duration::from_secs(20);

pub(crate) fn fixes(an: &Analysis, fa: &FileAnalysis, range: Range<usize>, cancel: &CancelToken) -> Vec<Fix> {
    let mut out = Vec::new();
    let lines = fa.line_of(range.start)..=fa.line_of(range.end);
    for kr in &fa.kernels {
        for f in kr.report.findings.iter().filter(|f| f.kind == FindingKind::Race && f.accesses.len() == 2) {
            if !f.accesses.iter().any(|a| fa.loc_line(&a.location).is_some_and(|l| lines.contains(&l))) {
                continue;
            }
            if cancel.is_cancelled() {
                return out;
            }
            out.extend(assumption_fixes(an, fa, kr, f, cancel));
            // A barrier orders the threads of one block, never two blocks.
            let across_blocks = f.threads.len() == 2 && f.threads[0].block != f.threads[1].block;
            if across_blocks {
                continue;
            }
            if let Some(fix) = barrier_fix_cached(an, fa, kr, f, cancel) {
                out.push(fix);
            }
        }
    }
    // An out-of-bounds access whose index came from an index buffer: the bound it needs.
    for kr in &fa.kernels {
        for f in kr.report.findings.iter().filter(|f| f.kind == FindingKind::OutOfBounds && f.inputs.iter().any(|i| !i.declared)) {
            if !f.accesses.iter().any(|a| fa.loc_line(&a.location).is_some_and(|l| lines.contains(&l))) {
                continue;
            }
            if cancel.is_cancelled() {
                return out;
            }
            out.extend(assumption_fixes(an, fa, kr, f, cancel));
        }
    }
    // A mismatch whose kernel adds to what an output held before it ran: the output zeroed.
    for kr in &fa.kernels {
        for f in kr.report.findings.iter().filter(|f| f.kind == FindingKind::Mismatch) {
            let Some(m) = f.mismatch.as_ref().filter(|m| m.hint.is_some()) else { continue };
            if !f.accesses.iter().any(|a| fa.loc_line(&a.location).is_some_and(|l| lines.contains(&l))) {
                continue;
            }
            if cancel.is_cancelled() {
                return out;
            }
            out.extend(zeroed_fix(an, fa, kr, f, &m.buffer, cancel));
        }
    }
    for kr in &fa.kernels {
        let touches = kr.extent.start <= range.end && range.start <= kr.extent.end.max(kr.header.end);
        if touches && !fa.interface_input.has_kernel(&kr.name) {
            out.extend(stub_fix(fa, kr));
        }
    }
    out
}

fn barrier_fix_cached(an: &Analysis, fa: &FileAnalysis, kr: &KernelResult, f: &Finding, cancel: &CancelToken) -> Option<Fix> {
    cached_fix(an, fa, kr, f, "barrier", cancel, || barrier_fix(an, fa, kr, f, cancel))
}

/// The fix of kind `what` (with its parameter: a buffer's name) for finding `f` from the
/// analysis's cache, else computed by `compute` (which re-checks the kernel) and cached unless
/// cancelled. The cache's lock is not held while `compute` runs.
fn cached_fix(
    an: &Analysis,
    fa: &FileAnalysis,
    kr: &KernelResult,
    f: &Finding,
    what: &str,
    cancel: &CancelToken,
    compute: impl FnOnce() -> Option<Fix>,
) -> Option<Fix> {
    let mut h = DefaultHasher::new();
    (what, &fa.key, &*fa.text, &kr.name, serde_json::to_string(f).unwrap_or_default(), format!("{:?}", an.settings())).hash(&mut h);
    let key = h.finish();
    if let Some(hit) = lock(&an.db.fixes).get(&key) {
        return hit;
    }
    let fix = compute();
    if !cancel.is_cancelled() {
        lock(&an.db.fixes).insert(key, fix.clone());
    }
    fix
}

/// For a race that needs particular values in index buffers the interface says nothing about:
/// `assume = ["injective"]` for each such buffer, in the lark.toml the stub would go to, when
/// re-checking the kernel with it shows the race gone; else `injective` with `in_range(0, n)`,
/// `n` the length of the raced-on buffer (an index into it is below its length; without the
/// bound two distinct indices can still wrap around to one address). For an out-of-bounds
/// access, `in_range(0, n)` with `n` the number of elements of the array it went past.
fn assumption_fixes(an: &Analysis, fa: &FileAnalysis, kr: &KernelResult, f: &Finding, cancel: &CancelToken) -> Vec<Fix> {
    let mut buffers: Vec<&str> = f.inputs.iter().filter(|i| !i.declared).map(|i| i.buffer.as_str()).collect();
    buffers.dedup();
    let mut out = Vec::new();
    for buffer in buffers {
        if cancel.is_cancelled() {
            break;
        }
        let fix = cached_fix(an, fa, kr, f, &format!("assume {buffer}"), cancel, || {
            let candidates = match f.kind {
                FindingKind::OutOfBounds => {
                    let elements = f.address.as_ref().and_then(|a| a.size).zip(f.accesses.first()).map(|(size, a)| size / u64::from(a.bytes.max(1)));
                    elements.and_then(|n| i64::try_from(n).ok()).map(|n| vec![vec![spec::Assumption::InRange(0, n)]]).unwrap_or_default()
                }
                _ => {
                    let mut candidates = vec![vec![spec::Assumption::Injective]];
                    if let Some(n) = target_len(kr, f).and_then(|n| i64::try_from(n).ok()) {
                        candidates.push(vec![spec::Assumption::Injective, spec::Assumption::InRange(0, n)]);
                    }
                    candidates
                }
            };
            candidates.iter().find_map(|c| assumption_fix(an, fa, kr, f, buffer, c, cancel))
        });
        out.extend(fix);
    }
    out
}

/// `assume = ["zeroed"]` on the output `buffer` a mismatch accumulates into, when re-checking
/// the kernel with it shows the mismatch gone (cached like the other assumptions).
fn zeroed_fix(an: &Analysis, fa: &FileAnalysis, kr: &KernelResult, f: &Finding, buffer: &str, cancel: &CancelToken) -> Option<Fix> {
    cached_fix(an, fa, kr, f, &format!("zeroed {buffer}"), cancel, || assumption_fix(an, fa, kr, f, buffer, &[spec::Assumption::Zeroed], cancel))
}

/// The declared length, in elements, of the buffer a finding's first access touches.
fn target_len(kr: &KernelResult, f: &Finding) -> Option<u64> {
    let spec = kr.spec.as_deref()?;
    let spec::ParamSpec::Buffer { len: Some(len), .. } = spec.params.get(&f.accesses.first()?.target)? else { return None };
    let scalars = spec.scalar_values();
    len.elements(&|n| scalars.get(n).copied())
}

/// `original` turned into `edited` by one replacement (their common ends kept).
fn single_edit(original: &str, edited: &str) -> TextEdit {
    let prefix = original.bytes().zip(edited.bytes()).take_while(|(a, b)| a == b).count();
    let (o, e) = (&original.as_bytes()[prefix..], &edited.as_bytes()[prefix..]);
    let suffix = o.iter().rev().zip(e.iter().rev()).take_while(|(a, b)| a == b).count();
    // Keep both ends on character boundaries.
    let mut start = prefix;
    while !original.is_char_boundary(start) || !edited.is_char_boundary(start) {
        start -= 1;
    }
    let (mut end_o, mut end_e) = (original.len() - suffix, edited.len() - suffix);
    while !original.is_char_boundary(end_o) || !edited.is_char_boundary(end_e) {
        end_o += 1;
        end_e += 1;
    }
    TextEdit { range: start..end_o, new_text: edited[start..end_e].to_string() }
}

fn assumption_fix(
    an: &Analysis,
    fa: &FileAnalysis,
    kr: &KernelResult,
    f: &Finding,
    buffer: &str,
    assumptions: &[spec::Assumption],
    cancel: &CancelToken,
) -> Option<Fix> {
    let toml = fa.interface_path.clone().or_else(|| Some(fa.path.as_deref()?.parent()?.join("lark.toml")))?;
    let exists = toml.is_file();
    let original: Arc<str> = if exists { std::fs::read_to_string(&toml).ok()?.into() } else { "".into() };
    // The names the lark.toml may already use for the kernel and the buffer.
    let written = fa.interface_input.layer_at(&toml);
    let section = [kr.name.as_str(), kr.source_name.as_str()]
        .into_iter()
        .find(|n| written.is_some_and(|i| i.kernels.contains_key(*n)))
        .unwrap_or(&kr.source_name)
        .to_string();
    let k = kr.model()?;
    let key = match (0..k.params.len()).find(|&i| kr.param_name(i) == buffer) {
        Some(index) => {
            let names = [kr.param_name(index), k.params[index].name.to_string(), format!("param_{index}")];
            let entry = written.and_then(|i| i.kernels.get(&section));
            names.iter().find(|n| entry.is_some_and(|e| e.params.contains_key(*n))).unwrap_or(&names[0]).clone()
        }
        // A pointer inside a struct passed by value goes by its name or its byte offset
        // (`p.indices`, `p+48`), as the finding names it.
        None => {
            let base = spec::field_key(buffer).map(|(b, _)| b).or_else(|| spec::named_field_key(buffer).map(|(b, _)| b))?;
            (0..k.params.len()).any(|i| kr.param_name(i) == base && k.params[i].is_aggregate()).then(|| buffer.to_string())?
        }
    };
    let mut edited = original.to_string();
    for a in assumptions {
        let edit = spec::add_assumption(&edited, &section, &key, a)?;
        edited.replace_range(edit.range.clone(), &edit.text);
    }
    let edit = single_edit(&original, &edited);
    // Re-check the kernel against the edited interface: offered only if the finding is gone.
    let iface = fa.interface_input.with_toml_text(&toml, &edited);
    let efa = analyse::recheck(an, fa, fa.text.clone(), &iface, &kr.name, cancel)?;
    let new = efa.kernels.iter().find(|k| k.name == kr.name)?;
    let lines = |g: &Finding| g.accesses.iter().map(|a| (a.location.ptx_line, a.target.clone())).collect::<BTreeSet<_>>();
    let same = new.report.findings.iter().any(|g| g.kind == f.kind && lines(g) == lines(f));
    // Gone means decided: a finding the re-check leaves undecided at its lines (a solver
    // timeout, a witness the replay could not run) is not gone.
    if same || new.report.leaves_undecided(&f.lines()) || new.report.verdict == check::Verdict::Error || cancel.is_cancelled() {
        return None;
    }
    let p = primary_access(fa, f);
    let diag_range = fa.loc_range(&f.accesses[p].location)?;
    let file = toml.file_name().map_or_else(|| "lark.toml".into(), |n| n.to_string_lossy().into_owned());
    let what = match f.kind {
        FindingKind::OutOfBounds => "the out-of-bounds access",
        FindingKind::Mismatch => "the mismatch",
        _ => "the race",
    };
    Some(Fix {
        title: format!(
            "Assume `{buffer}` is {} in {file} (re-checked: {what} is gone)",
            assumptions.iter().map(ToString::to_string).collect::<Vec<_>>().join(" and ")
        ),
        edits: vec![FileEdit { key: None, path: Some(toml), create: !exists, original, edits: vec![edit] }],
        resolves: Some((diag_range, f.kind.verdict().as_str())),
        preferred: false,
    })
}

/// A place to insert a barrier: before zero-based `line`, indented like `indent`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Place {
    line: u32,
    indent: String,
}

fn barrier_fix(an: &Analysis, fa: &FileAnalysis, kr: &KernelResult, f: &Finding, cancel: &CancelToken) -> Option<Fix> {
    let p = primary_access(fa, f);
    let later = fa.loc_line(&f.accesses[p].location)?;
    let earlier = fa.loc_line(&f.accesses[1 - p].location)?;
    let old_lines: BTreeSet<u32> = [later, earlier].into();
    let target = f.accesses[0].target.clone();
    let divergences = |r: &check::KernelReport| r.findings.iter().filter(|g| g.kind == FindingKind::BarrierDivergence).count();
    let old_div = divergences(&kr.report);
    let (stmt, places) = match fa.kind {
        FileKind::Cu => ("__syncthreads();", cu_places(fa, kr, later)),
        FileKind::Ptx => ("bar.sync 0;", ptx_places(fa, kr, later, earlier)),
    };
    let diag_range = fa.loc_range(&f.accesses[p].location)?;
    let mut tried = BTreeSet::new();
    let started = std::time::Instant::now();
    for place in places.into_iter().filter(|pl| tried.insert(pl.line)).take(MAX_BARRIER_CANDIDATES) {
        if cancel.is_cancelled() || started.elapsed() > BARRIER_BUDGET {
            return None;
        }
        let at = fa.index.line_range(&fa.text, place.line).start;
        let insert = format!("{}{stmt}\n", place.indent);
        let edited: Arc<str> = format!("{}{insert}{}", &fa.text[..at], &fa.text[at..]).into();
        let Some(efa) = analyse::recheck_text(an, fa, edited, &kr.name, cancel) else { continue };
        let Some(new) = efa.kernels.iter().find(|k| k.name == kr.name) else { continue };
        let r = &new.report;
        if r.verdict == check::Verdict::Error || divergences(r) > old_div {
            continue;
        }
        let back = |l: u32| if l > place.line { l - 1 } else { l };
        let same_race = r.findings.iter().any(|g| {
            g.kind == FindingKind::Race
                && g.accesses.first().is_some_and(|a| a.target == target)
                && g.accesses.iter().filter_map(|a| efa.loc_line(&a.location)).map(back).collect::<BTreeSet<_>>() == old_lines
        });
        if same_race {
            continue;
        }
        return Some(Fix {
            title: format!("Insert `{stmt}` before line {} (re-checked: the race is gone)", place.line + 1),
            edits: vec![FileEdit {
                key: Some(fa.key.clone()),
                path: fa.path.clone(),
                create: false,
                original: fa.text.clone(),
                edits: vec![TextEdit { range: at..at, new_text: insert }],
            }],
            resolves: Some((diag_range, "race")),
            preferred: true,
        });
    }
    None
}

fn indent_of_line(fa: &FileAnalysis, line: u32) -> String {
    let r = fa.index.line_range(&fa.text, line);
    cu::indentation(&fa.text, r.start).to_string()
}

/// In CUDA: before the later access's line; then, for each block around it (innermost first,
/// inside the kernel body), right after the block, at the start of its body, and before it.
fn cu_places(fa: &FileAnalysis, kr: &KernelResult, later: u32) -> Vec<Place> {
    let mut out = vec![Place { line: later, indent: indent_of_line(fa, later) }];
    let masked = cu::mask(&fa.text);
    let r = fa.line_range(later);
    for (open, close) in cu::enclosing_blocks(&masked, r.start) {
        if open < kr.extent.start || close + 1 >= kr.extent.end {
            break; // the kernel body itself (or outside it)
        }
        let (open_line, close_line) = (fa.line_of(open), fa.line_of(close));
        let indent = indent_of_line(fa, open_line);
        let close_alone = masked[close + 1..cu::line_around(&masked, close).end].trim().is_empty();
        if close_alone {
            out.push(Place { line: close_line + 1, indent: indent.clone() });
        }
        if open_line + 1 < close_line {
            out.push(Place { line: open_line + 1, indent: indent_of_line(fa, open_line + 1) });
        }
        out.push(Place { line: open_line, indent });
    }
    out
}

/// In PTX: before the later access, before the earlier one, then after labels and before
/// branches of the kernel, nearest first.
fn ptx_places(fa: &FileAnalysis, kr: &KernelResult, later: u32, earlier: u32) -> Vec<Place> {
    let indent = |l: u32| {
        let s = indent_of_line(fa, l);
        if s.is_empty() {
            "\t".to_string()
        } else {
            s
        }
    };
    let mut out = vec![Place { line: later, indent: indent(later) }, Place { line: earlier, indent: indent(earlier) }];
    let (first, last) = (fa.line_of(kr.func_span.start as usize), fa.line_of(kr.func_span.end as usize));
    let mut others = Vec::new();
    for l in first..=last {
        let t = fa.text[fa.index.line_range(&fa.text, l)].trim();
        let code = t.split("//").next().unwrap_or("").trim();
        if code.ends_with(':') && !code.starts_with('.') {
            others.push(Place { line: l + 1, indent: indent(l + 1) });
        } else if code.split_whitespace().any(|w| w == "bra" || w.starts_with("bra.")) {
            others.push(Place { line: l, indent: indent(l) });
        }
    }
    others.sort_by_key(|p| (p.line as i64 - later as i64).abs());
    out.extend(others);
    out
}

/// A TOML key, quoted when it is not a bare key.
fn toml_key(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        s.to_string()
    } else {
        format!("{s:?}")
    }
}

/// `ld.global.nc.f32` → `f32`: the element type of an access instruction, as a spec dtype.
fn dtype_of(inst_text: &str) -> Option<&'static str> {
    let opcode = inst_text.split_whitespace().find(|w| !w.starts_with('@'))?;
    let ty = opcode.rsplit('.').next()?;
    Some(match ty {
        "f32" => "f32",
        "f64" => "f64",
        "f16" | "b16" | "f16x2" => "f16",
        "bf16" => "bf16",
        "s8" => "i8",
        "u8" | "b8" => "u8",
        "s16" => "i16",
        "u16" => "u16",
        "s32" => "i32",
        "u32" | "b32" => "u32",
        "s64" => "i64",
        "u64" | "b64" => "u64",
        _ => return None,
    })
}

/// The `[kernel.NAME]` table for a kernel: placeholders for the launch, and one entry per
/// parameter, buffers with a dtype guessed from how the kernel loads and stores them.
pub(crate) fn interface_stub(fa: &FileAnalysis, kr: &KernelResult) -> Option<String> {
    let k = kr.model()?;
    let lifted = kr.lifted()?;
    let mut dtypes: BTreeMap<Base, BTreeMap<&'static str, usize>> = BTreeMap::new();
    for a in &lifted.lifted.accesses {
        if let Some(b @ (Base::Param(_) | Base::Field { .. })) = a.base {
            let text = fa.ptx.get(a.span.range()).unwrap_or("");
            let counts = dtypes.entry(b).or_default();
            if let Some(d) = dtype_of(text) {
                *counts.entry(d).or_default() += 1;
            }
        }
    }
    let name = toml_key(&kr.name);
    let block = k.reqntid.map_or_else(|| "[256, 1, 1]".to_string(), |b| format!("[{}, {}, {}]", b[0], b[1], b[2]));
    let mut s = String::new();
    let _ = writeln!(s, "[kernel.{name}]");
    let _ = writeln!(s, "grid = [1, 1, 1]  # placeholder: blocks per grid");
    let _ = writeln!(s, "block = {block}  # placeholder: threads per block");
    if k.params.is_empty() {
        return Some(s);
    }
    let _ = writeln!(s, "[kernel.{name}.params]");
    let is_float = |ty: &str| ty.starts_with(".f");
    let len_param = (0..k.params.len())
        .find(|&i| !dtypes.contains_key(&Base::Param(i as u32)) && !k.params[i].is_aggregate() && !is_float(&k.params[i].ty))
        .map(|i| kr.param_name(i));
    let guessed = |counts: &BTreeMap<&'static str, usize>| counts.iter().max_by_key(|(d, n)| (**n, d.starts_with('f'))).map_or("f32", |(d, _)| *d);
    let len = len_param.as_ref().map_or_else(|| "1024".to_string(), |n| format!("{n:?}"));
    for (i, p) in k.params.iter().enumerate() {
        let pname = toml_key(&kr.param_name(i));
        if p.is_aggregate() {
            // A struct passed by value: the fields the kernel reads, by name where the .cu
            // defines the struct, else by byte offset.
            for offset in (0..p.bytes).filter(|&offset| lifted.lifted.exprs.find_var(model::expr::Sym::Param { index: i as u32, offset }).is_some()) {
                let name = kr.field_name(i, offset);
                let key = toml_key(&name);
                let by_name = if spec::field_key(&name).is_some() { format!(" (or `{}.FIELD` by name)", kr.param_name(i)) } else { String::new() };
                match dtypes.get(&Base::Field { param: i as u32, offset }) {
                    Some(counts) => {
                        let dtype = guessed(counts);
                        let _ = writeln!(
                            s,
                            "{key} = {{ dtype = \"{dtype}\", len = {len} }}  # a pointer in the struct: the buffer it points to{by_name}; check the length"
                        );
                    }
                    None => {
                        let _ = writeln!(s, "{key} = {{ value = 1024 }}  # placeholder: a field of the struct passed by value{by_name}");
                    }
                }
            }
            continue;
        }
        match dtypes.get(&Base::Param(i as u32)) {
            Some(counts) => {
                let dtype = guessed(counts);
                let _ = writeln!(s, "{pname} = {{ dtype = \"{dtype}\", len = {len} }}  # guessed from its loads and stores: check the length");
            }
            None if is_float(&p.ty) => {
                let _ = writeln!(s, "{pname} = {{ value = 1.0 }}  # placeholder");
            }
            None => {
                let _ = writeln!(s, "{pname} = {{ value = 1024 }}  # placeholder (or {{ range = [lo, hi] }})");
            }
        }
    }
    Some(s)
}

fn stub_fix(fa: &FileAnalysis, kr: &KernelResult) -> Option<Fix> {
    let stub = interface_stub(fa, kr)?;
    let (path, create, original): (PathBuf, bool, Arc<str>) = match &fa.interface_path {
        Some(p) if p.is_file() => (p.clone(), false, std::fs::read_to_string(p).ok()?.into()),
        Some(p) => (p.clone(), true, "".into()),
        None => (fa.path.as_deref()?.parent()?.join("lark.toml"), true, "".into()),
    };
    let mut new_text = String::new();
    if !original.is_empty() {
        if !original.ends_with('\n') {
            new_text.push('\n');
        }
        new_text.push('\n');
    }
    new_text.push_str(&stub);
    let end = original.len();
    let file = path.file_name().map_or_else(|| "lark.toml".into(), |n| n.to_string_lossy().into_owned());
    // With a finding that needs an undeclared launch, the stub is the way to declare it.
    let title = if kr.report.findings.iter().any(|f| f.assumed_launch.is_some()) {
        format!("Declare the launch of `{}` in {file} (the warning needs a launch nobody declared)", kr.source_name)
    } else if kr.report.findings.iter().any(|f| f.assumed_scalars.is_some()) {
        format!("Declare the scalar parameters of `{}` in {file} (the warning needs values nobody declared)", kr.source_name)
    } else {
        format!("Add an interface stub for `{}` to {file}", kr.source_name)
    };
    Some(Fix {
        title,
        edits: vec![FileEdit { key: None, path: Some(path), create, original, edits: vec![TextEdit { range: end..end, new_text }] }],
        resolves: None,
        preferred: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_edit_turns_the_original_into_the_edited_text() {
        for (a, b) in
            [("x = { len = 8 }\n", "x = { len = 8, assume = [\"injective\"] }\n"), ("", "[k]\n"), ("aé b", "aé c b"), ("same", "same"), ("aaa", "aaaa")]
        {
            let e = single_edit(a, b);
            let mut out = a.to_string();
            out.replace_range(e.range.clone(), &e.new_text);
            assert_eq!(out, b);
        }
        assert_eq!(single_edit("x = { len = 8 }", "x = { len = 8, y }").range, 13..13);
    }

    #[test]
    fn reads_dtypes_from_access_opcodes() {
        assert_eq!(dtype_of("ld.global.nc.f32 \t%f1, [%rd4];"), Some("f32"));
        assert_eq!(dtype_of("@%p1 st.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};"), Some("f32"));
        assert_eq!(dtype_of("atom.global.add.u32 %r1, [%rd2], 1;"), Some("u32"));
        assert_eq!(dtype_of("ld.global.s8 %rs1, [%rd2];"), Some("i8"));
        assert_eq!(toml_key("_Z9block_maxILi256EEvPKfPfi"), "_Z9block_maxILi256EEvPKfPfi");
        assert_eq!(toml_key("a.b"), "\"a.b\"");
    }
}
