//! The agents: where proofs come from. Every agent is bounded by [`Limits`] — a wall-clock
//! timeout, an output cap and a cancellation token — and reports why it produced nothing as an
//! [`AgentError`], never by panicking or hanging. An endpoint also counts the tokens it spends
//! on the [`TokenMeter`] its limits carry; a command agent has no token count (its budget is
//! time, attempts and output only), and the built-in prover spends none.

use crate::protocol::{parse_segment_response, ProveRequest, ProveResponse, SegmentRequest, SegmentResponse};
use lean::runner::{run_process, ProcessLimits};
use model::budget::CancelToken;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Tokens spent so far. An endpoint's own count (its response's `usage` block) where it gave
/// one; otherwise an estimate of a quarter of the bytes of the request and response bodies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenUsage {
    pub prompt: u64,
    pub completion: u64,
    pub total: u64,
    /// Answers counted.
    pub calls: u32,
    /// Answers without a `usage` block, whose tokens were estimated (bytes / 4).
    pub estimated_calls: u32,
}

impl TokenUsage {
    /// `"N tokens"`, with `(estimated …)` when any answer's count was estimated.
    pub fn describe(&self) -> String {
        format!("{} tokens{}", self.total, self.estimate_note())
    }

    /// `""`, or ` (estimated …)` when any answer's count was estimated.
    pub fn estimate_note(&self) -> String {
        match self.estimated_calls {
            0 => String::new(),
            n if n == self.calls => " (estimated as bytes/4: the endpoint reported no usage)".into(),
            n => format!(" ({n} of {} answers estimated as bytes/4: the endpoint reported no usage)", self.calls),
        }
    }
}

/// Where an endpoint adds up the tokens it spends. Clones share one count, as clones of a
/// [`CancelToken`] share one flag: a [`Limits`] (or a `Budget`) used for every obligation of a
/// certification counts the whole certification.
#[derive(Clone, Debug, Default)]
pub struct TokenMeter(Arc<Mutex<TokenUsage>>);

impl TokenMeter {
    pub fn new() -> TokenMeter {
        TokenMeter::default()
    }

    pub fn usage(&self) -> TokenUsage {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tokens spent so far (prompt and completion together).
    pub fn used(&self) -> u64 {
        self.usage().total
    }

    /// Counts one answer: its own `usage` when it had one, else `estimate`.
    pub fn record(&self, reported: Option<(u64, u64, u64)>, estimate: u64) {
        let mut u = self.0.lock().unwrap_or_else(|e| e.into_inner());
        u.calls += 1;
        match reported {
            Some((prompt, completion, total)) => {
                u.prompt += prompt;
                u.completion += completion;
                u.total += total;
            }
            None => {
                u.estimated_calls += 1;
                u.total += estimate;
            }
        }
    }
}

/// How far one call of an agent may go.
#[derive(Clone, Debug)]
pub struct Limits {
    pub timeout: Duration,
    /// The most bytes of output (a command's stdout, an endpoint's response body).
    pub max_output: usize,
    /// The most tokens an endpoint may generate (`max_tokens`).
    pub max_tokens: u32,
    pub cancel: CancelToken,
    /// Where an endpoint counts the tokens it spent (shared by clones).
    pub tokens: TokenMeter,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { timeout: Duration::from_secs(120), max_output: 256 * 1024, max_tokens: 4096, cancel: CancelToken::new(), tokens: TokenMeter::new() }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AgentError {
    #[error("the agent could not be started: {0}")]
    Start(String),
    #[error("the agent did not answer within {} s", .0.as_secs_f64())]
    Timeout(Duration),
    #[error("cancelled")]
    Cancelled,
    #[error("the agent exited with {status} without an answer{}", if .stderr.is_empty() { String::new() } else { format!(": {}", .stderr) })]
    Crashed { status: String, stderr: String },
    #[error("the agent's answer is not usable: {why} (it began: {excerpt:?})")]
    Garbage { why: String, excerpt: String },
    #[error("the agent printed more than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the endpoint failed: {0}")]
    Http(String),
    #[error("the built-in prover has no more tactics to try")]
    Exhausted,
}

impl AgentError {
    /// Errors after which asking the same agent again is pointless.
    pub fn is_fatal(&self) -> bool {
        matches!(self, AgentError::Start(_) | AgentError::Cancelled | AgentError::Exhausted)
    }
}

/// A source of proofs and segmentations.
pub trait Agent: Send {
    /// For progress messages and certificates' manifests (never holds a secret).
    fn name(&self) -> String;
    /// A proof of the request's obligation (task `prove`).
    fn propose(&mut self, req: &ProveRequest, limits: &Limits) -> Result<ProveResponse, AgentError>;
    /// A segmentation of the request's kernel (task `segment`).
    fn propose_segments(&mut self, req: &SegmentRequest, limits: &Limits) -> Result<SegmentResponse, AgentError>;
}

/// The first characters of a text, for error messages.
fn excerpt(text: &str) -> String {
    text.chars().take(120).collect()
}

/// The built-in prover: no LLM, a fixed portfolio of tactics tried one per attempt, in order of
/// cost. It proves what needs no insight (decidable facts, arithmetic, definitional unfolding);
/// anything else is left to an external agent. Asked for a segmentation, it answers with LARK's
/// own.
pub struct BuiltIn {
    next: usize,
    /// The pinned statement the portfolio is being tried on: a new obligation starts it over.
    statement_sha256: String,
}

impl BuiltIn {
    /// The portfolio, in the order tried. `bv_decide` and `native_decide` are not in it: their
    /// proofs trust the compiler, and the audit rejects them.
    pub const TACTICS: [&'static str; 6] = [
        "by\n  decide",
        "by\n  rfl",
        "by\n  intro I inputs arg x h\n  simp_all",
        "by\n  intro I inputs arg x h\n  omega",
        "by\n  intro I inputs arg x h\n  grind",
        "by\n  intro I inputs arg x h\n  simp_all [Assumptions]",
    ];

