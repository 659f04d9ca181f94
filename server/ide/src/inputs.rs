//! What an analysis reads besides the file itself: the interface facts from every source (a
//! SentryWard kernel-input JSON with its reference binding, an interface file named on the
//! command line or in the editor settings, the nearest `lark.toml`), `compile_commands.json` in
//! the workspace root (for `-I`/`-D`), and the `.cu` a PTX file was compiled from (for parameter
//! names). Files on disk are re-read when their modification time or size changes.
//!
//! The sources are kept apart ([`Layer`]s) until a kernel's parameters are known: then each
//! source's entry for the kernel is renamed to the kernel's canonical parameter names and they
//! are merged fact by fact in `spec`'s precedence ([`InterfaceInput::kernel`]), so that no fact
//! is lost because two sources spell a parameter differently, and every conflict is a note.

use crate::db::lock;
use crate::Settings;
use spec::{Interface, KernelSpec, MergeNote, ParamNames, SourceKind, SpecError};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

type Stamp = (Option<SystemTime>, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| (m.modified().ok(), m.len()))
}

type Parsed<T> = Mutex<HashMap<PathBuf, (Stamp, Arc<T>)>>;

/// A parsed lark.toml: the entries that parsed, and every error (with its place).
struct ParsedToml {
    interface: Arc<Interface>,
    errors: Vec<SpecError>,
}

/// How long a search for kernel sections that match no source file is trusted (a kernel may be
/// added or renamed meanwhile).
const SECTION_SEARCH_TTL: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Default)]
pub(crate) struct InputCache {
    tomls: Parsed<ParsedToml>,
    ccdbs: Parsed<Vec<CcEntry>>,
    references: Parsed<String>,
    /// Sections of an interface file that match no kernel under a directory, by (file, dir).
    sections: Mutex<HashMap<(PathBuf, PathBuf), SectionSearch>>,
}

/// The sections a search found matching nothing, for the interface file's stamp, and when.
type SectionSearch = (Stamp, Instant, Arc<Vec<SpecError>>);

/// One source of interface facts.
#[derive(Clone)]
pub(crate) struct Layer {
    pub kind: SourceKind,
    /// The file the facts were read from.
    pub path: PathBuf,
    pub interface: Arc<Interface>,
}

/// The interface facts that apply to a file, source by source.
#[derive(Clone, Default)]
pub(crate) struct InterfaceInput {
    /// Where an interface stub for a kernel goes: the interface file the settings name, else
    /// the nearest `lark.toml` (which may not exist yet).
    pub path: Option<PathBuf>,
    pub layers: Vec<Layer>,
    /// Problems with the sources themselves: unreadable or missing files, syntax errors,
    /// entries that do not parse. Each has its place.
    pub errors: Vec<SpecError>,
    /// Interface files whose kernel sections may name no kernel (searched for only when it
    /// matters, see [`InputCache::unmatched_sections`]).
    section_searches: Vec<SectionSearchInput>,
}

/// An interface file, and the folders where its kernels should be found.
#[derive(Clone)]
struct SectionSearchInput {
    path: PathBuf,
    stamp: Stamp,
    interface: Arc<Interface>,
    dirs: Vec<PathBuf>,
}

/// What naming the fields of a kernel's by-value struct parameters needs: the `.cu` text (the
/// structs' definitions), its signature's parameters and the PTX parameters' sizes.
pub(crate) struct FieldSource<'a> {
    pub cu: &'a str,
    pub cu_params: Vec<spec::CuParam>,
    pub param_bytes: Vec<u32>,
}

