//! The Lean side in the editor: each kernel's generated module (`lean::obligations`), the
//! segment a line belongs to with its obligations, the uncertified regions, and the code lens
//! that counts proved obligations.
//!
//! Nothing here says "proved" for a statement Lean did not check: obligations are "unproved"
//! until a certificate exists (the agents and the certificate store come next), and the two
//! theorems LARK proves itself are marked as not yet checked unless Lean built them.

use crate::analyse::{FileAnalysis, KernelResult};
use crate::diagnostics::Diagnostic;
use crate::hover::inst_line;
use crate::{Analysis, Severity};
use ::lean::obligations::{self, Generated, Subject};
use ::lean::segment::{self, Segment};
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

/// How long evaluating the reference at the stated shape may take.
const FACTS_BUDGET: Duration = Duration::from_secs(3);

/// The kernel's Lean module (computed once per analysed kernel).
pub fn module(an: &Analysis, fa: &FileAnalysis, k: &KernelResult) -> Result<Arc<Generated>, String> {
    k.lean.get_or_init(|| generate(an, fa, k, None).map(Arc::new)).clone()
}

/// The kernel's Lean module cut along an external segmentation proposal (JSON, see
/// `lean::segment::Proposal`), validated first.
pub fn module_with_segments(an: &Analysis, fa: &FileAnalysis, k: &KernelResult, proposal: &str) -> Result<Generated, String> {
    let kernel = k.model().ok_or_else(|| format!("`{}` could not be lowered to the model", k.source_name))?;
    let segments = segment::validate(kernel, proposal).map_err(|e| format!("segmentation proposal refused: {e}"))?;
    generate(an, fa, k, Some(segments))
}

fn generate(an: &Analysis, fa: &FileAnalysis, k: &KernelResult, segments: Option<Vec<Segment>>) -> Result<Generated, String> {
    // A kernel that did not parse or compile completely would be stated without its missing part.
    if k.report.verdict == check::Verdict::Error {
        return Err(format!("`{}` did not parse or compile completely, so it has no Lean module", k.source_name));
    }
    let kernel = k.model().ok_or_else(|| format!("`{}` could not be lowered to the model, so it has no Lean module", k.source_name))?;
    let spec = k.spec.as_deref();
    let names = k.param_names.as_deref();
    let (facts, facts_missing) = match spec.and_then(|s| s.reference.as_ref().map(|r| (s, r))) {
        None => (None, None),
        Some((spec, reference)) => match an.db.inputs.reference_text(&reference.file) {
            Err(e) => (None, Some(e)),
            Ok(text) => {
                let sources = check::Sources {
                    ptx: &fa.ptx,
                    index: &fa.ptx_index,
                    cu_file: None,
                    param_names: k.param_names.clone(),
                    field_names: k.field_names.clone(),
                };
                let file = reference.file.display().to_string();
                let budget = model::budget::Budget::with_timeout(FACTS_BUDGET, an.cancel_token(&fa.key));
                let req =
                    equiv::Request { kernel, spec, source_names: names, reference_file: &file, reference_text: &text, sources: &sources, budget, solver: None };
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| equiv::facts::shape_facts(&req))) {
                    Ok(Ok(f)) => (Some(f), None),
                    Ok(Err(e)) => (None, Some(e)),
                    Err(_) => (None, Some("evaluating the reference failed (an internal error)".into())),
                }
            }
        },
    };
    let (launch, params) = obligations::interface_facts(kernel, spec, names, facts.as_ref());
    let source = fa.path.as_ref().and_then(|p| p.file_name()).map_or_else(|| fa.key.clone(), |n| n.to_string_lossy().into_owned());
    let subject = Subject { kernel, source, module: k.source_name.clone(), launch, params, facts: facts.as_ref(), facts_missing, segments };
    Ok(obligations::generate(&subject))
}

/// The byte range in `fa.text` a segment spans: the lines of its instructions in this file.
fn segment_range(fa: &FileAnalysis, kernel: &model::Kernel, s: &Segment) -> Option<Range<usize>> {
    let lines: Vec<u32> = kernel.insts().skip(s.start).take(s.stop - s.start).filter_map(|(_, _, i)| inst_line(fa, i)).collect();
    let (lo, hi) = (*lines.iter().min()?, *lines.iter().max()?);
    let first = fa.line_range(lo.checked_sub(1)?);
    let last = fa.line_range(hi.checked_sub(1)?);
    Some(first.start..last.end.max(first.start))
}

/// The segments with instructions on zero-based line `line0`, in order.
pub fn segments_at(fa: &FileAnalysis, k: &KernelResult, segments: &[Segment], line0: u32) -> Vec<usize> {
    let Some(kernel) = k.model() else { return vec![] };
    let mut out: Vec<usize> =
        kernel.insts().enumerate().filter(|(_, (_, _, i))| inst_line(fa, i) == Some(line0 + 1)).filter_map(|(n, _)| segment::segment_of(segments, n)).collect();
    out.dedup();
    out
}

