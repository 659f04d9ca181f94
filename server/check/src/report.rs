//! Verdicts and findings as plain data: what the CLI prints, the language server shows and the
//! tests assert. Field names are part of the JSON contract.

use crate::query::ThreadId;
use crate::witness::Witness;
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
    /// An output element that differs from the reference's.
    Mismatch,
}

impl FindingKind {
    /// Which finding names the kernel's verdict when it has several. An out-of-bounds access
    /// comes first: what it reads is undefined, so races and divergence that follow from the
    /// value read (an index read past its buffer's contents, say) may be its consequences, never
    /// the other way round; a mismatch is only looked for in kernels free of the others.
    pub fn precedence(self) -> u8 {
        match self {
            FindingKind::OutOfBounds => 0,
            FindingKind::BarrierDivergence => 1,
            FindingKind::Race => 2,
            FindingKind::Mismatch => 3,
        }
    }

    pub fn verdict(self) -> Verdict {
        match self {
            FindingKind::Race => Verdict::Race,
            FindingKind::BarrierDivergence => Verdict::BarrierDivergence,
            FindingKind::OutOfBounds => Verdict::OutOfBounds,
            FindingKind::Mismatch => Verdict::Mismatch,
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
    /// For races both accesses; for out-of-bounds the access; for divergence empty.
    pub accesses: Vec<AccessReport>,
    pub threads: Vec<ThreadId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<AddressReport>,
    /// For barrier divergence: the barrier (or warp collective).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub barrier: Option<Location>,
    /// For barrier divergence: what the threads that do not arrive do instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence: Option<Divergence>,
    /// Values read from memory that the counterexample relies on (`slot_mapping[0] = 1023`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<InputValue>,
    /// For a mismatch: the output element, the two values and expressions, and the inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<Box<MismatchReport>>,
    /// Launch geometry and scalar parameter values of the counterexample, by name.
    pub launch: LaunchReport,
    /// The counterexample as the engine found it and the replay confirmed it.
    pub witness: Witness,
    /// Whether the reference interpreter reproduced it.
    pub replayed: bool,
    /// Set when the finding needs a launch nobody declared and does not occur at the common
    /// block sizes (see `check::launch_confirm`): what was tried. Such a finding is a warning,
    /// and does not name the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assumed_launch: Option<String>,
    /// Set when the finding needs values of scalar parameters nobody declared and does not
    /// occur at an ordinary value (see `check::scalar_confirm`): what was tried. Like
    /// `assumed_launch`, such a finding is a warning and leaves the kernel uncertified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assumed_scalars: Option<String>,
    /// Set for a write-write race whose writes store the same value (see
    /// `check::replay::same_value_writes`): why it is tolerated. Such a finding is a warning
    /// and does not name the verdict, as in GPUVerify; `strict_races` reports it as a race.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub benign: Option<String>,
    /// For a finding the replay showed with filled buffers and not with zeros: the input
    /// buffers whose filled contents it needs (each left at zeros alone, it is gone), so the
    /// message can say which inputs steer it when the accesses' own addresses do not read them
    /// (not looked for when the witness sets input values: `inputs` names those).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contents_needed: Vec<String>,
}

impl Finding {
    /// A warning that leaves the verdict to the other findings: it needs an undeclared launch,
    /// or it is a benign race.
    pub fn is_warning(&self) -> bool {
        self.needs_undeclared_facts() || self.benign.is_some()
    }

    /// Whether the finding needs a launch or scalar values nobody declared.
    pub fn needs_undeclared_facts(&self) -> bool {
        self.assumed_launch.is_some() || self.assumed_scalars.is_some()
    }

    /// The source lines the finding names (its accesses', its barrier's), sorted.
    pub fn lines(&self) -> Vec<u32> {
        let mut lines: Vec<u32> = self.accesses.iter().map(|a| a.location.line).chain(self.barrier.iter().map(|b| b.line)).collect();
        lines.sort_unstable();
        lines.dedup();
        lines
    }
}

/// A kernel output element that differs from the reference, on concrete inputs (replayed in the
/// interpreter).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MismatchReport {
    /// The kernel buffer and the reference output it holds.
    pub buffer: String,
    pub output: usize,
    /// The element's index in the reference output (row-major dimensions).
    pub index: Vec<usize>,
    /// The element's index in the kernel buffer.
    pub element: u64,
    pub expected: String,
    pub actual: String,
    /// What the element should equal and what the kernel computes, over the inputs. The
    /// kernel's form is absent where it is not known for this input (a kernel that branches on
    /// input values, refuted on another path than the one its form was derived on).
    pub expected_expr: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_expr: Option<String>,
    /// The shape (scalar parameter values) of the counterexample.
    pub shape: BTreeMap<String, i128>,
    /// The inputs of the counterexample.
    pub inputs: Vec<InputSample>,
    /// What the interface may be missing (an output the kernel accumulates into, which the
    /// caller may zero first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The contents of one input buffer of a counterexample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InputSample {
    pub buffer: String,
    /// How the values were drawn (`small integers in [-3, 3] (seed 1)`).
    pub drawn: String,
    pub len: u64,
    /// The first values.
    pub values: Vec<String>,
}

/// What the equivalence check covered, per shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EquivalenceSummary {
    /// The reference file and function.
    pub reference: String,
    pub shapes: Vec<ShapeSummary>,
    /// Idealisations applied (casts as identity, approximate instructions as ideal functions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
    /// Per store instruction, the value it writes in one thread, as a formula over the inputs
    /// (for hovers, and the facts the Lean segments state).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stores: Vec<StoreFormula>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeSummary {
    pub scalars: BTreeMap<String, i128>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// `verified`, `mismatch` or `uncertified`.
    pub status: Verdict,
    pub outputs: usize,
    pub millis: f64,
}