    /// The portfolio for a sub-goal proof repair isolated: its hypotheses are already in
    /// scope, so no `intro` of the obligation's binders; tried as one `first`, in one Lean run.
    pub const SUBGOAL_TACTICS: [&'static str; 7] =
        ["rfl", "decide", "omega", "(simp_all; done)", "(simp_all; omega)", "grind", "(simp_all [Assumptions]; done)"];

    pub fn new() -> BuiltIn {
        BuiltIn { next: 0, statement_sha256: String::new() }
    }

    /// The sub-goal portfolio as one proof.
    pub fn subgoal_proof() -> String {
        let mut proof = "by\n  intros\n  first".to_string();
        for t in BuiltIn::SUBGOAL_TACTICS {
            proof.push_str("\n    | ");
            proof.push_str(t);
        }
        proof
    }
}

impl Default for BuiltIn {
    fn default() -> BuiltIn {
        BuiltIn::new()
    }
}

impl Agent for BuiltIn {
    fn name(&self) -> String {
        "built-in prover".into()
    }

    fn propose(&mut self, req: &ProveRequest, limits: &Limits) -> Result<ProveResponse, AgentError> {
        if limits.cancel.is_cancelled() {
            return Err(AgentError::Cancelled);
        }
        // Proof repair tries the sub-goal portfolio itself before it asks any agent.
        if req.subgoal_of.is_some() {
            return Err(AgentError::Exhausted);
        }
        if req.statement_sha256 != self.statement_sha256 {
            self.statement_sha256 = req.statement_sha256.clone();
            self.next = 0;
        }
        let tactic = BuiltIn::TACTICS.get(self.next).ok_or(AgentError::Exhausted)?;
        self.next += 1;
        Ok(ProveResponse { proof: tactic.to_string() })
    }

