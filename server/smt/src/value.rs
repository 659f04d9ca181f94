//! Typed values of a model, decoded from the forms Z3 and cvc5 print.
//!
//! The same value comes in several spellings: a bit-vector as `#x0000001f`, `#b101` or
//! `(_ bv31 32)`; a real as `2.0`, `(- 2.0)`, `(/ 1.0 3.0)`, `(/ (- 1) 3)` or `(- (/ 1 3))`; an
//! integer as `5` or `(- 5)`. Decoding knows the sort it expects, so `2` is an integer for an
//! `Int` constant and a rational for a `Real` one.

use crate::sexp::{Sexp, SexpKind};
use crate::sort::Sort;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use std::fmt;

/// The value of a constant (or of a term asked for) in a model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Bool(bool),
    /// An unsigned bit-vector of width `bits` (at most 128).
    BitVec {
        bits: u32,
        value: u128,
    },
    Int(BigInt),
    Real(BigRational),
}

impl Value {
    pub fn sort(&self) -> Sort {
        match self {
            Value::Bool(_) => Sort::Bool,
            Value::BitVec { bits, .. } => Sort::BitVec(*bits),
            Value::Int(_) => Sort::Int,
            Value::Real(_) => Sort::Real,
        }
    }
}

impl fmt::Display for Value {
    /// SMT-LIB literal syntax, so a value can be pasted back into a query: `true`,
    /// `(_ bv31 32)`, `(- 5)`, `(/ 1.0 3.0)`, `(- 2.0)`. Reals are written with decimals, which
    /// are reals in every logic (a numeral is an integer where both sorts exist).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::BitVec { bits, value } => write!(f, "(_ bv{value} {bits})"),
            Value::Int(i) if i.is_negative() => write!(f, "(- {})", i.abs()),
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(r) => {
                let magnitude = r.abs();
                let text =
                    if magnitude.is_integer() { format!("{}.0", magnitude.numer()) } else { format!("(/ {}.0 {}.0)", magnitude.numer(), magnitude.denom()) };
                if r.is_negative() {
                    write!(f, "(- {text})")
                } else {
                    f.write_str(&text)
                }
            }
        }
    }
}

/// Why a value the solver printed is not available as a [`Value`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("expected a value of sort {expected}, found `{text}`")]
    WrongForm { expected: Sort, text: String },
    #[error("`{text}` is a bit-vector of {bits} bits; values wider than 128 bits are not supported")]
    TooWide { bits: u32, text: String },
    #[error("`{text}` is an irrational algebraic number, which has no exact rational value")]
    Irrational { text: String },
    #[error("`{text}` divides by zero")]
    DivisionByZero { text: String },
    #[error("`{text}` is not a value LARK can read")]
    Unrecognised { text: String },
}

/// Decodes `e` as a value of sort `sort`, or of the sort its spelling shows when `sort` is
/// `None` (for terms asked for by a script, whose sort LARK does not track).
pub(crate) fn decode(e: &Sexp, sort: Option<Sort>) -> Result<Value, ValueError> {
    let sort = match sort {
        Some(s) => s,
        None => infer_sort(e).ok_or_else(|| unrecognised(e))?,
    };
    let wrong = || ValueError::WrongForm { expected: sort, text: e.to_string() };
    match sort {
        Sort::Bool => match e.atom() {
            Some("true") => Ok(Value::Bool(true)),
            Some("false") => Ok(Value::Bool(false)),
            _ => Err(wrong()),
        },
        Sort::BitVec(bits) => {
            let (found_bits, value) = bit_vector(e)?.ok_or_else(wrong)?;
            if found_bits == bits {
                Ok(Value::BitVec { bits, value })
            } else {
                Err(wrong())
            }
        }
        Sort::Int => integer(e).map(Value::Int).ok_or_else(wrong),
        Sort::Real => {
            if is_algebraic(e) {
                return Err(ValueError::Irrational { text: e.to_string() });
            }
            rational(e)?.map(Value::Real).ok_or_else(wrong)
        }
    }
}

fn unrecognised(e: &Sexp) -> ValueError {
    if is_algebraic(e) {
        ValueError::Irrational { text: e.to_string() }
    } else {
        ValueError::Unrecognised { text: e.to_string() }
    }
}

