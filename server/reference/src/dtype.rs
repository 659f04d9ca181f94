//! Tensor element types and PyTorch's type promotion, as far as exact arithmetic cares.

use num_bigint::BigInt;
use num_rational::BigRational;
use std::fmt;

/// A tensor element type. Under exact arithmetic the width of a float type does not change any
/// value; it matters for integer-vs-float semantics (`/`, `//`, `%`), for promotion, and for
/// `torch.finfo(dtype).eps` (the default `eps` of `F.rms_norm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    Bool,
    U8,
    I8,
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

/// The three promotion categories PyTorch orders: bool < integer < floating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    Bool,
    Int,
    Float,
}

impl DType {
    /// The name LARK's interface files and SentryWard use (`f32`, `i64`, ...), also accepting
    /// PyTorch spellings (`float32`, `int64`, `float`, `long`, ...).
    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "u8" | "uint8" => DType::U8,
            "i8" | "int8" => DType::I8,
            "i16" | "int16" | "short" => DType::I16,
            "i32" | "int32" | "int" => DType::I32,
            "i64" | "int64" | "long" => DType::I64,
            "f16" | "float16" | "half" => DType::F16,
            "bf16" | "bfloat16" => DType::BF16,
            "f32" | "float32" | "float" => DType::F32,
            "f64" | "float64" | "double" => DType::F64,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "u8",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64 => Category::Int,
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => Category::Float,
        }
    }

    pub fn is_float(self) -> bool {
        self.category() == Category::Float
    }

    pub fn is_integral(self) -> bool {
        self.category() != Category::Float
    }

    /// `torch.finfo(dtype).eps` as an exact power of two; `None` for non-float types.
    pub fn finfo_eps(self) -> Option<BigRational> {
        let mantissa_bits: u32 = match self {
            DType::F16 => 10,
            DType::BF16 => 7,
            DType::F32 => 23,
            DType::F64 => 52,
            _ => return None,
        };
        Some(BigRational::new(BigInt::from(1), BigInt::from(1) << mantissa_bits))
    }

    /// `torch.finfo(dtype).max` exactly: `(2 - 2^-m) * 2^emax`; `None` for non-float types.
    pub fn finfo_max(self) -> Option<BigRational> {
        let (mantissa_bits, max_exponent): (u32, u32) = match self {
            DType::F16 => (10, 15),
            DType::BF16 => (7, 127),
            DType::F32 => (23, 127),
            DType::F64 => (52, 1023),
            _ => return None,
        };
        let one = BigInt::from(1);
        // (2^(m+1) - 1) * 2^(emax - m)
        let significand = (&one << (mantissa_bits + 1)) - &one;
        Some(BigRational::from_integer(significand << (max_exponent - mantissa_bits)))
    }

    /// PyTorch's promotion of two tensor dtypes of equal priority (`torch.promote_types`).
    pub fn promote(a: DType, b: DType) -> DType {
        use DType::*;
        if a == b {
            return a;
        }
        match (a.category(), b.category()) {
            (x, y) if x < y => b,
            (x, y) if x > y => a,
            (Category::Float, Category::Float) => match (a, b) {
                (F16, BF16) | (BF16, F16) => F32,
                _ => float_rank_max(a, b),
            },
            _ => int_promote(a, b),
        }
    }
}

fn float_rank_max(a: DType, b: DType) -> DType {
    let rank = |d: DType| match d {
        DType::F16 | DType::BF16 => 0,
        DType::F32 => 1,
        _ => 2,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

fn int_promote(a: DType, b: DType) -> DType {
    use DType::*;
    // u8 with a signed type needs the next wider signed type, as in PyTorch.
    match (a, b) {
        (U8, I8) | (I8, U8) => I16,
        (U8, x) | (x, U8) => x,
        _ => {
            let rank = |d: DType| match d {
                I8 => 0,
                I16 => 1,
                I32 => 2,
                _ => 3,
            };
            if rank(a) >= rank(b) {
                a
            } else {
                b
            }
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The priority of an operand in PyTorch's promotion: a tensor with dimensions outranks a 0-dim
/// tensor, which outranks a Python number; a lower-priority operand changes the result type
/// only when its category is higher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    PythonScalar,
    ZeroDim,
    Dimensioned,
}

/// The result dtype of an elementwise operation over operands `(dtype, priority)`, following
/// PyTorch's `ResultTypeState`: each priority class is promoted on its own, then the classes are
/// combined so that a lower class only matters when its category is higher. A Python float
/// counts as the default dtype `f32`, a Python int as `i64`.
pub fn result_type(operands: &[(DType, Priority)]) -> DType {
    let mut classes: [Option<DType>; 3] = [None; 3];
    for &(dtype, priority) in operands {
        let dtype = match (priority, dtype.category()) {
            (Priority::PythonScalar, Category::Float) => DType::F32,
            (Priority::PythonScalar, Category::Int) => DType::I64,
            _ => dtype,
        };
        let slot = &mut classes[priority as usize];
        *slot = Some(slot.map_or(dtype, |seen| DType::promote(seen, dtype)));
    }
    let [scalar, zero_dim, dimensioned] = classes;
    let combined = combine_categories(dimensioned, combine_categories(zero_dim, scalar));
    combined.unwrap_or(DType::F32)
}

/// PyTorch's `combine_categories(higher, lower)`.
fn combine_categories(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    match (higher, lower) {
        (None, lower) => lower,
        (Some(h), None) => Some(h),
        (Some(h), Some(l)) => {
            if h.is_float() {
                Some(h)
            } else if h == DType::Bool || l.is_float() {
                Some(DType::promote(h, l))
            } else {
                Some(h)
            }
        }
    }
}