    fn propose_segments(&mut self, req: &SegmentRequest, limits: &Limits) -> Result<SegmentResponse, AgentError> {
        if limits.cancel.is_cancelled() {
            return Err(AgentError::Cancelled);
        }
        // LARK's own cuts are all it knows; refused once, asking again is pointless.
        if !req.attempts.is_empty() {
            return Err(AgentError::Exhausted);
        }
        Ok(req.lark_proposal.clone())
    }
}

/// Any program as an agent: the request as JSON on its standard input, the response as JSON on
/// its standard output. It runs through `sh -c` in a scratch directory of its own, in its own
/// process group, which is killed on timeout, on cancellation and when it prints too much.
pub struct CommandAgent {
    pub command: String,
    pub scratch: PathBuf,
}

impl CommandAgent {
    /// The command runs in a scratch directory: a program named by a relative path that exists
    /// from the current directory is made absolute first.
    pub fn new(command: impl Into<String>) -> CommandAgent {
        let mut command = command.into();
        if let Some(first) = command.split_whitespace().next().filter(|w| w.contains('/') && !w.starts_with('/')) {
            if let Ok(abs) = std::fs::canonicalize(first) {
                command = format!("{}{}", abs.display(), &command[command.find(first).unwrap_or(0) + first.len()..]);
            }
        }
        let scratch = std::env::temp_dir().join(format!("lark-agent-{}", std::process::id()));
        CommandAgent { command, scratch }
    }
}

impl Agent for CommandAgent {
    fn name(&self) -> String {
        format!("command `{}`", self.command)
    }

    fn propose(&mut self, req: &ProveRequest, limits: &Limits) -> Result<ProveResponse, AgentError> {
        let input = serde_json::to_vec(req).map_err(|e| AgentError::Start(e.to_string()))?;
        let stdout = self.run(input, limits)?;
        ProveResponse::parse(&stdout).map_err(|why| AgentError::Garbage { why, excerpt: excerpt(&stdout) })
    }

    fn propose_segments(&mut self, req: &SegmentRequest, limits: &Limits) -> Result<SegmentResponse, AgentError> {
        let input = serde_json::to_vec(req).map_err(|e| AgentError::Start(e.to_string()))?;
        let stdout = self.run(input, limits)?;
        parse_segment_response(&stdout).map_err(|why| AgentError::Garbage { why, excerpt: excerpt(&stdout) })
    }
}

impl CommandAgent {
    /// Runs the command once with `input` on its standard input; its standard output when it
    /// exited with 0 in time.
    fn run(&self, input: Vec<u8>, limits: &Limits) -> Result<String, AgentError> {
        if limits.cancel.is_cancelled() {
            return Err(AgentError::Cancelled);
        }
        std::fs::create_dir_all(&self.scratch).map_err(|e| AgentError::Start(format!("{}: {e}", self.scratch.display())))?;
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(&self.command).current_dir(&self.scratch);
        let cancel = limits.cancel.clone();
        let plimits = ProcessLimits {
            timeout: limits.timeout,
            stdin: Some(input),
            max_output: Some(limits.max_output),
            cancelled: Some(std::sync::Arc::new(move || cancel.is_cancelled())),
        };
        let out = run_process(cmd, &plimits).map_err(|e| AgentError::Start(e.to_string()))?;
        if out.cancelled {
            return Err(AgentError::Cancelled);
        }
        if out.timed_out {
            return Err(AgentError::Timeout(limits.timeout));
        }
        if out.overflowed {
            return Err(AgentError::TooLarge { limit: limits.max_output });
        }
        // `sh` exits 126/127 when the program cannot be run or is not found: asking again is pointless.
        if matches!(out.status, Some(126 | 127)) {
            return Err(AgentError::Start(format!("`{}`: {}", self.command, excerpt(out.stderr.trim()))));
        }
        if out.status != Some(0) {
            let status = out.status.map_or_else(|| "a signal".to_string(), |c| format!("status {c}"));
            return Err(AgentError::Crashed { status, stderr: excerpt(out.stderr.trim()) });
        }
        Ok(out.stdout)
    }
}

/// An OpenAI-compatible chat-completions endpoint (a local vLLM or llama.cpp server, or a
/// hosted one behind a local proxy): `POST {base_url}/chat/completions`. Plain `http://` only;
/// the API key is read from the environment variable named in the settings at each request and
/// is never printed, logged or stored.
pub struct EndpointAgent {
    pub base_url: String,
    pub model: String,
    pub key_env: Option<String>,
}

const SYSTEM_PROMPT: &str = "You prove Lean 4 theorems about GPU kernels stated with the `Lark` library (core Lean 4, no Mathlib). \
You receive a JSON request: `statement` is the Lean text your proof is appended to, ending in `:=`. \
Answer with the proof only: a term or a `by` tactic block, in a ```lean code block or as JSON {\"proof\": \"...\"}. \
Never use sorry, admit, axioms, native_decide, bv_decide or new declarations. \
`attempts` lists your earlier proofs and Lean's errors for them.";

const SEGMENT_PROMPT: &str = "You cut GPU kernels into segments for proofs about them. \
You receive a JSON request: `instructions` is the kernel's flat instruction list, `sound_cuts` the indices where a segment may start, \
`lark_proposal` LARK's own cuts, `reference` the PyTorch reference. \
Answer with JSON only, in a ```json code block or bare: {\"segments\": [{\"name\": \"s0_load\", \"start\": 0, \"stop\": 9, \"specification\": \"what it computes\"}, ...]}. \
Segments are contiguous, in order, cover every instruction, and each starts at a sound cut. \
`attempts` lists your earlier answers and why each was refused.";

impl EndpointAgent {
    /// `(host:port, path prefix)` of the base URL.
    fn target(&self) -> Result<(String, String), AgentError> {
        let rest = match self.base_url.strip_prefix("http://") {
            Some(r) => r,
            None if self.base_url.starts_with("https://") => {
                return Err(AgentError::Start("https endpoints are not supported; run a local http proxy or use a command agent".into()))
            }
            None => return Err(AgentError::Start(format!("`{}` is not an http:// URL", self.base_url))),
        };
        let (host, path) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
        let host = if host.contains(':') { host.to_string() } else { format!("{host}:80") };
        Ok((host, format!("/{}", path.trim_end_matches('/'))))
    }

