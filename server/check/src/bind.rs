//! Binding an interface (`spec::KernelSpec`) to a lowered kernel: which spec entry describes
//! which PTX parameter, the launch geometry to assume, and buffer sizes.

use model::decode::ParamInfo;
use model::symbolic::Base;
use model::Kernel;
use spec::{DimRange, KernelSpec, Len, ParamSpec, Scalar};

/// Hardware limits used when the interface does not fix the geometry.
pub const DEFAULT_BLOCK: [DimRange; 3] = [DimRange { lo: 1, hi: 1024 }, DimRange { lo: 1, hi: 1024 }, DimRange { lo: 1, hi: 64 }];
pub const DEFAULT_GRID: [DimRange; 3] = [DimRange { lo: 1, hi: 0x7fff_ffff }, DimRange { lo: 1, hi: 65535 }, DimRange { lo: 1, hi: 65535 }];

#[derive(Clone, Debug)]
pub struct Binding {
    pub block: [DimRange; 3],
    pub grid: [DimRange; 3],
    /// Per PTX parameter: the names it goes by (source name first, if known).
    pub names: Vec<Vec<String>>,
    pub params: Vec<Option<ParamSpec>>,
    pub dynamic_shared_bytes: Option<u64>,
    /// Spec entries that matched no parameter (reported as warnings).
    pub unmatched: Vec<String>,
    /// Per PTX parameter: the bytes of the buffer when the interface fixes its contents
    /// (`values`, `values_file`, SentryWard's `shape_arrays`), each element little-endian in
    /// its dtype.
    pub fixed: Vec<Option<std::sync::Arc<[u8]>>>,
    /// The block is not declared (by the interface or `.reqntid`): its thread count is a
    /// multiple of 32, as real launches are (see [`Binding::assume_unread_dimensions`]).
    pub whole_warps: bool,
    /// The most threads a block has: 1024, or the kernel's `.maxntid` (`__launch_bounds__`)
    /// when the interface does not declare the block.
    pub max_threads: u64,
    /// Fields of aggregate parameters fixed for this check (`Options::pinned_fields`): the
    /// formulas use them as constants and replays pass them.
    pub pinned_fields: Vec<crate::witness::ParamField>,
    /// Launch dimensions the interface gives as expressions of scalars (`grid = ["rows", 1,
    /// 1]`): `(is_grid, dimension, expression)`. The ranges above are what the scalars allow;
    /// queries also tie each dimension to its scalars' values (`Query::new`), so a launch of
    /// two blocks comes with `rows = 2`, not any rows.
    pub launch_exprs: Vec<(bool, usize, spec::SizeExpr)>,
    /// Fields of structs passed by value that the interface declares (`"p+16" = { value = 1024 }`).
    pub fields: Vec<DeclaredField>,
    /// Field keys that name no field this binding can place, with the reason (see
    /// [`crate::report::Note::UnresolvedField`]).
    pub unresolved_fields: Vec<(String, String)>,
    /// Pointer fields of structs passed by value that the interface declares as buffers
    /// (`"p+32" = { dtype = "f16", len = 4096 }`).
    pub field_buffers: Vec<FieldBuffer>,
    /// Names of fields by `(parameter, byte offset)`, where the `.cu` defines the struct
    /// (`crate::Sources::field_names`).
    pub field_names: crate::FieldNames,
}

/// A pointer field of a struct passed by value, declared as the buffer it points to.
#[derive(Clone, Debug)]
pub struct FieldBuffer {
    pub param: u32,
    pub offset: u32,
    pub spec: ParamSpec,
    /// The buffer's bytes, when the interface fixes its contents (as [`Binding::fixed`]).
    pub fixed: Option<std::sync::Arc<[u8]>>,
}

/// A field key placed in its struct: a scalar fact or the buffer of a pointer field.
enum PlacedField {
    Scalar(DeclaredField),
    Buffer(FieldBuffer),
}

/// A field of a struct passed by value, by byte offset, with the value or range the interface
/// gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclaredField {
    pub param: u32,
    pub offset: u32,
    pub value: Option<Scalar>,
    pub range: Option<(i128, i128)>,
}

