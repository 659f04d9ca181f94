//! A kernel's fingerprint: a content hash (BLAKE3) of everything in the PTX that decides what the
//! kernel does, and nothing that only moves it.
//!
//! The kernel's text is hashed with the lines of its `.loc` directives made relative to the first
//! `.loc` of the same file (so typing a line above a kernel, which shifts all its source lines,
//! does not change it), together with the declarations of the module variables it names and the
//! names (not directories) of the source files its `.loc`s point to. The fingerprint keys the
//! editor's result cache and, later, certificates.

use std::fmt;

/// A BLAKE3 hash of a kernel's relocatable text.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(pub [u8; 32]);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

/// A kernel's fingerprint and the first `.loc` line of each file it names (file index, line):
/// what its current positions are relative to.
pub struct Relocatable {
    pub fingerprint: Fingerprint,
    pub bases: Vec<(u32, u32)>,
}

/// The fingerprint of `func`, a function of `module` parsed from `ptx`.
pub fn fingerprint(ptx: &str, module: &ptx::Module, func: &ptx::Function) -> Relocatable {
    let mut h = blake3::Hasher::new();
    let text = ptx.get(func.span.range()).unwrap_or("");
    let bases = hash_relocatable_text(text, &mut h);
    let map = ptx::SourceMap::new(module);
    for (f, _) in &bases {
        let name = map.file_name(ptx::SourceLoc { file: *f, line: 1, col: 0 }).map(basename).unwrap_or("");
        field(&mut h, name.as_bytes());
    }
    for v in &module.variables {
        if text.contains(v.name.as_str()) {
            field(&mut h, ptx.get(v.span.range()).unwrap_or("").as_bytes());
        }
    }
    Relocatable { fingerprint: Fingerprint(*h.finalize().as_bytes()), bases }
}

/// Hashes a length-prefixed field, so that adjacent fields cannot run into each other.
fn field(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

fn basename(p: &str) -> &str {
    p.rsplit(['/', '\\']).next().unwrap_or(p)
}

/// Hashes a kernel's text line by line, with each `.loc` line relative to the first `.loc` line of
/// the same file; returns those first lines.
fn hash_relocatable_text(text: &str, h: &mut blake3::Hasher) -> Vec<(u32, u32)> {
    let mut bases: Vec<(u32, u32)> = Vec::new();
    for line in text.split('\n') {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix(".loc") else {
            field(h, line.as_bytes());
            continue;
        };
        let code = rest.split("//").next().unwrap_or("");
        let mut toks = code.split_whitespace();
        let (f, l) = (toks.next().and_then(|x| x.parse::<u32>().ok()), toks.next().and_then(|x| x.parse::<u32>().ok()));
        let relative = match (f, l) {
            (Some(f), Some(l)) if l != 0 => {
                let base = match bases.iter().find(|(x, _)| *x == f) {
                    Some((_, b)) => *b,
                    None => {
                        bases.push((f, l));
                        l
                    }
                };
                format!(".loc {f} @{}", l as i64 - base as i64)
            }
            _ => format!(".loc {f:?} {l:?}"),
        };
        let rest: Vec<&str> = toks.collect();
        field(h, format!("{relative} {}", rest.join(" ")).as_bytes());
    }
    bases
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(text: &str) -> Relocatable {
        let parsed = ptx::parse(text);
        let func = parsed.module.functions.iter().find(|f| f.body.is_some()).expect("a kernel");
        fingerprint(text, &parsed.module, func)
    }

    const K: &str = ".version 7.0\n.target sm_80\n.address_size 64\n.file 1 \"k.cu\"\n.visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<3>;\n.loc 1 10 0\nmov.u32 %r1, %tid.x;\n.loc 1 11 0\nadd.s32 %r2, %r1, 1;\nret;\n}\n";

    #[test]
    fn moving_a_kernel_keeps_its_fingerprint() {
        let moved = K.replace(".loc 1 10 0", ".loc 1 20 0").replace(".loc 1 11 0", ".loc 1 21 0");
        let (a, b) = (fp(K), fp(&moved));
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_eq!((a.bases, b.bases), (vec![(1, 10)], vec![(1, 20)]));
        // Stable across runs: a known value would pin BLAKE3 itself; pin the length and format.
        assert_eq!(a.fingerprint.to_string().len(), 64);
    }

    #[test]
    fn changing_a_kernel_changes_its_fingerprint() {
        let changed = K.replace("add.s32 %r2, %r1, 1;", "add.s32 %r2, %r1, 2;");
        assert_ne!(fp(K).fingerprint, fp(&changed).fingerprint);
        let relined = K.replace(".loc 1 11 0", ".loc 1 12 0");
        assert_ne!(fp(K).fingerprint, fp(&relined).fingerprint, "a statement moved within the kernel is a different kernel text");
        let renamed_file = K.replace("\"k.cu\"", "\"other.cu\"");
        assert_ne!(fp(K).fingerprint, fp(&renamed_file).fingerprint);
    }
}
