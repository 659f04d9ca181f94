//! Segmentation: a kernel's flat instruction list (every block's instructions, block after block
//! in block-id order, as `Lark.Kernel.flatInsts` defines it) cut into named, contiguous segments.
//!
//! [`propose`] cuts after every barrier and where the kernel enters or leaves a loop, then names
//! each piece after what it does (loading to shared memory, a reduction loop, the final store).
//! [`validate`] checks a segmentation proposed from outside (an agent's JSON) before it is used:
//! non-empty segments, in order, contiguous, covering, with every cut at a sound point — the start
//! of a basic block or right after a barrier — so that a segment never splits a straight-line
//! run of instructions the engine reasons about as one.

use model::cfg::Cfg;
use model::ops::{Op, Space};
use model::Kernel;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A named range `[start, stop)` of the kernel's flat instruction list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// A Lean identifier: `s0_setup`, `s2_reduction_loop`.
    pub name: String,
    /// What it does, for people.
    pub title: String,
    pub start: usize,
    pub stop: usize,
    /// The kernel's source lines (1-based, `.cu` or `.ptx` as the instructions carry them) its
    /// instructions come from, first and last; `None` when no instruction has a line.
    pub lines: Option<(u32, u32)>,
    /// Byte range of its instructions in the PTX text.
    pub ptx_span: (usize, usize),
}

/// Where each block's instructions start in the flat list, and its length.
pub fn flat_len(k: &Kernel) -> usize {
    k.cfg.blocks.iter().map(|b| b.insts.len()).sum()
}

/// The instruction at a flat index, with its block.
fn flat_insts(k: &Kernel) -> Vec<(u32, &model::ops::Inst)> {
    k.cfg.blocks.iter().enumerate().flat_map(|(b, blk)| blk.insts.iter().map(move |i| (b as u32, i))).collect()
}

/// The flat index of the first instruction of each block.
pub fn block_starts(k: &Kernel) -> Vec<usize> {
    let mut at = 0;
    k.cfg
        .blocks
        .iter()
        .map(|b| {
            let start = at;
            at += b.insts.len();
            start
        })
        .collect()
}

/// The flat index of instruction `idx` of block `block` (a `model::interp::InstRef`).
pub fn flat_index(k: &Kernel, block: u32, idx: usize) -> usize {
    block_starts(k).get(block as usize).copied().unwrap_or(0) + idx
}

fn is_barrier(op: &Op) -> bool {
    matches!(op, Op::Bar { .. } | Op::BarRed { .. })
}

/// The flat index of the last barrier inside a segment: where the state it leaves in shared
/// memory is observed.
pub fn last_barrier(k: &Kernel, s: &Segment) -> Option<usize> {
    let insts = flat_insts(k);
    (s.start..s.stop.min(insts.len())).rev().find(|&i| is_barrier(&insts[i].1.op))
}

/// The outermost loop a block is in.
fn outer_loop(cfg: &Cfg, b: u32) -> Option<u32> {
    let mut l = cfg.loop_of.get(b as usize).copied().flatten()?;
    while let Some(p) = cfg.loops[l as usize].parent {
        l = p;
    }
    Some(l)
}