/// The bytes of aggregate parameter `param` (a struct passed by value, `len` bytes) with `fields`
/// (byte offset, raw value) written in, each as wide as the kernel reads it (a field it never
/// reads has no width and is left out), zeros elsewhere: what a replay or an equivalence run
/// passes for the struct.
pub fn struct_bytes(x: &model::expr::Exprs, param: u32, len: u32, fields: impl IntoIterator<Item = (u32, u64)>) -> Vec<u8> {
    let mut bytes = vec![0; len as usize];
    for (offset, value) in fields {
        let Some((_, bits)) = x.find_var(model::expr::Sym::Param { index: param, offset }) else { continue };
        let width = (bits as usize / 8).clamp(1, 8);
        let at = offset as usize;
        if let Some(slot) = bytes.get_mut(at..at + width) {
            slot.copy_from_slice(&value.to_le_bytes()[..width]);
        }
    }
    bytes
}

/// The field `key` (`p+16`, or `p.ncols` where no layout placed it) declares, when its
/// parameter is one of the kernel's: the field, or why it cannot be placed. `None` when `key`
/// names no parameter at all.
fn declared_field(k: &Kernel, names: &[Vec<String>], key: &str, ps: &ParamSpec) -> Option<Result<PlacedField, String>> {
    let by_offset = spec::field_key(key);
    let base = by_offset.map(|(b, _)| b).or_else(|| spec::named_field_key(key).map(|(b, _)| b))?;
    let i = names.iter().position(|n| n.iter().any(|x| x == base))?;
    Some(place_field(&k.params[i], i as u32, base, by_offset.map(|(_, offset)| offset), ps))
}

/// Field `offset` of parameter `p` (number `index`, called `base`), declared as `ps`.
fn place_field(p: &ParamInfo, index: u32, base: &str, offset: Option<u32>, ps: &ParamSpec) -> Result<PlacedField, String> {
    let Some(offset) = offset else {
        return Err(format!(
            "fields are named from the struct's definition in the kernel's .cu, which is not at hand or could not be read: declare it by byte offset (`\"{base}+OFFSET\"`)"
        ));
    };
    if p.bytes * 8 == p.bits {
        return Err(format!("`{base}` is not a struct passed by value"));
    }
    if offset >= p.bytes {
        return Err(format!("`{base}` has {} bytes", p.bytes));
    }
    match ps {
        ParamSpec::Scalar { value, range } => Ok(PlacedField::Scalar(DeclaredField { param: index, offset, value: *value, range: *range })),
        // The kernel reads a pointer as eight aligned bytes (see `model::symbolic::Base::Field`).
        ParamSpec::Buffer { .. } if offset % 8 != 0 || offset + 8 > p.bytes => {
            Err(format!("a pointer field is 8 bytes at an offset that is a multiple of 8, inside the {} bytes of `{base}`", p.bytes))
        }
        ParamSpec::Buffer { .. } => Ok(PlacedField::Buffer(FieldBuffer { param: index, offset, spec: ps.clone(), fixed: fixed_bytes(ps) })),
    }
}

/// The most blocks along x an undeclared grid has: 2²¹ blocks of at most 1024 threads number
/// at most 2³¹ threads, the most a global thread index computed in `int` can count.
pub const MAX_OPEN_GRID_X: u64 = 1 << 21;

/// A buffer's size in bytes: fixed, or a scalar parameter times the element size.
#[derive(Clone, Debug, PartialEq)]
pub enum ByteSize {
    Fixed(u64),
    ParamTimes { param: u32, elem_bytes: u64 },
}

