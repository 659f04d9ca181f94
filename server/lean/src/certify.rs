//! Checking a certificate end to end, with the statement compiled apart from the proof (as
//! Comparator does), so that a proof cannot change what it proves.
//!
//! A certificate is the pinned statement — the generated module, then `theorem NAME : TYPE :=` —
//! followed by a proof. After the lexical audit ([`crate::audit`]) it is checked in four files of
//! the scratch workspace, each compiled by its own Lean process:
//!
//! 1. the **statement module** `LarkPinned_<h>`: the pinned text up to the certificate theorem
//!    (the definitions and the obligation `Prop`s), compiled first to an `.olean`; it is keyed
//!    by its hash, so the obligations of one kernel share one compilation;
//! 2. the **goal module** `LarkGoal_<h>`: imports it and names the theorem's pinned type,
//!    `def LarkPinned.goal : Prop := TYPE`, compiled to an `.olean` before any proof is seen;
//! 3. the **proof module** `LarkProof_<h>`: imports only the statement module and holds only the
//!    theorem, its header exactly as pinned and the proof ([`audit_proof_module`] checks that it
//!    declares nothing else, nothing in the pinned namespace and no pinned name), compiled to an
//!    `.olean`;
//! 4. the **check file** `LarkCheck_<h>`: imports the goal and proof modules and states
//!    `theorem LarkCheck.accepted : LarkPinned.goal := @NAME`, then `#print axioms
//!    LarkCheck.accepted`; Lean accepts it only if the theorem the proof module compiled has the
//!    pinned type, and the axioms are read from its output as before.
//!
//! Nothing a proof does can reach the statement: its modules were compiled before the proof
//! existed, and the check file elaborates nothing from the proof but a constant's name.

use crate::audit::{audit_proof_module, check_axioms, AuditError, Pinned, Policy};
use crate::lexer::{self, TokenKind};
use crate::runner::{parse_messages, run_with_timeout, CheckResult, Message, RunnerError, Severity, Workspace};
use crate::toolchain::Toolchain;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Why a certificate is not accepted.
#[derive(Debug, thiserror::Error)]
pub enum CertifyError {
    #[error(transparent)]
    Audit(#[from] AuditError),
    #[error(transparent)]
    Runner(#[from] RunnerError),
    #[error("Lean did not finish within {} s", .0.as_secs())]
    Timeout(Duration),
    #[error("Lean rejected the proof: {}", first_error(.0))]
    Rejected(Vec<Message>),
    #[error("`{0}` is not a plain theorem name")]
    BadTheoremName(String),
    #[error("the pinned statement cannot be checked apart from its proof: {0}")]
    UnsupportedStatement(String),
    #[error("Lean rejected the pinned statement (not the proof): {}", first_error(.0))]
    StatementRejected(Vec<Message>),
}

fn first_error(messages: &[Message]) -> String {
    messages
        .iter()
        .find(|m| m.severity == Severity::Error)
        .map(|m| format!("{}:{}: {}", m.line, m.column, m.text.lines().next().unwrap_or("")))
        .unwrap_or_else(|| "the run failed without an error message".into())
}

/// A certificate Lean accepted.
#[derive(Clone, Debug)]
pub struct Accepted {
    /// The axioms the theorem depends on (a subset of [`crate::audit::ALLOWED_AXIOMS`]).
    pub axioms: Vec<String>,
    pub result: CheckResult,
}

/// Checks the certificate `file` (the pinned statement followed by a proof of `theorem`) in the
/// workspace, the statement and the proof compiled apart ([`SeparateCheck`]). The library must
/// have been built in the workspace (`Workspace::build_library`).
pub fn check_certificate(
    ws: &Workspace,
    tc: &Toolchain,
    pinned: &Pinned,
    file: &str,
    theorem: &str,
    policy: &Policy,
    timeout: Duration,
) -> Result<Accepted, CertifyError> {
    let plain =
        !theorem.is_empty() && theorem.split('.').all(|c| c.chars().next().is_some_and(crate::lexer::is_id_first) && c.chars().all(crate::lexer::is_id_rest));
    if !plain {
        return Err(CertifyError::BadTheoremName(theorem.to_string()));
    }
    let proof = pinned.audit_file(file, policy)?;
    let check = SeparateCheck::new(pinned, theorem, proof, policy)?;
    check.run(ws, tc, timeout)
}

/// The name of the theorem the check file states.
pub const CHECK_THEOREM: &str = "LarkCheck.accepted";
/// The name the goal module gives the pinned type.
pub const GOAL: &str = "LarkPinned.goal";

/// One Lean module of a separate check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeanModule {
    /// The module name (also the file's stem).
    pub name: String,
    pub text: String,
}

impl LeanModule {
    fn new(prefix: &str, hashed: &str, text: String) -> LeanModule {
        LeanModule { name: format!("{prefix}_{}", &crate::audit::sha256_hex(hashed)[..16]), text }
    }

