//! What an analysis reads besides the file itself: the interface (`lark.toml`, found next to the
//! file or above it, or named by a setting), `compile_commands.json` in the workspace root (for
//! `-I`/`-D`), and the `.cu` a PTX file was compiled from (for parameter names). Files on disk are
//! re-read when their modification time or size changes.

use crate::db::lock;
use crate::Settings;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

type Stamp = (Option<SystemTime>, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| (m.modified().ok(), m.len()))
}

type Parsed<T> = Mutex<HashMap<PathBuf, (Stamp, Arc<T>)>>;

#[derive(Default)]
pub(crate) struct InputCache {
    tomls: Parsed<Result<spec::Interface, String>>,
    ccdbs: Parsed<Vec<CcEntry>>,
    references: Parsed<String>,
}

/// The interface that applies to a file.
#[derive(Clone, Default)]
pub(crate) struct InterfaceInput {
    /// The interface file, when one exists (or is named by the settings).
    pub path: Option<PathBuf>,
    pub interface: Option<Arc<spec::Interface>>,
    /// Why the interface file could not be used.
    pub error: Option<String>,
}

impl InputCache {
    /// The interface for a file: the interface file (named by the settings, or the nearest
    /// `lark.toml`), under the SentryWard input when the settings name one.
    pub fn interface_for(&self, settings: &Settings, file: Option<&Path>) -> InterfaceInput {
        let toml = self.toml_for(settings, file);
        let Some(json) = &settings.sentryward_input else { return toml };
        let json = resolve(settings, file, json);
        let text = match std::fs::read_to_string(&json) {
            Ok(t) => t,
            Err(e) => return InterfaceInput { path: Some(json.clone()), interface: None, error: Some(format!("{}: {e}", json.display())) },
        };
        // The JSON describes one kernel; without `entry` or a kernel filter it applies to every
        // kernel.
        let name = settings.only_kernel.as_deref().unwrap_or("*");
        match spec::parse_sentryward_json(&json.display().to_string(), &text, name) {
            Ok(mut iface) => {
                // SentryWard's format has no buffer lengths or assumptions: take them from the
                // interface file.
                if let Some(t) = &toml.interface {
                    iface.merge_missing(t);
                }
                InterfaceInput { path: Some(json), interface: Some(Arc::new(iface)), error: toml.error }
            }
            Err(e) => InterfaceInput { path: Some(json), interface: None, error: Some(e.to_string()) },
        }
    }

    fn toml_for(&self, settings: &Settings, file: Option<&Path>) -> InterfaceInput {
        let path = match &settings.interface_file {
            Some(p) => Some(resolve(settings, file, p)),
            None => file.and_then(find_upwards),
        };
        let Some(path) = path else { return InterfaceInput::default() };
        let Some(st) = stamp(&path) else {
            return InterfaceInput {
                error: settings.interface_file.as_ref().map(|_| format!("{}: interface file not found", path.display())),
                path: Some(path),
                interface: None,
            };
        };
        let mut tomls = lock(&self.tomls);
        let parsed = match tomls.get(&path) {
            Some((s, r)) if *s == st => r.clone(),
            _ => {
                let r = match std::fs::read_to_string(&path) {
                    Ok(text) => spec::parse_lark_toml(&path.display().to_string(), &text).map_err(|e| e.to_string()),
                    Err(e) => Err(format!("{}: {e}", path.display())),
                };
                let r = Arc::new(r);
                tomls.insert(path.clone(), (st, r.clone()));
                r
            }
        };
        match &*parsed {
            Ok(i) => InterfaceInput { path: Some(path), interface: Some(Arc::new(i.clone())), error: None },
            Err(e) => InterfaceInput { path: Some(path), interface: None, error: Some(e.clone()) },
        }
    }

    /// `-I` and `-D` of the file's entry in `<workspace root>/compile_commands.json`.
    pub fn compile_flags(&self, settings: &Settings, file: &Path) -> (Vec<String>, Vec<String>) {
        let Some(root) = &settings.workspace_root else { return Default::default() };
        let db = root.join("compile_commands.json");
        let Some(st) = stamp(&db) else { return Default::default() };
        let entries = {
            let mut dbs = lock(&self.ccdbs);
            match dbs.get(&db) {
                Some((s, e)) if *s == st => e.clone(),
                _ => {
                    let e = Arc::new(std::fs::read_to_string(&db).map(|t| parse_compile_commands(&t)).unwrap_or_default());
                    dbs.insert(db.clone(), (st, e.clone()));
                    e
                }
            }
        };
        let want = normalize(file);
        entries.iter().find(|e| e.file == want).map(|e| (e.includes.clone(), e.defines.clone())).unwrap_or_default()
    }
}