/// The value one store writes, for one thread and shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoreFormula {
    pub location: Location,
    pub thread: ThreadId,
    /// What is written: `s[3]`, `out[0, 5]`.
    pub target: String,
    pub formula: String,
    pub scalars: BTreeMap<String, i128>,
}

/// A loaded value a counterexample relies on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InputValue {
    pub buffer: String,
    pub element: u64,
    pub value: i64,
    /// The interface fixes the buffer's contents: this value is what it declares, not one the
    /// engine chose.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub declared: bool,
}

/// How the threads of a divergence disagree.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Divergence {
    /// `threads[0]` waits at the barrier; `threads[1]` does something else.
    Barrier { other: Whereabouts },
    /// The member mask of a warp collective names `lane` of `warp`, which does not arrive.
    Warp { warp: u32, mask: u32, lane: u32, other: Whereabouts },
    /// `lane` of `warp` runs a warp collective whose member mask does not name it, which the
    /// PTX ISA leaves undefined (`__shfl_xor_sync(0xffff, ...)` run by all 32 lanes).
    OutsideMask { warp: u32, mask: u32, lane: u32 },
}

/// Where a thread is instead of at the barrier or collective.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Whereabouts {
    Exited,
    /// Waiting at another barrier (or the same one in another iteration).
    AtBarrier {
        location: Location,
    },
    AtCollective {
        location: Location,
    },
    /// The lane names no thread of the block (a partial last warp).
    NoSuchThread,
    /// Never reaches it.
    DoesNotArrive,
}

#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct LaunchReport {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub params: BTreeMap<String, i64>,
}

/// Which question a check could not settle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Question {
    Race,
    Barrier,
    WarpCollective,
    Bounds,
}

/// Why part of a kernel is uncertified. Each variant carries what the message needs, so
/// messages are rendered at the output edge ([`crate::render`]) and tests match the variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// An instruction the model does not understand.
    UnsupportedInstruction {
        opcode: String,
        why: String,
    },
    /// An access whose address is not derived from a parameter or a declared variable.
    UntrackedAddress {
        access: &'static str,
    },
    /// The answer depends on values read from these buffers, and the interface says nothing
    /// about them.
    LoadedValues {
        question: Question,
        buffers: Vec<String>,
    },
    SolverTimeout {
        question: Question,
        millis: u64,
    },
    /// The solver failed or is missing.
    SolverFailure {
        question: Question,
        message: String,
    },
    /// The kernel's time budget ran out before this check.
    BudgetExhausted {
        question: Question,
    },
    /// The process reached its memory ceiling before this check (`LARK_MEMORY_MB`).
    MemoryExhausted {
        question: Question,
        ceiling_mb: u64,
    },
    /// The engine found a candidate the interpreter could not reproduce (the engine
    /// over-approximates here).
    Unreproduced {
        question: Question,
    },
    /// The kernel's body did not parse completely, so what was checked is not the kernel.
    IncompleteParse {
        message: String,
    },
    /// The kernel could not be lowered into the model.
    NotLowered {
        message: String,
    },
    /// A bug in LARK, caught.
    EngineError {
        message: String,
    },
    /// The reference could not be read, parsed or lowered (position in the `.py` file).
    ReferenceError {
        file: String,
        line: u32,
        column: u32,
        message: String,
    },
    /// A shape could not be checked for equivalence (its interface is incomplete, it is too
    /// large, the kernel fails on it).
    ShapeNotChecked {
        shape: String,
        why: String,
    },
    /// Something input-dependent the equivalence engine does not follow (a data-dependent
    /// address or branch, bit-level operations on input integers).
    EquivalenceUnsupported {
        shape: String,
        what: String,
    },
    /// An output element whose equality with the reference was neither proved nor refuted.
    EquivalenceNotProved {
        shape: String,
        output: String,
        kernel: String,
        reference: String,
    },
}

