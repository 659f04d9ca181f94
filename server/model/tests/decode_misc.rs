//! `redux.sync` (as shuffles), `slct`, the hint instructions that are no-ops, and the
//! instructions left unmodelled on purpose: each becomes one `Op::Unsupported` whose reason names
//! what it does that the model does not describe.

// An error ends a run; its size does not matter here.
#![allow(clippy::result_large_err)]

use model::interp::{self, Arg, InterpError, Launch, Memory};
use model::Kernel;

fn kernel(body: &str) -> Kernel {
    let text = format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{{\n\
         \t.reg .pred %p<8>;\n\t.reg .b32 %r<16>;\n\t.reg .f32 %f<8>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         {body}\n\tret;\n}}\n"
    );
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{body}: {:?}", parsed.errors);
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

#[test]
fn redux_over_a_whole_warp_reduces_every_lane() {
    // Lane values 3*lane - 40 (negative for the first lanes).
    let values: Vec<i32> = (0..32).map(|l| 3 * l - 40).collect();
    for (op, ty, want) in [
        ("add", "s32", values.iter().sum::<i32>() as u32),
        ("min", "s32", *values.iter().min().unwrap() as u32),
        ("max", "s32", *values.iter().max().unwrap() as u32),
        ("min", "u32", values.iter().map(|v| *v as u32).min().unwrap()),
        ("max", "u32", values.iter().map(|v| *v as u32).max().unwrap()),
        ("and", "b32", values.iter().fold(u32::MAX, |a, v| a & *v as u32)),
        ("or", "b32", values.iter().fold(0, |a, v| a | *v as u32)),
        ("xor", "b32", values.iter().fold(0, |a, v| a ^ *v as u32)),
    ] {
        let k = kernel(&format!("\tand.b32 %r5, %r1, 31;\n\tmad.lo.s32 %r2, %r5, 3, -40;\n\tredux.sync.{op}.{ty} %r3, %r2, -1;\n\tst.global.u32 [%rd4], %r3;"));
        assert_eq!(reasons(&k), Vec::<String>::new(), "redux.sync.{op}.{ty}");
        assert_eq!(run(&k, 64).unwrap(), vec![want; 64], "redux.sync.{op}.{ty}");
    }
    // Lanes that do not arrive are warp divergence, as for the shuffles it is made of.
    let k = kernel("\tsetp.lt.u32 %p1, %r1, 8;\n\t@%p1 bra $L_end;\n\tredux.sync.add.u32 %r3, %r1, 0xffffffff;\n$L_end:\n\tst.global.u32 [%rd4], %r3;");
    assert!(matches!(run(&k, 32), Err(InterpError::WarpDivergence { .. })));
    // A partial member mask is not modelled: decided when lowering for an immediate, when
    // running (or when the lifter folds the register) otherwise.
    let k = kernel("\tredux.sync.add.u32 %r3, %r1, 0xffff;");
    assert_eq!(reasons(&k), vec!["`redux.sync` with a member mask other than all 32 lanes is not modelled".to_string()]);
    for (mask, unsupported) in [("-1", false), ("0xffff", true)] {
        let k = kernel(&format!("\tmov.b32 %r9, {mask};\n\tredux.sync.add.u32 %r3, %r1, %r9;\n\tst.global.u32 [%rd4], %r3;"));
        assert_eq!(model::symbolic::lift(&k).unsupported.len(), usize::from(unsupported), "mask {mask}");
        assert_eq!(matches!(run(&k, 32), Err(InterpError::Unsupported { .. })), unsupported, "mask {mask}");
    }
}

#[test]
fn slct_selects_on_the_sign_of_its_third_operand() {
    let k = kernel("\tadd.s32 %r2, %r1, -2;\n\tslct.u32.s32 %r3, 100, 200, %r2;\n\tst.global.u32 [%rd4], %r3;");
    assert_eq!(run(&k, 4).unwrap(), vec![200, 200, 100, 100]);
    let k = kernel("\tcvt.rn.f32.u32 %f1, %r1;\n\tadd.f32 %f2, %f1, 0fC0000000;\n\tslct.s32.f32 %r3, 7, 9, %f2;\n\tst.global.u32 [%rd4], %r3;");
    assert_eq!(run(&k, 4).unwrap(), vec![9, 9, 7, 7]);
}

