//! Merging the interfaces several sources give, fact by fact, in a fixed precedence (highest
//! first):
//!
//! 1. `--input` (SentryWard kernel-input JSON),
//! 2. `--interface FILE`,
//! 3. the nearest `lark.toml`,
//! 4. editor settings,
//! 5. inferred facts (launch sites in the `.cu`).
//!
//! A fact only a lower source gives is kept; when two sources disagree, the higher one wins and
//! a [`MergeNote`] says so. The facts are: `grid`, `block`, `dynamic_shared_bytes`, `reference`
//! (as a whole), and per parameter whether it is a scalar or a buffer, then `value`, `range`
//! (scalars) or `dtype`, `len`, `assume` (the list as a whole), `values` (buffers).
//!
//! Sources may name one parameter differently (SentryWard by PTX name or position, lark.toml
//! by `.cu` name); rename each spec with [`KernelSpec::with_canonical_names`] before merging when
//! the kernel's parameters are known.

use crate::error::Origin;
use crate::interface::{dims_to_string, Interface, KernelSpec, ParamSpec};
use crate::lark_toml::section_path;
use crate::reference::ArgBinding;
use crate::validate::{lookup, ParamNames};
use std::collections::BTreeMap;
use std::fmt;

/// Where an interface came from; the order is the precedence, highest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceKind {
    /// `--input`: SentryWard's kernel-input JSON.
    Input,
    /// `--interface FILE`.
    InterfaceFile,
    /// The nearest `lark.toml`.
    LarkToml,
    /// Editor settings.
    Editor,
    /// Facts inferred from the sources (launch sites).
    Inferred,
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceKind::Input => "--input",
            SourceKind::InterfaceFile => "--interface",
            SourceKind::LarkToml => "lark.toml",
            SourceKind::Editor => "editor settings",
            SourceKind::Inferred => "inferred",
        })
    }
}

/// Two sources disagree on one fact; the higher one was used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeNote {
    /// The fact's key path (`kernel.k.params.n.len`).
    pub key: String,
    pub used: SourceKind,
    pub used_value: String,
    pub ignored: SourceKind,
    pub ignored_value: String,
    /// Where the ignored value was written, when known.
    pub ignored_origin: Option<Origin>,
}

impl fmt::Display for MergeNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {} says {}, {} says {}; using {}", self.key, self.used, self.used_value, self.ignored, self.ignored_value, self.used)
    }
}

impl Interface {
    /// Merges interfaces field by field in precedence order (see the module documentation);
    /// layers may come in any order. A kernel is matched across layers by its name, a mangled
    /// PTX name also by its plain name, and a layer's `"*"` (a SentryWard input without a kernel
    /// name) applies to every kernel that layer does not name.
    pub fn merge(layers: &[(SourceKind, &Interface)]) -> (Interface, Vec<MergeNote>) {
        let mut layers: Vec<(SourceKind, &Interface)> = layers.to_vec();
        layers.sort_by_key(|(kind, _)| *kind);
        let names: std::collections::BTreeSet<&String> = layers.iter().flat_map(|(_, i)| i.kernels.keys()).collect();
        let mut out = Interface::default();
        let mut notes = Vec::new();
        for name in names {
            let specs: Vec<(SourceKind, &KernelSpec)> = layers
                .iter()
                .filter_map(|(kind, iface)| {
                    let spec = crate::kernel_aliases(name).iter().find_map(|n| iface.kernels.get(n)).or_else(|| iface.kernels.get("*"))?;
                    Some((*kind, spec))
                })
                .collect();
            let (spec, mut n) = KernelSpec::merge(&specs, &section_path(name));
            out.kernels.insert(name.clone(), spec);
            notes.append(&mut n);
        }
        (out, notes)
    }

    /// Fills what this interface leaves open from `other` (a lower-precedence source, e.g. the
    /// lark.toml under a SentryWard input): `Interface::merge` with this one as `--input` and
    /// `other` as lark.toml, conflicts resolved in favour of this one.
    pub fn merge_missing(&mut self, other: &Interface) {
        let (merged, _) = Interface::merge(&[(SourceKind::Input, self), (SourceKind::LarkToml, other)]);
        *self = merged;
    }
}

/// One fact from each layer that declares it.
struct Candidates<'a, T> {
    values: Vec<(SourceKind, &'a KernelSpec, &'a T)>,
}

