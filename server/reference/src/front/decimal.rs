//! Exact values of Python float literals, read from their source text: `1e-6` is exactly
//! 1/1000000 (the number the author wrote), not the nearest double.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;

/// Exponents beyond this are refused rather than expanded into huge integers.
const MAX_EXPONENT: i64 = 400;

/// The exact value of a Python float literal (`1.5`, `.5`, `1.`, `1e-6`, `1_000.25E+3`).
pub fn parse_float_literal(text: &str) -> Option<BigRational> {
    let text: String = text.chars().filter(|&c| c != '_').collect();
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i64>().ok()?),
        None => (text.as_str(), 0),
    };
    if exponent.abs() > MAX_EXPONENT {
        return None;
    }
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part.chars().chain(frac_part.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{int_part}{frac_part}");
    let numerator: BigInt = if digits.is_empty() { BigInt::zero() } else { digits.parse().ok()? };
    let scale = exponent - frac_part.len() as i64;
    let ten = BigInt::from(10);
    let power = num_traits::pow(ten, scale.unsigned_abs() as usize);
    Some(if scale >= 0 { BigRational::from_integer(numerator * power) } else { BigRational::new(numerator, power) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::One;

    #[test]
    fn literals_are_exact_decimals() {
        let r = |n: i64, d: i64| BigRational::new(n.into(), d.into());
        assert_eq!(parse_float_literal("1e-6"), Some(r(1, 1_000_000)));
        assert_eq!(parse_float_literal("0.044715"), Some(r(44715, 1_000_000)));
        assert_eq!(parse_float_literal(".5"), Some(r(1, 2)));
        assert_eq!(parse_float_literal("2."), Some(r(2, 1)));
        assert_eq!(parse_float_literal("1_000.25E+3"), Some(r(1_000_250, 1)));
        assert_eq!(parse_float_literal("1e-5"), Some(r(1, 100_000)));
        assert_eq!(parse_float_literal("1e999"), None);
        assert_eq!(parse_float_literal("."), None);
        assert!(parse_float_literal("0.0").is_some_and(|v| v.is_zero()));
        assert!(parse_float_literal("1.0").is_some_and(|v| v.is_one()));
    }
}