/// Information-level "uncertified region" diagnostics: one per segment of each kernel the engine
/// verified, since none has a Lean certificate yet. Kernels with findings get none (the findings
/// say more), nor do kernels that are not verified. `reason(kernel)` says why a certification
/// that ran (or runs) produced none.
pub fn region_diagnostics(fa: &FileAnalysis, reason: &dyn Fn(&str) -> Option<String>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for k in fa.kernels.iter().filter(|k| k.report.verdict == check::Verdict::Verified) {
        let why = reason(&k.name).map_or_else(|| "yet".to_string(), |r| format!("({r})"));
        // Every publish computes this for every verified kernel: the model is lowered for the
        // moment and dropped, not kept by each analysis (that doubled the server's memory).
        let ranges: Vec<(Segment, Range<usize>)> =
            k.with_model(|m| segment::propose(m).into_iter().filter_map(|s| segment_range(fa, m, &s).map(|r| (s, r))).collect()).unwrap_or_default();
        for (s, range) in ranges {
            out.push(Diagnostic {
                range,
                severity: Severity::Information,
                code: "uncertified-region",
                message: format!(
                    "uncertified region: segment `{}` ({}) of `{}` is verified by LARK's engine but has no Lean certificate {why}",
                    s.name, s.title, k.source_name
                ),
                related: vec![],
                data: None,
                kernel: Some(k.name.clone()),
            });
        }
    }
    out
}

/// The Lean part of a hover on a line: its segments, their obligations and their status.
pub fn hover_section(an: &Analysis, fa: &FileAnalysis, offset: usize) -> Option<String> {
    let k = fa.kernel_at(offset)?;
    let line0 = fa.line_of(offset);
    let g = match module(an, fa, k) {
        Ok(g) => g,
        Err(e) => return Some(format!("\nLean: {e}\n")),
    };
    let here = segments_at(fa, k, &g.segments, line0);
    if here.is_empty() {
        return None;
    }
    let names: Vec<String> = here.iter().map(|s| format!("`{}` ({})", g.segments[*s].name, g.segments[*s].title)).collect();
    let total = g.open_obligations().count();
    let mut md = format!("\n**Lean** (`{}`, 0/{total} obligations proved): line {} is in segment {}.\n", g.module, line0 + 1, names.join(" and "));
    if total == 0 {
        let _ = writeln!(md, "\nNo obligation is stated: {}.", g.notes.join("; "));
        return Some(md);
    }
    for o in g.obligations.iter().filter(|o| o.segment.is_some_and(|s| here.contains(&s))) {
        let status = if o.kind.required() { "**unproved** (no certificate)" } else { "intermediate statement, unproved" };
        let _ = write!(md, "\n- `{}` — {status}: {}\n\n```lean\n{}\n```\n", o.name, o.summary, o.statement);
    }
    let shared: Vec<String> = g.open_obligations().filter(|o| o.segment.is_none()).map(|o| format!("`{}`", o.name)).collect();
    let _ = writeln!(md, "\n- {} — **unproved** (no certificate): the properties every segment shares.", shared.join(", "));
    md.push_str("- `correct`, the main statement, follows from the obligations by `correct_of_obligations` (LARK's proof in the module; Lean checks it when the module is built).\n");
    Some(md)
}

/// The certificate on disk (under the workspace's `.lark/certificates`) for exactly this
/// kernel's PTX, interface, reference and library, if there is one.
pub fn certificate_on_disk(an: &Analysis, fa: &FileAnalysis, k: &KernelResult) -> Option<std::path::PathBuf> {
    let root = an.settings().workspace_root.clone().or_else(|| fa.path.as_ref()?.parent().map(std::path::Path::to_path_buf))?;
    let store = agent::certificate::store_dir(&root);
    if !store.is_dir() {
        return None;
    }
    let reference = k.spec.as_ref().and_then(|s| s.reference.as_ref()).map(|r| r.file.clone());
    let inputs = agent::certificate::inputs(&fa.ptx, fa.interface_path.as_deref(), reference.as_deref());
    agent::certificate::find(&store, &k.name, &inputs)
}

/// The code lens title: how many obligations have a Lean certificate, or what became of the
/// certificate on disk. `recheck(dir)` says what a recheck of it found (`None`: not yet); a
/// certificate is shown as certified only through it, never because a directory exists.
pub fn lens_title(an: &Analysis, fa: &FileAnalysis, k: &KernelResult, recheck: &dyn Fn(&std::path::Path) -> Option<String>) -> Option<String> {
    if let Some(dir) = certificate_on_disk(an, fa, k) {
        return Some(recheck(&dir).unwrap_or_else(|| "Lean certificate on disk: not rechecked yet".into()));
    }
    let g = module(an, fa, k).ok()?;
    let total = g.open_obligations().count();
    (total > 0).then(|| format!("0/{total} Lean obligations proved"))
}
