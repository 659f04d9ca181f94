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

use crate::log::error;
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
    let reader = tokio::spawn(pump_input(input, to_server, replies, limit));
    let writer = tokio::spawn(write_output(from_server, replies_rx, output));
    tower_lsp_server::Server::new(server_in, server_out, socket).concurrency_level(64).serve(service).await;
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
/// Dropping `to_server` (at the end of the input) ends the protocol layer.
async fn pump_input<I: AsyncRead + Unpin>(input: I, mut to_server: DuplexStream, replies: mpsc::Sender<Vec<u8>>, limit: usize) {
    let mut frames = FrameReader::new(input, limit);
    while let Some(frame) = frames.next().await {
        let rejection = match frame {
            Frame::Body(body) => match validate::validate(&body) {
                Ok(()) => {
                    if to_server.write_all(&encode(&body)).await.is_err() {
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
