//! The prove loop and the agent transports against labelled test-double agents
//! (`tests/agents/*.sh`, and a small in-test HTTP server speaking the chat-completions format):
//! errors are fed back and used, hanging agents are killed at the budget with their children,
//! crashes, garbage and oversized answers cost an attempt and nothing else, cancellation stops
//! the loop, an endpoint's tokens are counted (its `usage`, else estimated) and a spent token
//! budget stops the loop, and without Lean no proof is ever reported as proved.

use agent::prove::{prove, Budget, Checker, Outcome};
use agent::{Agent, AgentError, CommandAgent, EndpointAgent, Limits, ProveRequest, TokenUsage};
use lean::audit::{sha256_hex, Pinned, Policy};
use lean::certify::CertifyError;
use lean::runner::{Message, Severity};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn double(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agents").join(name).display().to_string()
}

fn request() -> ProveRequest {
    let statement = "-- a pinned statement for the tests\ntheorem test_true : True :=\n".to_string();
    ProveRequest {
        task: "prove".into(),
        obligation: "test_true".into(),
        theorem: "test_true".into(),
        statement_sha256: sha256_hex(&statement),
        statement,
        summary: "True holds".into(),
        library: vec![],
        facts: vec![],
        attempts: vec![],
        subgoal_of: None,
    }
}

fn budget(attempts: u32, per_call: Duration, total: Duration) -> Budget {
    Budget { attempts, total, per_call: Limits { timeout: per_call, ..Limits::default() }, lean_timeout: Duration::from_secs(5), ..Budget::default() }
}

#[test]
fn errors_are_fed_back_and_without_lean_nothing_is_proved() {
    let mut a = CommandAgent::new(double("learns.sh"));
    let out = prove(&request(), &mut a, None, &Policy::default(), &budget(4, Duration::from_secs(20), Duration::from_secs(60)));
    let Outcome::NotProved { reason, attempts } = out else { panic!("proved without Lean: {out:?}") };
    assert!(reason.contains("Lean toolchain not found"), "{reason}");
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert!(attempts[0].errors[0].message.contains("sorry"), "{attempts:#?}");
    assert_eq!(attempts[1].proof, "trivial", "the agent used the fed-back error");
}

/// A checker that rejects every proof with a Lean-style error. A TEST DOUBLE for Lean's
/// rejections only: nothing can be accepted through it.
struct RejectingLean;

impl Checker for RejectingLean {
    fn check(&self, _: &Pinned, _: &str, _: &str, _: Duration) -> Result<Vec<String>, CertifyError> {
        Err(CertifyError::Rejected(vec![Message { file: None, line: 3, column: 2, severity: Severity::Error, text: "unsolved goals\n⊢ True".into() }]))
    }
}

