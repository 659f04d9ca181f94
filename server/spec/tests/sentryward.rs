//! SentryWard's kernel-input JSON: the accepted forms, and every error at its line, column and
//! JSON path.

use expect_test::{expect, Expect};
use spec::parse_sentryward_json;
use std::path::Path;

fn check_error(text: &str, expect: Expect) {
    let e = parse_sentryward_json("in.json", text, "*").expect_err("an error");
    expect.assert_eq(&format!("{}:{} {}: {}", e.line, e.column, e.key, e.message));
}

/// The interface a document gives, written as lark.toml, with the declared object names.
fn check_accepted(text: &str, expect: Expect) {
    let i = parse_sentryward_json("in.json", text, "*").unwrap_or_else(|e| panic!("{e}"));
    let mut shown = i.to_toml(Path::new("."));
    for (name, k) in &i.kernels {
        for (object, key) in &k.objects {
            shown.push_str(&format!("# {name}: object `{object}` is `{key}`\n"));
        }
    }
    expect.assert_eq(&shown);
}

/// A valid document with `launch` replaced.
fn with_launch(launch: &str) -> String {
    format!("{{\"schema\": \"spverify.kernel-input/v1\",\n \"launch\": {launch}}}")
}

#[test]
fn accepts_the_documented_forms() {
    check_accepted(
        r#"{"schema": "spverify.kernel-input/v1", "entry": "rmsnorm",
 "launch": {"grid_dim": [4, 1, 1], "block_dim": [128, 1, 1], "dynamic_shared_bytes": 512, "cluster_dim": [1, 1, 1]},
 "declarations": [{"parameter": "rmsnorm_param_0", "object": "x", "type": "pointer", "space": "global", "offset": 0},
                  {"parameter": 1, "name": "out", "type": "pointer"},
                  {"parameter": "rmsnorm_param_3", "name": "n", "type": "u32"}],
 "arguments": [{"field": "n", "value": 512},
               {"parameter": "rmsnorm_param_4", "type": "f32", "value": 1e-6},
               {"parameter": 5, "type": "s64", "value": -3},
               {"parameter": "rmsnorm_param_6", "type": "u64", "value": null}],
 "shape_arrays": [{"parameter": "rmsnorm_param_2", "shapes": [[4, 1024], [1, 7]]}],
 "assumptions": {}, "tma_descriptors": []}"#,
        expect![[r#"
            [kernel.rmsnorm]
            grid = [4, 1, 1]
            block = [128, 1, 1]
            dynamic_shared_bytes = 512
            [kernel.rmsnorm.params]
            param_1 = {  }
            param_5 = { value = -3 }
            rmsnorm_param_0 = {  }
            rmsnorm_param_2 = { dtype = "i32", len = 4, values = [4, 1024, 1, 7] }
            rmsnorm_param_3 = { value = 512 }
            rmsnorm_param_4 = { value = 1e-6 }
            # rmsnorm: object `n` is `rmsnorm_param_3`
            # rmsnorm: object `out` is `param_1`
            # rmsnorm: object `x` is `rmsnorm_param_0`
        "#]],
    );
    // Without `entry` the input applies to the kernel the caller names ("*": every kernel).
    let i = parse_sentryward_json("in.json", &with_launch(r#"{"grid_dim": [1, 1, 1], "block_dim": [32, 1, 1]}"#), "*").unwrap();
    assert!(i.kernel("anything").is_some());
    // A shape array on a declared pointer fills that buffer.
    check_accepted(
        r#"{"schema": "spverify.kernel-input/v1", "launch": {"grid_dim": [1], "block_dim": [32]},
 "declarations": [{"parameter": "p", "object": "slots", "type": "pointer"}],
 "shape_arrays": [{"parameter": "p", "shapes": [[3, 1]]}]}"#,
        expect![[r#"
            [kernel."*"]
            grid = [1, 1, 1]
            block = [32, 1, 1]
            [kernel."*".params]
            p = { dtype = "i32", len = 2, values = [3, 1] }
            # *: object `slots` is `p`
        "#]],
    );
}

#[test]
fn document_errors() {
    check_error("[1]", expect!["1:1 : expected an object, found an array"]);
    check_error("{\"launch\": {}", expect!["1:13 : EOF while parsing an object"]);
    check_error(
        "{\n  \"launch\": {\"grid_dim\": [1, 1, 1], \"block_dim\": [32, 1, 1]}\n}",
        expect![[r#"1:1 : missing `schema` (expected "spverify.kernel-input/v1")"#]],
    );
    check_error(
        "{\"schema\": \"spverify.kernel-input/v2\"}",
        expect!["1:12 schema: unknown schema `spverify.kernel-input/v2` (expected spverify.kernel-input/v1)"],
    );
    check_error("{\"schema\": 1}", expect![[r#"1:12 schema: expected the string "spverify.kernel-input/v1", found an integer"#]]);
    check_error(
        "{\"schema\": \"spverify.kernel-input/v1\",\n \"lanch\": {}}",
        expect!["2:2 lanch: unknown key `lanch` (expected schema, entry, launch, declarations, arguments, shape_arrays, tma_descriptors, assumptions, data_branch_loop_iterations, address_invariants, branch_decisions)"],
    );
    check_error("{\"schema\": \"spverify.kernel-input/v1\"}", expect!["1:1 : missing `launch` (with `grid_dim` and `block_dim`)"]);
    check_error(
        "{\"schema\": \"spverify.kernel-input/v1\", \"entry\": 3, \"launch\": {\"grid_dim\": [1], \"block_dim\": [1]}}",
        expect!["1:49 entry: expected a kernel name, found an integer"],
    );
    check_error(
        "{\"schema\": \"spverify.kernel-input/v1\",\n \"launch\": {\"grid_dim\": [1], \"block_dim\": [1]},\n \"launch\": {\"grid_dim\": [1], \"block_dim\": [1]}}",
        expect!["3:2 launch: duplicate key"],
    );
}

#[test]
fn launch_errors() {
    check_error(&with_launch("[1]"), expect!["2:12 launch: expected an object, found an array"]);
    check_error(&with_launch(r#"{"grid_dim": [1, 1, 1]}"#), expect!["2:12 launch: missing `block_dim` (launch dimensions are required)"]);
    check_error(&with_launch(r#"{"grid_dim": [1, 1, 1], "block_dim": 32}"#), expect!["2:49 launch.block_dim: expected [x, y, z], found an integer"]);
    check_error(&with_launch(r#"{"grid_dim": [1, 1, 1, 1], "block_dim": [32]}"#), expect!["2:25 launch.grid_dim: expected [x, y, z], found an array"]);
    check_error(&with_launch(r#"{"grid_dim": [0, 1, 1], "block_dim": [32]}"#), expect!["2:26 launch.grid_dim[0]: expected a positive integer, found 0"]);
    check_error(
        &with_launch(r#"{"grid_dim": [1], "block_dim": [2048, 1, 1]}"#),
        expect!["2:44 launch.block_dim[0]: block x is at most 1024 (CUDA's limit), found 2048"],
    );
    check_error(
        &with_launch(r#"{"grid_dim": [1], "block_dim": [32, 1, 65]}"#),
        expect!["2:51 launch.block_dim[2]: block z is at most 64 (CUDA's limit), found 65"],
    );
    check_error(
        &with_launch(r#"{"grid_dim": [1], "block_dim": [64, 32, 1]}"#),
        expect!["2:43 launch.block_dim: a block has at most 1024 threads (CUDA's limit), found 2048"],
    );
    check_error(
        &with_launch(r#"{"grid_dim": [1, 70000, 1], "block_dim": [32]}"#),
        expect!["2:29 launch.grid_dim[1]: grid y is at most 65535 (CUDA's limit), found 70000"],
    );
    check_error(
        &with_launch(r#"{"grid_dim": [1], "block_dim": [32], "dynamic_shared_bytes": -1}"#),
        expect!["2:73 launch.dynamic_shared_bytes: expected a non-negative integer, found -1"],
    );
    check_error(
        &with_launch(r#"{"grid_dim": [1], "block_dim": [32], "grid": [1]}"#),
        expect!["2:49 launch.grid: unknown key `grid` (expected grid_dim, block_dim, cluster_dim, dynamic_shared_bytes)"],
    );
    check_error(
        &with_launch(r#"{"grid_dim": [1], "block_dim": [32], "cluster_dim": [0]}"#),
        expect!["2:65 launch.cluster_dim[0]: expected a positive integer, found 0"],
    );
}

/// A valid document with more members.
fn doc(rest: &str) -> String {
    format!("{{\"schema\": \"spverify.kernel-input/v1\", \"launch\": {{\"grid_dim\": [1], \"block_dim\": [32]}},\n {rest}}}")
}

#[test]
fn declaration_errors() {
    check_error(&doc(r#""declarations": {}"#), expect!["2:18 declarations: expected an array, found an object"]);
    check_error(&doc(r#""declarations": [3]"#), expect!["2:19 declarations[0]: expected an object, found an integer"]);
    check_error(&doc(r#""declarations": [{"type": "pointer"}]"#), expect!["2:19 declarations[0]: missing `parameter` (the PTX parameter name or position)"]);
    check_error(&doc(r#""declarations": [{"parameter": "p"}]"#), expect![[r#"2:19 declarations[0]: missing `type` ("pointer" or a PTX scalar type)"#]]);
    check_error(
        &doc(r#""declarations": [{"parameter": -1, "type": "pointer"}]"#),
        expect!["2:33 declarations[0].parameter: expected a PTX parameter name or a position, found -1"],
    );
    check_error(
        &doc(r#""declarations": [{"parameter": "p", "type": "ptr"}]"#),
        expect![[r#"2:46 declarations[0].type: unknown parameter type `ptr` (expected "pointer" or a PTX scalar type such as u32, s64, f32)"#]],
    );
    check_error(
        &doc(r#""declarations": [{"parameter": "n", "type": "u32", "object": "n"}]"#),
        expect!["2:63 declarations[0].object: scalar declarations do not name memory objects"],
    );
    check_error(
        &doc(r#""declarations": [{"parameter": "p", "type": "pointer", "space": "shared"}]"#),
        expect!["2:66 declarations[0].space: only global pointers are supported, found `shared`"],
    );
    check_error(
        &doc(r#""declarations": [{"parameter": "p", "type": "pointer", "offset": 8}]"#),
        expect!["2:67 declarations[0].offset: fields at an offset inside a parameter are not supported yet"],
    );
    check_error(
        &doc(r#""declarations": [{"parameter": "p", "type": "pointer", "size": 8}]"#),
        expect!["2:57 declarations[0].size: unknown key `size` (expected parameter, type, object, name, space, offset)"],
    );
    check_error(
        &doc(r#""declarations": [{"parameter": "p", "type": "pointer"}, {"parameter": "p", "type": "pointer"}]"#),
        expect!["2:58 declarations[1]: parameter `p` is declared twice"],
    );
    check_error(
        &doc(r#""declarations": [{"parameter": "p", "type": "pointer", "name": ""}]"#),
        expect!["2:65 declarations[0].name: expected a nonempty string, found a string"],
    );
}

#[test]
fn argument_errors() {
    check_error(&doc(r#""arguments": {"n": 1}"#), expect!["2:15 arguments: expected an array, found an object"]);
    check_error(&doc(r#""arguments": [{"parameter": "n", "value": 1}]"#), expect!["2:16 arguments[0]: missing `type` (the PTX scalar type of the argument)"]);
    check_error(&doc(r#""arguments": [{"parameter": "n", "type": "u32"}]"#), expect!["2:16 arguments[0]: missing `value`"]);
    check_error(
        &doc(r#""arguments": [{"parameter": "n", "type": "u32", "value": -3}]"#),
        expect!["2:59 arguments[0].value: value -3 is outside u32 (0 to 4294967295)"],
    );
    check_error(
        &doc(r#""arguments": [{"parameter": "n", "type": "s8", "value": 128}]"#),
        expect!["2:58 arguments[0].value: value 128 is outside s8 (-128 to 127)"],
    );
    check_error(
        &doc(r#""arguments": [{"parameter": "n", "type": "u32", "value": 3.5}]"#),
        expect!["2:59 arguments[0].value: expected an integer for a u32 argument, found 3.5"],
    );
    check_error(
        &doc(r#""arguments": [{"parameter": "n", "type": "int", "value": 3}]"#),
        expect!["2:43 arguments[0].type: unknown scalar type `int` (expected a PTX type such as u32, s64, f32)"],
    );
    check_error(
        &doc(r#""arguments": [{"parameter": "n", "type": "u32", "value": "3"}]"#),
        expect!["2:59 arguments[0].value: expected a number, found a string"],
    );
    check_error(&doc(r#""arguments": [{"field": "m", "value": 3}]"#), expect!["2:26 arguments[0].field: no declaration is named `m`"]);
    check_error(
        &doc(r#""arguments": [{"field": "m", "value": 3, "type": "u32"}]"#),
        expect!["2:43 arguments[0].type: unknown key `type` (expected field, value)"],
    );
    check_error(
        &doc(r#""arguments": [{"parameter": "n", "type": "u32", "value": 3, "name": "n"}]"#),
        expect!["2:62 arguments[0].name: unknown key `name` (expected parameter, type, value, offset)"],
    );
    check_error(
        &doc(r#""declarations": [{"parameter": "p", "type": "pointer"}], "arguments": [{"parameter": "p", "type": "u64", "value": 0}]"#),
        expect!["2:73 arguments[0]: `p` is declared a pointer; it takes no scalar value"],
    );
    check_error(
        &doc(
            r#""arguments": [{"parameter": "n", "type": "u32", "value": 1}, {"parameter": 0, "type": "u32", "value": 2}, {"parameter": "n", "type": "u32", "value": 3}]"#,
        ),
        expect!["2:108 arguments[2]: `n` has two arguments"],
    );
}

/// `element_type` (as SentryWard's checker reads it) gives 64-bit or unsigned index buffers.
#[test]
fn shape_arrays_with_an_element_type() {
    check_accepted(
        &doc(
            r#""shape_arrays": [{"parameter": "p", "shapes": [[3000000000], [1]], "element_type": "s64"}, {"parameter": "q", "shapes": [[7]], "element_type": "u32"}]"#,
        ),
        expect![[r#"
            [kernel."*"]
            grid = [1, 1, 1]
            block = [32, 1, 1]
            [kernel."*".params]
            p = { dtype = "i64", len = 2, values = [3000000000, 1] }
            q = { dtype = "u32", len = 1, values = [7] }
        "#]],
    );
}

#[test]
fn shape_array_errors() {
    check_error(&doc(r#""shape_arrays": {}"#), expect!["2:18 shape_arrays: expected an array, found an object"]);
    check_error(&doc(r#""shape_arrays": [{"parameter": "p"}]"#), expect!["2:19 shape_arrays[0]: missing `shapes` (the arrays of integers the buffer holds)"]);
    check_error(
        &doc(r#""shape_arrays": [{"parameter": "p", "shapes": []}]"#),
        expect!["2:48 shape_arrays[0].shapes: expected a nonempty array of shapes, found an array"],
    );
    check_error(
        &doc(r#""shape_arrays": [{"parameter": "p", "shapes": [1, 2]}]"#),
        expect!["2:49 shape_arrays[0].shapes[0]: expected a nonempty array of integers, found an integer"],
    );
    check_error(
        &doc(r#""shape_arrays": [{"parameter": "p", "shapes": [[1, 2], [3]]}]"#),
        expect!["2:57 shape_arrays[0].shapes[1]: shapes have equal rank: the first has 2 dimensions, this one 1"],
    );
    check_error(
        &doc(r#""shape_arrays": [{"parameter": "p", "shapes": [[1, -2]]}]"#),
        expect!["2:53 shape_arrays[0].shapes[0][1]: expected an integer from 0 to 2147483647, found -2"],
    );
    check_error(
        &doc(r#""shape_arrays": [{"parameter": "p", "shapes": [[3000000000]]}]"#),
        expect!["2:50 shape_arrays[0].shapes[0][0]: expected an integer from 0 to 2147483647, found 3000000000"],
    );
    check_error(
        &doc(r#""shape_arrays": [{"parameter": "p", "shapes": [[1]], "element_type": "f32"}]"#),
        expect!["2:71 shape_arrays[0].element_type: expected a 32- or 64-bit integer type (s32, u32, s64 or u64), found `f32`"],
    );
    check_error(
        &doc(r#""shape_arrays": [{"parameter": "p", "shapes": [[5000000000]], "element_type": "u32"}]"#),
        expect!["2:50 shape_arrays[0].shapes[0][0]: expected an integer from 0 to 4294967295, found 5000000000"],
    );
    check_error(
        &doc(r#""shape_arrays": [{"parameter": "p", "shapes": [[1]], "type": "i64"}]"#),
        expect!["2:55 shape_arrays[0].type: unknown key `type` (expected parameter, shapes, element_type)"],
    );
    check_error(
        &doc(r#""arguments": [{"parameter": "n", "type": "u32", "value": 1}], "shape_arrays": [{"parameter": "n", "shapes": [[1]]}]"#),
        expect!["2:81 shape_arrays[0]: `n` has a scalar argument; a shape array is a buffer"],
    );
    check_error(
        &doc(r#""shape_arrays": [{"parameter": "p", "shapes": [[1]]}, {"parameter": "p", "shapes": [[2]]}]"#),
        expect!["2:56 shape_arrays[1]: `p` has two shape arrays"],
    );
}

#[test]
fn an_entry_must_name_a_kernel_of_the_module() {
    let text = "{\"schema\": \"spverify.kernel-input/v1\",\n \"entry\": \"rmsnrom\",\n \"launch\": {\"grid_dim\": [1], \"block_dim\": [32]}}";
    let i = parse_sentryward_json("in.json", text, "*").unwrap();
    let errors: Vec<String> = i.unknown_entries(&["rmsnorm", "_Z6reducePKfPfi"]).iter().map(ToString::to_string).collect();
    expect![[r#"["in.json:2:11: entry: no kernel named `rmsnrom` in this module (kernels: rmsnorm, _Z6reducePKfPfi)"]"#]].assert_eq(&format!("{errors:?}"));
    // An entry naming a C++ kernel by its plain name matches its mangled PTX name.
    let text = text.replace("rmsnrom", "reduce");
    let i = parse_sentryward_json("in.json", &text, "*").unwrap();
    assert!(i.unknown_entries(&["rmsnorm", "_Z6reducePKfPfi"]).is_empty());
    // Without `entry` there is nothing to check.
    let i = parse_sentryward_json("in.json", &with_launch(r#"{"grid_dim": [1], "block_dim": [32]}"#), "k").unwrap();
    assert!(i.unknown_entries(&["other"]).is_empty());
}

#[test]
fn wide_integer_types_are_bounded_without_overflow() {
    for (ty, value, ok) in [
        ("u128", "340282366920938463463374607431768211455", false),
        ("s128", "-5", true),
        ("b128", "7", true),
        ("u64", "18446744073709551615", true),
        ("s64", "-9223372036854775808", true),
        ("b8", "255", true),
        ("b8", "-128", true),
        ("b8", "256", false),
    ] {
        let text = doc(&format!(r#""arguments": [{{"parameter": "n", "type": "{ty}", "value": {value}}}]"#));
        assert_eq!(parse_sentryward_json("in.json", &text, "*").is_ok(), ok, "{ty} {value}");
    }
}
