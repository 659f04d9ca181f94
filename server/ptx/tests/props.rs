//! Property tests: real corpus PTX, mutated (byte ranges deleted, duplicated or swapped, PTX
//! tokens and random bytes inserted), never makes `ptx::parse_bytes` panic or hang, and every span
//! it returns lies within the text on character boundaries; the lexer's tokens cover any text in
//! order, with only whitespace and comments between them.
//!
//! 256 cases per property by default; `PROPTEST_CASES=20000 cargo test -p ptx --test props` for a
//! longer run.

use proptest::prelude::*;
use ptx::lexer::{Lexer, TokenKind};
use ptx::{Parse, Span, Statement};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

fn corpus() -> &'static [Vec<u8>] {
    static FILES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let mut paths: Vec<PathBuf> = [dir.clone(), dir.join("extra")]
            .iter()
            .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .collect();
        paths.sort();
        paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
    })
}

/// Tokens (and pieces of tokens) to insert: punctuation, directives, opcodes, registers, numbers
/// and the starts of strings and comments.
const VOCABULARY: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    ":",
    "@",
    "!",
    "<",
    ">",
    "|",
    "=",
    "+",
    "-",
    ".",
    "_",
    "%r1",
    "%rd2",
    "%p1",
    "%f3",
    "%tid.x",
    "%ctaid.y",
    ".reg",
    ".b32",
    ".u64",
    ".pred",
    ".f32",
    ".v4",
    ".global",
    ".shared",
    ".param",
    ".entry",
    ".func",
    ".visible",
    ".extern",
    ".loc",
    ".file",
    ".version",
    ".target",
    ".align",
    ".section",
    "ld",
    "st",
    "add",
    "mad.lo.s32",
    "bra.uni",
    "bar.sync",
    "setp.lt.s32",
    "atom.global.add.f32",
    "call.uni",
    "ret",
    "$L__BB0_1",
    "$L__BB0_1:",
    "0f3F800000",
    "0d3FF0000000000000",
    "0x",
    "0xFFFFFFFFFFFFFFFFFFFFFFFF",
    "0b",
    "0b102",
    "0f",
    "1.5e",
    "17U",
    "99999999999999999999999999999999999999999",
    "\"",
    "\"a.cu\"",
    "\\",
    "/*",
    "*/",
    "//",
    "/",
    "\n",
    "\t",
    " ",
    "é",
    "😀",
    "\u{0}",
    "\u{feff}",
    "@@DWARF",
];

#[derive(Clone, Debug)]
enum Mutation {
    /// Positions are fractions of the current length (in 1/65536ths), so they always apply.
    Delete {
        at: u16,
        len: u16,
    },
    Duplicate {
        at: u16,
        len: u16,
    },
    Swap {
        a: u16,
        b: u16,
        len: u16,
    },
    Token {
        at: u16,
        token: usize,
    },
    Bytes {
        at: u16,
        bytes: Vec<u8>,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let len = prop_oneof![1u16..8, 1u16..200, 1u16..4000];
    prop_oneof![
        1 => (any::<u16>(), len.clone()).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (any::<u16>(), len.clone()).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        1 => (any::<u16>(), any::<u16>(), len).prop_map(|(a, b, len)| Mutation::Swap { a, b, len }),
        3 => (any::<u16>(), 0..VOCABULARY.len()).prop_map(|(at, token)| Mutation::Token { at, token }),
        1 => (any::<u16>(), proptest::collection::vec(any::<u8>(), 1..16)).prop_map(|(at, bytes)| Mutation::Bytes { at, bytes }),
    ]
}

fn pos(at: u16, len: usize) -> usize {
    (at as usize * (len + 1)) >> 16
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let n = bytes.len();
    match m {
        Mutation::Delete { at, len } => {
            let s = pos(*at, n);
            bytes.drain(s..(s + *len as usize).min(n));
        }
        Mutation::Duplicate { at, len } => {
            let s = pos(*at, n);
            let piece = bytes[s..(s + *len as usize).min(n)].to_vec();
            bytes.splice(s..s, piece);
        }
        Mutation::Swap { a, b, len } => {
            let (mut a, mut b) = (pos(*a, n), pos(*b, n));
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            let len = (*len as usize).min(b - a).min(n - b);
            if len > 0 {
                let (left, right) = bytes.split_at_mut(b);
                left[a..a + len].swap_with_slice(&mut right[..len]);
            }
        }
        Mutation::Token { at, token } => {
            let s = pos(*at, n);
            bytes.splice(s..s, VOCABULARY[*token].bytes());
        }
        Mutation::Bytes { at, bytes: new } => {
            let s = pos(*at, n);
            bytes.splice(s..s, new.iter().copied());
        }
    }
}

/// `parse_bytes` on another thread, failing the property if it does not finish in time.
fn parse_with_deadline(bytes: Vec<u8>) -> (String, Parse) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(ptx::parse_bytes(&bytes));
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("parse_bytes did not finish in 20 s"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("parse_bytes panicked"),
    }
}

