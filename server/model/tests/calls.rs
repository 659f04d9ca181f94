//! `.func` calls inlined at lowering: parameters and results through `.param` cells (scalars,
//! struct results and struct arguments), guarded calls, `ret` inside the callee, and the calls
//! that stay unsupported (recursion, depth, external and indirect callees).

use model::interp::{self, Arg, Launch, Memory};
use model::Kernel;

fn lower_all(text: &str) -> Vec<Kernel> {
    let parsed = ptx::parse(text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    model::lower_module(&parsed.module).into_iter().map(|(n, k)| k.unwrap_or_else(|e| panic!("{n}: {}", e.message))).collect()
}

fn reasons(k: &Kernel) -> Vec<String> {
    k.unsupported().map(|(_, r)| r.to_string()).collect()
}

const HEADER: &str = ".version 7.8\n.target sm_90\n.address_size 64\n";

/// `fixtures/calls.cu` compiled by clang: `scale` (scalars), `mk` (a struct result) and `store`
/// (a struct argument, and a store through a pointer argument).
#[test]
fn clang_calls_with_scalar_and_struct_parameters_run_as_the_source_says() {
    let ks = lower_all(include_str!("fixtures/calls.ptx"));
    let k = ks.iter().find(|k| k.name == "_Z1kPfPKfi").unwrap();
    assert_eq!(reasons(k), Vec::<String>::new());
    let n = 50u32;
    let input: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 3.0).collect();
    let mut mem = Memory::new();
    let out = mem.add_f32("out", &[0.0; 64]);
    let inp = mem.add_f32("in", &input);
    let trace = interp::run(k, &Launch::new([2, 1, 1], [32, 1, 1], vec![Arg::Buffer(out), Arg::Buffer(inp), Arg::u32(n)]), &mut mem).unwrap();
    let got = mem.read_f32s(out);
    for i in 0..64 {
        // scale(in[i], 3) -> mk(i, v) = {2i, v + 1} -> store: out[i] = p.b + p.a.
        let want = if (i as u32) < n { input[i] * 3.0 + 1.0 + (2 * i) as f32 } else { 0.0 };
        assert_eq!(got[i], want, "out[{i}]");
    }
    // The struct result goes through the caller's stack (`.local`), per thread.
    assert!(trace.races().is_empty());
}

fn kernel_with(funcs: &str, body: &str) -> Kernel {
    let text = format!(
        "{HEADER}{funcs}\n.visible .entry k(.param .u64 k_param_0)\n{{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         {body}\n\tret;\n}}\n"
    );
    lower_all(&text).pop().unwrap()
}

/// `twice(x)` returns early for negative `x` (a `ret` in the middle of the callee).
const TWICE: &str = ".func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\
    \tld.param.u32 %r1, [twice_param_0];\n\tsetp.lt.s32 %p1, %r1, 0;\n\t@%p1 bra $L_neg;\n\tshl.b32 %r2, %r1, 1;\n\
    \tst.param.b32 [func_retval0+0], %r2;\n\tret;\n$L_neg:\n\tst.param.b32 [func_retval0+0], 0;\n\tret;\n}\n";

fn run_u32(k: &Kernel, threads: u32) -> Vec<u32> {
    let mut mem = Memory::new();
    let out = mem.add_u32("out", &vec![7; threads as usize]);
    interp::run(k, &Launch::new([1, 1, 1], [threads, 1, 1], vec![Arg::Buffer(out)]), &mut mem).unwrap_or_else(|e| panic!("{e}"));
    mem.read_u32s(out)
}

#[test]
fn a_guarded_call_and_an_early_return_in_the_callee() {
    let body = "\tadd.s32 %r2, %r1, -3;\n\tsetp.lt.u32 %p1, %r1, 6;\n\tmov.u32 %r3, 99;\n\
                \t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r2;\n\t.param .b32 retval0;\n\
                \t@%p1 call.uni (retval0), twice, (param0);\n\t@%p1 ld.param.b32 %r3, [retval0+0];\n\t}\n\
                \tst.global.u32 [%rd4], %r3;";
    let k = kernel_with(TWICE, body);
    assert_eq!(reasons(&k), Vec::<String>::new());
    // Threads 0-2: negative argument, early return with 0; 3-5: twice(tid - 3); 6-7: not called.
    assert_eq!(run_u32(&k, 8), vec![0, 0, 0, 0, 2, 4, 99, 99]);
}

