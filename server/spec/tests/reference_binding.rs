//! The peer's `reference_binding.json` read into the same `ReferenceSpec` as lark.toml's
//! `[kernel.X.reference]`.

use expect_test::{expect, Expect};
use spec::{parse_lark_toml, parse_reference_binding, parse_sentryward_json, Interface};
use std::path::Path;

const INPUT: &str = r#"{"schema": "spverify.kernel-input/v1", "entry": "rmsnorm",
 "launch": {"grid_dim": [4, 1, 1], "block_dim": [256, 1, 1]},
 "declarations": [{"parameter": "rmsnorm_param_0", "object": "x", "type": "pointer"},
                  {"parameter": "rmsnorm_param_1", "object": "w", "type": "pointer"},
                  {"parameter": "rmsnorm_param_2", "object": "out", "type": "pointer"}],
 "arguments": [{"parameter": "rmsnorm_param_3", "type": "u32", "value": 4},
               {"parameter": "rmsnorm_param_4", "type": "u32", "value": 1024},
               {"parameter": "rmsnorm_param_5", "type": "f32", "value": 1e-6}]}"#;

fn input() -> Interface {
    parse_sentryward_json("input.json", INPUT, "*").unwrap()
}

fn check(binding: &str, expect: Expect) {
    let shown = match parse_reference_binding(binding, "reference_binding.json", Path::new("ref/reference.py"), &input()) {
        Ok(r) => format!("{r:#?}"),
        Err(e) => format!("{}:{} {}: {}", e.line, e.column, e.key, e.message),
    };
    expect.assert_eq(&shown);
}

#[test]
fn reads_arguments_and_outputs() {
    check(
        r#"{"reference": {"arguments": [
    {"name": "x", "allocation": "x", "shape": [4, 1024], "dtype": "float32"},
    {"name": "weight", "allocation": "w", "shape": ["cols"], "dtype": "torch.float32"},
    {"name": "eps", "parameter": "rmsnorm_param_5"},
    {"name": "dim", "value": 64}]},
 "outputs": {"kind": "dense_tensors", "tensors": [
    {"left_allocation": "reference.output1", "right_allocation": "out", "shape": [4], "element_bytes": 4,
     "right_offset": 16368, "right_strides_bytes": [4096]},
    {"left_allocation": "reference.output0", "right_allocation": "out", "shape": [4, 1024], "element_bytes": 4,
     "left_offset": 0, "left_strides_bytes": [4096, 4]}]},
 "provenance": {"source": "capture"}}"#,
        expect![[r#"
            ReferenceSpec {
                file: "ref/reference.py",
                function: None,
                args: [
                    ReferenceArg {
                        name: "x",
                        binding: Buffer {
                            buffer: "rmsnorm_param_0",
                            shape: [
                                SizeExpr {
                                    kind: Int(
                                        4,
                                    ),
                                    span: 0..0,
                                },
                                SizeExpr {
                                    kind: Int(
                                        1024,
                                    ),
                                    span: 0..0,
                                },
                            ],
                            dtype: Some(
                                F32,
                            ),
                        },
                    },
                    ReferenceArg {
                        name: "weight",
                        binding: Buffer {
                            buffer: "rmsnorm_param_1",
                            shape: [
                                SizeExpr {
                                    kind: Name(
                                        "cols",
                                    ),
                                    span: 0..4,
                                },
                            ],
                            dtype: Some(
                                F32,
                            ),
                        },
                    },
                    ReferenceArg {
                        name: "eps",
                        binding: Param(
                            "rmsnorm_param_5",
                        ),
                    },
                    ReferenceArg {
                        name: "dim",
                        binding: Value(
                            Int(
                                64,
                            ),
                        ),
                    },
                ],
                outputs: [
                    ReferenceOutput {
                        buffer: "rmsnorm_param_2",
                        shape: [
                            SizeExpr {
                                kind: Int(
                                    4,
                                ),
                                span: 0..0,
                            },
                            SizeExpr {
                                kind: Int(
                                    1024,
                                ),
                                span: 0..0,
                            },
                        ],
                        offset: SizeExpr {
                            kind: Int(
                                0,
                            ),
                            span: 0..0,
                        },
                        strides: None,
                    },
                    ReferenceOutput {
                        buffer: "rmsnorm_param_2",
                        shape: [
                            SizeExpr {
                                kind: Int(
                                    4,
                                ),
                                span: 0..0,
                            },
                        ],
                        offset: SizeExpr {
                            kind: Int(
                                4092,
                            ),
                            span: 0..0,
                        },
                        strides: Some(
                            [
                                SizeExpr {
                                    kind: Int(
                                        1024,
                                    ),
                                    span: 0..0,
                                },
                            ],
                        ),
                    },
                ],
                shapes: [],
            }"#]],
    );
}