    pub fn file_name(&self) -> String {
        format!("{}.lean", self.name)
    }
}

/// The pinned statement cut where the certificate theorem starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatementParts<'a> {
    /// Everything before the theorem (and before its doc comment).
    pub module: &'a str,
    /// The theorem's doc comment and `theorem NAME BINDERS : TYPE :=`, to the end of the
    /// statement.
    pub header: &'a str,
    /// `BINDERS` (bracketed, as proof repair writes a sub-goal's hypotheses), often empty.
    pub binders: &'a str,
    /// `TYPE`.
    pub goal: &'a str,
}

impl StatementParts<'_> {
    /// The theorem's whole type: `∀ BINDERS, TYPE`, or `TYPE`.
    pub fn pinned_type(&self) -> String {
        if self.binders.is_empty() {
            self.goal.to_string()
        } else {
            format!("∀ {},\n    {}", self.binders, self.goal)
        }
    }
}

/// Cuts a pinned statement that ends with `theorem NAME BINDERS : TYPE :=`.
pub fn split_statement<'a>(statement: &'a str, theorem: &str) -> Result<StatementParts<'a>, CertifyError> {
    let unsupported = |why: &str| CertifyError::UnsupportedStatement(why.to_string());
    let lexed = lexer::lex(statement);
    let toks = &lexed.tokens;
    let is = |i: usize, kind: TokenKind, text: &str| toks.get(i).is_some_and(|t| t.kind == kind && t.text(statement) == text);
    let at = (0..toks.len())
        .rev()
        .find(|&i| is(i, TokenKind::Ident, "theorem") && toks.get(i + 1).is_some_and(|n| n.kind == TokenKind::Ident && n.name() == theorem))
        .ok_or_else(|| unsupported(&format!("it does not declare `theorem {theorem}`")))?;
    let last = toks.len() - 1;
    if !is(last, TokenKind::Symbol, ":=") || !statement[toks[last].span.end..].trim().is_empty() || last <= at + 2 {
        return Err(unsupported("it does not end with the theorem's `:=`"));
    }
    // The colon before the type: the first `:` outside the binders' brackets.
    let mut depth = 0i32;
    let mut colon = None;
    for (i, t) in toks.iter().enumerate().take(last).skip(at + 2) {
        if t.kind != TokenKind::Symbol {
            if depth == 0 {
                return Err(unsupported("the theorem has a binder outside brackets"));
            }
            continue;
        }
        match t.text(statement) {
            "(" | "{" | "[" | "⦃" => depth += 1,
            ")" | "}" | "]" | "⦄" => depth -= 1,
            ":" if depth == 0 => {
                colon = Some(i);
                break;
            }
            _ if depth == 0 => return Err(unsupported("the theorem has a binder outside brackets")),
            _ => {}
        }
    }
    let colon = colon.ok_or_else(|| unsupported("the theorem has no type"))?;
    let start = match at.checked_sub(1).map(|p| &toks[p]) {
        Some(d) if d.kind == TokenKind::DocComment && d.text(statement).starts_with("/--") => d.span.start,
        _ => toks[at].span.start,
    };
    let binders = statement[toks[at + 1].span.end..toks[colon].span.start].trim();
    let goal = statement[toks[colon].span.end..toks[last].span.start].trim();
    Ok(StatementParts { module: &statement[..start], header: &statement[start..], binders, goal })
}

