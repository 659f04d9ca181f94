//! Support for TEST DOUBLES of external HTTP services (an OpenAI-compatible chat-completions
//! endpoint that the proof agents call): read one request off an accepted connection, answer it.
//! Tests build their canned servers from these two calls; the code under test speaks real HTTP.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Reads one HTTP/1.x request (headers and a `Content-Length` body) from `s`, waiting at most
/// half a second for each chunk; returns it as text (lossily decoded).
pub fn read_request(s: &mut TcpStream) -> String {
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let (mut got, mut buf) = (Vec::new(), vec![0u8; 1 << 16]);
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).and_then(|v| v.trim().parse::<usize>().ok()).unwrap_or(0);
            if body.len() >= len {
                break;
            }
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Answers with `status` and a JSON `body` (errors writing are ignored: the client may be gone).
pub fn respond(s: &mut TcpStream, status: u16, body: &str) {
    let _ = write!(s, "HTTP/1.0 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len());
}
