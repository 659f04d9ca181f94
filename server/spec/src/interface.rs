//! The interface types: what a kernel is checked against.

use crate::error::Origin;
use crate::reference::ReferenceSpec;
use crate::size_expr::{ExprKind, SizeExpr};
use std::collections::BTreeMap;
use std::fmt;

/// An inclusive range of one launch dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimRange {
    pub lo: u64,
    pub hi: u64,
}

impl DimRange {
    pub fn exact(v: u64) -> DimRange {
        DimRange { lo: v, hi: v }
    }

    pub fn value(self) -> Option<u64> {
        (self.lo == self.hi).then_some(self.lo)
    }
}

impl fmt::Display for DimRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value() {
            Some(v) => write!(f, "{v}"),
            None => write!(f, "[{}, {}]", self.lo, self.hi),
        }
    }
}

/// One launch dimension: a number, a range, or a size expression over scalar parameters
/// (`grid = ["rows", 1, 1]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    Range(DimRange),
    Expr(SizeExpr),
}

impl Dim {
    pub fn exact(v: u64) -> Dim {
        Dim::Range(DimRange::exact(v))
    }

    /// The dimension when it is one known number.
    pub fn value(&self) -> Option<u64> {
        match self {
            Dim::Range(r) => r.value(),
            Dim::Expr(_) => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Range(r) => write!(f, "{r}"),
            Dim::Expr(e) => write!(f, "\"{e}\""),
        }
    }
}

pub(crate) fn dims_to_string(d: &[Dim; 3]) -> String {
    format!("[{}, {}, {}]", d[0], d[1], d[2])
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i128),
    Float(f64),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v:?}"),
        }
    }
}

/// A buffer's length in elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Len {
    Elements(u64),
    /// The value of a scalar parameter (e.g. `n`).
    Param(String),
    /// Any other size expression (`"rows * cols"`); never a bare number or name.
    Expr(SizeExpr),
}

impl Len {
    /// The simplest form of an expression: a number, a parameter, or the expression itself.
    pub fn from_expr(e: SizeExpr) -> Len {
        match &e.kind {
            ExprKind::Int(v) if *v >= 0 && *v <= u64::MAX as i128 => Len::Elements(*v as u64),
            ExprKind::Name(n) => Len::Param(n.clone()),
            _ => Len::Expr(e),
        }
    }

    pub fn to_expr(&self) -> SizeExpr {
        match self {
            Len::Elements(n) => SizeExpr::int(*n as i128),
            Len::Param(p) => SizeExpr::name(p),
            Len::Expr(e) => e.clone(),
        }
    }

    /// The number of elements, given the values of scalar parameters.
    pub fn elements(&self, value_of: &dyn Fn(&str) -> Option<i128>) -> Option<u64> {
        match self {
            Len::Elements(n) => Some(*n),
            other => u64::try_from(other.to_expr().eval(value_of).ok()?).ok(),
        }
    }
}

impl fmt::Display for Len {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Len::Elements(n) => write!(f, "{n}"),
            Len::Param(p) => write!(f, "\"{p}\""),
            Len::Expr(e) => write!(f, "\"{e}\""),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F16,
    BF16,
    F32,
    F64,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
}

