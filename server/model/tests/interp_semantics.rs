//! The reference interpreter on small hand-written kernels: instruction semantics (shuffles,
//! votes, conversions, exact floats, atomics, address spaces), loop and phase bookkeeping, and
//! bad input giving errors rather than panics or hangs.

use model::interp::{self, AccessKind, Arg, InterpError, Launch, Memory, Recording, Trace, Whereabouts};
use model::{Kernel, Space};
use num_rational::BigRational;

/// Lowers the only kernel of a PTX module given without its header.
fn kernel(body: &str) -> Kernel {
    let text = format!(".version 7.0\n.target sm_80\n.address_size 64\n{body}");
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let mut ks = model::lower_module(&parsed.module);
    assert_eq!(ks.len(), 1);
    ks.pop().unwrap().1.unwrap_or_else(|e| panic!("{}", e.message))
}

fn run(k: &Kernel, l: &Launch, mem: &mut Memory) -> Trace {
    interp::run(k, l, mem).unwrap_or_else(|e| panic!("{e}"))
}

fn ratio(n: i64, d: i64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

// ---------------------------------------------------------------------------------------------
// Bad input: errors, not panics or hangs.

#[test]
fn infinite_loop_hits_the_step_limit() {
    let k = kernel(".visible .entry spin()\n{\n$L:\n\tbra $L;\n}\n");
    let err = interp::run(&k, &Launch::new([2, 1, 1], [32, 1, 1], vec![]).step_limit(10_000), &mut Memory::new()).unwrap_err();
    assert!(matches!(err, InterpError::StepLimit { limit: 10_000, .. }), "{err}");
    assert!(err.to_string().contains("step limit"), "{err}");
}

#[test]
fn unsupported_instruction_is_an_error_only_when_executed() {
    let k = kernel(
        ".visible .entry u(.param .u64 u_param_0)\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n\
         \tld.param.u64 %rd1, [u_param_0];\n\tmov.u32 %r1, %tid.x;\n\tsetp.ne.s32 %p1, %r1, 3;\n\
         \t@%p1 bra $L_end;\n\tmbarrier.init.shared.b64 [%rd1], 1;\n$L_end:\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    let b = mem.add_zeroed("b", 8);
    // Thread 3 exists: it executes the unsupported instruction.
    let err = interp::run(&k, &Launch::new([1, 1, 1], [8, 1, 1], vec![Arg::Buffer(b)]), &mut mem).unwrap_err();
    match &err {
        InterpError::Unsupported { thread, opcode, .. } => {
            assert_eq!(*thread, [3, 0, 0]);
            assert!(opcode.starts_with("mbarrier"), "{opcode}");
        }
        other => panic!("{other}"),
    }
    // With three threads nobody reaches it.
    run(&k, &Launch::new([1, 1, 1], [3, 1, 1], vec![Arg::Buffer(b)]), &mut mem);
}

#[test]
fn bad_launches() {
    let k = kernel(".visible .entry e(.param .u64 e_param_0, .param .u32 e_param_1)\n{\n\tret;\n}\n");
    let mut mem = Memory::new();
    let b = mem.add_zeroed("b", 4);
    let ok = vec![Arg::Buffer(b), Arg::u32(1)];
    let bad = |l: Launch, mem: &mut Memory| match interp::run(&k, &l, mem) {
        Err(e @ InterpError::BadLaunch(_)) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(bad(Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::Buffer(b)]), &mut mem).contains("2 parameter(s), 1 argument(s)"));
    bad(Launch::new([1, 1, 1], [2048, 1, 1], ok.clone()), &mut mem);
    bad(Launch::new([1, 0, 1], [32, 1, 1], ok.clone()), &mut mem);
    bad(Launch::new([2, 1, 1], [32, 1, 1], ok.clone()).only_blocks(vec![[2, 0, 0]]), &mut mem);
    bad(Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::Buffer(model::interp::BufferId(7)), Arg::u32(1)]), &mut mem);
    bad(Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::Buffer(b), Arg::Bytes(vec![0; 3])]), &mut mem);
    run(&k, &Launch::new([1, 1, 1], [1024, 1, 1], ok), &mut mem);
}

// ---------------------------------------------------------------------------------------------
// Warp collectives.

