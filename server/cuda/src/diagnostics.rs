//! The compiler's messages as diagnostics on lines of the compiled file.
//!
//! clang (`k.cu:12:5: error: ...`) and nvcc (`k.cu(12): error: ...`) messages are read from
//! stderr. A `note:` belongs to the error or warning before it and is attached to it. A message
//! inside an included header is reported on the `#include` line of the compiled file that led to
//! it (as clangd does), naming the header. Very long identifiers (template names run to
//! thousands of characters) are elided, keeping their first and last 60 characters.

use std::borrow::Cow;

/// A compiler message on a line of the compiled file (1-based), with its notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CuDiagnostic {
    pub line: u32,
    pub column: u32,
    /// `error` or `warning`.
    pub severity: String,
    pub message: String,
    pub notes: Vec<CuNote>,
}

/// A `note:` the compiler attached to a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CuNote {
    /// The file the note is in; `None` for the compiled file.
    pub file: Option<String>,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl CuDiagnostic {
    /// The message followed by its notes, on one line:
    /// `call to 'f' is ambiguous (note: candidate function at line 2; ...)`.
    pub fn message_with_notes(&self) -> String {
        if self.notes.is_empty() {
            return self.message.clone();
        }
        let notes: Vec<String> = self
            .notes
            .iter()
            .map(|n| match &n.file {
                None => format!("note: {} at line {}", n.message, n.line),
                Some(f) => format!("note: {} at {f}:{}", n.message, n.line),
            })
            .collect();
        format!("{} ({})", self.message, notes.join("; "))
    }
}

/// Identifiers longer than this are elided.
const LONG: usize = 120;
/// What an elided identifier keeps at each end.
const KEEP: usize = 60;

/// `s` with every very long identifier (a single-quoted name, or a word without spaces) cut to
/// its first and last 60 characters around `…`.
pub fn elide_identifiers(s: &str) -> Cow<'_, str> {
    if s.chars().count() <= LONG {
        return Cow::Borrowed(s);
    }
    // clang quotes names, which may hold spaces (`'f<int, float>'`): the odd parts of a split at
    // quotes sit between a pair of them.
    let parts: Vec<&str> = s.split('\'').collect();
    let mut out = String::with_capacity(s.len().min(4096));
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push('\'');
        }
        if i % 2 == 1 && i + 1 < parts.len() {
            out.push_str(&elide_word(p));
        } else {
            let words: Vec<Cow<str>> = p.split(' ').map(elide_word).collect();
            out.push_str(&words.join(" "));
        }
    }
    Cow::Owned(out)
}

fn elide_word(w: &str) -> Cow<'_, str> {
    let n = w.chars().count();
    if n <= LONG {
        return Cow::Borrowed(w);
    }
    let head: String = w.chars().take(KEEP).collect();
    let tail: String = w.chars().skip(n - KEEP).collect();
    Cow::Owned(format!("{head}…{tail}"))
}

/// One message line: where, how severe, what.
struct Line<'a> {
    path: &'a str,
    line: u32,
    column: u32,
    severity: &'a str,
    message: &'a str,
}

/// Reads `path:line:col: severity: message` (clang) or `path(line): severity: message` (nvcc).
fn message_line(l: &str) -> Option<Line<'_>> {
    // The first severity word on the line (a message may quote another).
    let (at, sev) = ["fatal error", "error", "warning", "note"].into_iter().filter_map(|sev| Some((find_severity(l, sev)?, sev))).min_by_key(|(at, _)| *at)?;
    let (place, rest) = (&l[..at], &l[at + 2 + sev.len()..]);
    // nvcc: `warning #177-D: ...`
    let message = match rest.strip_prefix(':') {
        Some(m) => m,
        None => rest.split_once(':').map(|(_code, m)| m)?,
    };
    let (path, line, column) = if let Some(p) = place.strip_suffix(')') {
        let (path, line) = p.rsplit_once('(')?;
        (path, line.parse().ok()?, 1)
    } else {
        let (rest, last) = place.rsplit_once(':')?;
        match rest.rsplit_once(':') {
            Some((path, line)) if line.parse::<u32>().is_ok() => (path, line.parse().ok()?, last.parse().ok()?),
            _ => (rest, last.parse().ok()?, 1),
        }
    };
    let severity = if sev == "fatal error" { "error" } else { sev };
    Some(Line { path, line, column, severity, message: message.trim() })
}

