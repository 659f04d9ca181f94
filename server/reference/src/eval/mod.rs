//! A plain evaluator of the scalar graph on concrete inputs.
//!
//! Rational arithmetic is exact (`BigRational`). Irrational values (`exp`, `log`, `sqrt` of a
//! non-square, `tanh`, `erf`, `sin`, `cos`, `pi`, `e`) are computed in `f64` (53-bit significand)
//! and carry an absolute error bound that is propagated through every later operation, so the
//! caller always knows which values are exact and how far an approximate one may be from the
//! ideal real number.
//!
//! The bound assumes that `+ - * /` and `sqrt` are correctly rounded (IEEE 754: at most half an
//! ulp), and that the platform's `exp`/`ln`/`tanh`/`sin`/`cos` and `libm::erf` are within 2 ulp
//! of the true value. That second part is an assumption taken from the libraries' documented
//! maxima (glibc lists 1 ulp for exp/log/sin/cos and 2 for tanh on x86_64; `libm::erf` is
//! FreeBSD's, documented below 1 ulp), not something LARK proves. For one function of an
//! argument that f64 represents exactly (any dyadic rational in range) the bound is then at most
//! `2^-50 * |value|`; other rationals add their conversion error times the function's condition
//! number (at most `2^-48` relative in the tests, which check every bound against 60-digit
//! mpmath values); bounds grow honestly through cancellation. A bound of `inf` means "no useful bound" (an overflow, or a divisor
//! whose interval contains zero).
//!
//! Errors of the *computation* (division by an exact zero, `log` of a non-positive exact value,
//! `sqrt` of a negative one, a comparison that f64 precision cannot decide) are
//! [`Value::Invalid`] values, which propagate like NaN: the caller sees which output is affected
//! and why. Nothing here panics on any input.

mod rational;

use crate::graph::{CmpOp, Graph, Node, NodeId, UnaryFn};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{FromPrimitive, ToPrimitive};
use rational::Q;
use std::fmt;

/// The value of one node.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Exact(BigRational),
    /// `|value - ideal| <= err`.
    Approx {
        value: f64,
        err: f64,
    },
    Invalid(Invalid),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    DivisionByZero,
    LogOfNonPositive,
    SqrtOfNegative,
    /// A comparison (or floor) of approximate values too close to decide at f64 precision.
    Undecided,
    /// A value too large for f64.
    Overflow,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Invalid::DivisionByZero => "division by zero",
            Invalid::LogOfNonPositive => "log of a non-positive number",
            Invalid::SqrtOfNegative => "square root of a negative number",
            Invalid::Undecided => "a comparison too close to decide at f64 precision",
            Invalid::Overflow => "a value too large for f64",
        })
    }
}

impl Value {
    /// The value as an f64 (exact values rounded), `None` when invalid.
    pub fn to_f64(&self) -> Option<f64> {
        match self {
            Value::Exact(r) => r.to_f64(),
            Value::Approx { value, .. } => Some(*value),
            Value::Invalid(_) => None,
        }
    }

    pub fn is_exact(&self) -> bool {
        matches!(self, Value::Exact(_))
    }
}

/// Something wrong with the evaluation request itself (not with the values).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("node {0} is not in the graph")]
    UnknownNode(u32),
    #[error("no value for element {index} of tensor argument {arg}")]
    MissingInput { arg: u32, index: u64 },
}

/// Relative size of one correctly rounded operation: half an ulp is at most `2^-53 * |v|`.
const ROUND: f64 = f64::EPSILON / 2.0;
/// Assumed accuracy of the libm functions, in ulps (an ulp is at most `2^-52 * |v|`).
const LIBM_ULPS: f64 = 2.0;
/// Absolute floor for rounding errors near zero (subnormals).
const TINY: f64 = f64::MIN_POSITIVE;

fn rounding(v: f64) -> f64 {
    v.abs() * ROUND + TINY
}

/// A node's value during evaluation: like [`Value`], with the fast rationals.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Exact(Q),
    Approx { value: f64, err: f64 },
    Invalid(Invalid),
}

impl V {
    fn public(self) -> Value {
        match self {
            V::Exact(q) => Value::Exact(q.to_big()),
            V::Approx { value, err } => Value::Approx { value, err },
            V::Invalid(i) => Value::Invalid(i),
        }
    }
}

fn approx(value: f64, err: f64) -> V {
    if !value.is_finite() {
        return V::Invalid(Invalid::Overflow);
    }
    V::Approx { value, err: if err.is_nan() { f64::INFINITY } else { err } }
}

fn zero() -> V {
    V::Exact(Q::int(0))
}

fn one() -> V {
    V::Exact(Q::int(1))
}

