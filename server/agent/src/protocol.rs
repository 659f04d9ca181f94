//! The agent protocol: one JSON request per attempt on an obligation, one JSON response.
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
//! statement's `:=`. Anything else is garbage and costs the agent an attempt.

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
