//! Which kernels depend only on their block's thread count (`model::block_shape`): the linear
//! index cooperative groups compute is recognised in any arrangement, and a thread index used
//! any other way, including through a value the expressions lose track of (a conversion to
//! float), is not.

use model::block_shape::{dimensions_read_apart, reads_only_linear_thread_index};
use model::symbolic::lift;
use model::Kernel;
use std::path::Path;

/// A kernel that computes the linear thread index into `%r7` (`mad.lo` as clang lowers
/// `thread_rank()`) and then runs `body`; `%rd2` is the output buffer.
fn kernel(body: &str) -> Kernel {
    let text = format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{{\n\
         \t.reg .b32 %r<16>;\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
         \tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %tid.y;\n\tmov.u32 %r3, %tid.z;\n\tmov.u32 %r4, %ntid.x;\n\tmov.u32 %r5, %ntid.y;\n\
         \tmad.lo.s32 %r6, %r5, %r3, %r2;\n\tmad.lo.s32 %r7, %r6, %r4, %r1;\n{body}\n\tret;\n}}\n"
    );
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    model::lower_module(&parsed.module).pop().unwrap().1.unwrap_or_else(|e| panic!("{}", e.message))
}

fn only_linear(body: &str) -> bool {
    reads_only_linear_thread_index(&lift(&kernel(body)))
}

#[test]
fn the_linear_index_and_the_thread_count_in_any_arrangement_are_recognised() {
    // out[rank] = rank, and the thread count multiplied in another order (ntid.z * (ntid.y * ntid.x)).
    let body = "\tmul.wide.u32 %rd3, %r7, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r7;\n\
                \tmov.u32 %r8, %ntid.z;\n\tmul.lo.s32 %r9, %r5, %r4;\n\tmul.lo.s32 %r10, %r8, %r9;\n\
                \tcvt.rn.f32.u32 %f1, %r10;\n\tst.global.f32 [%rd4+4], %f1;";
    assert!(only_linear(body));
}

#[test]
fn a_thread_index_read_on_its_own_is_a_dependence_on_the_block_shape() {
    // The address uses threadIdx.x alone: a block (32, 2) has two threads with threadIdx.x = 0.
    assert!(!only_linear("\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r7;"));
    // Half the linear index (tid.y + ntid.y * tid.z) on its own.
    assert!(!only_linear("\tmul.wide.u32 %rd3, %r6, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r7;"));
}

#[test]
fn each_dimension_read_apart_from_the_linear_index_is_named() {
    let apart = |body: &str| dimensions_read_apart(&lift(&kernel(body)));
    // out[threadIdx.x] = rank: x is read on its own, y and z only inside the rank.
    assert_eq!(apart("\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r7;"), [true, false, false]);
    // out[tid.y + ntid.y * tid.z]: y and z on their own.
    assert_eq!(apart("\tmul.wide.u32 %rd3, %r6, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r7;"), [false, true, true]);
    // out[rank] = rank: none.
    assert_eq!(apart("\tmul.wide.u32 %rd3, %r7, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r7;"), [false; 3]);
}

#[test]
fn a_thread_index_that_only_reaches_a_float_conversion_still_counts() {
    // The address is the linear index, but the stored value is (float) threadIdx.y: the lifted
    // expressions see only a fresh value; the dependence is kept in `opaque_uses`.
    let body = "\tmul.wide.u32 %rd3, %r7, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tcvt.rn.f32.u32 %f1, %r2;\n\tst.global.f32 [%rd4], %f1;";
    assert!(!only_linear(body));
}

#[test]
fn corpus_kernels_cooperative_groups_against_a_two_dimensional_block() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/real");
    let check = |file: &str| {
        let text = std::fs::read_to_string(real.join(file)).unwrap();
        let parsed = ptx::parse(&text);
        let (_, k) = model::lower_module(&parsed.module).pop().unwrap();
        reads_only_linear_thread_index(&lift(&k.unwrap()))
    };
    // thread_block::thread_rank() and size() only.
    assert!(check("samples_cg_reduce.ptx"));
    assert!(check("llmc_layernorm_fwd_warp.ptx"));
    // One row per threadIdx.y of a (32, y) block.
    assert!(!check("llmc_fused_residual_fwd.ptx"));
    // The CUDA samples' reduce6 indexes shared memory by threadIdx.x and reads y and z only
    // inside thread_rank(): a kernel for one-dimensional blocks.
    let text = std::fs::read_to_string(real.join("samples_reduce6.ptx")).unwrap();
    let (_, k) = model::lower_module(&ptx::parse(&text).module).pop().unwrap();
    assert_eq!(dimensions_read_apart(&lift(&k.unwrap())), [true, false, false]);
}
