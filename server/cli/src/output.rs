//! Rendering reports: text for people, JSON for tools, SARIF 2.1.0 for code-scanning pipelines.

use check::{render, FileReport, Finding, Location};
use serde_json::{json, Value};
use std::fmt::Write;

fn place(file: &str, l: &Location) -> String {
    match &l.source {
        Some(src) if !file.ends_with(".cu") => format!("{src}:{}", l.line),
        _ => format!("{file}:{}", l.line),
    }
}

/// The text of a report whose kernels were already printed one by one (`streamed`): its
/// diagnostics only; otherwise the whole text.
pub fn text_rest(r: &FileReport, streamed: bool) -> String {
    if !streamed || r.kernels.is_empty() {
        return text(r);
    }
    let rest = FileReport { file: r.file.clone(), kernels: vec![], diagnostics: r.diagnostics.clone() };
    if rest.diagnostics.is_empty() {
        return String::new();
    }
    text(&rest)
}

pub fn text(r: &FileReport) -> String {
    let mut out = String::new();
    for d in &r.diagnostics {
        let _ = writeln!(out, "{}:{}:{}: {}: {}", r.file, d.line, d.column, d.severity, d.message);
    }
    for k in &r.kernels {
        let _ = writeln!(out, "{}: kernel {}: {} ({:.1} ms, {} SMT queries)", r.file, k.name, k.verdict.as_str(), k.stats.millis, k.stats.queries);
        for f in &k.findings {
            let at = f.accesses.first().map(|a| &a.location).or(f.barrier.as_ref());
            let where_ = at.map_or_else(|| r.file.clone(), |l| place(&r.file, l));
            let level = if f.is_warning() { "warning" } else { "error" };
            let _ = writeln!(out, "  {where_}: {level}[{}]: {}", kind_word(f), render::finding_message(f));
            if f.accesses.len() > 1 {
                for a in &f.accesses {
                    let iters = if a.iterations.is_empty() {
                        String::new()
                    } else {
                        format!(" in iteration {}", a.iterations.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "))
                    };
                    let _ = writeln!(out, "    {}: {} of {} bytes by thread {}{iters}", place(&r.file, &a.location), a.kind, a.bytes, f.threads[a.thread]);
                }
            }
            if !f.launch.params.is_empty() || f.launch.grid != [0, 0, 0] {
                let params: Vec<String> = f.launch.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let _ = writeln!(
                    out,
                    "    launch: grid {:?} block {:?}{}",
                    f.launch.grid,
                    f.launch.block,
                    if params.is_empty() { String::new() } else { format!(", {}", params.join(" ")) }
                );
            }
        }
        // A kernel that could not be checked at all says why as an error, not as an open question.
        let label = if k.verdict == check::Verdict::Error { "error" } else { "uncertified" };
        for u in &k.uncertified {
            let where_ = u.location.as_ref().map_or_else(|| r.file.clone(), |l| place(&r.file, l));
            let _ = writeln!(out, "  {where_}: {label}: {}", render::uncertified_message(u));
        }
        for n in &k.notes {
            let _ = writeln!(out, "  note: {}", render::note_message(n));
        }
        // What a `verified` equivalence rests on besides the rewriting rules.
        for a in k.equivalence.iter().flat_map(|e| &e.assumptions) {
            let _ = writeln!(out, "  assumed: {a}");
        }
    }
    if r.kernels.is_empty() && r.diagnostics.is_empty() {
        let _ = writeln!(out, "{}: no kernels", r.file);
    }
    out
}

fn kind_word(f: &Finding) -> &'static str {
    f.kind.verdict().as_str()
}

pub fn json(reports: &[FileReport]) -> String {
    let kernels: Vec<Value> = reports
        .iter()
        .flat_map(|r| {
            r.kernels.iter().map(move |k| {
                let mut v = serde_json::to_value(k).expect("serialisable");
                v["file"] = json!(r.file);
                with_messages(&mut v, k);
                v
            })
        })
        .collect();
    let diagnostics: Vec<Value> = reports
        .iter()
        .flat_map(|r| {
            r.diagnostics.iter().map(move |d| {
                let mut v = serde_json::to_value(d).expect("serialisable");
                v["file"] = json!(r.file);
                v
            })
        })
        .collect();
    let doc = json!({ "lark_version": env!("CARGO_PKG_VERSION"), "kernels": kernels, "diagnostics": diagnostics });
    serde_json::to_string_pretty(&doc).expect("serialisable")
}