impl Binding {
    pub fn new(k: &Kernel, spec: Option<&KernelSpec>, source_names: Option<&[String]>) -> Binding {
        let names: Vec<Vec<String>> = k
            .params
            .iter()
            .enumerate()
            .map(|(i, p): (usize, &ParamInfo)| {
                let mut n = Vec::new();
                if let Some(s) = source_names.and_then(|s| s.get(i)) {
                    if !s.is_empty() {
                        n.push(s.clone());
                    }
                }
                n.push(p.name.to_string());
                n.push(format!("param_{i}"));
                n
            })
            .collect();
        let mut block = k.reqntid.map_or(DEFAULT_BLOCK, |r| r.map(DimRange::exact));
        let mut grid = DEFAULT_GRID;
        let mut params = vec![None; k.params.len()];
        let mut unmatched = Vec::new();
        let mut fields = Vec::new();
        let mut field_buffers = Vec::new();
        let mut unresolved_fields = Vec::new();
        let mut dynamic_shared_bytes = None;
        if let Some(spec) = spec {
            // Dimensions given by size expressions come as the ranges their scalars allow.
            if let Some(b) = spec.block_range() {
                block = b;
            }
            if let Some(g) = spec.grid_range() {
                grid = g;
            }
            dynamic_shared_bytes = spec.dynamic_shared_bytes;
            for (i, n) in names.iter().enumerate() {
                let refs: Vec<&str> = n.iter().map(String::as_str).collect();
                params[i] = spec.param(&refs).cloned();
            }
            for (key, ps) in &spec.params {
                if names.iter().any(|n| n.contains(key)) {
                    continue;
                }
                match declared_field(k, &names, key, ps) {
                    Some(Ok(PlacedField::Scalar(f))) => fields.push(f),
                    Some(Ok(PlacedField::Buffer(b))) => field_buffers.push(b),
                    Some(Err(why)) => unresolved_fields.push((key.clone(), why)),
                    None => unmatched.push(key.clone()),
                }
            }
        }
        let fixed = params.iter().map(|p| p.as_ref().and_then(fixed_bytes)).collect();
        let mut launch_exprs = Vec::new();
        if let Some(spec) = spec {
            for (is_grid, dims) in [(true, &spec.grid), (false, &spec.block)] {
                for (d, dim) in dims.iter().flatten().enumerate() {
                    if let spec::Dim::Expr(e) = dim {
                        launch_exprs.push((is_grid, d, e.clone()));
                    }
                }
            }
        }
        Binding {
            block,
            grid,
            names,
            params,
            dynamic_shared_bytes,
            unmatched,
            fixed,
            whole_warps: false,
            max_threads: 1024,
            pinned_fields: Vec::new(),
            launch_exprs,
            fields,
            unresolved_fields,
            field_buffers,
            field_names: crate::FieldNames::new(),
        }
    }

    /// How messages name field `offset` of struct parameter `param`: by its name in the `.cu`
    /// (`p.ncols`), else by byte offset (`p+16`); either is a lark.toml key.
    pub fn field_name(&self, param: u32, offset: u32) -> String {
        self.field_names.get(&(param, offset)).cloned().unwrap_or_else(|| format!("{}+{offset}", self.name(param)))
    }

    /// The fields declared as buffers where the kernel reads no pointer it addresses memory
    /// through (a scalar field, or a pointer it only passes on), by key with the reason: such a
    /// declaration checks nothing, and was most likely meant for another offset.
    pub fn unused_field_buffers(&self, lifted: &model::symbolic::Lifted) -> Vec<(String, String)> {
        let pointers = lifted.pointer_fields();
        self.field_buffers
            .iter()
            .filter(|b| !pointers.contains(&(b.param, b.offset)))
            .map(|b| {
                let read = lifted.exprs.find_var(model::expr::Sym::Param { index: b.param, offset: b.offset });
                let what = match read {
                    Some((_, bits)) => format!("it reads {bits} bits there, not a pointer it addresses memory through"),
                    None => "it does not read those bytes".to_string(),
                };
                let pointers: Vec<String> = pointers.iter().filter(|(p, _)| *p == b.param).map(|&(p, o)| format!("`{}`", self.field_name(p, o))).collect();
                let instead = if pointers.is_empty() { String::new() } else { format!(" (the kernel's pointers in this struct: {})", pointers.join(", ")) };
                (self.field_name(b.param, b.offset), format!("declared as a buffer, but {what}{instead}"))
            })
            .collect()
    }

    /// The field of parameter `param` at byte `offset`, when the interface declares it.
    pub fn declared_field(&self, param: u32, offset: u32) -> Option<&DeclaredField> {
        self.fields.iter().find(|f| (f.param, f.offset) == (param, offset))
    }

