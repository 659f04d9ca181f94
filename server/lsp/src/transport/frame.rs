//! Reading `Content-Length`-framed messages from a byte stream without trusting it.
//!
//! A frame is a header block (`Name: value` lines ended by an empty line) and a body of exactly
//! `Content-Length` bytes. The reader never buffers more than the message limit: a frame that
//! declares more is refused before its body is read. After anything malformed it resynchronises
//! by skipping to the next `Content-Length` header, which cannot occur inside a JSON body (JSON
//! has no bare words and escapes newlines in strings), so one bad frame costs one error, not the
//! rest of the session.

use std::fmt;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The most a header block may take before it is considered garbage.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

const CONTENT_LENGTH: &[u8] = b"content-length";

/// Why a frame was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("a message of {declared} bytes exceeds the limit of {limit} bytes; its body was skipped")]
    TooLarge { declared: Length, limit: usize },
    #[error("expected a header `Name: value`, found `{line}`")]
    NotAHeader { line: String },
    #[error("the header block has no `Content-Length`")]
    MissingContentLength,
    #[error("expected a byte count after `Content-Length:`, found `{value}`")]
    BadContentLength { value: String },
    #[error("the charset `{charset}` is not supported (only utf-8 is)")]
    UnsupportedCharset { charset: String },
    #[error("no end of the header block within {MAX_HEADER_BYTES} bytes")]
    HeaderTooLong,
    #[error("the stream ended inside a message ({got} of {expected} bytes)")]
    Truncated { got: usize, expected: usize },
    #[error("the stream ended inside a header block")]
    TruncatedHeader,
}

/// A declared body length; one that does not even fit 64 bits is still too large.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    Bytes(u64),
    BeyondU64,
}

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Length::Bytes(n) => write!(f, "{n}"),
            Length::BeyondU64 => f.write_str("more than 2^64"),
        }
    }
}

/// What the stream held next.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Body(Vec<u8>),
    Bad(FrameError),
}

pub struct FrameReader<R> {
    inner: R,
    buf: Vec<u8>,
    limit: usize,
    /// Skipping to the next `Content-Length` after a bad frame.
    resync: bool,
    eof: bool,
}

/// A complete header block: its length in bytes and the declared body length.
enum Headers {
    Incomplete,
    /// With `refuse`, the frame is read whole and then refused (a header it cannot honour).
    Done {
        len: usize,
        content_length: Length,
        refuse: Option<FrameError>,
    },
    /// A bad block; `skip` bytes of it can be dropped before resynchronising.
    Bad {
        error: FrameError,
        skip: usize,
    },
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Reads frames whose bodies are at most `limit` bytes.
    pub fn new(inner: R, limit: usize) -> FrameReader<R> {
        FrameReader { inner, buf: Vec::new(), limit, resync: false, eof: false }
    }

    /// The next frame, `None` at the end of the stream. Cancel-safe: bytes already read stay
    /// buffered for the next call.
    pub async fn next(&mut self) -> Option<Frame> {
        loop {
            if self.resync {
                match find_header_name(&self.buf) {
                    Some(at) => {
                        self.buf.drain(..at);
                        self.resync = false;
                    }
                    None => {
                        // Keep what could be the start of the header name.
                        let keep = self.buf.len().min(CONTENT_LENGTH.len() - 1);
                        self.buf.drain(..self.buf.len() - keep);
                        if self.eof {
                            self.buf.clear();
                            return None;
                        }
                        self.fill().await;
                        continue;
                    }
                }
            }
            // Blank lines between messages are tolerated.
            let blank = self.buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
            self.buf.drain(..blank);
            if self.buf.is_empty() {
                if self.eof {
                    return None;
                }
                self.fill().await;
                continue;
            }
            match parse_headers(&self.buf) {
                Headers::Bad { error, skip } => {
                    self.buf.drain(..skip.clamp(1, self.buf.len()));
                    self.resync = true;
                    return Some(Frame::Bad(error));
                }
                Headers::Incomplete if self.eof => {
                    self.buf.clear();
                    return Some(Frame::Bad(FrameError::TruncatedHeader));
                }
                Headers::Incomplete => self.fill().await,
                Headers::Done { len, content_length, refuse } => {
                    let Some(content_length) = self.within_limit(content_length) else {
                        self.buf.drain(..len);
                        self.resync = true;
                        return Some(Frame::Bad(FrameError::TooLarge { declared: content_length, limit: self.limit }));
                    };
                    let end = len + content_length;
                    if self.buf.len() >= end {
                        let body = self.buf[len..end].to_vec();
                        self.buf.drain(..end);
                        return Some(match refuse {
                            Some(e) => Frame::Bad(e),
                            None => Frame::Body(body),
                        });
                    }
                    if self.eof {
                        let got = self.buf.len() - len;
                        self.buf.clear();
                        return Some(Frame::Bad(FrameError::Truncated { got, expected: content_length }));
                    }
                    self.buf.reserve(end - self.buf.len());
                    self.fill().await;
                }
            }
        }
    }

