//! One solver process and the three threads that keep its pipes moving.
//!
//! A writer thread feeds stdin, so a solver that stops reading can never block the caller; a
//! reader thread cuts stdout into complete S-expressions and sends them over a channel; a third
//! keeps the tail of stderr for error messages. The caller waits on the channel in slices of a
//! few milliseconds, checking its deadline and its cancellation flag in between, and kills the
//! process when either says stop. The threads end by themselves when the pipes close.

use crate::cancel::Cancellation;
use crate::sexp::{complete_prefix, parse_all, Sexp};
use std::collections::BTreeSet;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a waiting caller looks at its cancellation flag.
pub(crate) const POLL: Duration = Duration::from_millis(5);

/// How much of stderr is kept for error messages.
const STDERR_TAIL: usize = 2048;

/// What the reader thread sends.
enum Reply {
    Answer(Sexp),
    Malformed(String),
    Closed,
}

/// How waiting for an answer ended.
pub(crate) enum Wait {
    Answer(Sexp),
    /// Output that is not an S-expression (the text, for the error message).
    Malformed(String),
    /// Stdout closed: the process exited or was killed.
    Closed,
    TimedOut,
    Cancelled,
}

/// The solver processes alive in this program, by process id, so that a program about to exit
/// can stop them ([`stop_all`]). A solver in the middle of a query does not read its stdin, so
/// it notices its parent's exit only when the query ends (Yices has no limit of its own but a
/// generous backstop, see `SolverKind::args`).
static LIVE: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<u32>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Kills every solver process this program started that is still alive; for a program that is
/// about to exit (the language server after `exit`) while checks may still be asking queries.
/// Those queries then fail as if their solver had crashed.
pub fn stop_all() {
    for &pid in live().iter() {
        // SAFETY: `kill` has no memory effects. A pid in `LIVE` is a child not yet reaped: it
        // leaves the set before `wait` and whenever `try_wait` reaps it, so it names no other
        // process.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
    }
}

pub(crate) struct Process {
    child: Child,
    input: Sender<String>,
    replies: Receiver<Reply>,
    stderr: Arc<Mutex<String>>,
    /// The stderr thread, which ends once the process's stderr closes.
    stderr_reader: std::thread::JoinHandle<()>,
}

