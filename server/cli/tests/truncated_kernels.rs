//! Truncated and mutated kernels never pass.
//!
//! A kernel whose body did not parse completely is `error` (`incomplete_parse`), never
//! `verified`: in the CLI's text, JSON and SARIF (spawning `lark`), and through the analysis
//! host the editor uses. A fuzz harness cuts and mutates every corpus PTX at pseudo-random
//! places, for a bounded time (`LARK_FUZZ_SECS`, default 40 s; the seed is `LARK_FUZZ_SEED`), and
//! asserts for every case: no panic in the engine, no `verified` for a kernel whose body had a
//! parse error, and no analysis longer than the kernel budget plus a margin.

use ide::{AnalysisHost, FileKind, Settings, SourceFile};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn corpus_ptx() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(repo().join("tests/corpus")).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "ptx")).collect();
    files.sort();
    files
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lark-truncated-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn lark(args: &[&str], dir: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lark")).args(args).current_dir(dir).output().expect("lark runs");
    (out.status.code().expect("lark exited normally"), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The reproduction of the issue: the first 970 bytes of a racy kernel end inside its body.
#[test]
fn a_kernel_cut_short_is_an_error_in_text_json_and_sarif() {
    let dir = temp_dir("head970");
    let text = std::fs::read(repo().join("tests/corpus/avgpool2_race.ptx")).unwrap();
    std::fs::write(dir.join("t.ptx"), &text[..970]).unwrap();

    let (code, out) = lark(&["check", "t.ptx"], &dir);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("kernel avgpool2_race: error"), "{out}");
    assert!(out.contains("expected `}`"), "{out}");
    assert!(!out.contains("verified"), "{out}");

    let (code, out) = lark(&["check", "t.ptx", "--format", "json"], &dir);
    assert_eq!(code, 1, "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let k = &doc["kernels"][0];
    assert_eq!((k["name"].as_str(), k["verdict"].as_str()), (Some("avgpool2_race"), Some("error")), "{doc:#}");
    assert_eq!(k["uncertified"][0]["kind"], "incomplete_parse", "{doc:#}");

    let (code, out) = lark(&["check", "t.ptx", "--format", "sarif"], &dir);
    assert_eq!(code, 1, "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["ruleId"] == "error" && r["level"] == "error"), "{doc:#}");
    assert!(results.iter().any(|r| r["message"]["text"].as_str().unwrap().starts_with("avgpool2_race: ")), "{doc:#}");
}

/// A body with a line the parser could not read is not the kernel that was written: `error`,
/// while the other kernels of the module are still checked.
#[test]
fn a_parse_error_inside_one_kernel_spares_the_others() {
    let dir = temp_dir("two");
    let text = std::fs::read_to_string(repo().join("tests/corpus/reduce_two_pass.ptx")).unwrap();
    // Break one instruction of the second kernel.
    let second = text.rfind(".entry").unwrap();
    let at = second + text[second..].find("ld.global").unwrap();
    let broken = format!("{}ld.global.f32 %f1, [%rd1+;{}", &text[..at], &text[at + text[at..].find('\n').unwrap()..]);
    std::fs::write(dir.join("k.ptx"), broken).unwrap();
    let (code, out) = lark(&["check", "k.ptx", "--format", "json"], &dir);
    assert_eq!(code, 1, "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let verdicts: Vec<(&str, &str)> =
        doc["kernels"].as_array().unwrap().iter().map(|k| (k["name"].as_str().unwrap(), k["verdict"].as_str().unwrap())).collect();
    assert_eq!(verdicts.len(), 2, "{doc:#}");
    assert_eq!(verdicts[1].1, "error", "{doc:#}");
    assert_ne!(verdicts[0].1, "error", "{doc:#}");
}

/// xorshift64*: deterministic, so a failing case can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The nearest character boundary at or before `i`.
fn boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One damaged version of `text`, and what was done (for the failure message).
fn mutate(text: &str, rng: &mut Rng) -> (String, String) {
    let lines: Vec<&str> = text.lines().collect();
    let line = rng.below(lines.len());
    match rng.below(7) {
        // Cut anywhere (most cuts land inside a kernel body).
        0 | 1 => {
            let at = boundary(text, rng.below(text.len()));
            (text[..at].to_string(), format!("cut at byte {at}"))
        }
        2 => {
            let mut l = lines.clone();
            l.remove(line);
            (l.join("\n"), format!("line {} deleted", line + 1))
        }
        3 => {
            let mut l = lines.clone();
            l.insert(line, lines[line]);
            (l.join("\n"), format!("line {} doubled", line + 1))
        }
        4 => {
            // Damage one character of a line: a bracket, a separator or a digit.
            let l = lines[line];
            let chars: Vec<(usize, char)> = l.char_indices().filter(|(_, c)| "[]{}(),;%.0123456789".contains(*c)).collect();
            if chars.is_empty() {
                return (text.to_string(), "unchanged".into());
            }
            let (i, c) = chars[rng.below(chars.len())];
            let replacement = ["", "]", "{", ";", "7", "%", "x"][rng.below(7)];
            let mut new = lines.clone();
            let damaged = format!("{}{replacement}{}", &l[..i], &l[i + c.len_utf8()..]);
            new[line] = &damaged;
            (new.join("\n"), format!("line {}: `{c}` became `{replacement}`", line + 1))
        }
        5 => {
            let at = boundary(text, rng.below(text.len()));
            let junk = ["@", "}", "{", ".entry x(", "ld.global", "\0", "é"][rng.below(7)];
            (format!("{}{junk}{}", &text[..at], &text[at..]), format!("`{}` inserted at byte {at}", junk.escape_debug()))
        }
        _ => {
            let other = rng.below(lines.len());
            let mut l = lines.clone();
            l.swap(line, other);
            (l.join("\n"), format!("lines {} and {} swapped", line + 1, other + 1))
        }
    }
}

/// The kernels of `text` whose body had a parse error: an error inside the kernel's span (not at
/// its first token, where the parser notices that the previous kernel lost its `}`), or a body
/// without its closing brace.
fn damaged_kernels(text: &str) -> Vec<String> {
    let parsed = ptx::parse(text);
    parsed
        .module
        .functions
        .iter()
        .filter(|f| f.kind == ptx::FunctionKind::Entry && f.body.is_some())
        .filter(|f| {
            let inside = parsed.errors.iter().any(|e| e.span.start > f.span.start && e.span.start < f.span.end);
            let closed = text[..f.span.end as usize].trim_end().ends_with('}');
            inside || !closed
        })
        .map(|f| f.name.to_string())
        .collect()
}

/// The per-kernel budget of the engine (its default), and the margin a whole file may take past it.
const BUDGET: Duration = Duration::from_secs(20);
const MARGIN: Duration = Duration::from_secs(10);

#[test]
fn truncated_and_mutated_corpus_kernels_never_pass() {
    let secs: u64 = std::env::var("LARK_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(40);
    let seed: u64 = std::env::var("LARK_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_1a4c);
    let files: Vec<(PathBuf, String)> = corpus_ptx().into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect();
    assert!(files.len() >= 20, "the corpus has {} PTX files", files.len());
    let started = Instant::now();
    let mut host = AnalysisHost::new(Settings::default());
    let mut rng = Rng(seed | 1);
    let (mut cases, mut damaged_seen) = (0usize, 0usize);
    // Every file at least once, then as many as the time allows.
    while cases < files.len() || started.elapsed() < Duration::from_secs(secs) {
        let case_seed = rng.next() | 1;
        let mut case_rng = Rng(case_seed);
        let (path, original) = &files[cases % files.len()];
        let (text, what) = mutate(original, &mut case_rng);
        let damaged = damaged_kernels(&text);
        damaged_seen += damaged.len();
        let context = format!("{} ({what}; replay with LARK_FUZZ_SEED={seed}, case {cases}, case seed {case_seed})", path.display());
        // The file's own path, so that the corpus's lark.toml and .cu apply as they would.
        let key = format!("case-{cases}");
        host.set_file(SourceFile::new(key.clone(), Some(path.clone()), FileKind::Ptx, text.into(), cases as i32));
        let t = Instant::now();
        let fa = host.snapshot().analyse(&key).unwrap_or_else(|_| panic!("cancelled: {context}"));
        let took = t.elapsed();
        host.remove_file(&key);
        assert!(took < BUDGET + MARGIN, "{context}: took {took:?}");
        for k in &fa.kernels {
            let r = &k.report;
            assert!(!r.uncertified.iter().any(|u| matches!(u.reason, check::Reason::EngineError { .. })), "{context}: {}: {:?}", k.name, r.uncertified);
            if damaged.contains(&k.name) {
                assert_eq!(r.verdict, check::Verdict::Error, "{context}: {} had a parse error in its body", k.name);
                assert!(r.uncertified.iter().any(|u| matches!(u.reason, check::Reason::IncompleteParse { .. })), "{context}: {}", k.name);
            }
        }
        cases += 1;
    }
    eprintln!("{cases} cases in {:?}, {damaged_seen} damaged kernels", started.elapsed());
    assert!(damaged_seen > cases / 4, "the mutations rarely damage a kernel: {damaged_seen} of {cases}");
}