    fn within_limit(&self, length: Length) -> Option<usize> {
        match length {
            Length::Bytes(n) => usize::try_from(n).ok().filter(|&n| n <= self.limit),
            Length::BeyondU64 => None,
        }
    }

    /// Puts bytes back in front of the stream: a body that turned out not to be JSON may hold
    /// the start of the next message (its `Content-Length` was too large).
    pub fn unread(&mut self, bytes: &[u8]) {
        self.buf.splice(0..0, bytes.iter().copied());
    }

    async fn fill(&mut self) {
        self.buf.reserve(64 * 1024);
        match self.inner.read_buf(&mut self.buf).await {
            Ok(0) | Err(_) => self.eof = true,
            Ok(_) => {}
        }
    }
}

/// Where a `Content-Length` header name starts in `bytes` (ASCII case-insensitive), if
/// anywhere.
pub fn find_header_name(bytes: &[u8]) -> Option<usize> {
    bytes.windows(CONTENT_LENGTH.len()).position(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
}

fn parse_headers(buf: &[u8]) -> Headers {
    let mut content_length: Option<Result<Length, FrameError>> = None;
    let mut refuse = None;
    let mut at = 0;
    loop {
        let window = &buf[at..buf.len().min(MAX_HEADER_BYTES)];
        let Some(nl) = window.iter().position(|&b| b == b'\n') else {
            return if buf.len() >= MAX_HEADER_BYTES { Headers::Bad { error: FrameError::HeaderTooLong, skip: at.max(1) } } else { Headers::Incomplete };
        };
        let raw = &window[..nl];
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let next = at + nl + 1;
        if line.is_empty() {
            return match content_length {
                Some(Ok(n)) => Headers::Done { len: next, content_length: n, refuse },
                Some(Err(error)) => Headers::Bad { error, skip: next },
                None => Headers::Bad { error: FrameError::MissingContentLength, skip: next },
            };
        }
        let text = String::from_utf8_lossy(line);
        let Some((name, value)) = text.split_once(':').filter(|(n, _)| !n.is_empty() && n.bytes().all(is_token_byte)) else {
            return Headers::Bad { error: FrameError::NotAHeader { line: elide(&text) }, skip: next };
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            content_length = Some(content_length_value(value));
        } else if name.eq_ignore_ascii_case("content-type") {
            let charset = value.split(';').skip(1).map(str::trim).find_map(|p| p.strip_prefix("charset="));
            if let Some(cs) = charset.filter(|cs| !matches!(cs.to_ascii_lowercase().as_str(), "utf-8" | "utf8")) {
                refuse = Some(FrameError::UnsupportedCharset { charset: elide(cs) });
            }
        }
        at = next;
    }
}

/// `Content-Length`'s value: digits only (no sign, no spaces inside).
fn content_length_value(value: &str) -> Result<Length, FrameError> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FrameError::BadContentLength { value: elide(value) });
    }
    Ok(value.parse::<u64>().map_or(Length::BeyondU64, Length::Bytes))
}

