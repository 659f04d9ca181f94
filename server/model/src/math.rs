//! Real functions the interpreter and the equivalence engine evaluate that Rust's standard
//! library does not provide.

/// The error function (Abramowitz–Stegun 7.1.26 is too coarse; this is the series/continued
/// fraction pair, accurate to ~1e-15, enough to tell values apart).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let t = x.abs();
    if t < 2.5 {
        // Maclaurin series.
        let mut sum = t;
        let mut term = t;
        let t2 = t * t;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -t2 / n;
            sum += term / (2.0 * n + 1.0);
            if n > 200.0 {
                break;
            }
        }
        return (2.0 / std::f64::consts::PI.sqrt() * sum).copysign(x);
    }
    // Continued fraction for erfc.
    let mut f = 0.0;
    for k in (1..60).rev() {
        f = (k as f64 / 2.0) / (t + f);
    }
    let erfc = (-t * t).exp() / std::f64::consts::PI.sqrt() / (t + f);
    (1.0 - erfc).copysign(x)
}

#[cfg(test)]
mod tests {
    #[test]
    fn erf_matches_known_values() {
        for (x, want) in
            [(0.0, 0.0), (0.5, 0.520_499_877_813_046_5), (1.0, 0.842_700_792_949_714_9), (3.0, 0.999_977_909_503_001_4), (-1.0, -0.842_700_792_949_714_9)]
        {
            assert!((super::erf(x) - want).abs() < 1e-12, "erf({x}) = {}", super::erf(x));
        }
    }
}
