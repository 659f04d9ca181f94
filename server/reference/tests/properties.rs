//! Property tests: random small shapes and values, evaluated exactly and compared with a direct
//! computation written independently of the lowering.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use proptest::prelude::*;
use reference::{parse, run, ConcreteArg, DType, Value};

fn rat(n: i64, d: i64) -> BigRational {
    BigRational::new(BigInt::from(n), BigInt::from(d))
}

fn tensor(shape: &[usize], values: &[i64]) -> ConcreteArg {
    ConcreteArg::Tensor { shape: shape.to_vec(), dtype: DType::F32, values: values.iter().map(|&v| rat(v, 4)).collect() }
}

fn exact(values: &[Value]) -> Vec<BigRational> {
    values
        .iter()
        .map(|v| match v {
            Value::Exact(r) => r.clone(),
            other => panic!("expected an exact value, found {other:?}"),
        })
        .collect()
}

fn run_exact(source: &str, args: &[ConcreteArg]) -> Vec<(Vec<usize>, Vec<BigRational>)> {
    let program = parse(source, None).unwrap();
    let (outputs, _) = run(&program, args).unwrap_or_else(|e| panic!("{}", e.message));
    outputs.into_iter().map(|o| (o.shape, exact(&o.values))).collect()
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    idx
}

/// A shape and a second shape broadcast-compatible with it (dims equal, 1, or missing).
fn broadcast_pair() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    prop::collection::vec((1usize..4, 0u8..3), 1..4).prop_flat_map(|dims| {
        let a: Vec<usize> = dims.iter().map(|&(d, _)| d).collect();
        let b: Vec<usize> = dims.iter().map(|&(d, mode)| if mode == 0 { 1 } else { d }).collect();
        (Just(a), 0..b.len()).prop_map(move |(a, drop)| (a, b[drop..].to_vec()))
    })
}