    /// The declared fields with a value, as the raw bits of the width the kernel reads each at
    /// (a field the kernel never reads has no width and needs no value; a float value is stored
    /// as the float of that width), and the fields whose value has no such bits (a float read at
    /// 16 bits), by key with the reason: those must not be passed as zeros (see
    /// [`Binding::unresolved_fields`]).
    pub fn declared_field_values(&self, x: &model::expr::Exprs) -> (Vec<crate::witness::ParamField>, Vec<(String, String)>) {
        let mut out = Vec::new();
        let mut unencodable = Vec::new();
        for f in &self.fields {
            let Some(value) = f.value else { continue };
            let Some((_, bits)) = x.find_var(model::expr::Sym::Param { index: f.param, offset: f.offset }) else { continue };
            let raw = match value {
                Scalar::Int(v) => v as u64,
                Scalar::Float(v) if bits == 32 => u64::from((v as f32).to_bits()),
                Scalar::Float(v) if bits == 64 => v.to_bits(),
                Scalar::Float(_) => {
                    let key = self.field_name(f.param, f.offset);
                    unencodable.push((key, format!("the kernel reads it as {bits} bits, and only 32- and 64-bit float values are passed")));
                    continue;
                }
            };
            out.push(crate::witness::ParamField { param: f.param, offset: f.offset, value: raw });
        }
        (out, unencodable)
    }

    /// Documented defaults for a launch the interface leaves open (README "Launches without a
    /// lark.toml"), returned as the facts assumed:
    /// - a dimension whose index the kernel never reads is 1: a kernel that never reads
    ///   `%ctaid.y` is not launched with `gridDim.y = 2`, which would only run every block twice
    ///   (a kernel that reads `%laneid` or `%warpid`, which number the threads of the whole
    ///   block, keeps its block);
    /// - an undeclared block is whole warps (its thread count a multiple of 32): a kernel written
    ///   with full-mask warp shuffles is not launched with a partial warp;
    /// - at most 2²¹ blocks along x, so that with at most 1024 threads per block the usual
    ///   `blockIdx.x * blockDim.x + threadIdx.x` fits the `int` it is computed in (y and z are
    ///   small enough already). A range, not a product: the solver stays linear.
    /// - a block whose shape the kernel never sees (it reads its threads only through the
    ///   linear thread index and the thread count, as cooperative groups' `thread_rank()` and
    ///   `size()` do) is checked as `block.y = block.z = 1`: exact, not an assumption, since
    ///   every shape with the same thread count behaves the same (see [`model::block_shape`]);
    pub fn assume_unread_dimensions(&mut self, spec: Option<&KernelSpec>, k: &Kernel, lifted: &model::symbolic::Lifted) -> Vec<String> {
        use model::ops::{Operand, Special};
        // The special registers some instruction reads (the kernel's own text, not the lifter's
        // view of it: nothing the lifter skips can hide a read).
        let read: std::collections::HashSet<Special> = k
            .insts()
            .flat_map(|(_, _, inst)| inst.op.operands())
            .filter_map(|o| match o {
                Operand::Special(s) => Some(*s),
                _ => None,
            })
            .collect();
        let reads = |s: Special| read.contains(&s);
        let mut assumed = Vec::new();
        const AXES: [&str; 3] = ["x", "y", "z"];
        let grid_open = spec.and_then(|s| s.grid.as_ref()).is_none();
        if grid_open {
            for d in 0..3u8 {
                if !reads(Special::Ctaid(d)) && !reads(Special::Nctaid(d)) && self.grid[d as usize] != DimRange::exact(1) {
                    self.grid[d as usize] = DimRange::exact(1);
                    assumed.push(format!("grid.{}", AXES[d as usize]));
                }
            }
        }
        let block_open = spec.and_then(|s| s.block.as_ref()).is_none();
        let block_from_ptx = self.block.iter().all(|d| d.lo == d.hi);
        if block_open && !reads(Special::LaneId) && !reads(Special::WarpId) {
            for d in 0..3u8 {
                let fixed_by_ptx = self.block[d as usize].lo == self.block[d as usize].hi;
                if !fixed_by_ptx && !reads(Special::Tid(d)) && !reads(Special::Ntid(d)) {
                    self.block[d as usize] = DimRange::exact(1);
                    assumed.push(format!("block.{}", AXES[d as usize]));
                }
            }
        }
        // Dimensions assumed 1 read as `grid.y = 1`, then the index bound.
        let ones: Vec<String> = std::mem::take(&mut assumed);
        if !ones.is_empty() {
            assumed.push(format!("{} = 1 (never read)", ones.join(", ")));
        }
        let shape_read = (1..3u8).any(|d| reads(Special::Tid(d)) || reads(Special::Ntid(d)));
        if block_open
            && !block_from_ptx
            && shape_read
            && !reads(Special::LaneId)
            && !reads(Special::WarpId)
            && model::block_shape::reads_only_linear_thread_index(lifted)
        {
            self.block[1] = DimRange::exact(1);
            self.block[2] = DimRange::exact(1);
            assumed.push(
                "block.y, block.z = 1 (the kernel reads its threads only as the linear index `threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)` and the block's thread count: every block shape with the same thread count behaves the same)".into(),
            );
        }
        // `__launch_bounds__(N)` (`.maxntid`) promises at most N threads per block.
        if let (true, Some(n)) = (block_open && !block_from_ptx, k.max_threads.filter(|n| (1..1024).contains(n))) {
            self.max_threads = n;
            for d in &mut self.block {
                d.hi = d.hi.min(n);
            }
            assumed.push(format!("at most {n} threads per block (`__launch_bounds__`)"));
        }
        if block_open && !block_from_ptx {
            self.whole_warps = true;
            assumed.push("blocks of whole warps (a multiple of 32 threads)".into());
        }
        if grid_open && self.grid[0].hi > MAX_OPEN_GRID_X {
            self.grid[0].hi = MAX_OPEN_GRID_X;
            assumed.push(format!("at most {MAX_OPEN_GRID_X} blocks along x (a global thread index fits an int)"));
        }
        assumed
    }

