//! A small synchronous LSP client over a child process's stdio, for end-to-end tests and
//! `lark bench lsp`: JSON-RPC framing, requests with ids, notifications kept in arrival order,
//! and default answers to the server's own requests.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
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
}

/// Writes one framed message.
pub fn write_message(w: &mut impl Write, msg: &Value) -> std::io::Result<()> {
    let body = serde_json::to_string(msg)?;
    write!(w, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    w.flush()
}

/// Reads one framed message; `None` at the end of the stream.
pub fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut buf = vec![0; len?];
    r.read_exact(&mut buf).ok()?;
    serde_json::from_slice(&buf).ok()
}

impl StdioClient {
    /// Starts the server command with piped stdio (stderr is inherited).
    pub fn spawn(mut cmd: Command) -> std::io::Result<StdioClient> {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(m) = read_message(&mut r) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        Ok(StdioClient { child, stdin, rx, next_id: 1, inbox: VecDeque::new(), configuration: Value::Null })
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
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
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