#[test]
fn hints_are_no_ops() {
    for hint in [
        "griddepcontrol.wait;",
        "griddepcontrol.launch_dependents;",
        "setmaxnreg.inc.sync.aligned.u32 232;",
        "fence.proxy.async;",
        "fence.acq_rel.gpu;",
        "membar.gl;",
        "nanosleep.u32 100;",
        "prefetch.global.L2 [%rd4];",
    ] {
        let k = kernel(&format!("\t{hint}\n\tst.global.u32 [%rd4], %r1;"));
        assert_eq!(reasons(&k), Vec::<String>::new(), "{hint}");
        assert_eq!(run(&k, 2).unwrap(), vec![0, 1], "{hint}");
    }
}

#[test]
fn unmodelled_instructions_say_what_the_model_does_not_describe() {
    let cases = [
        ("cp.async.ca.shared.global [%rd5], [%rd4], 16;", "`cp.async` copies global memory to shared memory in the background"),
        ("cp.async.commit_group;", "waits for asynchronous copies"),
        ("cp.async.wait_group 0;", "waits for asynchronous copies"),
        ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd5], [%rd4], 64, [%rd6];", "bulk and tensor copies (TMA)"),
        ("mbarrier.init.shared.b64 [%rd5], 32;", "`mbarrier` objects"),
        ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rd5], %r1;", "`mbarrier` objects"),
        ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r2, %r3, %r4, %r5}, [%rd5];", "`ldmatrix` moves matrix fragments"),
        ("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd5], {%r2};", "`stmatrix` moves matrix fragments"),
        (
            "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r2, %r3}, {%r4}, {%f1, %f2, %f3, %f4};",
            "tensor-core matrix multiply-accumulate",
        ),
        ("wgmma.fence.sync.aligned;", "warpgroup matrix multiply"),
        ("tensormap.replace.tile.global_address.global.b1024.b64 [%rd4], %rd5;", "tensor-map"),
        ("elect.sync %r2|%p1, -1;", "`elect.sync`"),
        ("match.any.sync.b32 %r2, %r1, -1;", "`match.sync`"),
        ("ld.shared::cluster.u32 %r2, [%rd5];", "distributed shared memory"),
        ("atom.global.v2.f32.add {%f1, %f2}, [%rd4], {%f3, %f4};", "packed or vector atomics"),
        ("discard.global.L2 [%rd4], 128;", "`discard`"),
        ("addc.u32 %r2, %r1, %r1;", "carry flag"),
        ("vabsdiff4.u32.u32.u32.add %r2, %r1, %r1, %r1;", "video"),
        ("ld.global.b128 %rd5, [%rd4];", "128-bit elements"),
    ];
    for (inst, why) in cases {
        let k = kernel(&format!("\tmov.u64 %rd5, 0;\n\tmov.u64 %rd6, 0;\n\t{inst}"));
        let r = reasons(&k);
        assert!(r.len() == 1 && r[0].contains(why), "{inst}: {r:?}");
    }
}

/// Loads and stores with cache and eviction qualifiers, vectors of every element width, and the
/// packing `mov`s clang writes around them.
#[test]
fn qualified_and_vector_accesses_and_packing_moves() {
    let body = "\tmul.wide.u32 %rd5, %r1, 16;\n\tadd.s64 %rd6, %rd2, %rd5;\n\
                \tld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%r2, %r3, %r4, %r5}, [%rd6];\n\
                \tld.global.L2::cache_hint.v2.u64 {%rd3, %rd7}, [%rd6], %rd1;\n\
                \tmov.b64 {%r6, %r7}, %rd7;\n\
                \tmov.b64 %rd7, {%r7, %r6};\n\
                \tst.global.cs.v2.u64 [%rd6], {%rd7, %rd3};\n\
                \tld.global.v4.u16 {%rs1, %rs2, %rs3, %rs4}, [%rd6];\n\
                \tmov.b32 %r8, {%rs1, %rs4};\n\
                \tmov.b32 {%rs5, %rs6}, %r8;\n\
                \tld.global.v2.u8 {%rs7, %rs8}, [%rd6+8];\n\
                \tst.global.L1::no_allocate.v4.b16 [%rd6+8], {%rs6, %rs5, %rs8, %rs7};\n\
                \tadd.s32 %r9, %r2, %r5;\n\
                \tst.relaxed.gpu.global.u32 [%rd6+12], %r9;";
    let text = format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{{\n\
         \t.reg .b16 %rs<10>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, %tid.x;\n{body}\n\tret;\n}}\n"
    );
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let k = model::lower_module(&parsed.module).pop().unwrap().1.unwrap();
    assert_eq!(reasons(&k), Vec::<String>::new());
    let words: Vec<u32> = (0..8).map(|i| 0x1111_1111 * (i + 1)).collect();
    let mut mem = Memory::new();
    let buf = mem.add_u32("buf", &words);
    interp::run(&k, &Launch::new([1, 1, 1], [2, 1, 1], vec![Arg::Buffer(buf)]), &mut mem).unwrap();
    let got = mem.read_u32s(buf);
    for t in 0..2usize {
        let w = &words[4 * t..4 * t + 4];
        // {w3, w2} (the second u64 with its halves swapped) then {w0, w1}; then the u16 halves
        // w2.hi, w3.lo packed and unpacked into word 2; word 3 is w0 + w3.
        let want = [w[3], w[2], (w[2] >> 16) | ((w[3] & 0xffff) << 16), w[0].wrapping_add(w[3])];
        assert_eq!(got[4 * t..4 * t + 4], want, "thread {t}");
    }
}