/// The four files of a separate check (see the module's documentation), as pure text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeparateCheck {
    pub statement: LeanModule,
    pub goal: LeanModule,
    pub proof: LeanModule,
    pub check: LeanModule,
    pub theorem: String,
    /// How many lines the proof starts below where it starts in the certificate file.
    line_shift: i64,
}

impl SeparateCheck {
    /// The files for the certificate `pinned` + `proof` of `theorem`; the proof module is
    /// audited ([`audit_proof_module`]).
    pub fn new(pinned: &Pinned, theorem: &str, proof: &str, policy: &Policy) -> Result<SeparateCheck, CertifyError> {
        let parts = split_statement(pinned.statement(), theorem)?;
        let statement = LeanModule::new("LarkPinned", parts.module, parts.module.to_string());
        let goal_text = format!(
            "import {}\n\n/-- The type of `{theorem}` as pinned: the check file states the certificate against it. -/\ndef {GOAL} : Prop :=\n  {}\n",
            statement.name,
            parts.pinned_type()
        );
        let goal = LeanModule::new("LarkGoal", &goal_text, goal_text.clone());
        let prefix = proof_module_prefix(&statement.name, parts.header);
        let proof_text = format!("{prefix}{proof}");
        audit_proof_module(&proof_text, &prefix, theorem, parts.module, policy)?;
        let proof_module = LeanModule::new("LarkProof", &proof_text, proof_text.clone());
        let check_text = format!(
            "import {}\nimport {}\n\n/-- `{theorem}`, compiled apart from the statement, proves the pinned type. -/\ntheorem {CHECK_THEOREM} : {GOAL} := @{theorem}\n\n#print axioms {CHECK_THEOREM}\n",
            goal.name, proof_module.name
        );
        let check = LeanModule::new("LarkCheck", &check_text, check_text.clone());
        let line_shift = prefix.matches('\n').count() as i64 - pinned.statement().matches('\n').count() as i64;
        Ok(SeparateCheck { statement, goal, proof: proof_module, check, theorem: theorem.to_string(), line_shift })
    }

    /// Runs the four steps in `ws`: the statement and goal modules are compiled unless their
    /// `.olean` is already there, then the proof module, then the check file.
    pub fn run(&self, ws: &Workspace, tc: &Toolchain, timeout: Duration) -> Result<Accepted, CertifyError> {
        let started = std::time::Instant::now();
        let left = || timeout.saturating_sub(started.elapsed()).max(Duration::from_secs(1));
        for m in [&self.statement, &self.goal] {
            let result = compile(ws, tc, m, true, left())?;
            if result.output.timed_out {
                return Err(CertifyError::Timeout(timeout));
            }
            if !result.accepted() {
                return Err(CertifyError::StatementRejected(result.messages));
            }
        }
        let result = compile(ws, tc, &self.proof, false, left())?;
        if result.output.timed_out {
            return Err(CertifyError::Timeout(timeout));
        }
        if !result.accepted() {
            return Err(CertifyError::Rejected(self.in_certificate_lines(result.messages)));
        }
        let result = check_alone(ws, tc, &self.check, left())?;
        if result.output.timed_out {
            return Err(CertifyError::Timeout(timeout));
        }
        if !result.accepted() {
            let mut messages = result.messages;
            messages.insert(
                0,
                Message {
                    file: Some(self.check.file_name()),
                    line: 1,
                    column: 0,
                    severity: Severity::Error,
                    text: format!("`{}` as compiled does not prove the pinned statement", self.theorem),
                },
            );
            return Err(CertifyError::Rejected(messages));
        }
        let axioms = check_axioms(&format!("{}\n{}", result.output.stdout, result.output.stderr), CHECK_THEOREM)?;
        Ok(Accepted { axioms, result })
    }