#[test]
fn lean_errors_are_fed_back_with_their_positions_until_the_attempts_run_out() {
    let dir = std::env::temp_dir().join(format!("lark-agent-req-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_file = dir.join("request.json");
    let mut a = CommandAgent::new(format!("LARK_TEST_REQUEST_OUT={} {}", out_file.display(), double("request.sh")));
    let out = prove(&request(), &mut a, Some(&RejectingLean), &Policy::default(), &budget(3, Duration::from_secs(20), Duration::from_secs(60)));
    let Outcome::NotProved { reason, attempts } = out else { panic!("{out:?}") };
    assert!(reason.contains("no proof accepted in 3 attempts") && reason.contains("unsolved goals"), "{reason}");
    assert_eq!(attempts.len(), 3);
    // The last request carried the two earlier attempts with Lean's line and column.
    let sent: ProveRequest = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(sent.attempts.len(), 2);
    assert_eq!((sent.attempts[0].errors[0].line, sent.attempts[0].errors[0].column), (3, 2));
    assert_eq!(sent.attempts[0].proof, "trivial");
    assert_eq!(sent.statement, request().statement);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hanging_agent_is_killed_with_its_children_and_the_budget_holds() {
    // A sleep length no other test uses, to find exactly this test's processes afterwards.
    let marker = 1000 + std::process::id() % 1000;
    let mut a = CommandAgent::new(format!("{} {marker}", double("hang.sh")));
    let started = Instant::now();
    let out = prove(&request(), &mut a, None, &Policy::default(), &budget(10, Duration::from_millis(700), Duration::from_secs(2)));
    let elapsed = started.elapsed();
    let Outcome::NotProved { reason, attempts } = out else { panic!("{out:?}") };
    assert!(elapsed < Duration::from_secs(5), "the 2 s budget took {elapsed:?}");
    assert!(reason.contains("budget exhausted") || reason.contains("no proof accepted"), "{reason}");
    assert!(attempts.iter().all(|a| a.errors[0].message.contains("did not answer")), "{attempts:#?}");
    // Neither the script nor its background `sleep` survives.
    std::thread::sleep(Duration::from_millis(200));
    let survivors = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok())
        .filter(|c| c.split('\0').any(|arg| arg == marker.to_string()))
        .count();
    assert_eq!(survivors, 0, "a hanging agent's process outlived its timeout");
}

#[test]
fn crashes_garbage_and_oversized_answers_cost_an_attempt_each() {
    let limits = Limits { timeout: Duration::from_secs(20), max_output: 64 * 1024, ..Limits::default() };
    let cases = [("crash.sh", "exited with status 3"), ("garbage.sh", "not usable"), ("huge.sh", "more than 65536 bytes")];
    for (script, why) in cases {
        let mut a = CommandAgent::new(double(script));
        let e = a.propose(&request(), &limits).unwrap_err();
        assert!(e.to_string().contains(why), "{script}: {e}");
        assert!(!e.is_fatal(), "{script}: one bad answer must not end the loop");
    }
    // In the loop: every attempt fails, the loop ends at its attempt count, nothing is proved.
    let mut a = CommandAgent::new(double("garbage.sh"));
    let out = prove(&request(), &mut a, None, &Policy::default(), &budget(3, Duration::from_secs(20), Duration::from_secs(60)));
    assert!(matches!(&out, Outcome::NotProved { attempts, .. } if attempts.len() == 3), "{out:?}");
}

#[test]
fn an_agent_that_cannot_start_ends_the_loop_at_once() {
    let mut a = CommandAgent::new("exec /nonexistent/agent");
    let out = prove(&request(), &mut a, None, &Policy::default(), &budget(5, Duration::from_secs(20), Duration::from_secs(60)));
    // `sh` starts; the program inside it does not (status 127): no second attempt.
    assert!(matches!(&out, Outcome::NotProved { reason, attempts } if attempts.is_empty() && reason.contains("could not be started")), "{out:?}");
}

#[test]
fn cancellation_stops_a_running_agent() {
    let limits = Limits { timeout: Duration::from_secs(60), ..Limits::default() };
    let cancel = limits.cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let started = Instant::now();
    let mut a = CommandAgent::new(double("hang.sh"));
    assert_eq!(a.propose(&request(), &limits).unwrap_err(), AgentError::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn the_built_in_prover_offers_its_portfolio_then_stops() {
    let mut a = agent::BuiltIn::new();
    let out = prove(&request(), &mut a, Some(&RejectingLean), &Policy::default(), &budget(20, Duration::from_secs(5), Duration::from_secs(60)));
    let Outcome::NotProved { reason, attempts } = out else { panic!("{out:?}") };
    assert_eq!(attempts.len(), agent::BuiltIn::TACTICS.len());
    assert!(reason.contains("no more tactics"), "{reason}");
    for a in &attempts {
        assert!(!a.proof.contains("native_decide") && !a.proof.contains("bv_decide") && !a.proof.contains("sorry"));
    }
}

/// A TEST DOUBLE of a chat-completions server: answers each connection with the next canned
/// response (`None`: accept and never answer).
fn fake_endpoint(responses: Vec<Option<(u16, String)>>) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut held = Vec::new();
        for r in responses {
            let (mut s, _) = listener.accept().unwrap();
            let got = lsp_test_client::fake_http::read_request(&mut s);
            seen.push(got);
            match r {
                Some((status, body)) => {
                    lsp_test_client::fake_http::respond(&mut s, status, &body);
                }
                None => held.push(s),
            }
        }
        // Connections left unanswered stay open for a while (the client must time out).
        if !held.is_empty() {
            std::thread::sleep(Duration::from_secs(5));
        }
        seen
    });
    (url, handle)
}

/// An answer without a `usage` block (some servers omit it).
fn chat(content: &str) -> String {
    serde_json::json!({ "choices": [ { "message": { "role": "assistant", "content": content } } ] }).to_string()
}

/// An answer with the `usage` block OpenAI-compatible servers send.
fn chat_with_usage(content: &str, prompt: u64, completion: u64) -> String {
    serde_json::json!({
        "choices": [ { "message": { "role": "assistant", "content": content } } ],
        "usage": { "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion },
    })
    .to_string()
}

/// The body of a request the fake endpoint saw.
fn body_of(seen: &str) -> &str {
    seen.split_once("\r\n\r\n").unwrap().1
}

#[test]
fn a_chat_completions_endpoint_is_used_with_retries_and_its_key_is_never_shown() {
    std::env::set_var("LARK_TEST_KEY", "sk-test-secret");
    let (url, server) = fake_endpoint(vec![
        Some((200, "not json at all".into())),
        Some((500, "{\"error\": \"overloaded\"}".into())),
        Some((200, chat_with_usage("Here you go:\n```lean\nby\n  sorry\n```", 300, 40))),
        Some((200, chat_with_usage("```lean\ntrivial\n```", 350, 10))),
    ]);
    let mut a = EndpointAgent { base_url: url, model: "test-model".into(), key_env: Some("LARK_TEST_KEY".into()) };
    let b = budget(6, Duration::from_secs(10), Duration::from_secs(60));
    let out = prove(&request(), &mut a, None, &Policy::default(), &b);
    let Outcome::NotProved { reason, attempts } = &out else { panic!("{out:?}") };
    assert!(reason.contains("Lean toolchain not found"), "{reason}");
    assert_eq!(attempts.len(), 4, "{attempts:#?}");
    assert!(attempts[0].errors[0].message.contains("not JSON"), "{attempts:#?}");
    assert!(attempts[1].errors[0].message.contains("status 500"), "{attempts:#?}");
    assert!(attempts[2].errors[0].message.contains("sorry"), "{attempts:#?}");
    assert_eq!(attempts[3].proof, "trivial");
    let seen = server.join().unwrap();
    assert!(seen[0].starts_with("POST /v1/chat/completions HTTP/1.0"), "{}", seen[0]);
    assert!(seen[0].contains("Authorization: Bearer sk-test-secret"), "the key is sent to the endpoint");
    assert!(seen[0].contains("\"model\":\"test-model\""));
    assert!(!format!("{out:?}").contains("sk-test-secret") && !a.name().contains("sk-test"), "the key never appears in results");
    // Tokens: the two `usage` blocks as reported, the answer that was not JSON estimated from
    // its bytes, the status 500 not at all.
    let usage = b.per_call.tokens.usage();
    let estimate = ((body_of(&seen[0]).len() + "not json at all".len()) as u64).div_ceil(4);
    assert_eq!(usage, TokenUsage { prompt: 650, completion: 50, total: 700 + estimate, calls: 3, estimated_calls: 1 });
    assert!(usage.describe().contains("1 of 3 answers estimated"), "{}", usage.describe());
}

#[test]
fn a_token_budget_stops_the_loop_after_the_answer_that_spends_it_and_holds_for_the_whole_run() {
    std::env::set_var("LARK_TEST_TOKEN_KEY", "sk-token-secret");
    // Two answers of 500 and 600 tokens against a budget of 1000: no third request is made (the
    // fake server accepts no third connection, so one would fail as an attempt of its own).
    let (url, server) =
        fake_endpoint(vec![Some((200, chat_with_usage("```lean\ntrivial\n```", 300, 200))), Some((200, chat_with_usage("```lean\ntrivial\n```", 450, 150)))]);
    let mut a = EndpointAgent { base_url: url, model: "test-model".into(), key_env: Some("LARK_TEST_TOKEN_KEY".into()) };
    let b = Budget { tokens: Some(1000), ..budget(6, Duration::from_secs(10), Duration::from_secs(60)) };
    let out = prove(&request(), &mut a, Some(&RejectingLean), &Policy::default(), &b);
    let Outcome::NotProved { reason, attempts } = &out else { panic!("a certificate past the token budget: {out:?}") };
    assert_eq!(reason, "agent token budget exhausted: 1100 of 1000 tokens used");
    // The answer that crossed the budget was still checked (and Lean rejected it).
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert!(attempts[1].errors[0].message.contains("unsolved goals"), "{attempts:#?}");
    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 2);
    // Each request asked for no more than the tokens left.
    assert!(body_of(&seen[0]).contains("\"max_tokens\":1000"), "{}", body_of(&seen[0]));
    assert!(body_of(&seen[1]).contains("\"max_tokens\":500"), "{}", body_of(&seen[1]));
    // The next obligation of the same run (the same budget) asks nothing at all.
    let next = prove(&request(), &mut a, Some(&RejectingLean), &Policy::default(), &b);
    assert_eq!(next, Outcome::NotProved { reason: "agent token budget exhausted: 1100 of 1000 tokens used".into(), attempts: vec![] });
    let shown = format!("{out:?}{next:?}{}{}", b.per_call.tokens.usage().describe(), a.name());
    assert!(!shown.contains("sk-token-secret"), "the key never appears in results: {shown}");
}

#[test]
fn without_usage_the_tokens_are_estimated_and_the_reason_says_so() {
    let answer = chat("```lean\ntrivial\n```");
    let (url, server) = fake_endpoint(vec![Some((200, answer.clone()))]);
    let mut a = EndpointAgent { base_url: url, model: "m".into(), key_env: None };
    let b = Budget { tokens: Some(20), ..budget(6, Duration::from_secs(10), Duration::from_secs(60)) };
    let out = prove(&request(), &mut a, Some(&RejectingLean), &Policy::default(), &b);
    let seen = server.join().unwrap();
    let estimate = ((body_of(&seen[0]).len() + answer.len()) as u64).div_ceil(4);
    assert_eq!(b.per_call.tokens.usage(), TokenUsage { prompt: 0, completion: 0, total: estimate, calls: 1, estimated_calls: 1 });
    let Outcome::NotProved { reason, attempts } = &out else { panic!("{out:?}") };
    assert_eq!(attempts.len(), 1, "{attempts:#?}");
    assert_eq!(reason, &format!("agent token budget exhausted: {estimate} of 20 tokens used (estimated as bytes/4: the endpoint reported no usage)"));
}

#[test]
fn a_usage_block_is_read_leniently() {
    let usage = |v: serde_json::Value| EndpointAgent::usage_of(&v);
    assert_eq!(usage(serde_json::json!({"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10})), Some((7, 3, 10)));
    assert_eq!(usage(serde_json::json!({"prompt_tokens": 7, "completion_tokens": 3})), Some((7, 3, 10)));
    assert_eq!(usage(serde_json::json!({"total_tokens": 12})), Some((0, 0, 12)));
    assert_eq!(usage(serde_json::json!({})), None);
    assert_eq!(usage(serde_json::Value::Null), None);
    assert_eq!(usage(serde_json::json!({"total_tokens": "many"})), None);
}

#[test]
fn a_command_agent_is_not_stopped_by_a_token_budget() {
    // It reports no tokens: its budget is time, attempts and output only.
    let mut a = CommandAgent::new(double("learns.sh"));
    let b = Budget { tokens: Some(1), ..budget(4, Duration::from_secs(20), Duration::from_secs(60)) };
    let out = prove(&request(), &mut a, None, &Policy::default(), &b);
    assert!(matches!(&out, Outcome::NotProved { reason, attempts } if reason.contains("Lean toolchain not found") && attempts.len() == 2), "{out:?}");
    assert_eq!(b.per_call.tokens.used(), 0);
}

#[test]
fn a_silent_endpoint_times_out_and_https_is_refused_plainly() {
    let (url, _server) = fake_endpoint(vec![None]);
    let mut a = EndpointAgent { base_url: url, model: "m".into(), key_env: None };
    let limits = Limits { timeout: Duration::from_millis(600), ..Limits::default() };
    let started = Instant::now();
    assert_eq!(a.propose(&request(), &limits).unwrap_err(), AgentError::Timeout(Duration::from_millis(600)));
    assert!(started.elapsed() < Duration::from_secs(3));
    let mut b = EndpointAgent { base_url: "https://example.invalid/v1".into(), model: "m".into(), key_env: None };
    assert!(b.propose(&request(), &limits).unwrap_err().to_string().contains("https endpoints are not supported"));
}

#[test]
fn a_changed_statement_is_refused_before_any_agent_runs() {
    let mut r = request();
    r.statement.push_str("-- changed\n");
    let mut a = CommandAgent::new(double("learns.sh"));
    let out = prove(&r, &mut a, None, &Policy::default(), &budget(3, Duration::from_secs(5), Duration::from_secs(10)));
    assert!(matches!(&out, Outcome::NotProved { reason, attempts } if reason.contains("does not match its pin") && attempts.is_empty()), "{out:?}");
}