/// CUDA's definitions of the width-`w` shuffles (programming guide), independent of the PTX
/// pseudo-code the interpreter follows: (source lane, whether it is in range).
fn cuda_shfl(mode: &str, lane: u32, b: u32, width: u32) -> (u32, bool) {
    let base = lane / width * width;
    match mode {
        "down" => {
            if lane % width + b < width {
                (lane + b, true)
            } else {
                (lane, false)
            }
        }
        "up" => {
            if lane % width >= b {
                (lane - b, true)
            } else {
                (lane, false)
            }
        }
        "bfly" => {
            let j = lane ^ b;
            if j < base + width {
                (j, true)
            } else {
                (lane, false)
            }
        }
        _ => (base + b % width, true),
    }
}

#[test]
fn shuffles_match_cuda_semantics() {
    for mode in ["down", "up", "bfly", "idx"] {
        let k = kernel(&format!(
            ".visible .entry s(.param .u64 s_param_0, .param .u32 s_param_1, .param .u32 s_param_2)\n{{\n\
             \t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\
             \tld.param.u64 %rd1, [s_param_0];\n\tld.param.u32 %r5, [s_param_1];\n\tld.param.u32 %r6, [s_param_2];\n\
             \tmov.u32 %r1, %tid.x;\n\tmul.lo.s32 %r2, %r1, 10;\n\
             \tshfl.sync.{mode}.b32 %r3|%p1, %r2, %r5, %r6, -1;\n\tselp.u32 %r4, 1, 0, %p1;\n\
             \tmul.wide.u32 %rd2, %r1, 8;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
             \tst.global.u32 [%rd3], %r3;\n\tst.global.u32 [%rd3+4], %r4;\n\tret;\n}}\n"
        ));
        for width in [32u32, 16, 8] {
            for b in [0u32, 1, 3, 5, 17] {
                let c = if mode == "up" { (32 - width) << 8 } else { ((32 - width) << 8) | 0x1f };
                let mut mem = Memory::new();
                let out = mem.add_zeroed("out", 64 * 8);
                run(&k, &Launch::new([1, 1, 1], [64, 1, 1], vec![Arg::Buffer(out), Arg::u32(b), Arg::u32(c)]), &mut mem);
                let got = mem.read_u32s(out);
                for t in 0..64u32 {
                    let (lane, warp) = (t % 32, t / 32);
                    let (src, p) = cuda_shfl(mode, lane, b, width);
                    assert_eq!(got[2 * t as usize], (warp * 32 + src) * 10, "{mode} width {width} b {b} thread {t}: value");
                    if mode != "idx" {
                        assert_eq!(got[2 * t as usize + 1], p as u32, "{mode} width {width} b {b} thread {t}: predicate");
                    }
                }
            }
        }
    }
}

#[test]
fn votes_and_activemask() {
    let k = kernel(
        ".visible .entry v(.param .u64 v_param_0)\n{\n\t.reg .pred %p<8>;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<4>;\n\
         \tld.param.u64 %rd1, [v_param_0];\n\tmov.u32 %r1, %tid.x;\n\tand.b32 %r2, %r1, 1;\n\tsetp.eq.s32 %p1, %r2, 1;\n\
         \tsetp.lt.u32 %p2, %r1, 64;\n\
         \tvote.sync.ballot.b32 %r3, %p1, -1;\n\tvote.sync.any.pred %p3, %p1, -1;\n\tvote.sync.all.pred %p4, %p2, -1;\n\
         \tvote.sync.uni.pred %p5, %p1, -1;\n\
         \tselp.u32 %r4, 1, 0, %p3;\n\tselp.u32 %r5, 1, 0, %p4;\n\tselp.u32 %r6, 1, 0, %p5;\n\
         \tmov.u32 %r7, 0;\n\tsetp.lt.u32 %p6, %r1, 5;\n\t@!%p6 bra $L_skip;\n\tactivemask.b32 %r7;\n$L_skip:\n\
         \tmul.wide.u32 %rd2, %r1, 20;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
         \tst.global.u32 [%rd3], %r3;\n\tst.global.u32 [%rd3+4], %r4;\n\tst.global.u32 [%rd3+8], %r5;\n\
         \tst.global.u32 [%rd3+12], %r6;\n\tst.global.u32 [%rd3+16], %r7;\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 96 * 20);
    run(&k, &Launch::new([1, 1, 1], [96, 1, 1], vec![Arg::Buffer(out)]), &mut mem);
    let got = mem.read_u32s(out);
    for t in 0..96usize {
        let row = &got[5 * t..5 * t + 5];
        assert_eq!(row[0], 0xaaaa_aaaa, "ballot, thread {t}");
        assert_eq!(row[1], 1, "any, thread {t}");
        assert_eq!(row[2], (t < 64) as u32, "all, thread {t}");
        assert_eq!(row[3], 0, "uni, thread {t}");
        assert_eq!(row[4], if t < 5 { 0x1f } else { 0 }, "activemask, thread {t}");
    }
}

