//! Launch sites in CUDA host code: `kernel<<<grid, block[, shared[, stream]]>>>(…)` in the same
//! `.cu` file as the kernel. A kernel opened with no `lark.toml` is checked for every launch the
//! hardware allows; when its own file launches it with a block size the code states — a literal,
//! a `#define`, a `const`/`constexpr` integer, a `dim3` built from those, simple arithmetic — that
//! block is a fact the check can use (the lowest-precedence source of interface facts).
//!
//! This is a small tokenizer and expression evaluator, not a C++ front end: anything it cannot
//! evaluate (a runtime value, a function call, a template argument) leaves the dimension open.
//! A kernel launched with different blocks at different sites gets none.

use crate::error::Origin;
use crate::interface::{Dim, Interface, KernelSpec};
use std::collections::HashMap;

/// One launch of a kernel whose configuration could be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSite {
    pub kernel: String,
    /// 1-based line of the `<<<`.
    pub line: u32,
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    pub shared: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(u64),
    Punct(char),
}

/// Object-like `#define`s: name → replacement tokens.
type Defines = HashMap<String, Vec<Tok>>;

/// Tokens with their 1-based lines; comments, strings and character literals are skipped, and
/// preprocessor lines other than object-like `#define`s are dropped.
fn tokenize(text: &str) -> (Vec<(Tok, u32)>, Defines) {
    let mut toks = Vec::new();
    let mut defines = HashMap::new();
    let b = text.as_bytes();
    let (mut i, mut line) = (0usize, 1u32);
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#' && line_start {
            // A directive runs to the end of the line (with `\` continuations).
            let start = i;
            while i < b.len() && !(b[i] == b'\n' && b[i - 1] != b'\\') {
                i += 1;
            }
            let directive = text[start..i].replace("\\\n", " ");
            let rest = directive.trim_start_matches('#').trim_start();
            if let Some(def) = rest.strip_prefix("define") {
                let def = def.trim_start();
                let name: String = def.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                let after = &def[name.len()..];
                // Object-like only: `#define N(x)` is a function-like macro.
                if !name.is_empty() && !after.starts_with('(') {
                    let (body, _) = tokenize(after);
                    defines.insert(name, body.into_iter().map(|(t, _)| t).collect());
                }
            }
            continue;
        }
        line_start = false;
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                if b[i] == b'\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\\' {
                    i += 1;
                }
                if b.get(i) == Some(&b'\n') {
                    line += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            toks.push((Tok::Ident(text[start..i].to_string()), line));
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            let lit = text[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let value = if let Some(hex) = lit.strip_prefix("0x").or_else(|| lit.strip_prefix("0X")) {
                u64::from_str_radix(hex, 16).ok()
            } else {
                lit.parse::<u64>().ok()
            };
            // A float literal or a malformed number is not a launch dimension.
            toks.push((value.map_or(Tok::Punct('?'), Tok::Num), line));
            continue;
        }
        toks.push((Tok::Punct(c as char), line));
        i += 1;
    }
    (toks, defines)
}

/// A value of the launch arithmetic: an integer or a `dim3`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    Int(u64),
    Dim3([u64; 3]),
}

struct Eval<'a> {
    defines: &'a HashMap<String, Vec<Tok>>,
    consts: &'a HashMap<String, Val>,
    depth: u32,
}

