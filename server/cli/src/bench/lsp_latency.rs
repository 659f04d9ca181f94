//! `lark bench lsp`: how long the language server takes from an edit to the diagnostics of the
//! edited version, on a generated PTX module of many kernels.
//!
//! The module is made of corpus kernels (their clang-19 PTX, `.loc` lines kept), renamed
//! `kNNN_<name>`, with a `bench.cu` holding their signatures (for parameter names) and a
//! `lark.toml` with their corpus interfaces. The benchmark opens it in `lark serve` (this
//! binary), waits for the first full analysis, then inserts a new line into one kernel in the
//! middle of the module again and again, timing `didChange` → `publishDiagnostics` of that
//! version. Every other kernel moves down a line each time and must come from the cache.

use lsp_test_client::StdioClient;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

const DEFAULT_CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus");

/// Kernels with their interface in `lark.toml`, one `.entry` per file, no module-scope
/// variables, not mangled; the biggest first.
const KERNELS: [&str; 20] = [
    "scan_blelloch",
    "layernorm",
    "matmul_tile_load_oob",
    "matmul_tiled",
    "matmul_missing_second_sync",
    "transpose_tiled",
    "rmsnorm",
    "reduce_sync_in_branch",
    "layernorm_stats_oob",
    "transpose_missing_sync",
    "dot_atomic",
    "stencil_1d",
    "stencil_halo_overlap",
    "scan_hillis_steele",
    "shfl_partial_lanes",
    "scan_missing_sync",
    "blur_early_return",
    "histogram_shared",
    "reduce_sum_shared",
    "reduce_missing_sync",
];

/// The kernel that is edited (its copy nearest the middle of the module).
const EDITED: &str = "reduce_missing_sync";

#[derive(clap::Args)]
pub struct Options {
    /// Kernels in the generated module.
    #[arg(long, default_value_t = 100, value_parser = positive)]
    kernels: usize,
    /// Edits timed.
    #[arg(long, default_value_t = 20, value_parser = positive)]
    edits: usize,
    /// Where the corpus kernels come from.
    #[arg(long, default_value = DEFAULT_CORPUS)]
    corpus: PathBuf,
    /// Keep the generated files (their directory is printed).
    #[arg(long)]
    keep: bool,
    /// Lines the module has at least.
    #[arg(long, default_value_t = 20_000)]
    min_lines: usize,
    /// The server's log level.
    #[arg(long, default_value = "warn")]
    log: String,
}

fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("`{s}` is not a positive number")),
    }
}

pub fn run(o: Options) -> ExitCode {
    match bench(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lark bench lsp: {e}");
            ExitCode::from(1)
        }
    }
}

struct Source {
    name: String,
    /// The `.entry` through its closing brace.
    function: String,
    /// `extern "C" __global__ void name(...)`.
    signature: String,
    /// Its `[kernel.name]` tables from `lark.toml`.
    interface: String,
}

fn load(corpus: &Path, name: &str, toml: &str) -> Result<Source, String> {
    let read = |f: &str| std::fs::read_to_string(corpus.join(f)).map_err(|e| format!("{}: {e}", corpus.join(f).display()));
    let ptx = read(&format!("{name}.ptx"))?;
    let cu = read(&format!("{name}.cu"))?;
    let start = ptx.find(&format!(".visible .entry {name}(")).ok_or(format!("{name}.ptx has no entry {name}"))?;
    let end = ptx[start..].find("\n}\n").map(|e| start + e + 3).ok_or(format!("{name}.ptx: unterminated entry"))?;
    let sig_start = cu.find(&format!(" {name}(")).and_then(|p| cu[..p].rfind("extern")).ok_or(format!("{name}.cu: no signature"))?;
    let sig_end = cu[sig_start..].find(')').map(|e| sig_start + e + 1).ok_or(format!("{name}.cu: no signature"))?;
    let head = format!("[kernel.{name}]");
    let t = toml.find(&head).ok_or(format!("lark.toml has no [kernel.{name}]"))?;
    let mut interface = String::new();
    for line in toml[t..].lines() {
        if line.starts_with("[kernel.") && !line.starts_with(&head[..head.len() - 1]) {
            break;
        }
        interface.push_str(line);
        interface.push('\n');
    }
    Ok(Source { name: name.into(), function: ptx[start..end].to_string(), signature: cu[sig_start..sig_end].to_string(), interface })
}

