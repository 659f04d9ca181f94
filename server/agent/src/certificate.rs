//! Certificates on disk: one directory per certified kernel, holding the complete Lean files (the
//! generated module and one certificate file per obligation), and a manifest saying what the
//! certificate is keyed by, which toolchain checked it and on which axioms each theorem rests.
//!
//! A certificate is keyed by the kernel's PTX, the interface, the reference and the Lean
//! library: a change to any of them makes it a different key, so a stale certificate is never
//! found for a changed kernel. Writes are atomic: the new directory is written beside the old
//! one and renamed into place, so a killed process leaves either the old certificate or the
//! complete new one ([`recover`] finishes what a kill interrupted).

use lean::audit::sha256_hex;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const MANIFEST: &str = "manifest.json";
const FORMAT: u32 = 1;

/// What a certificate depends on, each as a SHA-256.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct KeyInputs {
    pub ptx_sha256: String,
    pub interface_sha256: String,
    pub reference_sha256: String,
    pub library_sha256: String,
}

impl KeyInputs {
    /// The certificate's key: one hash over all of them.
    pub fn key(&self) -> String {
        sha256_hex(&format!("{}\n{}\n{}\n{}", self.ptx_sha256, self.interface_sha256, self.reference_sha256, self.library_sha256))
    }
}

/// One obligation and the file whose theorem proves it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    pub obligation: String,
    pub theorem: String,
    /// SHA-256 of the pinned text the proof follows.
    pub statement_sha256: String,
    pub file: String,
    pub axioms: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    pub format: u32,
    pub kernel: String,
    pub module: String,
    pub inputs: KeyInputs,
    pub key: String,
    /// `lean --version` of the toolchain that accepted every file.
    pub toolchain: String,
    pub agent: String,
    pub entries: Vec<Entry>,
    /// What the module's statement leaves out or states differently (`lean::obligations`'s
    /// notes): the certificate proves exactly that statement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statement_notes: Vec<String>,
}

impl Manifest {
    pub fn new(kernel: String, module: String, inputs: KeyInputs, toolchain: String, agent: String, entries: Vec<Entry>) -> Manifest {
        let key = inputs.key();
        Manifest { format: FORMAT, kernel, module, inputs, key, toolchain, agent, entries, statement_notes: Vec::new() }
    }

    /// The manifest with what the module's statement leaves out or restates (see
    /// [`Manifest::statement_notes`]).
    pub fn with_statement_notes(self, statement_notes: Vec<String>) -> Manifest {
        Manifest { statement_notes, ..self }
    }

    /// The directory name under the store's root: readable, and unique per key.
    pub fn dir_name(&self) -> String {
        dir_name(&self.kernel, &self.key)
    }
}

pub fn dir_name(kernel: &str, key: &str) -> String {
    let safe: String = kernel.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).take(64).collect();
    format!("{safe}-{}", &key[..16.min(key.len())])
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: the manifest is not valid: {why}")]
    BadManifest { path: PathBuf, why: String },
    #[error("{path}: `{file}` is missing or is not the file the manifest lists")]
    BadFile { path: PathBuf, file: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io { path: path.to_path_buf(), source }
}

/// Writes a file and flushes it to disk.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(io(path))?;
    f.write_all(bytes).map_err(io(path))?;
    f.sync_all().map_err(io(path))
}

/// Writes a certificate under `root` atomically and returns its directory. `files` are
/// `(name, text)` pairs with plain names; the manifest is written last.
pub fn write(root: &Path, manifest: &Manifest, files: &[(String, String)]) -> Result<PathBuf, StoreError> {
    std::fs::create_dir_all(root).map_err(io(root))?;
    recover(root)?;
    let name = manifest.dir_name();
    let target = root.join(&name);
    let tmp = root.join(format!(".tmp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    for (file, text) in files {
        let plain = !file.is_empty() && !file.starts_with('.') && file.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !plain {
            return Err(StoreError::BadFile { path: tmp, file: file.clone() });
        }
        write_synced(&tmp.join(file), text.as_bytes())?;
    }
    let json = serde_json::to_string_pretty(manifest).map_err(|e| StoreError::BadManifest { path: tmp.clone(), why: e.to_string() })?;
    write_synced(&tmp.join(MANIFEST), json.as_bytes())?;
    // Swap: the old certificate steps aside, the new one takes its name, the old one goes.
    let old = root.join(format!(".old-{name}"));
    if target.exists() {
        let _ = std::fs::remove_dir_all(&old);
        std::fs::rename(&target, &old).map_err(io(&target))?;
    }
    std::fs::rename(&tmp, &target).map_err(io(&tmp))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(target)
}

/// Finishes what an interrupted [`write`] left: an old certificate stepped aside whose
/// replacement never arrived is put back; half-written temporary directories are removed.
pub fn recover(root: &Path) -> Result<(), StoreError> {
    let Ok(entries) = std::fs::read_dir(root) else { return Ok(()) };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(original) = name.strip_prefix(".old-") {
            let target = root.join(original);
            if target.exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            } else {
                std::fs::rename(entry.path(), &target).map_err(io(&target))?;
            }
        } else if name.starts_with(".tmp-") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    Ok(())
}

