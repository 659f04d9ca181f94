//! Running Lean: a scratch Lake workspace that depends on the library, `lake build`, and
//! `lake env lean FILE`, each with a wall-clock timeout that kills the whole process tree (Lake
//! starts `lean` processes of its own), and Lean's messages parsed into
//! `(file, line, column, severity, text)`.

use crate::toolchain::{Toolchain, TOOLCHAIN_FILE};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Why Lean could not be run (as opposed to Lean rejecting a file, which is a [`CheckResult`]).
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("cannot start `{program}`: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("`{name}` is not a plain file name (letters, digits, `_`, `.`; ending in `.lean`)")]
    BadFileName { name: String },
}

/// What a finished (or killed) process printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessOutput {
    /// The process id, which is also its process group id.
    pub pid: u32,
    /// The exit code; `None` when killed by a signal (the timeout included).
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    /// Killed because its caller cancelled it.
    pub cancelled: bool,
    /// Killed because it printed more than its output cap.
    pub overflowed: bool,
    pub elapsed: Duration,
}

/// Severity of a Lean message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

/// One message of Lean's output.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    pub file: Option<String>,
    /// 1-based line.
    pub line: u32,
    /// 0-based column, as Lean prints it.
    pub column: u32,
    pub severity: Severity,
    pub text: String,
}

/// The outcome of checking one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckResult {
    pub messages: Vec<Message>,
    pub output: ProcessOutput,
}

impl CheckResult {
    /// Lean accepted the file: it finished in time, exited with 0, and reported no error.
    pub fn accepted(&self) -> bool {
        !self.output.timed_out && self.output.status == Some(0) && !self.messages.iter().any(|m| m.severity == Severity::Error)
    }
}

extern "C" {
    /// POSIX `kill(2)`; a negative pid signals the whole process group.
    fn kill(pid: i32, sig: i32) -> i32;
}

const SIGKILL: i32 = 9;

/// Runs a command in its own process group, collects its output, and kills the group when
/// `timeout` passes. Never leaves a process behind.
pub fn run_with_timeout(cmd: Command, timeout: Duration) -> Result<ProcessOutput, RunnerError> {
    run_process(cmd, &ProcessLimits { timeout, ..ProcessLimits::default() })
}

/// What a process is given and how far it may go.
#[derive(Clone, Default)]
pub struct ProcessLimits {
    pub timeout: Duration,
    /// Written to its standard input (then closed); `None`: no input.
    pub stdin: Option<Vec<u8>>,
    /// The most bytes kept of each of stdout and stderr; a process that prints more is killed
    /// (`ProcessOutput::overflowed`). `None`: unlimited.
    pub max_output: Option<usize>,
    /// Polled while it runs; when it says so, the process group is killed.
    pub cancelled: Option<std::sync::Arc<dyn Fn() -> bool + Send + Sync>>,
}

/// Reads a pipe to its end on its own thread (a full pipe must not block the child), keeping at
/// most `cap` bytes and raising `over` when there was more.
fn reader(mut pipe: impl Read + Send + 'static, cap: Option<usize>, over: std::sync::Arc<std::sync::atomic::AtomicBool>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => return buf,
                Ok(n) => {
                    let room = cap.map_or(n, |c| c.saturating_sub(buf.len()).min(n));
                    buf.extend_from_slice(&chunk[..room]);
                    if room < n {
                        over.store(true, Ordering::SeqCst);
                        return buf;
                    }
                }
            }
        }
    })
}

/// Runs a command in its own process group with the given limits. The group is killed on
/// timeout, on cancellation, when the output passes its cap, and when the command exits leaving
/// background processes behind.
pub fn run_process(mut cmd: Command, limits: &ProcessLimits) -> Result<ProcessOutput, RunnerError> {
    use std::os::unix::process::CommandExt;
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.stdin(if limits.stdin.is_some() { Stdio::piped() } else { Stdio::null() }).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its own process group, so that the timeout can kill `lake` and every `lean` it started.
    cmd.process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|source| RunnerError::Spawn { program, source })?;
    let pgid = child.id() as i32;
    if let (Some(input), Some(mut stdin)) = (limits.stdin.clone(), child.stdin.take()) {
        // On its own thread: a child that does not read its input must not block us.
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&input);
        });
    }
    let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let out_reader = child.stdout.take().map(|s| reader(s, limits.max_output, over.clone()));
    let err_reader = child.stderr.take().map(|s| reader(s, limits.max_output, over.clone()));
    let kill_group = || {
        // SAFETY: `kill` has no memory-safety preconditions; the group is the child's own.
        unsafe {
            kill(-pgid, SIGKILL);
        }
    };
    let mut timed_out = false;
    let mut cancelled = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code(),
            Ok(None) => {
                timed_out = start.elapsed() >= limits.timeout;
                cancelled = limits.cancelled.as_ref().is_some_and(|c| c());
                if timed_out || cancelled || over.load(Ordering::SeqCst) {
                    kill_group();
                    break child.wait().ok().and_then(|s| s.code());
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(_) => break None,
        }
    };
    // A child that exited normally can leave background processes in its group; they would keep
    // the pipes (and our readers) open, so they go too. While the group has members its id
    // cannot be reused, so the group found here is still the one we started.
    if !group_members(pgid).is_empty() {
        kill_group();
    }
    let stdout = out_reader.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err_reader.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(ProcessOutput {
        pid: pgid as u32,
        status,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        timed_out,
        cancelled,
        overflowed: over.load(Ordering::SeqCst),
        elapsed: start.elapsed(),
    })
}

