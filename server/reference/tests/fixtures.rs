//! Data-driven fixtures: every case of `fixtures/cases.toml` is parsed, lowered and evaluated
//! exactly, and compared with what real PyTorch (float64) computed on the same inputs
//! (`fixtures/expected.json`, written by `gen_expected.py`). Floats agree to a relative 1e-9
//! (plus 1e-12 absolute, for results that cancel to about zero); integers exactly.

use num_rational::BigRational;
use reference::{parse, run, ConcreteArg, DType, Number, Value};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    source: String,
    entry: Option<String>,
    args: Vec<ArgSpec>,
}

#[derive(Deserialize)]
struct ArgSpec {
    shape: Option<Vec<usize>>,
    dtype: Option<String>,
    index: Option<Vec<usize>>,
    values: Option<Vec<f64>>,
    int: Option<i64>,
    float: Option<String>,
}

#[derive(Deserialize)]
struct Expected {
    cases: BTreeMap<String, ExpectedCase>,
}

#[derive(Deserialize)]
struct ExpectedCase {
    inputs: Vec<Option<Vec<f64>>>,
    outputs: Vec<ExpectedTensor>,
}

#[derive(Deserialize)]
struct ExpectedTensor {
    shape: Vec<usize>,
    integer: bool,
    values: Vec<f64>,
}

fn load() -> (Vec<Case>, Expected) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let cases: Cases = toml::from_str(&std::fs::read_to_string(format!("{dir}/cases.toml")).unwrap()).unwrap();
    let expected: Expected = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/expected.json")).unwrap()).unwrap();
    (cases.case, expected)
}

fn concrete_args(case: &Case, inputs: &[Option<Vec<f64>>]) -> Vec<ConcreteArg> {
    case.args
        .iter()
        .zip(inputs)
        .map(|(spec, input)| {
            if let Some(shape) = &spec.shape {
                let dtype = DType::from_name(spec.dtype.as_deref().unwrap_or("f32")).expect("fixture dtype");
                let values = input.as_ref().expect("generated inputs for a float tensor").iter().map(|&v| BigRational::from_float(v).unwrap()).collect();
                ConcreteArg::Tensor { shape: shape.clone(), dtype, values }
            } else if let Some(shape) = &spec.index {
                let values = spec.values.as_ref().expect("index values").iter().map(|&v| v as i64).collect();
                ConcreteArg::IntTensor { shape: shape.clone(), values }
            } else if let Some(i) = spec.int {
                ConcreteArg::Scalar(Number::Int(i))
            } else {
                let text = spec.float.as_ref().expect("an argument kind");
                ConcreteArg::Scalar(Number::Float(reference::front::parse_float_literal(text).expect("a float literal")))
            }
        })
        .collect()
}

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() <= 1e-9 * actual.abs().max(expected.abs()) + 1e-12
}

/// Runs one case; the differences found, as messages.
fn check_case(case: &Case, expected: &ExpectedCase) -> Vec<String> {
    let program = match parse(&case.source, case.entry.as_deref()) {
        Ok(p) => p,
        Err(e) => return vec![format!("parse error at {:?}: {}", e.span, e.message)],
    };
    let args = concrete_args(case, &expected.inputs);
    let (outputs, _notes) = match run(&program, &args) {
        Ok(r) => r,
        Err(e) => return vec![format!("lowering error at {:?} (`{}`): {}", e.span, &case.source[e.span.clone()], e.message)],
    };
    let mut problems = Vec::new();
    if outputs.len() != expected.outputs.len() {
        problems.push(format!("{} outputs, PyTorch returned {}", outputs.len(), expected.outputs.len()));
        return problems;
    }
    for (k, (out, want)) in outputs.iter().zip(&expected.outputs).enumerate() {
        if out.shape != want.shape {
            problems.push(format!("output {k}: shape {:?}, PyTorch {:?}", out.shape, want.shape));
            continue;
        }
        if want.integer != out.dtype.is_integral() {
            problems.push(format!("output {k}: dtype {}, PyTorch integer={}", out.dtype, want.integer));
        }
        for (i, (v, &w)) in out.values.iter().zip(&want.values).enumerate() {
            let ok = match v {
                Value::Exact(r) if want.integer => r.is_integer() && *r == BigRational::from_float(w).unwrap(),
                Value::Invalid(_) => false,
                other => close(other.to_f64().unwrap(), w),
            };
            if !ok {
                problems.push(format!("output {k}[{i}]: {v:?}, PyTorch {w}"));
            }
        }
    }
    problems
}

#[test]
fn every_fixture_matches_pytorch() {
    let (cases, expected) = load();
    let mut failures = Vec::new();
    for case in &cases {
        let Some(want) = expected.cases.get(&case.name) else {
            failures.push(format!("{}: no expected values (run tests/gen_expected.py)", case.name));
            continue;
        };
        for problem in check_case(case, want) {
            failures.push(format!("{}: {problem}", case.name));
        }
    }
    for name in expected.cases.keys() {
        if !cases.iter().any(|c| &c.name == name) {
            failures.push(format!("{name}: in expected.json but not in cases.toml (regenerate)"));
        }
    }
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
    assert!(cases.len() >= 50, "the fixture set shrank to {}", cases.len());
}