const SHFL_FULL: &str = ".visible .entry w(.param .u64 w_param_0)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\
     \tld.param.u64 %rd1, [w_param_0];\n\tmov.u32 %r1, %tid.x;\n\
     \tshfl.sync.down.b32 %r2, %r1, 1, 31, -1;\n\
     \tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r2;\n\tret;\n}\n";

#[test]
fn full_mask_in_a_partial_warp_is_divergence() {
    let k = kernel(SHFL_FULL);
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 4 * 64);
    run(&k, &Launch::new([1, 1, 1], [64, 1, 1], vec![Arg::Buffer(out)]), &mut mem);
    let err = interp::run(&k, &Launch::new([1, 1, 1], [40, 1, 1], vec![Arg::Buffer(out)]), &mut mem).unwrap_err();
    match &err {
        InterpError::WarpDivergence { warp: 1, arrived, missing, .. } => {
            assert_eq!(arrived.len(), 8);
            assert_eq!(missing.len(), 24);
            assert_eq!(missing[0], (8, Whereabouts::NoSuchThread));
        }
        other => panic!("{other}"),
    }
}

/// Odd lanes leave (or branch away) before a full-mask `shfl.sync.bfly` that even lanes run with
/// lane offset `offset`; `odd_tail` is what odd lanes do instead of the shuffle.
fn even_lanes_shuffle(offset: u32, odd_tail: &str) -> Kernel {
    kernel(&format!(
        ".visible .entry w(.param .u64 w_param_0)\n{{\n\t.reg .pred %p<3>;\n\t.reg .b32 %r<4>;\n\
         \tmov.u32 %r1, %tid.x;\n\tand.b32 %r2, %r1, 1;\n\tsetp.eq.s32 %p1, %r2, 1;\n\t@%p1 bra $L_odd;\n\
         \tshfl.sync.bfly.b32 %r3, %r1, {offset}, 31, -1;\n\tbra.uni $L_end;\n$L_odd:\n{odd_tail}$L_end:\n\tret;\n}}\n"
    ))
}

#[test]
fn lanes_that_exit_before_a_shuffle_take_no_part() {
    // PTX (sm_70+): `shfl.sync` waits for the non-exited lanes of its mask. Odd lanes exit, even
    // lanes exchange among themselves with a full mask: correct.
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 4);
    run(&even_lanes_shuffle(2, "\tret;\n"), &Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::Buffer(out)]), &mut mem);
    // With the even lanes' mask it is fine too.
    let k2 = kernel(
        ".visible .entry w(.param .u64 w_param_0)\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\
         \tmov.u32 %r1, %tid.x;\n\tand.b32 %r2, %r1, 1;\n\tsetp.eq.s32 %p1, %r2, 1;\n\t@%p1 bra $L_end;\n\
         \tshfl.sync.bfly.b32 %r3, %r1, 2, 31, 1431655765;\n$L_end:\n\tret;\n}\n",
    );
    run(&k2, &Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::Buffer(out)]), &mut mem);
}

#[test]
fn reading_an_exited_lane_is_an_error() {
    // Even lanes read their odd neighbours (offset 1), which have exited: the value is undefined.
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 4);
    let err = interp::run(&even_lanes_shuffle(1, "\tret;\n"), &Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::Buffer(out)]), &mut mem).unwrap_err();
    match &err {
        InterpError::WarpDivergence { reason, .. } => assert!(reason.contains("has exited"), "{err}"),
        other => panic!("{other}"),
    }
}

