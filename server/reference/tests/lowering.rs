//! The shape of the lowered graph: left folds in index order, PyTorch's formulas, sharing,
//! input numbering, dtypes and notes.

use expect_test::{expect, Expect};
use reference::{lower, parse, ArgValue, DType, Lowered, Node, Number};

fn f32(shape: &[usize]) -> ArgValue {
    ArgValue::Tensor { shape: shape.to_vec(), dtype: DType::F32 }
}

fn lowered(source: &str, args: &[ArgValue]) -> Lowered {
    let program = parse(source, None).unwrap_or_else(|e| panic!("{e:?}"));
    lower(&program, args).unwrap_or_else(|e| panic!("{}: {}", e.message, &source[e.span.clone()]))
}

/// Renders every output element, one per line, with the output's shape and dtype.
fn check(source: &str, args: &[ArgValue], expect: Expect) {
    let l = lowered(source, args);
    let mut out = String::new();
    for (k, o) in l.outputs.iter().enumerate() {
        out.push_str(&format!("output {k}: {:?} {}\n", o.shape, o.dtype));
        for e in &o.elements {
            out.push_str(&format!("  {}\n", l.graph.render(*e)));
        }
    }
    for n in &l.notes {
        out.push_str(&format!("note {:?}: {}\n", n.span, n.message));
    }
    expect.assert_eq(&out);
}

