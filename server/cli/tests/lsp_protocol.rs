//! `lark serve` under malformed protocol input: the real binary, fed correctly framed bodies
//! that are not JSON-RPC messages, bad headers and oversized frames. Each gets the JSON-RPC
//! error (and a line on stderr), and the server goes on answering; nothing but framed JSON ever
//! appears on its stdout.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

fn start() -> StdioClient {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lark"));
    cmd.arg("serve");
    let mut c = StdioClient::spawn_capturing_stderr(cmd).expect("lark serve starts");
    c.initialize("file:///tmp", json!({})).expect("initialize answers");
    c
}

fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// The next error response with a null id (the id of messages that could not be read).
fn error_reply(c: &mut StdioClient, id: Value) -> Value {
    let m = c.wait_for(WAIT, |m| m.get("method").is_none() && m["id"] == id && m.get("error").is_some());
    m.unwrap_or_else(|| panic!("no error reply with id {id}; inbox {:#?}\nstderr:\n{}", c.inbox, c.stderr()))["error"].clone()
}

/// The server still answers a real request.
fn still_serving(c: &mut StdioClient) {
    let stats = c.request("lark/stats", Value::Null, WAIT).unwrap_or_else(|e| panic!("the server stopped answering: {e}\nstderr:\n{}", c.stderr()));
    assert!(stats["kernelChecks"].is_u64(), "{stats}");
}

/// Memory the server process ever held, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn framed_bodies_that_are_not_messages_get_an_error_and_serving_goes_on() {
    let mut c = start();
    // (body, expected code, expected id)
    let cases: [(&[u8], i64, Value); 7] = [
        (b"nonsense{", -32700, Value::Null),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}", -32700, Value::Null),
        (b"[]", -32600, Value::Null),
        (b"[{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}]", -32600, Value::Null),
        (b"5", -32600, Value::Null),
        // Without "jsonrpc", a request whose id can be read is answered under that id.
        (b"{\"id\":3,\"method\":\"shutdown\"}", -32600, json!(3)),
        (b"{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"shutdown\"}", -32600, Value::Null),
    ];
    for (body, code, id) in &cases {
        c.send_raw(&framed(body)).unwrap();
        let e = error_reply(&mut c, id.clone());
        assert_eq!(e["code"], *code, "{} -> {e}", String::from_utf8_lossy(body));
        still_serving(&mut c);
    }
    // The request without "jsonrpc" was a `shutdown`: it must not have been obeyed.
    assert!(c.is_running());
    // stderr is read by its own thread: give the last lines time to arrive.
    let deadline = std::time::Instant::now() + WAIT;
    let mut log = c.stderr();
    while log.matches("refused a message").count() < cases.len() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        log = c.stderr();
    }
    assert_eq!(log.matches("refused a message").count(), cases.len(), "one stderr line per refused message:\n{log}");
    assert_eq!(c.protocol_errors(), Vec::<String>::new(), "only framed JSON on stdout");
    let status = c.shutdown(WAIT).expect("shutdown + exit still work");
    assert!(status.success(), "{status:?}");
}

#[test]
fn bad_headers_and_oversized_frames_are_refused_and_the_stream_resynchronises() {
    let mut c = start();
    let pid = c.pid();
    let before = peak_rss_kib(pid);

    // A header line that is not a header.
    c.send_raw(b"hello there\r\n\r\n").unwrap();
    assert_eq!(error_reply(&mut c, Value::Null)["code"], -32700);
    still_serving(&mut c);

    // A Content-Length far beyond the limit, immediately followed by the next message (the
    // client lied about the length): refused without waiting for the body, and the next
    // message is read.
    c.send_raw(b"Content-Length: 1000000000000\r\n\r\n").unwrap();
    let e = error_reply(&mut c, Value::Null);
    assert_eq!(e["code"], -32600);
    assert!(e["message"].as_str().unwrap().contains("exceeds the limit of 67108864 bytes"), "{e}");
    still_serving(&mut c);

    // A real 100 MiB message: refused, skipped as it streams by, never held in memory.
    let body = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"lark/padding\",\"params\":\"{}\"}}", "a".repeat(100 << 20));
    c.send_raw(&framed(body.as_bytes())).unwrap();
    drop(body);
    assert_eq!(error_reply(&mut c, Value::Null)["code"], -32600);
    still_serving(&mut c);
    let grew = peak_rss_kib(pid).saturating_sub(before);
    assert!(grew < 32 * 1024, "the server's peak memory grew by {grew} KiB while skipping a 100 MiB message");

    // A Content-Length that is too large by a little (under the limit) runs into the next
    // message; the body is not JSON, and the message inside it is still read.
    let next = framed(br#"{"jsonrpc":"2.0","id":"inner","method":"lark/stats"}"#);
    let mut bytes = b"Content-Length: 60\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"".to_vec();
    bytes.extend_from_slice(&next);
    c.send_raw(&bytes).unwrap();
    assert_eq!(error_reply(&mut c, Value::Null)["code"], -32700);
    let inner = c.wait_for(WAIT, |m| m["id"] == "inner").expect("the message after the short body is answered");
    assert!(inner["result"]["kernelChecks"].is_u64(), "{inner}");

    let log = c.stderr();
    assert!(log.contains("exceeds the limit of 67108864 bytes"), "a clear line on stderr:\n{log}");
    assert_eq!(c.protocol_errors(), Vec::<String>::new(), "only framed JSON on stdout");
    let status = c.shutdown(WAIT).expect("shutdown + exit still work");
    assert!(status.success(), "{status:?}");
}

#[test]
fn the_end_of_the_input_inside_a_message_ends_the_server() {
    let mut c = start();
    c.send_raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"").unwrap();
    c.close_stdin();
    let status = c.wait_exit(WAIT).expect("the server exits at the end of its input");
    assert_eq!(status.code(), Some(1), "no shutdown came first");
    assert!(c.stderr().contains("the stream ended inside a message"), "{}", c.stderr());
}
