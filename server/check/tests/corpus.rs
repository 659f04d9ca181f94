//! The engine scored on the corpus (`tests/corpus`): every deliberately buggy kernel must be
//! caught with the right kind on the right lines, every correct kernel must come out `verified`
//! (or `uncertified` with a reason — never a finding), and every finding must have been replayed
//! by the interpreter. Prints the confusion table.

use check::{check_ptx, Context, FileReport, FindingKind, Options, Reason, Solver, SolverKind, Verdict};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

struct Expect {
    file: String,
    kernel: String,
    verdict: String,
    lines: Vec<u32>,
    /// The lines of a tolerated write-write race of equal values (a warning), if one is expected.
    benign: Vec<u32>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn expectations() -> Vec<Expect> {
    let mut out = Vec::new();
    let mut metas: Vec<PathBuf> =
        std::fs::read_dir(corpus_dir()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".meta.toml")).collect();
    metas.sort();
    for m in metas {
        let stem = m.file_name().unwrap().to_string_lossy().trim_end_matches(".meta.toml").to_string();
        let v: toml::Table = std::fs::read_to_string(&m).unwrap().parse().unwrap();
        for e in v["expect"].as_array().unwrap() {
            out.push(Expect {
                file: stem.clone(),
                kernel: e["kernel"].as_str().unwrap().to_string(),
                verdict: e["verdict"].as_str().unwrap().to_string(),
                lines: e.get("lines").and_then(|l| l.as_array()).map(|l| l.iter().map(|x| x.as_integer().unwrap() as u32).collect()).unwrap_or_default(),
                benign: e
                    .get("benign_lines")
                    .and_then(|l| l.as_array())
                    .map(|l| l.iter().map(|x| x.as_integer().unwrap() as u32).collect())
                    .unwrap_or_default(),
            });
        }
    }
    assert!(out.len() >= 30, "the corpus has at least 30 kernels");
    out
}

fn run(file: &str, opts: &Options, solver: &mut Solver) -> FileReport {
    let dir = corpus_dir();
    let ptx = std::fs::read_to_string(dir.join(format!("{file}.ptx"))).unwrap();
    let cu = std::fs::read_to_string(dir.join(format!("{file}.cu"))).unwrap();
    let iface = spec::parse_lark_toml("lark.toml", &std::fs::read_to_string(dir.join("lark.toml")).unwrap()).unwrap();
    let cx = Context { interface: Some(&iface), cu_text: Some(&cu), only: None };
    check_ptx(file, &ptx, &cx, opts, solver)
}

/// The same set of lines (a statement racing with itself lists its line twice).
fn same_lines(a: &[u32], b: &[u32]) -> bool {
    let norm = |v: &[u32]| {
        let mut v = v.to_vec();
        v.sort();
        v.dedup();
        v
    };
    norm(a) == norm(b)
}

fn kind_word(k: FindingKind) -> &'static str {
    k.verdict().as_str()
}

#[test]
fn corpus_scores() {
    let mut solver = Solver::new();
    let opts = Options::default();
    let mut table: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut reports: BTreeMap<String, FileReport> = BTreeMap::new();
    for e in expectations() {
        let report = reports.entry(e.file.clone()).or_insert_with(|| run(&e.file, &opts, &mut solver));
        let k = report.kernels.iter().find(|k| k.name == e.kernel).unwrap_or_else(|| panic!("{}: kernel {} not found", e.file, e.kernel));
        *table.entry((e.verdict.clone(), k.verdict.as_str().to_string())).or_default() += 1;
        for f in &k.findings {
            if !f.replayed {
                failures.push(format!("{}: finding not replayed: {}", e.kernel, check::render::finding_message(f)));
            }
        }
        // Tolerated races (equal values written) are warnings: expected where the meta says so,
        // a false alarm nowhere, and never the finding a bug is caught by.
        let benign_lines: Vec<Vec<u32>> =
            k.findings.iter().filter(|f| f.benign.is_some()).map(|f| f.accesses.iter().map(|a| a.location.line).collect()).collect();
        if !e.benign.is_empty() && !benign_lines.iter().any(|l| same_lines(l, &e.benign)) {
            failures.push(format!("{}: expected a tolerated race on lines {:?}, got {:?}", e.kernel, e.benign, benign_lines));
        }
        let findings: Vec<&check::Finding> = k.findings.iter().filter(|f| f.benign.is_none()).collect();
        if e.verdict == "verified" {
            if let Some(f) = findings.first() {
                failures.push(format!("{}: false alarm: {}", e.kernel, check::render::finding_message(f)));
            } else if k.verdict == Verdict::Uncertified && k.uncertified.is_empty() {
                failures.push(format!("{}: uncertified without a reason", e.kernel));
            }
            continue;
        }
        let hit = findings.iter().any(|f| {
            let lines: Vec<u32> = match f.kind {
                FindingKind::BarrierDivergence => f.barrier.iter().map(|b| b.line).collect(),
                _ => f.accesses.iter().map(|a| a.location.line).collect(),
            };
            kind_word(f.kind) == e.verdict && same_lines(&lines, &e.lines)
        });
        if !hit {
            let got: Vec<String> = k
                .findings
                .iter()
                .map(|f| {
                    format!(
                        "{} {:?}",
                        kind_word(f.kind),
                        f.accesses.iter().map(|a| a.location.line).chain(f.barrier.iter().map(|b| b.line)).collect::<Vec<_>>()
                    )
                })
                .collect();
            failures.push(format!("{}: expected {} on lines {:?}, got {} with {:?}", e.kernel, e.verdict, e.lines, k.verdict.as_str(), got));
        }
    }
    println!("confusion table (expected -> reported: count):");
    for ((want, got), n) in &table {
        println!("  {want:>20} -> {got:<20} {n}");
    }
    assert!(failures.is_empty(), "corpus failures:\n{}", failures.join("\n"));
}