    /// The contents of buffer parameter `i`, when the interface fixes them.
    pub fn fixed_bytes(&self, i: u32) -> Option<&std::sync::Arc<[u8]>> {
        self.fixed.get(i as usize)?.as_ref()
    }

    /// The display name of parameter `i`: its source name when known, else `param_N` (PTX
    /// names repeat the often mangled kernel name).
    pub fn name(&self, i: u32) -> &str {
        self.names.get(i as usize).and_then(|n| if n.len() == 3 { n.first() } else { n.last() }).map_or("?", String::as_str)
    }

    pub fn param_index(&self, name: &str) -> Option<u32> {
        self.names.iter().position(|n| n.iter().any(|x| x == name)).map(|i| i as u32)
    }

    /// What the interface declares about the buffer a pointer parameter or pointer field
    /// points to.
    pub fn buffer_spec(&self, base: Base) -> Option<&ParamSpec> {
        match base {
            Base::Param(p) => self.params.get(p as usize)?.as_ref(),
            Base::Field { param, offset } => self.field_buffers.iter().find(|b| (b.param, b.offset) == (param, offset)).map(|b| &b.spec),
            Base::Var(_) => None,
        }
    }

    /// The contents of the buffer `base` points to, when the interface fixes them.
    pub fn base_fixed_bytes(&self, base: Base) -> Option<&std::sync::Arc<[u8]>> {
        match base {
            Base::Param(p) => self.fixed_bytes(p),
            Base::Field { param, offset } => self.field_buffers.iter().find(|b| (b.param, b.offset) == (param, offset))?.fixed.as_ref(),
            Base::Var(_) => None,
        }
    }

    /// The display name of the buffer `base` points to: the parameter's name, or the pointer
    /// field's (`r.out`, or `p+OFFSET` where the struct's layout is not known).
    pub fn base_name(&self, base: Base) -> String {
        match base {
            Base::Param(p) => self.name(p).to_string(),
            Base::Field { param, offset } => self.field_name(param, offset),
            Base::Var(_) => "?".into(),
        }
    }

    /// The size of the buffer parameter `i` points to, if the interface gives it.
    pub fn buffer_bytes(&self, i: u32) -> Option<ByteSize> {
        self.base_bytes(Base::Param(i))
    }

