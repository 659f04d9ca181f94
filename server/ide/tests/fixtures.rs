//! Engine fixtures with inline expectations, checked through the analysis host (the path the
//! editor and the CLI both use): each `tests/fixtures/*.cu` carries its interface, its verdict
//! and, under each line that must get a finding, an annotation naming it:
//!
//! ```text
//! // verdict: race
//! // lark.toml:
//! // [kernel.k]
//! // ...
//!     if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
//! //^ race with line 15
//! ```
//!
//! `//^ CODE` says the line above has an error with that code (`race`, `barrier_divergence`,
//! `out_of_bounds`, `mismatch`); `//^ warning CODE` says it is a warning (a finding that needs
//! an undeclared launch or undeclared index values); `with line N` says its related information
//! (the other access of a race) is on line N. Findings and annotations must match exactly, both ways, and every
//! finding must have been replayed by the interpreter.

use ide::{AnalysisHost, FileKind, Settings, SourceFile};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const FINDING_CODES: [&str; 4] = ["race", "barrier_divergence", "out_of_bounds", "mismatch"];

/// (code, 1-based line, related line)
type Expected = BTreeSet<(String, u32, Option<u32>)>;

struct Fixture {
    verdict: String,
    lark_toml: String,
    expected: Expected,
}

fn parse_fixture(text: &str) -> Fixture {
    let (mut verdict, mut lark_toml, mut expected) = (String::new(), String::new(), Expected::new());
    let mut in_toml = false;
    let mut last_code_line = 0u32;
    for (i, line) in text.lines().enumerate() {
        let n = i as u32 + 1;
        if let Some(v) = line.strip_prefix("// verdict: ") {
            verdict = v.trim().to_string();
        } else if line == "// lark.toml:" {
            in_toml = true;
            continue;
        } else if let Some(a) = line.strip_prefix("//^ ") {
            let (code, related) = match a.split_once(" with line ") {
                Some((c, l)) => (c.trim(), Some(l.trim().parse::<u32>().expect("a line number after `with line`"))),
                None => (a.trim(), None),
            };
            let bare = code.strip_prefix("warning ").unwrap_or(code);
            assert!(FINDING_CODES.contains(&bare), "line {n}: unknown code `{code}`");
            expected.insert((code.to_string(), last_code_line, related));
            continue;
        }
        match line.strip_prefix("// ") {
            Some(t) if in_toml => {
                lark_toml.push_str(t);
                lark_toml.push('\n');
            }
            _ => in_toml = false,
        }
        last_code_line = n;
    }
    assert!(!verdict.is_empty(), "a fixture names its verdict (`// verdict: ...`)");
    Fixture { verdict, lark_toml, expected }
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "cu")).collect();
    files.sort();
    files
}

#[test]
fn every_fixture_gets_exactly_its_annotated_findings() {
    let files = fixtures();
    assert!(files.len() >= 5, "{} fixtures", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let fixture = parse_fixture(&text);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // Each fixture in its own folder, beside its own lark.toml.
        let dir = std::env::temp_dir().join(format!("lark-ide-fixture-{}-{}", std::process::id(), name.trim_end_matches(".cu")));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A fixture without an interface is opened with no lark.toml at all.
        if !fixture.lark_toml.is_empty() {
            std::fs::write(dir.join("lark.toml"), &fixture.lark_toml).unwrap();
        }
        let file = dir.join(&name);
        std::fs::write(&file, &text).unwrap();

        let mut host = AnalysisHost::new(Settings::default());
        let key = format!("file://{}", file.display());
        host.set_file(SourceFile::new(key.clone(), Some(file.clone()), FileKind::Cu, text.as_str().into(), 1));
        let fa = host.snapshot().analyse(&key).unwrap();
        let verdicts: Vec<&str> = fa.kernels.iter().map(|k| k.report.verdict.as_str()).collect();
        if verdicts != [fixture.verdict.as_str()] {
            failures.push(format!("{name}: verdicts {verdicts:?}, expected [{}]", fixture.verdict));
        }
        let mut got = Expected::new();
        for d in ide::diagnostics(&fa).iter().filter(|d| FINDING_CODES.contains(&d.code)) {
            let line = fa.line_of(d.range.start) + 1;
            let related = d.related.first().map(|r| fa.line_of(r.range.start) + 1);
            let code = if d.severity == ide::Severity::Warning { format!("warning {}", d.code) } else { d.code.to_string() };
            got.insert((code, line, related));
            if d.data.as_ref().and_then(|v| v["replayed"].as_bool()) != Some(true) {
                failures.push(format!("{name}:{line}: a {} that was not replayed", d.code));
            }
        }
        for missing in fixture.expected.difference(&got) {
            failures.push(format!("{name}: expected {missing:?}, not reported (got {got:?})"));
        }
        for extra in got.difference(&fixture.expected) {
            failures.push(format!("{name}: reported {extra:?}, not annotated"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
