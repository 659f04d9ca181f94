//! Validation against the kernel's parameters, sections naming no kernel, and resolving size
//! expressions once scalar values are fixed.

use expect_test::{expect, Expect};
use spec::{parse_lark_toml, DimRange, KernelSpec, Len, ParamNames, ParamSpec};
use std::collections::BTreeMap;
use std::path::Path;

/// The rmsnorm kernel's parameters: `.cu` name, PTX name, position.
fn rmsnorm_params() -> Vec<ParamNames> {
    let p = |i: usize, name: &str, ptr: bool| ParamNames::new(&[name, &format!("rmsnorm_param_{i}"), &format!("param_{i}")], ptr);
    vec![p(0, "x", true), p(1, "w", true), p(2, "out", true), p(3, "rows", false), p(4, "cols", false), p(5, "eps", false)]
}

fn kernel(text: &str) -> KernelSpec {
    let i = parse_lark_toml("lark.toml", text).unwrap_or_else(|e| panic!("{e}"));
    i.kernels.into_values().next().expect("one kernel")
}

fn check_validate(text: &str, expect: Expect) {
    let errors: Vec<String> = kernel(text).validate(&rmsnorm_params()).iter().map(ToString::to_string).collect();
    expect.assert_eq(&errors.join("\n"));
}

#[test]
fn a_correct_spec_has_no_errors() {
    check_validate(
        r#"[kernel.rmsnorm]
grid = ["rows"]
block = [256]
[kernel.rmsnorm.params]
x = { dtype = "f32", len = "rows * cols" }
rmsnorm_param_1 = { dtype = "f32", len = "param_4" }
out = { dtype = "f32", len = "rows * cols" }
rows = { range = [1, 64] }
param_4 = { range = [1, 4096] }
eps = { value = 1e-6 }
[kernel.rmsnorm.reference]
file = "ref.py"
[kernel.rmsnorm.reference.args]
x = { buffer = "x", shape = ["rows", "cols"] }
weight = { buffer = "rmsnorm_param_1", shape = ["cols"] }
eps = { param = "eps" }
[[kernel.rmsnorm.reference.outputs]]
buffer = "out"
shape = ["rows", "cols"]
[[kernel.rmsnorm.reference.shapes]]
rows = 4
cols = 1024
"#,
        expect![""],
    );
}

