//! A Z3 process driven over SMT-LIB pipes.
//!
//! Running the solver out of process means a solver crash or hang can never take the caller
//! down: a query that outlives its timeout is answered `Unknown` and the process is killed and
//! restarted. The same text can be re-checked by any SMT-LIB solver.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub enum SatResult {
    /// Satisfiable, with the values asked for (bit-vectors as integers, booleans as 0/1).
    Sat(HashMap<String, u64>),
    Unsat,
    /// Timeout or the solver gave up; the reason says which.
    Unknown(String),
}

#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    #[error("the SMT solver `{0}` was not found on PATH (install it with `apt-get install z3`)")]
    Missing(String),
    #[error("the SMT solver failed: {0}")]
    Failed(String),
}

pub struct Solver {
    program: String,
    child: Option<Running>,
    pub queries: u64,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Solver {
    /// A solver using the `z3` binary (or `LARK_Z3`, when set).
    pub fn z3() -> Solver {
        Solver { program: std::env::var("LARK_Z3").unwrap_or_else(|_| "z3".into()), child: None, queries: 0 }
    }

    fn start(&mut self) -> Result<&mut Running, SolverError> {
        if self.child.is_none() {
            let mut child =
                Command::new(&self.program).args(["-in", "-smt2"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().map_err(|e| {
                    match e.kind() {
                        std::io::ErrorKind::NotFound => SolverError::Missing(self.program.clone()),
                        _ => SolverError::Failed(format!("cannot start `{}`: {e}", self.program)),
                    }
                })?;
            let stdin = child.stdin.take().expect("piped stdin");
            let stdout = child.stdout.take().expect("piped stdout");
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            self.child = Some(Running { child, stdin, lines: rx });
            let r = self.child.as_mut().unwrap();
            writeln!(r.stdin, "(set-option :print-success false)\n(set-option :produce-models true)\n(set-logic QF_BV)")
                .map_err(|e| SolverError::Failed(e.to_string()))?;
        }
        Ok(self.child.as_mut().unwrap())
    }

    /// Checks `script` (declarations and assertions) in a fresh scope and, when satisfiable, asks
    /// for the values of `wanted` (names of declared constants or defined terms).
    pub fn check(&mut self, script: &str, wanted: &[String], timeout_ms: u64) -> Result<SatResult, SolverError> {
        self.queries += 1;
        if let Ok(dir) = std::env::var("LARK_SMT_DUMP") {
            // Debugging aid: every query as a standalone SMT-LIB file.
            let body = format!("(set-option :produce-models true)\n{script}\n(check-sat)\n(get-value ({}))\n", wanted.join(" "));
            let _ = std::fs::write(format!("{dir}/q{:04}.smt2", self.queries), body);
        }
        let running = self.start()?;
        let mut text = String::with_capacity(script.len() + 128);
        text.push_str("(push 1)\n");
        text.push_str(&format!("(set-option :timeout {timeout_ms})\n"));
        text.push_str(script);
        text.push_str("\n(check-sat)\n");
        if running.stdin.write_all(text.as_bytes()).and_then(|_| running.stdin.flush()).is_err() {
            self.child = None;
            return Err(SolverError::Failed("the solver process exited".into()));
        }
        // The solver's own timeout should answer first; the read timeout is the backstop.
        let deadline = Duration::from_millis(timeout_ms + 2000);
        let answer = match running.lines.recv_timeout(deadline) {
            Ok(l) => l,
            Err(_) => {
                self.child = None; // kills the process
                return Ok(SatResult::Unknown(format!("solver did not answer within {timeout_ms} ms")));
            }
        };
        let result = match answer.trim() {
            "unsat" => SatResult::Unsat,
            "sat" => {
                let mut values = HashMap::new();
                if !wanted.is_empty() {
                    let q = format!("(get-value ({}))\n", wanted.join(" "));
                    let running = self.child.as_mut().unwrap();
                    let _ = running.stdin.write_all(q.as_bytes()).and_then(|_| running.stdin.flush());
                    let text = read_balanced(&running.lines, deadline);
                    match text {
                        Some(t) => values = parse_values(&t),
                        None => {
                            self.child = None;
                            return Ok(SatResult::Unknown("solver did not return a model".into()));
                        }
                    }
                }
                SatResult::Sat(values)
            }
            "unknown" => SatResult::Unknown(format!("solver gave up (timeout {timeout_ms} ms)")),
            other => {
                // An error line: the script is ours, so this is a bug worth surfacing.
                let msg = other.to_string();
                self.child = None;
                return Err(SolverError::Failed(msg));
            }
        };
        if let Some(r) = self.child.as_mut() {
            let _ = r.stdin.write_all(b"(pop 1)\n");
        }
        Ok(result)
    }
}

/// Reads lines until the parentheses balance (a `get-value` answer spans lines).
fn read_balanced(lines: &Receiver<String>, timeout: Duration) -> Option<String> {
    let mut text = String::new();
    let mut depth = 0i64;
    loop {
        let line = lines.recv_timeout(timeout).ok()?;
        for c in line.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
        }
        text.push_str(&line);
        text.push(' ');
        if depth <= 0 && !text.trim().is_empty() {
            return Some(text);
        }
    }
}

/// Parses `((name #x0000000a) (other true) (x (_ bv5 32)))`.
fn parse_values(text: &str) -> HashMap<String, u64> {
    let tokens: Vec<String> = text.replace('(', " ( ").replace(')', " ) ").split_whitespace().map(String::from).collect();
    let mut out = HashMap::new();
    let mut i = 0;
    // Each binding starts with "( name"
    while i + 2 < tokens.len() {
        if tokens[i] == "(" && tokens[i + 1] != "(" && tokens[i + 1] != ")" && tokens[i + 1] != "_" {
            let name = tokens[i + 1].clone();
            let v = &tokens[i + 2];
            let value = if let Some(h) = v.strip_prefix("#x") {
                u64::from_str_radix(h, 16).ok()
            } else if let Some(b) = v.strip_prefix("#b") {
                u64::from_str_radix(b, 2).ok()
            } else if v == "true" {
                Some(1)
            } else if v == "false" {
                Some(0)
            } else if v == "(" && tokens.get(i + 3).map(String::as_str) == Some("_") {
                tokens.get(i + 4).and_then(|t| t.strip_prefix("bv")).and_then(|d| d.parse().ok())
            } else {
                None
            };
            if let Some(value) = value {
                out.insert(name, value);
                i += 3;
                continue;
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_get_value_answers() {
        let v = parse_values("((t1 #x0000000a) (p true) (k (_ bv5 32)) (b #b101))");
        assert_eq!(v["t1"], 10);
        assert_eq!(v["p"], 1);
        assert_eq!(v["k"], 5);
        assert_eq!(v["b"], 5);
    }

    #[test]
    fn z3_answers_sat_unsat_and_models() {
        let mut s = Solver::z3();
        let r = s.check("(declare-const x (_ BitVec 8))\n(assert (= (bvmul x #x04) #x0c))", &["x".into()], 1000).unwrap();
        match r {
            SatResult::Sat(m) => assert_eq!(m["x"] & 0x3f, 3),
            other => panic!("expected sat, got {other:?}"),
        }
        let r = s.check("(declare-const x (_ BitVec 8))\n(assert (distinct x x))", &[], 1000).unwrap();
        assert_eq!(r, SatResult::Unsat);
        // The scope was popped: `x` can be declared again with another sort.
        let r = s.check("(declare-const x Bool)\n(assert x)", &["x".into()], 1000).unwrap();
        assert!(matches!(r, SatResult::Sat(_)));
    }

    #[test]
    fn missing_solver_is_a_clear_error() {
        let mut s = Solver { program: "definitely-not-a-solver-lark".into(), child: None, queries: 0 };
        let e = s.check("(assert true)", &[], 100).unwrap_err();
        assert!(e.to_string().contains("not found"), "{e}");
    }
}
