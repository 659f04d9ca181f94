//! The byte streams in front of tower-lsp-server.
//!
//! tower-lsp-server reads stdin itself and stops serving at the first body it cannot decode;
//! it also buffers whatever `Content-Length` a client declares. So the server reads stdin
//! here: frames are cut and size-checked (`frame`), bodies validated (`validate`), and only
//! well-formed messages reach tower through an in-memory pipe. Bad ones are answered here with
//! the JSON-RPC error (-32700 / -32600) and a line on stderr, and serving goes on.
//!
//! Both tower's output and these error replies go to stdout through one writer task, a whole
//! frame at a time, so they never interleave inside a frame.

pub mod frame;
pub mod validate;

use crate::log::{error, info};
use frame::{Frame, FrameError, FrameReader};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;
use tower_lsp_server::{ClientSocket, LanguageServer, LspService};
use validate::{Code, Rejection};

/// The largest message the server accepts (a whole `.ptx` module in a `didOpen` is far less).
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// How long, after the protocol layer ended, its last responses may take to reach stdout.
const DRAIN: Duration = Duration::from_secs(2);

/// How long the protocol layer may go on after `exit` or the end of the input (answering what
/// it had already read) before it is stopped: a request still waiting for a slow analysis, or a
/// handler waiting for the client's answer to a request of the server's, would otherwise keep
/// it alive for as long as that takes.
const AFTER_INPUT: Duration = Duration::from_millis(500);

/// Serves `service` on `input`/`output` until `exit` or the end of the input.
pub async fn serve<S, I, O>(input: I, output: O, service: LspService<S>, socket: ClientSocket, limit: usize)
where
    S: LanguageServer,
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (to_server, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, from_server) = tokio::io::duplex(64 * 1024);
    let (replies, replies_rx) = mpsc::channel(64);
    let mut reader = tokio::spawn(pump_input(input, to_server, replies, limit));
    let writer = tokio::spawn(write_output(from_server, replies_rx, output));
    let protocol = tower_lsp_server::Server::new(server_in, server_out, socket).concurrency_level(64).serve(service);
    let input_ended = async {
        let _ = (&mut reader).await;
        tokio::time::sleep(AFTER_INPUT).await;
    };
    tokio::select! {
        () = protocol => {}
        () = input_ended => info!("stopping {AFTER_INPUT:?} after `exit` or the end of the input, with requests still in flight"),
    }
    // After `exit` the input may stay open: stop reading it.
    reader.abort();
    if tokio::time::timeout(DRAIN, writer).await.is_err() {
        error!("the last responses could not be written within {DRAIN:?}");
    }
}

/// Frames one message.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Reads the client's frames; passes messages on to the protocol layer, answers the others.
/// Returns after `exit` (nothing after it matters) or at the end of the input; dropping
/// `to_server` then ends the protocol layer.
async fn pump_input<I: AsyncRead + Unpin>(input: I, mut to_server: DuplexStream, replies: mpsc::Sender<Vec<u8>>, limit: usize) {
    let mut frames = FrameReader::new(input, limit);
    while let Some(frame) = frames.next().await {
        let rejection = match frame {
            Frame::Body(body) => match validate::validate(&body) {
                Ok(accepted) => {
                    if to_server.write_all(&encode(&body)).await.is_err() {
                        return;
                    }
                    if matches!(&accepted, validate::Accepted::Notification { method } if method == "exit") {
                        return;
                    }
                    continue;
                }
                Err(r) => {
                    // A body that is not JSON may have run into the next message (its
                    // `Content-Length` was too large): read on from that message's header.
                    if r.code == Code::ParseError {
                        if let Some(at) = frame::find_header_name(&body) {
                            frames.unread(&body[at..]);
                        }
                    }
                    error!("refused a message ({}): {}", r.code.number(), r.why);
                    r
                }
            },
            Frame::Bad(e) => {
                let r = frame_rejection(&e);
                error!("refused a message ({}): {e}", r.code.number());
                r
            }
        };
        if let Ok(body) = serde_json::to_vec(&rejection.reply()) {
            if replies.send(encode(&body)).await.is_err() {
                return;
            }
        }
    }
}