impl<'a> FieldSource<'a> {
    pub fn new(cu: &'a str, cu_params: Vec<spec::CuParam>, func: &ptx::Function) -> FieldSource<'a> {
        let param_bytes = func.params.iter().map(model::decode::param_bytes).collect();
        FieldSource { cu, cu_params, param_bytes }
    }

    /// The names of the fields of the kernel's structs passed by value (its `.b8 p[N]`
    /// parameters), for messages.
    pub fn names(&self, func: &ptx::Function) -> check::FieldNames {
        let struct_bytes: Vec<Option<u32>> = func.params.iter().zip(&self.param_bytes).map(|(p, &bytes)| p.array_len.is_some().then_some(bytes)).collect();
        spec::field_names(self.cu, &self.cu_params, &struct_bytes)
    }
}

/// One kernel's interface: every source's entry merged, what conflicted, and what is wrong with
/// the result for this kernel's parameters.
#[derive(Clone, Debug, Default)]
pub(crate) struct KernelInterface {
    pub spec: Option<KernelSpec>,
    pub notes: Vec<MergeNote>,
    pub errors: Vec<SpecError>,
}

impl InterfaceInput {
    /// The spec of one kernel (by its PTX name) with parameters `params`: each source's entry
    /// under the canonical parameter names, merged; the conflicts; and the validation errors.
    ///
    /// With the kernel's `.cu` (`fields`), fields of structs passed by value named as `p.ncols`
    /// are resolved to their byte offsets (`p+16`) first, so validation sees the offsets.
    pub fn kernel(&self, ptx_name: &str, params: &[ParamNames], fields: Option<&FieldSource>) -> KernelInterface {
        let renamed: Vec<(SourceKind, Interface)> = self
            .layers
            .iter()
            .filter_map(|l| {
                let spec = l.interface.kernel(ptx_name)?.with_canonical_names(params);
                Some((l.kind, Interface { kernels: [(ptx_name.to_string(), spec)].into() }))
            })
            .collect();
        if renamed.is_empty() {
            return KernelInterface::default();
        }
        let layers: Vec<(SourceKind, &Interface)> = renamed.iter().map(|(k, i)| (*k, i)).collect();
        let (mut merged, notes) = Interface::merge(&layers);
        let mut spec = merged.kernels.remove(ptx_name);
        let mut errors = match (&mut spec, fields) {
            (Some(s), Some(f)) => spec::resolve_field_names(s, f.cu, &f.cu_params, &f.param_bytes),
            _ => Vec::new(),
        };
        errors.extend(spec.as_ref().map(|s| s.validate(params)).unwrap_or_default());
        KernelInterface { spec, notes, errors }
    }

    /// Whether any interface file or input has an entry for the kernel (facts inferred from the
    /// sources are not an entry the user wrote).
    pub fn has_kernel(&self, ptx_name: &str) -> bool {
        self.layers.iter().filter(|l| l.kind != SourceKind::Inferred).any(|l| l.interface.kernel(ptx_name).is_some())
    }

    /// Adds the facts inferred from a `.cu` file's launch sites, at the lowest precedence.
    pub fn with_launch_sites(mut self, path: &Path, text: &str) -> InterfaceInput {
        let inferred = spec::inferred_interface(text, &path.display().to_string());
        if !inferred.kernels.is_empty() {
            self.layers.push(Layer { kind: SourceKind::Inferred, path: path.to_path_buf(), interface: Arc::new(inferred) });
        }
        self
    }

    /// Every source merged, kernel by kernel, under the names each source wrote.
    pub fn merged(&self) -> Option<Arc<Interface>> {
        match &self.layers[..] {
            [] => None,
            [one] => Some(one.interface.clone()),
            many => {
                let layers: Vec<(SourceKind, &Interface)> = many.iter().map(|l| (l.kind, &*l.interface)).collect();
                Some(Arc::new(Interface::merge(&layers).0))
            }
        }
    }

    /// The same sources with the interface file at `path` replaced by `text` (an edit the
    /// editor would make), or added as the nearest `lark.toml` when it is not one of them.
    pub fn with_toml_text(&self, path: &Path, text: &str) -> InterfaceInput {
        let (interface, _) = spec::parse_lark_toml_recovering(&path.display().to_string(), text);
        let mut out = self.clone();
        match out.layers.iter_mut().find(|l| l.kind != SourceKind::Input && same_file(&l.path, path)) {
            Some(layer) => layer.interface = Arc::new(interface),
            None => out.layers.push(Layer { kind: SourceKind::LarkToml, path: path.to_path_buf(), interface: Arc::new(interface) }),
        }
        out
    }

    /// The interface read from the file at `path`, when it is one of the sources.
    pub fn layer_at(&self, path: &Path) -> Option<&Interface> {
        self.layers.iter().find(|l| same_file(&l.path, path)).map(|l| &*l.interface)
    }

