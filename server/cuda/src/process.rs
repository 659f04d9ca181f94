//! Running a compiler process to completion or to a deadline.
//!
//! Both output pipes are drained by their own threads while the process runs (a compiler that
//! prints more than a pipe buffer of warnings would otherwise block forever on a full pipe).
//! The process runs in its own process group, and a timeout kills the whole group: the clang
//! driver runs `clang -cc1` as a child, which would otherwise outlive it and keep the pipes open.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Output kept per stream; the rest is read and dropped, so the process never blocks.
pub const MAX_CAPTURE: usize = 4 << 20;

pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

#[derive(Debug)]
pub enum RunError {
    /// The program could not be started.
    Spawn(std::io::Error),
    /// It ran past the limit and was killed.
    Timeout,
    Wait(std::io::Error),
}

/// Runs `cmd` (stdin closed, stdout and stderr captured) for at most `limit`.
pub fn run(mut cmd: Command, limit: Duration) -> Result<Finished, RunError> {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).spawn().map_err(RunError::Spawn)?;
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() >= deadline => {
                kill_group(&mut child);
                break Err(RunError::Timeout);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => {
                kill_group(&mut child);
                break Err(RunError::Wait(e));
            }
        }
    };
    // The readers end when every process holding the pipes is gone.
    let stdout = stdout.map(join).unwrap_or_default();
    let stderr = stderr.map(join).unwrap_or_default();
    status.map(|status| Finished { status, stdout, stderr })
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => return kept,
                Ok(n) => {
                    let room = MAX_CAPTURE.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                }
            }
        }
    })
}

fn join(h: JoinHandle<Vec<u8>>) -> Vec<u8> {
    h.join().unwrap_or_default()
}

/// Kills the child's process group (it leads its own group, see `process_group(0)`), then
/// reaps the child.
fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory is shared.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_larger_than_a_pipe_buffer_is_read_while_the_process_runs() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "head -c 300000 /dev/zero | tr '\\0' e >&2; head -c 200000 /dev/zero | tr '\\0' o"]);
        let out = run(cmd, Duration::from_secs(20)).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(out.status.success());
        assert_eq!((out.stderr.len(), out.stdout.len()), (300_000, 200_000));
    }

    #[test]
    fn a_timeout_kills_the_whole_process_group() {
        let mut cmd = Command::new("sh");
        // The grandchild holds the pipes open; the timeout must end it too.
        cmd.args(["-c", "sleep 30 & sleep 30; echo never"]);
        let started = Instant::now();
        assert!(matches!(run(cmd, Duration::from_millis(200)), Err(RunError::Timeout)));
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        assert!(matches!(run(Command::new("/nonexistent/cc"), Duration::from_secs(1)), Err(RunError::Spawn(_))));
    }
}