/// The reply to a frame that could not be read: a too large message is an invalid request,
/// anything else is not JSON-RPC at all.
fn frame_rejection(e: &FrameError) -> Rejection {
    let code = match e {
        FrameError::TooLarge { .. } => Code::InvalidRequest,
        _ => Code::ParseError,
    };
    Rejection { code, id: serde_json::Value::Null, why: e.to_string() }
}

/// The only writer of `output`: the protocol layer's frames and the error replies, whole
/// frames at a time. Ends when the protocol layer has closed its output.
async fn write_output<O: AsyncWrite + Unpin>(from_server: DuplexStream, mut replies: mpsc::Receiver<Vec<u8>>, mut output: O) {
    let (tx, mut server_frames) = mpsc::channel::<Vec<u8>>(16);
    tokio::spawn(async move {
        let mut frames = FrameReader::new(from_server, usize::MAX);
        while let Some(frame) = frames.next().await {
            match frame {
                Frame::Body(b) => {
                    if tx.send(encode(&b)).await.is_err() {
                        return;
                    }
                }
                Frame::Bad(e) => error!("the protocol layer wrote a bad frame: {e}"),
            }
        }
    });
    loop {
        let bytes = tokio::select! {
            biased;
            frame = server_frames.recv() => match frame {
                Some(b) => b,
                None => break,
            },
            Some(reply) = replies.recv() => reply,
        };
        if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
            // The client is gone; nothing more can be said.
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::frame::{Frame, FrameReader};
    use super::*;
    use serde_json::{json, Value};

    /// Runs the whole server on in-memory pipes (messages limited to 1 KiB), sends each batch
    /// of bytes and reads replies until one with the batch's id arrives, then ends the input.
    /// Returns every message the server wrote (anything but framed JSON fails the test) and
    /// whether `shutdown` came first.
    fn session(steps: Vec<(Vec<u8>, Value)>) -> (Vec<Value>, bool) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let (mut client_out, server_in) = tokio::io::duplex(1 << 16);
            let (server_out, client_in) = tokio::io::duplex(1 << 16);
            let server = tokio::spawn(crate::serve(server_in, server_out, 1024));
            let mut frames = FrameReader::new(client_in, usize::MAX);
            let mut seen: Vec<Value> = vec![];
            for (bytes, until) in steps {
                client_out.write_all(&bytes).await.unwrap();
                while !seen.iter().any(|m| m["id"] == until && m.get("method").is_none()) {
                    match frames.next().await {
                        Some(Frame::Body(b)) => seen.push(serde_json::from_slice(&b).expect("the server writes JSON")),
                        Some(Frame::Bad(e)) => panic!("the server wrote a bad frame: {e}"),
                        None => panic!("the server stopped before answering {until}: {seen:#?}"),
                    }
                }
            }
            drop(client_out);
            while let Some(f) = frames.next().await {
                assert!(matches!(f, Frame::Body(_)), "{f:?}");
            }
            (seen, server.await.unwrap())
        })
    }

    #[test]
    fn bad_messages_are_answered_and_the_session_goes_on() {
        let initialize = encode(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#);
        let oversized = format!("Content-Length: 5000\r\n\r\n{}", "x".repeat(5000)).into_bytes();
        let steps = vec![
            (initialize, json!(1)),
            (encode(b"{oops"), Value::Null),
            (encode(b"[]"), Value::Null),
            (oversized, Value::Null),
            (encode(br#"{"id":2,"method":"shutdown"}"#), json!(2)),
            (encode(br#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#), json!(3)),
            ([encode(br#"{"jsonrpc":"2.0","method":"exit"}"#), encode(br#"{"jsonrpc":"2.0","id":4,"method":"lark/stats"}"#)].concat(), Value::Null),
        ];
        let (out, clean) = session(steps);
        assert!(clean, "shutdown came before exit: {out:#?}");
        let codes = |id: Value| out.iter().filter(|m| m["id"] == id).map(|m| m["error"]["code"].as_i64()).collect::<Vec<_>>();
        assert_eq!(codes(json!(1)), vec![None]);
        assert_eq!(codes(Value::Null), vec![Some(-32700), Some(-32600), Some(-32600)]);
        assert_eq!(codes(json!(2)), vec![Some(-32600)], "a shutdown without \"jsonrpc\" is refused, not obeyed");
        assert_eq!(codes(json!(3)), vec![None]);
        assert_eq!(codes(json!(4)), vec![], "nothing is read after exit");
    }
}
