//! The Lean side of LARK.
//!
//! LARK states kernels in Lean 4 so that a proof checked by Lean — not by LARK, not by an LLM — is
//! the certificate. The Lean library (`lean/`, package `Lark`) is the formal model; this crate
//! connects the Rust model to it:
//!
//! * [`library`]: an index of the library's declarations, read from its source;
//! * [`emit`]: lowered kernels (`model::Kernel`) as Lean terms of `Lark.Kernel`, and conformance
//!   checks of the integer semantics generated from `model::ops`;
//! * [`toolchain`]: finding `lean`, `lake` and `elan`, and checking the pinned version;
//! * [`runner`]: a scratch Lake workspace, `lake build`, `lake env lean FILE` with a timeout that
//!   kills the process tree, and Lean's messages parsed;
//! * [`audit`]: the lexical audit of a proof appended to a pinned statement, and the
//!   `#print axioms` check;
//! * [`certify`]: audit, run and axiom check of one certificate, end to end;
//! * [`lexer`]: the Lean lexer the index and the audit share.
//!
//! * [`segment`]: a kernel's instructions cut into named segments, LARK's cuts or an agent's
//!   (validated);
//! * [`constants`]: the readings of kernel literals as constants (`1.4426950f` as `log2(e)`) the
//!   equivalence engine used, stated as hypotheses on `I : Ideal` with a model that shows them
//!   satisfiable, or left out with the reason;
//! * [`obligations`]: one Lean module per kernel stating what LARK claims about it (race freedom,
//!   alignment, bounds, termination, agreement with the reference per segment, and the main
//!   statement), each obligation pinned by a hash;
//! * [`shared_state`]: what a segment leaves in shared memory at its barrier, as intermediate
//!   statements for proofs.

pub mod audit;
pub mod certify;
pub mod constants;
pub mod emit;
pub mod lexer;
pub mod library;
pub mod obligations;
pub mod runner;
pub mod segment;
pub mod shared_state;
pub mod toolchain;

pub use audit::{check_axioms, AuditError, Finding, Pinned, Policy, Rule};
pub use certify::{check_certificate, Accepted, CertifyError};
pub use library::{Decl, DeclKind, LibraryError, LibraryIndex};
pub use runner::{CheckResult, Message, RunnerError, Severity, Workspace};
pub use toolchain::{Toolchain, ToolchainError};

use std::path::PathBuf;

/// The Lean library of this repository (`lean/`), found from this crate's manifest directory.
pub fn library_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../lean")
}