#[test]
fn live_lanes_that_skip_a_shuffle_are_divergence() {
    // Odd lanes do not exit: they vote instead, so the even lanes' shuffle waits for them forever.
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 4);
    let vote = "\tsetp.ne.s32 %p2, %r1, 0;\n\tvote.sync.ballot.b32 %r3, %p2, -1;\n";
    let err = interp::run(&even_lanes_shuffle(2, vote), &Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::Buffer(out)]), &mut mem).unwrap_err();
    assert!(matches!(err, InterpError::WarpDivergence { .. }), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Barriers and bookkeeping.

#[test]
fn barrier_in_a_branch_is_divergence() {
    let k = kernel(
        ".visible .entry b()\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n\
         \tmov.u32 %r1, %tid.x;\n\tsetp.ge.u32 %p1, %r1, 16;\n\t@%p1 bra $L_end;\n\tbar.sync 0;\n$L_end:\n\tret;\n}\n",
    );
    let err = interp::run(&k, &Launch::new([1, 1, 1], [32, 1, 1], vec![]), &mut Memory::new()).unwrap_err();
    match &err {
        InterpError::BarrierDivergence { arrived, missing, .. } => {
            assert_eq!(arrived.len(), 16);
            assert!(missing.iter().all(|(t, w)| t[0] >= 16 && *w == Whereabouts::Exited));
        }
        other => panic!("{other}"),
    }
    // Uniformly taken, the same barrier is fine.
    run(&k, &Launch::new([1, 1, 1], [16, 1, 1], vec![]), &mut Memory::new());
}

#[test]
fn two_different_barriers_are_divergence() {
    let k = kernel(
        ".visible .entry b()\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n\
         \tmov.u32 %r1, %tid.x;\n\tand.b32 %r2, %r1, 1;\n\tsetp.eq.s32 %p1, %r2, 1;\n\t@%p1 bra $L_odd;\n\
         \tbar.sync 0;\n\tbra.uni $L_end;\n$L_odd:\n\tbar.sync 0;\n$L_end:\n\tret;\n}\n",
    );
    let err = interp::run(&k, &Launch::new([1, 1, 1], [8, 1, 1], vec![]), &mut Memory::new()).unwrap_err();
    match &err {
        InterpError::BarrierDivergence { arrived, missing, .. } => {
            assert_eq!(arrived, &[[0, 0, 0], [2, 0, 0], [4, 0, 0], [6, 0, 0]]);
            assert!(missing.iter().all(|(_, w)| matches!(w, Whereabouts::AtBarrier { .. })), "{err}");
        }
        other => panic!("{other}"),
    }
}

/// for (i = 0; i < 3; i++) { s[tid] = i; bar.sync; }  then out[tid] = s[tid ^ 1]
fn phased_loop() -> Kernel {
    kernel(
        ".visible .entry l(.param .u64 l_param_0)\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<6>;\n\
         \t.shared .align 4 .b8 s[128];\n\
         \tld.param.u64 %rd1, [l_param_0];\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, 0;\n\
         \tmul.wide.u32 %rd2, %r1, 4;\n\tmov.u64 %rd3, s;\n\tadd.s64 %rd4, %rd3, %rd2;\n\
         $L_loop:\n\tst.shared.u32 [%rd4], %r2;\n\tbar.sync 0;\n\tadd.s32 %r2, %r2, 1;\n\tsetp.lt.s32 %p1, %r2, 3;\n\t@%p1 bra $L_loop;\n\
         \txor.b32 %r3, %r1, 1;\n\tmul.wide.u32 %rd2, %r3, 4;\n\tadd.s64 %rd5, %rd3, %rd2;\n\tld.shared.u32 %r4, [%rd5];\n\
         \tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd5, %rd1, %rd2;\n\tst.global.u32 [%rd5], %r4;\n\tret;\n}\n",
    )
}

#[test]
fn loop_iterations_and_phases_are_recorded() {
    let k = phased_loop();
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 4 * 32);
    let t = run(&k, &Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::Buffer(out)]), &mut mem);
    assert_eq!(mem.read_u32s(out), vec![2; 32]);
    let stores: Vec<_> = t.accesses.iter().filter(|a| a.thread == [5, 0, 0] && a.space == Space::Shared && a.kind == AccessKind::Write).collect();
    assert_eq!(stores.len(), 3);
    for (i, s) in stores.iter().enumerate() {
        assert_eq!(s.phase, i as u32);
        assert_eq!(s.iterations.len(), 1);
        assert_eq!(s.iterations[0].1, i as u64);
        assert_eq!(s.addr, 20);
    }
    let read = t.accesses.iter().find(|a| a.thread == [5, 0, 0] && a.kind == AccessKind::Read).unwrap();
    assert_eq!((read.phase, read.addr, read.iterations.len()), (3, 16, 0));
    assert_eq!(t.shared_var_at(16).map(|(v, off)| (v.name.as_str(), off)), Some(("s", 16)));
    assert!(t.races().is_empty());
}