/// The SMT encoding agrees with exhaustive enumeration (the exact oracle for concrete launches)
/// on every corpus kernel: same verdict, except where the solver times out (uncertified).
#[test]
fn smt_agrees_with_enumeration() {
    let mut solver = Solver::new();
    let enumerate = Options::default();
    let smt = Options { enumerate: false, timeout_ms: Some(10_000), ..Options::default() };
    let mut files: Vec<String> = expectations().into_iter().map(|e| e.file).collect();
    files.dedup();
    let mut disagreements = Vec::new();
    let mut compared = 0;
    for f in files {
        let a = run(&f, &enumerate, &mut solver);
        let b = run(&f, &smt, &mut solver);
        for (ka, kb) in a.kernels.iter().zip(&b.kernels) {
            compared += 1;
            let timed_out =
                [ka, kb].iter().any(|k| k.uncertified.iter().any(|u| matches!(u.reason, Reason::SolverTimeout { .. } | Reason::BudgetExhausted { .. })));
            if ka.verdict != kb.verdict && !timed_out {
                disagreements.push(format!(
                    "{}: enumeration says {}, SMT says {} ({:?})",
                    ka.name,
                    ka.verdict.as_str(),
                    kb.verdict.as_str(),
                    kb.uncertified.first().map(check::render::uncertified_message)
                ));
            }
        }
    }
    println!("compared {compared} kernels");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// The same kernels compiled differently (`tests/corpus/extra`: `-O3`, sm_90 / PTX 7.8) get the
/// same verdicts: loops rotated and unrolled differently must not change the answer.
#[test]
fn compiler_variants_keep_their_verdicts() {
    let dir = corpus_dir();
    let iface = spec::parse_lark_toml("lark.toml", &std::fs::read_to_string(dir.join("lark.toml")).unwrap()).unwrap();
    let expected: BTreeMap<String, String> = expectations().into_iter().map(|e| (e.kernel, e.verdict)).collect();
    let mut solver = Solver::new();
    let mut variants: Vec<PathBuf> =
        std::fs::read_dir(dir.join("extra")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "ptx")).collect();
    variants.sort();
    assert!(!variants.is_empty());
    let mut failures = Vec::new();
    for v in &variants {
        let name = v.file_name().unwrap().to_string_lossy().to_string();
        let base = name.split('.').next().unwrap();
        let ptx = std::fs::read_to_string(v).unwrap();
        let cu = std::fs::read_to_string(dir.join(format!("{base}.cu"))).unwrap();
        let cx = Context { interface: Some(&iface), cu_text: Some(&cu), only: None };
        let report = check_ptx(&name, &ptx, &cx, &Options::default(), &mut solver);
        for k in &report.kernels {
            let want = &expected[&k.name];
            if k.verdict.as_str() != want {
                failures.push(format!(
                    "{name}: {} expected {want}, got {} ({:?})",
                    k.name,
                    k.verdict.as_str(),
                    k.uncertified.first().map(check::render::uncertified_message)
                ));
            }
        }
    }
    println!("{} compiler variants checked", variants.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Z3 and cvc5 decide every corpus query alike: each kernel is checked by the SMT path alone
/// (no enumeration) with each solver, and the verdicts must be the same, except where either
/// solver ran out of time (those are counted and printed, and must stay a minority).
#[test]
fn solvers_agree() {
    let mut solver = Solver::new();
    let with = |kind| Options { enumerate: false, solver: kind, ..Options::default() };
    let mut files: Vec<String> = expectations().into_iter().map(|e| e.file).collect();
    files.dedup();
    let (mut compared, mut timed_out, mut queries) = (0, Vec::new(), [0u64; 2]);
    let mut disagreements = Vec::new();
    for f in &files {
        let z3 = run(f, &with(SolverKind::Z3), &mut solver);
        let cvc5 = run(f, &with(SolverKind::Cvc5), &mut solver);
        for (a, b) in z3.kernels.iter().zip(&cvc5.kernels) {
            queries[0] += a.stats.queries;
            queries[1] += b.stats.queries;
            let failed = [a, b].iter().flat_map(|k| &k.uncertified).find(|u| matches!(u.reason, Reason::SolverFailure { .. }));
            if let Some(u) = failed {
                disagreements.push(format!("{}: a solver failed: {}", a.name, check::render::uncertified_message(u)));
                continue;
            }
            let undecided =
                |k: &check::KernelReport| k.uncertified.iter().any(|u| matches!(u.reason, Reason::SolverTimeout { .. } | Reason::BudgetExhausted { .. }));
            if undecided(a) || undecided(b) {
                timed_out.push(format!("{} (z3 {}, cvc5 {})", a.name, a.verdict.as_str(), b.verdict.as_str()));
                continue;
            }
            compared += 1;
            if a.verdict != b.verdict {
                disagreements.push(format!("{}: z3 says {}, cvc5 says {}", a.name, a.verdict.as_str(), b.verdict.as_str()));
            }
        }
    }
    println!("solvers agree on {compared} kernels ({} and {} queries); not compared, a solver ran out of time: {}", queries[0], queries[1], timed_out.len());
    for t in &timed_out {
        println!("  {t}");
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(compared > 2 * timed_out.len(), "too few kernels decided by both solvers to compare them: {compared} compared, {} timed out", timed_out.len());
}