/// The points where a cut is sound: block starts and the instructions right after a barrier.
pub fn sound_cuts(k: &Kernel) -> Vec<usize> {
    let mut cuts: Vec<usize> = block_starts(k);
    cuts.extend(flat_insts(k).iter().enumerate().filter(|(_, (_, i))| is_barrier(&i.op)).map(|(n, _)| n + 1));
    cuts.push(flat_len(k));
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// LARK's segmentation: cut after barriers and at loop boundaries, named by content.
pub fn propose(k: &Kernel) -> Vec<Segment> {
    let insts = flat_insts(k);
    let n = insts.len();
    let mut cuts = vec![0, n];
    for (i, (_, inst)) in insts.iter().enumerate() {
        if is_barrier(&inst.op) {
            cuts.push(i + 1);
        }
    }
    let starts = block_starts(k);
    for (b, start) in starts.iter().enumerate().skip(1) {
        if outer_loop(&k.cfg, b as u32) != outer_loop(&k.cfg, b as u32 - 1) {
            cuts.push(*start);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    // Pieces that repeat the same step on the same source lines (a loop the compiler unrolled,
    // each copy ending at a barrier) are one segment: fewer cuts is always sound.
    let mut ranges: Vec<(usize, usize, usize)> = Vec::new(); // (start, stop, copies)
    let mut last: Option<Segment> = None;
    for w in cuts.windows(2).filter(|w| w[0] < w[1]) {
        let piece = describe(k, &insts, 0, w[0], w[1]);
        match (&last, ranges.last_mut()) {
            (Some(prev), Some(r)) if prev.name == piece.name && prev.title == piece.title && prev.lines == piece.lines && piece.lines.is_some() => {
                r.1 = w[1];
                r.2 += 1;
            }
            _ => ranges.push((w[0], w[1], 1)),
        }
        last = Some(piece);
    }
    ranges
        .into_iter()
        .enumerate()
        .map(|(n, (start, stop, copies))| {
            let mut s = describe(k, &insts, n, start, stop);
            if copies > 1 && s.name.ends_with("_shared_exchange") {
                // Repeated exchanges through shared memory with barriers: a tree reduction.
                s.name = format!("s{n}_tree_reduction");
                s.title = format!("tree reduction through shared memory ({copies} unrolled steps, a barrier after each)");
            } else if copies > 1 {
                s.title = format!("{} ({copies} unrolled steps)", s.title);
            }
            s
        })
        .collect()
}

/// A segment over `[start, stop)`, named after what its instructions do.
fn describe(k: &Kernel, insts: &[(u32, &model::ops::Inst)], n: usize, start: usize, stop: usize) -> Segment {
    let part = &insts[start..stop];
    let in_loop = part.iter().all(|(b, _)| k.cfg.loop_of.get(*b as usize).copied().flatten().is_some());
    let has = |f: &dyn Fn(&Op) -> bool| part.iter().any(|(_, i)| f(&i.op));
    let stores_to = |s: Space| has(&|op| matches!(op, Op::St { space, .. } if *space == s));
    let loads_from = |s: Space| has(&|op| matches!(op, Op::Ld { space, .. } if *space == s));
    let shuffles = has(&|op| matches!(op, Op::Shfl { .. }));
    let floats = has(&|op| matches!(op, Op::Float { .. }));
    let atomics = has(&|op| matches!(op, Op::Atom { .. }));
    // The first that applies names the segment: what it leaves behind matters most.
    let (slug, title) = if shuffles {
        if in_loop {
            ("warp_reduction", "warp reduction (shuffles in a loop)")
        } else {
            ("warp_exchange", "warp exchange (shuffles)")
        }
    } else if stores_to(Space::Global) {
        if in_loop {
            ("store_loop", "loop computing and storing outputs")
        } else {
            ("store", "computation and store to global memory")
        }
    } else if atomics {
        ("atomics", "atomic updates")
    } else if stores_to(Space::Shared) && loads_from(Space::Global) {
        if in_loop {
            ("load_loop", "loop loading a tile to shared memory")
        } else {
            ("load_to_shared", "load to shared memory")
        }
    } else if stores_to(Space::Shared) {
        ("shared_exchange", "exchange through shared memory")
    } else if floats && in_loop {
        ("reduction_loop", "reduction loop")
    } else if floats {
        ("compute", "computation")
    } else if in_loop {
        ("loop", "loop")
    } else {
        ("setup", "index and launch arithmetic")
    };
    let title = if part.last().is_some_and(|(_, i)| is_barrier(&i.op)) { format!("{title}, then a barrier") } else { title.to_string() };
    let lines: Vec<u32> = part.iter().filter_map(|(_, i)| i.line).collect();
    let spans: Vec<&ptx::Span> = part.iter().map(|(_, i)| &i.span).collect();
    Segment {
        name: format!("s{n}_{slug}"),
        title,
        start,
        stop,
        lines: lines.iter().min().zip(lines.iter().max()).map(|(a, b)| (*a, *b)),
        ptx_span: (spans.iter().map(|s| s.start as usize).min().unwrap_or(0), spans.iter().map(|s| s.end as usize).max().unwrap_or(0)),
    }
}

/// A segmentation proposed from outside LARK (an agent's JSON): ranges of the flat instruction
/// list with names and, optionally, a specification in words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    pub segments: Vec<ProposedSegment>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProposedSegment {
    pub name: String,
    pub start: usize,
    pub stop: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specification: Option<String>,
}

impl Proposal {
    /// Reads a proposal from its JSON text.
    pub fn parse(json: &str) -> Result<Proposal, SegmentError> {
        serde_json::from_str(json).map_err(|e| SegmentError::Json(e.to_string()))
    }

    /// A segmentation in the proposal format (LARK's own, to show an agent), titles as
    /// specifications.
    pub fn of_segments(segments: &[Segment]) -> Proposal {
        let segments =
            segments.iter().map(|s| ProposedSegment { name: s.name.clone(), start: s.start, stop: s.stop, specification: Some(s.title.clone()) }).collect();
        Proposal { segments }
    }
}

/// Why a proposed segmentation is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SegmentError {
    Json(String),
    Empty,
    NotAnIdentifier { index: usize, name: String },
    DuplicateName(String),
    EmptySegment { index: usize },
    Gap { index: usize, expected: usize, found: usize },
    DoesNotCover { stops_at: usize, len: usize },
    UnsoundCut { index: usize, at: usize },
}

impl fmt::Display for SegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SegmentError::Json(e) => write!(f, "the proposal is not valid JSON of the segmentation format: {e}"),
            SegmentError::Empty => write!(f, "the proposal has no segments"),
            SegmentError::NotAnIdentifier { index, name } => {
                write!(f, "segment {index}: `{name}` is not a plain identifier (letters, digits and `_`, not starting with a digit)")
            }
            SegmentError::DuplicateName(n) => write!(f, "two segments are named `{n}`"),
            SegmentError::EmptySegment { index } => write!(f, "segment {index} is empty (start is not before stop)"),
            SegmentError::Gap { index, expected, found } => {
                write!(f, "segment {index} starts at {found}, but the previous one stops at {expected}: segments must be contiguous and in order")
            }
            SegmentError::DoesNotCover { stops_at, len } => write!(f, "the segments stop at instruction {stops_at}, but the kernel has {len}"),
            SegmentError::UnsoundCut { index, at } => {
                write!(f, "segment {index} starts at instruction {at}, which is neither the start of a basic block nor right after a barrier")
            }
        }
    }
}