    /// SentryWard `entry` names that name no kernel of the module.
    pub fn unknown_entries(&self, kernel_names: &[&str]) -> Vec<SpecError> {
        self.layers.iter().filter(|l| l.kind == SourceKind::Input).flat_map(|l| l.interface.unknown_entries(kernel_names)).collect()
    }
}

impl InputCache {
    /// The interface facts for a file: the SentryWard input (with its reference binding) when
    /// the settings name one, the interface file the settings name, and the nearest `lark.toml`.
    pub fn interface_for(&self, settings: &Settings, file: Option<&Path>) -> InterfaceInput {
        // Folders are searched for kernel names: `k.ptx` is in `.`, not in ``.
        let absolute = file.map(|f| std::path::absolute(f).unwrap_or_else(|_| f.to_path_buf()));
        let file = absolute.as_deref();
        let mut out = InterfaceInput::default();
        let named = settings.interface_file.as_ref().map(|p| resolve(settings, file, p));
        let nearest = file.and_then(find_upwards);
        if let Some(path) = &named {
            // An interface file kept elsewhere describes the kernels of the checked file: a
            // section is a typo only if neither its own folder nor the file's names the kernel.
            let dirs: Vec<PathBuf> = [path.parent(), file.and_then(Path::parent)].into_iter().flatten().map(Path::to_path_buf).collect();
            self.add_toml(&mut out, settings.interface_file_kind, path, &dirs, true);
        }
        if let Some(path) = nearest.as_ref().filter(|n| named.as_ref().is_none_or(|p| !same_file(p, n))) {
            let dirs: Vec<PathBuf> = path.parent().map(Path::to_path_buf).into_iter().collect();
            self.add_toml(&mut out, SourceKind::LarkToml, path, &dirs, false);
        }
        out.path = named.or(nearest);
        if let Some(json) = &settings.sentryward_input {
            let json = resolve(settings, file, json);
            match self.sentryward(settings, file, &json) {
                Ok(iface) => out.layers.push(Layer { kind: SourceKind::Input, path: json, interface: Arc::new(iface) }),
                Err(e) => out.errors.push(e),
            }
        }
        out
    }

    /// Parses an interface file (through the cache) into a layer and its errors.
    fn add_toml(&self, out: &mut InterfaceInput, kind: SourceKind, path: &Path, dirs: &[PathBuf], named: bool) {
        let Some(st) = stamp(path) else {
            if named {
                out.errors.push(SpecError::in_file(&path.display().to_string(), "interface file not found"));
            }
            return;
        };
        let parsed = {
            let mut tomls = lock(&self.tomls);
            match tomls.get(path) {
                Some((s, r)) if *s == st => r.clone(),
                _ => {
                    let display = path.display().to_string();
                    let r = match std::fs::read_to_string(path) {
                        Ok(text) => {
                            let (interface, errors) = spec::parse_lark_toml_recovering(&display, &text);
                            ParsedToml { interface: Arc::new(interface), errors }
                        }
                        Err(e) => ParsedToml { interface: Arc::default(), errors: vec![SpecError::in_file(&display, format!("cannot read: {e}"))] },
                    };
                    let r = Arc::new(r);
                    tomls.insert(path.to_path_buf(), (st, r.clone()));
                    r
                }
            }
        };
        out.errors.extend(parsed.errors.iter().cloned());
        out.section_searches.push(SectionSearchInput { path: path.to_path_buf(), stamp: st, interface: parsed.interface.clone(), dirs: dirs.to_vec() });
        out.layers.push(Layer { kind, path: path.to_path_buf(), interface: parsed.interface.clone() });
    }

    /// Kernel sections of the interface files that name no kernel of any source file around
    /// them (a section is reported when it matches no kernel under any of its folders). They are
    /// typos that matter to a file with a kernel the interface says nothing about; the search
    /// reads the source files of whole folders, so it is made only then.
    pub fn unmatched_sections(&self, input: &InterfaceInput) -> Vec<SpecError> {
        let mut out = Vec::new();
        for s in &input.section_searches {
            let mut unmatched: Option<Vec<SpecError>> = None;
            for dir in &s.dirs {
                let here = self.sections_matching_nothing(&s.path, s.stamp, &s.interface, dir);
                unmatched = Some(match unmatched {
                    None => here.to_vec(),
                    // The same section (the messages name different folders).
                    Some(before) => before.into_iter().filter(|e| here.iter().any(|h| h.key == e.key)).collect(),
                });
            }
            out.extend(unmatched.unwrap_or_default());
        }
        out
    }

    fn sections_matching_nothing(&self, toml: &Path, st: Stamp, iface: &Interface, dir: &Path) -> Arc<Vec<SpecError>> {
        let key = (toml.to_path_buf(), dir.to_path_buf());
        if let Some((s, at, errors)) = lock(&self.sections).get(&key) {
            if *s == st && at.elapsed() < SECTION_SEARCH_TTL {
                return errors.clone();
            }
        }
        let errors = Arc::new(iface.sections_matching_nothing(dir));
        lock(&self.sections).insert(key, (st, Instant::now(), errors.clone()));
        errors
    }