/// Adds the rendered `message` of each finding, uncertified region and note to a kernel's JSON
/// (the typed fields stay beside it).
fn with_messages(v: &mut Value, k: &check::KernelReport) {
    for (i, f) in k.findings.iter().enumerate() {
        v["findings"][i]["message"] = json!(render::finding_message(f));
    }
    for (i, u) in k.uncertified.iter().enumerate() {
        v["uncertified"][i]["message"] = json!(render::uncertified_message(u));
    }
    for (i, n) in k.notes.iter().enumerate() {
        v["notes"][i]["message"] = json!(render::note_message(n));
    }
}

const RULES: [(&str, &str); 5] = [
    ("race", "Two threads access the same memory in the same phase, at least one writes, not both atomically."),
    ("barrier_divergence", "A barrier or warp collective that some threads of a block (or warp) reach and others do not."),
    ("out_of_bounds", "An access outside the declared size of a shared array or buffer."),
    ("uncertified", "A region the engine could not decide (unsupported instruction, timeout, input-dependent address)."),
    ("error", "The input could not be parsed or compiled."),
];

fn sarif_location(file: &str, l: &Location) -> Value {
    let uri = match &l.source {
        Some(src) if !file.ends_with(".cu") => src.clone(),
        _ => file.to_string(),
    };
    json!({ "physicalLocation": { "artifactLocation": { "uri": uri }, "region": { "startLine": l.line } } })
}

pub fn sarif(reports: &[FileReport]) -> String {
    let mut results = Vec::new();
    for r in reports {
        for d in &r.diagnostics {
            // SARIF's levels are `error`, `warning` and `note`, as the diagnostics' severities.
            let level = if matches!(d.severity, "warning" | "note") { d.severity } else { "error" };
            results.push(json!({
                "ruleId": "error", "level": level, "message": { "text": d.message },
                "locations": [{ "physicalLocation": { "artifactLocation": { "uri": r.file }, "region": { "startLine": d.line, "startColumn": d.column } } }]
            }));
        }
        for k in &r.kernels {
            for f in &k.findings {
                let mut locs: Vec<Value> = f.accesses.iter().map(|a| sarif_location(&r.file, &a.location)).collect();
                if let Some(b) = &f.barrier {
                    locs.push(sarif_location(&r.file, b));
                }
                let primary = locs.first().cloned().unwrap_or_else(|| json!({ "physicalLocation": { "artifactLocation": { "uri": r.file } } }));
                let related: Vec<Value> = locs
                    .iter()
                    .skip(1)
                    .enumerate()
                    .map(|(i, l)| {
                        let mut l = l.clone();
                        l["id"] = json!(i + 1);
                        l["message"] = json!({ "text": "the other access" });
                        l
                    })
                    .collect();
                results.push(json!({
                    "ruleId": f.kind.verdict().as_str(),
                    "level": if f.is_warning() { "warning" } else { "error" },
                    "message": { "text": format!("{}: {}", k.name, render::finding_message(f)) },
                    "locations": [primary],
                    "relatedLocations": related,
                    "properties": { "kernel": k.name, "threads": f.threads, "launch": f.launch, "replayed": f.replayed }
                }));
            }
            for u in &k.uncertified {
                let loc = u
                    .location
                    .as_ref()
                    .map_or_else(|| json!({ "physicalLocation": { "artifactLocation": { "uri": r.file } } }), |l| sarif_location(&r.file, l));
                let (rule, level) = if k.verdict == check::Verdict::Error { ("error", "error") } else { ("uncertified", "note") };
                results.push(json!({ "ruleId": rule, "level": level, "message": { "text": format!("{}: {}", k.name, render::uncertified_message(u)) }, "locations": [loc] }));
            }
        }
    }
    let rules: Vec<Value> =
        RULES.iter().map(|(id, text)| json!({ "id": id, "shortDescription": { "text": text }, "helpUri": format!("{}#{id}", ide::DOCS_URL) })).collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{ "tool": { "driver": { "name": "lark", "version": env!("CARGO_PKG_VERSION"), "informationUri": ide::DOCS_URL, "rules": rules } }, "results": results }]
    });
    serde_json::to_string_pretty(&doc).expect("serialisable")
}