    /// The proof in a chat answer: the last ```lean block, else JSON with `proof`, else the text.
    pub fn proof_of(content: &str) -> Result<String, String> {
        if let Some(start) = content.rfind("```lean") {
            let body = &content[start + "```lean".len()..];
            let end = body.find("```").ok_or("an unterminated ```lean block")?;
            return Ok(body[..end].trim().to_string());
        }
        if let Ok(r) = ProveResponse::parse(content) {
            return Ok(r.proof);
        }
        let text = content.trim();
        if text.is_empty() {
            return Err("the answer is empty".into());
        }
        Ok(text.to_string())
    }

    /// The segmentation in a chat answer: the last ```json block, else the whole text.
    pub fn proposal_of(content: &str) -> Result<SegmentResponse, String> {
        let json = match content.rfind("```json") {
            Some(start) => {
                let body = &content[start + "```json".len()..];
                &body[..body.find("```").ok_or("an unterminated ```json block")?]
            }
            None => content,
        };
        parse_segment_response(json)
    }

    /// The token counts of a response's `usage` block (`prompt_tokens`, `completion_tokens`,
    /// `total_tokens`; a missing total is the sum of the other two). `None` when it has no
    /// count at all.
    pub fn usage_of(usage: &serde_json::Value) -> Option<(u64, u64, u64)> {
        let field = |k: &str| usage.get(k).and_then(serde_json::Value::as_u64);
        let (prompt, completion, total) = (field("prompt_tokens"), field("completion_tokens"), field("total_tokens"));
        if prompt.is_none() && completion.is_none() && total.is_none() {
            return None;
        }
        let (prompt, completion) = (prompt.unwrap_or(0), completion.unwrap_or(0));
        Some((prompt, completion, total.unwrap_or(prompt + completion)))
    }