/// The same binding written both ways gives the same `ReferenceSpec` (lark.toml names buffers
/// by parameter; the peer by memory object, which the kernel input maps to parameters).
#[test]
fn both_formats_give_the_same_spec() {
    let toml = r#"[kernel.rmsnorm.reference]
file = "ref/reference.py"
[kernel.rmsnorm.reference.args]
x = { buffer = "rmsnorm_param_0", shape = [4, 1024] }
eps = { param = "rmsnorm_param_5" }
[[kernel.rmsnorm.reference.outputs]]
buffer = "rmsnorm_param_2"
shape = [4, 1024]
offset = 8
strides = [1024, 1]
"#;
    let from_toml = parse_lark_toml("lark.toml", toml).unwrap().kernels["rmsnorm"].reference.clone().unwrap();
    let json = r#"{"reference": {"arguments": [{"name": "x", "allocation": "x", "shape": [4, 1024], "dtype": "f32"},
                                 {"name": "eps", "parameter": "rmsnorm_param_5"}]},
 "outputs": {"kind": "dense_tensor", "left_allocation": "reference.output0", "right_allocation": "out",
             "shape": [4, 1024], "element_bytes": 4, "right_offset": 32, "right_strides_bytes": [4096, 4]}}"#;
    let mut from_json = parse_reference_binding(json, "b.json", Path::new("ref/reference.py"), &input()).unwrap();
    // lark.toml does not restate the element type (the buffer's dtype says it).
    for a in &mut from_json.args {
        if let spec::ArgBinding::Buffer { dtype, .. } = &mut a.binding {
            *dtype = None;
        }
    }
    assert_eq!(from_json, from_toml);
}