    /// The SentryWard input as an interface, with the reference binding the settings name.
    fn sentryward(&self, settings: &Settings, file: Option<&Path>, json: &Path) -> Result<Interface, SpecError> {
        let display = json.display().to_string();
        let text = std::fs::read_to_string(json).map_err(|e| SpecError::in_file(&display, format!("cannot read: {e}")))?;
        // The JSON describes one kernel; without `entry` or a kernel filter it applies to every
        // kernel.
        let name = settings.only_kernel.as_deref().unwrap_or("*");
        let mut iface = spec::parse_sentryward_json(&display, &text, name)?;
        if let Some((reference, binding)) = &settings.reference_binding {
            let (reference, binding) = (resolve(settings, file, reference), resolve(settings, file, binding));
            let binding_display = binding.display().to_string();
            if !reference.is_file() {
                return Err(SpecError::in_file(&reference.display().to_string(), "reference file not found"));
            }
            let text = std::fs::read_to_string(&binding).map_err(|e| SpecError::in_file(&binding_display, format!("cannot read: {e}")))?;
            iface.attach_reference_binding(&text, &binding_display, &reference)?;
        }
        Ok(iface)
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

/// Whether two paths name one file (as far as the file system can tell).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => normalize(a) == normalize(b),
    }
}

/// The names each PTX parameter of `func` goes by (its `.cu` name when known, its PTX name,
/// `param_N`) and whether it is a pointer, for validating and canonicalising the interface.
///
/// A parameter is a pointer when the `.cu` declares it with `*`, when the PTX marks it
/// `.ptr`, or when the PTX converts it to a global address (`cvta`) or dereferences it. A
/// 64-bit parameter the PTX does neither with could be either (a `size_t` or an unused
/// pointer): what the interface declares it to be is taken, so that it is never blamed for it.
pub(crate) fn param_names(func: &ptx::Function, cu: Option<&[spec::CuParam]>, declared: &dyn Fn(&[&str]) -> Option<bool>) -> Vec<ParamNames> {
    let dereferenced = dereferenced_params(func);
    func.params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let cu_param = cu.and_then(|c| c.get(i)).filter(|c| !c.name.is_empty());
            let position = format!("param_{i}");
            let mut names: Vec<&str> = cu_param.map(|c| c.name.as_str()).into_iter().collect();
            names.push(p.name.as_str());
            names.push(&position);
            let wide = matches!(p.ty.as_str(), ".u64" | ".b64" | ".s64") && p.array_len.is_none();
            let is_pointer = match cu_param {
                Some(c) => c.is_pointer,
                None if p.ptr_space.is_some() || dereferenced.contains(p.name.as_str()) => true,
                None if wide => declared(&names).unwrap_or(false),
                None => false,
            };
            ParamNames::new(&names, is_pointer)
        })
        .collect()
}

/// PTX parameters whose value the kernel uses as an address: loaded with `ld.param` into a
/// register that `cvta` converts or that an access dereferences.
fn dereferenced_params(func: &ptx::Function) -> std::collections::HashSet<&str> {
    use ptx::ast::Operand;
    let mut loaded: HashMap<&str, &str> = HashMap::new();
    let mut used_as_address = std::collections::HashSet::new();
    for inst in func.instructions() {
        let op = inst.opcode.as_str();
        match (op, &inst.operands[..]) {
            ("ld", [Operand::Reg(dst), Operand::Address(a), ..]) if inst.has_modifier(".param") => {
                if let Some(name) = address_symbol(a) {
                    loaded.insert(dst.as_str(), name);
                }
            }
            ("cvta", [_, Operand::Reg(src), ..]) => {
                used_as_address.insert(src.as_str());
            }
            _ => {
                for o in &inst.operands {
                    if let Operand::Address(a) = o {
                        if let Some(r) = address_register(a) {
                            used_as_address.insert(r);
                        }
                    }
                }
            }
        }
    }
    loaded.into_iter().filter(|(reg, _)| used_as_address.contains(reg)).map(|(_, param)| param).collect()
}

fn address_symbol(a: &ptx::ast::Address) -> Option<&str> {
    match &a.base {
        ptx::ast::AddressBase::Symbol(s) => Some(s.as_str()),
        _ => None,
    }
}

fn address_register(a: &ptx::ast::Address) -> Option<&str> {
    match &a.base {
        ptx::ast::AddressBase::Reg(r) => Some(r.as_str()),
        _ => None,
    }
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
