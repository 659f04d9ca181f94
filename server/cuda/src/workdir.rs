//! The private directory a compilation runs in, and the way back from its paths to the user's.
//!
//! The text is compiled from memory (an editor's unsaved buffer), so it is written to a
//! temporary directory under its own file name. Nothing the user sees may name that directory:
//! the compiler's messages and the PTX's `.file` directives are rewritten to the real file (and
//! the bundled prelude to its bare name).

use std::path::{Path, PathBuf};

/// The name the bundled prelude is written under (and shown as).
pub const PRELUDE_NAME: &str = "lark_cuda_prelude.h";

/// A private temporary directory, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> std::io::Result<TempDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("lark-cc-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(TempDir(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Rewrites the temporary directory's paths into the user's.
#[derive(Clone, Debug)]
pub struct PathMap {
    /// The temporary directory, as written and canonical (they differ where /tmp is a link).
    temp_dirs: Vec<String>,
    /// The name the text was compiled under, inside the temporary directory.
    file_name: String,
    /// The real file, absolute: what a compiler run on the file in place would write.
    real: String,
}

impl PathMap {
    pub fn new(temp_dir: &Path, file_name: &str, real: &Path) -> PathMap {
        let mut temp_dirs = vec![temp_dir.display().to_string()];
        if let Ok(c) = temp_dir.canonicalize() {
            let c = c.display().to_string();
            if !temp_dirs.contains(&c) {
                temp_dirs.push(c);
            }
        }
        // Longest first, so a canonical path that extends the written one is replaced whole.
        temp_dirs.sort_by_key(|d| std::cmp::Reverse(d.len()));
        PathMap { temp_dirs, file_name: file_name.to_string(), real: real.display().to_string() }
    }

    /// `text` with every path into the temporary directory replaced: the compiled file by the
    /// real one, the prelude and anything else by its bare name.
    pub fn to_user(&self, text: &str) -> String {
        let mut out = text.to_string();
        for dir in &self.temp_dirs {
            if !out.contains(dir.as_str()) {
                continue;
            }
            for sep in ["/", "/./"] {
                out = out.replace(&format!("{dir}{sep}{}", self.file_name), &self.real);
            }
            out = out.replace(&format!("{dir}/"), "");
            out = out.replace(dir.as_str(), ".");
        }
        out
    }

    /// The PTX with its `.file` directives naming the real file. A real path that cannot be
    /// written inside a PTX string keeps the bare file name.
    pub fn ptx_to_user(&self, ptx: &str) -> String {
        if self.real.contains(['"', '\\', '\n']) {
            let bare = PathMap { real: self.file_name.clone(), ..self.clone() };
            return bare.to_user(ptx);
        }
        self.to_user(ptx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_paths_become_the_users() {
        let m = PathMap::new(Path::new("/tmp/lark-cc-1-0"), "k.cu", Path::new("/home/u/src/k.cu"));
        assert_eq!(m.to_user(".file 1 \"/tmp/lark-cc-1-0/k.cu\""), ".file 1 \"/home/u/src/k.cu\"");
        assert_eq!(m.to_user("/tmp/lark-cc-1-0/./k.cu:3:1: error: x"), "/home/u/src/k.cu:3:1: error: x");
        assert_eq!(m.to_user("/tmp/lark-cc-1-0/lark_cuda_prelude.h:9:2: note: y"), "lark_cuda_prelude.h:9:2: note: y");
        assert_eq!(m.to_user("cd /tmp/lark-cc-1-0 failed"), "cd . failed");
        assert_eq!(m.to_user("k.cu:3:1: error: untouched"), "k.cu:3:1: error: untouched");
        let quoted = PathMap::new(Path::new("/tmp/lark-cc-1-0"), "k.cu", Path::new("/home/u/a\"b/k.cu"));
        assert_eq!(quoted.ptx_to_user(".file 1 \"/tmp/lark-cc-1-0/k.cu\""), ".file 1 \"k.cu\"");
    }
}
