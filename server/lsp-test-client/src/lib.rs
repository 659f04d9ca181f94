//! A small synchronous LSP client over a child process's stdio, for end-to-end tests and
//! `lark bench lsp`: JSON-RPC framing, requests with ids, notifications kept in arrival order,
//! and default answers to the server's own requests.
//!
//! It is test and benchmark support, not part of the server: it lives in its own crate so the
//! production `lsp` crate carries none of it. Anything on the server's stdout that is not a
//! well-framed JSON message is recorded (see [`StdioClient::protocol_errors`]), so tests can
//! assert that the server never writes anything else there.

pub mod fake_http;

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct StdioClient {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: i64,
    /// Messages from the server not consumed yet (notifications, and responses nobody waited for).
    pub inbox: VecDeque<Value>,
    /// Answers to `workspace/configuration`.
    pub configuration: Value,
    /// What the server wrote on stdout that was not a framed JSON message.
    garbage: Arc<Mutex<Vec<String>>>,
    /// The server's stderr, when [`StdioClient::spawn_capturing_stderr`] started it.
    stderr: Arc<Mutex<String>>,
}

/// Writes one framed message.
pub fn write_message(w: &mut impl Write, msg: &Value) -> std::io::Result<()> {
    let body = serde_json::to_string(msg)?;
    write!(w, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    w.flush()
}

/// Reads one framed message; `None` at the end of the stream or on anything that is not a
/// framed JSON message.
pub fn read_message(r: &mut impl BufRead) -> Option<Value> {
    read_frame(r).ok().flatten()
}

/// Reads one framed message: `Ok(None)` at the end of the stream, `Err` with a description of
/// what was wrong with the frame (the stream cannot be trusted after that).
pub fn read_frame(r: &mut impl BufRead) -> Result<Option<Value>, String> {
    let mut len = None;
    let mut first = true;
    loop {
        let mut line = String::new();
        match r.read_line(&mut line) {
            Ok(0) if first => return Ok(None),
            Ok(0) => return Err("the stream ended inside a header".into()),
            Ok(_) => {}
            Err(e) => return Err(format!("reading a header: {e}")),
        }
        first = false;
        if !line.ends_with("\r\n") {
            return Err(format!("a header line not ended by CRLF: {line:?}"));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        match line.split_once(':') {
            Some((name, v)) if name.eq_ignore_ascii_case("Content-Length") => {
                len = Some(v.trim().parse::<usize>().map_err(|e| format!("bad Content-Length {v:?}: {e}"))?);
            }
            Some((name, _)) if name.eq_ignore_ascii_case("Content-Type") => {}
            _ => return Err(format!("not a header: {line:?}")),
        }
    }
    let len = len.ok_or("a header block without Content-Length")?;
    let mut buf = vec![0; len];
    r.read_exact(&mut buf).map_err(|e| format!("reading a body of {len} bytes: {e}"))?;
    serde_json::from_slice(&buf).map(Some).map_err(|e| format!("a body that is not JSON ({e}): {:?}", String::from_utf8_lossy(&buf)))
}

impl StdioClient {
    /// Starts the server command with piped stdin and stdout (stderr as `cmd` says: inherited
    /// by default).
    pub fn spawn(mut cmd: Command) -> std::io::Result<StdioClient> {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or_else(|| std::io::Error::other("the child has no stdout pipe"))?;
        let (tx, rx) = mpsc::channel();
        let garbage = Arc::new(Mutex::new(Vec::new()));
        let seen = garbage.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                match read_frame(&mut r) {
                    Ok(Some(m)) => {
                        if tx.send(m).is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        seen.lock().unwrap_or_else(|p| p.into_inner()).push(e);
                        break;
                    }
                }
            }
        });
        Ok(StdioClient { child, stdin, rx, next_id: 1, inbox: VecDeque::new(), configuration: Value::Null, garbage, stderr: Arc::default() })
    }

    /// Starts the server like [`StdioClient::spawn`], collecting its stderr (read as it comes,
    /// so the server never blocks on it); see [`StdioClient::stderr`].
    pub fn spawn_capturing_stderr(mut cmd: Command) -> std::io::Result<StdioClient> {
        cmd.stderr(Stdio::piped());
        let mut c = StdioClient::spawn(cmd)?;
        if let Some(mut err) = c.child.stderr.take() {
            let sink = c.stderr.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = std::io::Read::read(&mut err, &mut chunk) {
                    sink.lock().unwrap_or_else(|p| p.into_inner()).push_str(&String::from_utf8_lossy(&chunk[..n]));
                }
            });
        }
        Ok(c)
    }

    /// What the server wrote on stderr so far (empty unless started by
    /// [`StdioClient::spawn_capturing_stderr`]).
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// What the server wrote on stdout that was not a framed JSON message (reading stops at
    /// the first such thing).
    pub fn protocol_errors(&self) -> Vec<String> {
        self.garbage.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Writes raw bytes to the server's stdin (for tests of malformed input).
    pub fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self.stdin.as_mut() {
            Some(w) => {
                w.write_all(bytes)?;
                w.flush()
            }
            None => Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdin is closed")),
        }
    }

    /// Closes the server's stdin (the end of the stream, as when an editor goes away).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits up to `timeout` for the server process to end by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, msg: &Value) {
        if let Some(w) = self.stdin.as_mut() {
            let _ = write_message(w, msg);
        }
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and returns its id without waiting.
    pub fn request_async(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// Sends a request and waits for its response: `Ok(result)` or `Err(error)`.
    pub fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value, Value> {
        let id = self.request_async(method, params);
        self.response(id, timeout)
    }

    pub fn response(&mut self, id: i64, timeout: Duration) -> Result<Value, Value> {
        let is_it = |m: &Value| m.get("id") == Some(&json!(id)) && m.get("method").is_none();
        match self.wait_for(timeout, is_it) {
            Some(m) => match m.get("error") {
                Some(e) => Err(e.clone()),
                None => Ok(m.get("result").cloned().unwrap_or(Value::Null)),
            },
            None => Err(json!({ "message": format!("no response to request {id} within {timeout:?}") })),
        }
    }

    /// Answers a request from the server the way an editor would.
    fn answer(&mut self, m: &Value) {
        let Some(id) = m.get("id").cloned() else { return };
        let result = match m["method"].as_str() {
            Some("workspace/configuration") => {
                let n = m["params"]["items"].as_array().map_or(1, Vec::len);
                Value::Array(vec![self.configuration.clone(); n])
            }
            _ => Value::Null,
        };
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": result }));
    }

    /// The next message (in the inbox or arriving within `timeout`) that satisfies `pred`;
    /// it is removed, the others stay.
    pub fn wait_for(&mut self, timeout: Duration, mut pred: impl FnMut(&Value) -> bool) -> Option<Value> {
        if let Some(i) = self.inbox.iter().position(&mut pred) {
            return self.inbox.remove(i);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(m) => {
                    if m.get("method").is_some() && m.get("id").is_some() {
                        self.answer(&m);
                    }
                    if pred(&m) {
                        return Some(m);
                    }
                    self.inbox.push_back(m);
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The next notification with this method (and, if given, for this URI).
    pub fn notification(&mut self, method: &str, uri: Option<&str>, timeout: Duration) -> Option<Value> {
        self.wait_for(timeout, |m| m["method"] == method && m.get("id").is_none() && uri.is_none_or(|u| m["params"]["uri"] == u))
    }

    /// Every message received so far that is still in the inbox, after waiting `settle`.
    pub fn drain(&mut self, settle: Duration) -> Vec<Value> {
        self.wait_for(settle, |_| false);
        self.inbox.drain(..).collect()
    }

    /// `initialize` + `initialized`, with the capabilities of a typical editor.
    pub fn initialize(&mut self, root_uri: &str, options: Value) -> Result<Value, Value> {
        let caps = json!({
            "workspace": {
                "workspaceEdit": { "documentChanges": true, "resourceOperations": ["create"] },
                "configuration": true,
                "didChangeWatchedFiles": { "dynamicRegistration": true },
                "codeLens": { "refreshSupport": false }
            },
            "window": { "workDoneProgress": true },
            "textDocument": {
                "publishDiagnostics": { "relatedInformation": true, "versionSupport": true },
                "hover": { "contentFormat": ["markdown", "plaintext"] }
            }
        });
        let r = self.request(
            "initialize",
            json!({ "processId": std::process::id(), "rootUri": root_uri, "workspaceFolders": [{ "uri": root_uri, "name": "ws" }], "capabilities": caps, "initializationOptions": options }),
            Duration::from_secs(30),
        )?;
        self.notify("initialized", json!({}));
        Ok(r)
    }

    /// `shutdown` + `exit`, keeping stdin open; waits for the process to end.
    pub fn shutdown(mut self, timeout: Duration) -> Option<ExitStatus> {
        let _ = self.request("shutdown", Value::Null, timeout);
        self.notify("exit", Value::Null);
        let status = self.wait_exit(timeout);
        if status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        status
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