/// RFC 7230 token characters (header names).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Garbage is quoted in log lines and replies: keep it short.
fn elide(s: &str) -> String {
    const KEEP: usize = 60;
    if s.chars().count() <= KEEP {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(KEEP).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// Reads every frame of `input` (fed in chunks of `chunk` bytes) with a limit of 32 bytes and
    /// renders them one per line.
    fn frames(input: &[u8], chunk: usize) -> String {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let (mut w, r) = tokio::io::duplex(chunk.max(1));
            let data = input.to_vec();
            let writer = tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                for c in data.chunks(chunk.max(1)) {
                    if w.write_all(c).await.is_err() {
                        return;
                    }
                }
            });
            let mut reader = FrameReader::new(r, 32);
            let mut out = String::new();
            while let Some(f) = reader.next().await {
                match f {
                    Frame::Body(b) => out.push_str(&format!("body {}\n", String::from_utf8_lossy(&b))),
                    Frame::Bad(e) => out.push_str(&format!("bad: {e}\n")),
                }
            }
            let _ = writer.await;
            out
        })
    }

    fn check(input: &str, expect: Expect) {
        let whole = frames(input.as_bytes(), input.len());
        // The same frames whatever the chunking of the stream.
        for chunk in [1, 3, 7] {
            assert_eq!(frames(input.as_bytes(), chunk), whole, "chunks of {chunk}");
        }
        expect.assert_eq(&whole);
    }

    #[test]
    fn well_formed_frames() {
        check(
            "Content-Length: 2\r\n\r\n{}Content-Length: 7\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[1,2,3]\r\n\r\ncontent-length:1\n\n5",
            expect![[r#"
                body {}
                body [1,2,3]
                body 5
            "#]],
        );
    }

    #[test]
    fn a_too_large_frame_is_refused_and_skipped() {
        check(
            "Content-Length: 33\r\n\r\n{\"x\": \"0123456789012345678901234\"}Content-Length: 2\r\n\r\n{}",
            expect![[r#"
                bad: a message of 33 bytes exceeds the limit of 32 bytes; its body was skipped
                body {}
            "#]],
        );
        check(
            "Content-Length: 99999999999999999999999999\r\n\r\nContent-Length: 2\r\n\r\n{}",
            expect![[r#"
                bad: a message of more than 2^64 bytes exceeds the limit of 32 bytes; its body was skipped
                body {}
            "#]],
        );
    }

    #[test]
    fn bad_headers_cost_one_error_each() {
        check(
            "hello world\r\nmore garbage\r\n\r\nContent-Length: 2\r\n\r\n{}",
            expect![[r#"
                bad: expected a header `Name: value`, found `hello world`
                body {}
            "#]],
        );
        check(
            "Content-Length: twelve\r\n\r\nxContent-Type: text/plain\r\n\r\n{}Content-Length: 2\r\n\r\n[]",
            expect![[r#"
                bad: expected a byte count after `Content-Length:`, found `twelve`
                body []
            "#]],
        );
        check(
            "Content-Type: application/json; charset=latin1\r\nContent-Length: 2\r\n\r\n{}Content-Length: 2\r\n\r\n[]",
            expect![[r#"
                bad: the charset `latin1` is not supported (only utf-8 is)
                body []
            "#]],
        );
        check(
            "X-Other: 1\r\n\r\n{}Content-Length: 2\r\n\r\n[]",
            expect![[r#"
                bad: the header block has no `Content-Length`
                body []
            "#]],
        );
    }

    #[test]
    fn a_truncated_stream_says_so() {
        check(
            "Content-Length: 10\r\n\r\n{\"a\"",
            expect![[r#"
                bad: the stream ended inside a message (4 of 10 bytes)
            "#]],
        );
    }

    #[test]
    fn an_endless_header_is_garbage() {
        let mut input = vec![b'a'; MAX_HEADER_BYTES + 10];
        input.extend_from_slice(b"\r\n\r\nContent-Length: 2\r\n\r\n{}");
        expect![[r#"
            bad: no end of the header block within 8192 bytes
            body {}
        "#]]
        .assert_eq(&frames(&input, 1000));
    }

    #[test]
    fn unread_bytes_come_first() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut r = FrameReader::new(&b"Content-Length: 2\r\n\r\n[]"[..], 32);
            r.unread(b"Content-Length: 2\r\n\r\n{}");
            assert_eq!(r.next().await, Some(Frame::Body(b"{}".to_vec())));
            assert_eq!(r.next().await, Some(Frame::Body(b"[]".to_vec())));
            assert_eq!(r.next().await, None);
        });
    }
}