/// Where `: sev` starts in `l`, followed by `:` or ` #` (nvcc's numbered warnings).
fn find_severity(l: &str, sev: &str) -> Option<usize> {
    let pat = format!(": {sev}");
    let mut from = 0;
    while let Some(i) = l[from..].find(&pat) {
        let at = from + i;
        let after = &l[at + pat.len()..];
        if after.starts_with(':') || after.starts_with(" #") {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// `In file included from k.cu:3:` and its continuation lines `                 from x.h:2:`.
fn include_site(l: &str) -> Option<(&str, u32)> {
    let rest = l.strip_prefix("In file included from ").or_else(|| l.trim_start().strip_prefix("from "))?;
    let place = rest.strip_suffix(':').or_else(|| rest.strip_suffix(','))?;
    let (path, line) = place.rsplit_once(':')?;
    Some((path, line.parse().ok()?))
}

/// Diagnostics on lines of the compiled file, known by any of `names` (as the compiler wrote
/// it: relative, or the real path).
pub fn parse(stderr: &str, names: &[&str]) -> Vec<CuDiagnostic> {
    let is_main = |p: &str| {
        let p = p.strip_prefix("./").unwrap_or(p);
        names.contains(&p)
    };
    let mut out: Vec<CuDiagnostic> = Vec::new();
    // The include sites printed before the next message (clang: outermost first; gcc-style
    // continuation lines: innermost first).
    let mut chain: Vec<(String, u32)> = Vec::new();
    for l in stderr.lines() {
        if let Some((path, line)) = include_site(l) {
            chain.push((path.to_string(), line));
            continue;
        }
        let Some(m) = message_line(l) else { continue };
        let chain_now = std::mem::take(&mut chain);
        let message = elide_identifiers(m.message).into_owned();
        if m.severity == "note" {
            // A note without a diagnostic before it has nothing to explain.
            if let Some(d) = out.last_mut() {
                let file = (!is_main(m.path)).then(|| m.path.to_string());
                d.notes.push(CuNote { file, line: m.line, column: m.column, message });
            }
            continue;
        }
        let d = if is_main(m.path) {
            CuDiagnostic { line: m.line, column: m.column, severity: m.severity.into(), message, notes: vec![] }
        } else {
            // In a header: on the line of the compiled file that includes it (line 1 when it
            // came from the command line, as the prelude does).
            let site = chain_now.iter().rev().find(|(p, _)| is_main(p)).map_or(1, |(_, l)| *l);
            let message = format!("in included file {}:{}:{}: {message}", m.path, m.line, m.column);
            CuDiagnostic { line: site, column: 1, severity: m.severity.into(), message, notes: vec![] }
        };
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    fn check(stderr: &str, expect: Expect) {
        let out: Vec<String> =
            parse(stderr, &["k.cu", "/src/k.cu"]).iter().map(|d| format!("{}:{} {}: {}", d.line, d.column, d.severity, d.message_with_notes())).collect();
        expect.assert_eq(&out.join("\n"));
    }

    #[test]
    fn clang_and_nvcc_messages() {
        check(
            "k.cu:13:26: error: use of undeclared identifier 'expf'\n   13 |   x\n      |   ^\nk.cu:2:1: warning: unused [-Wunused]\n\
             k.cu(7): error: identifier \"y\" is undefined\nk.cu(9): warning #177-D: variable \"z\" was declared but never referenced\n\
             /src/k.cu:4:2: fatal error: too many errors emitted\nclang: error: unknown argument: '--nope'\n3 errors generated.",
            expect![[r#"
                13:26 error: use of undeclared identifier 'expf'
                2:1 warning: unused [-Wunused]
                7:1 error: identifier "y" is undefined
                9:1 warning: variable "z" was declared but never referenced
                4:2 error: too many errors emitted"#]],
        );
    }

    #[test]
    fn notes_belong_to_the_message_before_them() {
        check(
            "k.cu:6:34: error: call to 'f' is ambiguous\nk.cu:2:16: note: candidate function\n./other.h:3:18: note: candidate function\n\
             k.cu:1:57: error: member reference base type 'float' is not a structure or union\n\
             k.cu:6:20: note: in instantiation of function template specialization 'twice<float>' requested here",
            expect![[r#"
                6:34 error: call to 'f' is ambiguous (note: candidate function at line 2; note: candidate function at ./other.h:3)
                1:57 error: member reference base type 'float' is not a structure or union (note: in instantiation of function template specialization 'twice<float>' requested here at line 6)"#]],
        );
        check("k.cu:2:16: note: orphan", expect![""]);
    }

    #[test]
    fn messages_in_headers_land_on_the_include_line() {
        check(
            "In file included from k.cu:3:\nIn file included from ./a.h:1:\n./b.h:2:1: error: unknown type name 'foo'\n\
             In file included from <built-in>:1:\nlark_cuda_prelude.h:9:1: error: redefinition of 'x'\n\
             /usr/include/c.h:5:1: warning: old style",
            expect![[r#"
                3:1 error: in included file ./b.h:2:1: unknown type name 'foo'
                1:1 error: in included file lark_cuda_prelude.h:9:1: redefinition of 'x'
                1:1 warning: in included file /usr/include/c.h:5:1: old style"#]],
        );
    }

    #[test]
    fn long_identifiers_are_elided() {
        let name = format!("Tpl<{}>", "A".repeat(5000));
        let msg = format!("no matching function for call to '{name}' here, and {} too", "b".repeat(200));
        let short = elide_identifiers(&msg);
        assert!(short.len() < 400, "{short}");
        assert!(short.contains(&format!("'Tpl<{}…{}>'", "A".repeat(56), "A".repeat(59))), "{short}");
        assert!(short.contains(&format!("{}…{} too", "b".repeat(60), "b".repeat(60))), "{short}");
        assert_eq!(elide_identifiers("short 'names' stay"), "short 'names' stay");
    }
}