    /// Lean's messages about the proof module, at the lines of the certificate file (the proof
    /// follows the same header in both).
    fn in_certificate_lines(&self, messages: Vec<Message>) -> Vec<Message> {
        messages
            .into_iter()
            .map(|mut m| {
                if m.file.as_deref().is_some_and(|f| f.ends_with(&self.proof.file_name())) {
                    m.line = (i64::from(m.line) - self.line_shift).max(1) as u32;
                }
                m
            })
            .collect()
    }
}

/// What the proof module holds before the proof: the import of the statement module and the
/// theorem's header as pinned.
fn proof_module_prefix(statement_module: &str, header: &str) -> String {
    format!("import {statement_module}\n\n{header}")
}

/// Where the compiled modules go: a directory `lake env` puts on `LEAN_PATH`.
fn olean_dir(ws: &Workspace) -> std::path::PathBuf {
    ws.dir.join(".lake").join("build").join("lib").join("lean")
}

/// A directory of its own in the workspace holding `m` (so that concurrent checks never write
/// one file), with the file's path. The module name is the file's stem under that directory.
fn write_alone(ws: &Workspace, m: &LeanModule) -> Result<(std::path::PathBuf, std::path::PathBuf), CertifyError> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = ws.dir.join(format!("check-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| RunnerError::Io { path: dir.clone(), source })?;
    let path = dir.join(m.file_name());
    std::fs::write(&path, &m.text).map_err(|source| RunnerError::Io { path: path.clone(), source })?;
    Ok((dir, path))
}

/// Writes and compiles one module to its `.olean`; `reuse`: skip it when the `.olean` exists
/// (its name is the hash of its text).
fn compile(ws: &Workspace, tc: &Toolchain, m: &LeanModule, reuse: bool, timeout: Duration) -> Result<CheckResult, CertifyError> {
    let oleans = olean_dir(ws);
    let olean = oleans.join(format!("{}.olean", m.name));
    if reuse && olean.is_file() {
        return Ok(CheckResult { messages: vec![], output: crate::runner::ProcessOutput { status: Some(0), ..Default::default() } });
    }
    std::fs::create_dir_all(&oleans).map_err(|source| RunnerError::Io { path: oleans.clone(), source })?;
    let (dir, path) = write_alone(ws, m)?;
    // Written beside and renamed, so that a concurrent check never reads half an `.olean`.
    let tmp = dir.join(format!("{}.olean", m.name));
    let result = run_lean(ws, tc, &dir, &path, Some(&tmp), timeout);
    if result.as_ref().is_ok_and(CheckResult::accepted) {
        std::fs::rename(&tmp, &olean).map_err(|source| RunnerError::Io { path: olean.clone(), source })?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Checks one file that nothing imports (no `.olean`).
fn check_alone(ws: &Workspace, tc: &Toolchain, m: &LeanModule, timeout: Duration) -> Result<CheckResult, CertifyError> {
    let (dir, path) = write_alone(ws, m)?;
    let result = run_lean(ws, tc, &dir, &path, None, timeout);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// `lake env lean FILE -R ROOT [-o OLEAN]` in the workspace, with the `.olean` directory on
/// `LEAN_PATH`.
fn run_lean(ws: &Workspace, tc: &Toolchain, root: &Path, file: &Path, olean: Option<&Path>, timeout: Duration) -> Result<CheckResult, CertifyError> {
    let mut cmd = Command::new(&tc.lake.path);
    cmd.arg("env").arg(&tc.lean.path).arg(file).arg("-R").arg(root);
    if let Some(o) = olean {
        cmd.arg("-o").arg(o);
    }
    let mut path = std::ffi::OsString::from(olean_dir(ws));
    if let Some(old) = std::env::var_os("LEAN_PATH").filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(old);
    }
    cmd.env("LEAN_PATH", path).current_dir(&ws.dir);
    let output = run_with_timeout(cmd, timeout)?;
    Ok(CheckResult { messages: parse_messages(&format!("{}\n{}", output.stdout, output.stderr)), output })
}