#[test]
fn a_run_records_only_the_accesses_it_is_asked_for() {
    let k = phased_loop();
    let run_recording = |recording| {
        let mut mem = Memory::new();
        let out = mem.add_zeroed("out", 4 * 32);
        run(&k, &Launch::new([1, 1, 1], [32, 1, 1], vec![Arg::Buffer(out)]).recording(recording), &mut mem)
    };
    let all = run_recording(Recording::All);
    let global_store = all.accesses.iter().find(|a| a.space == Space::Global).unwrap().inst;
    let shared_store = all.accesses.iter().find(|a| a.space == Space::Shared && a.kind == AccessKind::Write).unwrap().inst;
    let only = run_recording(Recording::only(vec![global_store]));
    assert_eq!(only.accesses.len(), 32, "one store per thread, nothing else");
    // The stored bits go with their own store, not with whatever access came last.
    assert!(only.accesses.iter().all(|a| a.inst == global_store && a.written == Some(2)));
    let shared = run_recording(Recording::only(vec![shared_store]));
    assert_eq!(shared.accesses.len(), 3 * 32);
    assert!(shared.accesses.iter().all(|a| a.written == Some(a.iterations[0].1)));
    assert!(run_recording(Recording::Off).accesses.is_empty());
    assert_eq!(only.steps, all.steps, "recording changes what is kept, not what runs");
}

// ---------------------------------------------------------------------------------------------
// Values.

#[test]
fn floats_are_exact_until_stored() {
    let k = kernel(
        ".visible .entry f(.param .u64 f_param_0)\n{\n\t.reg .f32 %f<10>;\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<2>;\n\
         \tld.param.u64 %rd1, [f_param_0];\n\
         \tmov.f32 %f1, 0f3F800000;\n\tmov.f32 %f2, 0f40400000;\n\tdiv.rn.f32 %f3, %f1, %f2;\n\tmul.f32 %f4, %f3, %f2;\n\
         \tmov.f32 %f5, 0f4B800000;\n\tadd.f32 %f6, %f5, %f1;\n\tsub.f32 %f7, %f6, %f5;\n\
         \tmov.b32 %r1, %f3;\n\tfma.rn.f32 %f8, %f3, %f3, %f1;\n\
         \tst.global.f32 [%rd1], %f3;\n\tst.global.f32 [%rd1+4], %f4;\n\tst.global.f32 [%rd1+8], %f7;\n\
         \tst.global.u32 [%rd1+12], %r1;\n\tst.global.f32 [%rd1+16], %f8;\n\
         \tld.global.f32 %f9, [%rd1+16];\n\tmul.f32 %f9, %f9, %f2;\n\tst.global.f32 [%rd1+20], %f9;\n\
         \tst.global.u8 [%rd1+16], %r2;\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 24);
    run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(out)]), &mut mem);
    let f = mem.read_f32s(out);
    assert_eq!(mem.read_exact(out, 0), Some(&ratio(1, 3)));
    assert_eq!(f[0], 1.0f32 / 3.0);
    assert_eq!(mem.read_exact(out, 4), Some(&ratio(1, 1)), "(1/3) * 3");
    assert_eq!(f[2], 1.0, "2^24 + 1 - 2^24 is exact (f32 arithmetic would give 0)");
    assert_eq!(mem.read_u32s(out)[3], (1.0f32 / 3.0).to_bits(), "mov.b32 rounds to the nearest f32");
    // The exact value survives a store and a load: (1/9 + 1) * 3 = 10/3.
    assert_eq!(mem.read_exact(out, 20), Some(&ratio(10, 3)));
    // A byte store into the float drops its exact value.
    assert_eq!(mem.read_exact(out, 16), None);
}

