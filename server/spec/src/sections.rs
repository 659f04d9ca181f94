//! A `[kernel.X]` section whose name occurs in no source file is a typo: the kernel it meant to
//! describe is checked without it.

use crate::error::SpecError;
use crate::interface::Interface;
use std::path::Path;

/// At most this many source files are read; past it the search gives up rather than report
/// typos it could not rule out.
pub const MAX_SOURCE_FILES: usize = 4000;
/// At most this many directory entries are looked at.
const MAX_ENTRIES: usize = 100_000;

impl Interface {
    /// Sections of a lark.toml whose kernel name occurs, as a whole word, in no `.cu`, `.cuh` or
    /// `.ptx` file under `dir` (recursively; hidden directories, `target` and `node_modules` are
    /// skipped). A C++ kernel's section may use its mangled PTX name or its plain name. Each
    /// such section is an error at its header. When `dir` holds too many files to read, nothing
    /// is reported.
    pub fn sections_matching_nothing(&self, dir: &Path) -> Vec<SpecError> {
        let mut wanted: Vec<(&str, Vec<String>)> = self
            .kernels
            .iter()
            .filter(|(name, spec)| name.as_str() != "*" && spec.origins.get("").is_some_and(|o| o.key.starts_with("kernel.")))
            .map(|(name, _)| {
                let mut words = vec![name.clone()];
                words.extend(crate::unmangled_name(name));
                // `[kernel."ns::kernel"]`: the source spells the definition `kernel`.
                if let Some((_, last)) = name.rsplit_once("::") {
                    words.push(last.to_string());
                }
                (name.as_str(), words)
            })
            .collect();
        if wanted.is_empty() {
            return Vec::new();
        }
        let mut files = Vec::new();
        if !source_files(dir, &mut files, &mut 0) {
            return Vec::new();
        }
        for file in files {
            let Ok(bytes) = std::fs::read(&file) else { continue };
            let text = String::from_utf8_lossy(&bytes);
            wanted.retain(|(_, words)| !words.iter().any(|w| contains_word(&text, w)));
            if wanted.is_empty() {
                break;
            }
        }
        wanted
            .into_iter()
            .map(|(name, _)| {
                let origin = self.kernels[name].origin("");
                SpecError::at(&origin, format!("no kernel named `{name}` in any .cu, .cuh or .ptx file under {}; a typo?", dir.display()))
            })
            .collect()
    }
}

/// Collects source files under `dir`; false when the bounds were exceeded.
fn source_files(dir: &Path, out: &mut Vec<std::path::PathBuf>, entries: &mut usize) -> bool {
    let Ok(read) = std::fs::read_dir(dir) else { return true };
    let mut children: Vec<_> = read.flatten().collect();
    children.sort_by_key(|e| e.file_name());
    for entry in children {
        *entries += 1;
        if *entries > MAX_ENTRIES || out.len() > MAX_SOURCE_FILES {
            return false;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            if !source_files(&entry.path(), out, entries) {
                return false;
            }
        } else if [".cu", ".cuh", ".ptx"].iter().any(|ext| name.ends_with(ext)) {
            out.push(entry.path());
        }
    }
    true
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Whether `word` occurs in `text` with no identifier character on either side.
pub(crate) fn contains_word(text: &str, word: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(i, _)| {
        let before = i == 0 || !is_ident(bytes[i - 1]);
        let end = i + word.len();
        let after = end >= bytes.len() || !is_ident(bytes[end]);
        before && after
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_only() {
        assert!(contains_word("__global__ void rmsnorm(float* x)", "rmsnorm"));
        assert!(!contains_word("__global__ void rmsnorm_fused(float* x)", "rmsnorm"));
        assert!(!contains_word("void my_rmsnorm()", "rmsnorm"));
        assert!(contains_word(".visible .entry _Z6reducePKfPfi(", "_Z6reducePKfPfi"));
        assert!(contains_word("rmsnorm", "rmsnorm"));
    }
}