impl KernelSpec {
    /// Merges the specs of one kernel, highest precedence first (`specs` is sorted here);
    /// `prefix` is the kernel's key path for notes (`kernel.rmsnorm`).
    pub fn merge(specs: &[(SourceKind, &KernelSpec)], prefix: &str) -> (KernelSpec, Vec<MergeNote>) {
        let mut specs = specs.to_vec();
        specs.sort_by_key(|(kind, _)| *kind);
        let mut m = Merger { prefix, out: KernelSpec::default(), notes: Vec::new() };
        if let Some((_, s)) = specs.iter().find(|(_, s)| s.origins.contains_key("")) {
            m.out.origins.insert(String::new(), s.origin(""));
        }
        m.out.grid = m.pick("grid", Candidates { values: specs.iter().filter_map(|(k, s)| Some((*k, *s, s.grid.as_ref()?))).collect() }, dims_to_string);
        m.out.block = m.pick("block", Candidates { values: specs.iter().filter_map(|(k, s)| Some((*k, *s, s.block.as_ref()?))).collect() }, dims_to_string);
        m.out.dynamic_shared_bytes = m.pick(
            "dynamic_shared_bytes",
            Candidates { values: specs.iter().filter_map(|(k, s)| Some((*k, *s, s.dynamic_shared_bytes.as_ref()?))).collect() },
            |v| v.to_string(),
        );
        m.out.reference =
            m.pick("reference", Candidates { values: specs.iter().filter_map(|(k, s)| Some((*k, *s, s.reference.as_ref()?))).collect() }, |r| r.summary());
        let objects: std::collections::BTreeSet<&String> = specs.iter().flat_map(|(_, s)| s.objects.keys()).collect();
        for o in objects {
            let c = Candidates { values: specs.iter().filter_map(|(k, s)| Some((*k, *s, s.objects.get(o)?))).collect() };
            if let Some(v) = m.pick(&format!("objects.{o}"), c, |v| format!("`{v}`")) {
                m.out.objects.insert(o.clone(), v);
            }
        }
        let params: std::collections::BTreeSet<&String> = specs.iter().flat_map(|(_, s)| s.params.keys()).collect();
        for p in params {
            m.param(p, &specs);
        }
        (m.out, m.notes)
    }

    /// The same spec with every parameter under its canonical name (the first of its
    /// [`ParamNames`]), in `params`, `origins`, `objects` and every size expression and
    /// reference binding. Keys that name no parameter stay as they are (validation reports
    /// them). When two keys name one parameter, the one written as the canonical name wins.
    pub fn with_canonical_names(&self, params: &[ParamNames]) -> KernelSpec {
        let canonical = |n: &str| -> Option<String> { lookup(params, n).and_then(|p| p.names.first()).filter(|c| c.as_str() != n).cloned() };
        let rename = |n: &str| canonical(n).unwrap_or_else(|| n.to_string());
        // A field's key renames its parameter: `param_4+16` is `p+16`.
        let rename_key = |k: &str| -> Option<String> {
            if lookup(params, k).is_some() {
                return canonical(k);
            }
            if let Some((base, offset)) = crate::field_key(k) {
                return canonical(base).map(|c| format!("{c}+{offset}"));
            }
            crate::named_field_key(k).and_then(|(base, field)| canonical(base).map(|c| format!("{c}.{field}")))
        };
        let mut out = self.clone();
        out.params.clear();
        out.origins.retain(|k, _| !k.starts_with("params."));
        // Canonically named entries first, so that they win over aliases of the same parameter.
        let mut entries: Vec<(&String, &ParamSpec)> = self.params.iter().collect();
        entries.sort_by_key(|(k, _)| rename_key(k).is_some());
        for (key, spec) in entries {
            let new = rename_key(key).unwrap_or_else(|| key.clone());
            if out.params.contains_key(&new) {
                continue;
            }
            let mut spec = spec.clone();
            if let ParamSpec::Buffer { len: Some(len), .. } = &mut spec {
                *len = crate::interface::Len::from_expr(len.to_expr().rename(&canonical));
            }
            out.params.insert(new.clone(), spec);
            let old_prefix = format!("params.{}", crate::lark_toml::key_segment(key));
            for (k, o) in &self.origins {
                if let Some(rest) = k.strip_prefix(&old_prefix).filter(|r| r.is_empty() || r.starts_with('.')) {
                    out.origins.insert(format!("params.{}{rest}", crate::lark_toml::key_segment(&new)), o.clone());
                }
            }
        }
        for dims in [&mut out.grid, &mut out.block].into_iter().flatten() {
            for d in dims.iter_mut() {
                if let crate::interface::Dim::Expr(e) = d {
                    *e = e.rename(&canonical);
                }
            }
        }
        for v in out.objects.values_mut() {
            *v = rename(v);
        }
        if let Some(r) = &mut out.reference {
            for a in &mut r.args {
                match &mut a.binding {
                    ArgBinding::Buffer { buffer, shape, .. } => {
                        *buffer = rename(buffer);
                        shape.iter_mut().for_each(|e| *e = e.rename(&canonical));
                    }
                    ArgBinding::Param(p) => *p = rename(p),
                    ArgBinding::Value(_) => {}
                }
            }
            for o in &mut r.outputs {
                o.buffer = rename(&o.buffer);
                o.shape.iter_mut().for_each(|e| *e = e.rename(&canonical));
                o.offset = o.offset.rename(&canonical);
                o.strides.iter_mut().flatten().for_each(|e| *e = e.rename(&canonical));
            }
            for shape in &mut r.shapes {
                *shape = std::mem::take(shape).into_iter().map(|(k, v)| (rename(&k), v)).collect::<BTreeMap<_, _>>();
            }
        }
        out
    }
}