impl Reason {
    /// The question an undecided check was about, if the reason is about one.
    pub fn question(&self) -> Option<Question> {
        match self {
            Reason::LoadedValues { question, .. }
            | Reason::SolverTimeout { question, .. }
            | Reason::SolverFailure { question, .. }
            | Reason::BudgetExhausted { question }
            | Reason::MemoryExhausted { question, .. }
            | Reason::Unreproduced { question } => Some(*question),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Uncertified {
    #[serde(flatten)]
    pub reason: Reason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// Other places the question involves (the second access of an undecided race).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Location>,
}

impl Uncertified {
    pub fn at(reason: Reason, location: Location) -> Uncertified {
        Uncertified { reason, location: Some(location), related: vec![] }
    }
}

/// Something the user should know that does not change the verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Note {
    /// No interface entry: checked for every launch within hardware limits.
    NoInterface { kernel: String },
    /// The interface names something that is not a parameter of the kernel.
    UnmatchedParameter { name: String },
    /// The interface declares a field of a parameter (`p+16`, `p.ncols`) that cannot be placed.
    UnresolvedField { key: String, why: String },
    /// The checks covered exactly these shapes (scalar values), as the reference binding lists.
    CheckedShapes { shapes: Vec<String> },
    /// Documented defaults for a launch the interface leaves open: dimensions the kernel never
    /// reads are 1; a dimension's threads fit a signed 32-bit index.
    AssumedLaunch { facts: Vec<String> },
    /// The launch facts read from the kernel's launch site in its own `.cu` file.
    InferredLaunch { site: String, facts: Vec<String> },
    /// A race was ruled out assuming signed 32-bit index arithmetic does not overflow.
    IndexNoWrap,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelReport {
    pub name: String,
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
    pub uncertified: Vec<Uncertified>,
    /// Things the user should know that do not change the verdict (unused interface entries...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// What the equivalence check with the reference covered, when one is bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equivalence: Option<EquivalenceSummary>,
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
    /// Whether the report left a question about any of `lines` undecided (an uncertified entry
    /// at or related to one of them): a check that did so says nothing about a finding there,
    /// neither that it occurs nor that it is gone.
    pub fn leaves_undecided(&self, lines: &[u32]) -> bool {
        self.uncertified.iter().any(|u| u.location.iter().chain(&u.related).any(|l| lines.contains(&l.line)))
    }

    /// Sets the verdict from the findings and uncertified regions: the most severe finding,
    /// else `uncertified` if anything is, else `verified`.
    pub fn settle_verdict(&mut self) {
        // The same reason found by two checks (a shape neither the race check nor the
        // equivalence check could use) is said once.
        let mut seen: Vec<Uncertified> = Vec::new();
        self.uncertified.retain(|u| {
            let new = !seen.contains(u);
            if new {
                seen.push(u.clone());
            }
            new
        });
        // The finding that names the verdict comes first (the order is otherwise kept). A finding
        // that needs an undeclared launch does not name it: the kernel is then uncertified.
        self.findings.sort_by_key(|f| (f.is_warning(), f.kind.precedence()));
        let definite = self.findings.iter().find(|f| !f.is_warning());
        // A benign race leaves the verdict as it is; a finding under an assumed launch leaves
        // the kernel open.
        let open = !self.uncertified.is_empty() || self.findings.iter().any(|f| f.needs_undeclared_facts());
        self.verdict = definite.map(|f| f.kind.verdict()).unwrap_or(if open { Verdict::Uncertified } else { Verdict::Verified });
    }

    /// Like [`KernelReport::settle_verdict`], but an `error` stays an error.
    pub fn settle_verdict_keep_error(&mut self) {
        if self.verdict != Verdict::Error {
            self.settle_verdict();
        }
    }

    /// The report of a kernel that could not be checked at all (not lowered, or the engine
    /// failed): verdict `error`, with the reason.
    pub fn error(name: &str, reason: Reason, millis: f64) -> KernelReport {
        KernelReport {
            name: name.to_string(),
            verdict: Verdict::Error,
            findings: vec![],
            uncertified: vec![Uncertified { reason, location: None, related: vec![] }],
            notes: vec![],
            equivalence: None,
            stats: Stats { millis, ..Stats::default() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32) -> Location {
        Location { line, line_kind: LineKind::Cu, source: None, ptx_line: line + 100, ptx_span: [0, 0] }
    }

    /// An undecided question names its lines through its location and its related places (a
    /// race's second access); lines elsewhere, or a kernel-wide error, say nothing about them.
    #[test]
    fn a_report_leaves_undecided_the_lines_its_uncertified_entries_name() {
        let timeout = |location, related| Uncertified { reason: Reason::SolverTimeout { question: Question::Race, millis: 2000 }, location, related };
        let mut r = KernelReport::error("k", Reason::SolverTimeout { question: Question::Race, millis: 2000 }, 0.0);
        assert!(!r.leaves_undecided(&[12]), "a kernel-wide entry names no line");
        r.uncertified.push(timeout(Some(at(10)), vec![at(12)]));
        assert!(r.leaves_undecided(&[12]));
        assert!(r.leaves_undecided(&[3, 10]));
        assert!(!r.leaves_undecided(&[11]));
        assert!(!r.leaves_undecided(&[110, 112]), "source lines, not PTX lines");
    }
}