/// An f64 view of a value with its error bound.
fn as_interval(v: &V) -> Result<(f64, f64), Invalid> {
    match v {
        V::Exact(q) => {
            let f = q.to_f64().filter(|f| f.is_finite()).ok_or(Invalid::Overflow)?;
            // The conversion rounds (at most three roundings of half an ulp for `n as f64 / d
            // as f64`; num-rational does not promise correct rounding either): allow two ulps,
            // unless the rational is a double.
            Ok((f, if q.is_double() { 0.0 } else { 4.0 * rounding(f) }))
        }
        V::Approx { value, err } => Ok((*value, *err)),
        V::Invalid(i) => Err(*i),
    }
}

/// Evaluates `roots` given the tensor inputs (`inputs[arg][index]`). Only the nodes the roots
/// depend on are evaluated.
pub fn evaluate(graph: &Graph, roots: &[NodeId], inputs: &[Vec<BigRational>]) -> Result<Vec<Value>, EvalError> {
    let n = graph.len();
    let mut needed = vec![false; n];
    let mut stack: Vec<NodeId> = Vec::new();
    for &r in roots {
        if r.index() >= n {
            return Err(EvalError::UnknownNode(r.0));
        }
        stack.push(r);
    }
    while let Some(id) = stack.pop() {
        if needed[id.index()] {
            continue;
        }
        needed[id.index()] = true;
        let node = graph.get(id).ok_or(EvalError::UnknownNode(id.0))?;
        stack.extend(node.children().filter(|c| !needed[c.index()]));
    }
    let mut values: Vec<Option<V>> = vec![None; n];
    for (i, node) in graph.nodes() {
        if !needed[i.index()] {
            continue;
        }
        let get = |c: NodeId| values[c.index()].as_ref().expect("children precede parents");
        let v = match node {
            Node::Input { arg, index } => {
                let value = inputs.get(*arg as usize).and_then(|t| t.get(*index as usize)).ok_or(EvalError::MissingInput { arg: *arg, index: *index })?;
                V::Exact(Q::from_big(value))
            }
            Node::Const(c) => V::Exact(Q::from_big(c)),
            Node::Pi => approx(std::f64::consts::PI, rounding(std::f64::consts::PI)),
            Node::E => approx(std::f64::consts::E, rounding(std::f64::consts::E)),
            Node::Add(a, b) => add(get(*a), get(*b), false),
            Node::Sub(a, b) => add(get(*a), get(*b), true),
            Node::Mul(a, b) => mul(get(*a), get(*b)),
            Node::Div(a, b) => div(get(*a), get(*b)),
            Node::Neg(a) => neg(get(*a)),
            Node::Pow(a, k) => pow(get(*a), *k),
            Node::Unary(f, a) => unary(*f, get(*a)),
            Node::Max(a, b) => extremum(get(*a), get(*b), true),
            Node::Min(a, b) => extremum(get(*a), get(*b), false),
            Node::Cmp(op, a, b) => {
                if a == b {
                    // x op x is decided exactly whatever x is (unless x is invalid).
                    match get(*a) {
                        V::Invalid(e) => V::Invalid(*e),
                        _ => bool_value(op.holds(&0, &0)),
                    }
                } else {
                    compare(*op, get(*a), get(*b))
                }
            }
            Node::Select(c, a, b) => match get(*c) {
                V::Exact(c) => {
                    if c.is_zero() {
                        get(*b).clone()
                    } else {
                        get(*a).clone()
                    }
                }
                V::Approx { value, err } if value.abs() > *err => get(*a).clone(),
                V::Approx { .. } => V::Invalid(Invalid::Undecided),
                V::Invalid(e) => V::Invalid(*e),
            },
            Node::FloorDiv(a, b) => floor_div(get(*a), get(*b)),
            Node::Mod(a, b) => modulo(get(*a), get(*b)),
        };
        values[i.index()] = Some(v);
    }
    Ok(roots.iter().map(|r| values[r.index()].clone().expect("roots were evaluated").public()).collect())
}

fn bool_value(b: bool) -> V {
    if b {
        one()
    } else {
        zero()
    }
}

fn add(a: &V, b: &V, subtract: bool) -> V {
    if let (V::Exact(x), V::Exact(y)) = (a, b) {
        return V::Exact(if subtract { x.sub(y) } else { x.add(y) });
    }
    match (as_interval(a), as_interval(b)) {
        (Ok((x, ex)), Ok((y, ey))) => {
            let v = if subtract { x - y } else { x + y };
            approx(v, ex + ey + rounding(v))
        }
        (Err(e), _) | (_, Err(e)) => V::Invalid(e),
    }
}