/// clang reads the fields of a struct parameter through its address (`mov.b64 %rd1,
/// k_param_1; ld.param.u32 %r1, [%rd1+4]`); when the address is used for nothing else, the loads
/// read the parameter directly.
#[test]
fn struct_parameters_read_through_their_address() {
    let lower = |body: &str| {
        let text = format!(
            ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0, .param .align 8 .b8 k_param_1[16])\n{{\n\
             \t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n\tld.param.u64 %rd5, [k_param_0];\n\tmov.b64 %rd1, k_param_1;\n{body}\n\tret;\n}}\n"
        );
        let parsed = ptx::parse(&text);
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        model::lower_module(&parsed.module).pop().unwrap().1.unwrap()
    };
    let k = lower("\tld.param.u32 %r1, [%rd1+4];\n\tld.param.v2.u32 {%r2, %r3}, [%rd1+8];\n\tadd.s32 %r4, %r1, %r2;\n\tsub.s32 %r4, %r4, %r3;\n\tst.global.u32 [%rd5], %r4;");
    assert_eq!(reasons(&k), Vec::<String>::new());
    let mut mem = Memory::new();
    let out = mem.add_u32("out", &[0]);
    let fields: Vec<u8> = [1u32, 20, 300, 4000].iter().flat_map(|v| v.to_le_bytes()).collect();
    interp::run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(out), Arg::Bytes(fields)]), &mut mem).unwrap();
    assert_eq!(mem.read_u32s(out), vec![(20u32 + 300).wrapping_sub(4000)]);
    // Through a copy, as clang writes it for ggml's `soft_max_params`.
    let k = lower("\tmov.u64 %rd2, %rd1;\n\tld.param.v2.u32 {%r2, %r3}, [%rd2+8];\n\tsub.s32 %r4, %r3, %r2;\n\tst.global.u32 [%rd5], %r4;");
    assert_eq!(reasons(&k), Vec::<String>::new());
    let mut mem = Memory::new();
    let out = mem.add_u32("out", &[0]);
    let fields: Vec<u8> = [1u32, 20, 300, 4000].iter().flat_map(|v| v.to_le_bytes()).collect();
    interp::run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(out), Arg::Bytes(fields)]), &mut mem).unwrap();
    assert_eq!(mem.read_u32s(out), vec![3700]);
    // An address that escapes into arithmetic stays unsupported.
    let k = lower("\tadd.s64 %rd2, %rd1, 4;\n\tld.param.u32 %r1, [%rd2];\n\tst.global.u32 [%rd5], %r1;");
    let r = reasons(&k);
    assert!(r.iter().any(|x| x.contains("`k_param_1` is not a variable this kernel can address")), "{r:?}");
    // ... and says what it is: a struct indexed at run time (multi-tensor-apply kernels).
    assert!(r.iter().any(|x| x.contains("a struct passed by value indexed by a computed value")), "{r:?}");
}