    /// The size of the buffer a pointer parameter or pointer field points to, if the
    /// interface gives it.
    pub fn base_bytes(&self, base: Base) -> Option<ByteSize> {
        let Some(ParamSpec::Buffer { dtype, len: Some(len), .. }) = self.buffer_spec(base) else { return None };
        let elem = dtype.map_or(1, |d| d.bytes());
        Some(match len {
            Len::Elements(n) => ByteSize::Fixed(n * elem),
            Len::Param(p) => {
                let param = self.param_index(p)?;
                match self.params.get(param as usize) {
                    Some(Some(ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. })) => ByteSize::Fixed((*v).max(0) as u64 * elem),
                    _ => ByteSize::ParamTimes { param, elem_bytes: elem },
                }
            }
            // A length over several scalars (`rows * cols`) is known once they all have values.
            Len::Expr(_) => {
                let value_of = |n: &str| match self.params.get(self.param_index(n)? as usize) {
                    Some(Some(ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. })) => Some(*v),
                    _ => None,
                };
                ByteSize::Fixed(len.elements(&value_of)?.checked_mul(elem)?)
            }
        })
    }

    /// What the interface assumes about the contents of the buffer `base` points to.
    pub fn assumptions(&self, base: Base) -> &[spec::Assumption] {
        match self.buffer_spec(base) {
            Some(ParamSpec::Buffer { assume, .. }) => assume,
            _ => &[],
        }
    }

    /// Values the interface fixes: launch dimensions given exactly and scalar parameters with a
    /// `value`, as expressions of the width the model uses for each symbol.
    pub fn known_values(&self, k: &Kernel, x: &mut model::expr::Exprs) -> std::collections::HashMap<model::expr::Sym, model::expr::ExprId> {
        use model::expr::Sym;
        use model::ops::Special;
        let mut map = std::collections::HashMap::new();
        for d in 0..3u8 {
            for (sym, range) in [(Special::Ntid(d), self.block[d as usize]), (Special::Nctaid(d), self.grid[d as usize])] {
                if let Some(v) = range.value() {
                    let c = x.konst(v, 32);
                    map.insert(Sym::Special(sym), c);
                }
            }
            // A dimension of size one has only index 0: `thread_rank()` of a one-dimensional
            // block then reads as `tid.x`, not `(tid.z + tid.y) * ntid.x + tid.x`.
            for (index, range) in [(Special::Tid(d), self.block[d as usize]), (Special::Ctaid(d), self.grid[d as usize])] {
                if range.value() == Some(1) {
                    let zero = x.konst(0, 32);
                    map.insert(Sym::Special(index), zero);
                }
            }
        }
        for f in &self.pinned_fields {
            if let Some((_, bits)) = x.find_var(Sym::Param { index: f.param, offset: f.offset }) {
                let c = x.konst(f.value, bits);
                map.insert(Sym::Param { index: f.param, offset: f.offset }, c);
            }
        }
        for (i, p) in self.params.iter().enumerate() {
            let Some(ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. }) = p else { continue };
            let sym = Sym::Param { index: i as u32, offset: 0 };
            if let Some((_, bits)) = x.find_var(sym) {
                if bits > 0 && k.params[i].bits == bits {
                    let c = x.konst(*v as u64, bits);
                    map.insert(sym, c);
                }
            }
        }
        map
    }

    /// Whether the launch geometry is fully concrete.
    pub fn concrete_block(&self) -> Option<[u64; 3]> {
        Some([self.block[0].value()?, self.block[1].value()?, self.block[2].value()?])
    }
}

/// A buffer's fixed contents as memory: each element in two's complement, little-endian, as wide
/// as its dtype. Without a dtype there is no layout to speak of (validation reports that).
fn fixed_bytes(p: &ParamSpec) -> Option<std::sync::Arc<[u8]>> {
    let ParamSpec::Buffer { dtype: Some(d), values: Some(values), .. } = p else { return None };
    let width = d.bytes() as usize;
    Some(values.iter().flat_map(|v| (*v as u128).to_le_bytes().into_iter().take(width)).collect())
}

/// `width` little-endian bytes of `bytes` from `at`, if they are all inside it.
pub fn read_le(bytes: &[u8], at: u64, width: u32) -> Option<u64> {
    let start = usize::try_from(at).ok()?;
    let end = start.checked_add(width.min(8) as usize)?;
    let mut out = [0u8; 8];
    out[..end - start].copy_from_slice(bytes.get(start..end)?);
    Some(u64::from_le_bytes(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_contents_are_laid_out_in_their_dtype() {
        let p = ParamSpec::Buffer { dtype: Some(spec::DType::I16), len: None, assume: vec![], values: Some(vec![1, -2, 0x1234]) };
        let b = fixed_bytes(&p).unwrap();
        assert_eq!(&b[..], &[1, 0, 0xfe, 0xff, 0x34, 0x12]);
        assert_eq!(read_le(&b, 2, 2), Some(0xfffe));
        assert_eq!(read_le(&b, 4, 2), Some(0x1234));
        assert_eq!(read_le(&b, 5, 2), None);
        assert_eq!(read_le(&b, u64::MAX, 2), None);
        let untyped = ParamSpec::Buffer { dtype: None, len: None, assume: vec![], values: Some(vec![1]) };
        assert!(fixed_bytes(&untyped).is_none());
    }
}
