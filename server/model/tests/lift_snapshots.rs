//! The lifted model of representative corpus kernels, rendered by `model::dump::dump`, against
//! committed snapshots in `tests/snapshots/NAME.txt` (`UPDATE_EXPECT=1 cargo test -p model --test
//! lift_snapshots` rewrites them); every corpus kernel lifts with no unsupported instruction; and
//! the edges: an unknown opcode, a branch to a missing label, an infinite loop.

use expect_test::{expect, expect_file};
use model::phases::Phases;
use model::symbolic::{lift, Lifted};
use model::{Kernel, Op};
use std::path::PathBuf;
use std::time::Duration;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn kernels_of(text: &str) -> Vec<Kernel> {
    let parsed = ptx::parse(text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    model::lower_module(&parsed.module).into_iter().map(|(n, k)| k.unwrap_or_else(|e| panic!("{n}: {}", e.message))).collect()
}

fn dump_file(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = String::new();
    for k in kernels_of(&text) {
        let lifted = lift(&k);
        let phases = Phases::compute(&k, &lifted);
        out.push_str(&model::dump::dump(&k, &lifted, &phases));
    }
    out
}

fn snapshot(name: &str) {
    let actual = dump_file(&corpus().join(format!("{name}.ptx")));
    expect_file![format!("snapshots/{name}.txt")].assert_eq(&actual);
}

#[test]
fn vector_add_elementwise() {
    snapshot("vector_add");
}

#[test]
fn reduce_sum_shared_loop_carried_barrier() {
    snapshot("reduce_sum_shared");
}

#[test]
fn matmul_tiled() {
    snapshot("matmul_tiled");
}

#[test]
fn saxpy_grid_stride_loop() {
    snapshot("saxpy_grid_stride");
}

#[test]
fn scan_hillis_steele() {
    snapshot("scan_hillis_steele");
}

#[test]
fn dumps_are_deterministic() {
    for name in ["reduce_sum_shared", "matmul_tiled", "scan_hillis_steele"] {
        let path = corpus().join(format!("{name}.ptx"));
        assert_eq!(dump_file(&path), dump_file(&path), "{name}");
    }
}

/// Every `.ptx` of the corpus and `extra/`.
fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [corpus(), corpus().join("extra")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    files.sort();
    files
}

/// The corpus kernel's block shape in `tests/corpus/lark.toml`, as the symbols it fixes.
fn block_facts(k: &Kernel, lifted: &mut Lifted) -> std::collections::HashMap<model::expr::Sym, model::expr::ExprId> {
    let text = std::fs::read_to_string(corpus().join("lark.toml")).unwrap();
    let iface = spec::parse_lark_toml("lark.toml", &text).unwrap();
    let mut map = std::collections::HashMap::new();
    if let Some(block) = iface.kernel(&k.name).and_then(|s| s.block_range()) {
        for (d, r) in block.iter().enumerate() {
            if let Some(v) = r.value() {
                let c = lifted.exprs.konst(v, 32);
                map.insert(model::expr::Sym::Special(model::Special::Ntid(d as u8)), c);
            }
        }
    }
    map
}

#[test]
fn every_corpus_kernel_lifts_with_no_unsupported_instruction() {
    let mut report = Vec::new();
    let mut kernels = 0;
    for path in corpus_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for k in kernels_of(&text) {
            kernels += 1;
            let mut lifted = lift(&k);
            let phases = Phases::compute(&k, &lifted);
            let dump = model::dump::dump(&k, &lifted, &phases);
            // Every unsupported instruction is lifted, except guarded ones that no thread reaches
            // (a barrier's thread count or a `redux` mask that folds to what the model handles).
            let unconditional = k.unsupported().filter(|(i, _)| i.guard.is_none()).count();
            assert!((unconditional..=k.unsupported().count()).contains(&lifted.unsupported.len()), "{}: lowered and lifted unsupported counts differ", k.name);
            assert!(dump.contains(&format!("unsupported instructions: {}\n", lifted.unsupported.len())), "{}: dump disagrees with the count", k.name);
            // Under the corpus launch, conditional ones must go too.
            let facts = block_facts(&k, &mut lifted);
            lifted.specialize(&facts);
            let count = lifted.unsupported.len();
            if count > 0 {
                let what: Vec<String> = lifted.unsupported.iter().map(|u| format!("line {:?}: {}", u.line, u.reason)).collect();
                report.push(format!("{} ({}): {count} unsupported: {}", k.name, path.file_name().unwrap().to_string_lossy(), what.join("; ")));
            }
        }
    }
    assert!(kernels >= 55, "only {kernels} kernels");
    assert!(report.is_empty(), "kernels with unsupported instructions:\n{}", report.join("\n"));
}

// ----- edges -----------------------------------------------------------------------------------

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

fn lower(body: &str) -> Result<Kernel, model::LowerError> {
    let text = format!("{HEADER}.visible .entry k(\n    .param .u64 k_param_0\n)\n{{\n{body}}}\n");
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    Kernel::lower(&parsed.module, &parsed.module.functions[0])
}