fn neg(a: &V) -> V {
    match a {
        V::Exact(x) => V::Exact(x.neg()),
        V::Approx { value, err } => V::Approx { value: -value, err: *err },
        V::Invalid(e) => V::Invalid(*e),
    }
}

fn mul(a: &V, b: &V) -> V {
    if let (V::Exact(x), V::Exact(y)) = (a, b) {
        return V::Exact(x.mul(y));
    }
    // An exact zero annihilates whatever the other factor's error.
    let exact_zero = |v: &V| matches!(v, V::Exact(x) if x.is_zero());
    if (exact_zero(a) && !matches!(b, V::Invalid(_))) || (exact_zero(b) && !matches!(a, V::Invalid(_))) {
        return zero();
    }
    match (as_interval(a), as_interval(b)) {
        (Ok((x, ex)), Ok((y, ey))) => {
            let v = x * y;
            approx(v, x.abs() * ey + y.abs() * ex + ex * ey + rounding(v))
        }
        (Err(e), _) | (_, Err(e)) => V::Invalid(e),
    }
}

fn div(a: &V, b: &V) -> V {
    match (a, b) {
        (_, V::Exact(y)) if y.is_zero() => V::Invalid(Invalid::DivisionByZero),
        (V::Exact(x), V::Exact(y)) => V::Exact(x.div(y)),
        _ => match (as_interval(a), as_interval(b)) {
            (Ok((x, ex)), Ok((y, ey))) => {
                let v = x / y;
                if y.abs() <= ey {
                    return approx(v, f64::INFINITY);
                }
                approx(v, (x.abs() * ey + y.abs() * ex) / (y.abs() * (y.abs() - ey)) + rounding(v))
            }
            (Err(e), _) | (_, Err(e)) => V::Invalid(e),
        },
    }
}

fn pow(a: &V, k: i32) -> V {
    // Graphs built by the lowering never exceed 64; refuse absurd exponents from other builders.
    if k.unsigned_abs() > 4096 {
        return V::Invalid(Invalid::Overflow);
    }
    if let V::Exact(x) = a {
        if x.is_zero() && k < 0 {
            return V::Invalid(Invalid::DivisionByZero);
        }
    }
    // Repeated multiplication is exact on rationals and carries the bound on approximations.
    let mut result = one();
    for _ in 0..k.unsigned_abs() {
        result = mul(&result, a);
    }
    if k < 0 {
        div(&one(), &result)
    } else {
        result
    }
}

/// The exact square root of a non-negative rational when it is rational.
fn exact_sqrt(x: &Q) -> Option<Q> {
    let r = x.to_big();
    let (n, d) = (r.numer(), r.denom());
    let (rn, rd) = (n.sqrt(), d.sqrt());
    (&rn * &rn == *n && &rd * &rd == *d).then(|| Q::from_big(&BigRational::new(rn, rd)))
}