fn values(n: usize) -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(-12i64..12, n)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn broadcast_arithmetic_matches_direct((a_shape, b_shape) in broadcast_pair(), seed in 0u64..1000) {
        let na: usize = a_shape.iter().product();
        let nb: usize = b_shape.iter().product();
        let av: Vec<i64> = (0..na).map(|i| ((i as u64 * 7 + seed) % 23) as i64 - 11).collect();
        let bv: Vec<i64> = (0..nb).map(|i| ((i as u64 * 5 + seed * 3) % 19) as i64 - 9).collect();
        let out = run_exact("import torch\ndef reference(x, y):\n    return x + y, x * y, x - y, torch.maximum(x, y)\n", &[tensor(&a_shape, &av), tensor(&b_shape, &bv)]);
        let offset = a_shape.len() - b_shape.len();
        for (k, (shape, got)) in out.iter().enumerate() {
            prop_assert_eq!(shape, &a_shape);
            for (i, g) in got.iter().enumerate() {
                let idx = unravel(i, &a_shape);
                let bi: usize = (0..b_shape.len()).map(|d| if b_shape[d] == 1 { 0 } else { idx[d + offset] } * strides(&b_shape)[d]).sum();
                let (x, y) = (rat(av[i], 4), rat(bv[bi], 4));
                let want = match k { 0 => &x + &y, 1 => &x * &y, 2 => &x - &y, _ => if x >= y { x.clone() } else { y.clone() } };
                prop_assert_eq!(g, &want);
            }
        }
    }

    #[test]
    fn reductions_match_direct(shape in prop::collection::vec(1usize..4, 1..4), dim_pick in 0usize..3, keepdim: bool, seed in 0u64..1000) {
        let dim = dim_pick % shape.len();
        let n: usize = shape.iter().product();
        let v: Vec<i64> = (0..n).map(|i| ((i as u64 * 13 + seed) % 7) as i64 - 3).collect();
        let source = format!("def reference(x):\n    return x.sum({dim}, keepdim={kd}), x.amax({dim}, keepdim={kd}), x.argmax({dim}, keepdim={kd}), x.cumsum({dim})\n", kd = if keepdim { "True" } else { "False" });
        let out = run_exact(&source, &[tensor(&shape, &v)]);
        let mut reduced = shape.clone();
        if keepdim { reduced[dim] = 1 } else { reduced.remove(dim); }
        for (k, (s, got)) in out.iter().take(3).enumerate() {
            prop_assert_eq!(s, &reduced);
            for (o, g) in got.iter().enumerate() {
                let mut idx = unravel(o, &reduced);
                if !keepdim { idx.insert(dim, 0) }
                let lane: Vec<BigRational> = (0..shape[dim]).map(|j| { let mut i = idx.clone(); i[dim] = j; rat(v[i.iter().zip(strides(&shape)).map(|(a, b)| a * b).sum::<usize>()], 4) }).collect();
                let best = lane.iter().max().unwrap().clone();
                let want = match k {
                    0 => lane.iter().fold(BigRational::zero(), |a, b| a + b),
                    1 => best.clone(),
                    _ => rat(lane.iter().position(|x| *x == best).unwrap() as i64, 1),
                };
                prop_assert_eq!(g, &want);
            }
        }
        // The last element of each cumulative sum is the sum.
        let (cs_shape, cs) = &out[3];
        prop_assert_eq!(cs_shape, &shape);
        let sums = &out[0].1;
        for (o, s) in sums.iter().enumerate() {
            let mut idx = unravel(o, &reduced);
            if !keepdim { idx.insert(dim, 0) }
            idx[dim] = shape[dim] - 1;
            prop_assert_eq!(&cs[idx.iter().zip(strides(&shape)).map(|(a, b)| a * b).sum::<usize>()], s);
        }
    }

    #[test]
    fn matmul_matches_naive(m in 1usize..4, k in 1usize..5, n in 1usize..4, a in values(16), b in values(16)) {
        let av = &a[..m * k];
        let bv = &b[..k * n];
        let out = run_exact("def reference(a, b):\n    return a @ b\n", &[tensor(&[m, k], av), tensor(&[k, n], bv)]);
        let got = &out[0].1;
        for i in 0..m {
            for j in 0..n {
                let want = (0..k).fold(BigRational::zero(), |acc, t| acc + rat(av[i * k + t], 4) * rat(bv[t * n + j], 4));
                prop_assert_eq!(&got[i * n + j], &want);
            }
        }
    }

    #[test]
    fn slicing_follows_python(n in 1usize..9, start in prop::option::of(-10i64..10), stop in prop::option::of(-10i64..10), step in 1i64..4) {
        let v: Vec<i64> = (0..n as i64).collect();
        let fmt = |o: Option<i64>| o.map_or(String::new(), |x| x.to_string());
        let source = format!("def reference(x):\n    return x[{}:{}:{step}] * 1\n", fmt(start), fmt(stop));
        let program = parse(&source, None).unwrap();
        let (outputs, _) = run(&program, &[tensor(&[n], &v)]).unwrap();
        // Python's rule, written out: clamp negative-adjusted bounds into [0, n].
        let norm = |x: i64| if x < 0 { (x + n as i64).max(0) } else { x.min(n as i64) };
        let (s, e) = (start.map_or(0, norm), stop.map_or(n as i64, norm));
        let want: Vec<BigRational> = (s..e).step_by(step as usize).map(|i| rat(i, 4)).collect();
        prop_assert_eq!(exact(&outputs[0].values), want);
    }

    #[test]
    fn permute_round_trips(shape in prop::collection::vec(1usize..4, 3), perm_pick in 0usize..6) {
        let perms = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let p = perms[perm_pick];
        let mut inv = [0; 3];
        for (i, &d) in p.iter().enumerate() { inv[d] = i; }
        let n: usize = shape.iter().product();
        let v: Vec<i64> = (0..n as i64).collect();
        let source = format!("def reference(x):\n    return x.permute({}, {}, {}).permute({}, {}, {}).contiguous() + 0\n", p[0], p[1], p[2], inv[0], inv[1], inv[2]);
        let out = run_exact(&source, &[tensor(&shape, &v)]);
        prop_assert_eq!(&out[0].0, &shape);
        prop_assert_eq!(&out[0].1, &v.iter().map(|&x| rat(x, 4)).collect::<Vec<_>>());
    }

    #[test]
    fn softmax_rows_sum_to_one_within_the_bound(rows in 1usize..4, cols in 1usize..6, v in values(24)) {
        let program = parse("import torch\ndef reference(x):\n    return torch.softmax(x, dim=-1)\n", None).unwrap();
        let (outputs, _) = run(&program, &[tensor(&[rows, cols], &v[..rows * cols])]).unwrap();
        for r in 0..rows {
            let (mut total, mut err) = (0.0f64, 0.0f64);
            for c in 0..cols {
                match &outputs[0].values[r * cols + c] {
                    Value::Approx { value, err: e } => { prop_assert!(*value > 0.0); total += value; err += e; }
                    Value::Exact(x) => { prop_assert!(x > &BigRational::zero()); total += num_traits::ToPrimitive::to_f64(x).unwrap(); }
                    Value::Invalid(i) => prop_assert!(false, "invalid: {i}"),
                }
            }
            prop_assert!((total - 1.0).abs() <= err + 1e-15, "row {r} sums to {total} ± {err}");
        }
    }
}

#[test]
fn one_is_exactly_one_after_exact_division() {
    let out = run_exact("def reference(x):\n    return x / x\n", &[tensor(&[2], &[3, -5])]);
    assert_eq!(out[0].1, vec![BigRational::one(), BigRational::one()]);
}
