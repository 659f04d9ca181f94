//! Barriers beyond `bar.sync 0`: named barriers (`bar.sync 1`), barriers with a thread count
//! (a block barrier exactly when the count is the block's size), `bar.arrive` (unsupported),
//! and `bar.red.{popc,and,or}` (a block barrier plus a reduction every thread receives).

// An error ends a run; its size does not matter here.
#![allow(clippy::result_large_err)]

use model::expr::Sym;
use model::interp::{self, Arg, InterpError, Launch, Memory};
use model::phases::Phases;
use model::symbolic::lift;
use model::{Kernel, Special};
use std::collections::HashMap;

/// A kernel with one `.u64` pointer parameter; `directives` go between the signature and body.
fn kernel(directives: &str, body: &str) -> Kernel {
    let text = format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0){directives}\n{{\n\
         \t.reg .pred %p<8>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\t.shared .align 4 .b8 s[4096];\n\
         \tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         \tmov.u64 %rd5, s;\n\tadd.s64 %rd6, %rd5, %rd3;\n{body}\n\tret;\n}}\n"
    );
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    model::lower_module(&parsed.module).pop().unwrap().1.unwrap_or_else(|e| panic!("{}", e.message))
}

fn reasons(k: &Kernel) -> Vec<String> {
    k.unsupported().map(|(_, r)| r.to_string()).collect()
}

fn run(k: &Kernel, threads: u32) -> Result<Vec<u32>, InterpError> {
    let mut mem = Memory::new();
    let out = mem.add_u32("out", &vec![0; threads as usize]);
    interp::run(k, &Launch::new([1, 1, 1], [threads, 1, 1], vec![Arg::Buffer(out)]), &mut mem)?;
    Ok(mem.read_u32s(out))
}

/// Each thread stores its id to shared memory, synchronises with `barrier`, and reads its right
/// neighbour's slot (wrapping at 64).
fn neighbour_exchange(barrier: &str) -> String {
    format!(
        "\tst.shared.u32 [%rd6], %r1;\n\t{barrier}\n\tadd.s32 %r2, %r1, 1;\n\tand.b32 %r2, %r2, 63;\n\tmul.wide.u32 %rd7, %r2, 4;\n\
         \tadd.s64 %rd7, %rd5, %rd7;\n\tld.shared.u32 %r3, [%rd7];\n\tst.global.u32 [%rd4], %r3;"
    )
}

#[test]
fn named_barriers_without_a_count_synchronise_the_whole_block() {
    for barrier in ["bar.sync 1;", "barrier.sync.aligned 3;", "bar.cta.sync 0;", "barrier.sync 2;"] {
        let k = kernel("", &neighbour_exchange(barrier));
        assert_eq!(reasons(&k), Vec::<String>::new(), "{barrier}");
        let out = run(&k, 64).unwrap();
        assert_eq!(out, (0..64).map(|i| (i + 1) % 64).collect::<Vec<u32>>(), "{barrier}");
        let lifted = lift(&k);
        assert_eq!(lifted.barriers.len(), 1, "{barrier}");
        let phases = Phases::compute(&k, &lifted);
        let (store, load) = (0, 1);
        assert!(phases.same_phase(store, load).is_empty(), "{barrier}: the store and the load share a phase");
    }
}