#[test]
fn conversions_round_as_asked() {
    // out[i] = cvt.<mode>.s32.f32(x) for x in {-2.5, 2.5, 3.5, -0.5}, modes rni rzi rmi rpi.
    let modes = ["rni", "rzi", "rmi", "rpi"];
    let mut body = String::from(
        ".visible .entry c(.param .u64 c_param_0, .param .u64 c_param_1)\n{\n\t.reg .f32 %f<12>;\n\t.reg .b32 %r<8>;\n\t.reg .b16 %rs<4>;\n\t.reg .b64 %rd<4>;\n\
         \tld.param.u64 %rd1, [c_param_0];\n\tld.param.u64 %rd2, [c_param_1];\n",
    );
    for x in 0..4 {
        body += &format!("\tld.global.f32 %f{x}, [%rd2+{}];\n", 4 * x);
    }
    let mut off = 0;
    for m in modes {
        for x in 0..4 {
            body += &format!("\tcvt.{m}.s32.f32 %r1, %f{x};\n\tst.global.u32 [%rd1+{off}], %r1;\n");
            off += 4;
        }
    }
    // f16 round trip of 1/3, int → float rounding, saturation, unsigned saturation.
    body += "\tmov.f32 %f5, 0f3F800000;\n\tmov.f32 %f6, 0f40400000;\n\tdiv.rn.f32 %f7, %f5, %f6;\n\
             \tcvt.rn.f16.f32 %rs1, %f7;\n\tcvt.f32.f16 %f8, %rs1;\n";
    body += &format!("\tst.global.f32 [%rd1+{off}], %f8;\n");
    off += 4;
    body += "\tmov.u32 %r2, 16777217;\n\tcvt.rn.f32.s32 %f9, %r2;\n";
    body += &format!("\tst.global.f32 [%rd1+{off}], %f9;\n");
    off += 4;
    body += "\tmov.f32 %f10, 0f40000000;\n\tcvt.sat.f32.f32 %f11, %f10;\n";
    body += &format!("\tst.global.f32 [%rd1+{off}], %f11;\n");
    off += 4;
    body += "\tcvt.rzi.u32.f32 %r3, %f0;\n";
    body += &format!("\tst.global.u32 [%rd1+{off}], %r3;\n\tret;\n}}\n");
    let k = kernel(&body);
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 80);
    let xs = mem.add_f32("x", &[-2.5, 2.5, 3.5, -0.5]);
    run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(out), Arg::Buffer(xs)]), &mut mem);
    let i = mem.read_i32s(out);
    assert_eq!(&i[0..4], &[-2, 2, 4, 0], "rni");
    assert_eq!(&i[4..8], &[-2, 2, 3, 0], "rzi");
    assert_eq!(&i[8..12], &[-3, 2, 3, -1], "rmi");
    assert_eq!(&i[12..16], &[-2, 3, 4, 0], "rpi");
    let f = mem.read_f32s(out);
    assert_eq!(f[16], 0.33325195, "1/3 through f16");
    assert_eq!(f[17], 16777216.0, "16777217 rounds to an even f32");
    assert_eq!(f[18], 1.0, "saturated");
    assert_eq!(i[19], 0, "negative to unsigned saturates at 0");
}

#[test]
fn narrow_loads_extend_by_their_type() {
    let k = kernel(
        ".visible .entry n(.param .u64 n_param_0, .param .u64 n_param_1)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b16 %rs<3>;\n\t.reg .b64 %rd<3>;\n\
         \tld.param.u64 %rd1, [n_param_0];\n\tld.param.u64 %rd2, [n_param_1];\n\
         \tld.global.s8 %r1, [%rd2];\n\tld.global.u8 %r2, [%rd2];\n\tld.global.s8 %rs1, [%rd2];\n\tcvt.s32.s16 %r3, %rs1;\n\
         \tst.global.u32 [%rd1], %r1;\n\tst.global.u32 [%rd1+4], %r2;\n\tst.global.u32 [%rd1+8], %r3;\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    let (out, inp) = (mem.add_zeroed("out", 12), mem.add_i8("in", &[-3]));
    run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(out), Arg::Buffer(inp)]), &mut mem);
    assert_eq!(mem.read_i32s(out), vec![-3, 253, -3]);
}

