//! The `segment` task against labelled test-double agents (`tests/agents/segments.sh`,
//! `garbage.sh`, and a small in-test HTTP server speaking the chat-completions format): a valid
//! proposal is accepted; an invalid one (a gap, a cut that is not at a sound point) is refused
//! with the reason fed back, and the corrected answer is accepted; garbage costs an attempt.

use agent::prove::Budget;
use agent::segmentation::{propose_segmentation, request, SegmentOutcome};
use agent::{BuiltIn, CommandAgent, EndpointAgent, Limits, SegmentRequest};
use lean::segment::{self, Proposal, ProposedSegment};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

fn double(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agents").join(name).display().to_string()
}

const PTX_FILE: &str = "reduce_sum_shared.ptx";

/// The corpus kernel the tests cut: a shared-memory reduction with barriers.
fn kernel() -> (model::Kernel, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus").join(PTX_FILE);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let (_, k) = model::lower_module(&parsed.module).into_iter().next().unwrap();
    (k.unwrap_or_else(|e| panic!("{}", e.message)), text)
}

fn budget(attempts: u32) -> Budget {
    Budget { attempts, total: Duration::from_secs(60), per_call: Limits { timeout: Duration::from_secs(20), ..Limits::default() }, ..Budget::default() }
}

fn seg(name: &str, start: usize, stop: usize) -> ProposedSegment {
    ProposedSegment { name: name.into(), start, stop, specification: Some(format!("{name} in words")) }
}

/// A valid proposal other than LARK's own: two segments, cut at the middle sound cut.
fn two_halves(k: &model::Kernel) -> Proposal {
    let cuts = segment::sound_cuts(k);
    let len = segment::flat_len(k);
    let mid = cuts[cuts.len() / 2];
    assert!(0 < mid && mid < len, "{cuts:?}");
    Proposal { segments: vec![seg("first_half", 0, mid), seg("second_half", mid, len)] }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-segments-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &std::path::Path, name: &str, p: &Proposal) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(p).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn the_request_shows_the_instructions_the_sound_cuts_and_lark_s_own_proposal() {
    let (k, ptx) = kernel();
    let req = request(&k, &ptx, Some("def forward(x): return x.sum()".into()));
    assert_eq!(req.task, "segment");
    assert_eq!(req.kernel, "reduce_sum_shared");
    assert_eq!(req.instructions.len(), segment::flat_len(&k));
    assert!(req.instructions.iter().enumerate().all(|(i, inst)| inst.index == i && !inst.text.is_empty()), "{:#?}", req.instructions);
    assert!(req.instructions[0].text.starts_with("ld.param.u32"), "{:?}", req.instructions[0]);
    assert_eq!(req.sound_cuts, segment::sound_cuts(&k));
    assert_eq!(req.lark_proposal, Proposal::of_segments(&segment::propose(&k)));
    // LARK's own proposal is valid, and the JSON round-trips.
    assert!(segment::validate_proposal(&k, &req.lark_proposal).is_ok());
    let back: SegmentRequest = serde_json::from_str(&serde_json::to_string(&req).unwrap()).unwrap();
    assert_eq!(back, req);
}

