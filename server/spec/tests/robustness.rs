//! Bad input is an error, never a panic: valid documents with random damage go through every
//! parser (and, when they still parse, through validation, resolution and the TOML writer).

use proptest::prelude::*;
use spec::{parse_lark_toml_recovering, parse_reference_binding, parse_sentryward_json, Interface, ParamNames, SizeExpr};
use std::collections::BTreeMap;
use std::path::Path;

const TOML: &str = r#"[kernel.k]
grid = ["ceil_div(rows, 4)", [1, 8], 1]
block = [256, 1, 1]
dynamic_shared_bytes = 0
[kernel.k.params]
x = { dtype = "f32", len = "rows * cols" }
s = { dtype = "i8", len = 4, values = [[1, 2], [3, 4]], assume = ["injective", "in_range(0, 9)"] }
rows = { range = [1, 64] }
cols = { value = 7 }
[kernel.k.reference]
file = "r.py"
function = "M.forward"
[kernel.k.reference.args]
x = { buffer = "x", shape = ["rows", "cols"] }
c = { param = "cols" }
[[kernel.k.reference.outputs]]
buffer = "x"
shape = ["rows"]
offset = "cols % 3"
strides = ["cols"]
[[kernel.k.reference.shapes]]
rows = 2
"#;

const JSON: &str = r#"{"schema": "spverify.kernel-input/v1", "entry": "k",
 "launch": {"grid_dim": [4, 1, 1], "block_dim": [128, 1, 1], "dynamic_shared_bytes": 8},
 "declarations": [{"parameter": "k_param_0", "object": "x", "type": "pointer"}, {"parameter": 1, "name": "n", "type": "u32"}],
 "arguments": [{"field": "n", "value": 512}, {"parameter": "k_param_2", "type": "f32", "value": 1.5}],
 "shape_arrays": [{"parameter": "k_param_3", "shapes": [[1, 2], [3, 4]]}]}"#;

const BINDING: &str = r#"{"reference": {"arguments": [{"name": "x", "allocation": "x", "shape": [4, "n"], "dtype": "f32"}, {"name": "n", "parameter": 1}]},
 "outputs": {"kind": "dense_tensors", "tensors": [{"left_allocation": "reference.output0", "right_allocation": "x", "shape": [4], "element_bytes": 4, "right_offset": 8, "right_strides_bytes": [4]}]}}"#;

/// `text` with `len` bytes from `at` replaced by `insert` (on character boundaries).
fn damage(text: &str, at: usize, len: usize, insert: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = at % (chars.len() + 1);
    let end = (at + len).min(chars.len());
    chars[..at].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(chars[end..].iter()).collect()
}

fn insert() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("\"".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("-".to_string()),
        Just("0".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("-170141183460469231731687303715884105728".to_string()),
        Just("/ 0".to_string()),
        Just("é".to_string()),
        Just("\n".to_string()),
        Just(",".to_string()),
        Just("null".to_string()),
        Just("1e400".to_string()),
        "[ -~]{0,6}",
    ]
}

fn params() -> Vec<ParamNames> {
    ["x", "s", "rows", "cols"].iter().enumerate().map(|(i, n)| ParamNames::new(&[n, &format!("param_{i}")], i < 2)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn damaged_lark_toml_never_panics(at in 0usize..1000, len in 0usize..6, ins in insert()) {
        let text = damage(TOML, at, len, &ins);
        let (iface, _) = parse_lark_toml_recovering("lark.toml", &text);
        for k in iface.kernels.values() {
            let _ = k.validate(&params());
            let _ = k.resolve(&BTreeMap::from([("rows".to_string(), 3)]));
            let _ = k.grid_range();
            let _ = k.block_range();
        }
        let _ = iface.to_toml(Path::new(""));
        let _ = Interface::merge(&[(spec::SourceKind::LarkToml, &iface), (spec::SourceKind::Input, &iface)]);
    }

    #[test]
    fn damaged_sentryward_json_never_panics(at in 0usize..700, len in 0usize..6, ins in insert()) {
        let text = damage(JSON, at, len, &ins);
        if let Ok(i) = parse_sentryward_json("in.json", &text, "*") {
            let _ = i.unknown_entries(&["k"]);
            let _ = parse_reference_binding(BINDING, "b.json", Path::new("r.py"), &i);
        }
    }

    #[test]
    fn damaged_reference_binding_never_panics(at in 0usize..500, len in 0usize..6, ins in insert()) {
        let input = parse_sentryward_json("in.json", JSON, "*").unwrap();
        let text = damage(BINDING, at, len, &ins);
        let _ = parse_reference_binding(&text, "b.json", Path::new("r.py"), &input);
    }

    #[test]
    fn any_size_expression_text_never_panics(text in "[ -~]{0,24}") {
        if let Ok(e) = SizeExpr::parse(&text) {
            let _ = e.eval(&|_| Some(i128::MIN));
            let _ = e.bounds(&|_| Some((i128::MIN, i128::MAX)));
            let _ = e.to_string();
        }
    }
}