#[test]
fn unordered_float_comparisons() {
    // p = x <=u 0 (true for NaN), q = x < 0 (false for NaN), r = isnan(x).
    let k = kernel(
        ".visible .entry u(.param .u64 u_param_0, .param .u64 u_param_1)\n{\n\t.reg .pred %p<4>;\n\t.reg .f32 %f<2>;\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<5>;\n\
         \tld.param.u64 %rd1, [u_param_0];\n\tld.param.u64 %rd2, [u_param_1];\n\tmov.u32 %r1, %tid.x;\n\
         \tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tld.global.f32 %f1, [%rd4];\n\
         \tsetp.leu.f32 %p1, %f1, 0f00000000;\n\tsetp.lt.f32 %p2, %f1, 0f00000000;\n\tsetp.nan.f32 %p3, %f1, %f1;\n\
         \tselp.u32 %r2, 1, 0, %p1;\n\tselp.u32 %r3, 2, 0, %p2;\n\tselp.u32 %r4, 4, 0, %p3;\n\
         \tor.b32 %r5, %r2, %r3;\n\tor.b32 %r6, %r5, %r4;\n\
         \tadd.s64 %rd4, %rd1, %rd3;\n\tst.global.u32 [%rd4], %r6;\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    let xs = [f32::NAN, -1.0, 0.0, 2.0, f32::NEG_INFINITY];
    let (out, inp) = (mem.add_zeroed("out", 20), mem.add_f32("x", &xs));
    run(&k, &Launch::new([1, 1, 1], [5, 1, 1], vec![Arg::Buffer(out), Arg::Buffer(inp)]), &mut mem);
    assert_eq!(mem.read_u32s(out), vec![1 | 4, 1 | 2, 1, 0, 1 | 2]);
}

#[test]
fn atomics_apply_in_order() {
    let k = kernel(
        ".visible .entry a(.param .u64 a_param_0)\n{\n\t.reg .b32 %r<10>;\n\t.reg .f32 %f<3>;\n\t.reg .b64 %rd<2>;\n\
         \tld.param.u64 %rd1, [a_param_0];\n\tmov.u32 %r1, %tid.x;\n\
         \tatom.global.add.u32 %r2, [%rd1], 1;\n\
         \tatom.global.max.s32 %r3, [%rd1+4], %r1;\n\
         \tatom.global.inc.u32 %r4, [%rd1+8], 2;\n\
         \tatom.global.cas.b32 %r5, [%rd1+12], 0, 7;\n\
         \tmov.f32 %f1, 0f3DCCCCCD;\n\tatom.global.add.f32 %f2, [%rd1+16], %f1;\n\
         \tatom.global.exch.b32 %r6, [%rd1+20], %r1;\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 24);
    let t = run(&k, &Launch::new([1, 1, 1], [5, 1, 1], vec![Arg::Buffer(out)]), &mut mem);
    let u = mem.read_u32s(out);
    assert_eq!(&u[..4], &[5, 4, 2, 7]); // inc wraps after 2: 0 1 2 0 1 2
    assert_eq!(u[5], 4);
    // Five exact additions of the f32 nearest 0.1.
    let tenth = interp::FloatVal::from_f32(0.1).as_rational().unwrap().clone();
    assert_eq!(mem.read_exact(out, 16), Some(&(tenth * BigRational::from_integer(5.into()))));
    assert!(t.races().is_empty(), "atomics do not race with each other");
}

#[test]
fn module_globals_locals_struct_params_and_32_bit_shared_addresses() {
    let k = kernel(
        ".global .align 4 .u32 counter;\n\
         .visible .entry g(.param .align 4 .b8 g_param_0[8], .param .u64 g_param_1)\n{\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<8>;\n\
         \t.local .align 4 .b8 __local_depot0[8];\n\t.shared .align 4 .b8 sm[64];\n\
         \tld.param.u32 %r1, [g_param_0+4];\n\tld.param.u64 %rd1, [g_param_1];\n\tmov.u32 %r2, %tid.x;\n\
         \tatom.global.add.u32 %r3, [counter], %r1;\n\
         \tmov.u64 %rd2, __local_depot0;\n\tst.local.u32 [%rd2+4], %r2;\n\tld.local.u32 %r4, [%rd2+4];\n\
         \tmov.u32 %r5, sm;\n\tshl.b32 %r6, %r2, 2;\n\tadd.s32 %r7, %r5, %r6;\n\tst.shared.u32 [%r7], %r4;\n\
         \tbar.sync 0;\n\
         \tmov.u64 %rd3, sm;\n\tcvta.shared.u64 %rd4, %rd3;\n\tld.u32 %r8, [%rd4+4];\n\
         \tmov.u32 %r9, %ctaid.x;\n\tmad.lo.s32 %r9, %r9, 16, %r2;\n\tmul.wide.u32 %rd5, %r9, 4;\n\tadd.s64 %rd6, %rd1, %rd5;\n\tst.global.u32 [%rd6], %r8;\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 4 * 32);
    let mut s = vec![0u8; 8];
    s[4] = 3;
    let t = run(&k, &Launch::new([2, 1, 1], [16, 1, 1], vec![Arg::Bytes(s), Arg::Buffer(out)]), &mut mem);
    assert_eq!(mem.read_u32s(out), vec![1; 32]);
    let counter = mem.find("counter").unwrap();
    assert_eq!(mem.read_u32s(counter), vec![2 * 16 * 3]);
    // The generic load resolved to shared memory.
    assert!(t.accesses.iter().any(|a| a.space == Space::Shared && a.kind == AccessKind::Read && a.addr == 4));
    assert!(t.accesses.iter().any(|a| a.space == Space::Local));
    assert!(t.races().is_empty());
}

#[test]
fn out_of_bounds_before_a_buffer_and_past_a_shared_variable() {
    let k = kernel(
        ".visible .entry o(.param .u64 o_param_0, .param .u32 o_param_1)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<6>;\n\
         \t.shared .align 4 .b8 a[16];\n\t.shared .align 4 .b8 b[16];\n\
         \tld.param.u64 %rd1, [o_param_0];\n\tld.param.u32 %r1, [o_param_1];\n\
         \tmov.u64 %rd2, a;\n\tcvt.u64.u32 %rd3, %r1;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.shared.u32 [%rd4], %r1;\n\
         \tld.global.u32 %r2, [%rd1+-4];\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    let buf = mem.add_zeroed("data", 16);
    // Offset 16 would be `b` on hardware; here it is past `a`.
    let err = interp::run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(buf), Arg::u32(16)]), &mut mem).unwrap_err();
    match &err {
        InterpError::OutOfBounds { access, region, region_size, offset } => {
            assert_eq!((access.space, region.as_str(), *region_size, *offset), (Space::Shared, "a", 16, 16), "{err}");
            assert_eq!(access.kind, AccessKind::Write);
        }
        other => panic!("{other}"),
    }
    let err = interp::run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(buf), Arg::u32(12)]), &mut mem).unwrap_err();
    match &err {
        InterpError::OutOfBounds { access, region, region_size, offset } => {
            assert_eq!((access.space, region.as_str(), *region_size, *offset), (Space::Global, "data", 16, -4), "{err}");
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("offset -4 of `data`"), "{err}");
}