#[test]
fn a_valid_proposal_is_accepted_at_once() {
    let (k, ptx) = kernel();
    let dir = scratch("good");
    let good = write(&dir, "good.json", &two_halves(&k));
    let sent = dir.join("request.json");
    let mut a = CommandAgent::new(format!("LARK_TEST_REQUEST_OUT={} {} {good}", sent.display(), double("segments.sh")));
    let out = propose_segmentation(&k, &request(&k, &ptx, None), &mut a, &budget(3));
    let SegmentOutcome::Accepted { proposal, segments, attempts } = out else { panic!("{out:?}") };
    assert_eq!(proposal, two_halves(&k));
    assert_eq!(
        segments.iter().map(|s| (s.name.as_str(), s.title.as_str())).collect::<Vec<_>>(),
        [("first_half", "first_half in words"), ("second_half", "second_half in words")]
    );
    assert!(attempts.is_empty());
    let asked: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sent).unwrap()).unwrap();
    assert_eq!(asked["task"], "segment", "the command agent is told which task it is given");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_invalid_proposal_is_refused_with_the_reason_fed_back_and_the_correction_accepted() {
    let (k, ptx) = kernel();
    let len = segment::flat_len(&k);
    let cuts = segment::sound_cuts(&k);
    let mid = two_halves(&k).segments[1].start;
    let unsound = (1..len).find(|i| !cuts.contains(i)).expect("a point that is not a sound cut");
    let cases = [
        ("gap", Proposal { segments: vec![seg("a", 0, mid), seg("b", mid + 1, len)] }, "segments must be contiguous"),
        ("unsound", Proposal { segments: vec![seg("a", 0, unsound), seg("b", unsound, len)] }, "neither the start of a basic block nor right after a barrier"),
    ];
    for (name, bad, why) in cases {
        let dir = scratch(name);
        let (first, then) = (write(&dir, "bad.json", &bad), write(&dir, "good.json", &two_halves(&k)));
        let sent = dir.join("request.json");
        let mut a = CommandAgent::new(format!("LARK_TEST_REQUEST_OUT={} {} {first} {then}", sent.display(), double("segments.sh")));
        let out = propose_segmentation(&k, &request(&k, &ptx, None), &mut a, &budget(3));
        let SegmentOutcome::Accepted { proposal, attempts, .. } = out else { panic!("{name}: {out:?}") };
        assert_eq!(proposal, two_halves(&k), "{name}");
        assert_eq!(attempts.len(), 1, "{name}: {attempts:#?}");
        assert_eq!(attempts[0].proposal.as_ref(), Some(&bad), "{name}");
        assert!(attempts[0].error.contains(why), "{name}: {}", attempts[0].error);
        // The second request carried the refused proposal and the reason.
        let asked: SegmentRequest = serde_json::from_str(&std::fs::read_to_string(&sent).unwrap()).unwrap();
        assert_eq!(asked.attempts, attempts, "{name}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn garbage_costs_an_attempt_each_until_the_budget_is_spent() {
    let (k, ptx) = kernel();
    let mut a = CommandAgent::new(double("garbage.sh"));
    let out = propose_segmentation(&k, &request(&k, &ptx, None), &mut a, &budget(3));
    let SegmentOutcome::Refused { reason, attempts } = out else { panic!("{out:?}") };
    assert!(reason.contains("no valid segmentation in 3 attempts"), "{reason}");
    assert_eq!(attempts.len(), 3);
    assert!(attempts.iter().all(|a| a.proposal.is_none() && a.error.contains("not usable")), "{attempts:#?}");
    // A proof answer to a segment request is garbage too.
    let mut p = CommandAgent::new(double("learns.sh"));
    let out = propose_segmentation(&k, &request(&k, &ptx, None), &mut p, &budget(1));
    assert!(matches!(&out, SegmentOutcome::Refused { attempts, .. } if attempts[0].error.contains("unknown field `proof`")), "{out:?}");
}

#[test]
fn the_built_in_agent_answers_with_lark_s_own_cuts_once() {
    let (k, ptx) = kernel();
    let req = request(&k, &ptx, None);
    let out = propose_segmentation(&k, &req, &mut BuiltIn::new(), &budget(3));
    assert!(matches!(&out, SegmentOutcome::Accepted { proposal, attempts, .. } if *proposal == req.lark_proposal && attempts.is_empty()), "{out:?}");
    // A request made for another kernel is refused before any agent is asked.
    let mut other = req.clone();
    other.instructions.pop();
    let out = propose_segmentation(&k, &other, &mut BuiltIn::new(), &budget(3));
    assert!(matches!(&out, SegmentOutcome::Refused { reason, attempts } if reason.contains("another kernel") && attempts.is_empty()), "{out:?}");
}

/// A TEST DOUBLE of a chat-completions server: answers one connection with `content` and
/// returns the request it read.
fn fake_endpoint(content: String) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let got = lsp_test_client::fake_http::read_request(&mut s);
        let body = serde_json::json!({ "choices": [ { "message": { "role": "assistant", "content": content } } ] }).to_string();
        lsp_test_client::fake_http::respond(&mut s, 200, &body);
        got
    });
    (url, handle)
}

#[test]
fn a_chat_completions_endpoint_answers_segment_requests_in_a_json_block() {
    let (k, ptx) = kernel();
    let answer = format!("Cut it in two:\n```json\n{}\n```", serde_json::to_string(&two_halves(&k)).unwrap());
    let (url, server) = fake_endpoint(answer);
    let mut a = EndpointAgent { base_url: url, model: "test-model".into(), key_env: None };
    let out = propose_segmentation(&k, &request(&k, &ptx, None), &mut a, &budget(1));
    assert!(matches!(&out, SegmentOutcome::Accepted { proposal, .. } if *proposal == two_halves(&k)), "{out:?}");
    let seen = server.join().unwrap();
    assert!(seen.contains("You cut GPU kernels into segments"), "the segment prompt is used");
    assert!(seen.contains("\\\"task\\\":\\\"segment\\\""), "{seen}");
}