#[test]
fn sum_is_a_left_fold_in_index_order() {
    check(
        "def reference(x):\n    return x.sum(-1), x.sum(0)\n",
        &[f32(&[2, 3])],
        expect![[r#"
            output 0: [2] f32
              ((a0[0] + a0[1]) + a0[2])
              ((a0[3] + a0[4]) + a0[5])
            output 1: [3] f32
              (a0[0] + a0[3])
              (a0[1] + a0[4])
              (a0[2] + a0[5])
        "#]],
    );
}

#[test]
fn softmax_as_pytorch_defines_it() {
    check(
        "import torch\ndef reference(x):\n    return torch.softmax(x, -1), torch.log_softmax(x, -1)\n",
        &[f32(&[2])],
        expect![[r#"
            output 0: [2] f32
              (exp((a0[0] - max(a0[0], a0[1]))) / (exp((a0[0] - max(a0[0], a0[1]))) + exp((a0[1] - max(a0[0], a0[1])))))
              (exp((a0[1] - max(a0[0], a0[1]))) / (exp((a0[0] - max(a0[0], a0[1]))) + exp((a0[1] - max(a0[0], a0[1])))))
            output 1: [2] f32
              ((a0[0] - max(a0[0], a0[1])) - log((exp((a0[0] - max(a0[0], a0[1]))) + exp((a0[1] - max(a0[0], a0[1]))))))
              ((a0[1] - max(a0[0], a0[1])) - log((exp((a0[0] - max(a0[0], a0[1]))) + exp((a0[1] - max(a0[0], a0[1]))))))
        "#]],
    );
}

#[test]
fn argmax_breaks_ties_at_the_first_index() {
    check(
        "def reference(x):\n    v, i = x.max(dim=0)\n    return x.argmax(), v, i\n",
        &[f32(&[3])],
        expect![[r#"
            output 0: [] i64
              ((a0[2] > max(a0[0], a0[1])) ? 2 : ((a0[1] > a0[0]) ? 1 : 0))
            output 1: [] f32
              max(max(a0[0], a0[1]), a0[2])
            output 2: [] i64
              ((a0[2] > max(a0[0], a0[1])) ? 2 : ((a0[1] > a0[0]) ? 1 : 0))
        "#]],
    );
}

#[test]
fn activations_as_pytorch_defines_them() {
    check(
        "import torch.nn.functional as F\ndef reference(x):\n    return F.silu(x), F.gelu(x), F.gelu(x, approximate='tanh')\n",
        &[f32(&[1])],
        expect![[r#"
            output 0: [1] f32
              (a0[0] * (1 / (1 + exp(-a0[0]))))
            output 1: [1] f32
              ((1/2 * a0[0]) * (1 + erf((a0[0] * rsqrt(2)))))
            output 2: [1] f32
              ((1/2 * a0[0]) * (1 + tanh((sqrt((2 / pi)) * (a0[0] + (8943/200000 * a0[0]^3))))))
        "#]],
    );
}

#[test]
fn norms_and_their_default_eps() {
    check(
        "import torch.nn.functional as F\ndef reference(x, w, b):\n    return F.rms_norm(x, (2,)), F.layer_norm(x, [2], w, b)\n",
        &[f32(&[2]), f32(&[2]), f32(&[2])],
        expect![[r#"
            output 0: [2] f32
              (a0[0] * rsqrt((((a0[0]^2 + a0[1]^2) / 2) + 1/8388608)))
              (a0[1] * rsqrt((((a0[0]^2 + a0[1]^2) / 2) + 1/8388608)))
            output 1: [2] f32
              ((((a0[0] - ((a0[0] + a0[1]) / 2)) * rsqrt(((((a0[0] - ((a0[0] + a0[1]) / 2))^2 + (a0[1] - ((a0[0] + a0[1]) / 2))^2) / 2) + 1/100000))) * a1[0]) + a2[0])
              ((((a0[1] - ((a0[0] + a0[1]) / 2)) * rsqrt(((((a0[0] - ((a0[0] + a0[1]) / 2))^2 + (a0[1] - ((a0[0] + a0[1]) / 2))^2) / 2) + 1/100000))) * a1[1]) + a2[1])
        "#]],
    );
}

#[test]
fn variance_is_unbiased_by_default() {
    check(
        "def reference(x):\n    return x.var(), x.var(unbiased=False)\n",
        &[f32(&[2])],
        expect![[r#"
            output 0: [] f32
              (((a0[0] - ((a0[0] + a0[1]) / 2))^2 + (a0[1] - ((a0[0] + a0[1]) / 2))^2) / 1)
            output 1: [] f32
              (((a0[0] - ((a0[0] + a0[1]) / 2))^2 + (a0[1] - ((a0[0] + a0[1]) / 2))^2) / 2)
        "#]],
    );
}

#[test]
fn integer_semantics_and_promotion() {
    check(
        "def reference(i, x):\n    return i // 2, i % -3, i / 2, i * x, i + 1.5\n",
        &[ArgValue::IntTensor { shape: vec![2], values: vec![-7, 7] }, f32(&[1])],
        expect![[r#"
            output 0: [2] i64
              -4
              3
            output 1: [2] i64
              -1
              -2
            output 2: [2] f32
              -7/2
              7/2
            output 3: [2] f32
              (-7 * a1[0])
              (7 * a1[0])
            output 4: [2] f32
              -11/2
              17/2
        "#]],
    );
}

#[test]
fn scalar_arguments_are_constants_and_inputs_keep_their_position() {
    check(
        "def reference(x, eps, n, y):\n    return x * eps + y * n\n",
        &[f32(&[1]), ArgValue::Scalar(Number::Float(reference::front::parse_float_literal("1e-6").unwrap())), ArgValue::Scalar(Number::Int(3)), f32(&[1])],
        expect![[r#"
            output 0: [1] f32
              ((a0[0] * 1/1000000) + (a3[0] * 3))
        "#]],
    );
}

#[test]
fn casts_are_identity_with_a_note() {
    check(
        "def reference(x):\n    return x.float().half() * 2\n",
        &[f32(&[1])],
        expect![[r#"
            output 0: [1] f16
              (a0[0] * 2)
            note 29..45: casts are identity under exact arithmetic (rounding to the target type is not modelled)
        "#]],
    );
}

#[test]
fn scatter_into_a_clone() {
    check(
        "def reference(cache, v, slots):\n    out = cache.clone()\n    out[slots] = v\n    return out\n",
        &[f32(&[3]), f32(&[1]), ArgValue::IntTensor { shape: vec![1], values: vec![-1] }],
        expect![[r#"
            output 0: [3] f32
              a0[0]
              a0[1]
              a1[0]
        "#]],
    );
}

#[test]
fn rms_norm_rows_share_their_sum() {
    let l = lowered("import torch.nn.functional as F\ndef reference(x, w):\n    return F.rms_norm(x, (64,), w, 1e-6)\n", &[f32(&[4, 64]), f32(&[64])]);
    let rsqrts = l.graph.nodes().filter(|(_, n)| matches!(n, Node::Unary(reference::UnaryFn::Rsqrt, _))).count();
    let adds = l.graph.nodes().filter(|(_, n)| matches!(n, Node::Add(..))).count();
    assert_eq!(rsqrts, 4, "one rsqrt per row");
    assert_eq!(adds, 4 * 63 + 4, "one sum per row (63 additions) plus the eps");
}

#[test]
fn hash_consing_shares_identical_subterms() {
    let l = lowered("def reference(x):\n    return (x * 2 + 1) + (x * 2 + 1)\n", &[f32(&[1])]);
    // a0[0], 2, a0*2, 1, a0*2+1, sum: six nodes.
    assert_eq!(l.graph.len(), 6);
}

/// The graphs of the benchmark references stay as small as their arithmetic: no per-element
/// copies of shared reductions.
#[test]
fn benchmark_graphs_stay_compact() {
    let nodes = |source: &str, args: &[ArgValue]| lowered(source, args).graph.len();
    let eps = ArgValue::Scalar(Number::Float(reference::front::parse_float_literal("1e-6").unwrap()));
    // 20480 inputs, 16384 squares, 4 x 4095 additions, 4 divisions, 4 + eps, 4 rsqrt,
    // 2 x 16384 products, and the constants 2 (the exponent), 4096 and 1e-6.
    let rms = "import torch\ndef reference(x, w, eps):\n    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w\n";
    assert_eq!(nodes(rms, &[f32(&[4, 4096]), f32(&[4096]), eps]), 20480 + 16384 + 4 * 4095 + 4 + 4 + 4 + 2 * 16384 + 3);
    // 8192 inputs, 4 x 2047 max, 8192 differences, 8192 exp, 4 x 2047 additions, 8192 divisions.
    let softmax = "import torch\ndef reference(x):\n    return torch.softmax(x, dim=-1)\n";
    assert_eq!(nodes(softmax, &[f32(&[4, 2048])]), 8192 + 4 * 2047 + 8192 + 8192 + 4 * 2047 + 8192);
    // 8192 inputs, 64^3 products, 64^2 x 63 additions.
    assert_eq!(nodes("def reference(a, b):\n    return a @ b\n", &[f32(&[64, 64]), f32(&[64, 64])]), 8192 + 262_144 + 4096 * 63);
}

#[test]
fn the_activations_of_torch_nn_functional_as_aten_computes_them() {
    check(
        "import torch\nimport torch.nn.functional as F\ndef reference(x):\n    return (F.leaky_relu(x), F.leaky_relu(x, 0.2), F.elu(x, alpha=0.5), torch.selu(x), F.celu(x, 2.0), F.softplus(x),\n            F.softplus(x, beta=2, threshold=10), F.softsign(x), F.mish(x), F.hardtanh(x), F.hardtanh(x, -2.0, 3), F.relu6(x),\n            F.hardsigmoid(x), F.hardswish(x), F.logsigmoid(x), F.tanhshrink(x))\n",
        &[f32(&[1])],
        expect![[r#"
            output 0: [1] f32
              ((a0[0] > 0) ? a0[0] : (a0[0] * 1/100))
            output 1: [1] f32
              ((a0[0] > 0) ? a0[0] : (a0[0] * 1/5))
            output 2: [1] f32
              ((a0[0] > 0) ? a0[0] : ((exp(a0[0]) - 1) * 1/2))
            output 3: [1] f32
              ((a0[0] > 0) ? (a0[0] * 5253504936777402467096674926473/5000000000000000000000000000000) : ((exp(a0[0]) - 1) * 87904967042368842997010876040615967103012290445610415488549141/50000000000000000000000000000000000000000000000000000000000000))
            output 4: [1] f32
              ((a0[0] > 0) ? a0[0] : ((exp((a0[0] * 1/2)) - 1) * 2))
            output 5: [1] f32
              ((a0[0] > 20) ? a0[0] : log((1 + exp(a0[0]))))
            output 6: [1] f32
              (((a0[0] * 2) > 10) ? a0[0] : (log((1 + exp((a0[0] * 2)))) / 2))
            output 7: [1] f32
              (a0[0] / (1 + abs(a0[0])))
            output 8: [1] f32
              (a0[0] * tanh(log((1 + exp(a0[0])))))
            output 9: [1] f32
              min(max(a0[0], -1), 1)
            output 10: [1] f32
              min(max(a0[0], -2), 3)
            output 11: [1] f32
              min(max(a0[0], 0), 6)
            output 12: [1] f32
              (min(max((a0[0] + 3), 0), 6) / 6)
            output 13: [1] f32
              (a0[0] * (min(max((a0[0] + 3), 0), 6) / 6))
            output 14: [1] f32
              -log((1 + exp(-a0[0])))
            output 15: [1] f32
              (a0[0] - tanh(a0[0]))
        "#]],
    );
}

#[test]
fn activation_keywords_and_integer_relu6() {
    check(
        "import torch.nn.functional as F\ndef reference(x, i):\n    return F.hardtanh(x, min_val=-2.0, max_val=3, inplace=False), F.relu6(i)\n",
        &[f32(&[1]), ArgValue::IntTensor { shape: vec![1], values: vec![9] }],
        expect![[r#"
            output 0: [1] f32
              min(max(a0[0], -2), 3)
            output 1: [1] i64
              6
        "#]],
    );
}
