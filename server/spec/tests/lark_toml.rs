//! lark.toml: every error at its exact place, and every accepted form round-tripping through
//! `Interface::to_toml`.

use expect_test::{expect, Expect};
use spec::{parse_lark_toml, parse_lark_toml_recovering, Interface};
use std::path::Path;

/// The fixture's lark.toml path: `values_file` and reference files resolve next to it.
const FILE: &str = "tests/fixtures/lark/lark.toml";

/// Every error of `text`, one per line: `line:column key: message`.
fn check_errors(text: &str, expect: Expect) {
    let (_, errors) = parse_lark_toml_recovering(FILE, text);
    let shown: Vec<String> = errors
        .iter()
        .map(|e| {
            let file = if e.file == FILE { String::new() } else { format!("{} ", e.file) };
            format!("{file}{}:{} {}: {}", e.line, e.column, e.key, e.message)
        })
        .collect();
    expect.assert_eq(&shown.join("\n"));
}

fn without_origins(mut i: Interface) -> Interface {
    for k in i.kernels.values_mut() {
        k.origins.clear();
    }
    i
}

/// Parses `text`, shows its canonical form, and checks that the canonical form parses to the
/// same interface.
fn check_roundtrip(text: &str, expect: Expect) {
    let dir = Path::new(FILE).parent().unwrap();
    let parsed = parse_lark_toml(FILE, text).unwrap_or_else(|e| panic!("{e}"));
    let written = parsed.to_toml(dir);
    expect.assert_eq(&written);
    let again = parse_lark_toml(FILE, &written).unwrap_or_else(|e| panic!("canonical form does not parse: {e}\n{written}"));
    assert_eq!(without_origins(again), without_origins(parsed), "round trip changed the interface:\n{written}");
}