impl std::error::Error for SegmentError {}

/// Parses and validates a proposal; the segments keep the proposal's names, with titles from
/// the specification when one is given.
pub fn validate(k: &Kernel, json: &str) -> Result<Vec<Segment>, SegmentError> {
    validate_proposal(k, &Proposal::parse(json)?)
}

/// Validates a proposal already read (see [`validate`]).
pub fn validate_proposal(k: &Kernel, proposal: &Proposal) -> Result<Vec<Segment>, SegmentError> {
    if proposal.segments.is_empty() {
        return Err(SegmentError::Empty);
    }
    let insts = flat_insts(k);
    let len = insts.len();
    let sound = sound_cuts(k);
    let mut pos = 0;
    let mut names = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (index, p) in proposal.segments.iter().enumerate() {
        if !is_identifier(&p.name) {
            return Err(SegmentError::NotAnIdentifier { index, name: p.name.clone() });
        }
        if !names.insert(p.name.clone()) {
            return Err(SegmentError::DuplicateName(p.name.clone()));
        }
        if p.start != pos {
            return Err(SegmentError::Gap { index, expected: pos, found: p.start });
        }
        if p.start >= p.stop {
            return Err(SegmentError::EmptySegment { index });
        }
        if p.stop > len {
            return Err(SegmentError::DoesNotCover { stops_at: p.stop, len });
        }
        if index > 0 && sound.binary_search(&p.start).is_err() {
            return Err(SegmentError::UnsoundCut { index, at: p.start });
        }
        let mut seg = describe(k, &insts, index, p.start, p.stop);
        seg.name = p.name.clone();
        if let Some(s) = &p.specification {
            seg.title = s.clone();
        }
        out.push(seg);
        pos = p.stop;
    }
    if pos != len {
        return Err(SegmentError::DoesNotCover { stops_at: pos, len });
    }
    Ok(out)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && s.len() <= 64
}

/// The segment holding flat instruction `i`.
pub fn segment_of(segments: &[Segment], i: usize) -> Option<usize> {
    segments.iter().position(|s| s.start <= i && i < s.stop)
}
