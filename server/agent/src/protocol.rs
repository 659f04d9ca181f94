//! The agent protocol: one JSON request per attempt, one JSON response. There are two tasks.
//!
//! **prove**: a proof of one pinned obligation.
//!
//! ```json
//! { "task": "prove", "obligation": "race_free", "theorem": "LarkGen.k.cert_race_free",
//!   "statement": "<the pinned Lean text the proof is appended to>", "statement_sha256": "…",
//!   "summary": "no two threads race …", "library": ["Lark.RaceFree", …],
//!   "facts": ["LARK's engine verified the kernel at this launch"],
//!   "attempts": [{ "proof": "by decide", "errors": [{ "line": 3, "column": 2, "message": "…" }] }] }
//! ```
//!
//! The response is `{ "proof": "<a term or a `by` block>" }`: the text that follows the
//! statement's `:=`. Anything else is garbage and costs the agent an attempt. A request for a
//! sub-goal that proof repair isolated (see [`crate::repair`]) also carries `subgoal_of`: the
//! obligation, the rejected proof with its failing parts replaced by holes, and the hole.
//!
//! **segment**: cuts of a kernel's flat instruction list into named segments.
//!
//! ```json
//! { "task": "segment", "kernel": "reduce_sum_shared",
//!   "instructions": [{ "index": 0, "block": 0, "text": "ld.param.u32 %r6, [p2];", "line": 4 }, …],
//!   "sound_cuts": [0, 9, 14, …], "lark_proposal": { "segments": [ … ] },
//!   "reference": "def forward(x): …",
//!   "attempts": [{ "proposal": { "segments": [ … ] }, "error": "segment 1 starts at 7, …" }] }
//! ```
//!
//! The response is exactly the proposal format `lean::segment::validate` reads:
//! `{ "segments": [{ "name": "s0_load", "start": 0, "stop": 9, "specification": "…" }, …] }`.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProveRequest {
    pub task: String,
    pub obligation: String,
    /// The theorem the proof completes (`theorem <theorem> : <obligation> :=`).
    pub theorem: String,
    /// Everything before the proof, exactly as pinned.
    pub statement: String,
    pub statement_sha256: String,
    pub summary: String,
    /// Library declarations the statement mentions (full names).
    pub library: Vec<String>,
    /// What LARK's engine established about the kernel, in words.
    pub facts: Vec<String>,
    /// Earlier attempts on this obligation, with why each failed.
    pub attempts: Vec<Attempt>,
    /// Set when the obligation is a sub-goal proof repair isolated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subgoal_of: Option<SubgoalOf>,
}

/// Where a sub-goal comes from: a proof Lean rejected, cut down to the parts that were not at
/// fault, with holes where the rest was.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SubgoalOf {
    /// The obligation whose proof was repaired.
    pub obligation: String,
    /// That proof with holes (`done -- hole N`).
    pub skeleton: String,
    /// The hole this sub-goal fills.
    pub hole: usize,
    /// The goal as Lean printed it at the hole.
    pub goal: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Attempt {
    pub proof: String,
    pub errors: Vec<ProofError>,
}

/// Why an attempt failed: Lean's message at a position of the certificate file, or the audit's
/// or the transport's reason (line and column 0).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProofError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl ProofError {
    pub fn general(message: impl Into<String>) -> ProofError {
        ProofError { line: 0, column: 0, message: message.into() }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProveResponse {
    pub proof: String,
}

impl ProveResponse {
    /// Reads a response: a JSON object with a string `proof`. `Err` says what is wrong with it.
    pub fn parse(text: &str) -> Result<ProveResponse, String> {
        let r: ProveResponse = serde_json::from_str(text.trim()).map_err(|e| format!("not a JSON object {{\"proof\": \"…\"}}: {e}"))?;
        if r.proof.trim().is_empty() {
            return Err("the proof is empty".into());
        }
        Ok(r)
    }
}

/// The request for a segmentation of one kernel.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SegmentRequest {
    /// `"segment"`.
    pub task: String,
    pub kernel: String,
    /// The kernel's flat instruction list: every block's instructions, block after block (the
    /// indices segments are ranges of).
    pub instructions: Vec<FlatInstruction>,
    /// The indices where a segment may start: the start of a basic block, or right after a
    /// barrier (and the list's length, where the last one stops).
    pub sound_cuts: Vec<usize>,
    /// LARK's own segmentation (`lean::segment::propose`), in the response's format.
    pub lark_proposal: SegmentResponse,
    /// The PyTorch reference, when one is bound.
    pub reference: Option<String>,
    /// Earlier answers, with why each was refused.
    pub attempts: Vec<SegmentAttempt>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FlatInstruction {
    pub index: usize,
    /// The basic block it is in.
    pub block: u32,
    /// Its PTX text.
    pub text: String,
    /// The kernel's source line it comes from (1-based), when known.
    pub line: Option<u32>,
}

/// One refused answer: the proposal (`None` when the answer was not one) and why.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SegmentAttempt {
    pub proposal: Option<SegmentResponse>,
    pub error: String,
}

/// The answer to a segment request: the proposal format `lean::segment::validate` reads.
pub type SegmentResponse = lean::segment::Proposal;

/// Reads a segment answer. `Err` says what is wrong with it.
pub fn parse_segment_response(text: &str) -> Result<SegmentResponse, String> {
    lean::segment::Proposal::parse(text.trim()).map_err(|e| e.to_string())
}