#[test]
fn dynamic_shared_memory_has_the_launch_size() {
    let k = kernel(
        ".extern .shared .align 4 .b8 dyn[];\n\
         .visible .entry d(.param .u32 d_param_0)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\
         \tld.param.u32 %r1, [d_param_0];\n\tmov.u64 %rd1, dyn;\n\tcvt.u64.u32 %rd2, %r1;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
         \tst.shared.u32 [%rd3], %r1;\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::u32(60)]).dynamic_shared(64), &mut mem);
    let err = interp::run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::u32(64)]).dynamic_shared(64), &mut mem).unwrap_err();
    assert!(matches!(err, InterpError::OutOfBounds { region_size: 64, offset: 64, .. }), "{err}");
}

#[test]
fn null_pointers_and_initialized_constants() {
    let k = kernel(
        ".visible .entry z(.param .u64 z_param_0)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\
         \tld.param.u64 %rd1, [z_param_0];\n\tld.global.u32 %r1, [%rd1];\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    mem.add_zeroed("data", 16);
    let err = interp::run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::u64(0)]), &mut mem).unwrap_err();
    match &err {
        InterpError::OutOfBounds { region, .. } => assert_eq!(region, "no buffer", "{err}"),
        other => panic!("{other}"),
    }
    let k = kernel(
        ".const .align 4 .b8 table[8] = {1, 0, 0, 0, 2, 0, 0, 0};\n\
         .visible .entry c(.param .u64 c_param_0)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\
         \tld.param.u64 %rd1, [c_param_0];\n\tld.const.u32 %r1, [table+4];\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n",
    );
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 4);
    let err = interp::run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(out)]), &mut mem).unwrap_err();
    assert!(matches!(&err, InterpError::BadLaunch(m) if m.contains("table")), "{err}");
    // Given its contents, the table is read.
    mem.add_u32("table", &[1, 2]);
    run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(out)]), &mut mem);
    assert_eq!(mem.read_u32s(out), vec![2]);
}
