//! The Lean module of a kernel, generated through the analysis (as the CLI and the editor do):
//! golden modules for an elementwise kernel, a reduction with warp shuffles, a tiled matmul and
//! a softmax (`tests/lean`, at small shapes); every name they use exists in the Lean library;
//! namespaces balance; hashes are stable and change with the kernel; segmentation proposals are
//! validated; the main statement's proof from the obligations names every obligation. Where Lean
//! is installed, `server/lean/tests/lean_build.rs` builds the golden modules for real.

use expect_test::expect_file;
use ide::{AnalysisHost, FileKind, Settings, SourceFile};
use lean::library::LibraryIndex;
use lean::obligations::{Generated, ObligationKind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lean")
}

/// The module of the one kernel of `path` (a `.ptx` beside a `lark.toml`).
fn module_of(path: &Path) -> Arc<Generated> {
    let text = std::fs::read_to_string(path).unwrap();
    let key = format!("file://{}", path.display());
    let mut host = AnalysisHost::new(Settings::default());
    host.set_file(SourceFile::new(key.clone(), Some(path.to_path_buf()), FileKind::Ptx, text.as_str().into(), 1));
    let snapshot = host.snapshot();
    let fa = snapshot.analyse(&key).unwrap();
    assert!(fa.interface_errors.is_empty(), "{:?}", fa.interface_errors);
    assert_eq!(fa.kernels.len(), 1);
    snapshot.lean_module(&fa, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fixture(name: &str) -> Arc<Generated> {
    module_of(&fixtures().join(format!("{name}.ptx")))
}

#[test]
fn golden_elementwise_gelu() {
    expect_file!["../../../tests/lean/golden/gelu_tanh.lean"].assert_eq(&fixture("gelu_tanh").text);
}

#[test]
fn golden_warp_shuffle_reduction_l2norm() {
    expect_file!["../../../tests/lean/golden/l2norm_warp.lean"].assert_eq(&fixture("l2norm_warp").text);
}

#[test]
fn golden_tiled_matmul() {
    expect_file!["../../../tests/lean/golden/matmul_tiled_k.lean"].assert_eq(&fixture("matmul_tiled_k").text);
}

#[test]
fn golden_softmax() {
    expect_file!["../../../tests/lean/golden/softmax_rows.lean"].assert_eq(&fixture("softmax_rows").text);
}

fn library() -> LibraryIndex {
    LibraryIndex::load(&lean::library_dir()).unwrap_or_else(|e| panic!("{e}"))
}

/// The bound variables and core names the generator writes.
fn generated_local(name: &str) -> bool {
    const LOCALS: &[&str] = &[
        "I", "inputs", "arg", "x", "g", "hg", "h", "hc", "fuel", "r", "Prop", "Nat", "Rat", "Int", "List", "mkRat", "decide", "intro", "obtain", "exact",
        "first", "unfold", "none", "some", "true", "false", "Lark",
    ];
    LOCALS.contains(&name) || name.starts_with("h_")
}

#[test]
fn every_name_of_the_generated_modules_is_declared() {
    let lib = library();
    for name in ["gelu_tanh", "l2norm_warp", "matmul_tiled_k", "softmax_rows"] {
        let g = fixture(name);
        let unknown = lean::library::unresolved_names(&g.text, &lib, &generated_local);
        assert!(unknown.is_empty(), "{name}: names the library does not declare: {unknown:?}");
        // Namespaces balance: the module opens one and closes it.
        assert_eq!(g.text.matches("\nnamespace ").count(), 1, "{name}");
        assert!(g.text.trim_end().ends_with(&format!("end {}", g.module)), "{name}");
        // Never an axiom or a hole.
        let lexed = lean::lexer::lex(&g.text);
        for t in lexed.tokens.iter().filter(|t| t.kind == lean::lexer::TokenKind::Ident) {
            assert!(!["sorry", "admit", "axiom", "native_decide"].contains(&t.name().as_str()), "{name}: `{}`", t.name());
        }
    }
}

/// A kernel that writes `log2(e)` as the literal `1.4426950f` (`__expf` compiles to
/// `ex2.approx(x * 0f3FB8AA3B)`): the reading the engine used is a hypothesis of the agreement
/// obligations and of `correct`, never of the others, with a model that shows it satisfiable.
#[test]
fn literal_constants_are_hypotheses_with_a_model() {
    let g = fixture("softmax_rows");
    let def = &g.text[g.text.find("def LiteralConstants (I : Ideal) : Prop :=").expect("no LiteralConstants")..];
    let def = &def[..def.find("\n\n").unwrap()];
    assert!(def.contains("I.ln2 * (mkRat 12102203 8388608) = (1 : Rat)"), "{def}");
    assert!(g.text.contains("theorem literal_constants_satisfiable : ∃ I : Ideal, LiteralConstants I :=\n  ⟨Ideal.withConstants (mkRat 8388608 12102203)"));
    for o in &g.obligations {
        let assumes = o.statement.contains("LiteralConstants I →");
        let equivalence =
            matches!(o.kind, ObligationKind::SegmentAgrees | ObligationKind::SegmentEstablishes | ObligationKind::UntouchedAgree | ObligationKind::Correct);
        assert_eq!(assumes, equivalence, "{}", o.statement);
    }
    assert!(g.text.contains("intro I inputs arg x hc h"));
    assert!(g.notes.iter().all(|n| !n.contains("not stated as a hypothesis")), "{:?}", g.notes);
    // The kernels without such literals have neither.
    for name in ["l2norm_warp", "matmul_tiled_k"] {
        let g = fixture(name);
        assert!(!g.text.contains("LiteralConstants"), "{name}");
    }
}

/// GELU's `0.044715f` stands for the reference's rational `0.044715`, which it is not in exact
/// arithmetic. As PyTorch does with a Python scalar and a `float32` tensor, the module states the
/// reference with the literal's value there (and says so), so no hypothesis is needed and the
/// agreement obligation stays provable; the identities on `I` that have a model are still stated.
#[test]
fn a_rational_constant_of_the_reference_is_stated_at_the_kernel_s_literal() {
    let g = fixture("gelu_tanh");
    assert!(g.text.contains("I.sqrt ((2 : Rat) / I.pi) = (mkRat 6693141 8388608)"));
    let reference = graph_nodes(&g.text, "reference");
    assert!(reference.contains(&".const (mkRat 12003091 268435456)".to_string()), "{reference:?}");
    assert!(!reference.iter().any(|n| n.contains("8943 200000")), "{reference:?}");
    let doc = &g.text[g.text.find("Constants stated at the value of the kernel's literal").expect("not said")..];
    assert!(doc[..doc.find("-/").unwrap()].contains("12003091/268435456") && doc.contains("8943/200000"), "{}", &doc[..400]);
    assert!(!g.text.contains("are NOT stated"), "nothing is left out");
    assert!(g.notes.iter().all(|n| !n.contains("not stated as a hypothesis")), "{:?}", g.notes);
}

#[test]
fn the_name_check_catches_an_unknown_constructor_and_field() {
    let lib = library();
    let text = "import Lark\nnamespace LarkGen.t\nopen Lark\ndef r : RGraph := [.inptu 0 0]\ndef c : InputBinding := { arg := 0, prm := 1 }\nend LarkGen.t\n";
    let unknown = lean::library::unresolved_names(text, &lib, &generated_local);
    assert_eq!(unknown, vec![".inptu".to_string(), "field prm".to_string()]);
}

#[test]
fn obligations_cover_each_property_and_each_segment_that_stores_outputs() {
    let g = fixture("softmax_rows");
    let kinds: Vec<ObligationKind> = g.obligations.iter().map(|o| o.kind).collect();
    for k in [
        ObligationKind::RaceFree,
        ObligationKind::BarrierAligned,
        ObligationKind::InBounds,
        ObligationKind::Completes,
        ObligationKind::SegmentAgrees,
        ObligationKind::Correct,
    ] {
        assert!(kinds.contains(&k), "{k:?} missing: {kinds:?}");
    }
    // The store loop writes every output of the softmax.
    let agrees: Vec<_> = g.obligations.iter().filter(|o| o.kind == ObligationKind::SegmentAgrees).collect();
    assert_eq!(agrees.len(), 1);
    let seg = &g.segments[agrees[0].segment.unwrap()];
    assert!(seg.name.ends_with("store_loop"), "{seg:?}");
    // LARK's proof of the main statement takes every other obligation as a hypothesis.
    let proof = &g.text[g.text.find("theorem correct_of_obligations").unwrap()..];
    for o in g.open_obligations() {
        assert!(proof.contains(&format!("(h_{} : {})", o.name, o.name)), "{} not a hypothesis", o.name);
    }
    // Segments are contiguous and cover the kernel.
    assert_eq!(g.segments[0].start, 0);
    for w in g.segments.windows(2) {
        assert_eq!(w[0].stop, w[1].start);
    }
}

#[test]
fn statement_hashes_are_stable_and_change_with_the_kernel() {
    let a = fixture("gelu_tanh");
    let b = fixture("gelu_tanh");
    let hashes = |g: &Generated| g.obligations.iter().map(|o| (o.name.clone(), o.hash.clone())).collect::<Vec<_>>();
    assert_eq!(hashes(&a), hashes(&b), "two runs, two hashes");
    assert_eq!(a.text, b.text);
    // The same kernel with one constant changed (0.5 becomes 0.25 in the GELU): every statement
    // mentions the kernel, so every hash changes.
    let dir = std::env::temp_dir().join(format!("lark-lean-hash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::copy(fixtures().join("lark.toml"), dir.join("lark.toml")).unwrap();
    std::fs::copy(fixtures().join("references/gelu_tanh.py"), dir.join("references/gelu_tanh.py")).unwrap();
    std::fs::copy(fixtures().join("gelu_tanh.cu"), dir.join("gelu_tanh.cu")).unwrap();
    let ptx = std::fs::read_to_string(fixtures().join("gelu_tanh.ptx")).unwrap();
    assert!(ptx.contains("0f3F000000"), "the fixture multiplies by 0.5");
    std::fs::write(dir.join("gelu_tanh.ptx"), ptx.replacen("0f3F000000", "0f3E800000", 1)).unwrap();
    let changed = module_of(&dir.join("gelu_tanh.ptx"));
    for (o, p) in a.obligations.iter().zip(&changed.obligations) {
        assert_eq!(o.name, p.name);
        assert_ne!(o.hash, p.hash, "{} kept its hash although the kernel changed", o.name);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_segmentation_proposal_is_validated_before_use() {
    let path = fixtures().join("softmax_rows.ptx");
    let text = std::fs::read_to_string(&path).unwrap();
    let key = format!("file://{}", path.display());
    let mut host = AnalysisHost::new(Settings::default());
    host.set_file(SourceFile::new(key.clone(), Some(path.clone()), FileKind::Ptx, text.as_str().into(), 1));
    let snapshot = host.snapshot();
    let fa = snapshot.analyse(&key).unwrap();
    let own = snapshot.lean_module(&fa, None).unwrap();
    let n = own.segments.last().unwrap().stop;
    // LARK's own cuts, written as a proposal, are accepted and give the same statements.
    let proposal = serde_json::json!({ "segments": own.segments.iter().map(|s| serde_json::json!({ "name": s.name, "start": s.start, "stop": s.stop })).collect::<Vec<_>>() });
    let same = snapshot.lean_module_with_segments(&fa, None, &proposal.to_string()).unwrap();
    assert_eq!(same.segments.iter().map(|s| (s.start, s.stop)).collect::<Vec<_>>(), own.segments.iter().map(|s| (s.start, s.stop)).collect::<Vec<_>>());
    // Two segments: cut at the first barrier.
    let cut = own.segments[2].stop;
    let two = serde_json::json!({ "segments": [ { "name": "first_phase", "start": 0, "stop": cut, "specification": "the row maximum" }, { "name": "rest", "start": cut, "stop": n } ] });
    let g = snapshot.lean_module_with_segments(&fa, None, &two.to_string()).unwrap();
    assert_eq!(g.segments.len(), 2);
    assert_eq!(g.segments[0].title, "the row maximum");
    assert!(g.text.contains("{ name := \"first_phase\", start := 0, stop := "), "{}", &g.text[..2000]);
    // Refused: a gap, an overlap, not covering, a cut inside straight-line code, bad names, bad JSON.
    let refuse = |json: serde_json::Value, why: &str| {
        let e = snapshot.lean_module_with_segments(&fa, None, &json.to_string()).map(|_| "accepted").unwrap_err();
        assert!(e.contains(why), "expected `{why}` in: {e}");
    };
    refuse(serde_json::json!({ "segments": [ { "name": "a", "start": 0, "stop": cut }, { "name": "b", "start": cut + 1, "stop": n } ] }), "contiguous");
    refuse(serde_json::json!({ "segments": [ { "name": "a", "start": 0, "stop": cut }, { "name": "b", "start": cut - 1, "stop": n } ] }), "contiguous");
    refuse(serde_json::json!({ "segments": [ { "name": "a", "start": 0, "stop": cut } ] }), "the kernel has");
    let sound = lean::segment::sound_cuts(fa.kernels[0].model().unwrap());
    let inside = (1..n).find(|i| !sound.contains(i)).unwrap();
    refuse(
        serde_json::json!({ "segments": [ { "name": "a", "start": 0, "stop": inside }, { "name": "b", "start": inside, "stop": n } ] }),
        "neither the start of a basic block",
    );
    refuse(serde_json::json!({ "segments": [ { "name": "a b", "start": 0, "stop": n } ] }), "not a plain identifier");
    refuse(serde_json::json!({ "segments": [ { "name": "a", "start": 0, "stop": cut }, { "name": "a", "start": cut, "stop": n } ] }), "two segments are named");
    refuse(serde_json::json!({ "segments": [] }), "no segments");
    refuse(serde_json::json!({ "segs": [] }), "not valid JSON of the segmentation format");
    refuse(serde_json::json!({ "segments": [ { "name": "a", "start": 0, "stop": n + 5 } ] }), "the kernel has");
}

#[test]
fn a_kernel_without_a_fixed_launch_gets_its_segments_and_a_note() {
    // No lark.toml: the launch is not known, so nothing is stated but the kernel and its cuts.
    let dir = std::env::temp_dir().join(format!("lark-lean-nolaunch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixtures().join("softmax_rows.ptx"), dir.join("softmax_rows.ptx")).unwrap();
    std::fs::copy(fixtures().join("softmax_rows.cu"), dir.join("softmax_rows.cu")).unwrap();
    let g = module_of(&dir.join("softmax_rows.ptx"));
    assert!(g.obligations.is_empty());
    assert!(g.notes.iter().any(|n| n.contains("the launch is not fixed")), "{:?}", g.notes);
    assert!(g.text.contains("theorem segments_cover"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every kernel of the race corpus and of the equivalence corpus (with their interfaces and
/// references): a module is generated, it names only declared things, and its obligations are
/// consistent with its segments.
#[test]
fn every_corpus_kernel_gets_a_module_naming_only_declared_things() {
    let lib = library();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let mut checked = 0;
    let mut failures = Vec::new();
    // The equivalence corpus (references of every kind), and race-corpus kernels with shared
    // arrays, atomics, dynamic shared memory and warp collectives (the whole race corpus takes
    // minutes to analyse; these cover what the module states about memory).
    let race_corpus = [
        "histogram_shared.ptx",
        "matmul_tiled.ptx",
        "dot_atomic.ptx",
        "block_max.ptx",
        "count_positive_atomic.ptx",
        "warp_reduce_shfl.ptx",
        "named_barrier_count.ptx",
    ];
    for corpus in ["corpus", "equiv"] {
        let dir = root.join(corpus);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .filter(|p| {
                let name = p.file_name().unwrap().to_str().unwrap();
                // The benchmark-sized kernels only take time: their modules are like the others'.
                if corpus == "equiv" {
                    !name.starts_with("bench_") && !name.starts_with("layernorm")
                } else {
                    race_corpus.contains(&name)
                }
            })
            .collect();
        files.sort();
        // The verdicts do not matter here, only the modules: short solver queries keep it quick.
        let mut host = AnalysisHost::new(Settings { timeout_ms: Some(50), ..Settings::default() });
        let keys: Vec<(PathBuf, String)> = files
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).unwrap();
                let key = format!("file://{}", p.display());
                host.set_file(SourceFile::new(key.clone(), Some(p.clone()), FileKind::Ptx, text.as_str().into(), 1));
                (p.clone(), key)
            })
            .collect();
        let snapshot = host.snapshot();
        for (path, key) in keys {
            let fa = snapshot.analyse(&key).unwrap();
            for k in fa.kernels.iter().filter(|k| k.report.verdict != check::Verdict::Error) {
                let name = format!("{}:{}", path.file_name().unwrap().to_string_lossy(), k.name);
                let g = match snapshot.lean_module(&fa, Some(&k.name)) {
                    Ok(g) => g,
                    Err(e) => {
                        failures.push(format!("{name}: {e}"));
                        continue;
                    }
                };
                checked += 1;
                let unknown = lean::library::unresolved_names(&g.text, &lib, &generated_local);
                if !unknown.is_empty() {
                    failures.push(format!("{name}: undeclared names {unknown:?}"));
                }
                if g.segments.first().map(|s| s.start) != Some(0) || g.segments.windows(2).any(|w| w[0].stop != w[1].start) {
                    failures.push(format!("{name}: segments not contiguous"));
                }
                for o in &g.obligations {
                    if o.segment.is_some_and(|s| s >= g.segments.len()) {
                        failures.push(format!("{name}: {} names a segment that does not exist", o.name));
                    }
                    if !g.text.contains(&o.statement) {
                        failures.push(format!("{name}: {} is not in the module as pinned", o.name));
                    }
                }
            }
        }
    }
    assert!(checked >= 45, "{checked} kernels");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The nodes of a graph the module defines (`reference`, or `stateGraph`'s own after it), as
/// their Lean text in order.
fn graph_nodes(text: &str, def: &str) -> Vec<String> {
    let start = text.find(&format!("def {def} : RGraph := ")).unwrap_or_else(|| panic!("no {def}"));
    let body = &text[start..];
    let body = &body[body.find('[').unwrap() + 1..body.find("\n  ]").unwrap()];
    let mut out = Vec::new();
    for line in body.lines() {
        let line = line.split("-/").last().unwrap_or(line);
        out.extend(line.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from));
    }
    out
}

/// The cells of a `List SharedCell` definition: variable, offset, block, phase, node.
fn shared_cells(text: &str, def: &str) -> Vec<[usize; 5]> {
    let start = text.find(&format!("def {def} : List SharedCell := [")).unwrap_or_else(|| panic!("no {def}"));
    let body = &text[start..];
    let body = &body[body.find('[').unwrap() + 1..body.find("\n  ]").unwrap()];
    body.split('⟩')
        .filter_map(|c| c.split('⟨').nth(1))
        .map(|c| {
            let v: Vec<usize> = c.split(',').map(|n| n.trim().parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3], v[4]]
        })
        .collect()
}

/// What a tiled matmul's load segment leaves in shared memory is stated cell by cell: at the
/// first pass of the barrier `As[ty][tx] = A[ty][tx]` and `Bs[ty][tx] = B[ty][tx]`, at the second
/// (the next tile, K = 20) `A[ty][16 + tx]` and `B[16 + ty][tx]`, and only where the kernel
/// loaded from the inputs (the zero-filled rest of a partial tile holds no input). These are
/// intermediate statements: not required for a certificate and not used by the main proof.
#[test]
fn a_tiled_matmul_states_the_tiles_it_loads_to_shared_memory() {
    let g = fixture("matmul_tiled_k");
    let reference = graph_nodes(&g.text, "reference");
    let cells = shared_cells(&g.text, "s1_shared_exchange_shared");
    let (m, n, k) = (4, 4, 20);
    let mut expected = 0;
    for tile in 0..2 {
        for ty in 0..16 {
            for tx in 0..16 {
                expected += usize::from(ty < m && tile * 16 + tx < k) + usize::from(tile * 16 + ty < k && tx < n);
            }
        }
    }
    assert_eq!(cells.len(), expected);
    for [var, offset, block, phase, node] in cells {
        let (ty, tx, tile) = (offset / 64, offset % 64 / 4, (phase - 1) / 2);
        assert_eq!(block, 0);
        assert!(phase == 1 || phase == 3, "{phase}");
        let want = match var {
            0 => format!(".input 0 {}", ty * k + tile * 16 + tx),
            1 => format!(".input 1 {}", (tile * 16 + ty) * n + tx),
            _ => panic!("variable {var}"),
        };
        assert_eq!(reference[node], want, "variable {var}, offset {offset}, phase {phase}");
    }
    let o = g.obligations.iter().find(|o| o.name == "s1_shared_exchange_establishes").expect("no shared specification");
    assert_eq!(o.kind, ObligationKind::SegmentEstablishes);
    assert!(o.statement.contains("SharedAgree inputs r.snapshots (RGraph.value I x reference) s1_shared_exchange_shared"), "{}", o.statement);
    assert!(g.open_obligations().all(|r| r.kind != ObligationKind::SegmentEstablishes));
    let proof = &g.text[g.text.find("theorem correct_of_obligations").unwrap()..];
    assert!(!proof.contains("establishes"), "{proof}");
}

/// A softmax's reductions through shared memory: after each tree reduction, `red[0]` is stated
/// as the reference's own row maximum and row sum — the very nodes the reference subtracts and
/// divides by — and so are `s_max` and `s_sum` after they are broadcast; the partial results
/// before (`max(x[0], x[4])`) are nodes of `stateGraph` after the reference's.
#[test]
fn a_softmax_states_its_row_max_and_sum_in_shared_memory_as_reference_nodes() {
    let g = fixture("softmax_rows");
    let reference = graph_nodes(&g.text, "reference");
    let operand = |node: &str, op: &str, k: usize| -> usize {
        let rest = node.strip_prefix(op).unwrap_or_else(|| panic!("{node} is not {op}"));
        rest.split_whitespace().nth(k).unwrap().parse().unwrap()
    };
    // The outputs are `.div e sum` with `e = exp(x - max)`.
    let out = reference.iter().find(|n| n.starts_with(".div")).expect("no division");
    let sum = operand(out, ".div", 1);
    let shifted = reference.iter().find(|n| n.starts_with(".sub")).expect("no subtraction");
    let max = operand(shifted, ".sub", 1);
    let first = |def: &str| shared_cells(&g.text, def)[0];
    assert_eq!(first("s3_tree_reduction_shared")[4], max, "red[0] after the max reduction");
    assert_eq!(first("s4_shared_exchange_shared")[4], max, "s_max");
    assert_eq!(first("s8_tree_reduction_shared")[4], sum, "red[0] after the sum reduction");
    assert_eq!(first("s9_shared_exchange_shared")[4], sum, "s_sum");
    // red[1] after the max reduction is max(max(x[1], x[5]), max(x[3], x[7])): a node of its own,
    // a maximum of exactly those inputs.
    let state = graph_nodes(&g.text, "stateGraph");
    let all: Vec<&String> = reference.iter().chain(&state).collect();
    let red1 = shared_cells(&g.text, "s3_tree_reduction_shared").into_iter().find(|c| c[1] == 4).unwrap()[4];
    assert!(red1 >= reference.len(), "{red1}");
    let mut leaves = Vec::new();
    let mut stack = vec![red1];
    while let Some(i) = stack.pop() {
        match all[i].strip_prefix(".input 0 ") {
            Some(e) => leaves.push(e.parse::<usize>().unwrap()),
            None => stack.extend([operand(all[i], ".max", 0), operand(all[i], ".max", 1)]),
        }
    }
    leaves.sort_unstable();
    assert_eq!(leaves, [1, 3, 5, 7]);
}