#[test]
fn every_name_must_be_a_parameter_of_the_right_kind() {
    check_validate(
        r#"[kernel.rmsnorm]
grid = ["ceil_div(rowz, 4)"]
[kernel.rmsnorm.params]
lenn = { value = 4 }
x = { dtype = "f32", len = "rows * colz" }
w = { value = 3 }
rows = { dtype = "i32" }
out = { len = "x" }
"#,
        expect![[r#"
            lark.toml:2:19: kernel.rmsnorm.grid[0]: `rowz` is not a scalar parameter of this kernel (scalars: rows, cols, eps)
            lark.toml:4:1: kernel.rmsnorm.params.lenn: no parameter `lenn` in this kernel (parameters: x, w, out, rows, cols, eps)
            lark.toml:8:16: kernel.rmsnorm.params.out.len: `x` is a pointer; a size expression uses scalar parameters
            lark.toml:7:1: kernel.rmsnorm.params.rows: `rows` is a scalar; dtype, len, assume and values are for pointer parameters
            lark.toml:6:1: kernel.rmsnorm.params.w: `w` is a pointer; `value` and `range` are for scalar parameters
            lark.toml:5:36: kernel.rmsnorm.params.x.len: `colz` is not a scalar parameter of this kernel (scalars: rows, cols, eps)"#]],
    );
}

#[test]
fn lengths_must_be_positive() {
    check_validate(
        "[kernel.rmsnorm.params]\nrows = { range = [1, 8] }\nx = { len = \"rows - 10\" }\n",
        expect!["lark.toml:3:14: kernel.rmsnorm.params.x.len: `len` is at most -2 for the declared scalars; a buffer has at least 1 element"],
    );
    // Specs built in code are checked too (no place to point at).
    let mut k = KernelSpec::default();
    k.params.insert("x".into(), ParamSpec::Buffer { dtype: None, len: Some(Len::Elements(0)), assume: vec![], values: None });
    k.params.insert("rows".into(), ParamSpec::Scalar { value: None, range: Some((8, 1)) });
    k.params
        .insert("out".into(), ParamSpec::Buffer { dtype: Some(spec::DType::U8), len: Some(Len::Elements(2)), assume: vec![], values: Some(vec![1, 300, 2]) });
    let errors: Vec<String> = k.validate(&rmsnorm_params()).iter().map(ToString::to_string).collect();
    expect![[r#"
        params.out.values: element 1 is 300, outside u8 (0 to 255)
        params.out.len: `len` is 2 but the fixed contents have 3 elements
        params.rows.range: a range is [lo, hi] with lo <= hi, found [8, 1]
        params.x.len: `len` is at least 1, found 0"#]]
    .assert_eq(&errors.join("\n"));
}

/// Fixed contents are integers; how wide each is in memory is the dtype's to say (from any
/// source: validation runs on the merged spec).
#[test]
fn fixed_contents_need_a_dtype() {
    check_validate(
        "[kernel.rmsnorm.params]\nx = { values = [3, 1, 2] }\n",
        expect!["lark.toml:2:16: kernel.rmsnorm.params.x.values: fixed contents need the buffer's `dtype` (how each element is stored)"],
    );
    check_validate("[kernel.rmsnorm.params]\nx = { dtype = \"i16\", values = [3, 1, 2] }\n", expect![""]);
}

#[test]
fn reference_bindings_are_checked() {
    check_validate(
        r#"[kernel.rmsnorm.reference]
file = "ref.py"
[kernel.rmsnorm.reference.args]
x = { buffer = "rows", shape = ["rows", "cols"] }
weight = { buffer = "weights", shape = ["n"] }
eps = { param = "x" }
scale = { param = "scale" }
[[kernel.rmsnorm.reference.outputs]]
buffer = "eps"
shape = ["rows"]
offset = "out"
strides = ["colz"]
[[kernel.rmsnorm.reference.shapes]]
rows = 4
n = 5
"#,
        expect![[r#"
            lark.toml:4:16: kernel.rmsnorm.reference.args.x.buffer: `rows` is a scalar parameter; expected a pointer
            lark.toml:5:21: kernel.rmsnorm.reference.args.weight.buffer: `weights` is not a pointer parameter of this kernel (pointers: x, w, out)
            lark.toml:6:17: kernel.rmsnorm.reference.args.eps.param: `x` is a pointer parameter; expected a scalar
            lark.toml:7:19: kernel.rmsnorm.reference.args.scale.param: `scale` is not a scalar parameter of this kernel (scalars: rows, cols, eps)
            lark.toml:9:10: kernel.rmsnorm.reference.outputs[0].buffer: `eps` is a scalar parameter; expected a pointer
            lark.toml:5:42: kernel.rmsnorm.reference.args.weight.shape[0]: `n` is not a scalar parameter of this kernel (scalars: rows, cols, eps)
            lark.toml:11:11: kernel.rmsnorm.reference.outputs[0].offset: `out` is a pointer; a size expression uses scalar parameters
            lark.toml:12:13: kernel.rmsnorm.reference.outputs[0].strides[0]: `colz` is not a scalar parameter of this kernel (scalars: rows, cols, eps)
            lark.toml:15:1: kernel.rmsnorm.reference.shapes[0].n: `n` is not a scalar parameter of this kernel (scalars: rows, cols, eps)"#]],
    );
}

#[test]
fn sections_naming_no_kernel_are_typos() {
    let file = "tests/fixtures/sections/lark.toml";
    let i = parse_lark_toml(file, &std::fs::read_to_string(file).unwrap()).unwrap();
    let errors: Vec<String> = i.sections_matching_nothing(Path::new("tests/fixtures/sections")).iter().map(ToString::to_string).collect();
    // `rmsnorm` is in rmsnorm.cu, `reduce` (mangled) in sub/reduce.cu, `scale` in sub/scale.ptx,
    // `softmax` in sub/softmax.cuh; `rms` only occurs inside other words, and hidden
    // directories are not searched.
    expect![[r#"
        tests/fixtures/sections/lark.toml:19:9: kernel.hidden_kernel: no kernel named `hidden_kernel` in any .cu, .cuh or .ptx file under tests/fixtures/sections; a typo?
        tests/fixtures/sections/lark.toml:16:9: kernel.rms: no kernel named `rms` in any .cu, .cuh or .ptx file under tests/fixtures/sections; a typo?
        tests/fixtures/sections/lark.toml:4:9: kernel.rmsnrom: no kernel named `rmsnrom` in any .cu, .cuh or .ptx file under tests/fixtures/sections; a typo?"#]]
    .assert_eq(&errors.join("\n"));
    // Sections of a SentryWard input are entries, checked against the module instead.
    let json = spec::parse_sentryward_json(
        "in.json",
        r#"{"schema": "spverify.kernel-input/v1", "entry": "nowhere", "launch": {"grid_dim": [1], "block_dim": [1]}}"#,
        "*",
    )
    .unwrap();
    assert!(json.sections_matching_nothing(Path::new("tests/fixtures/sections")).is_empty());
}

fn resolved(text: &str, scalars: &[(&str, i128)]) -> String {
    let k = kernel(text);
    let scalars: BTreeMap<String, i128> = scalars.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    match k.resolve(&scalars) {
        Ok(r) => {
            let mut i = spec::Interface::default();
            i.kernels.insert("k".into(), r);
            i.to_toml(Path::new(""))
        }
        Err(e) => e.to_string(),
    }
}

const RMSNORM: &str = r#"[kernel.k]
grid = ["rows", 1, 1]
block = ["min(cols, 256)"]
[kernel.k.params]
x = { dtype = "f32", len = "rows * cols" }
w = { dtype = "f32", len = "cols" }
rows = { range = [1, 64] }
cols = { range = [1, 4096] }
eps = { value = 1e-6 }
n = { value = 3 }
idx = { dtype = "i32", len = "n", values = [2, 0, 1] }
[kernel.k.reference]
file = "ref.py"
[kernel.k.reference.args]
x = { buffer = "x", shape = ["rows", "cols"] }
[[kernel.k.reference.outputs]]
buffer = "x"
shape = ["rows", "cols / 2"]
offset = "cols % 2"
strides = ["cols", "2"]
"#;

#[test]
fn resolving_makes_every_size_concrete() {
    expect![[r#"
        [kernel.k]
        grid = [4, 1, 1]
        block = [256, 1, 1]
        [kernel.k.params]
        cols = { value = 1025, range = [1, 4096] }
        eps = { value = 1e-6 }
        idx = { dtype = "i32", len = 3, values = [2, 0, 1] }
        n = { value = 3 }
        rows = { value = 4, range = [1, 64] }
        w = { dtype = "f32", len = 1025 }
        x = { dtype = "f32", len = 4100 }
        [kernel.k.reference]
        file = "ref.py"
        [kernel.k.reference.args]
        x = { buffer = "x", shape = [4, 1025] }
        [[kernel.k.reference.outputs]]
        buffer = "x"
        shape = [4, 512]
        offset = 1
        strides = [1025, 2]
    "#]]
    .assert_eq(&resolved(RMSNORM, &[("rows", 4), ("cols", 1025)]));
    let k = kernel(RMSNORM);
    assert_eq!(k.required_scalars().into_iter().collect::<Vec<_>>(), vec!["cols", "n", "rows"]);
}

#[test]
fn resolving_reports_what_is_missing_or_wrong() {
    expect!["lark.toml:2:10: kernel.k.grid[0]: needs a value for `rows`"].assert_eq(&resolved(RMSNORM, &[("cols", 8)]));
    expect!["lark.toml:7:18: kernel.k.params.rows.range: `rows` = 65 is outside its range [1, 64]"].assert_eq(&resolved(RMSNORM, &[("rows", 65), ("cols", 8)]));
    expect!["lark.toml:10:15: kernel.k.params.n.value: `n` is 4 here, but the interface fixes it to 3"]
        .assert_eq(&resolved(RMSNORM, &[("rows", 1), ("cols", 8), ("n", 4)]));
    expect!["lark.toml:5:1: kernel.k.params.x: `x` is a buffer; it has no scalar value"].assert_eq(&resolved(RMSNORM, &[("rows", 1), ("cols", 8), ("x", 4)]));
    let block = "[kernel.k]\nblock = [\"t\", \"t\"]\n[kernel.k.params]\nt = { range = [1, 1024] }\n";
    expect!["lark.toml:2:9: kernel.k.block: a block has at most 1024 threads (CUDA's limit), found 1600 here"].assert_eq(&resolved(block, &[("t", 40)]));
    let div = "[kernel.k]\ngrid = [\"1024 / (n - 4)\"]\n[kernel.k.params]\nn = { range = [1, 8] }\n";
    expect!["lark.toml:2:10: kernel.k.grid[0]: division by zero"].assert_eq(&resolved(div, &[("n", 4)]));
    let zero = "[kernel.k]\ngrid = [\"n - 4\"]\n";
    expect!["lark.toml:2:10: kernel.k.grid[0]: grid x is 0 here; a launch dimension is at least 1"].assert_eq(&resolved(zero, &[("n", 4)]));
    let len = "[kernel.k.params]\ns = { dtype = \"i32\", len = \"n + 1\", values = [1, 2] }\n";
    expect!["lark.toml:2:29: kernel.k.params.s.len: `len` is 4 here but the fixed contents have 2 elements"].assert_eq(&resolved(len, &[("n", 3)]));
    expect!["lark.toml:2:29: kernel.k.params.s.len: `len` is 0 here; a buffer has at least 1 element"].assert_eq(&resolved(len, &[("n", -1)]));
}

#[test]
fn launch_expressions_have_sound_ranges_before_resolving() {
    let k = kernel(RMSNORM);
    assert_eq!(k.grid_range().unwrap()[0], DimRange { lo: 1, hi: 64 });
    assert_eq!(k.block_range().unwrap()[0], DimRange { lo: 1, hi: 256 });
    let unbounded = kernel("[kernel.k]\ngrid = [\"ceil_div(n, 256)\", \"m\"]\n[kernel.k.params]\nn = { range = [1, 1048576] }\n");
    let g = unbounded.grid_range().unwrap();
    assert_eq!(g[0], DimRange { lo: 1, hi: 4096 });
    assert_eq!(g[1], DimRange { lo: 1, hi: 65535 });
    assert_eq!(g[2], DimRange::exact(1));
}

/// `zeroed` and fixed `values` both say what a buffer holds before the launch: one is an error
/// at the assumption, not a silent choice.
#[test]
fn zeroed_and_fixed_values_conflict() {
    check_validate(
        "[kernel.rmsnorm.params]\nout = { dtype = \"i32\", len = 2, assume = [\"zeroed\"], values = [0, 0] }\n",
        expect!["lark.toml:2:42: kernel.rmsnorm.params.out.assume: `zeroed` and fixed `values` both give the contents: keep one"],
    );
}