/// The sort a value's spelling shows: `true`, `#x..`/`#b..`/`(_ bvN w)`, a numeral (an
/// integer), a decimal or a division (a real), possibly negated.
fn infer_sort(e: &Sexp) -> Option<Sort> {
    if let Some(a) = e.atom() {
        return match a {
            "true" | "false" => Some(Sort::Bool),
            _ if a.starts_with("#x") => Some(Sort::BitVec(4 * (a.len() as u32 - 2))),
            _ if a.starts_with("#b") => Some(Sort::BitVec(a.len() as u32 - 2)),
            _ if is_numeral(a) => Some(Sort::Int),
            _ if is_decimal(a) => Some(Sort::Real),
            _ => None,
        };
    }
    if let Some([_, width]) = indexed(e, "_").filter(|args| args.first().and_then(Sexp::atom).is_some_and(|a| a.starts_with("bv"))) {
        return width.atom()?.parse().ok().map(Sort::BitVec);
    }
    if let Some([inner]) = e.application("-") {
        return infer_sort(inner);
    }
    e.application("/").map(|_| Sort::Real)
}

/// `(_ a b)` style indexed identifiers: the indices.
fn indexed<'a>(e: &'a Sexp, head: &str) -> Option<&'a [Sexp]> {
    e.application(head)
}

/// A bit-vector literal: `Ok(None)` when `e` is not one, an error when it is one LARK cannot hold.
fn bit_vector(e: &Sexp) -> Result<Option<(u32, u128)>, ValueError> {
    let (digits, radix, bits_per_digit) = match e.atom() {
        Some(a) if a.starts_with("#x") => (&a[2..], 16, 4),
        Some(a) if a.starts_with("#b") => (&a[2..], 2, 1),
        Some(_) => return Ok(None),
        None => {
            // `(_ bv31 32)`
            let Some([value, width]) = indexed(e, "_") else { return Ok(None) };
            let (Some(value), Some(width)) = (value.atom().and_then(|v| v.strip_prefix("bv")), width.atom()) else { return Ok(None) };
            let (Ok(bits), true) = (width.parse::<u32>(), is_numeral(value)) else { return Ok(None) };
            if bits > 128 {
                return Err(ValueError::TooWide { bits, text: e.to_string() });
            }
            return match value.parse::<u128>() {
                Ok(v) if bits == 128 || v >> bits == 0 => Ok(Some((bits, v))),
                _ => Ok(None),
            };
        }
    };
    let bits = digits.len() as u32 * bits_per_digit;
    if bits > 128 {
        return Err(ValueError::TooWide { bits, text: e.to_string() });
    }
    Ok(u128::from_str_radix(digits, radix).ok().filter(|_| bits > 0).map(|v| (bits, v)))
}

fn is_numeral(a: &str) -> bool {
    !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit())
}

fn is_decimal(a: &str) -> bool {
    a.split_once('.').is_some_and(|(i, f)| is_numeral(i) && is_numeral(f))
}

/// `5` or `(- 5)`.
fn integer(e: &Sexp) -> Option<BigInt> {
    if let Some([inner]) = e.application("-") {
        return integer_atom(inner).map(|i| -i);
    }
    integer_atom(e)
}

fn integer_atom(e: &Sexp) -> Option<BigInt> {
    e.atom().filter(|a| is_numeral(a)).and_then(|a| a.parse().ok())
}

/// A rational written with numerals, decimals, `-` and `/`, nested as the solvers nest them.
fn rational(e: &Sexp) -> Result<Option<BigRational>, ValueError> {
    if let Some(a) = e.atom() {
        return Ok(rational_atom(a));
    }
    if let Some([inner]) = e.application("-") {
        return Ok(rational(inner)?.map(|r| -r));
    }
    if let Some([n, d]) = e.application("/") {
        let (Some(n), Some(d)) = (rational(n)?, rational(d)?) else { return Ok(None) };
        if d.is_zero() {
            return Err(ValueError::DivisionByZero { text: e.to_string() });
        }
        return Ok(Some(n / d));
    }
    Ok(None)
}

fn rational_atom(a: &str) -> Option<BigRational> {
    if is_numeral(a) {
        return a.parse::<BigInt>().ok().map(BigRational::from_integer);
    }
    let (int, frac) = a.split_once('.').filter(|_| is_decimal(a))?;
    let numer: BigInt = format!("{int}{frac}").parse().ok()?;
    let denom = num_traits::pow(BigInt::from(10), frac.len());
    Some(BigRational::new(numer, denom))
}

