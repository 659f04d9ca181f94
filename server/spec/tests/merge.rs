//! Merging interfaces from several sources: fact by fact, by precedence, keeping what only a
//! lower source says, one note per conflict.

use expect_test::expect;
use proptest::prelude::*;
use spec::{
    parse_lark_toml, parse_sentryward_json, Assumption, DType, Dim, Interface, KernelSpec, Len, MergeNote, ParamNames, ParamSpec, ReferenceSpec, Scalar,
    SizeExpr, SourceKind,
};
use std::collections::BTreeMap;

fn notes(n: &[MergeNote]) -> String {
    n.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_higher_source_wins_and_says_so() {
    let input = parse_sentryward_json(
        "in.json",
        r#"{"schema": "spverify.kernel-input/v1", "entry": "k", "launch": {"grid_dim": [8, 1, 1], "block_dim": [256, 1, 1]},
            "arguments": [{"parameter": "n", "type": "u32", "value": 1000}]}"#,
        "*",
    )
    .unwrap();
    let toml = parse_lark_toml(
        "lark.toml",
        "[kernel.k]\ngrid = [4]\nblock = [256]\ndynamic_shared_bytes = 64\n[kernel.k.params]\nn = { value = 1024, range = [1, 4096] }\nx = { dtype = \"f32\", len = \"n\" }\n",
    )
    .unwrap();
    let (merged, n) = Interface::merge(&[(SourceKind::LarkToml, &toml), (SourceKind::Input, &input)]);
    expect![[r#"
        `kernel.k.grid`: --input says [8, 1, 1], lark.toml says [4, 1, 1]; using --input
        `kernel.k.params.n.value`: --input says 1000, lark.toml says 1024; using --input"#]]
    .assert_eq(&notes(&n));
    let k = merged.kernel("k").unwrap();
    // Facts only lark.toml has are kept; the block agrees, so no note.
    assert_eq!(k.dynamic_shared_bytes, Some(64));
    assert_eq!(k.params["n"], ParamSpec::Scalar { value: Some(Scalar::Int(1000)), range: Some((1, 4096)) });
    assert!(matches!(&k.params["x"], ParamSpec::Buffer { len: Some(Len::Param(p)), .. } if p == "n"));
    // Each fact keeps the place of the source it came from.
    assert_eq!(k.origin("grid").file, "in.json");
    assert_eq!(k.origin("dynamic_shared_bytes").file, "lark.toml");
    assert_eq!(k.origin("params.n.value").file, "in.json");
    assert_eq!(k.origin("params.n.range").file, "lark.toml");
    assert_eq!(n[0].ignored_origin.as_ref().map(|o| (o.line, o.column)), Some((2, 8)));
    // merge_missing is the same merge, this interface first.
    let mut old_style = input.clone();
    old_style.merge_missing(&toml);
    assert_eq!(old_style, merged);
}

#[test]
fn scalar_or_buffer_is_a_fact_too() {
    let a = parse_lark_toml("a.toml", "[kernel.k.params]\np = { value = 3 }\n").unwrap();
    let b = parse_lark_toml("b.toml", "[kernel.k.params]\np = { dtype = \"f32\", len = 4 }\n").unwrap();
    let (merged, n) = Interface::merge(&[(SourceKind::Editor, &b), (SourceKind::InterfaceFile, &a)]);
    expect!["`kernel.k.params.p`: --interface says a scalar, editor settings says a buffer; using --interface"].assert_eq(&notes(&n));
    assert_eq!(merged.kernels["k"].params["p"], ParamSpec::Scalar { value: Some(Scalar::Int(3)), range: None });
}

#[test]
fn kernels_match_by_plain_name_and_star() {
    // A SentryWard input without a kernel name applies to every kernel; a lark.toml section
    // by the C++ name applies to the mangled PTX name.
    let input = parse_sentryward_json("in.json", r#"{"schema": "spverify.kernel-input/v1", "launch": {"grid_dim": [2], "block_dim": [64]}}"#, "*").unwrap();
    let toml = parse_lark_toml("lark.toml", "[kernel.reduce]\nblock = [128]\ndynamic_shared_bytes = 8\n[kernel._Z6reducePKfPfi]\ngrid = [3]\n").unwrap();
    let (merged, n) = Interface::merge(&[(SourceKind::Input, &input), (SourceKind::LarkToml, &toml)]);
    expect![[r#"
        `kernel._Z6reducePKfPfi.grid`: --input says [2, 1, 1], lark.toml says [3, 1, 1]; using --input
        `kernel.reduce.block`: --input says [64, 1, 1], lark.toml says [128, 1, 1]; using --input"#]]
    .assert_eq(&notes(&n));
    let k = merged.kernel("_Z6reducePKfPfi").unwrap();
    assert_eq!(k.grid, Some([Dim::exact(2), Dim::exact(1), Dim::exact(1)]));
    // The mangled section itself said nothing about shared memory; the plain one did not
    // reach it because the mangled section exists in lark.toml.
    assert_eq!(k.dynamic_shared_bytes, None);
    assert_eq!(merged.kernel("reduce").unwrap().dynamic_shared_bytes, Some(8));
    assert_eq!(merged.kernel("_Z3fooi").unwrap().grid, Some([Dim::exact(2), Dim::exact(1), Dim::exact(1)]));
}

#[test]
fn canonical_names_let_sources_that_name_parameters_differently_merge() {
    let params = [
        ParamNames::new(&["x", "k_param_0", "param_0"], true),
        ParamNames::new(&["n", "k_param_1", "param_1"], false),
        ParamNames::new(&["rows", "k_param_2", "param_2"], false),
    ];
    let input = parse_sentryward_json(
        "in.json",
        r#"{"schema": "spverify.kernel-input/v1", "entry": "k", "launch": {"grid_dim": [1], "block_dim": [32]},
            "declarations": [{"parameter": 0, "object": "x", "type": "pointer"}],
            "arguments": [{"parameter": "k_param_1", "type": "u32", "value": 10}]}"#,
        "*",
    )
    .unwrap();
    let toml = parse_lark_toml(
        "lark.toml",
        "[kernel.k]\ngrid = [\"k_param_2\"]\n[kernel.k.params]\nn = { value = 12 }\nx = { dtype = \"f32\", len = \"param_1 * rows\" }\n",
    )
    .unwrap();
    let a = input.kernels["k"].with_canonical_names(&params);
    let b = toml.kernels["k"].with_canonical_names(&params);
    let (k, n) = KernelSpec::merge(&[(SourceKind::Input, &a), (SourceKind::LarkToml, &b)], "kernel.k");
    expect![[r#"
        `kernel.k.grid`: --input says [1, 1, 1], lark.toml says ["rows", 1, 1]; using --input
        `kernel.k.params.n.value`: --input says 10, lark.toml says 12; using --input"#]]
    .assert_eq(&notes(&n));
    assert_eq!(k.params.keys().collect::<Vec<_>>(), vec!["n", "x"]);
    assert!(matches!(&k.params["x"], ParamSpec::Buffer { dtype: Some(DType::F32), len: Some(Len::Expr(e)), .. } if e.to_string() == "n * rows"));
    // Names inside size expressions are renamed too.
    assert_eq!(b.grid.as_ref().unwrap()[0], Dim::Expr(SizeExpr::name("rows")));
    assert_eq!(k.objects["x"], "x");
    assert_eq!(k.origin("params.n.value").file, "in.json");
    assert_eq!(k.origin("params.x.len").file, "lark.toml");
    assert!(k.validate(&params).is_empty());
}

// ---- The property: split random facts across random layers. ----

const KINDS: [SourceKind; 5] = [SourceKind::Input, SourceKind::InterfaceFile, SourceKind::LarkToml, SourceKind::Editor, SourceKind::Inferred];

/// One layer's choice for every fact: `None` (says nothing) or an index into that fact's
/// domain of values.
#[derive(Clone, Debug)]
struct Layer {
    kind: SourceKind,
    facts: Vec<Option<usize>>,
    /// Parameters the layer names without saying anything about them.
    bare: Vec<bool>,
}

const FACTS: [&str; 13] = [
    "grid",
    "block",
    "dynamic_shared_bytes",
    "reference",
    "params.n.value",
    "params.n.range",
    "params.m.value",
    "params.x.dtype",
    "params.x.len",
    "params.x.assume",
    "params.x.values",
    "params.y.len",
    "params.y.dtype",
];
const DOMAIN: usize = 3;

fn dims(i: usize) -> [Dim; 3] {
    [
        [Dim::exact(1), Dim::exact(1), Dim::exact(1)],
        [Dim::exact(64), Dim::exact(2), Dim::exact(1)],
        [Dim::Expr(SizeExpr::name("n")), Dim::exact(1), Dim::exact(1)],
    ][i]
        .clone()
}

fn reference(i: usize) -> ReferenceSpec {
    ReferenceSpec { file: format!("ref{i}.py").into(), function: None, args: vec![], outputs: vec![], shapes: vec![] }
}

/// The interface a layer declares.
fn build(layer: &Layer) -> Interface {
    let mut k = KernelSpec::default();
    let f = |i: usize| layer.facts[i];
    k.grid = f(0).map(dims);
    k.block = f(1).map(|i| [Dim::exact(32 << i), Dim::exact(1), Dim::exact(1)]);
    k.dynamic_shared_bytes = f(2).map(|i| i as u64 * 128);
    k.reference = f(3).map(reference);
    let scalar = |v: Option<usize>, r: Option<usize>| ParamSpec::Scalar { value: v.map(|i| Scalar::Int(i as i128)), range: r.map(|i| (0, 4 + i as i128)) };
    if f(4).is_some() || f(5).is_some() || layer.bare[0] {
        k.params.insert("n".into(), scalar(f(4), f(5)));
    }
    if f(6).is_some() || layer.bare[1] {
        k.params.insert("m".into(), scalar(f(6), None));
    }
    let lens = |i: usize| [Len::Elements(4), Len::Param("n".into()), Len::Expr(SizeExpr::parse("n * 2").unwrap())][i].clone();
    let dtypes = |i: usize| [DType::F32, DType::I32, DType::U8][i];
    if f(7).is_some() || f(8).is_some() || f(9).is_some() || f(10).is_some() || layer.bare[2] {
        k.params.insert(
            "x".into(),
            ParamSpec::Buffer {
                dtype: f(7).map(dtypes),
                len: f(8).map(lens),
                assume: f(9).map_or(vec![], |i| {
                    [vec![Assumption::Injective], vec![Assumption::InRange(0, 4)], vec![Assumption::Injective, Assumption::InRange(0, 9)]][i].clone()
                }),
                values: f(10).map(|i| vec![i as i128; i + 1]),
            },
        );
    }
    if f(11).is_some() || f(12).is_some() || layer.bare[3] {
        k.params.insert("y".into(), ParamSpec::Buffer { dtype: f(12).map(dtypes), len: f(11).map(lens), assume: vec![], values: None });
    }
    let mut i = Interface::default();
    i.kernels.insert("k".into(), k);
    i
}

/// The merged interface's value of fact `i`, as the index of the layer-independent domain
/// value it equals (by building a one-fact layer and comparing).
fn fact_of(merged: &KernelSpec, i: usize) -> Option<usize> {
    (0..DOMAIN).find(|&v| {
        let mut facts = vec![None; FACTS.len()];
        facts[i] = Some(v);
        let one = build(&Layer { kind: SourceKind::Input, facts, bare: vec![false; 4] });
        let one = &one.kernels["k"];
        match i {
            0 => merged.grid == one.grid,
            1 => merged.block == one.block,
            2 => merged.dynamic_shared_bytes == one.dynamic_shared_bytes,
            3 => merged.reference == one.reference,
            _ => {
                let p = FACTS[i].split('.').nth(1).unwrap_or_default();
                let field = FACTS[i].rsplit('.').next().unwrap_or_default();
                let get = |k: &KernelSpec| -> Option<String> {
                    match (k.params.get(p)?, field) {
                        (ParamSpec::Scalar { value, .. }, "value") => value.map(|v| format!("{v:?}")),
                        (ParamSpec::Scalar { range, .. }, "range") => range.map(|r| format!("{r:?}")),
                        (ParamSpec::Buffer { dtype, .. }, "dtype") => dtype.map(|d| format!("{d:?}")),
                        (ParamSpec::Buffer { len, .. }, "len") => len.as_ref().map(|l| format!("{l:?}")),
                        (ParamSpec::Buffer { assume, .. }, "assume") => (!assume.is_empty()).then(|| format!("{assume:?}")),
                        (ParamSpec::Buffer { values, .. }, "values") => values.as_ref().map(|v| format!("{v:?}")),
                        _ => None,
                    }
                };
                get(merged).is_some() && get(merged) == get(one)
            }
        }
    })
}

fn layer() -> impl Strategy<Value = Layer> {
    (0..KINDS.len(), prop::collection::vec(prop::option::weighted(0.5, 0..DOMAIN), FACTS.len()), prop::collection::vec(any::<bool>(), 4))
        .prop_map(|(k, facts, bare)| Layer { kind: KINDS[k], facts, bare })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every declared fact survives the merge, each fact comes from the highest layer that
    /// declares it (layers of one kind: the earlier one), and there is exactly one note per
    /// lower layer that declares a different value.
    #[test]
    fn merge_keeps_every_fact_and_resolves_conflicts_by_precedence(layers in prop::collection::vec(layer(), 1..6)) {
        let built: Vec<Interface> = layers.iter().map(build).collect();
        let input: Vec<(SourceKind, &Interface)> = layers.iter().zip(&built).map(|(l, i)| (l.kind, i)).collect();
        let (merged, notes) = Interface::merge(&input);
        let merged = &merged.kernels["k"];
        let mut order: Vec<&Layer> = layers.iter().collect();
        order.sort_by_key(|l| l.kind);
        let mut expected_notes = BTreeMap::new();
        for (i, name) in FACTS.iter().enumerate() {
            let declared: Vec<(SourceKind, usize)> = order.iter().filter_map(|l| Some((l.kind, l.facts[i]?))).collect();
            let winner = declared.first().map(|(_, v)| *v);
            prop_assert_eq!(fact_of(merged, i), winner, "fact {}", name);
            for (kind, v) in declared.iter().skip(1) {
                if Some(*v) != winner {
                    *expected_notes.entry((format!("kernel.k.{name}"), declared[0].0, *kind)).or_insert(0) += 1;
                }
            }
        }
        let mut got_notes = BTreeMap::new();
        for n in &notes {
            *got_notes.entry((n.key.clone(), n.used, n.ignored)).or_insert(0) += 1;
        }
        prop_assert_eq!(got_notes, expected_notes);
        // A parameter any layer names is in the merge, and only those.
        for (i, p) in ["n", "m", "x", "y"].iter().enumerate() {
            let named = built.iter().any(|b| b.kernels["k"].params.contains_key(*p));
            prop_assert_eq!(merged.params.contains_key(*p), named, "param {} (bare in some layer: {})", p, layers.iter().any(|l| l.bare[i]));
        }
    }
}
