//! The engine: data races, barrier divergence and out-of-bounds accesses over the lifted model,
//! decided by enumerating concrete launches or with an SMT solver (Z3 or cvc5, through the `smt`
//! crate), and confirmed by replaying each counterexample in the reference interpreter.
//!
//! Entry point: [`check_ptx`] for a PTX module, or [`engine::check_kernel`] for one kernel.

// The engine's parts are private; callers use the handful of items re-exported below.
mod answers;
mod bind;
mod bounds;
mod ctx;
mod prefetch;
// Public for the differential test of the SMT encoding against the interpreter.
#[doc(hidden)]
pub mod encode;
mod engine;
mod enumerate;
mod fixed;
mod in_order;
mod incomplete;
mod invariants;
mod launch_confirm;
mod ledger;
mod query;
mod races;
pub mod render;
mod replay;
pub mod report;
mod row_major;
mod row_strides;
mod rows;
mod runs;
mod scalar_confirm;
mod schedule;
mod scope;
pub mod smt;
mod sync;
mod thread_rank;
mod trace;
pub mod witness;

pub use self::smt::{Solver, SolverKind};
pub use bind::{struct_bytes, Binding, ByteSize, DeclaredField};
pub use ctx::demangle_local;
pub use engine::{check_kernel, check_kernel_guarded, field_names, FieldNames, Options, Sources};
pub use incomplete::incomplete_parse;
pub use query::ThreadId;
pub use report::*;
pub use scope::check_kernel_scoped;

use serde::Serialize;

/// A syntax or lowering problem in the input, with its position (1-based line and column).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostic {
    pub severity: &'static str,
    pub line: u32,
    pub column: u32,
    pub message: String,
    pub span: [u32; 2],
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileReport {
    pub file: String,
    pub kernels: Vec<KernelReport>,
    pub diagnostics: Vec<Diagnostic>,
}

/// What the caller knows about the file besides its PTX text.
#[derive(Default)]
pub struct Context<'a> {
    pub interface: Option<&'a spec::Interface>,
    /// The text of the CUDA file the PTX came from, for parameter names.
    pub cu_text: Option<&'a str>,
    /// Only this kernel (by PTX or source name).
    pub only: Option<&'a str>,
}

/// Checks every kernel of a PTX module.
pub fn check_ptx(file: &str, text: &str, cx: &Context, opts: &Options, solver: &mut Solver) -> FileReport {
    let parsed = ptx::parse(text);
    let index = ptx::LineIndex::new(text);
    let mut diagnostics: Vec<Diagnostic> = parsed.errors.iter().map(|e| diagnostic(&index, e.span, &e.message)).collect();
    let map = ptx::SourceMap::new(&parsed.module);
    let mut kernels = Vec::new();
    for (name, lowered) in model::lower_module(&parsed.module) {
        let source_name = spec::unmangled_name(&name).unwrap_or_else(|| name.to_string());
        if cx.only.is_some_and(|o| o != name && o != source_name) {
            continue;
        }
        // What did not parse is not in the model: the kernel is not checked.
        let func = parsed.module.functions.iter().find(|f| f.name == name);
        if let Some(message) = func.and_then(|f| incomplete::incomplete_parse(&parsed, f, text)) {
            kernels.push(KernelReport::error(&name, Reason::IncompleteParse { message }, 0.0));
            continue;
        }
        match lowered {
            Ok(k) => {
                let cu_file = k.main_file.and_then(|f| map.file_name(ptx::SourceLoc { file: f, line: 1, col: 0 })).map(str::to_string);
                let src = Sources {
                    ptx: text,
                    index: &index,
                    cu_file,
                    param_names: cx.cu_text.and_then(|cu| spec::cu_param_names(cu, &source_name)),
                    field_names: cx.cu_text.map(|cu| engine::field_names(&k, cu, &source_name)).unwrap_or_default(),
                };
                let spec = cx.interface.and_then(|i| i.kernel(&name));
                // Fields named `p.ncols` are placed by the struct's definition in the .cu.
                let named = match (spec, cx.cu_text) {
                    (Some(s), Some(cu)) if s.params.keys().any(|key| spec::field_key(key).is_none() && spec::named_field_key(key).is_some()) => {
                        let mut s = s.clone();
                        let cu_params = spec::cu_params(cu, &source_name).unwrap_or_default();
                        let bytes: Vec<u32> = k.params.iter().map(|p| p.bytes).collect();
                        let errors = spec::resolve_field_names(&mut s, cu, &cu_params, &bytes);
                        Some((s, errors))
                    }
                    _ => None,
                };
                let spec = named.as_ref().map(|(s, _)| s).or(spec);
                let mut report = check_kernel_guarded(&k, spec, &src, opts, solver);
                for e in named.iter().flat_map(|(_, errors)| errors) {
                    report.notes.push(Note::UnresolvedField { key: e.key.clone(), why: e.message.clone() });
                }
                kernels.push(report);
            }
            Err(e) => {
                diagnostics.push(diagnostic(&index, e.span, &e.message));
                kernels.push(KernelReport::error(&name, Reason::NotLowered { message: e.message }, 0.0));
            }
        }
    }
    FileReport { file: file.to_string(), kernels, diagnostics }
}

fn diagnostic(index: &ptx::LineIndex, span: ptx::Span, message: &str) -> Diagnostic {
    let (line, col) = index.line_col(span.start);
    Diagnostic { severity: "error", line: line + 1, column: col + 1, message: message.to_string(), span: [span.start, span.end] }
}