/// Z3's `(root-obj p k)` and cvc5's `(_ real_algebraic_number ...)`: irrational roots.
fn is_algebraic(e: &Sexp) -> bool {
    let Some(items) = e.list() else { return false };
    match items.first().map(|h| &h.kind) {
        Some(SexpKind::Atom(h)) if h == "root-obj" => true,
        Some(SexpKind::Atom(h)) if h == "_" => items.get(1).and_then(Sexp::atom) == Some("real_algebraic_number"),
        Some(SexpKind::List(_)) => items[0].application("_").and_then(|a| a.first()).and_then(Sexp::atom) == Some("real_algebraic_number"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sexp::parse_all;

    fn read(text: &str, sort: Option<Sort>) -> Result<Value, ValueError> {
        decode(&parse_all(text).unwrap()[0], sort)
    }

    fn real(n: i64, d: i64) -> Value {
        Value::Real(BigRational::new(n.into(), d.into()))
    }

    #[test]
    fn bit_vectors_in_every_spelling() {
        let bv = |bits, value| Ok(Value::BitVec { bits, value });
        assert_eq!(read("#x0000001f", Some(Sort::BitVec(32))), bv(32, 31));
        assert_eq!(read("#b101", Some(Sort::BitVec(3))), bv(3, 5));
        assert_eq!(read("(_ bv31 32)", Some(Sort::BitVec(32))), bv(32, 31));
        assert_eq!(read("#xffffffffffffffffffffffffffffffff", None), bv(128, u128::MAX));
        assert_eq!(read("(_ bv5 8)", None), bv(8, 5));
        assert_eq!(
            read("#x0000001f", Some(Sort::BitVec(8))),
            Err(ValueError::WrongForm { expected: Sort::BitVec(8), text: "#x0000001f".into() }),
            "a width that differs from the declared one is an error, not a silent truncation"
        );
        assert_eq!(read("(_ bv256 8)", Some(Sort::BitVec(8))).unwrap_err().to_string(), "expected a value of sort (_ BitVec 8), found `(_ bv256 8)`");
        assert_eq!(
            read("(_ bv1 129)", Some(Sort::BitVec(129))).unwrap_err().to_string(),
            "`(_ bv1 129)` is a bit-vector of 129 bits; values wider than 128 bits are not supported"
        );
    }

    #[test]
    fn booleans_and_integers() {
        assert_eq!(read("true", Some(Sort::Bool)), Ok(Value::Bool(true)));
        assert_eq!(read("false", None), Ok(Value::Bool(false)));
        assert_eq!(read("(- 5)", Some(Sort::Int)), Ok(Value::Int((-5).into())));
        assert_eq!(read("123456789012345678901234567890", None), Ok(Value::Int("123456789012345678901234567890".parse().unwrap())));
        assert_eq!(read("1.5", Some(Sort::Int)).unwrap_err().to_string(), "expected a value of sort Int, found `1.5`");
        assert_eq!(read("#x01", Some(Sort::Bool)).unwrap_err().to_string(), "expected a value of sort Bool, found `#x01`");
    }

    #[test]
    fn reals_as_z3_and_cvc5_print_them() {
        let r = Some(Sort::Real);
        assert_eq!(read("(/ 1.0 3.0)", r), Ok(real(1, 3)), "z3");
        assert_eq!(read("(/ 1 3)", r), Ok(real(1, 3)), "cvc5");
        assert_eq!(read("(- 2.0)", r), Ok(real(-2, 1)));
        assert_eq!(read("(/ (- 1) 3)", r), Ok(real(-1, 3)), "cvc5 negative fraction");
        assert_eq!(read("(- (/ 1.0 3.0))", r), Ok(real(-1, 3)), "z3 negative fraction");
        assert_eq!(read("6.0", r), Ok(real(6, 1)));
        assert_eq!(read("2", r), Ok(real(2, 1)), "a numeral is a real when the sort says so");
        assert_eq!(read("0.125", r), Ok(real(1, 8)));
        assert_eq!(read("(/ 1.0 3.0)", None), Ok(real(1, 3)));
        assert_eq!(read("(/ 1 0)", r).unwrap_err().to_string(), "`(/ 1 0)` divides by zero");
        assert_eq!(
            read("(root-obj (+ (^ x 2) (- 2)) 1)", r).unwrap_err().to_string(),
            "`(root-obj (+ (^ x 2) (- 2)) 1)` is an irrational algebraic number, which has no exact rational value"
        );
        assert!(matches!(read("((_ real_algebraic_number 1) (+ (* x x) (- 2)))", None), Err(ValueError::Irrational { .. })));
        assert_eq!(read("(f 1)", None).unwrap_err().to_string(), "`(f 1)` is not a value LARK can read");
    }

    #[test]
    fn values_print_as_smtlib_literals_that_read_back() {
        let values = [
            Value::Bool(true),
            Value::BitVec { bits: 32, value: 31 },
            Value::Int((-5).into()),
            Value::Int(7.into()),
            real(1, 3),
            real(-1, 3),
            real(-2, 1),
            real(4, 1),
        ];
        let printed: Vec<String> = values.iter().map(Value::to_string).collect();
        assert_eq!(printed, ["true", "(_ bv31 32)", "(- 5)", "7", "(/ 1.0 3.0)", "(- (/ 1.0 3.0))", "(- 2.0)", "4.0"]);
        for v in values {
            assert_eq!(read(&v.to_string(), Some(v.sort())), Ok(v));
        }
    }
}
