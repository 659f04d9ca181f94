//! Proof agents for LARK's Lean obligations (ARCHITECTURE.md, promise 1: the LLM is never
//! trusted). An agent is asked for a proof of one pinned obligation; the proof is audited
//! (`lean::audit`) and checked by Lean (`lean::certify`); only a proof Lean accepted counts. A
//! wrong, slow, crashing or garbage-printing agent wastes its budget and nothing else.
//!
//! * [`protocol`]: the JSON request an agent receives and the response it returns;
//! * [`transport`]: the agents — the built-in prover (a portfolio of tactics, no LLM), any
//!   command (request on stdin, response on stdout) and an OpenAI-compatible chat-completions
//!   endpoint — each bounded in time and output and cancellable; an endpoint's tokens are
//!   counted (its `usage`, else estimated) against the budget's token limit;
//! * [`prove`]: the loop: ask, audit, check with Lean, feed the errors back, until accepted or
//!   out of budget;
//! * [`repair`]: when Lean rejects a tactic proof, keep what it did not object to and prove the
//!   goals left open one by one ([`skeleton`] cuts the proof and splices it together again,
//!   [`goals`] reads Lean's goal display and states each goal as a theorem);
//! * [`segmentation`]: the `segment` task: an agent's cuts of a kernel, validated, with the
//!   reason for a refusal fed back;
//! * [`task`]: the pinned statement of each obligation's certificate and the request for it;
//! * [`checker`]: Lean as the loop's checker (a scratch workspace with the library built);
//! * [`certificate`]: certificates on disk, written atomically and keyed by everything they
//!   depend on.

pub mod certificate;
pub mod checker;
pub mod goals;
pub mod protocol;
pub mod prove;
mod repair;
pub mod segmentation;
pub mod skeleton;
pub mod task;
pub mod transport;

pub use protocol::{Attempt, ProofError, ProveRequest, ProveResponse, SegmentRequest, SegmentResponse};
pub use prove::{prove, Budget, Outcome};
pub use segmentation::{propose_segmentation, SegmentOutcome};
pub use transport::{Agent, AgentError, BuiltIn, CommandAgent, EndpointAgent, Limits, TokenMeter, TokenUsage};