impl Eval<'_> {
    /// Evaluates all of `toks` as one expression.
    fn all(&mut self, toks: &[Tok]) -> Option<Val> {
        let mut pos = 0;
        let v = self.sum(toks, &mut pos)?;
        (pos == toks.len()).then_some(v)
    }

    fn sum(&mut self, t: &[Tok], pos: &mut usize) -> Option<Val> {
        let mut v = self.product(t, pos)?;
        while let Some(Tok::Punct(op @ ('+' | '-'))) = t.get(*pos) {
            *pos += 1;
            let r = int(self.product(t, pos)?)?;
            let l = int(v)?;
            v = Val::Int(if *op == '+' { l.checked_add(r)? } else { l.checked_sub(r)? });
        }
        Some(v)
    }

    fn product(&mut self, t: &[Tok], pos: &mut usize) -> Option<Val> {
        let mut v = self.atom(t, pos)?;
        while let Some(Tok::Punct(op @ ('*' | '/' | '%'))) = t.get(*pos) {
            *pos += 1;
            let r = int(self.atom(t, pos)?)?;
            let l = int(v)?;
            v = Val::Int(match op {
                '*' => l.checked_mul(r)?,
                '/' => l.checked_div(r)?,
                _ => l.checked_rem(r)?,
            });
        }
        Some(v)
    }

    fn atom(&mut self, t: &[Tok], pos: &mut usize) -> Option<Val> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let tok = t.get(*pos)?.clone();
        *pos += 1;
        match tok {
            Tok::Num(n) => Some(Val::Int(n)),
            Tok::Punct('(') => {
                // A cast such as `(unsigned)` is not evaluated: leave it open.
                let v = self.sum(t, pos)?;
                (t.get(*pos) == Some(&Tok::Punct(')'))).then(|| *pos += 1)?;
                Some(v)
            }
            Tok::Ident(name) if name == "dim3" => {
                let open = t.get(*pos)?;
                let close = match open {
                    Tok::Punct('(') => ')',
                    Tok::Punct('{') => '}',
                    _ => return None,
                };
                *pos += 1;
                let mut dims = Vec::new();
                loop {
                    dims.push(int(self.sum(t, pos)?)?);
                    match t.get(*pos)? {
                        Tok::Punct(',') => *pos += 1,
                        Tok::Punct(c) if *c == close => {
                            *pos += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                dim3_of(&dims)
            }
            Tok::Ident(name) => {
                if let Some(v) = self.consts.get(&name) {
                    return Some(*v);
                }
                let body = self.defines.get(&name)?.clone();
                self.all(&body)
            }
            _ => None,
        }
    }
}

fn int(v: Val) -> Option<u64> {
    match v {
        Val::Int(n) => Some(n),
        Val::Dim3(_) => None,
    }
}

fn dim3_of(dims: &[u64]) -> Option<Val> {
    match dims {
        [x] => Some(Val::Dim3([*x, 1, 1])),
        [x, y] => Some(Val::Dim3([*x, *y, 1])),
        [x, y, z] => Some(Val::Dim3([*x, *y, *z])),
        _ => None,
    }
}

fn as_dims(v: Val) -> [u64; 3] {
    match v {
        Val::Int(n) => [n, 1, 1],
        Val::Dim3(d) => d,
    }
}

/// Integer and `dim3` constants: `const int N = …;`, `constexpr unsigned N = …;`,
/// `static const int N = …;`, `dim3 block(…);`, `dim3 block = dim3(…);`, `dim3 block{…};`. A
/// name defined twice is dropped (it may be different in different scopes).
fn constants(toks: &[Tok], defines: &HashMap<String, Vec<Tok>>) -> HashMap<String, Val> {
    let mut consts: HashMap<String, Val> = HashMap::new();
    let mut seen_twice = std::collections::HashSet::new();
    let ident = |i: usize| match toks.get(i) {
        Some(Tok::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    let mut i = 0;
    while i < toks.len() {
        let (name_at, init_at) = match ident(i) {
            Some("dim3") if toks.get(i + 2).is_some_and(|t| matches!(t, Tok::Punct('(' | '{'))) && ident(i + 1).is_some() => (i + 1, i + 1),
            Some("dim3") if toks.get(i + 2) == Some(&Tok::Punct('=')) && ident(i + 1).is_some() => (i + 1, i + 3),
            Some("const" | "constexpr") => {
                // `const [unsigned] int|size_t|… NAME = …`
                let mut j = i + 1;
                while ident(j).is_some() && toks.get(j + 1).is_some_and(|t| matches!(t, Tok::Ident(_))) {
                    j += 1;
                }
                if ident(j).is_some() && toks.get(j + 1) == Some(&Tok::Punct('=')) {
                    (j, j + 2)
                } else {
                    i += 1;
                    continue;
                }
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let name = ident(name_at).unwrap_or_default().to_string();
        // The initializer runs to the `;` (for `dim3 b(…)`, from the name: `b(…)` reads as dim3).
        let end = (init_at..toks.len()).find(|k| toks[*k] == Tok::Punct(';')).unwrap_or(toks.len());
        let init: Vec<Tok> = if init_at == name_at {
            std::iter::once(Tok::Ident("dim3".into())).chain(toks[name_at + 1..end].iter().cloned()).collect()
        } else {
            toks[init_at..end].to_vec()
        };
        let mut ev = Eval { defines, consts: &consts, depth: 0 };
        if let Some(v) = ev.all(&init) {
            if consts.insert(name.clone(), v).is_some() {
                seen_twice.insert(name);
            }
        }
        i = end;
    }
    for n in seen_twice {
        consts.remove(&n);
    }
    consts
}

/// Every launch site of the text, with what could be evaluated of its configuration.
pub fn launch_sites(text: &str) -> Vec<LaunchSite> {
    let (lined, defines) = tokenize(text);
    let toks: Vec<Tok> = lined.iter().map(|(t, _)| t.clone()).collect();
    let consts = constants(&toks, &defines);
    let mut out = Vec::new();
    let lt = Tok::Punct('<');
    let gt = Tok::Punct('>');
    let mut i = 0;
    while i + 3 < toks.len() {
        if !(toks[i + 1] == lt && toks[i + 2] == lt && toks[i + 3] == lt) {
            i += 1;
            continue;
        }
        // `name<<<` (a templated `name<T><<<` is left out: its PTX name is mangled differently).
        let Tok::Ident(kernel) = &toks[i] else {
            i += 1;
            continue;
        };
        let line = lined[i + 1].1;
        // The configuration: top-level comma-separated arguments up to `>>>`.
        let mut args: Vec<Vec<Tok>> = vec![vec![]];
        let mut depth = 0i32;
        let mut j = i + 4;
        let mut closed = false;
        while j < toks.len() {
            if depth == 0 && toks[j] == gt && toks.get(j + 1) == Some(&gt) && toks.get(j + 2) == Some(&gt) {
                closed = true;
                break;
            }
            match &toks[j] {
                Tok::Punct('(' | '{' | '[') => depth += 1,
                Tok::Punct(')' | '}' | ']') => depth -= 1,
                Tok::Punct(',') if depth == 0 => {
                    args.push(vec![]);
                    j += 1;
                    continue;
                }
                _ => {}
            }
            if let Some(last) = args.last_mut() {
                last.push(toks[j].clone());
            }
            j += 1;
        }
        if closed && args.len() >= 2 {
            let eval = |a: &[Tok]| Eval { defines: &defines, consts: &consts, depth: 0 }.all(a).map(as_dims);
            let shared = args.get(2).and_then(|a| Eval { defines: &defines, consts: &consts, depth: 0 }.all(a)).and_then(int);
            out.push(LaunchSite { kernel: kernel.clone(), line, grid: eval(&args[0]), block: eval(&args[1]), shared });
        }
        i = j.max(i + 1);
    }
    out
}

/// The facts a file's launch sites give: for each kernel every site launches with the same
/// block, that block (and the grid and dynamic shared memory, when they are constants the
/// sites agree on), with the site as its origin.
pub fn inferred_interface(text: &str, file: &str) -> Interface {
    let mut by_kernel: HashMap<String, Vec<LaunchSite>> = HashMap::new();
    for s in launch_sites(text) {
        by_kernel.entry(s.kernel.clone()).or_default().push(s);
    }
    let mut iface = Interface::default();
    for (kernel, sites) in by_kernel {
        let agreed = |f: &dyn Fn(&LaunchSite) -> Option<[u64; 3]>| {
            let first = f(&sites[0])?;
            sites.iter().all(|s| f(s) == Some(first)).then_some(first)
        };
        let valid = |d: [u64; 3]| d.iter().all(|x| *x >= 1) && d.iter().product::<u64>() <= 1024;
        let Some(block) = agreed(&|s| s.block).filter(|b| valid(*b)) else { continue };
        let grid = agreed(&|s| s.grid).filter(|g| g.iter().all(|x| (1..=u32::MAX as u64).contains(x)));
        let shared = sites[0].shared.filter(|sh| sites.iter().all(|s| s.shared == Some(*sh)));
        let mut spec =
            KernelSpec { block: Some(block.map(Dim::exact)), grid: grid.map(|g| g.map(Dim::exact)), dynamic_shared_bytes: shared, ..KernelSpec::default() };
        let origin = Origin { file: file.to_string(), line: sites[0].line, column: 0, span: 0..0, key: String::new() };
        spec.origins.insert("block".into(), Origin { key: format!("kernel.{kernel}.block"), ..origin.clone() });
        if grid.is_some() {
            spec.origins.insert("grid".into(), Origin { key: format!("kernel.{kernel}.grid"), ..origin });
        }
        iface.kernels.insert(kernel, spec);
    }
    iface
}

#[cfg(test)]
mod tests {
    use super::*;

    type Site = (String, Option<[u64; 3]>, Option<[u64; 3]>);

    fn blocks(text: &str) -> Vec<Site> {
        launch_sites(text).into_iter().map(|s| (s.kernel, s.grid, s.block)).collect()
    }

    #[test]
    fn reads_literals_defines_constants_and_dim3() {
        let text = r#"
#define BLOCK 128
#define TILE (BLOCK / 8)
constexpr int kThreads = 2 * BLOCK;
static const unsigned int kRows = 4;
void run(float* x, int n) {
  dim3 block(TILE, TILE);
  dim3 grid = dim3((n + 15) / 16, 3);
  a<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(x, n);
  b<<<grid, block, 0, stream>>>(x, n);
  c<<<dim3(2, 2), kThreads, kRows * 64>>>(x);  // shared bytes
  d<<<1, n>>>(x);            /* runtime block: open */
  e<<<4, 256>>>(x); e<<<8, 256>>>(x);
}"#;
        assert_eq!(
            blocks(text),
            vec![
                ("a".into(), None, Some([128, 1, 1])),
                ("b".into(), None, Some([16, 16, 1])),
                ("c".into(), Some([2, 2, 1]), Some([256, 1, 1])),
                ("d".into(), Some([1, 1, 1]), None),
                ("e".into(), Some([4, 1, 1]), Some([256, 1, 1])),
                ("e".into(), Some([8, 1, 1]), Some([256, 1, 1])),
            ]
        );
        assert_eq!(launch_sites(text)[2].shared, Some(256));
        let iface = inferred_interface(text, "k.cu");
        assert_eq!(iface.kernels["a"].block, Some([Dim::exact(128), Dim::exact(1), Dim::exact(1)]));
        assert_eq!(iface.kernels["e"].grid, None, "the sites disagree on the grid");
        assert_eq!(iface.kernels["e"].block.as_ref().map(|b| b[0].value()), Some(Some(256)));
        assert!(!iface.kernels.contains_key("d"), "a runtime block is not a fact");
        assert_eq!(iface.kernels["a"].origins["block"].line, 9);
    }

    #[test]
    fn disagreeing_blocks_comments_strings_and_nonsense_leave_nothing() {
        let text = "// k<<<1, 64>>>(x);\nconst char* s = \"k<<<1, 32>>>\";\nk<<<1, 128>>>(x);\nk<<<1, 256>>>(x);\nbig<<<1, 2048>>>(x);\nf<<<1, 1.5>>>(x);\nbroken<<<1, (2>>>(x);";
        let iface = inferred_interface(text, "k.cu");
        assert!(iface.kernels.is_empty(), "{:?}", iface.kernels.keys().collect::<Vec<_>>());
        // Nothing here panics on truncated input.
        for cut in 0..text.len() {
            if text.is_char_boundary(cut) {
                let _ = inferred_interface(&text[..cut], "k.cu");
            }
        }
    }
}