fn unary(f: UnaryFn, a: &V) -> V {
    if let V::Invalid(e) = a {
        return V::Invalid(*e);
    }
    // Exact cases: abs always; the functions at points where the value is rational.
    if let V::Exact(x) = a {
        match f {
            UnaryFn::Abs => return V::Exact(x.abs()),
            UnaryFn::Log if !x.is_positive() => return V::Invalid(Invalid::LogOfNonPositive),
            UnaryFn::Sqrt | UnaryFn::Rsqrt if x.is_negative() => return V::Invalid(Invalid::SqrtOfNegative),
            UnaryFn::Rsqrt if x.is_zero() => return V::Invalid(Invalid::DivisionByZero),
            UnaryFn::Sqrt => {
                if let Some(r) = exact_sqrt(x) {
                    return V::Exact(r);
                }
            }
            UnaryFn::Rsqrt => {
                if let Some(r) = exact_sqrt(x) {
                    return V::Exact(Q::int(1).div(&r));
                }
            }
            UnaryFn::Exp | UnaryFn::Cos if x.is_zero() => return one(),
            UnaryFn::Tanh | UnaryFn::Erf | UnaryFn::Sin if x.is_zero() => return zero(),
            UnaryFn::Log if x.is_one() => return zero(),
            _ => {}
        }
    }
    let (x, e) = match as_interval(a) {
        Ok(p) => p,
        Err(err) => return V::Invalid(err),
    };
    let libm = |v: f64| v.abs() * LIBM_ULPS * f64::EPSILON + TINY;
    match f {
        UnaryFn::Abs => approx(x.abs(), e),
        UnaryFn::Exp => {
            let v = x.exp();
            // exp is increasing: the ideal lies in [exp(x - e), exp(x + e)].
            let spread = ((x + e).exp() - v).max(v - (x - e).exp());
            approx(v, spread * (1.0 + 4.0 * f64::EPSILON) + libm(v))
        }
        UnaryFn::Log => {
            if x + e <= 0.0 {
                return V::Invalid(Invalid::LogOfNonPositive);
            }
            let v = x.ln();
            if x - e <= 0.0 {
                return approx(v, f64::INFINITY);
            }
            let spread = ((x + e).ln() - v).max(v - (x - e).ln());
            approx(v, spread * (1.0 + 4.0 * f64::EPSILON) + libm(v))
        }
        UnaryFn::Sqrt => {
            if x + e < 0.0 {
                return V::Invalid(Invalid::SqrtOfNegative);
            }
            let v = x.max(0.0).sqrt();
            let spread = ((x + e).sqrt() - v).max(v - (x - e).max(0.0).sqrt());
            approx(v, spread * (1.0 + 4.0 * f64::EPSILON) + rounding(v))
        }
        UnaryFn::Rsqrt => {
            if x + e < 0.0 {
                return V::Invalid(Invalid::SqrtOfNegative);
            }
            if x - e <= 0.0 {
                return approx(1.0 / x.max(f64::MIN_POSITIVE).sqrt(), f64::INFINITY);
            }
            let v = 1.0 / x.sqrt();
            let spread = (1.0 / (x - e).sqrt() - v).max(v - 1.0 / (x + e).sqrt());
            approx(v, spread * (1.0 + 4.0 * f64::EPSILON) + 2.0 * rounding(v))
        }
        // Lipschitz constants: tanh, sin, cos: 1; erf: 2/sqrt(pi) < 1.13.
        UnaryFn::Tanh => {
            let v = x.tanh();
            approx(v, e + libm(v))
        }
        UnaryFn::Erf => {
            let v = libm::erf(x);
            approx(v, 1.13 * e + libm(v))
        }
        UnaryFn::Sin => {
            let v = x.sin();
            approx(v, e + libm(v))
        }
        UnaryFn::Cos => {
            let v = x.cos();
            approx(v, e + libm(v))
        }
    }
}

fn extremum(a: &V, b: &V, is_max: bool) -> V {
    if let (V::Exact(x), V::Exact(y)) = (a, b) {
        return V::Exact(if (x >= y) == is_max { x.clone() } else { y.clone() });
    }
    match (as_interval(a), as_interval(b)) {
        // max and min are 1-Lipschitz in each argument.
        (Ok((x, ex)), Ok((y, ey))) => approx(if is_max { x.max(y) } else { x.min(y) }, ex.max(ey)),
        (Err(e), _) | (_, Err(e)) => V::Invalid(e),
    }
}

fn compare(op: CmpOp, a: &V, b: &V) -> V {
    if let (V::Exact(x), V::Exact(y)) = (a, b) {
        return bool_value(op.holds(x, y));
    }
    match (as_interval(a), as_interval(b)) {
        (Ok((x, ex)), Ok((y, ey))) => {
            let d = x - y;
            let slack = ex + ey + rounding(d);
            if d.abs() <= slack {
                // Too close: equal or not cannot be decided (nor the order).
                return V::Invalid(Invalid::Undecided);
            }
            bool_value(op.holds(&x, &y))
        }
        (Err(e), _) | (_, Err(e)) => V::Invalid(e),
    }
}

fn floor_div(a: &V, b: &V) -> V {
    match (a, b) {
        (_, V::Exact(y)) if y.is_zero() => V::Invalid(Invalid::DivisionByZero),
        (V::Exact(x), V::Exact(y)) => V::Exact(x.div(y).floor()),
        _ => match div(a, b) {
            V::Approx { value, err } => {
                let (lo, hi) = ((value - err).floor(), (value + err).floor());
                if lo == hi && err.is_finite() {
                    match BigInt::from_f64(lo) {
                        Some(i) => V::Exact(Q::from_big(&BigRational::from_integer(i))),
                        None => V::Invalid(Invalid::Overflow),
                    }
                } else {
                    V::Invalid(Invalid::Undecided)
                }
            }
            other => other,
        },
    }
}

fn modulo(a: &V, b: &V) -> V {
    match (a, b) {
        (_, V::Exact(y)) if y.is_zero() => V::Invalid(Invalid::DivisionByZero),
        // Python's `%`: a - floor(a / b) * b, the sign of the divisor.
        (V::Exact(x), V::Exact(y)) => V::Exact(x.sub(&x.div(y).floor().mul(y))),
        _ => {
            let q = floor_div(a, b);
            add(a, &mul(&q, b), true)
        }
    }
}