/// The module, `bench.cu` and `lark.toml`, and the name of the kernel to edit.
fn generate(o: &Options) -> Result<(String, String, String, String), String> {
    let toml = std::fs::read_to_string(o.corpus.join("lark.toml")).map_err(|e| format!("{}: {e}", o.corpus.join("lark.toml").display()))?;
    let sources = KERNELS.iter().map(|n| load(&o.corpus, n, &toml)).collect::<Result<Vec<_>, _>>()?;
    let lines = |s: &Source| s.function.lines().count();
    let target = o.min_lines.div_ceil(o.kernels);
    let (big, small): (Vec<&Source>, Vec<&Source>) = sources.iter().partition(|s| lines(s) >= target);
    let mut ptx = String::from("//\n// Generated by `lark bench lsp` from the LARK kernel corpus\n//\n\n.version 7.0\n.target sm_80\n.address_size 64\n\n");
    let mut cu = String::from("// Signatures of the kernels of bench.ptx (for parameter names).\n");
    let mut iface = String::from("# Interfaces of the kernels of bench.ptx.\n\n");
    let (mut total, mut bi, mut si) = (0usize, 0usize, 0usize);
    let mut edited = None;
    for i in 0..o.kernels {
        let s = if (total < target * (i + 1) || small.is_empty()) && !big.is_empty() {
            bi += 1;
            big[(bi - 1) % big.len()]
        } else {
            si += 1;
            small[(si - 1) % small.len()]
        };
        let new = format!("k{i:03}_{}", s.name);
        if s.name == EDITED && (edited.is_none() || i <= o.kernels / 2) {
            edited = Some(new.clone());
        }
        let f = s.function.replace(&s.name, &new);
        total += f.lines().count();
        let _ = writeln!(ptx, "\t// .globl\t{new}\n{f}");
        let _ = writeln!(cu, "{} {{}}", s.signature.replace(&s.name, &new));
        let _ = writeln!(iface, "{}", s.interface.replace(&format!("[kernel.{}", s.name), &format!("[kernel.{new}")));
    }
    ptx.push_str("\t.file\t1 \"./bench.cu\"\n\t.file\t2 \"/usr/lib/llvm-19/lib/clang/19/include/__clang_cuda_builtin_vars.h\"\n");
    let edited = edited.ok_or(format!("no copy of {EDITED} in the module"))?;
    Ok((ptx, cu, iface, edited))
}

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn bench(o: &Options) -> Result<(), String> {
    let (ptx, cu, iface, edited) = generate(o)?;
    let dir = std::env::temp_dir().join(format!("lark-bench-lsp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join("bench.ptx");
    for (name, text) in [("bench.ptx", &ptx), ("bench.cu", &cu), ("lark.toml", &iface)] {
        std::fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
    }
    let line_count = ptx.lines().count();
    println!("module: {} kernels, {line_count} lines, {:.1} MB ({})", o.kernels, ptx.len() as f64 / 1e6, path.display());
    if line_count < o.min_lines {
        return Err(format!("the module has {line_count} lines, fewer than {}", o.min_lines));
    }

    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.arg("serve").env("RUST_LOG", "off");
    let mut c = StdioClient::spawn(cmd).map_err(|e| format!("cannot start `lark serve`: {e}"))?;
    let root = format!("file://{}", dir.display());
    let uri = format!("file://{}", path.display());
    c.initialize(&root, json!({ "logLevel": o.log })).map_err(|e| format!("initialize: {e}"))?;
    let long = Duration::from_secs(600);
    let published =
        |c: &mut StdioClient, version: i64| c.wait_for(long, |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version);

    let t = Instant::now();
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri, "languageId": "ptx", "version": 1, "text": ptx } }));
    let first = published(&mut c, 1).ok_or("no diagnostics for the opened module")?;
    let initial = t.elapsed();
    let status = c.wait_for(long, |m| m["method"] == "lark/fileStatus" && m["params"]["version"] == 1).ok_or("no file status")?;
    let kernels = status["params"]["kernels"].as_array().cloned().unwrap_or_default();
    let mut verdicts = std::collections::BTreeMap::<String, usize>::new();
    for k in &kernels {
        *verdicts.entry(k["verdict"].as_str().unwrap_or("?").to_string()).or_default() += 1;
    }
    println!(
        "open: {} kernels checked in {:.1} s ({} diagnostics; {})",
        kernels.len(),
        initial.as_secs_f64(),
        first["params"]["diagnostics"].as_array().map_or(0, Vec::len),
        verdicts.iter().map(|(v, n)| format!("{n} {v}")).collect::<Vec<_>>().join(", ")
    );
    let progress = c.inbox.iter().filter(|m| m["method"] == "$/progress").count();
    println!("work-done progress notifications while opening: {progress}");
    let checks = |c: &mut StdioClient| c.request("lark/stats", Value::Null, long).ok().and_then(|s| s["kernelChecks"].as_u64()).unwrap_or(0);
    let checks_before = checks(&mut c);

    // The line after the edited kernel's opening brace.
    let entry = ptx.find(&format!(".entry {edited}(")).ok_or("edited kernel not found")?;
    let brace = entry + ptx[entry..].find("\n{\n").ok_or("no body")? + 1;
    let line = ptx[..brace].matches('\n').count() + 1;
    let mut latencies = Vec::new();
    let mut engine_ms = Vec::new();
    for i in 0..o.edits {
        let version = 2 + i as i64;
        // Leave the document quiet for longer than the debounce, as between real edits.
        std::thread::sleep(lsp::DEBOUNCE + Duration::from_millis(100));
        let t = Instant::now();
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "range": { "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 0 } }, "text": format!("\t// bench edit {i}\n") }] }),
        );
        published(&mut c, version).ok_or(format!("no diagnostics for version {version}"))?;
        latencies.push(t.elapsed().as_secs_f64() * 1e3);
        if let Some(s) = c.wait_for(long, |m| m["method"] == "lark/fileStatus" && m["params"]["version"] == version) {
            let k = s["params"]["kernels"].as_array().and_then(|ks| ks.iter().find(|k| k["name"] == edited.as_str()).cloned());
            if let Some(ms) = k.and_then(|k| k["millis"].as_f64()) {
                engine_ms.push(ms);
            }
        }
        c.inbox.clear();
    }
    let rechecked = checks(&mut c) - checks_before;
    let hwm = vm_hwm_kib(c.pid());
    let _ = c.shutdown(Duration::from_secs(10));
    if !o.keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let mut sorted = latencies.clone();
    sorted.sort_by(f64::total_cmp);
    engine_ms.sort_by(f64::total_cmp);
    println!(
        "edited kernel: {edited} ({} edits, one new line each; the {} kernels below it move down)",
        o.edits,
        o.kernels - 1 - edited[1..4].parse::<usize>().unwrap_or(0)
    );
    println!(
        "didChange -> publishDiagnostics: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms (engine time of the edited kernel: p50 {:.1} ms)",
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.95),
        sorted.last().copied().unwrap_or(0.0),
        if engine_ms.is_empty() { 0.0 } else { percentile(&engine_ms, 0.5) }
    );
    println!("kernel checks during the edits: {rechecked} for {} edits", o.edits);
    match hwm {
        Some(k) => println!("server peak RSS (VmHWM): {:.1} MB", k as f64 / 1024.0),
        None => println!("server peak RSS: unavailable (no /proc)"),
    }
    if rechecked != o.edits as u64 {
        return Err(format!("expected only the edited kernel to be checked again ({} checks), saw {rechecked}", o.edits));
    }
    Ok(())
}
