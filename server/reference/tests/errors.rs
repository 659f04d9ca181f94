//! Error fixtures: unsupported constructs and wrong programs give a precise message and the
//! exact span of the offending code, rendered as `line:col: message` and a caret line.

use expect_test::{expect, Expect};
use reference::{lower, parse, ArgValue, DType, Number, RefError};

fn render(source: &str, err: &RefError) -> String {
    let (line, col) = err.line_col(source);
    let text = source.lines().nth(line - 1).unwrap_or("");
    let width = source[err.span.clone()].lines().next().unwrap_or("").chars().count().max(1);
    format!("{line}:{col}: {}\n{text}\n{}{}", err.message, " ".repeat(col - 1), "^".repeat(width))
}

fn f32(shape: &[usize]) -> ArgValue {
    ArgValue::Tensor { shape: shape.to_vec(), dtype: DType::F32 }
}

/// Parses and lowers `source` with `args`; the error it must give.
fn check(source: &str, args: &[ArgValue], expect: Expect) {
    let result = parse(source, None).and_then(|p| lower(&p, args));
    match result {
        Ok(_) => panic!("expected an error for:\n{source}"),
        Err(e) => expect.assert_eq(&render(source, &e)),
    }
}

#[test]
fn unsupported_torch_function() {
    check(
        "import torch\ndef reference(x):\n    return torch.fft.fft(x)\n",
        &[f32(&[4])],
        expect![[r#"
            3:12: unsupported: `torch.fft.fft` is not in the supported subset
                return torch.fft.fft(x)
                       ^^^^^^^^^^^^^"#]],
    );
}

#[test]
fn unsupported_functional() {
    check(
        "import torch.nn.functional as F\ndef reference(x, w):\n    return F.conv2d(x, w)\n",
        &[f32(&[1, 1, 4, 4]), f32(&[1, 1, 3, 3])],
        expect![[r#"
            3:12: unsupported: `F.conv2d` is not in the supported subset
                return F.conv2d(x, w)
                       ^^^^^^^^"#]],
    );
}

#[test]
fn unsupported_method() {
    check(
        "def reference(x):\n    return x.cumprod(0)\n",
        &[f32(&[4])],
        expect![[r#"
            2:14: unsupported: `.cumprod()` is not in the supported subset
                return x.cumprod(0)
                         ^^^^^^^"#]],
    );
}

#[test]
fn unsupported_statements_and_expressions() {
    check(
        "def reference(x):\n    while True:\n        pass\n    return x\n",
        &[f32(&[4])],
        expect![[r#"
            2:5: unsupported: while loops
                while True:
                ^^^^^^^^^^^"#]],
    );
    check(
        "def reference(x):\n    f = lambda t: t * 2\n    return f(x)\n",
        &[f32(&[4])],
        expect![[r#"
            2:9: unsupported: lambda
                f = lambda t: t * 2
                    ^^^^^^^^^^^^^^^"#]],
    );
}

#[test]
fn broadcast_mismatch_names_both_shapes() {
    check(
        "def reference(x, y):\n    return x + y\n",
        &[f32(&[4, 3]), f32(&[5])],
        expect![[r#"
            2:12: cannot broadcast [4, 3] with [5]
                return x + y
                       ^^^^^"#]],
    );
}

#[test]
fn matmul_mismatch() {
    check(
        "def reference(a, b):\n    return a @ b\n",
        &[f32(&[2, 3]), f32(&[4, 5])],
        expect![[r#"
            2:12: cannot multiply shapes [2, 3] and [4, 5] (inner sizes 3 and 4 differ)
                return a @ b
                       ^^^^^"#]],
    );
}

#[test]
fn data_dependent_index_names_the_expression() {
    check(
        "def reference(x, y):\n    idx = y.long()\n    return x[idx]\n",
        &[f32(&[4]), f32(&[2])],
        expect![[r#"
            3:14: this index depends on tensor inputs; indexing, gather and scatter need concrete indices (give the index buffer fixed `values`)
                return x[idx]
                         ^^^"#]],
    );
    check(
        "import torch\ndef reference(x, y):\n    return torch.gather(x, 0, y.long())\n",
        &[f32(&[4]), f32(&[2])],
        expect![[r#"
            3:31: this index depends on tensor inputs; indexing, gather and scatter need concrete indices (give the index buffer fixed `values`)
                return torch.gather(x, 0, y.long())
                                          ^^^^^^^^"#]],
    );
}

#[test]
fn syntax_error() {
    check(
        "def reference(x):\n    return x +\n",
        &[],
        expect![[r#"
            2:15: syntax error: Expected an expression
                return x +
                          ^"#]],
    );
}

#[test]
fn no_reference_function() {
    check(
        "import torch\ndef helper(x):\n    return x\n",
        &[],
        expect![[r#"
            1:1: no reference found: expected a function `reference` or an `nn.Module` subclass with `forward`
            import torch
            ^^^^^^^^^^^^"#]],
    );
}

#[test]
fn index_out_of_bounds() {
    check(
        "def reference(x):\n    return x[:, 5]\n",
        &[f32(&[2, 4])],
        expect![[r#"
            2:17: index 5 is out of bounds for dimension 1 with size 4
                return x[:, 5]
                            ^"#]],
    );
}

#[test]
fn returning_a_tuple_of_ints() {
    check(
        "def reference(x):\n    return x.shape\n",
        &[f32(&[2, 4])],
        expect![[r#"
            2:12: expected a tensor in the returned tuple, found an int
                return x.shape
                       ^^^^^^^"#]],
    );
    check(
        "def reference(x):\n    return x.numel()\n",
        &[f32(&[2, 4])],
        expect![[r#"
            2:12: expected the reference to return a tensor, found an int
                return x.numel()
                       ^^^^^^^^^"#]],
    );
}

#[test]
fn condition_on_tensor_values() {
    check(
        "def reference(x):\n    if x.sum() > 0:\n        return x\n    return -x\n",
        &[f32(&[3])],
        expect![[r#"
            2:8: this condition depends on tensor values; only conditions known at lowering time are supported
                if x.sum() > 0:
                   ^^^^^^^^^^^"#]],
    );
}

#[test]
fn submodules_are_refused_where_used() {
    check(
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n        return self.proj(x)\n",
        &[f32(&[2, 4])],
        expect![[r#"
            7:16: unsupported: calling `self.proj` (submodules are not supported; pass weights as arguments)
                    return self.proj(x)
                           ^^^^^^^^^"#]],
    );
    check(
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n        self.dim = dim\n    def forward(self, x):\n        return x * self.dim\n",
        &[f32(&[2, 4])],
        expect![[r#"
            5:20: `__init__` parameter `dim` has no default value, so its value is unknown
                    self.dim = dim
                               ^^^"#]],
    );
}

#[test]
fn writes_through_aliases_are_refused() {
    check(
        "def reference(x):\n    y = x.view(-1)\n    y[0] = 1.0\n    return x\n",
        &[f32(&[2, 2])],
        expect![[r#"
            3:5: writing into `y`, which shares memory with `x`: aliasing is not modelled; write into a `.clone()`
                y[0] = 1.0
                ^^^^"#]],
    );
}

#[test]
fn duplicate_scatter_indices() {
    check(
        "def reference(cache, v, slots):\n    out = cache.clone()\n    out[slots] = v\n    return out\n",
        &[f32(&[4, 2]), f32(&[2, 2]), ArgValue::IntTensor { shape: vec![2], values: vec![1, 1] }],
        expect![[r#"
            3:5: index assignment writes one element twice (duplicate indices); PyTorch leaves the result undefined
                out[slots] = v
                ^^^^^^^^^^"#]],
    );
}

#[test]
fn infinities_only_as_masks() {
    // A data-dependent condition choosing -inf: no real value to stand for.
    check(
        "import math\ndef reference(x):\n    return x.masked_fill(x > 0, -math.inf).softmax(-1)\n",
        &[f32(&[3])],
        expect![[r#"
            3:12: returned element 0 is not a real number LARK models (an infinity meeting another, or `-inf` chosen by a data-dependent condition)
                return x.masked_fill(x > 0, -math.inf).softmax(-1)
                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"#]],
    );
    // An infinity that no max or exp removes.
    check(
        "import math\ndef reference(x):\n    return x + math.inf\n",
        &[f32(&[2])],
        expect![[r#"
        3:12: returned element 0 is infinite; infinities are modelled only as masks that a max or an exp removes
            return x + math.inf
                   ^^^^^^^^^^^^"#]],
    );
    // inf - inf
    check(
        "import torch\ndef reference(x):\n    m = torch.full((2,), float('inf'))\n    return x + (m - m)\n",
        &[f32(&[2])],
        expect![[r#"
        4:12: returned element 0 is not a real number LARK models (an infinity meeting another, or `-inf` chosen by a data-dependent condition)
            return x + (m - m)
                   ^^^^^^^^^^^"#]],
    );
    check(
        "def reference(x):\n    return x * float('nan')\n",
        &[f32(&[2])],
        expect![[r#"
        2:22: unsupported: `float("nan")` (NaN and non-numeric strings have no exact value)
            return x * float('nan')
                             ^^^^^"#]],
    );
}

#[test]
fn uninitialised_memory_reaching_an_output() {
    check(
        "import torch\ndef reference(x):\n    out = torch.empty_like(x)\n    out[0] = x[0]\n    return out\n",
        &[f32(&[2, 2])],
        expect![[r#"
            5:12: returned element 2 is read from `torch.empty` memory that was never written
                return out
                       ^^^"#]],
    );
}

#[test]
fn shape_errors() {
    check(
        "def reference(x):\n    return x.view(3, -1)\n",
        &[f32(&[2, 4])],
        expect![[r#"
            2:12: shape [3, -1] is invalid for an input of shape [2, 4] (8 elements)
                return x.view(3, -1)
                       ^^^^^^^^^^^^^"#]],
    );
    check(
        "import torch.nn.functional as F\ndef reference(x, w):\n    return F.rms_norm(x, (8,), w)\n",
        &[f32(&[2, 4]), f32(&[4])],
        expect![[r#"
            3:12: normalized_shape [8] does not match the last dimensions of the input of shape [2, 4]
                return F.rms_norm(x, (8,), w)
                       ^^^^^^^^^^^^^^^^^^^^^^"#]],
    );
    check(
        "def reference(x):\n    return x.sum(dim=2)\n",
        &[f32(&[2, 4])],
        expect![[r#"
            2:22: dimension out of range (expected to be in range of [-2, 1], but got 2)
                return x.sum(dim=2)
                                 ^"#]],
    );
}

#[test]
fn type_errors() {
    check(
        "def reference(i):\n    return i.mean()\n",
        &[ArgValue::IntTensor { shape: vec![3], values: vec![1, 2, 3] }],
        expect![[r#"
            2:12: `mean` needs a floating-point input, found i64
                return i.mean()
                       ^^^^^^^^"#]],
    );
    check(
        "import torch\ndef reference(x):\n    return torch.where(x > 0)\n",
        &[f32(&[3])],
        expect![[r#"
            3:12: unsupported: `torch.where(condition)` with one argument (its result shape depends on the data)
                return torch.where(x > 0)
                       ^^^^^^^^^^^^^^^^^^"#]],
    );
    check(
        "def reference(x):\n    return x.sum(axis_name=0)\n",
        &[f32(&[3])],
        expect![[r#"
            2:28: `sum` has no parameter `axis_name` that LARK knows
                return x.sum(axis_name=0)
                                       ^"#]],
    );
    check(
        "def reference(x):\n    return x + y\n",
        &[f32(&[3])],
        expect![[r#"
            2:16: unknown name `y`
                return x + y
                           ^"#]],
    );
    check(
        "import torch\ndef reference(x, n):\n    return x * n\n",
        &[f32(&[3]), ArgValue::Scalar(Number::Int(2)), f32(&[1])],
        expect![[r#"
            2:1: `reference` takes 2 arguments, 3 were given
            def reference(x, n):
            ^^^^^^^^^^^^^^^^^^^^"#]],
    );
}

#[test]
fn einsum_ellipsis_without_broadcasting() {
    check(
        "import torch\ndef reference(a, b):\n    return torch.einsum('...ij,...jk->...ik', a, b)\n",
        &[f32(&[2, 3, 4]), f32(&[1, 4, 5])],
        expect![[r#"
            3:12: unsupported: broadcasting inside an einsum `...` ([2] and [1])
                return torch.einsum('...ij,...jk->...ik', a, b)
                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"#]],
    );
}

#[test]
fn a_shape_too_big_for_the_scalar_graph_is_refused_at_the_statement() {
    // 256³ multiply-adds: more nodes than the graph holds. Refused in about a second, not after
    // minutes and gigabytes.
    check(
        "def reference(a, b):\n    c = a @ b\n    return c\n",
        &[f32(&[256, 256]), f32(&[256, 256])],
        expect![[r#"
            2:5: at this shape the reference needs more than 8388608 scalar operations; list a smaller shape in [[kernel.<name>.reference.shapes]]
                c = a @ b
                ^^^^^^^^^"#]],
    );
}

#[test]
fn an_activation_of_an_integer_tensor() {
    check(
        "import torch.nn.functional as F\ndef reference(i):\n    return F.leaky_relu(i)\n",
        &[ArgValue::IntTensor { shape: vec![2], values: vec![1, -1] }],
        expect![[r#"
            3:12: `leaky_relu` takes a floating-point tensor, found i64
                return F.leaky_relu(i)
                       ^^^^^^^^^^^^^^^"#]],
    );
}

#[test]
fn an_activation_parameter_that_is_not_a_number() {
    check(
        "import torch.nn.functional as F\ndef reference(x):\n    return F.elu(x, alpha='one')\n",
        &[f32(&[2])],
        expect![[r#"
            3:27: expected a number, found a string
                return F.elu(x, alpha='one')
                                      ^^^^^"#]],
    );
}
