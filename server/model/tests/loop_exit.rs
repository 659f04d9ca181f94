//! Which iterations of a loop that exits on `!=` the lifted guard admits. The guard says that
//! iteration k-1 continued; for `i != n` that alone admits every k past the exit (`4*33 != 128`).
//! These are the loops clang writes when it unrolls `for (i = 0; i < n; i++)` by four, and the
//! remainder loop after them, so each test pins the exact set of iterations.

use model::expr::Sym;
use model::ops::Special;
use model::symbolic::lift;
use std::collections::HashMap;

/// A kernel with one loop over `%r2` (from `init`, adding `step`, while `%r2 != %r1`), where
/// `%r1` is computed from `%ntid.x` (in `%r4`) by `bound`.
fn guard_admits(bound: &str, init: &str, step: i64, ntid: u64, k: u64) -> bool {
    let setup = format!("{bound}\n\tmov.u32 %r2, {init};");
    let latch = format!("\tadd.s32 %r2, %r2, {step};\n\tsetp.ne.s32 %p1, %r2, %r1;");
    loop_guard_admits(&setup, &latch, ntid, k)
}

/// Whether the guard of the one loop of a kernel (`setup`, then a body storing `%r2` and ending
/// in `latch`, which sets `%p1` to continue) admits iteration `k` with `ntid` threads.
fn loop_guard_admits(setup: &str, latch: &str, ntid: u64, k: u64) -> bool {
    let text = format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
         \tmov.u32 %r4, %ntid.x;\n{setup}\n\
         $L_loop:\n\tmul.wide.u32 %rd3, %r2, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r2;\n\
         {latch}\n\t@%p1 bra $L_loop;\n\tret;\n}}\n"
    );
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let kernel = model::lower_module(&parsed.module).pop().unwrap().1.unwrap_or_else(|e| panic!("{}", e.message));
    let lifted = lift(&kernel);
    let summary = lifted.loops.iter().flatten().next().expect("one loop");
    assert!(summary.bounded);
    let env = |s: Sym| match s {
        Sym::Special(Special::Ntid(0)) => Some(ntid),
        Sym::Counter(_) => Some(k),
        _ => None,
    };
    lifted.exprs.eval(summary.guard, &env, &mut HashMap::new()).expect("the guard is over the counter and ntid.x") != 0
}

#[test]
fn an_unrolled_loop_to_a_multiple_of_its_step_stops_there() {
    // i = 0, 4, 8, ... while i != (ntid & ~3): with 128 threads, iterations 0..=31.
    let bound = "\tand.b32 %r1, %r4, 2044;";
    for k in 0..32 {
        assert!(guard_admits(bound, "0", 4, 128, k), "iteration {k} runs");
    }
    for k in [32, 33, 40, 1000] {
        assert!(!guard_admits(bound, "0", 4, 128, k), "iteration {k} is past the exit");
    }
}

#[test]
fn a_remainder_loop_counting_down_to_zero_stops_there() {
    // r = ntid & 3, r-1, ... while r != 0: with 7 threads, iterations 0, 1 and 2 (the
    // no-wrap fact on the counter alone already bounds it; the exit bound agrees).
    let bound = "\tmov.u32 %r1, 0;";
    let init = "%r5";
    let bound_and_init = format!("{bound}\n\tand.b32 %r5, %r4, 3;");
    for k in 0..3 {
        assert!(guard_admits(&bound_and_init, init, -1, 7, k), "iteration {k} runs");
    }
    for k in [3, 4, 100] {
        assert!(!guard_admits(&bound_and_init, init, -1, 7, k), "iteration {k} is past the exit");
    }
}

#[test]
fn a_bound_the_step_does_not_reach_leaves_the_loop_unbounded_as_it_is() {
    // i = 0, 4, 8, ... while i != ntid: with 130 threads, i never equals the bound (the loop
    // runs until i wraps around), so no bound is claimed: iteration 40 is admitted.
    let bound = "\tmov.u32 %r1, %r4;";
    assert!(guard_admits(bound, "0", 4, 130, 40));
    // With 128 threads it is reached at iteration 31's test.
    assert!(guard_admits(bound, "0", 4, 128, 31));
    assert!(!guard_admits(bound, "0", 4, 128, 32));
    assert!(!guard_admits(bound, "0", 4, 128, 33), "4 * 33 != 128, but the loop stopped at 32");
}

#[test]
fn a_64_bit_counter_tested_in_its_low_32_bits_stops_at_the_first_match() {
    // clang's `for (m = 0; m < 8; ++m) s[... + m * 64] = …` as a byte offset: rd5 = 0, 256, ...
    // while (u32)rd5 != 2048. Iterations 0..=7; 2^24 + 1 iterations would also give a low word
    // below 2048 (the product wraps), but the loop stopped long before.
    let setup = "\tmov.u64 %rd5, 0;\n\tmov.u32 %r2, 0;";
    let latch = "\tadd.s64 %rd5, %rd5, 256;\n\tcvt.u32.u64 %r3, %rd5;\n\tsetp.ne.s32 %p1, %r3, 2048;";
    for k in 0..8 {
        assert!(loop_guard_admits(setup, latch, 32, k), "iteration {k} runs");
    }
    for k in [8, 9, (1 << 24) + 1] {
        assert!(!loop_guard_admits(setup, latch, 32, k), "iteration {k} is past the exit");
    }
}

#[test]
fn a_loop_counting_down_by_the_block_size_is_affine_and_stops_below_zero() {
    // llm.c's classifier walks a row's packs from its end: p = 1000, p -= blockDim.x, while
    // p > -1. With 128 threads: 1000, 872, ..., 104 (iterations 0..=7), then -24 stops it. A
    // register stepped by `sub` was a havoc: no bound, and the addresses it made unknown.
    let setup = "\tmov.u32 %r2, 1000;";
    let latch = "\tsub.s32 %r2, %r2, %r4;\n\tsetp.gt.s32 %p1, %r2, -1;";
    for k in 0..8 {
        assert!(loop_guard_admits(setup, latch, 128, k), "iteration {k} runs");
    }
    for k in [8, 9, 100] {
        assert!(!loop_guard_admits(setup, latch, 128, k), "iteration {k} is past the exit");
    }
}
