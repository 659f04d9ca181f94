//! Diagnostics of an analysed file: parse and compile errors, one error per finding (a race on
//! one access, pointing at the other), uncertified regions as information. A finding that needs
//! particular values in an index buffer the interface says nothing about is a warning: it is a
//! bug only if those values can occur, which the user knows and LARK does not. A first look's
//! findings (see `crate::quick`) are warnings that name the launch they were found at.

use crate::analyse::{FileAnalysis, KernelResult};
use crate::Severity;
use check::{Finding, FindingKind};
use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub range: Range<usize>,
    pub severity: Severity,
    /// The verdict word: `race`, `barrier_divergence`, `out_of_bounds`, `uncertified`, `error`.
    pub code: &'static str,
    pub message: String,
    /// Other places in the same file (the second access of a race).
    pub related: Vec<Related>,
    /// The finding as JSON (with a `kernel` field), for findings.
    pub data: Option<serde_json::Value>,
    pub kernel: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Related {
    pub range: Range<usize>,
    pub message: String,
}

pub fn diagnostics(fa: &FileAnalysis) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = fa
        .problems
        .iter()
        .map(|p| Diagnostic {
            range: p.range.clone(),
            severity: p.severity,
            code: "error",
            message: p.message.clone(),
            related: vec![],
            data: None,
            kernel: None,
        })
        .collect();
    for k in &fa.kernels {
        if let Some(launch) = &k.first_look {
            out.extend(k.report.findings.iter().map(|f| preliminary(finding(fa, k, f), launch)));
            continue;
        }
        for f in &k.report.findings {
            out.push(finding(fa, k, f));
        }
        for u in &k.report.uncertified {
            if k.report.verdict == check::Verdict::Error {
                continue; // already a problem of the file
            }
            let range = u.location.as_ref().and_then(|l| fa.loc_range(l)).unwrap_or_else(|| k.header.clone());
            let related =
                u.related.iter().filter_map(|l| Some(Related { range: fa.loc_range(l)?, message: format!("the other access, at line {}", l.line) })).collect();
            let d = Diagnostic {
                range,
                severity: Severity::Information,
                code: "uncertified",
                message: check::render::uncertified_message(u),
                related,
                data: None,
                kernel: Some(k.name.clone()),
            };
            if !out.iter().any(|o| o.range == d.range && o.message == d.message) {
                out.push(d);
            }
        }
    }
    out
}

/// A finding of a first look: a warning whatever it is, since only the general check decides
/// whether the kernel is wrong, naming the launch it was found at; `data.preliminary` says so to
/// clients.
fn preliminary(mut d: Diagnostic, launch: &crate::FirstLookLaunch) -> Diagnostic {
    d.severity = d.severity.max(Severity::Warning);
    d.message.push_str(&launch.message_suffix());
    if let Some(serde_json::Value::Object(m)) = &mut d.data {
        m.insert("preliminary".into(), serde_json::Value::Bool(true));
    }
    d
}

/// The line of the file an access of a finding is on (for ordering).
fn line_key(fa: &FileAnalysis, f: &Finding, i: usize) -> (u32, u32) {
    let l = &f.accesses[i].location;
    (fa.loc_line(l).unwrap_or(0), l.ptx_line)
}

/// The access a race is reported on: the later one in the file (where a barrier would go
/// before); the other becomes related information.
pub(crate) fn primary_access(fa: &FileAnalysis, f: &Finding) -> usize {
    if f.accesses.len() == 2 && line_key(fa, f, 1) > line_key(fa, f, 0) {
        1
    } else {
        0
    }
}

fn finding(fa: &FileAnalysis, k: &KernelResult, f: &Finding) -> Diagnostic {
    let code = f.kind.verdict().as_str();
    let mut related = Vec::new();
    let range = match f.kind {
        FindingKind::BarrierDivergence => f.barrier.as_ref().and_then(|l| fa.loc_range(l)),
        // A mismatch is on the store that wrote the wrong element (its one access).
        FindingKind::Race | FindingKind::OutOfBounds | FindingKind::Mismatch if !f.accesses.is_empty() => {
            let p = primary_access(fa, f);
            for (i, a) in f.accesses.iter().enumerate().filter(|(i, _)| *i != p) {
                if let Some(r) = fa.loc_range(&a.location) {
                    let thread = f.threads.get(a.thread).map_or_else(String::new, |t| format!(" by thread {t}"));
                    let iters = if a.iterations.is_empty() {
                        String::new()
                    } else {
                        format!(" in iteration {}", a.iterations.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "))
                    };
                    let _ = i;
                    related.push(Related {
                        range: r,
                        message: format!("the other access: {} of {}{thread} at line {}{iters}", a.kind, a.target, a.location.line),
                    });
                }
            }
            fa.loc_range(&f.accesses[p].location)
        }
        _ => None,
    };
    let mut data = serde_json::to_value(f).unwrap_or(serde_json::Value::Null);
    if let serde_json::Value::Object(m) = &mut data {
        m.insert("kernel".into(), serde_json::Value::String(k.name.clone()));
    }
    Diagnostic {
        range: range.unwrap_or_else(|| k.header.clone()),
        severity: finding_severity(f),
        code,
        message: check::render::finding_message(f),
        related,
        data: Some(data),
        kernel: Some(k.name.clone()),
    }
}

/// An error, or a warning for a finding that relies on values the engine chose for an index
/// buffer whose contents the interface does not declare.
pub(crate) fn finding_severity(f: &Finding) -> Severity {
    if f.inputs.iter().any(|i| !i.declared) || f.is_warning() {
        Severity::Warning
    } else {
        Severity::Error
    }
}
