//! From the analysis to LSP: byte ranges to UTF-16 ranges, and the `ide` structs to their LSP
//! counterparts.

use crate::commands;
use ide::{FileAnalysis, Severity};
use std::collections::HashMap;
use std::ops::Range;
use std::str::FromStr;
use tower_lsp_server::lsp_types as lsp;
use tower_lsp_server::UriExt;

pub fn position(text: &str, index: &ptx::LineIndex, offset: usize) -> lsp::Position {
    let (line, character) = index.line_col_utf16(text, offset.min(text.len()) as u32);
    lsp::Position { line, character }
}

pub fn range_in(text: &str, index: &ptx::LineIndex, r: &Range<usize>) -> lsp::Range {
    lsp::Range { start: position(text, index, r.start), end: position(text, index, r.end) }
}

pub fn range(fa: &FileAnalysis, r: &Range<usize>) -> lsp::Range {
    range_in(&fa.text, &fa.index, r)
}

pub fn severity(s: Severity) -> lsp::DiagnosticSeverity {
    match s {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Information => lsp::DiagnosticSeverity::INFORMATION,
        Severity::Hint => lsp::DiagnosticSeverity::HINT,
    }
}

pub fn diagnostic(fa: &FileAnalysis, uri: &lsp::Uri, d: &ide::Diagnostic) -> lsp::Diagnostic {
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .related
        .iter()
        .map(|r| lsp::DiagnosticRelatedInformation { location: lsp::Location { uri: uri.clone(), range: range(fa, &r.range) }, message: r.message.clone() })
        .collect();
    lsp::Diagnostic {
        range: range(fa, &d.range),
        severity: Some(severity(d.severity)),
        code: Some(lsp::NumberOrString::String(d.code.to_string())),
        code_description: lsp::Uri::from_str(&ide::docs_link(d.code)).ok().map(|href| lsp::CodeDescription { href }),
        source: Some("lark".into()),
        message: d.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: d.data.clone(),
    }
}

pub fn hover(fa: &FileAnalysis, h: ide::Hover) -> lsp::Hover {
    lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value: h.markdown }),
        range: Some(range(fa, &h.range)),
    }
}

pub fn code_lens(fa: &FileAnalysis, uri: &lsp::Uri, l: &ide::Lens) -> lsp::CodeLens {
    let uri_arg = serde_json::Value::String(uri.to_string());
    let (command, arguments) = match l.command {
        ide::LensCommand::Recheck => (commands::RECHECK, vec![uri_arg]),
        ide::LensCommand::ShowModel => (commands::SHOW_MODEL_FOR_FILE, vec![uri_arg]),
        ide::LensCommand::ShowLean => (commands::SHOW_LEAN_FOR_FILE, vec![uri_arg, serde_json::Value::String(l.kernel.clone())]),
    };
    lsp::CodeLens {
        range: range(fa, &l.range),
        command: Some(lsp::Command { title: l.title.clone(), command: command.into(), arguments: Some(arguments) }),
        data: None,
    }
}

/// What the client can do with workspace edits.
#[derive(Clone, Copy, Debug, Default)]
pub struct EditCaps {
    pub document_changes: bool,
    pub create_files: bool,
}

#[allow(clippy::mutable_key_type)] // lsp-types keys edits by `Uri`
pub fn workspace_edit(edits: &[ide::FileEdit], caps: EditCaps) -> Option<lsp::WorkspaceEdit> {
    let mut changes: HashMap<lsp::Uri, Vec<lsp::TextEdit>> = HashMap::new();
    let mut ops: Vec<lsp::DocumentChangeOperation> = Vec::new();
    let needs_create = edits.iter().any(|e| e.create);
    if needs_create && !(caps.document_changes && caps.create_files) {
        return None;
    }
    for e in edits {
        let uri = match (&e.key, &e.path) {
            (Some(k), _) => lsp::Uri::from_str(k).ok()?,
            (None, Some(p)) => lsp::Uri::from_file_path(p)?,
            (None, None) => return None,
        };
        let index = ptx::LineIndex::new(&e.original);
        let text_edits: Vec<lsp::TextEdit> =
            e.edits.iter().map(|t| lsp::TextEdit { range: range_in(&e.original, &index, &t.range), new_text: t.new_text.clone() }).collect();
        if caps.document_changes {
            if e.create {
                ops.push(lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Create(lsp::CreateFile {
                    uri: uri.clone(),
                    options: Some(lsp::CreateFileOptions { overwrite: Some(false), ignore_if_exists: Some(true) }),
                    annotation_id: None,
                })));
            }
            ops.push(lsp::DocumentChangeOperation::Edit(lsp::TextDocumentEdit {
                text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version: None },
                edits: text_edits.into_iter().map(lsp::OneOf::Left).collect(),
            }));
        } else {
            changes.entry(uri).or_default().extend(text_edits);
        }
    }
    Some(if caps.document_changes {
        lsp::WorkspaceEdit { document_changes: Some(lsp::DocumentChanges::Operations(ops)), ..Default::default() }
    } else {
        lsp::WorkspaceEdit { changes: Some(changes), ..Default::default() }
    })
}

pub fn code_action(fa: &FileAnalysis, uri: &lsp::Uri, fix: &ide::Fix, caps: EditCaps) -> Option<lsp::CodeAction> {
    let edit = workspace_edit(&fix.edits, caps)?;
    let diagnostics = fix
        .resolves
        .as_ref()
        .map(|(r, code)| ide::diagnostics(fa).iter().filter(|d| d.code == *code && d.range == *r).map(|d| diagnostic(fa, uri, d)).collect::<Vec<_>>());
    Some(lsp::CodeAction {
        title: fix.title.clone(),
        kind: Some(lsp::CodeActionKind::QUICKFIX),
        diagnostics: diagnostics.filter(|d| !d.is_empty()),
        edit: Some(edit),
        command: None,
        is_preferred: fix.preferred.then_some(true),
        disabled: None,
        data: None,
    })
}

/// The `lark/fileStatus` notification.
pub fn file_status(uri: &lsp::Uri, fa: Option<&FileAnalysis>) -> serde_json::Value {
    let kernels: Vec<serde_json::Value> = fa
        .map(|fa| {
            fa.kernels
                .iter()
                .map(|k| serde_json::json!({ "name": k.source_name, "verdict": k.report.verdict.as_str(), "millis": k.report.stats.millis, "checked": k.checked }))
                .collect()
        })
        .unwrap_or_default();
    let mut v = serde_json::json!({ "uri": uri.to_string(), "kernels": kernels });
    if let Some(fa) = fa {
        v["version"] = fa.version.into();
        if let Some(s) = &fa.status {
            v["status"] = s.clone().into();
        }
    }
    v
}