impl DType {
    /// LARK's names (`f32`), PTX's (`s32`, `b64`), C's (`float`, `int`) and PyTorch's
    /// (`float32`, `torch.int64`).
    pub fn parse(s: &str) -> Option<DType> {
        let lower = s.to_ascii_lowercase();
        let s = lower.strip_prefix("torch.").unwrap_or(&lower);
        Some(match s {
            "f16" | "half" | "float16" => DType::F16,
            "bf16" | "bfloat16" => DType::BF16,
            "f32" | "float" | "float32" => DType::F32,
            "f64" | "double" | "float64" => DType::F64,
            "i8" | "s8" | "int8" | "b8" => DType::I8,
            "u8" | "uint8" => DType::U8,
            "i16" | "s16" | "int16" | "b16" | "short" => DType::I16,
            "u16" | "uint16" => DType::U16,
            "i32" | "s32" | "int" | "int32" | "b32" => DType::I32,
            "u32" | "uint32" | "unsigned" => DType::U32,
            "i64" | "s64" | "int64" | "long" | "b64" => DType::I64,
            "u64" | "uint64" => DType::U64,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
        }
    }

    pub fn bytes(self) -> u64 {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// The values an integer type holds (inclusive); `None` for floating-point types.
    pub fn int_range(self) -> Option<(i128, i128)> {
        if self.is_float() {
            return None;
        }
        let bits = self.bytes() * 8;
        let signed = matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64);
        Some(if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub(crate) const DTYPE_NAMES: &str = "f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64 or u64";

#[derive(Clone, Debug, PartialEq)]
pub enum Assumption {
    /// Distinct indices hold distinct values (a slot mapping that never repeats).
    Injective,
    /// Every element lies in `lo..hi` (half-open).
    InRange(i64, i64),
    /// The caller fills the buffer with zeros before the launch (`torch.zeros`,
    /// `cudaMemset(p, 0, bytes)`): an output the kernel accumulates into (`atomicAdd`) starts
    /// at zero. Only the equivalence check reads it; the race check assumes nothing of it.
    Zeroed,
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Assumption::Injective => f.write_str("injective"),
            Assumption::InRange(lo, hi) => write!(f, "in_range({lo}, {hi})"),
            Assumption::Zeroed => f.write_str("zeroed"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamSpec {
    Scalar {
        value: Option<Scalar>,
        range: Option<(i128, i128)>,
    },
    Buffer {
        dtype: Option<DType>,
        len: Option<Len>,
        assume: Vec<Assumption>,
        /// Fixed contents (an index buffer given in full: `values`, `values_file`, or
        /// SentryWard's `shape_arrays`), element by element.
        values: Option<Vec<i128>>,
    },
}

impl ParamSpec {
    pub fn empty_buffer() -> ParamSpec {
        ParamSpec::Buffer { dtype: None, len: None, assume: Vec::new(), values: None }
    }

    pub fn is_buffer(&self) -> bool {
        matches!(self, ParamSpec::Buffer { .. })
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelSpec {
    pub grid: Option<[Dim; 3]>,
    pub block: Option<[Dim; 3]>,
    /// By the name used in the interface file: a `.cu` parameter name, a PTX parameter name, or
    /// `param_N`.
    pub params: BTreeMap<String, ParamSpec>,
    pub dynamic_shared_bytes: Option<u64>,
    /// The PyTorch reference the kernel must agree with, and how its arguments bind.
    pub reference: Option<ReferenceSpec>,
    /// SentryWard's memory-object names (`declarations[].object`) → the parameter key in
    /// `params` (what a peer `reference_binding.json` calls an allocation).
    pub objects: BTreeMap<String, String>,
    /// Where each fact was written, by its key relative to the kernel: `""` (the section or
    /// `entry`), `grid`, `params.n` (the entry), `params.n.len`, `reference.outputs[0].shape[1]`.
    pub origins: BTreeMap<String, Origin>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interface {
    pub kernels: BTreeMap<String, KernelSpec>,
}

impl Interface {
    /// The spec of a kernel, by its PTX name or (for C++ kernels) its unmangled name.
    pub fn kernel(&self, ptx_name: &str) -> Option<&KernelSpec> {
        crate::kernel_aliases(ptx_name)
            .iter()
            .find_map(|n| self.kernels.get(n))
            // A SentryWard input given without a kernel name applies to every kernel.
            .or_else(|| self.kernels.get("*"))
    }
}

impl KernelSpec {
    /// Looks a parameter up by the names it can go by: `names` lists the candidates for one PTX
    /// parameter (its `.cu` name, its PTX name, `param_N`).
    pub fn param(&self, names: &[&str]) -> Option<&ParamSpec> {
        names.iter().find_map(|n| self.params.get(*n))
    }

    /// Files the origins of the facts written under `from` (`params.p.ncols`, and `.value` below
    /// it) under parameter `key` (`params."p.ncols"`), as a key renamed or assembled from a
    /// nested table is found.
    pub fn move_param_origins(&mut self, from: &str, key: &str) {
        let to = format!("params.{}", crate::lark_toml::key_segment(key));
        if from == to {
            return;
        }
        let moved: Vec<String> = self.origins.keys().filter(|k| *k == from || k.starts_with(&format!("{from}."))).cloned().collect();
        for old in moved {
            if let Some(origin) = self.origins.remove(&old) {
                self.origins.insert(format!("{to}{}", &old[from.len()..]), origin);
            }
        }
    }

    /// Where the fact at `key` (relative to the kernel) was written; a place without a file when
    /// the fact was given in code.
    pub fn origin(&self, key: &str) -> Origin {
        self.origins.get(key).cloned().unwrap_or_else(|| Origin::detached(key))
    }

    /// The fact at `key` when it was read from a launch site (`spec::launch_sites`): its origin is
    /// the `.cu`/`.cuh` file, not an interface file or code.
    pub fn from_launch_site(&self, key: &str) -> Option<&Origin> {
        self.origins.get(key).filter(|o| o.file.ends_with(".cu") || o.file.ends_with(".cuh"))
    }

    /// The values the spec fixes for scalar parameters (`value = ...`, integers only).
    pub fn scalar_values(&self) -> BTreeMap<String, i128> {
        self.params
            .iter()
            .filter_map(|(n, p)| match p {
                ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. } => Some((n.clone(), *v)),
                _ => None,
            })
            .collect()
    }

    /// The interval a scalar parameter is known to lie in: its value, else its range.
    pub fn scalar_range(&self, name: &str) -> Option<(i128, i128)> {
        match self.params.get(name)? {
            ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. } => Some((*v, *v)),
            ParamSpec::Scalar { range: Some(r), .. } => Some(*r),
            _ => None,
        }
    }
}
