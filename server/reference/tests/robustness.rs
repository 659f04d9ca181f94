//! Bad input never panics: every prefix and every one-line deletion of every fixture, and a
//! set of hostile snippets, either lower or give a `RefError`.

use reference::{lower, parse, ArgValue, DType, Number};
use serde::Deserialize;

#[derive(Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    source: String,
    entry: Option<String>,
}

fn args() -> Vec<ArgValue> {
    vec![
        ArgValue::Tensor { shape: vec![2, 3], dtype: DType::F32 },
        ArgValue::Tensor { shape: vec![3], dtype: DType::F32 },
        ArgValue::IntTensor { shape: vec![2], values: vec![1, -1] },
        ArgValue::Scalar(Number::Int(2)),
    ]
}

/// Parses and lowers; only a panic fails (errors are the expected outcome for most inputs).
fn exercise(source: &str, entry: Option<&str>) {
    if let Ok(program) = parse(source, entry) {
        for n in 0..=4 {
            let _ = lower(&program, &args()[..n]);
        }
    }
}

#[test]
fn truncated_and_mutilated_fixtures_do_not_panic() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cases.toml")).unwrap();
    let cases: Cases = toml::from_str(&text).unwrap();
    let mut runs = 0;
    for case in &cases.case {
        let src = &case.source;
        for (i, _) in src.char_indices().step_by(7) {
            exercise(&src[..i], case.entry.as_deref());
            runs += 1;
        }
        let lines: Vec<&str> = src.lines().collect();
        for skip in 0..lines.len() {
            let mutated: Vec<&str> = lines.iter().enumerate().filter(|(i, _)| *i != skip).map(|(_, l)| *l).collect();
            exercise(&mutated.join("\n"), case.entry.as_deref());
            runs += 1;
        }
    }
    assert!(runs > 1000, "only {runs} mutations ran");
}

#[test]
fn hostile_snippets_do_not_panic() {
    let deep = format!("def reference(x):\n    return {}x{}\n", "(".repeat(5000), ")".repeat(5000));
    let long_sum = format!("def reference(x):\n    return x{}\n", " + x".repeat(3000));
    let snippets = [
        "def reference(x):\n    return x // 0\n",
        "def reference(x):\n    return -9223372036854775807 - 1 // -1 + x\n",
        "def reference(x):\n    n = -9223372036854775807 - 1\n    return x * (n // -1)\n",
        "def reference(x):\n    return x * (2 ** 62 * 4)\n",
        "def reference(x):\n    return x ** 100000\n",
        "def reference(x):\n    return x ** -1000000000000\n",
        "def reference(x):\n    return x[::-1]\n",
        "def reference(x):\n    return x[::0]\n",
        "def reference(x):\n    return x[-9223372036854775807:9223372036854775807:9223372036854775807]\n",
        "def reference(x):\n    return x.shape[-9223372036854775807:9223372036854775807:-9223372036854775807]\n",
        "def reference(x):\n    return x.repeat(9223372036854775807, 9223372036854775807)\n",
        "def reference(x):\n    return x.view(-1, -1)\n",
        "def reference(x):\n    return x.expand(9223372036854775807, 3)\n",
        "import torch\ndef reference(x):\n    return torch.zeros(9223372036854775807)\n",
        "import torch\ndef reference(x):\n    return torch.arange(0, 9223372036854775807)\n",
        "def reference(x):\n    for i in range(-9223372036854775807, 9223372036854775807):\n        x = x + 1\n    return x\n",
        "def reference(x):\n    return reference(x)\n",
        "def helper(x):\n    return helper(x)\ndef reference(x):\n    return helper(x)\n",
        "import torch\ndef reference(x):\n    return torch.einsum('ii->ii', x)\n",
        "import torch\ndef reference(x):\n    return torch.einsum('ab,bc->', x)\n",
        "import torch\ndef reference(x):\n    return torch.cat([], 0)\n",
        "import torch\ndef reference(x):\n    return torch.stack([x, x.T])\n",
        "def reference(x):\n    return x.sum(dim=(0, 0))\n",
        "def reference(x):\n    return x.chunk(0)\n",
        "def reference(x):\n    a, b, c = x\n    return a\n",
        "def reference(x):\n    return x[0][0][0][0]\n",
        "def reference(x):\n    return x[..., ...]\n",
        "def reference(x):\n    x[0] = x\n    return x\n",
        "def reference(x):\n    return x.unsqueeze(5)\n",
        "def reference(x):\n    return x.permute(0, 0)\n",
        "def reference(x):\n    return x.flatten(1, 0)\n",
        "def reference(x):\n    return x.narrow(0, 5, 5)\n",
        "class A:\n    pass\n",
        "import torch.nn as nn\nclass A(nn.Module):\n    def __init__(self):\n        while True:\n            pass\n    def forward(self, x):\n        return x * self.k\n",
        "import torch.nn as nn\nclass A(nn.Module):\n    pass\n",
        "\u{feff}def reference(x):\n    return x\n",
        "def reference(x):\n    return x + '\u{1F600}'\n",
        &deep,
        &long_sum,
    ];
    for s in snippets {
        exercise(s, None);
    }
}