    /// Sends one chat-completions request and returns the answer's content. The tokens of an
    /// answer with status 200 are counted on `limits.tokens`.
    fn chat(&self, system: &str, user: String, limits: &Limits) -> Result<String, AgentError> {
        if limits.cancel.is_cancelled() {
            return Err(AgentError::Cancelled);
        }
        let (host, prefix) = self.target()?;
        let request_body = serde_json::json!({
            "model": self.model,
            "temperature": 0,
            "max_tokens": limits.max_tokens,
            "messages": [
                { "role": "system", "content": system },
                { "role": "user", "content": user },
            ],
        })
        .to_string();
        let key = self.key_env.as_deref().and_then(|v| std::env::var(v).ok()).filter(|k| !k.is_empty());
        let auth = key.map_or(String::new(), |k| format!("Authorization: Bearer {k}\r\n"));
        // HTTP/1.0: the server answers with a plain body and closes the connection (no chunks).
        let request = format!(
            "POST {prefix}/chat/completions HTTP/1.0\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{auth}\r\n{request_body}",
            request_body.len()
        );
        let deadline = Instant::now() + limits.timeout;
        let addr = host
            .to_socket_addrs()
            .map_err(|e| AgentError::Http(format!("{host}: {e}")))?
            .next()
            .ok_or_else(|| AgentError::Http(format!("{host}: no address")))?;
        let mut stream = TcpStream::connect_timeout(&addr, limits.timeout).map_err(|e| AgentError::Http(format!("{host}: {e}")))?;
        stream.set_write_timeout(Some(limits.timeout)).ok();
        stream.write_all(request.as_bytes()).map_err(|e| AgentError::Http(format!("sending the request: {e}")))?;
        // Read in short slices so that the deadline and cancellation are noticed.
        stream.set_read_timeout(Some(Duration::from_millis(100))).ok();
        let mut response = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            if limits.cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
            if Instant::now() >= deadline {
                return Err(AgentError::Timeout(limits.timeout));
            }
            match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    response.extend_from_slice(&chunk[..n]);
                    if response.len() > limits.max_output {
                        return Err(AgentError::TooLarge { limit: limits.max_output });
                    }
                }
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => continue,
                Err(e) => return Err(AgentError::Http(format!("reading the response: {e}"))),
            }
        }
        if response.is_empty() {
            return Err(AgentError::Http("the endpoint closed the connection without answering".into()));
        }
        let text = String::from_utf8_lossy(&response);
        let (head, body) = text.split_once("\r\n\r\n").ok_or_else(|| AgentError::Garbage { why: "not an HTTP response".into(), excerpt: excerpt(&text) })?;
        let status = head.split_whitespace().nth(1).unwrap_or("");
        if status != "200" {
            return Err(AgentError::Http(format!("status {status}: {}", excerpt(body.trim()))));
        }
        // An answer spent tokens even when it is of no use: count them before judging it.
        let json: Result<serde_json::Value, _> = serde_json::from_str(body);
        let reported = json.as_ref().ok().and_then(|j| EndpointAgent::usage_of(&j["usage"]));
        limits.tokens.record(reported, (request_body.len() + body.len()).div_ceil(4) as u64);
        let json = json.map_err(|e| AgentError::Garbage { why: format!("the body is not JSON: {e}"), excerpt: excerpt(body) })?;
        let content = json["choices"][0]["message"]["content"]
            .as_str()
            .ok_or_else(|| AgentError::Garbage { why: "no choices[0].message.content".into(), excerpt: excerpt(body) })?;
        Ok(content.to_string())
    }
}

impl Agent for EndpointAgent {
    fn name(&self) -> String {
        format!("endpoint {} ({})", self.base_url, self.model)
    }

    fn propose(&mut self, req: &ProveRequest, limits: &Limits) -> Result<ProveResponse, AgentError> {
        let content = self.chat(SYSTEM_PROMPT, serde_json::to_string(req).unwrap_or_default(), limits)?;
        let proof = EndpointAgent::proof_of(&content).map_err(|why| AgentError::Garbage { why, excerpt: excerpt(&content) })?;
        Ok(ProveResponse { proof })
    }

    fn propose_segments(&mut self, req: &SegmentRequest, limits: &Limits) -> Result<SegmentResponse, AgentError> {
        let content = self.chat(SEGMENT_PROMPT, serde_json::to_string(req).unwrap_or_default(), limits)?;
        EndpointAgent::proposal_of(&content).map_err(|why| AgentError::Garbage { why, excerpt: excerpt(&content) })
    }
}
