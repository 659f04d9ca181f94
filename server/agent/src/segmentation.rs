//! The `segment` task: an agent proposes how to cut a kernel into segments, LARK validates the
//! proposal (`lean::segment::validate_proposal`: contiguous, covering, every cut at a sound
//! point) and feeds the reason for a refusal back, until a proposal is valid or the budget is
//! spent. A valid segmentation only decides how the obligations are cut; it proves nothing.

use crate::protocol::{FlatInstruction, SegmentAttempt, SegmentRequest, SegmentResponse};
use crate::prove::Budget;
use crate::transport::{Agent, AgentError};
use lean::segment::{self, Segment};
use model::Kernel;
use std::time::Instant;

/// The request for a segmentation of `kernel`, whose PTX text is `ptx` (the instructions' text
/// is cut from it).
pub fn request(kernel: &Kernel, ptx: &str, reference: Option<String>) -> SegmentRequest {
    let instructions = kernel
        .insts()
        .enumerate()
        .map(|(index, (block, _, inst))| FlatInstruction {
            index,
            block,
            text: ptx.get(inst.span.start as usize..inst.span.end as usize).unwrap_or("").trim().to_string(),
            line: inst.line,
        })
        .collect();
    SegmentRequest {
        task: "segment".into(),
        kernel: kernel.name.to_string(),
        instructions,
        sound_cuts: segment::sound_cuts(kernel),
        lark_proposal: segment::Proposal::of_segments(&segment::propose(kernel)),
        reference,
        attempts: vec![],
    }
}

/// How a segmentation request ended.
#[derive(Clone, Debug, PartialEq)]
pub enum SegmentOutcome {
    /// A proposal that passed validation, and the segments it makes.
    Accepted { proposal: SegmentResponse, segments: Vec<Segment>, attempts: Vec<SegmentAttempt> },
    /// No valid proposal, and why.
    Refused { reason: String, attempts: Vec<SegmentAttempt> },
}

/// Asks `agent` for a segmentation of `kernel` until one is valid or `budget` (attempts, total
/// time, per call, tokens) is spent. `request` must have been made for this kernel ([`request`]).
pub fn propose_segmentation(kernel: &Kernel, request: &SegmentRequest, agent: &mut dyn Agent, budget: &Budget) -> SegmentOutcome {
    let len = segment::flat_len(kernel);
    if request.instructions.len() != len {
        let reason = format!("the request lists {} instructions, but the kernel has {len}: it was made for another kernel", request.instructions.len());
        return SegmentOutcome::Refused { reason, attempts: vec![] };
    }
    let started = Instant::now();
    let mut req = request.clone();
    req.attempts.clear();
    for _ in 0..budget.attempts {
        let left = budget.total.saturating_sub(started.elapsed());
        if left.is_zero() {
            return SegmentOutcome::Refused { reason: format!("agent budget exhausted ({} s)", budget.total.as_secs()), attempts: req.attempts };
        }
        if let Some(reason) = budget.tokens_exhausted() {
            return SegmentOutcome::Refused { reason, attempts: req.attempts };
        }
        let limits = budget.call_limits(left);
        let proposal = match agent.propose_segments(&req, &limits) {
            Ok(p) => p,
            Err(e) if e.is_fatal() => {
                let reason = match e {
                    AgentError::Cancelled => "cancelled".to_string(),
                    e => format!("{}: {e}", agent.name()),
                };
                return SegmentOutcome::Refused { reason, attempts: req.attempts };
            }
            Err(e) => {
                // A slow, crashing or garbage answer costs an attempt; the agent hears why.
                req.attempts.push(SegmentAttempt { proposal: None, error: e.to_string() });
                continue;
            }
        };
        match segment::validate_proposal(kernel, &proposal) {
            Ok(segments) => return SegmentOutcome::Accepted { proposal, segments, attempts: req.attempts },
            Err(e) => req.attempts.push(SegmentAttempt { proposal: Some(proposal), error: e.to_string() }),
        }
    }
    let last = req.attempts.last().map_or(String::new(), |a| format!("; last: {}", a.error));
    SegmentOutcome::Refused { reason: format!("no valid segmentation in {} attempts{last}", budget.attempts), attempts: req.attempts }
}