#[test]
fn attaches_with_places_for_validation() {
    let mut i = input();
    let json = "{\"reference\": {\"arguments\": [\n  {\"name\": \"x\", \"allocation\": \"nope\", \"shape\": [\"rows\"], \"dtype\": \"f32\"}]},\n \"outputs\": {\"kind\": \"dense_tensor\", \"tensors\": [{\"left_allocation\": \"reference.output0\", \"right_allocation\": \"out\", \"shape\": [4], \"element_bytes\": 4}]}}";
    i.attach_reference_binding(json, "b.json", Path::new("r.py")).unwrap();
    let k = &i.kernels["rmsnorm"];
    let names = |n: &[&str], ptr| spec::ParamNames::new(n, ptr);
    let params = [
        names(&["rmsnorm_param_0"], true),
        names(&["rmsnorm_param_1"], true),
        names(&["rmsnorm_param_2"], true),
        names(&["rmsnorm_param_3"], false),
        names(&["rmsnorm_param_4"], false),
        names(&["rmsnorm_param_5"], false),
    ];
    let shown: Vec<String> = k.validate(&params).iter().map(ToString::to_string).collect();
    expect![[r#"
        b.json:2:31: reference.arguments[0].allocation: `nope` is not a pointer parameter of this kernel (pointers: rmsnorm_param_0, rmsnorm_param_1, rmsnorm_param_2)
        b.json:2:50: reference.arguments[0].shape[0]: `rows` is not a scalar parameter of this kernel (scalars: rmsnorm_param_3, rmsnorm_param_4, rmsnorm_param_5)"#]]
    .assert_eq(&shown.join("\n"));
}

#[test]
fn errors() {
    let out = r#""outputs": {"kind": "dense_tensor", "tensors": [{"left_allocation": "reference.output0", "right_allocation": "out", "shape": [4], "element_bytes": 4}]}"#;
    let args = |a: &str| format!("{{\"reference\": {{\"arguments\": [{a}]}},\n {out}}}");
    check("[]", expect!["1:1 : expected an object, found an array"]);
    check("{\"reference\": {\"arguments\": []}", expect!["1:31 : EOF while parsing an object"]);
    check(&format!("{{{out}}}"), expect!["1:1 : missing `reference` (with `arguments`)"]);
    check("{\"reference\": {\"arguments\": []}}", expect!["1:1 : missing `outputs` (which kernel buffers hold the reference's results)"]);
    check(&format!("{{\"reference\": {{\"args\": []}}, {out}}}"), expect!["1:16 reference.args: unknown key `args` (expected arguments, outputs)"]);
    check(
        &format!("{{\"reference\": {{\"arguments\": []}}, \"extra\": 1, {out}}}"),
        expect!["1:34 extra: unknown key `extra` (expected reference, outputs, left_inputs, right_inputs, provenance, schema)"],
    );
    check(&args(r#"{"allocation": "x"}"#), expect!["1:30 reference.arguments[0]: missing `name` (the reference function's parameter)"]);
    check(
        &args(r#"{"name": "x", "shape": [1], "dtype": "f32"}"#),
        expect!["1:30 reference.arguments[0]: missing `allocation` (a tensor argument has allocation, shape and dtype; or give `parameter` or `value`)"],
    );
    check(&args(r#"{"name": "x", "allocation": "x", "shape": [1], "dtype": "f33"}"#), expect!["1:86 reference.arguments[0].dtype: unknown dtype `f33` (expected f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64 or u64, or torch names such as float32)"]);
    check(
        &args(r#"{"name": "x", "allocation": "x", "shape": [1.5], "dtype": "f32"}"#),
        expect!["1:73 reference.arguments[0].shape[0]: expected a non-negative integer or a size expression, found a float"],
    );
    check(
        &args(r#"{"name": "x", "allocation": "x", "shape": ["rows *"], "dtype": "f32"}"#),
        expect!["1:73 reference.arguments[0].shape[0]: expected a number, a name or `(`, found the end of the expression"],
    );
    check(
        &args(r#"{"name": "x", "allocation": "x", "shape": [1], "dtype": "f32", "offset": 4}"#),
        expect!["1:103 reference.arguments[0].offset: tensor arguments at an offset are not supported yet"],
    );
    check(
        &args(r#"{"name": "x", "allocation": {"input": "/declarations/0/object"}, "shape": [1], "dtype": "f32"}"#),
        expect![[r#"1:58 reference.arguments[0].allocation: values taken from the kernel input (`{"input": ...}`) are not supported yet; write the value"#]],
    );
    check(
        &args(r#"{"name": "n", "parameter": "p", "value": 3}"#),
        expect!["1:62 reference.arguments[0].value: unknown key `value` (expected name, parameter, parameter_offset)"],
    );
    check(
        &args(r#"{"name": "n", "parameter": "p", "parameter_offset": 4}"#),
        expect!["1:82 reference.arguments[0].parameter_offset: fields at an offset inside a parameter are not supported yet"],
    );
    check(
        &args(r#"{"name": "n", "value": [1, 2]}"#),
        expect!["1:53 reference.arguments[0].value: expected a number, found an array (only numbers are supported as constant arguments)"],
    );
    check(&args(r#"{"name": "n", "value": 1}, {"name": "n", "value": 2}"#), expect!["1:66 reference.arguments[1].name: argument `n` is bound twice"]);
    let outs = |o: &str| format!("{{\"reference\": {{\"arguments\": []}},\n \"outputs\": {o}}}");
    check(&outs("[]"), expect!["2:13 outputs: expected an object, found an array"]);
    check(&outs(r#"{"tensors": []}"#), expect!["2:13 outputs: missing `kind` (dense_tensor or dense_tensors)"]);
    check(&outs(r#"{"kind": "sparse"}"#), expect!["2:22 outputs.kind: unknown output kind `sparse` (expected dense_tensor or dense_tensors)"]);
    let t = |fields: &str| outs(&format!("{{\"kind\": \"dense_tensors\", \"tensors\": [{{{fields}}}]}}"));
    check(&t(r#""left_allocation": "reference.output0", "shape": [4], "element_bytes": 4"#), expect!["2:51 outputs.tensors[0]: missing `right_allocation`"]);
    check(
        &t(r#""left_allocation": "output0", "right_allocation": "out", "shape": [4], "element_bytes": 4"#),
        expect!["2:71 outputs.tensors[0].left_allocation: expected `reference.outputN` (the N-th returned tensor), found `output0`"],
    );
    check(
        &t(r#""left_allocation": "reference.output1", "right_allocation": "out", "shape": [4], "element_bytes": 4"#),
        expect!["2:13 outputs: reference.output0 is not bound to a kernel buffer"],
    );
    check(
        &t(r#""left_allocation": "reference.output0", "right_allocation": "out", "shape": [4], "element_bytes": 0"#),
        expect!["2:150 outputs.tensors[0].element_bytes: expected a positive integer, found 0"],
    );
    check(
        &t(r#""left_allocation": "reference.output0", "right_allocation": "out", "shape": [4], "element_bytes": 4, "right_offset": 6"#),
        expect!["2:169 outputs.tensors[0].right_offset: 6 bytes is not a whole number of 4-byte elements"],
    );
    check(
        &t(r#""left_allocation": "reference.output0", "right_allocation": "out", "shape": [4, 2], "element_bytes": 4, "right_strides_bytes": [8, 2]"#),
        expect!["2:183 outputs.tensors[0].right_strides_bytes[1]: 2 bytes is not a whole number of 4-byte elements"],
    );
    check(
        &t(r#""left_allocation": "reference.output0", "right_allocation": "out", "shape": [4, 2], "element_bytes": 4, "right_strides_bytes": [8]"#),
        expect!["2:179 outputs.tensors[0].right_strides_bytes: one stride per dimension: the shape has 2 dimensions, found 1 strides"],
    );
    check(
        &t(r#""left_allocation": "reference.output0", "right_allocation": "out", "shape": [4], "element_bytes": 4, "left_offset": 4"#),
        expect!["2:168 outputs.tensors[0].left_offset: a reference output at an offset is not supported yet"],
    );
    check(
        &t(r#""left_allocation": "reference.output0", "right_allocation": "out", "shape": [4, 2], "element_bytes": 4, "left_strides_bytes": [4, 16]"#),
        expect!["2:178 outputs.tensors[0].left_strides_bytes: a strided reference output is not supported yet (only contiguous row-major)"],
    );
    check(&t(r#""left_allocation": "reference.output0", "right_allocation": "out", "shape": [4], "element_bytes": 4, "stride": 1"#), expect!["2:153 outputs.tensors[0].stride: unknown key `stride` (expected left_allocation, right_allocation, shape, element_bytes, left_offset, right_offset, left_strides_bytes, right_strides_bytes)"]);
    check(
        &outs(
            r#"{"kind": "dense_tensors", "tensors": [{"left_allocation": "reference.output0", "right_allocation": "out", "shape": [4], "element_bytes": 4}, {"left_allocation": "reference.output0", "right_allocation": "w", "shape": [4], "element_bytes": 4}]}"#,
        ),
        expect!["2:174 outputs.tensors[1].left_allocation: reference.output0 is bound twice"],
    );
    check(&outs(r#"{"kind": "dense_tensor", "tensors": []}"#), expect!["2:49 outputs.tensors: a dense_tensor output has one tensor, found 0"]);
}