fn resolve(settings: &Settings, file: Option<&Path>, p: &Path) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    match (&settings.workspace_root, file.and_then(Path::parent)) {
        (Some(root), _) => root.join(p),
        (None, Some(dir)) => dir.join(p),
        (None, None) => p.to_path_buf(),
    }
}

fn find_upwards(file: &Path) -> Option<PathBuf> {
    spec::find_lark_toml(file)
}

/// `a/./b/../c` → `a/c`, without touching the filesystem.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CcEntry {
    pub file: PathBuf,
    pub includes: Vec<String>,
    pub defines: Vec<String>,
}

pub(crate) fn parse_compile_commands(text: &str) -> Vec<CcEntry> {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str::<serde_json::Value>(text) else { return vec![] };
    let mut out = Vec::new();
    for item in items {
        let dir = PathBuf::from(item.get("directory").and_then(|d| d.as_str()).unwrap_or("."));
        let Some(file) = item.get("file").and_then(|f| f.as_str()) else { continue };
        let args: Vec<String> = match (item.get("arguments"), item.get("command")) {
            (Some(serde_json::Value::Array(a)), _) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
            (_, Some(serde_json::Value::String(c))) => shell_split(c),
            _ => continue,
        };
        let (mut includes, mut defines) = (Vec::new(), Vec::new());
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let (flag, inline) = if let Some(rest) = a.strip_prefix("-isystem") {
                ("-I", rest)
            } else if let Some(rest) = a.strip_prefix("-I") {
                ("-I", rest)
            } else if let Some(rest) = a.strip_prefix("-D") {
                ("-D", rest)
            } else {
                continue;
            };
            let value = if inline.is_empty() { it.next().cloned().unwrap_or_default() } else { inline.to_string() };
            if value.is_empty() {
                continue;
            }
            if flag == "-I" {
                let p = Path::new(&value);
                includes.push(if p.is_absolute() { value } else { normalize(&dir.join(p)).display().to_string() });
            } else {
                defines.push(value);
            }
        }
        out.push(CcEntry { file: normalize(&dir.join(file)), includes, defines });
    }
    out
}

/// Splits a command line the way a POSIX shell would for simple cases: whitespace, quotes,
/// backslash escapes.
fn shell_split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The `.cu` a PTX file came from (see `spec::find_cu_source`).
pub(crate) fn companion_cu(ptx_path: &Path, ptx_text: &str) -> Option<PathBuf> {
    spec::find_cu_source(ptx_path, ptx_text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_include_dirs_and_defines_from_compile_commands() {
        let text = r#"[
          {"directory": "/w/build", "file": "../src/k.cu", "command": "clang++ -I../inc -I /abs -DN=4 -D 'M=\"x y\"' -c ../src/k.cu"},
          {"directory": "/w", "file": "o.cu", "arguments": ["nvcc", "-isystem", "sys", "-DFOO", "o.cu"]}
        ]"#;
        let e = parse_compile_commands(text);
        assert_eq!(e[0].file, PathBuf::from("/w/src/k.cu"));
        assert_eq!(e[0].includes, vec!["/w/inc", "/abs"]);
        assert_eq!(e[0].defines, vec!["N=4", "M=\"x y\""]);
        assert_eq!(e[1].includes, vec!["/w/sys"]);
        assert_eq!(e[1].defines, vec!["FOO"]);
    }
}

impl InputCache {
    /// The text of a PyTorch reference file, re-read when it changes on disk.
    pub fn reference_text(&self, path: &Path) -> Result<Arc<String>, String> {
        let st = stamp(path).ok_or_else(|| format!("{}: the reference file does not exist", path.display()))?;
        let mut refs = lock(&self.references);
        if let Some((s, t)) = refs.get(path) {
            if *s == st {
                return Ok(t.clone());
            }
        }
        let text = Arc::new(std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?);
        refs.insert(path.to_path_buf(), (st, text.clone()));
        Ok(text)
    }
}