/// `lift` and `Phases::compute` on another thread, failing if they take more than 20 s.
fn lift_with_deadline(k: Kernel) -> (Kernel, Lifted, Phases) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let lifted = lift(&k);
        let phases = Phases::compute(&k, &lifted);
        let _ = tx.send((k, lifted, phases));
    });
    rx.recv_timeout(Duration::from_secs(20)).expect("lift did not finish in 20 s (or panicked)")
}

#[test]
fn unknown_opcode_lifts_to_an_unsupported_node_with_its_span() {
    let body = "    .reg .b64 %rd<3>;\n    ld.param.u64 %rd1, [k_param_0];\n    frobnicate.b64 %rd2, %rd1;\n    ret;\n";
    let text = format!("{HEADER}.visible .entry k(\n    .param .u64 k_param_0\n)\n{{\n{body}}}\n");
    let k = lower(body).expect("lowers");
    let (node, reason) = k.unsupported().next().expect("an unsupported node");
    assert!(matches!(&node.op, Op::Unsupported { opcode, .. } if opcode.starts_with("frobnicate")), "{:?}", node.op);
    assert_eq!(&text[node.span.range()], "frobnicate.b64 %rd2, %rd1;");
    assert!(reason.contains("frobnicate"), "reason: {reason}");
    let span = node.span;
    let (k, lifted, phases) = lift_with_deadline(k);
    assert_eq!(lifted.unsupported.len(), 1);
    assert_eq!(lifted.unsupported[0].span, span);
    let dump = model::dump::dump(&k, &lifted, &phases);
    assert!(dump.contains("unsupported instructions: 1\n"), "{dump}");
    expect![[r#"
        kernel k
          params: param_0: u64
          phase from kernel entry:
            (no memory accesses)
          unsupported instructions: 1
            line ?: unknown instruction `frobnicate`
    "#]]
    .assert_eq(&dump);
}

#[test]
fn branch_to_a_missing_label_is_a_lowering_error() {
    let body = "    bra.uni $L__missing;\n    ret;\n";
    let text = format!("{HEADER}.visible .entry k(\n    .param .u64 k_param_0\n)\n{{\n{body}}}\n");
    let e = lower(body).expect_err("a branch to nowhere cannot lower");
    assert_eq!(e.message, "branch to undefined label `$L__missing`");
    assert_eq!(&text[e.span.range()], "bra.uni $L__missing;");
}

#[test]
fn guarded_branch_to_a_missing_label_is_a_lowering_error() {
    let body = "    .reg .pred %p<2>;\n    setp.eq.s32 %p1, 1, 1;\n    @%p1 bra $L__missing;\n    ret;\n";
    let e = lower(body).expect_err("a branch to nowhere cannot lower");
    assert!(e.message.contains("$L__missing"), "{}", e.message);
}

#[test]
fn infinite_loop_lifts_without_hanging() {
    let k = lower("$L__BB0_1:\n    bra.uni $L__BB0_1;\n").expect("lowers");
    assert_eq!(k.cfg.loops.len(), 1);
    let (k, lifted, phases) = lift_with_deadline(k);
    let dump = model::dump::dump(&k, &lifted, &phases);
    expect![[r#"
        kernel k
          params: param_0: u64
          loop L0 (counter k0) at line ?
            iteration k0 runs if true
          phase from kernel entry:
            (no memory accesses)
          unsupported instructions: 0
    "#]]
    .assert_eq(&dump);
}

#[test]
fn infinite_loop_with_a_store_and_a_barrier_lifts_without_hanging() {
    let body = "    .reg .b32 %r<3>;\n    .reg .b64 %rd<3>;\n    ld.param.u64 %rd1, [k_param_0];\n    mov.u32 %r1, 0;\n$L__BB0_1:\n    st.global.u32 [%rd1], %r1;\n    add.s32 %r1, %r1, 1;\n    bar.sync 0;\n    bra.uni $L__BB0_1;\n";
    let k = lower(body).expect("lowers");
    let (k, lifted, phases) = lift_with_deadline(k);
    let dump = model::dump::dump(&k, &lifted, &phases);
    expect![[r#"
        kernel k
          params: param_0: u64
          loop L0 (counter k0) at line ?
            %r1 = k0 (affine)
            iteration k0 runs if true
          phase from kernel entry:
            line    ?  write  global param_0[0] (4 bytes) [k0:Zero]
          phase after barrier at line ?:
            line    ?  write  global param_0[0] (4 bytes) [k0:Next]
          unsupported instructions: 0
    "#]]
    .assert_eq(&dump);
}

#[test]
fn kernel_without_body_is_a_lowering_error() {
    let text = format!("{HEADER}.visible .entry k(\n    .param .u64 k_param_0\n);\n");
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let e = Kernel::lower(&parsed.module, &parsed.module.functions[0]).expect_err("a prototype has no body");
    assert_eq!(e.message, "`k` has no body");
}