/// `red` is an atomic without a result: every thread's addition lands, and its accesses are
/// atomic (they never race with each other).
#[test]
fn reduction_atomics_without_a_result() {
    let k = kernel("\tadd.s32 %r2, %r1, 1;\n\tred.global.add.u32 [%rd2], %r2;\n\tred.relaxed.gpu.global.max.s32 [%rd2+4], %r1;\n\tred.global.add.f32 [%rd2+8], 0f3F000000;");
    assert_eq!(reasons(&k), Vec::<String>::new());
    let mut mem = Memory::new();
    let out = mem.add_u32("out", &[0, 0, 0]);
    let trace = interp::run(&k, &Launch::new([2, 1, 1], [64, 1, 1], vec![Arg::Buffer(out)]), &mut mem).unwrap();
    assert!(trace.races().is_empty());
    let got = mem.read_u32s(out);
    assert_eq!(got[0], 2 * (1..=64).sum::<u32>());
    assert_eq!(got[1], 63);
    assert_eq!(f32::from_bits(got[2]), 64.0);
    let lifted = model::symbolic::lift(&k);
    assert!(lifted.accesses.iter().all(|a| matches!(a.kind, model::symbolic::AccessKind::Atomic(_))));
}

/// clang takes the high half of a 32-bit word through a scratch register declared in a nested
/// scope and named without `%` (`{ .reg .b16 tmp; mov.b32 {tmp, %rs2}, %r2; }`): a register,
/// not an unknown symbol.
#[test]
fn a_register_of_a_nested_scope_named_without_percent_is_a_register() {
    let k = kernel(
        "\t.reg .b16 %rs<4>;\n\tmov.b32 %r2, 0x12345678;\n\t{ .reg .b16 tmp; mov.b32 {tmp, %rs2}, %r2; }\n\
         \t{ .reg .b16 tmp; mov.b32 {%rs3, tmp}, %r2; }\n\tcvt.u32.u16 %r3, %rs2;\n\tcvt.u32.u16 %r4, %rs3;\n\
         \tshl.b32 %r4, %r4, 16;\n\tor.b32 %r5, %r3, %r4;\n\tst.global.u32 [%rd4], %r5;",
    );
    assert_eq!(reasons(&k), Vec::<String>::new());
    // High half in the low 16 bits, low half in the high 16 bits.
    assert_eq!(run(&k, 2).unwrap(), vec![0x5678_1234; 2]);
}

/// `.f64` starts with `.f6`, the prefix of the fp6 formats the model does not have: conversions
/// to and from double were all reported unsupported.
#[test]
fn conversions_with_double_are_modelled() {
    let k = kernel(
        "\t.reg .f64 %fd<4>;\n\tcvt.rn.f32.u32 %f1, %r1;\n\tcvt.f64.f32 %fd1, %f1;\n\tadd.f64 %fd2, %fd1, 0d3FF8000000000000;\n\
         \tcvt.rn.f32.f64 %f2, %fd2;\n\tcvt.rzi.u32.f32 %r2, %f2;\n\tst.global.u32 [%rd4], %r2;",
    );
    assert_eq!(reasons(&k), Vec::<String>::new());
    // tid + 1.5, truncated.
    assert_eq!(run(&k, 4).unwrap(), vec![1, 2, 3, 4]);
}

/// Eight aligned bytes of a struct read whole are a pointer of their own only when they are the
/// address: added to a pointer parameter (`src + p.offset`, an `int64_t` field) they are an
/// offset into that buffer.
#[test]
fn a_struct_field_is_a_pointer_only_where_nothing_else_is() {
    let text = ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0, .param .align 8 .b8 k_param_1[16])\n{\n\
                \t.reg .b64 %rd<8>;\n\tld.param.u64 %rd1, [k_param_0];\n\tld.param.u64 %rd2, [k_param_1+8];\n\tld.param.u64 %rd4, [k_param_1];\n\
                \tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], 0;\n\tsub.s64 %rd5, %rd1, %rd2;\n\tst.global.u32 [%rd5], 0;\n\
                \tst.global.u32 [%rd4], 0;\n\tret;\n}\n";
    let parsed = ptx::parse(text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let k = model::lower_module(&parsed.module).pop().unwrap().1.unwrap();
    let lifted = model::symbolic::lift(&k);
    let bases: Vec<_> = lifted.accesses.iter().map(|a| a.base).collect();
    use model::symbolic::Base;
    assert_eq!(bases, vec![Some(Base::Param(0)), Some(Base::Param(0)), Some(Base::Field { param: 1, offset: 0 })]);
}
