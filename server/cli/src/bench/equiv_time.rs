//! `lark bench equiv`: how long the equivalence check takes on kernels with a PyTorch
//! reference, kernel by kernel (files one at a time, on the same analysis host as `lark check`).

use ide::{AnalysisHost, Settings, SourceFile};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Options {
    /// Folders (or files) to measure; default: tests/equiv and tests/corpus.
    paths: Vec<PathBuf>,
}

pub fn run(o: Options) -> ExitCode {
    let roots = if o.paths.is_empty() { vec![PathBuf::from("tests/equiv"), PathBuf::from("tests/corpus")] } else { o.paths };
    let mut files: Vec<PathBuf> = Vec::new();
    for root in &roots {
        if root.is_file() {
            files.push(root.clone());
        } else if let Ok(dir) = std::fs::read_dir(root) {
            let mut found: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "ptx")).collect();
            found.sort();
            files.extend(found);
        } else {
            eprintln!("lark bench equiv: {}: not a file or folder", root.display());
            return ExitCode::from(2);
        }
    }
    let mut host = AnalysisHost::new(Settings { workspace_root: std::env::current_dir().ok(), ..Settings::default() });
    let mut rows: Vec<(String, String, usize, f64, f64)> = Vec::new();
    println!("{:<44} {:<13} {:>9} {:>10} {:>10}", "kernel", "verdict", "outputs", "equiv ms", "total ms");
    for path in &files {
        let Ok(file) = SourceFile::read(path) else { continue };
        let key = file.key.clone();
        host.set_file(file);
        let started = Instant::now();
        let Ok(fa) = host.snapshot().analyse(&key) else { continue };
        let wall = started.elapsed().as_secs_f64() * 1e3;
        for k in &fa.kernels {
            let Some(eq) = &k.report.equivalence else { continue };
            let outputs = eq.shapes.iter().map(|s| s.outputs).sum();
            let millis = eq.shapes.iter().map(|s| s.millis).sum();
            let name = format!("{}:{}", short(path), k.name);
            println!("{:<44} {:<13} {:>9} {:>10.1} {:>10.1}", name, k.report.verdict.as_str(), outputs, millis, wall);
            rows.push((name, k.report.verdict.as_str().to_string(), outputs, millis, wall));
        }
        host.remove_file(&key);
    }
    if rows.is_empty() {
        println!("no kernel with a reference");
        return ExitCode::SUCCESS;
    }
    let mut times: Vec<f64> = rows.iter().map(|r| r.3).collect();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let count = |v: &str| rows.iter().filter(|r| r.1 == v).count();
    println!(
        "{} kernels: {} verified, {} mismatch, {} uncertified, {} other; equivalence time median {:.0} ms, p90 {:.0} ms, max {:.0} ms; {} over 1 s",
        rows.len(),
        count("verified"),
        count("mismatch"),
        count("uncertified"),
        rows.len() - count("verified") - count("mismatch") - count("uncertified"),
        pct(0.5),
        pct(0.9),
        pct(1.0),
        times.iter().filter(|t| **t > 1000.0).count()
    );
    ExitCode::SUCCESS
}

fn short(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