fn span_ok(text: &str, span: Span) -> Result<(), TestCaseError> {
    let r = span.range();
    prop_assert!(r.start <= r.end && r.end <= text.len(), "span {:?} outside a text of {} bytes", span, text.len());
    prop_assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end), "span {:?} splits a character", span);
    Ok(())
}

fn spans_ok(text: &str, parsed: &Parse) -> Result<(), TestCaseError> {
    for e in &parsed.errors {
        span_ok(text, e.span)?;
        prop_assert!(!e.message.is_empty());
    }
    for f in &parsed.module.functions {
        span_ok(text, f.span)?;
        span_ok(text, f.name_span)?;
        prop_assert_eq!(&text[f.name_span.range()], f.name.as_str());
        for p in f.params.iter().chain(&f.returns) {
            span_ok(text, p.span)?;
        }
        for s in f.body.iter().flatten() {
            match s {
                Statement::Instruction(i) => {
                    span_ok(text, i.span)?;
                    prop_assert!(text[i.span.range()].ends_with(';'));
                }
                Statement::Label(l) => {
                    span_ok(text, l.span)?;
                    prop_assert_eq!(&text[l.span.range()], l.name.as_str());
                }
                Statement::Reg(r) => span_ok(text, r.span)?,
                Statement::Var(v) => span_ok(text, v.span)?,
            }
        }
    }
    for v in &parsed.module.variables {
        span_ok(text, v.span)?;
    }
    for f in &parsed.module.files {
        span_ok(text, f.span)?;
    }
    Ok(())
}

/// Tokens in order, without overlap, on character boundaries, with only trivia between them; and
/// `newline_before` says whether that trivia holds a newline.
fn lexer_round_trip(text: &str) -> Result<(), TestCaseError> {
    let mut lexer = Lexer::new(text);
    let mut end = 0usize;
    for _ in 0..=text.len() + 1 {
        let t = lexer.next_token();
        let r = t.span.range();
        span_ok(text, t.span)?;
        prop_assert!(r.start >= end, "token {:?} overlaps the previous one (ends at {end})", t);
        let gap = &text[end..r.start];
        let mut gap_lexer = Lexer::new(gap);
        let first = gap_lexer.next_token();
        prop_assert_eq!(first.kind, TokenKind::Eof, "non-trivia {:?} between tokens: {:?}", &gap[first.span.range()], gap);
        // A newline inside a block comment counts as a newline too.
        prop_assert_eq!(t.newline_before, gap.contains('\n'), "newline_before of {:?} after {:?}", t, gap);
        if t.kind == TokenKind::Eof {
            prop_assert_eq!(r, text.len()..text.len());
            return Ok(());
        }
        prop_assert!(r.end > r.start, "empty token {:?}", t);
        end = r.end;
    }
    Err(TestCaseError::fail("the lexer did not reach the end of the text"))
}

proptest! {
    #[test]
    fn mutated_corpus_never_panics_and_spans_are_valid(file in any::<prop::sample::Index>(), mutations in proptest::collection::vec(mutation(), 1..12)) {
        let files = corpus();
        let mut bytes = files[file.index(files.len())].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        let (text, parsed) = parse_with_deadline(bytes);
        spans_ok(&text, &parsed)?;
    }

    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec((0..VOCABULARY.len(), prop_oneof![Just(""), Just(" "), Just("\n")]), 0..300)) {
        let text: String = tokens.iter().map(|(t, sep)| format!("{}{sep}", VOCABULARY[*t])).collect();
        let (text, parsed) = parse_with_deadline(text.into_bytes());
        spans_ok(&text, &parsed)?;
        lexer_round_trip(&text)?;
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let (text, parsed) = parse_with_deadline(bytes);
        spans_ok(&text, &parsed)?;
        prop_assert!(!parsed.errors.is_empty() || !parsed.module.functions.is_empty());
    }

    #[test]
    fn lexer_tokens_cover_mutated_corpus(file in any::<prop::sample::Index>(), mutations in proptest::collection::vec(mutation(), 0..6)) {
        let files = corpus();
        let mut bytes = files[file.index(files.len())].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        let text = String::from_utf8_lossy(&bytes);
        lexer_round_trip(&text)?;
    }

    #[test]
    fn lexer_tokens_cover_any_string(text in any::<String>()) {
        lexer_round_trip(&text)?;
    }
}