impl Process {
    pub fn spawn(program: &Path, args: &[String]) -> io::Result<Process> {
        // ETXTBSY: the program file was just written and another thread's fork still holds it
        // open for writing (a solver being installed, or a test's script); it passes quickly.
        let start = || Command::new(program).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
        let mut attempt = start();
        for _ in 0..20 {
            match &attempt {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(25));
                    attempt = start();
                }
                _ => break,
            }
        }
        let mut child = attempt?;
        let (Some(mut stdin), Some(stdout), Some(mut stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the solver's pipes could not be opened"));
        };

        let (input, to_write) = mpsc::channel::<String>();
        std::thread::Builder::new().name("smt-stdin".into()).spawn(move || {
            for text in to_write {
                if stdin.write_all(text.as_bytes()).and_then(|_| stdin.flush()).is_err() {
                    break;
                }
            }
        })?;

        let (send_reply, replies) = mpsc::channel();
        std::thread::Builder::new().name("smt-stdout".into()).spawn(move || read_answers(stdout, send_reply))?;

        let tail = Arc::new(Mutex::new(String::new()));
        let keep = Arc::clone(&tail);
        let stderr_reader = std::thread::Builder::new().name("smt-stderr".into()).spawn(move || {
            let mut chunk = [0u8; 1024];
            while let Ok(n) = stderr.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                let Ok(mut tail) = keep.lock() else { break };
                tail.push_str(&String::from_utf8_lossy(&chunk[..n]));
                if tail.len() > STDERR_TAIL {
                    let cut = tail.len() - STDERR_TAIL;
                    let cut = (cut..tail.len()).find(|i| tail.is_char_boundary(*i)).unwrap_or(tail.len());
                    tail.drain(..cut);
                }
            }
        })?;

        live().insert(child.id());
        Ok(Process { child, input, replies, stderr: tail, stderr_reader })
    }

    /// Queues text for the solver's stdin; false when the writer has stopped (the pipe broke).
    pub fn send(&self, text: String) -> bool {
        self.input.send(text).is_ok()
    }

    /// Waits for the next answer until `deadline`, or until the process has used `cpu_limit`
    /// of CPU time in all (see [`Process::cpu_time`]), looking at both and at `cancel` every
    /// [`POLL`].
    pub fn wait(&self, deadline: Instant, cpu_limit: Option<Duration>, cancel: &(impl Cancellation + ?Sized)) -> Wait {
        loop {
            if cancel.is_cancelled() {
                return Wait::Cancelled;
            }
            let now = Instant::now();
            if now >= deadline {
                return Wait::TimedOut;
            }
            if cpu_limit.is_some_and(|limit| self.cpu_time().is_some_and(|used| used >= limit)) {
                return Wait::TimedOut;
            }
            match self.replies.recv_timeout(POLL.min(deadline - now)) {
                Ok(Reply::Answer(e)) => return Wait::Answer(e),
                Ok(Reply::Malformed(text)) => return Wait::Malformed(text),
                Ok(Reply::Closed) | Err(RecvTimeoutError::Disconnected) => return Wait::Closed,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The CPU time the process has used so far, where the system tells (Linux's
    /// `/proc/<pid>/schedstat`, in nanoseconds); `None` elsewhere or once the process is gone.
    pub fn cpu_time(&self) -> Option<Duration> {
        let text = std::fs::read_to_string(format!("/proc/{}/schedstat", self.child.id())).ok()?;
        let nanos: u64 = text.split_whitespace().next()?.parse().ok()?;
        Some(Duration::from_nanos(nanos))
    }

    /// Whether the process has ended (killed from outside, crashed, or exited).
    pub fn has_exited(&mut self) -> bool {
        !matches!(self.try_reap(), Ok(None))
    }

    /// `try_wait`, and the id out of [`LIVE`] once the process is reaped (or beyond reach):
    /// from then on it may name another process. Under the lock, so that [`stop_all`] never
    /// sees it in between.
    fn try_reap(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        let mut live = live();
        let reaped = self.child.try_wait();
        if !matches!(reaped, Ok(None)) {
            live.remove(&self.child.id());
        }
        reaped
    }

    /// How the process ended and what it last wrote to stderr, for an error message. Waits a
    /// moment for the exit status and the last of stderr, since stdout closes first.
    pub fn obituary(&mut self) -> String {
        let until = Instant::now() + Duration::from_millis(200);
        while !self.stderr_reader.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        let status = loop {
            match self.try_reap() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(2)),
                _ => break None,
            }
        };
        let mut text = match status {
            Some(s) => format!("the process ended ({s})"),
            None => "the process closed its output".to_string(),
        };
        let tail = self.stderr.lock().map(|t| t.trim().to_string()).unwrap_or_default();
        if !tail.is_empty() {
            text.push_str(&format!("; stderr: {tail}"));
        }
        text
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        live().remove(&self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The reader thread: cuts the output into complete top-level S-expressions.
fn read_answers(stdout: impl Read, replies: Sender<Reply>) {
    let mut reader = BufReader::new(stdout);
    let mut pending = String::new();
    let mut line = Vec::new();
    loop {
        while let Some(end) = complete_prefix(&pending) {
            let chunk: String = pending.drain(..end).collect();
            let sent = match parse_all(&chunk) {
                Ok(exprs) => exprs.into_iter().all(|e| replies.send(Reply::Answer(e)).is_ok()),
                Err(_) => replies.send(Reply::Malformed(chunk.trim().to_string())).is_ok(),
            };
            if !sent {
                return;
            }
        }
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => {
                let _ = replies.send(Reply::Closed);
                return;
            }
            Ok(_) => pending.push_str(&String::from_utf8_lossy(&line)),
        }
    }
}