struct Merger<'p> {
    prefix: &'p str,
    out: KernelSpec,
    notes: Vec<MergeNote>,
}

impl Merger<'_> {
    /// The highest layer's value of one fact (with its origins: the key and everything under
    /// it), and a note for every lower layer that says otherwise.
    fn pick<T: Clone + PartialEq>(&mut self, rel: &str, c: Candidates<T>, show: impl Fn(&T) -> String) -> Option<T> {
        let (winner_kind, winner_spec, winner) = *c.values.first()?;
        for (kind, spec, v) in &c.values[1..] {
            if *v != winner {
                let (used_value, mut ignored_value) = (show(winner), show(v));
                // Summaries (a reference's file and function) can agree while the facts differ.
                if ignored_value == used_value {
                    ignored_value.push_str(" (different in its details)");
                }
                self.notes.push(MergeNote {
                    key: format!("{}.{rel}", self.prefix),
                    used: winner_kind,
                    used_value,
                    ignored: *kind,
                    ignored_value,
                    ignored_origin: spec.origins.get(rel).cloned(),
                });
            }
        }
        for (k, o) in &winner_spec.origins {
            if k == rel || k.strip_prefix(rel).is_some_and(|r| r.starts_with('.') || r.starts_with('[')) {
                self.out.origins.insert(k.clone(), o.clone());
            }
        }
        Some(winner.clone())
    }

    fn param(&mut self, p: &str, specs: &[(SourceKind, &KernelSpec)]) {
        let all: Vec<(SourceKind, &KernelSpec, &ParamSpec)> = specs.iter().filter_map(|(k, s)| Some((*k, *s, s.params.get(p)?))).collect();
        let Some(&(top_kind, top_spec, top)) = all.first() else { return };
        let rel = format!("params.{}", crate::lark_toml::key_segment(p));
        let kind_name = |s: &ParamSpec| if s.is_buffer() { "a buffer" } else { "a scalar" };
        // Whether the parameter is a scalar or a buffer is itself a fact: the highest layer
        // decides, and the other kind's facts from lower layers are dropped with a note.
        for (kind, spec, s) in &all[1..] {
            if s.is_buffer() != top.is_buffer() {
                self.notes.push(MergeNote {
                    key: format!("{}.{rel}", self.prefix),
                    used: top_kind,
                    used_value: kind_name(top).into(),
                    ignored: *kind,
                    ignored_value: kind_name(s).into(),
                    ignored_origin: spec.origins.get(&rel).cloned(),
                });
            }
        }
        if let Some(o) = top_spec.origins.get(&rel) {
            self.out.origins.insert(rel.clone(), o.clone());
        }
        let same: Vec<(SourceKind, &KernelSpec, &ParamSpec)> = all.iter().copied().filter(|(_, _, s)| s.is_buffer() == top.is_buffer()).collect();
        macro_rules! field {
            ($variant:ident, $field:ident, $get:expr, $show:expr) => {{
                let values = same
                    .iter()
                    .filter_map(|(k, s, ps)| match ps {
                        ParamSpec::$variant { $field, .. } => $get($field).map(|v| (*k, *s, v)),
                        _ => None,
                    })
                    .collect();
                self.pick(&format!("{rel}.{}", stringify!($field)), Candidates { values }, $show)
            }};
        }
        let merged = if top.is_buffer() {
            ParamSpec::Buffer {
                dtype: field!(Buffer, dtype, opt, |d: &crate::DType| d.to_string()),
                len: field!(Buffer, len, opt, |l: &crate::Len| l.to_string()),
                assume: field!(Buffer, assume, nonempty, |a: &Vec<_>| show_assume(a)).unwrap_or_default(),
                values: field!(Buffer, values, opt, |v: &Vec<_>| show_values(v)),
            }
        } else {
            ParamSpec::Scalar {
                value: field!(Scalar, value, opt, |v: &crate::Scalar| v.to_string()),
                range: field!(Scalar, range, opt, |r: &(i128, i128)| format!("[{}, {}]", r.0, r.1)),
            }
        };
        self.out.params.insert(p.to_string(), merged);
    }
}

fn opt<T>(o: &Option<T>) -> Option<&T> {
    o.as_ref()
}

fn nonempty<T>(v: &Vec<T>) -> Option<&Vec<T>> {
    (!v.is_empty()).then_some(v)
}

fn show_assume(a: &[crate::Assumption]) -> String {
    format!("[{}]", a.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(", "))
}

fn show_values(v: &[i128]) -> String {
    let shown: Vec<String> = v.iter().take(8).map(i128::to_string).collect();
    let more = if v.len() > 8 { format!(", ... ({} elements)", v.len()) } else { String::new() };
    format!("[{}{more}]", shown.join(", "))
}