#[test]
fn two_calls_of_one_function_get_their_own_registers_and_labels() {
    let body = "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n\t.param .b32 retval0;\n\
                \tcall.uni (retval0), twice, (param0);\n\tld.param.b32 %r2, [retval0+0];\n\t}\n\
                \t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r2;\n\t.param .b32 retval0;\n\
                \tcall.uni (retval0), twice, (param0);\n\tld.param.b32 %r3, [retval0+0];\n\t}\n\
                \tst.global.u32 [%rd4], %r3;";
    let k = kernel_with(TWICE, body);
    assert_eq!(reasons(&k), Vec::<String>::new());
    assert_eq!(run_u32(&k, 4), vec![0, 4, 8, 12]);
    let names: Vec<&str> = k.regs.iter().map(|r| r.name.as_str()).filter(|n| n.ends_with(":%r1")).collect();
    assert_eq!(names, vec!["twice#1:%r1", "twice#2:%r1"]);
}

#[test]
fn vector_parameters_of_the_kernel_and_of_a_call() {
    let funcs = ".func (.param .align 8 .b8 func_retval0[8]) swap(.param .align 8 .b8 swap_param_0[8])\n{\n\t.reg .b32 %r<4>;\n\
                 \tld.param.v2.u32 {%r1, %r2}, [swap_param_0];\n\tst.param.v2.b32 [func_retval0+0], {%r2, %r1};\n\tret;\n}\n";
    let body = "\t{\n\t.param .align 8 .b8 param0[8];\n\tst.param.v2.b32 [param0+0], {%r1, 5};\n\t.param .align 8 .b8 retval0[8];\n\
                \tcall.uni (retval0), swap, (param0);\n\tld.param.v2.b32 {%r5, %r6}, [retval0+0];\n\t}\n\
                \tmad.lo.s32 %r7, %r5, 100, %r6;\n\tst.global.u32 [%rd4], %r7;";
    let k = kernel_with(funcs, body);
    assert_eq!(reasons(&k), Vec::<String>::new());
    assert_eq!(run_u32(&k, 3), vec![500, 501, 502]);

    let text = format!(
        "{HEADER}.visible .entry v(.param .u64 v_param_0, .param .align 8 .b8 v_param_1[8])\n{{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\
         \tld.param.u64 %rd1, [v_param_0];\n\tld.param.v2.u32 {{%r1, %r2}}, [v_param_1];\n\tsub.s32 %r3, %r1, %r2;\n\tst.global.u32 [%rd1], %r3;\n\tret;\n}}\n"
    );
    let k = lower_all(&text).pop().unwrap();
    assert_eq!(reasons(&k), Vec::<String>::new());
    let mut mem = Memory::new();
    let out = mem.add_u32("out", &[0]);
    let pair: Vec<u8> = [10u32, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    interp::run(&k, &Launch::new([1, 1, 1], [1, 1, 1], vec![Arg::Buffer(out), Arg::Bytes(pair)]), &mut mem).unwrap();
    assert_eq!(mem.read_u32s(out), vec![7]);
}

#[test]
fn calls_that_stay_unsupported_say_why() {
    let call = |name: &str| {
        format!(
            "\t{{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n\t.param .b32 retval0;\n\
             \tcall.uni (retval0), {name}, (param0);\n\tld.param.b32 %r2, [retval0+0];\n\t}}\n\tst.global.u32 [%rd4], %r2;"
        )
    };
    // Recursion.
    let rec = ".func (.param .b32 func_retval0) rec(.param .b32 rec_param_0)\n{\n\t.reg .b32 %r<4>;\n\tld.param.u32 %r1, [rec_param_0];\n\
               \t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n\t.param .b32 retval0;\n\tcall.uni (retval0), rec, (param0);\n\
               \tld.param.b32 %r2, [retval0+0];\n\t}\n\tst.param.b32 [func_retval0+0], %r2;\n\tret;\n}\n";
    let k = kernel_with(rec, &call("rec"));
    let r = reasons(&k);
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r[0].contains("recursive call to `rec`"), "{r:?}");
    // The result the recursive call did not write cannot be read either.
    assert!(r[1].contains("did not write"), "{r:?}");

    // A chain deeper than the limit.
    let mut chain = String::new();
    for d in (1..=9).rev() {
        let inner = if d == 9 {
            "\tmov.u32 %r2, %r1;\n".to_string()
        } else {
            format!("\t{{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n\t.param .b32 retval0;\n\tcall.uni (retval0), f{}, (param0);\n\tld.param.b32 %r2, [retval0+0];\n\t}}\n", d + 1)
        };
        chain.push_str(&format!(
            ".func (.param .b32 func_retval0) f{d}(.param .b32 f{d}_param_0)\n{{\n\t.reg .b32 %r<4>;\n\tld.param.u32 %r1, [f{d}_param_0];\n{inner}\tadd.s32 %r3, %r2, 1;\n\tst.param.b32 [func_retval0+0], %r3;\n\tret;\n}}\n"
        ));
    }
    let k = kernel_with(&chain, &call("f1"));
    let r = reasons(&k);
    assert!(r.iter().any(|x| x.contains("call to `f9` nested more than 8 calls deep")), "{r:?}");

    // An external function (printf's `vprintf`) and an indirect call.
    let ext = ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);\n";
    let body = "\t{\n\t.param .b64 param0;\n\tst.param.b64 [param0+0], 0;\n\t.param .b64 param1;\n\tst.param.b64 [param1+0], 0;\n\t.param .b32 retval0;\n\
                \tcall.uni (retval0), vprintf, (param0, param1);\n\t}";
    let k = kernel_with(ext, body);
    assert_eq!(reasons(&k), vec!["call to `vprintf`, which has no body in this module (an external function)".to_string()]);
    let body = "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n\t.param .b32 retval0;\n\
                \tcall (retval0), %rd2, (param0), prototype_0;\n\t}";
    let k = kernel_with("", body);
    let r = reasons(&k);
    assert!(r.iter().any(|x| x.contains("indirect call through `%rd2`")), "{r:?}");
}

