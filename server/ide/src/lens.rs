//! Code lenses above each kernel: its verdict and how long the check took, and the model.

use crate::analyse::FileAnalysis;
use crate::hover::format_millis;
use std::ops::Range;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LensCommand {
    /// Drop the file's cached results and check it again.
    Recheck,
    /// Show the lifted model of the file's kernels.
    ShowModel,
    /// Show the kernel's Lean module (its obligations).
    ShowLean,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Lens {
    pub range: Range<usize>,
    pub title: String,
    pub command: LensCommand,
    pub kernel: String,
}

pub fn lenses(fa: &FileAnalysis) -> Vec<Lens> {
    let mut out = Vec::new();
    for k in &fa.kernels {
        let r = &k.report;
        let title = format!("{} · {}", r.verdict.as_str(), format_millis(r.stats.millis));
        out.push(Lens { range: k.header.clone(), title, command: LensCommand::Recheck, kernel: k.name.clone() });
        if k.report.verdict != check::Verdict::Error {
            out.push(Lens { range: k.header.clone(), title: "show model".into(), command: LensCommand::ShowModel, kernel: k.name.clone() });
        }
    }
    out
}