/// Reads a certificate directory: its manifest and the files it lists, each checked to start
/// with the statement its entry pins.
pub fn read(dir: &Path) -> Result<(Manifest, Vec<(String, String)>), StoreError> {
    let mpath = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&mpath).map_err(io(&mpath))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| StoreError::BadManifest { path: mpath.clone(), why: e.to_string() })?;
    if manifest.format != FORMAT || manifest.key != manifest.inputs.key() {
        return Err(StoreError::BadManifest { path: mpath, why: "unknown format, or a key that is not the hash of its inputs".into() });
    }
    let mut files = Vec::new();
    for e in &manifest.entries {
        let path = dir.join(&e.file);
        let text = std::fs::read_to_string(&path).map_err(|_| StoreError::BadFile { path: dir.to_path_buf(), file: e.file.clone() })?;
        files.push((e.file.clone(), text));
    }
    Ok((manifest, files))
}

/// The certificate of `kernel` under `root` for exactly these inputs, if there is one.
pub fn find(root: &Path, kernel: &str, inputs: &KeyInputs) -> Option<PathBuf> {
    let _ = recover(root);
    let dir = root.join(dir_name(kernel, &inputs.key()));
    let (m, _) = read(&dir).ok()?;
    (m.inputs == *inputs && m.kernel == kernel).then_some(dir)
}

/// The manifest entry and the file of an obligation Lean accepted, `request` being what the
/// agent was asked.
pub fn entry(request: &crate::ProveRequest, file: String, axioms: Vec<String>) -> (Entry, (String, String)) {
    let name = format!("{}.lean", request.obligation);
    let entry = Entry {
        obligation: request.obligation.clone(),
        theorem: request.theorem.clone(),
        statement_sha256: request.statement_sha256.clone(),
        file: name.clone(),
        axioms,
    };
    (entry, (name, file))
}

/// The files of a certificate: the generated module, then one file per obligation.
pub const MODULE_FILE: &str = "Module.lean";

/// Where a workspace keeps its certificates.
pub fn store_dir(workspace_root: &Path) -> PathBuf {
    workspace_root.join(".lark").join("certificates")
}

/// SHA-256 of the Lean library (`lean/`): every `.lean` file's path and text, in path order.
/// Computed once per process (the library does not change under a running LARK).
pub fn library_sha256() -> String {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| {
        let dir = lean::library_dir();
        let Ok(lib) = lean::library::LibraryIndex::load(&dir) else { return "unknown".into() };
        let mut text = String::new();
        for f in lib.files() {
            text.push_str(&f.path.display().to_string());
            text.push_str(&std::fs::read_to_string(dir.join(&f.path)).unwrap_or_default());
        }
        sha256_hex(&text)
    })
    .clone()
}

fn file_sha256(path: Option<&Path>) -> String {
    path.and_then(|p| std::fs::read(p).ok()).map_or_else(|| "none".into(), |b| sha256_hex(&String::from_utf8_lossy(&b)))
}

/// The key inputs of a kernel's certificate: the PTX it was lifted from, the interface file, the
/// reference file and the library.
pub fn inputs(ptx: &str, interface: Option<&Path>, reference: Option<&Path>) -> KeyInputs {
    KeyInputs {
        ptx_sha256: sha256_hex(ptx),
        interface_sha256: file_sha256(interface),
        reference_sha256: file_sha256(reference),
        library_sha256: library_sha256(),
    }
}

/// The pinned statement of a certificate file: everything up to its theorem's `:=` line, checked
/// against the hash its manifest entry records.
fn pinned_of(text: &str, e: &Entry) -> Option<lean::audit::Pinned> {
    let header = format!("theorem {} : ", e.theorem);
    let at = text.find(&header)?;
    let end = at + text[at..].find(":=\n")? + 3;
    lean::audit::Pinned::with_hash(text[..end].to_string(), &e.statement_sha256).ok()
}

/// Checks every file of a certificate again with Lean (no agent): `Ok` with the manifest when
/// Lean accepted each, else why not, obligation by obligation.
pub fn recheck(dir: &Path, checker: &dyn crate::prove::Checker) -> Result<Manifest, String> {
    let (manifest, files) = read(dir).map_err(|e| e.to_string())?;
    let mut rejected = Vec::new();
    for (e, (_, text)) in manifest.entries.iter().zip(&files) {
        let verdict = match pinned_of(text, e) {
            None => Err("the file does not start with the statement its manifest pins".to_string()),
            Some(p) => checker.check(&p, text, &e.theorem, std::time::Duration::from_secs(600)).map_err(|err| err.to_string()),
        };
        if let Err(why) = verdict {
            rejected.push(format!("{}: {why}", e.obligation));
        }
    }
    if rejected.is_empty() {
        Ok(manifest)
    } else {
        Err(rejected.join("; "))
    }
}