/// The corpus kernel `noinline_pair_race`: after inlining, the helper's two stores are accesses
/// to the `out` buffer (the second through `(p + 8i) - 4i + 4`, a pointer minus an offset).
#[test]
fn accesses_inside_an_inlined_callee_resolve_to_the_callers_buffers() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus/noinline_pair_race.ptx")).unwrap();
    let k = lower_all(&text).into_iter().find(|k| k.name == "noinline_pair_race").unwrap();
    assert_eq!(reasons(&k), Vec::<String>::new());
    let lifted = model::symbolic::lift(&k);
    let stores: Vec<_> = lifted.accesses.iter().filter(|a| a.kind == model::symbolic::AccessKind::Write).collect();
    assert_eq!(stores.len(), 2);
    for s in stores {
        assert_eq!(s.base, Some(model::symbolic::Base::Param(1)), "line {:?}", s.line);
        assert_eq!(s.space, model::Space::Global);
    }
    let lines: Vec<Option<u32>> = lifted.accesses.iter().map(|a| a.line).collect();
    assert_eq!(lines, vec![Some(11), Some(5), Some(6)]);
}

/// libdevice's `erff` (how clang compiles `erff`: a call to the body-less `__nv_erff`) is the
/// error function: the interpreter computes it; `log1pf`, which the model does not name, stays
/// unsupported.
#[test]
fn a_call_to_libdevice_erff_is_the_error_function() {
    let ext = ".extern .func (.param .b32 func_retval0) __nv_erff(.param .b32 __nv_erff_param_0);\n";
    let body = "\t.reg .f32 %f<4>;\n\tcvt.rn.f32.u32 %f1, %r1;\n\tmul.f32 %f2, %f1, 0f3E800000;\n\
                \t{\n\t.param .b32 param0;\n\tst.param.f32 [param0+0], %f2;\n\t.param .b32 retval0;\n\
                \tcall.uni (retval0), __nv_erff, (param0);\n\tld.param.f32 %f3, [retval0+0];\n\t}\n\tst.global.f32 [%rd4], %f3;";
    let k = kernel_with(ext, body);
    assert_eq!(reasons(&k), Vec::<String>::new());
    let mut mem = Memory::new();
    let out = mem.add_f32("out", &[7.0; 8]);
    interp::run(&k, &Launch::new([1, 1, 1], [8, 1, 1], vec![Arg::Buffer(out)]), &mut mem).unwrap_or_else(|e| panic!("{e}"));
    let got = mem.read_f32s(out);
    for (i, &y) in got.iter().enumerate() {
        let want = model::math::erf(i as f64 * 0.25) as f32;
        assert!((y - want).abs() <= 1e-6, "erf({}) = {y}, want {want}", i as f64 * 0.25);
    }
    assert_eq!(got[4], 0.842_700_8, "erf(1)");

    let ext = ".extern .func (.param .b32 func_retval0) __nv_log1pf(.param .b32 __nv_log1pf_param_0);\n";
    let k = kernel_with(ext, &body.replace("__nv_erff", "__nv_log1pf"));
    let r = reasons(&k);
    assert!(r.iter().any(|x| x.contains("libdevice's `log1pf`")), "{r:?}");
}