#[test]
fn syntax_errors_carry_line_and_column() {
    check_errors("[kernel.k]\ngrid = [1,\n", expect!["3:1 : invalid array; expected `]`"]);
    check_errors("[kernel.k\n", expect!["1:10 : invalid table header; expected `.`, `]`"]);
    check_errors("[kernel.k]\nblock = 1\nblock = 2\n", expect![[r#"3:1 : duplicate key `block` in table `kernel.k`"#]]);
}

#[test]
fn structure_errors() {
    check_errors("[kernels.k]\n", expect!["1:2 kernels: unknown key `kernels` (expected `kernel`)"]);
    check_errors("kernel = 3\n", expect!["1:10 kernel: expected a table, found an integer"]);
    check_errors("[kernel]\nk = \"x\"\n", expect!["2:5 kernel.k: expected a table, found a string"]);
    check_errors(
        "[kernel.k]\ngrdi = [1]\n",
        expect!["2:1 kernel.k.grdi: unknown key `grdi` (expected grid, block, dynamic_shared_bytes, params or reference)"],
    );
    check_errors(
        "[kernel.\"my kernel\"]\nx = 1\n",
        expect![[r#"2:1 kernel."my kernel".x: unknown key `x` (expected grid, block, dynamic_shared_bytes, params or reference)"#]],
    );
    check_errors("[kernel.k]\ndynamic_shared_bytes = -4\n", expect!["2:24 kernel.k.dynamic_shared_bytes: expected a non-negative integer, found -4"]);
    check_errors("[kernel.k]\ndynamic_shared_bytes = \"4\"\n", expect!["2:24 kernel.k.dynamic_shared_bytes: expected a non-negative integer, found a string"]);
    check_errors("[kernel.k]\nparams = [1]\n", expect!["2:10 kernel.k.params: expected a table, found an array"]);
}

#[test]
fn launch_errors() {
    check_errors("[kernel.k]\ngrid = 4\n", expect!["2:8 kernel.k.grid: expected an array of 1 to 3 dimensions, found an integer"]);
    check_errors("[kernel.k]\ngrid = [1, 1, 1, 1]\n", expect!["2:8 kernel.k.grid: expected 1 to 3 dimensions, found 4"]);
    check_errors("[kernel.k]\ngrid = []\n", expect!["2:8 kernel.k.grid: expected 1 to 3 dimensions, found 0"]);
    check_errors(
        "[kernel.k]\ngrid = [64, true]\n",
        expect!["2:13 kernel.k.grid[1]: expected a positive integer, a [lo, hi] range or a size expression, found a boolean"],
    );
    check_errors("[kernel.k]\nblock = [0]\n", expect!["2:10 kernel.k.block[0]: a launch dimension is at least 1, found 0"]);
    check_errors("[kernel.k]\nblock = [\"0\"]\n", expect!["2:10 kernel.k.block[0]: a launch dimension is at least 1, found 0"]);
    check_errors("[kernel.k]\ngrid = [[8, 1]]\n", expect!["2:9 kernel.k.grid[0]: a range is [lo, hi] with lo <= hi, found [8, 1]"]);
    check_errors("[kernel.k]\ngrid = [[0, 4]]\n", expect!["2:10 kernel.k.grid[0][0]: a launch dimension is at least 1, found 0"]);
    check_errors("[kernel.k]\ngrid = [[1, \"n\"]]\n", expect!["2:13 kernel.k.grid[0][1]: range bounds are integers, found a string"]);
    check_errors("[kernel.k]\ngrid = [[1, 2, 3]]\n", expect!["2:9 kernel.k.grid[0]: a range is [lo, hi], found 3 elements"]);
    check_errors("[kernel.k]\nblock = [2048]\n", expect!["2:10 kernel.k.block[0]: block x is at most 1024 (CUDA's limit), found 2048"]);
    check_errors("[kernel.k]\nblock = [1, 1, 65]\n", expect!["2:16 kernel.k.block[2]: block z is at most 64 (CUDA's limit), found 65"]);
    check_errors("[kernel.k]\nblock = [64, 32]\n", expect!["2:9 kernel.k.block: a block has at most 1024 threads (CUDA's limit), found 2048"]);
    check_errors("[kernel.k]\nblock = [[1, 2000]]\n", expect!["2:10 kernel.k.block[0]: block x is at most 1024 (CUDA's limit), found 2000"]);
    check_errors("[kernel.k]\ngrid = [1, 70000]\n", expect!["2:12 kernel.k.grid[1]: grid y is at most 65535 (CUDA's limit), found 70000"]);
    check_errors("[kernel.k]\ngrid = [2147483648]\n", expect!["2:9 kernel.k.grid[0]: grid x is at most 2147483647 (CUDA's limit), found 2147483648"]);
    check_errors("[kernel.k]\ngrid = [\"rows *\"]\n", expect!["2:16 kernel.k.grid[0]: expected a number, a name or `(`, found the end of the expression"]);
    check_errors("[kernel.k]\ngrid = [\"ceil_div(n 256)\"]\n", expect!["2:21 kernel.k.grid[0]: expected `,`, found `256`"]);
}

#[test]
fn parameter_errors() {
    let p = |body: &str| format!("[kernel.k.params]\n{body}\n");
    check_errors(&p("x = 3"), expect![[r#"2:5 kernel.k.params.x: expected a table like { value = 1 } or { dtype = "f32", len = 16 }, found an integer"#]]);
    check_errors(
        &p("x = {}"),
        expect!["2:5 kernel.k.params.x: an empty parameter table says nothing (expected value, range, dtype, len, assume, values or values_file)"],
    );
    check_errors(
        &p("x = { dtype = \"f32\", lenght = 4 }"),
        expect!["2:22 kernel.k.params.x.lenght: unknown key `lenght` (expected value, range, dtype, len, assume, values or values_file)"],
    );
    check_errors(
        &p("n = { value = 4, len = 4 }"),
        expect!["2:18 kernel.k.params.n.len: a parameter is a scalar or a buffer: `value` is for scalars, `len` for buffers"],
    );
    check_errors(&p("n = { value = \"4\" }"), expect!["2:15 kernel.k.params.n.value: expected a number, found a string"]);
    check_errors(&p("n = { range = [9, 1] }"), expect!["2:15 kernel.k.params.n.range: a range is [lo, hi] with lo <= hi, found [9, 1]"]);
    check_errors(&p("n = { range = [1] }"), expect!["2:15 kernel.k.params.n.range: expected [lo, hi], found 1 elements"]);
    check_errors(&p("n = { range = 5 }"), expect!["2:15 kernel.k.params.n.range: expected [lo, hi], found an integer"]);
    check_errors(&p("n = { range = [1, 2.5] }"), expect!["2:19 kernel.k.params.n.range[1]: range bounds are integers, found a float"]);
    check_errors(&p("n = { value = 100, range = [1, 64] }"), expect!["2:15 kernel.k.params.n.value: value 100 is outside the declared range [1, 64]"]);
    check_errors(
        &p("x = { dtype = \"f33\" }"),
        expect!["2:15 kernel.k.params.x.dtype: unknown dtype `f33` (expected f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64 or u64)"],
    );
    check_errors(&p("x = { dtype = 32 }"), expect!["2:15 kernel.k.params.x.dtype: expected a string, found an integer"]);
    check_errors(&p("x = { dtype = \"f32\", len = true }"), expect!["2:28 kernel.k.params.x.len: expected an integer or a size expression, found a boolean"]);
    check_errors(&p("x = { len = 0 }"), expect!["2:13 kernel.k.params.x.len: `len` is at least 1, found 0"]);
    check_errors(&p("x = { len = \"rows * * cols\" }"), expect!["2:21 kernel.k.params.x.len: expected a number, a name or `(`, found `*`"]);
    check_errors(&p("x = { len = \"n + $\" }"), expect!["2:18 kernel.k.params.x.len: unexpected character `$` in a size expression"]);
    check_errors(&p("x = { assume = \"injective\" }"), expect!["2:16 kernel.k.params.x.assume: expected an array, found a string"]);
    check_errors(
        &p("x = { assume = [\"injective\", \"sorted\"] }"),
        expect![[r#"2:30 kernel.k.params.x.assume[1]: unknown assumption `sorted` (expected "injective", "in_range(lo, hi)" or "zeroed")"#]],
    );
    check_errors(
        &p("x = { assume = [\"in_range(4, 4)\"] }"),
        expect!["2:17 kernel.k.params.x.assume[0]: in_range(lo, hi) is half-open and needs lo < hi, found in_range(4, 4)"],
    );
    check_errors(&p("x = { assume = [\"in_range(0, n)\"] }"), expect!["2:17 kernel.k.params.x.assume[0]: expected an integer bound, found `n`"]);
}

#[test]
fn fixed_contents_errors() {
    let p = |body: &str| format!("[kernel.k.params]\n{body}\n");
    check_errors(&p("s = { dtype = \"i64\", values = [1, [2, \"3\"]] }"), expect!["2:39 kernel.k.params.s.values[1][1]: expected an integer, found a string"]);
    check_errors(&p("s = { dtype = \"u8\", values = [1, 256] }"), expect!["2:30 kernel.k.params.s.values: element 1 is 256, outside u8 (0 to 255)"]);
    check_errors(
        &p("s = { dtype = \"f32\", values = [1] }"),
        expect!["2:31 kernel.k.params.s.values: fixed contents are integers, but the buffer's dtype is f32"],
    );
    check_errors(
        &p("s = { dtype = \"i32\", len = 3, values = [1, 2] }"),
        expect!["2:28 kernel.k.params.s.len: `len` is 3 but the fixed contents have 2 elements"],
    );
    check_errors(&p("s = { dtype = \"i32\", values = [] }"), expect!["2:31 kernel.k.params.s.values: fixed contents are empty"]);
    check_errors(
        &p("s = { values = [1], values_file = \"pos.json\" }"),
        expect!["2:21 kernel.k.params.s.values_file: give the contents once: `values` or `values_file`, not both"],
    );
    check_errors(
        &p("s = { dtype = \"i32\", values_file = \"missing.json\" }"),
        expect!["2:36 kernel.k.params.s.values_file: cannot read `tests/fixtures/lark/missing.json`: no such file or directory"],
    );
    check_errors(&p("s = { dtype = \"i32\", values_file = \"broken.json\" }"), expect!["tests/fixtures/lark/broken.json 2:1 : EOF while parsing a list"]);
    check_errors(
        &p("s = { dtype = \"i32\", values_file = \"floats.json\" }"),
        expect!["tests/fixtures/lark/floats.json 2:3 [2]: expected an integer, found a float"],
    );
    check_errors(
        &p("s = { dtype = \"i32\", values_file = \"object.json\" }"),
        expect!["tests/fixtures/lark/object.json 1:1 : expected an array of integers, found an object"],
    );
    check_errors(
        &p("s = { dtype = \"i8\", values_file = \"pos.json\", len = 4 }"),
        expect!["2:53 kernel.k.params.s.len: `len` is 4 but the fixed contents have 8 elements"],
    );
}

#[test]
fn reference_errors() {
    let r = |body: &str| format!("[kernel.k.reference]\n{body}\n");
    check_errors(
        &r("function = \"reference\""),
        expect!["1:11 kernel.k.reference: missing `file` (the Python file of the reference, relative to this lark.toml)"],
    );
    check_errors(
        &r("file = \"r.py\"\nfunc = \"f\""),
        expect!["3:1 kernel.k.reference.func: unknown key `func` (expected file, function, args, outputs or shapes)"],
    );
    check_errors(
        &r("file = \"r.py\"\nfunction = \"Model.forward.x\""),
        expect!["3:12 kernel.k.reference.function: expected a function name or `ClassName.forward`, found `Model.forward.x`"],
    );
    check_errors(&r("file = 3"), expect!["2:8 kernel.k.reference.file: expected a string, found an integer"]);
    check_errors(
        &r("file = \"r.py\"\n[kernel.k.reference.args]\nx = \"x\""),
        expect![[r#"4:5 kernel.k.reference.args.x: expected a table like { buffer = "x", shape = ["n"] }, { param = "n" } or { value = 1 }, found a string"#]],
    );
    check_errors(
        &r("file = \"r.py\"\n[kernel.k.reference.args]\nx = { buffer = \"x\", param = \"n\" }"),
        expect!["4:5 kernel.k.reference.args.x: an argument is bound once: found both `buffer` and `param`"],
    );
    check_errors(
        &r("file = \"r.py\"\n[kernel.k.reference.args]\nx = {}"),
        expect!["4:5 kernel.k.reference.args.x: expected one of `buffer` (with `shape`), `param` or `value`"],
    );
    check_errors(
        &r("file = \"r.py\"\n[kernel.k.reference.args]\nx = { buffer = \"x\" }"),
        expect!["4:5 kernel.k.reference.args.x: a buffer argument needs a `shape` (the tensor the buffer is seen as)"],
    );
    check_errors(
        &r("file = \"r.py\"\n[kernel.k.reference.args]\nn = { param = \"n\", shape = [1] }"),
        expect!["4:20 kernel.k.reference.args.n.shape: `shape` goes with `buffer`, not `param`"],
    );
    check_errors(
        &r("file = \"r.py\"\n[kernel.k.reference.args]\nx = { tensor = \"x\" }"),
        expect!["4:7 kernel.k.reference.args.x.tensor: unknown key `tensor` (expected buffer and shape, param, or value)"],
    );
    check_errors(
        &r("file = \"r.py\"\n[kernel.k.reference.args]\nx = { buffer = \"x\", shape = [\"rows\", 2.5] }"),
        expect!["4:38 kernel.k.reference.args.x.shape[1]: expected an integer or a size expression, found a float"],
    );
    check_errors(
        &r("file = \"r.py\"\n[kernel.k.reference.args]\neps = { value = \"1e-6\" }"),
        expect!["4:17 kernel.k.reference.args.eps.value: expected a number, found a string"],
    );
    check_errors(
        &r("file = \"r.py\"\n[[kernel.k.reference.outputs]]\nshape = [4]"),
        expect!["3:1 kernel.k.reference.outputs[0]: missing `buffer` (an output is a kernel buffer and the shape it holds)"],
    );
    check_errors(
        &r("file = \"r.py\"\n[[kernel.k.reference.outputs]]\nbuffer = \"out\"\nshape = [\"r\", \"c\"]\nstrides = [1]"),
        expect!["6:11 kernel.k.reference.outputs[0].strides: one stride per dimension: the shape has 2 dimensions, found 1 strides"],
    );
    check_errors(
        &r("file = \"r.py\"\n[[kernel.k.reference.outputs]]\nbuffer = \"out\"\nshape = [4]\noffset = false"),
        expect!["6:10 kernel.k.reference.outputs[0].offset: expected an integer or a size expression, found a boolean"],
    );
    check_errors(&r("file = \"r.py\"\noutputs = 3"), expect!["3:11 kernel.k.reference.outputs: expected an array, found an integer"]);
    check_errors(
        &r("file = \"r.py\"\n[[kernel.k.reference.shapes]]\nrows = \"4\""),
        expect!["4:8 kernel.k.reference.shapes[0].rows: expected an integer, found a string"],
    );
}

#[test]
fn errors_are_all_reported_and_bad_kernels_left_out() {
    let text = "[kernel.a]\nblock = [2048]\n[kernel.b]\ngrid = [4]\n[kernel.c.params]\nx = { len = true }\n";
    let (iface, errors) = parse_lark_toml_recovering(FILE, text);
    assert_eq!(errors.len(), 2);
    assert_eq!(iface.kernels.keys().collect::<Vec<_>>(), vec!["b"]);
    let first = parse_lark_toml(FILE, text).unwrap_err();
    assert_eq!(first.to_string(), "tests/fixtures/lark/lark.toml:2:10: kernel.a.block[0]: block x is at most 1024 (CUDA's limit), found 2048");
    assert_eq!(first.span, Some(20..24));
}

#[test]
fn launch_forms_round_trip() {
    check_roundtrip(
        "[kernel.k]\ngrid = [64]\nblock = [256, 1, 1]\n",
        expect![[r#"
            [kernel.k]
            grid = [64, 1, 1]
            block = [256, 1, 1]
        "#]],
    );
    check_roundtrip(
        "[kernel.k]\ngrid = [[1, 8], \"4\", 2]\nblock = [\"ceil_div(cols, 4)\", [1, 4]]\ndynamic_shared_bytes = 0\n[kernel.k.params]\ncols = { range = [1, 1024] }\n",
        expect![[r#"
            [kernel.k]
            grid = [[1, 8], 4, 2]
            block = ["ceil_div(cols, 4)", [1, 4], 1]
            dynamic_shared_bytes = 0
            [kernel.k.params]
            cols = { range = [1, 1024] }
        "#]],
    );
    check_roundtrip(
        "[kernel.rmsnorm]\ngrid = [\"rows\", 1, 1]\nblock = [256, 1, 1]\n[kernel._Z6reducePKfPfi]\ngrid = [\"(n + 255) / 256\"]\n[kernel.\"odd name\"]\nblock = [32]\n",
        expect![[r#"
            [kernel._Z6reducePKfPfi]
            grid = ["(n + 255) / 256", 1, 1]

            [kernel."odd name"]
            block = [32, 1, 1]

            [kernel.rmsnorm]
            grid = ["rows", 1, 1]
            block = [256, 1, 1]
        "#]],
    );
}

#[test]
fn parameter_forms_round_trip() {
    check_roundtrip(
        r#"[kernel.k.params]
n = { value = 16384 }
alpha = { value = 2.5 }
eps = { value = 1e-6 }
flag = { value = true }
neg = { value = -3, range = [-8, 8] }
m = { range = [1, 100] }
x = { dtype = "f32", len = "n" }
y = { dtype = "float", len = "rows * cols" }
z = { dtype = "bf16", len = "10" }
w = { len = 7 }
acc = { dtype = "f32", len = 1, assume = ["zeroed"] }
slots = { dtype = "i64", len = 4, values = [3, 1, 0, 2], assume = ["injective", "in_range(0, 4)"] }
nested = { dtype = "u8", values = [[1, 2], [3, [4]]] }
pos = { dtype = "i32", values_file = "pos.json" }
"#,
        expect![[r#"
            [kernel.k]
            [kernel.k.params]
            acc = { dtype = "f32", len = 1, assume = ["zeroed"] }
            alpha = { value = 2.5 }
            eps = { value = 1e-6 }
            flag = { value = 1 }
            m = { range = [1, 100] }
            n = { value = 16384 }
            neg = { value = -3, range = [-8, 8] }
            nested = { dtype = "u8", len = 4, values = [1, 2, 3, 4] }
            pos = { dtype = "i32", len = 8, values = [0, 1, 2, 3, 4, 5, 6, 7] }
            slots = { dtype = "i64", len = 4, assume = ["injective", "in_range(0, 4)"], values = [3, 1, 0, 2] }
            w = { len = 7 }
            x = { dtype = "f32", len = "n" }
            y = { dtype = "f32", len = "rows * cols" }
            z = { dtype = "bf16", len = 10 }
        "#]],
    );
    // Tables written out in full mean the same as inline ones.
    check_roundtrip(
        "[kernel.k.params.x]\ndtype = \"f32\"\nlen = \"n\"\n[kernel.k.params.n]\nvalue = 4\n",
        expect![[r#"
            [kernel.k]
            [kernel.k.params]
            n = { value = 4 }
            x = { dtype = "f32", len = "n" }
        "#]],
    );
}

#[test]
fn reference_forms_round_trip() {
    check_roundtrip(
        r#"[kernel.rmsnorm]
grid = ["rows", 1, 1]
block = [256, 1, 1]
[kernel.rmsnorm.params]
x      = { dtype = "f32", len = "rows * cols" }
w      = { dtype = "f32", len = "cols" }
out    = { dtype = "f32", len = "rows * cols" }
rows   = { range = [1, 64] }
cols   = { range = [1, 4096] }
eps    = { value = 1e-6 }
[kernel.rmsnorm.reference]
file = "rmsnorm_ref.py"
function = "RMSNorm.forward"
[kernel.rmsnorm.reference.args]
x      = { buffer = "x", shape = ["rows", "cols"] }
weight = { buffer = "w", shape = ["cols"] }
eps    = { param = "eps" }
dim    = { value = 64 }
scale  = { value = 0.5 }
[[kernel.rmsnorm.reference.outputs]]
buffer = "out"
shape = ["rows", "cols"]
[[kernel.rmsnorm.reference.outputs]]
buffer = "out"
shape = ["rows"]
offset = "rows * cols - rows"
strides = ["cols"]
[[kernel.rmsnorm.reference.shapes]]
rows = 4
cols = 1024
[[kernel.rmsnorm.reference.shapes]]
rows = 1
cols = 7
"#,
        expect![[r#"
            [kernel.rmsnorm]
            grid = ["rows", 1, 1]
            block = [256, 1, 1]
            [kernel.rmsnorm.params]
            cols = { range = [1, 4096] }
            eps = { value = 1e-6 }
            out = { dtype = "f32", len = "rows * cols" }
            rows = { range = [1, 64] }
            w = { dtype = "f32", len = "cols" }
            x = { dtype = "f32", len = "rows * cols" }
            [kernel.rmsnorm.reference]
            file = "rmsnorm_ref.py"
            function = "RMSNorm.forward"
            [kernel.rmsnorm.reference.args]
            x = { buffer = "x", shape = ["rows", "cols"] }
            weight = { buffer = "w", shape = ["cols"] }
            eps = { param = "eps" }
            dim = { value = 64 }
            scale = { value = 0.5 }
            [[kernel.rmsnorm.reference.outputs]]
            buffer = "out"
            shape = ["rows", "cols"]
            [[kernel.rmsnorm.reference.outputs]]
            buffer = "out"
            shape = ["rows"]
            offset = "rows * cols - rows"
            strides = ["cols"]
            [[kernel.rmsnorm.reference.shapes]]
            cols = 1024
            rows = 4
            [[kernel.rmsnorm.reference.shapes]]
            cols = 7
            rows = 1
        "#]],
    );
    // The reference file resolves next to the lark.toml; the function defaults.
    let i = parse_lark_toml(FILE, "[kernel.k.reference]\nfile = \"sub/ref.py\"\n").unwrap();
    let r = i.kernel("k").unwrap().reference.as_ref().unwrap();
    assert_eq!(r.file, Path::new("tests/fixtures/lark/sub/ref.py"));
    assert_eq!(r.function, None);
}

#[test]
fn every_fact_keeps_its_place() {
    let text = "[kernel.k]\ngrid = [\"rows\"]\n[kernel.k.params]\nx = { dtype = \"f32\", len = \"rows * cols\" }\n";
    let i = parse_lark_toml(FILE, text).unwrap();
    let k = i.kernel("k").unwrap();
    let shown: Vec<String> = k.origins.iter().map(|(rel, o)| format!("{rel:?} -> {}:{} {} {:?}", o.line, o.column, o.key, &text[o.span.clone()])).collect();
    expect![[r#"
        "" -> 1:9 kernel.k "k"
        "grid" -> 2:8 kernel.k.grid "[\"rows\"]"
        "grid[0]" -> 2:10 kernel.k.grid[0] "rows"
        "params.x" -> 4:1 kernel.k.params.x "x"
        "params.x.dtype" -> 4:15 kernel.k.params.x.dtype "\"f32\""
        "params.x.len" -> 4:29 kernel.k.params.x.len "rows * cols"
    "#]]
    .assert_eq(&(shown.join("\n") + "\n"));
}

/// A field of a struct passed by value is declared by byte offset (`"p+16"`) or by name, as a
/// quoted key or a dotted one (which TOML reads as a table of fields); each keeps its place under
/// the key as one name, and all round-trip.
#[test]
fn struct_fields_keep_their_place_and_round_trip() {
    let text = "[kernel.k.params]\n\"p+16\" = { value = 1024 }\np.ne12 = { range = [1, 8] }\n\"p.scale\" = { value = 0.5 }\n";
    let i = parse_lark_toml(FILE, text).unwrap();
    let k = i.kernel("k").unwrap();
    let shown: Vec<String> = k.origins.iter().map(|(rel, o)| format!("{rel} -> {}:{} {:?}", o.line, o.column, &text[o.span.clone()])).collect();
    expect![[r#"
         -> 1:9 "k"
        params."p+16" -> 2:1 "\"p+16\""
        params."p+16".value -> 2:20 "1024"
        params."p.ne12" -> 3:3 "ne12"
        params."p.ne12".range -> 3:20 "[1, 8]"
        params."p.scale" -> 4:1 "\"p.scale\""
        params."p.scale".value -> 4:23 "0.5"
    "#]]
    .assert_eq(&(shown.join("\n") + "\n"));
    check_roundtrip(
        text,
        expect![[r#"
            [kernel.k]
            [kernel.k.params]
            "p+16" = { value = 1024 }
            "p.ne12" = { range = [1, 8] }
            "p.scale" = { value = 0.5 }
        "#]],
    );
}
