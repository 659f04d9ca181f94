//! Verdicts and findings as plain data: what the CLI prints, the language server shows and the
//! tests assert. Field names are part of the JSON contract.

use crate::query::ThreadId;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Certified,
    Verified,
    Race,
    BarrierDivergence,
    OutOfBounds,
    Mismatch,
    Uncertified,
    Error,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Certified => "certified",
            Verdict::Verified => "verified",
            Verdict::Race => "race",
            Verdict::BarrierDivergence => "barrier_divergence",
            Verdict::OutOfBounds => "out_of_bounds",
            Verdict::Mismatch => "mismatch",
            Verdict::Uncertified => "uncertified",
            Verdict::Error => "error",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    Race,
    BarrierDivergence,
    OutOfBounds,
}

impl FindingKind {
    pub fn verdict(self) -> Verdict {
        match self {
            FindingKind::Race => Verdict::Race,
            FindingKind::BarrierDivergence => Verdict::BarrierDivergence,
            FindingKind::OutOfBounds => Verdict::OutOfBounds,
        }
    }
}

/// Whether line numbers refer to the CUDA source (through `.loc`) or to the PTX text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    Cu,
    Ptx,
}

/// A place in the sources: the reported line (CUDA when known) and the PTX position.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Location {
    pub line: u32,
    pub line_kind: LineKind,
    /// The CUDA file the line refers to, when `line_kind` is `cu`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub ptx_line: u32,
    /// Byte range of the PTX instruction.
    pub ptx_span: [u32; 2],
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AccessReport {
    /// `read`, `write` or `atomic`.
    pub kind: &'static str,
    pub space: &'static str,
    /// The array or buffer accessed.
    pub target: String,
    pub bytes: u32,
    /// Which of `threads` performs it.
    pub thread: usize,
    #[serde(flatten)]
    pub location: Location,
    /// Loop iterations (counter name → value) at the access.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub iterations: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AddressReport {
    pub space: &'static str,
    pub target: String,
    /// Byte offset into the target.
    pub offset: u64,
    /// Element index, when the element size is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<u64>,
    /// Size of the target in bytes, when known (out-of-bounds findings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// One sentence with the counterexample in it.
    pub message: String,
    /// For races both accesses; for out-of-bounds the access; for divergence empty.
    pub accesses: Vec<AccessReport>,
    pub threads: Vec<ThreadId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<AddressReport>,
    /// For barrier divergence: the barrier (or warp collective).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub barrier: Option<Location>,
    /// Launch geometry and scalar parameter values of the counterexample.
    pub launch: LaunchReport,
    /// Whether the reference interpreter reproduced it.
    pub replayed: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct LaunchReport {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub params: BTreeMap<String, i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Uncertified {
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelReport {
    pub name: String,
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
    pub uncertified: Vec<Uncertified>,
    /// Things the user should know that do not change the verdict (unused interface entries...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub stats: Stats,
}

#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct Stats {
    pub millis: f64,
    pub accesses: usize,
    pub barriers: usize,
    pub queries: u64,
    /// Checks decided by exhaustive enumeration of the (concrete) launch instead of the solver.
    pub enumerated: u64,
    /// Of `millis`, the time spent in the solver and in replaying counterexamples.
    pub solver_millis: f64,
    pub replay_millis: f64,
}

impl KernelReport {
    /// The report of a kernel that could not be checked at all (not lowered, or the engine
    /// failed): verdict `error`, with the reason.
    pub fn error(name: &str, reason: String, millis: f64) -> KernelReport {
        KernelReport {
            name: name.to_string(),
            verdict: Verdict::Error,
            findings: vec![],
            uncertified: vec![Uncertified { reason, location: None }],
            notes: vec![],
            stats: Stats { millis, ..Stats::default() },
        }
    }
}