/// The processes of process group `pgid` (from `/proc`; empty where `/proc` is unavailable).
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid pgrp …`; `comm` may contain spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.get(2).and_then(|f| f.parse::<i32>().ok()) == Some(pgid) && fields.first() != Some(&"Z") {
            out.push(pid);
        }
    }
    out
}

/// Parses Lean's (and Lake's) messages. A message starts with `FILE:LINE:COL: SEVERITY: text`
/// (Lean; the severity may carry a name in parentheses, `error(lean.unknownIdentifier)`) or
/// `SEVERITY: FILE:LINE:COL: text` (Lake); lines that start no message continue the previous one.
pub fn parse_messages(output: &str) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for line in output.lines() {
        if let Some(m) = parse_header(line) {
            out.push(m);
        } else if let Some(last) = out.last_mut() {
            last.text.push('\n');
            last.text.push_str(line);
        }
    }
    for m in &mut out {
        let trimmed = m.text.trim_end().len();
        m.text.truncate(trimmed);
    }
    out
}

fn severity(word: &str) -> Option<Severity> {
    let base = word.split('(').next().unwrap_or(word);
    match base {
        "error" => Some(Severity::Error),
        "warning" => Some(Severity::Warning),
        "info" | "information" => Some(Severity::Info),
        _ => None,
    }
}

/// `FILE:LINE:COL` → (file, line, column).
fn location(s: &str) -> Option<(String, u32, u32)> {
    let mut parts = s.rsplitn(3, ':');
    let col = parts.next()?.trim().parse().ok()?;
    let line = parts.next()?.trim().parse().ok()?;
    let file = parts.next()?.trim().to_string();
    (!file.is_empty()).then_some((file, line, col))
}

fn parse_header(line: &str) -> Option<Message> {
    // Lean: `path:12:4: error: text` (the path may itself contain `: ` only in odd cases).
    let pieces: Vec<&str> = line.splitn(3, ": ").collect();
    if pieces.len() >= 2 {
        if let (Some((file, l, c)), Some(sev)) = (location(pieces[0]), severity(pieces[1].trim_end_matches(':'))) {
            let text = pieces.get(2).copied().unwrap_or("").to_string();
            return Some(Message { file: Some(file), line: l, column: c, severity: sev, text });
        }
        // `path:12:4: error` with nothing after.
        if let (Some((file, l, c)), true) = (location(pieces[0]), pieces.len() == 2) {
            if let Some(sev) = severity(pieces[1].trim()) {
                return Some(Message { file: Some(file), line: l, column: c, severity: sev, text: String::new() });
            }
        }
        // Lake: `error: path:12:4: text`.
        if let (Some(sev), Some((file, l, c))) = (severity(pieces[0]), pieces.get(1).and_then(|p| location(p))) {
            let text = pieces.get(2).copied().unwrap_or("").to_string();
            return Some(Message { file: Some(file), line: l, column: c, severity: sev, text });
        }
    }
    None
}

/// A scratch Lake workspace whose package requires the library (by path), where generated files
/// are written and checked.
#[derive(Clone, Debug)]
pub struct Workspace {
    pub dir: PathBuf,
    pub library: PathBuf,
}

static SCRATCH_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Workspace {
    /// Creates a fresh workspace directory under `scratch_root`, requiring the library at
    /// `library` (the repository's `lean/`), with the library's pinned toolchain.
    pub fn create(scratch_root: &Path, library: &Path) -> Result<Workspace, RunnerError> {
        let library = library.canonicalize().map_err(|source| RunnerError::Io { path: library.to_path_buf(), source })?;
        let n = SCRATCH_COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = scratch_root.join(format!("lark-lean-{}-{n}", std::process::id()));
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| RunnerError::Io { path, source }
        };
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let lakefile = dir.join("lakefile.toml");
        // TOML basic strings: the path is escaped like a JSON string, which TOML accepts.
        let lib = serde_json::to_string(&library.to_string_lossy()).unwrap_or_else(|_| "\"\"".into());
        let text = format!("name = \"lark_scratch\"\n\n[[require]]\nname = \"lark\"\npath = {lib}\n");
        std::fs::write(&lakefile, text).map_err(io(&lakefile))?;
        let toolchain = dir.join(TOOLCHAIN_FILE);
        std::fs::copy(library.join(TOOLCHAIN_FILE), &toolchain).map_err(io(&toolchain))?;
        Ok(Workspace { dir, library })
    }

    /// Writes a Lean file into the workspace; `name` is a plain file name.
    pub fn write_file(&self, name: &str, text: &str) -> Result<PathBuf, RunnerError> {
        let plain = name.ends_with(".lean") && !name.starts_with('.') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !plain {
            return Err(RunnerError::BadFileName { name: name.to_string() });
        }
        let path = self.dir.join(name);
        std::fs::write(&path, text).map_err(|source| RunnerError::Io { path: path.clone(), source })?;
        Ok(path)
    }

    /// Builds the library's oleans, which `import Lark` needs. It runs `lake build Lark` in the
    /// library's own directory: a path dependency keeps its build there, where `lake env` in the
    /// workspace finds it, and no target-name resolution across packages is involved.
    pub fn build_library(&self, tc: &Toolchain, timeout: Duration) -> Result<CheckResult, RunnerError> {
        let mut cmd = Command::new(&tc.lake.path);
        cmd.arg("build").arg("Lark").current_dir(&self.library);
        let output = run_with_timeout(cmd, timeout)?;
        Ok(CheckResult { messages: parse_messages(&format!("{}\n{}", output.stdout, output.stderr)), output })
    }

    /// Checks one file with `lake env lean FILE`.
    pub fn check_file(&self, tc: &Toolchain, file: &Path, timeout: Duration) -> Result<CheckResult, RunnerError> {
        let mut cmd = Command::new(&tc.lake.path);
        cmd.arg("env").arg(&tc.lean.path).arg(file).current_dir(&self.dir);
        let output = run_with_timeout(cmd, timeout)?;
        Ok(CheckResult { messages: parse_messages(&format!("{}\n{}", output.stdout, output.stderr)), output })
    }

    /// Removes the workspace directory.
    pub fn remove(self) -> Result<(), RunnerError> {
        std::fs::remove_dir_all(&self.dir).map_err(|source| RunnerError::Io { path: self.dir.clone(), source })
    }
}

/// Builds the library in place (`lake build` in `lean/`).
pub fn build_in_place(tc: &Toolchain, library: &Path, target: &str, timeout: Duration) -> Result<CheckResult, RunnerError> {
    let mut cmd = Command::new(&tc.lake.path);
    cmd.arg("build").arg(target).current_dir(library);
    let output = run_with_timeout(cmd, timeout)?;
    Ok(CheckResult { messages: parse_messages(&format!("{}\n{}", output.stdout, output.stderr)), output })
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn messages_of_lean_and_lake() {
        let out = "T.lean:3:2: error: unknown identifier 'x'\n  more context\nT.lean:5:0: warning: declaration uses 'sorry'\n\
                   error: ././T.lean:7:1: unsolved goals\n⊢ False\nT.lean:9:0: info: 'foo' depends on axioms: [propext]\n\
                   T.lean:11:4: error(lean.unknownIdentifier): Unknown identifier `y`\nsome trailing line";
        let ms = parse_messages(out);
        let shown: Vec<String> =
            ms.iter().map(|m| format!("{:?} {}:{}:{} {:?}", m.severity, m.file.as_deref().unwrap_or("-"), m.line, m.column, m.text)).collect();
        expect![[r#"
            [
                "Error T.lean:3:2 \"unknown identifier 'x'\\n  more context\"",
                "Warning T.lean:5:0 \"declaration uses 'sorry'\"",
                "Error ././T.lean:7:1 \"unsolved goals\\n⊢ False\"",
                "Info T.lean:9:0 \"'foo' depends on axioms: [propext]\"",
                "Error T.lean:11:4 \"Unknown identifier `y`\\nsome trailing line\"",
            ]
        "#]]
        .assert_debug_eq(&shown);
    }
}