#[test]
fn a_barrier_for_the_whole_block_is_a_block_barrier_and_a_partial_one_is_unsupported() {
    // `.reqntid` decides it when lowering.
    let k = kernel("\n.reqntid 64, 1, 1", &neighbour_exchange("bar.sync 1, 64;"));
    assert_eq!(reasons(&k), Vec::<String>::new());
    assert_eq!(run(&k, 64).unwrap()[63], 0);
    let k = kernel("\n.reqntid 128, 1, 1", &neighbour_exchange("bar.sync 1, 64;"));
    let r = reasons(&k);
    assert!(r.len() == 1 && r[0].starts_with("a barrier for 64 threads orders only the threads that take part"), "{r:?}");

    // Otherwise the block size decides it when the kernel runs, and when the launch is known.
    let k = kernel("", &neighbour_exchange("bar.sync 1, 64;"));
    assert_eq!(run(&k, 64).unwrap()[0], 1);
    match run(&k, 128) {
        Err(InterpError::Unsupported { opcode, .. }) => assert_eq!(opcode, "bar.sync"),
        other => panic!("{other:?}"),
    }
    let lifted = lift(&k);
    assert_eq!(lifted.unsupported.len(), 1, "unknown block size: uncertified");
    for (x, kept) in [(64u64, 0usize), (128, 1), (32, 1)] {
        let mut l = lifted.clone();
        let mut map = HashMap::new();
        for (d, v) in [(0, x), (1, 1), (2, 1)] {
            let c = l.exprs.konst(v, 32);
            map.insert(Sym::Special(Special::Ntid(d)), c);
        }
        l.specialize(&map);
        assert_eq!(l.unsupported.len(), kept, "block of {x} threads");
    }
    // A count in a register is checked the same way.
    let k = kernel("", &format!("\tmov.u32 %r9, 64;\n{}", neighbour_exchange("bar.sync 1, %r9;")));
    assert_eq!(run(&k, 64).unwrap()[0], 1);
    assert!(matches!(run(&k, 96), Err(InterpError::Unsupported { .. })));
}

#[test]
fn bar_arrive_is_unsupported() {
    let k = kernel("", "\tbar.arrive 1, 64;");
    let r = reasons(&k);
    assert!(r.len() == 1 && r[0].starts_with("`bar.arrive` signals a named barrier without waiting"), "{r:?}");
}

#[test]
fn bar_red_reduces_a_predicate_over_the_block() {
    // popc of tid < 5, and/or of tid < limit, packed as popc * 100 + and * 10 + or.
    let body = |limit: u32| {
        format!(
            "\tsetp.lt.u32 %p1, %r1, 5;\n\tbar.red.popc.u32 %r4, 0, %p1;\n\tsetp.lt.u32 %p2, %r1, {limit};\n\
             \tbar.red.and.pred %p3, 0, %p2;\n\tbar.red.or.pred %p4, 1, !%p2;\n\
             \tselp.u32 %r5, 10, 0, %p3;\n\tselp.u32 %r6, 1, 0, %p4;\n\tmad.lo.s32 %r7, %r4, 100, %r5;\n\tadd.s32 %r7, %r7, %r6;\n\
             \tst.global.u32 [%rd4], %r7;"
        )
    };
    let k = kernel("", &body(1000));
    assert_eq!(reasons(&k), Vec::<String>::new());
    // Every thread gets the same result: 5 threads below 5; all below 1000; none at or above it.
    assert_eq!(run(&k, 96).unwrap(), vec![510; 96]);
    let k = kernel("", &body(40));
    assert_eq!(run(&k, 96).unwrap(), vec![501; 96]);
    let lifted = lift(&k);
    assert_eq!(lifted.barriers.len(), 3);

    // With a thread count, as the other barriers.
    let k = kernel("\n.reqntid 32, 1, 1", "\tsetp.ne.u32 %p1, %r1, 7;\n\tbar.red.popc.u32 %r4, 2, 32, %p1;\n\tst.global.u32 [%rd4], %r4;");
    assert_eq!(reasons(&k), Vec::<String>::new());
    assert_eq!(run(&k, 32).unwrap(), vec![31; 32]);

    // Reached by part of the block only: barrier divergence, as for bar.sync.
    let k = kernel("", "\tsetp.lt.u32 %p1, %r1, 16;\n\t@%p1 bra $L_end;\n\tbar.red.popc.u32 %r4, 0, %p1;\n$L_end:\n\tst.global.u32 [%rd4], %r4;");
    assert!(matches!(run(&k, 32), Err(InterpError::BarrierDivergence { .. })));
}
