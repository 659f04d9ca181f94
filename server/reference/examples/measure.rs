//! Measures parsing, lowering and evaluation on the benchmark references:
//! `cargo run --release -p reference --example measure`.

use num_rational::BigRational;
use reference::{evaluate, lower, parse, ArgValue, DType, Number};
use std::time::Instant;

const RMSNORM: &str = "import torch\ndef reference(x, w, eps):\n    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w\n";
const SOFTMAX: &str = "import torch\ndef reference(x):\n    return torch.softmax(x, dim=-1)\n";
const MATMUL: &str = "def reference(a, b):\n    return a @ b\n";

fn f32(shape: &[usize]) -> ArgValue {
    ArgValue::Tensor { shape: shape.to_vec(), dtype: DType::F32 }
}

/// Inputs k/8 for k in -24..24, cycling.
fn inputs(args: &[ArgValue]) -> Vec<Vec<BigRational>> {
    args.iter()
        .map(|a| match a {
            ArgValue::Tensor { shape, .. } => (0..shape.iter().product::<usize>()).map(|i| BigRational::new(((i % 48) as i64 - 24).into(), 8.into())).collect(),
            _ => Vec::new(),
        })
        .collect()
}

fn measure(name: &str, source: &str, args: &[ArgValue], runs: usize) {
    let mut best = [f64::MAX; 3];
    let mut nodes = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let program = parse(source, None).unwrap();
        let t1 = Instant::now();
        let lowered = lower(&program, args).unwrap();
        let t2 = Instant::now();
        let roots: Vec<_> = lowered.outputs.iter().flat_map(|o| o.elements.iter().copied()).collect();
        let values = evaluate(&lowered.graph, &roots, &inputs(args)).unwrap();
        let t3 = Instant::now();
        assert_eq!(values.len(), roots.len());
        nodes = lowered.graph.len();
        for (b, d) in best.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2]) {
            *b = b.min(d.as_secs_f64() * 1e3);
        }
    }
    println!(
        "{name:<24} nodes {nodes:>8}   parse {:>6.2} ms   lower {:>7.2} ms   evaluate {:>7.2} ms   total {:>7.2} ms (best of {runs})",
        best[0],
        best[1],
        best[2],
        best.iter().sum::<f64>()
    );
}

fn main() {
    let eps = ArgValue::Scalar(Number::Float(BigRational::new(1.into(), 1_000_000.into())));
    measure("rmsnorm [4, 4096]", RMSNORM, &[f32(&[4, 4096]), f32(&[4096]), eps], 10);
    measure("softmax [4, 2048]", SOFTMAX, &[f32(&[4, 2048])], 10);
    measure("matmul 64x64x64", MATMUL, &[f32(&[64, 64]), f32(&[64, 64])], 3);
}
