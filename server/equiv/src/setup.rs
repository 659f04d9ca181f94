//! One shape of a check: the interface resolved for concrete scalar values, the kernel's
//! launch and buffers, the reference's arguments, and input values to run both on.

use crate::shadow::Role;
use check::Binding;
use model::interp::{Arg, BufferId, FloatFormat, FloatVal, Launch, Memory, Rounding};
use model::Kernel;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use reference::{ArgValue, Number};
use spec::{ArgBinding, DType, KernelSpec, ParamSpec, ReferenceSpec, Scalar};
use std::collections::{BTreeMap, HashMap};

/// Elements a checked shape may have in all its buffers together.
pub const MAX_ELEMENTS: u64 = 1 << 23;

/// Instructions one run of a checked shape may execute (all threads together): beyond this, the
/// shape is reported as too large to check within the budget.
pub const MAX_STEPS: u64 = 40_000_000;

/// A kernel buffer in a checked shape.
#[derive(Clone, Debug)]
pub struct BufferPlan {
    /// The buffer's key in inputs, roles and runs: the parameter's index for a pointer
    /// parameter; for a pointer inside a struct passed by value (`field`), a number past the
    /// kernel's parameters.
    pub param: u32,
    /// The struct parameter and byte offset holding the pointer, for a pointer field.
    pub field: Option<(u32, u32)>,
    pub name: String,
    pub dtype: DType,
    pub len: u64,
    /// Fixed contents (index buffers).
    pub values: Option<Vec<i128>>,
    /// Whether its elements are inputs of the reference (symbolic), outputs only, or concrete.
    pub role: BufferRole,
    /// Its shape as the reference sees it (when bound).
    pub shape: Option<Vec<usize>>,
    /// Its contents were drawn within its declared assumptions (an index buffer).
    pub drawn_index: bool,
    /// The caller zeroes it before the launch (`assume = ["zeroed"]`): an output starts at 0,
    /// which the run holds concretely (no "as it was before the kernel ran" terms).
    pub zeroed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferRole {
    /// Bound to a reference tensor argument.
    Input { arg: u32 },
    /// Written by the kernel and compared with a reference output, not read as an input.
    Output,
    /// Neither: workspace, or an index buffer with known contents.
    Concrete,
}

/// A reference output and where the kernel must put it.
#[derive(Clone, Debug)]
pub struct OutputPlan {
    pub param: u32,
    pub buffer: String,
    pub shape: Vec<usize>,
    pub offset: u64,
    pub strides: Vec<u64>,
}

impl OutputPlan {
    /// The kernel element of a row-major index of the reference output.
    pub fn element(&self, flat: usize) -> u64 {
        let mut rest = flat;
        let mut at = self.offset;
        for d in (0..self.shape.len()).rev() {
            let n = self.shape[d].max(1);
            at += (rest % n) as u64 * self.strides[d];
            rest /= n;
        }
        at
    }
}

/// Everything needed to run one shape.
pub struct Plan {
    pub scalars: BTreeMap<String, i128>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u64,
    pub buffers: Vec<BufferPlan>,
    /// Raw bits of the scalar parameters, by parameter index.
    pub scalar_bits: HashMap<u32, u64>,
    pub ref_args: Vec<ArgValue>,
    pub outputs: Vec<OutputPlan>,
    pub binding: Binding,
    /// The bytes of each struct passed by value whose fields the interface declares (see
    /// [`check::struct_bytes`]); other structs are passed as zeros.
    pub structs: HashMap<u32, Vec<u8>>,
}

/// Why a shape cannot be set up (reported as uncertified, with the reason).
pub type SetupError = String;

/// The shapes to check: those the reference binding lists, else the fixed scalar values.
pub fn shapes(spec: &KernelSpec, reference: &ReferenceSpec) -> Result<Vec<BTreeMap<String, i128>>, SetupError> {
    if !reference.shapes.is_empty() {
        return Ok(reference.shapes.clone());
    }
    let needed = spec.required_scalars();
    // Scalars with a value (integer or float) are fixed.
    let fixed: std::collections::BTreeSet<&String> =
        spec.params.iter().filter(|(_, p)| matches!(p, ParamSpec::Scalar { value: Some(_), .. })).map(|(n, _)| n).collect();
    let missing: Vec<String> = needed.iter().filter(|n| !fixed.contains(n)).cloned().collect();
    if missing.is_empty() {
        return Ok(vec![BTreeMap::new()]);
    }
    // Edge cases within each free scalar's range: the smallest value, a value that is not a
    // multiple of a warp (where tail bugs show), kept small, and the largest (which the caller
    // checks only when it fits the budget, see [`LARGEST_SHAPE_SIZE`]).
    // The odd values differ from scalar to scalar: with `rows = cols` a kernel that divides by
    // the one instead of the other, or strides by it, computes the right thing.
    let mut small = BTreeMap::new();
    let mut odd = BTreeMap::new();
    let mut large = BTreeMap::new();
    for (i, n) in missing.iter().enumerate() {
        let (lo, hi) = free_range(spec, n)?;
        small.insert(n.clone(), lo.max(1).min(hi));
        let mid = (lo.max(1) + 33 + 4 * i as i128).min(hi);
        odd.insert(n.clone(), mid);
        large.insert(n.clone(), hi);
    }
    let mut out = vec![small];
    for s in [odd, large] {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

/// The declared range of a free scalar the check needs.
fn free_range(spec: &KernelSpec, n: &str) -> Result<(i128, i128), SetupError> {
    spec.scalar_range(n).ok_or_else(|| {
        format!("the equivalence check needs concrete shapes: give `{n}` a value or a range, or list shapes in [[kernel.<name>.reference.shapes]]")
    })
}

/// Shapes derived from ranges beyond [`shapes`]: each free scalar at the largest value its range
/// allows, the others at their smallest. A kernel that only handles a row as long as its
/// block (`x[t]` with no loop over the row) is right at every shape where all sizes are small
/// and wrong at the longest row, a shape the one with every size at its largest only reaches
/// when it fits [`LARGEST_SHAPE_SIZE`]. They are probes: the caller checks them within a share of
/// the time left and says which it could not check (see `equiv::check`). None when the
/// interface lists its shapes.
pub fn probe_shapes(spec: &KernelSpec, reference: &ReferenceSpec) -> Vec<BTreeMap<String, i128>> {
    let Ok(main) = shapes(spec, reference) else { return vec![] };
    if !reference.shapes.is_empty() {
        return vec![];
    }
    let Some(smallest) = main.first() else { return vec![] };
    let mut out: Vec<BTreeMap<String, i128>> = Vec::new();
    for n in smallest.keys() {
        let Ok((_, hi)) = free_range(spec, n) else { continue };
        let mut probe = smallest.clone();
        probe.insert(n.clone(), hi);
        if !main.contains(&probe) && !out.contains(&probe) {
            out.push(probe);
        }
    }
    out
}

/// A shape derived from declared ranges (not listed by the user) is checked only up to this
/// size (threads launched plus buffer elements): the largest declared size is where overflow
/// and tiling bugs show, but checking a million elements exactly would take the whole budget.
pub const LARGEST_SHAPE_SIZE: u64 = 1 << 16;

pub fn plan(
    k: &Kernel,
    spec: &KernelSpec,
    source_names: Option<&[String]>,
    field_names: &check::FieldNames,
    scalars: &BTreeMap<String, i128>,
) -> Result<Plan, SetupError> {
    let reference = spec.reference.as_ref().ok_or("no reference is bound to this kernel")?;
    let resolved = spec.resolve(scalars).map_err(|e| e.to_string())?;
    let mut binding = Binding::new(k, Some(&resolved), source_names);
    binding.field_names = field_names.clone();
    let concrete = |r: [spec::DimRange; 3], what: &str| -> Result<[u32; 3], SetupError> {
        let mut out = [1u32; 3];
        for d in 0..3 {
            out[d] = r[d].value().ok_or_else(|| format!("the {what} is not fixed for this shape (declare it, or an expression of the scalars)"))? as u32;
        }
        Ok(out)
    };
    let grid = concrete(binding.grid, "grid")?;
    let block = concrete(binding.block, "block")?;
    let all_scalars: BTreeMap<String, i128> = resolved.scalar_values();
    let value_of = |n: &str| all_scalars.get(n).copied().or_else(|| binding.param_index(n).and_then(|i| scalar_int(&binding, i)));
    let eval = |e: &spec::SizeExpr| -> Result<i128, SetupError> { e.eval(&value_of).map_err(|err| format!("`{e}`: {err}")) };
    let param_of = |name: &str| -> Result<u32, SetupError> { binding.param_index(name).ok_or_else(|| format!("`{name}` is not a parameter of the kernel")) };

    // Buffers: every pointer parameter the interface sizes.
    let mut buffers: Vec<BufferPlan> = Vec::new();
    let mut scalar_bits = HashMap::new();
    for (i, p) in k.params.iter().enumerate() {
        let i = i as u32;
        match binding.params.get(i as usize).and_then(|s| s.as_ref()) {
            Some(buffer @ ParamSpec::Buffer { .. }) => buffers.push(buffer_plan(i, None, binding.name(i).to_string(), buffer, &value_of)?),
            Some(ParamSpec::Scalar { value, .. }) => {
                let bits = p.bits;
                let v = match value {
                    Some(Scalar::Int(v)) => Some(*v as u64),
                    Some(Scalar::Float(f)) => Some(if bits == 32 { (*f as f32).to_bits() as u64 } else { f.to_bits() }),
                    None => None,
                };
                if let Some(v) = v {
                    scalar_bits.insert(i, v & model::mask(bits));
                }
            }
            None => {}
        }
    }
    // Pointers inside structs passed by value: each the buffer lark.toml declares for it.
    let lifted = k.params.iter().any(|p| p.is_aggregate()).then(|| model::symbolic::lift(k));
    for (j, &(param, offset)) in lifted.iter().flat_map(|l| l.pointer_fields()).collect::<Vec<_>>().iter().enumerate() {
        let name = binding.field_name(param, offset);
        let Some(buffer) = binding.buffer_spec(model::symbolic::Base::Field { param, offset }) else {
            return Err(format!(
                "the kernel reads memory through the pointer `{name}` inside a struct passed by value: the equivalence run needs its buffer declared (`{name} = {{ dtype = ..., len = ... }}`)"
            ));
        };
        buffers.push(buffer_plan(k.params.len() as u32 + j as u32, Some((param, offset)), name, buffer, &value_of)?);
    }
    // A reference names a buffer as lark.toml does: a pointer parameter, or a pointer field by
    // offset (`r+8`) or by name (`r.out`).
    let field_keys: HashMap<(u32, u32), u32> = buffers.iter().filter_map(|b| Some((b.field?, b.param))).collect();
    let buffer_of = |name: &str| -> Result<u32, SetupError> {
        let field = match spec::field_key(name) {
            Some((p, offset)) => binding.param_index(p).map(|p| (p, offset)),
            None => binding.field_names.iter().find(|(_, n)| n.as_str() == name).map(|(&slot, _)| slot),
        };
        let key = match field {
            Some(slot) => field_keys.get(&slot).copied(),
            None => binding.param_index(name),
        };
        key.ok_or_else(|| format!("`{name}` is not a buffer of the kernel"))
    };
    let total: u64 = buffers.iter().map(|b| b.len).sum();
    if total > MAX_ELEMENTS {
        return Err(format!(
            "this shape has {total} buffer elements; the equivalence check handles up to {MAX_ELEMENTS} — list a smaller shape in [[kernel.<name>.reference.shapes]]"
        ));
    }

    // Reference arguments, in order.
    let mut ref_args = Vec::new();
    for (pos, a) in reference.args.iter().enumerate() {
        let v = match &a.binding {
            ArgBinding::Buffer { buffer, shape, .. } => {
                let param = buffer_of(buffer)?;
                let shape: Vec<usize> = shape.iter().map(|e| eval(e).map(|v| v.max(0) as usize)).collect::<Result<_, _>>()?;
                let n: usize = shape.iter().product();
                let b = buffers.iter_mut().find(|b| b.param == param).ok_or_else(|| format!("`{buffer}` needs dtype and len in the interface"))?;
                if n as u64 > b.len {
                    return Err(format!("the reference sees `{buffer}` as {shape:?} ({n} elements) but the buffer has {} elements", b.len));
                }
                b.shape = Some(shape.clone());
                if b.zeroed {
                    return Err(format!(
                        "`{buffer}` is an input of the reference and cannot also be `zeroed` (an assumption for outputs the kernel accumulates into)"
                    ));
                }
                // An index buffer (declared with assumptions) without fixed contents gets one
                // assignment that satisfies its assumptions.
                if b.values.is_none() && !b.dtype.is_float() {
                    let base = match b.field {
                        Some((param, offset)) => model::symbolic::Base::Field { param, offset },
                        None => model::symbolic::Base::Param(param),
                    };
                    let assume = binding.assumptions(base);
                    if assume.iter().any(|a| *a != spec::Assumption::Zeroed) {
                        b.values = Some(index_values(buffer, b.len, assume)?);
                        b.drawn_index = true;
                    }
                }
                match (&b.values, b.dtype.is_float()) {
                    (Some(values), false) => ArgValue::IntTensor { shape, values: values.iter().take(n).map(|&v| v as i64).collect() },
                    (Some(_), true) => return Err(format!("`{buffer}` has fixed values but a float type")),
                    (None, _) => {
                        b.role = BufferRole::Input { arg: pos as u32 };
                        ArgValue::Tensor { shape, dtype: ref_dtype(b.dtype) }
                    }
                }
            }
            ArgBinding::Param(name) => {
                let i = param_of(name)?;
                let bits = k.params[i as usize].bits;
                let raw = scalar_bits.get(&i).copied().ok_or_else(|| format!("the scalar `{name}` has no value for this shape"))?;
                match binding.params.get(i as usize).and_then(|s| s.as_ref()) {
                    Some(ParamSpec::Scalar { value: Some(Scalar::Float(f)), .. }) => ArgValue::Scalar(Number::Float(exact_decimal(*f))),
                    _ => {
                        let signed = model::sext(raw, bits.max(1));
                        ArgValue::Scalar(Number::Int(signed))
                    }
                }
            }
            ArgBinding::Value(Scalar::Int(v)) => ArgValue::Scalar(Number::Int(*v as i64)),
            ArgBinding::Value(Scalar::Float(f)) => ArgValue::Scalar(Number::Float(exact_decimal(*f))),
        };
        ref_args.push(v);
    }

    // Outputs.
    let mut outputs = Vec::new();
    for o in &reference.outputs {
        let param = buffer_of(&o.buffer)?;
        let shape: Vec<usize> = o.shape.iter().map(|e| eval(e).map(|v| v.max(0) as usize)).collect::<Result<_, _>>()?;
        let offset = eval(&o.offset)?.max(0) as u64;
        let strides: Vec<u64> = match &o.strides {
            Some(s) => s.iter().map(|e| eval(e).map(|v| v.max(0) as u64)).collect::<Result<_, _>>()?,
            None => {
                let mut st = vec![1u64; shape.len()];
                for d in (0..shape.len().saturating_sub(1)).rev() {
                    st[d] = st[d + 1] * shape[d + 1] as u64;
                }
                st
            }
        };
        let b = buffers.iter_mut().find(|b| b.param == param).ok_or_else(|| format!("the output `{}` needs dtype and len in the interface", o.buffer))?;
        if b.role == BufferRole::Concrete {
            b.role = BufferRole::Output;
        }
        outputs.push(OutputPlan { param, buffer: o.buffer.clone(), shape, offset, strides });
    }
    let _ = scalars;
    let structs = declared_structs(k, lifted.as_ref(), &binding)?;
    Ok(Plan {
        structs,
        scalars: all_scalars,
        grid,
        block,
        dynamic_shared_bytes: binding.dynamic_shared_bytes.unwrap_or(0),
        buffers,
        scalar_bits,
        ref_args,
        outputs,
        binding,
    })
}

/// The plan of a buffer the interface declares (`buffer`, a `ParamSpec::Buffer`), under key
/// `key` (see [`BufferPlan::param`]), before the reference binds it.
fn buffer_plan(
    key: u32,
    field: Option<(u32, u32)>,
    name: String,
    buffer: &ParamSpec,
    value_of: &dyn Fn(&str) -> Option<i128>,
) -> Result<BufferPlan, SetupError> {
    let ParamSpec::Buffer { dtype, len, values, assume } = buffer else { return Err(format!("`{name}` is not declared as a buffer")) };
    let len = match (len, values) {
        (Some(l), _) => l.elements(value_of).ok_or_else(|| format!("the length of `{name}` is not known for this shape"))?,
        (None, Some(v)) => v.len() as u64,
        (None, None) => return Err(format!("the equivalence check needs the length of `{name}` (len = ...)")),
    };
    let dtype = dtype.ok_or_else(|| format!("the equivalence check needs the element type of `{name}` (dtype = ...)"))?;
    Ok(BufferPlan {
        param: key,
        field,
        name,
        dtype,
        len,
        values: values.clone(),
        role: BufferRole::Concrete,
        shape: None,
        drawn_index: false,
        zeroed: assume.contains(&spec::Assumption::Zeroed),
    })
}

/// Contents for an index buffer that satisfy its assumptions: distinct values when it is
/// `injective`, within `in_range(lo, hi)`, spread over the range.
fn index_values(name: &str, len: u64, assume: &[spec::Assumption]) -> Result<Vec<i128>, SetupError> {
    let (lo, hi) = assume
        .iter()
        .find_map(|a| match a {
            spec::Assumption::InRange(lo, hi) => Some((*lo as i128, *hi as i128)),
            _ => None,
        })
        .ok_or_else(|| format!("the index buffer `{name}` needs `values` (or an `in_range(lo, hi)` assumption) for the equivalence check"))?;
    let range = (hi - lo).max(0);
    let injective = assume.contains(&spec::Assumption::Injective);
    if range == 0 || (injective && (len as i128) > range) {
        return Err(format!("no contents of `{name}` satisfy its assumptions ({len} elements in [{lo}, {hi}))"));
    }
    // i ↦ lo + (i·stride + 7) mod range, with stride coprime to the range: distinct values.
    let mut stride = 7919 % range;
    while stride == 0 || num_integer::gcd(stride, range) != 1 {
        stride += 1;
    }
    Ok((0..len as i128).map(|i| lo + (i * stride + 7) % range).collect())
}

fn scalar_int(b: &Binding, i: u32) -> Option<i128> {
    match b.params.get(i as usize)?.as_ref()? {
        ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. } => Some(*v),
        _ => None,
    }
}

/// The decimal a user wrote (`1e-6` is exactly 1/1000000), recovered from its f64.
pub fn exact_decimal(f: f64) -> BigRational {
    let text = format!("{f:e}");
    let (mant, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mant.starts_with('-');
    let mant = mant.trim_start_matches('-');
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits: BigInt = format!("{int}{frac}").parse().unwrap_or_default();
    let scale = exp - frac.len() as i32;
    let ten = BigInt::from(10);
    let mut r = BigRational::from_integer(digits);
    if scale >= 0 {
        r *= BigRational::from_integer(num_traits::pow(ten, scale as usize));
    } else {
        r /= BigRational::from_integer(num_traits::pow(ten, (-scale) as usize));
    }
    if negative {
        -r
    } else {
        r
    }
}

fn ref_dtype(d: DType) -> reference::DType {
    use reference::DType as R;
    match d {
        DType::F16 => R::F16,
        DType::BF16 => R::BF16,
        DType::F32 => R::F32,
        DType::F64 => R::F64,
        DType::I8 => R::I8,
        DType::U8 => R::U8,
        DType::I16 => R::I16,
        DType::U16 => R::I32,
        DType::I32 => R::I32,
        DType::U32 => R::I64,
        DType::I64 | DType::U64 => R::I64,
    }
}

/// How input values are drawn for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Draw {
    /// Small integers in [-3, 3].
    Integers(u64),
    /// Multiples of 1/8 in [-2, 2].
    Eighths(u64),
    /// Multiples of 2^-13 in [-2^-9, 2^-9]: tiny values, where misplaced epsilons show.
    Tiny(u64),
}

impl Draw {
    pub fn describe(self) -> String {
        match self {
            Draw::Integers(s) => format!("small integers in [-3, 3] (seed {s})"),
            Draw::Eighths(s) => format!("multiples of 1/8 in [-2, 2] (seed {s})"),
            Draw::Tiny(s) => format!("multiples of 2^-13 in [-2^-9, 2^-9] (seed {s})"),
        }
    }

    fn seed(self) -> u64 {
        match self {
            Draw::Integers(s) | Draw::Eighths(s) | Draw::Tiny(s) => s,
        }
    }

    /// The value of element `elem` of parameter `param`'s buffer.
    pub fn value(self, param: u32, elem: u64, dtype: DType) -> BigRational {
        let mut x =
            self.seed().wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (param as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ elem.wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        x = x.wrapping_mul(0xd6e8_feb8_6659_fd93);
        x ^= x >> 32;
        let pick = |n: u64| (x % n) as i64;
        let int = |v: i64| BigRational::from_integer(v.into());
        if !dtype.is_float() {
            let (lo, hi) = dtype.int_range().unwrap_or((-3, 3));
            let v = pick(7) - 3;
            return int(v.clamp(lo.max(-3) as i64, hi.min(3) as i64));
        }
        match self {
            Draw::Integers(_) => int(pick(7) - 3),
            Draw::Eighths(_) => BigRational::new((pick(33) - 16).into(), 8.into()),
            Draw::Tiny(_) => BigRational::new((pick(33) - 16).into(), 8192.into()),
        }
    }
}

/// The bytes of a value in a buffer of `dtype`.
pub fn encode(v: &BigRational, dtype: DType) -> Vec<u8> {
    let n = dtype.bytes() as usize;
    let bits: u64 = match dtype {
        DType::F16 => FloatVal::Finite(v.clone()).to_bits(FloatFormat::F16, Rounding::NearestEven),
        DType::BF16 => FloatVal::Finite(v.clone()).to_bits(FloatFormat::BF16, Rounding::NearestEven),
        DType::F32 => FloatVal::Finite(v.clone()).to_bits(FloatFormat::F32, Rounding::NearestEven),
        DType::F64 => FloatVal::Finite(v.clone()).to_bits(FloatFormat::F64, Rounding::NearestEven),
        _ => v.to_integer().to_i64().unwrap_or(0) as u64,
    };
    bits.to_le_bytes()[..n].to_vec()
}

/// A launch of the plan with inputs drawn by `draw`: the memory, the launch, and the buffer id of
/// each buffer parameter.
pub struct Run {
    pub mem: Memory,
    pub launch: Launch,
    pub ids: HashMap<u32, BufferId>,
    /// The values put into each buffer (for the reference and for reports).
    pub contents: HashMap<u32, Vec<BigRational>>,
}

/// The bytes of the structs passed by value with fields the interface declares, each field as
/// wide as the kernel reads it (which only the lifted model knows, so it is lifted only then).
/// A declared value that cannot be passed is a set-up error: the run would pass zeros for it.
/// (`lifted` is the kernel's model, lifted when it has a struct parameter; pointers inside
/// structs are written in by [`prepare`].)
fn declared_structs(k: &Kernel, lifted: Option<&model::symbolic::Lifted>, binding: &Binding) -> Result<HashMap<u32, Vec<u8>>, SetupError> {
    let Some(lifted) = lifted.filter(|_| !binding.fields.is_empty()) else { return Ok(HashMap::new()) };
    let (values, unencodable) = binding.declared_field_values(&lifted.exprs);
    if let Some((key, why)) = unencodable.first() {
        return Err(format!("the declared field `{key}` cannot be passed to the kernel: {why}"));
    }
    let mut out = HashMap::new();
    for (i, p) in k.params.iter().enumerate().filter(|(_, p)| p.is_aggregate()) {
        let i = i as u32;
        let fields: Vec<(u32, u64)> = values.iter().filter(|f| f.param == i).map(|f| (f.offset, f.value)).collect();
        if !fields.is_empty() {
            out.insert(i, check::struct_bytes(&lifted.exprs, i, p.bytes, fields));
        }
    }
    Ok(out)
}

pub fn prepare(k: &Kernel, plan: &Plan, draw: Draw, budget: &model::budget::Budget) -> Run {
    let mut mem = Memory::new();
    let mut ids = HashMap::new();
    let mut contents = HashMap::new();
    let mut args = Vec::new();
    // Buffers are added in the plan's order (pointer parameters in parameter order, then pointer
    // fields), so a buffer's id is its position in the plan (see `crate::shadow_buffer`).
    let mut add = |b: &BufferPlan, mem: &mut Memory| {
        let values: Vec<BigRational> = match &b.values {
            Some(v) => v.iter().map(|&x| BigRational::from_integer(x.into())).collect(),
            None if b.zeroed => vec![BigRational::zero(); b.len as usize],
            None => (0..b.len).map(|e| draw.value(b.param, e, b.dtype)).collect(),
        };
        let mut bytes = Vec::with_capacity(b.len as usize * b.dtype.bytes() as usize);
        for v in &values {
            bytes.extend(encode(v, b.dtype));
        }
        let id = mem.add_buffer(b.name.clone(), bytes);
        ids.insert(b.param, id);
        contents.insert(b.param, values);
        id
    };
    for (i, p) in k.params.iter().enumerate() {
        let i = i as u32;
        if let Some(b) = plan.buffers.iter().find(|b| b.param == i && b.field.is_none()) {
            args.push(Arg::Buffer(add(b, &mut mem)));
        } else if p.is_aggregate() {
            args.push(Arg::Bytes(plan.structs.get(&i).cloned().unwrap_or_else(|| vec![0; p.bytes as usize])));
        } else {
            args.push(Arg::Scalar(plan.scalar_bits.get(&i).copied().unwrap_or(0)));
        }
    }
    for b in plan.buffers.iter().filter(|b| b.field.is_some()) {
        let id = add(b, &mut mem);
        let Some((param, offset)) = b.field else { continue };
        let slot = offset as usize..offset as usize + 8;
        if let Some(bytes) = args.get_mut(param as usize).and_then(|a| if let Arg::Bytes(s) = a { s.get_mut(slot) } else { None }) {
            bytes.copy_from_slice(&Memory::base(id).to_le_bytes());
        }
    }
    let mut launch = Launch::new(plan.grid, plan.block, args).dynamic_shared(plan.dynamic_shared_bytes).budget(budget.clone()).step_limit(MAX_STEPS);
    launch.recording = model::interp::Recording::Off;
    Run { mem, launch, ids, contents }
}

/// The roles of the buffers for the shadow run.
pub fn roles(plan: &Plan, run: &Run) -> HashMap<BufferId, Role> {
    plan.buffers
        .iter()
        .filter_map(|b| {
            let id = *run.ids.get(&b.param)?;
            let elem_bytes = b.dtype.bytes() as u32;
            Some((
                id,
                match b.role {
                    BufferRole::Input { .. } => Role::Symbolic { param: b.param, elem_bytes },
                    // A zeroed output starts at concrete zeros.
                    BufferRole::Output if b.zeroed => Role::Concrete,
                    BufferRole::Output => Role::Initial { param: b.param, elem_bytes },
                    BufferRole::Concrete => Role::Concrete,
                },
            ))
        })
        .collect()
}

/// The reference's inputs for a run: each tensor argument's elements.
pub fn reference_inputs(plan: &Plan, run: &Run) -> Vec<Vec<BigRational>> {
    plan.ref_args
        .iter()
        .enumerate()
        .map(|(pos, a)| match a {
            ArgValue::Tensor { shape, .. } => {
                let n: usize = shape.iter().product();
                plan.buffers
                    .iter()
                    .find(|b| b.role == BufferRole::Input { arg: pos as u32 })
                    .and_then(|b| run.contents.get(&b.param))
                    .map(|v| v.iter().take(n).cloned().collect())
                    .unwrap_or_else(|| vec![BigRational::zero(); n])
            }
            _ => Vec::new(),
        })
        .collect()
}

/// What the kernel left in output element `elem` of buffer `param`, exactly.
pub fn output_value(plan: &Plan, run: &Run, param: u32, elem: u64) -> Option<FloatVal> {
    let b = plan.buffers.iter().find(|b| b.param == param)?;
    let id = *run.ids.get(&param)?;
    let w = b.dtype.bytes();
    let off = elem * w;
    let fmt = match b.dtype {
        DType::F16 => Some(FloatFormat::F16),
        DType::BF16 => Some(FloatFormat::BF16),
        DType::F32 => Some(FloatFormat::F32),
        DType::F64 => Some(FloatFormat::F64),
        _ => None,
    };
    match fmt {
        Some(f) => Some(run.mem.read_float(id, off, f)),
        None => {
            let bytes = run.mem.read_bytes(id, off, w)?;
            let raw = bytes.iter().rev().fold(0u64, |a, &x| (a << 8) | x as u64);
            let v = if matches!(b.dtype, DType::I8 | DType::I16 | DType::I32 | DType::I64) { model::sext(raw, w as u32 * 8) as i128 } else { raw as i128 };
            Some(FloatVal::from_int(v))
        }
    }
}
