//! The float forms decoded into primitive operations — `testp`, `copysign`, `min`/`max` with
//! `.NaN`, `.relu` and `.sat` results, `bf16` arithmetic, packed `f16x2`/`bf16x2` arithmetic,
//! packed `cvt`, saturating integer `cvt` and `setp` on `bf16` — run in the interpreter against
//! Rust's IEEE arithmetic (rounded to f16/bf16 by nearest-even search over every 16-bit pattern,
//! independently of the interpreter's rounding).

use model::interp::{self, Arg, Launch, Memory};

/// A kernel running `body` on `%r1..%r3` / `%rd1..%rd3` (the inputs, also visible as `%f1..%f3`
/// and `%fd1..%fd3`) and storing `%rd0` (the body writes it, often with `mov.b64`/`cvt`).
fn kernel(body: &str) -> model::Kernel {
    let text = format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n\
         .visible .entry t(.param .u64 t_param_0, .param .u64 t_param_1, .param .u64 t_param_2, .param .u64 t_param_3)\n{{\n\
         \t.reg .pred %p<8>;\n\t.reg .b16 %h<8>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<8>;\n\t.reg .b64 %rd<12>;\n\t.reg .f64 %fd<8>;\n\
         \tld.param.u64 %rd10, [t_param_0];\n\
         \tld.param.u64 %rd1, [t_param_1];\n\tld.param.u64 %rd2, [t_param_2];\n\tld.param.u64 %rd3, [t_param_3];\n\
         \tcvt.u32.u64 %r1, %rd1;\n\tcvt.u32.u64 %r2, %rd2;\n\tcvt.u32.u64 %r3, %rd3;\n\
         \tmov.b32 %f1, %r1;\n\tmov.b32 %f2, %r2;\n\tmov.b32 %f3, %r3;\n\
         \tmov.b64 %fd1, %rd1;\n\tmov.b64 %fd2, %rd2;\n\tmov.b64 %fd3, %rd3;\n\
         \tcvt.u16.u32 %h1, %r1;\n\tcvt.u16.u32 %h2, %r2;\n\tcvt.u16.u32 %h3, %r3;\n\
         \t{body}\n\
         \tst.global.u64 [%rd10], %rd0;\n\tret;\n}}\n"
    );
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{body}: {:?}", parsed.errors);
    let k = model::lower_module(&parsed.module).pop().unwrap().1.unwrap_or_else(|e| panic!("{body}: {}", e.message));
    assert_eq!(k.unsupported().count(), 0, "{body}: {:?}", k.unsupported().map(|(_, r)| r.to_string()).collect::<Vec<_>>());
    k
}

fn run(k: &model::Kernel, inputs: [u64; 3]) -> u64 {
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 8);
    let mut args = vec![Arg::Buffer(out)];
    args.extend(inputs.iter().map(|&v| Arg::u64(v)));
    interp::run(k, &Launch::new([1, 1, 1], [1, 1, 1], args), &mut mem).unwrap_or_else(|e| panic!("{e}"));
    u64::from_le_bytes(mem.bytes(out)[..8].try_into().unwrap())
}

fn f(x: f32) -> u64 {
    x.to_bits() as u64
}

fn f16_value(h: u16) -> f64 {
    let (s, e, m) = ((h >> 15) & 1, ((h >> 10) & 0x1f) as i32, (h & 0x3ff) as f64);
    let v = match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1024.0 + m) * 2f64.powi(e - 25),
    };
    if s == 1 {
        -v
    } else {
        v
    }
}

fn bf16_value(h: u16) -> f64 {
    f32::from_bits((h as u32) << 16) as f64
}

/// The 16-bit pattern nearest to `x` in a format (ties to the even pattern); `x` finite and in
/// range.
fn round16(x: f64, value: fn(u16) -> f64) -> u16 {
    let mut best: Option<(f64, u16)> = None;
    for h in 0..=u16::MAX {
        let v = value(h);
        if !v.is_finite() || (v == 0.0 && h != 0) {
            continue;
        }
        let d = (v - x).abs();
        let better = match best {
            None => true,
            Some((bd, bh)) => d < bd || (d == bd && h % 2 == 0 && bh % 2 == 1),
        };
        if better {
            best = Some((d, h));
        }
    }
    best.unwrap().1
}

#[test]
fn testp_classifies_like_ieee() {
    let values = [0.0f32, 1.0, -1.0, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e-40, -1e-40, f32::MAX, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
    for prop in ["finite", "infinite", "number", "notanumber", "normal", "subnormal"] {
        let k = kernel(&format!("testp.{prop}.f32 %p1, %f1;\n\tselp.u64 %rd0, 1, 0, %p1;"));
        for x in values {
            let want = match prop {
                "finite" => x.is_finite(),
                "infinite" => x.is_infinite(),
                "number" => !x.is_nan(),
                "notanumber" => x.is_nan(),
                // PTX: zero counts as normal.
                "normal" => x.is_normal() || x == 0.0,
                _ => x.is_subnormal(),
            };
            assert_eq!(run(&k, [f(x), 0, 0]), want as u64, "testp.{prop}.f32 {x:e}");
        }
    }
    let k = kernel("testp.subnormal.f64 %p1, %fd1;\n\tselp.u64 %rd0, 1, 0, %p1;");
    assert_eq!(run(&k, [1e-310f64.to_bits(), 0, 0]), 1);
    assert_eq!(run(&k, [1e-300f64.to_bits(), 0, 0]), 0);
}

#[test]
fn copysign_takes_the_sign_of_the_first_operand() {
    let k = kernel("copysign.f32 %f4, %f1, %f2;\n\tmov.b32 %r4, %f4;\n\tcvt.u64.u32 %rd0, %r4;");
    // Signed zeros are not modelled (a -0.0 first operand counts as positive), so the signs come
    // from nonzero values.
    for a in [1.0f32, -2.5, f32::INFINITY, f32::NEG_INFINITY] {
        for b in [3.0f32, -3.0, 0.5, f32::INFINITY, -0.0] {
            let want = if b == 0.0 { 0 } else { f(b.copysign(a)) };
            assert_eq!(run(&k, [f(a), f(b), 0]), want, "copysign({a}, {b})");
        }
    }
    let k = kernel("copysign.f64 %fd4, %fd1, %fd2;\n\tmov.b64 %rd0, %fd4;");
    assert_eq!(run(&k, [(-1.0f64).to_bits(), 7.0f64.to_bits(), 0]), (-7.0f64).to_bits());
}

#[test]
fn nan_relu_and_sat_results() {
    let bits32 = |body: &str| kernel(&format!("{body}\n\tmov.b32 %r4, %f4;\n\tcvt.u64.u32 %rd0, %r4;"));
    let min = bits32("min.f32 %f4, %f1, %f2;");
    let min_nan = bits32("min.NaN.f32 %f4, %f1, %f2;");
    let max_nan = bits32("max.NaN.f32 %f4, %f1, %f2;");
    for (a, b) in [(1.0f32, 2.0f32), (f32::NAN, 2.0), (2.0, f32::NAN), (-0.5, -1.5)] {
        assert_eq!(run(&min, [f(a), f(b), 0]), f(a.min(b)), "min {a} {b}");
        let (m, x) = (run(&min_nan, [f(a), f(b), 0]), run(&max_nan, [f(a), f(b), 0]));
        if a.is_nan() || b.is_nan() {
            assert!(f32::from_bits(m as u32).is_nan() && f32::from_bits(x as u32).is_nan(), "min/max.NaN {a} {b}");
        } else {
            assert_eq!((m, x), (f(a.min(b)), f(a.max(b))), "min/max.NaN {a} {b}");
        }
    }
    let sat = bits32("add.sat.f32 %f4, %f1, %f2;");
    let fma_sat = bits32("fma.rn.sat.f32 %f4, %f1, %f2, %f3;");
    for (a, b, want) in [(0.25f32, 0.5f32, 0.75f32), (0.75, 0.5, 1.0), (-3.0, 1.0, 0.0), (f32::NAN, 1.0, 0.0), (f32::INFINITY, 0.0, 1.0)] {
        assert_eq!(run(&sat, [f(a), f(b), 0]), f(want), "add.sat {a} {b}");
    }
    assert_eq!(run(&fma_sat, [f(2.0), f(0.25), f(0.125)]), f(0.625));
    // fma.rn.relu on f16: negative results become +0, NaN stays NaN.
    let relu = kernel("fma.rn.relu.f16 %h4, %h1, %h2, %h3;\n\tcvt.u64.u16 %rd0, %h4;");
    let h = |x: f64| round16(x, f16_value) as u64;
    assert_eq!(run(&relu, [h(1.5), h(2.0), h(-4.0)]), 0);
    assert_eq!(run(&relu, [h(1.5), h(2.0), h(0.25)]), h(3.25));
    let nan = run(&relu, [0x7e00, h(1.0), h(1.0)]) as u16;
    assert!(f16_value(nan).is_nan(), "relu(NaN) = {nan:#x}");
}

#[test]
fn bf16_arithmetic_rounds_through_f32() {
    let b = |x: f64| round16(x, bf16_value) as u64;
    type Exact = fn(f64, f64, f64) -> f64;
    let cases: [(&str, Exact); 4] =
        [("add.rn.bf16", |x, y, _| x + y), ("mul.rn.bf16", |x, y, _| x * y), ("sub.rn.bf16", |x, y, _| x - y), ("fma.rn.bf16", |x, y, z| x * y + z)];
    let inputs = [(1.0, 2.0, 0.5), (3.140625, -2.71875, 100.0), (1e30, 3.0, 1.0), (0.1, 0.2, 0.3), (255.0, 1.0, 0.0078125)];
    for (op, exact) in cases {
        let operands = if op.starts_with("fma") { "%h1, %h2, %h3" } else { "%h1, %h2" };
        let k = kernel(&format!("{op} %h4, {operands};\n\tcvt.u64.u16 %rd0, %h4;"));
        for (x, y, z) in inputs {
            let (bx, by, bz) = (b(x), b(y), b(z));
            let want = b(exact(bf16_value(bx as u16), bf16_value(by as u16), bf16_value(bz as u16)));
            assert_eq!(run(&k, [bx, by, bz]), want, "{op} {x} {y} {z}");
        }
    }
    // A bf16 comparison is not an f16 one: 1e38 is bf16 0x7e96, which would be an f16 NaN.
    let gt = kernel("setp.gt.bf16 %p1, %h1, %h2;\n\tselp.u64 %rd0, 1, 0, %p1;");
    let lt = kernel("setp.lt.bf16 %p1, %h1, %h2;\n\tselp.u64 %rd0, 1, 0, %p1;");
    assert!(f16_value(b(1e38) as u16).is_nan());
    assert_eq!(run(&gt, [b(1e38), b(1.0), 0]), 1);
    assert_eq!(run(&lt, [b(-1e38), b(1.0), 0]), 1);
    assert_eq!(run(&gt, [b(-1e38), b(1.0), 0]), 0);
}

#[test]
fn packed_half_arithmetic_works_half_by_half() {
    let h = |x: f64| round16(x, f16_value) as u64;
    let b = |x: f64| round16(x, bf16_value) as u64;
    let pack = |lo: u64, hi: u64| lo | (hi << 16);
    let add = kernel("add.rn.f16x2 %r4, %r1, %r2;\n\tcvt.u64.u32 %rd0, %r4;");
    assert_eq!(run(&add, [pack(h(1.5), h(-2.0)), pack(h(0.25), h(8.0)), 0]), pack(h(1.75), h(6.0)));
    let mul = kernel("mul.rn.bf16x2 %r4, %r1, %r2;\n\tcvt.u64.u32 %rd0, %r4;");
    assert_eq!(run(&mul, [pack(b(3.0), b(1e20)), pack(b(0.5), b(1e10)), 0]), pack(b(1.5), b(bf16_value(b(1e20) as u16) * bf16_value(b(1e10) as u16))));
    let relu = kernel("fma.rn.relu.bf16x2 %r4, %r1, %r2, %r3;\n\tcvt.u64.u32 %rd0, %r4;");
    assert_eq!(run(&relu, [pack(b(2.0), b(2.0)), pack(b(3.0), b(-3.0)), pack(b(1.0), b(1.0))]), pack(b(7.0), 0));
    let neg = kernel("neg.f16x2 %r4, %r1;\n\tcvt.u64.u32 %rd0, %r4;");
    assert_eq!(run(&neg, [pack(h(1.0), h(-0.5)), 0, 0]), pack(h(-1.0), h(0.5)));
    let ex2 = kernel("ex2.approx.f16x2 %r4, %r1;\n\tcvt.u64.u32 %rd0, %r4;");
    assert_eq!(run(&ex2, [pack(h(3.0), h(-1.0)), 0, 0]), pack(h(8.0), h(0.5)));
}

#[test]
fn packed_and_saturating_conversions() {
    let h = |x: f64| round16(x, f16_value) as u64;
    let b = |x: f64| round16(x, bf16_value) as u64;
    let k = kernel("cvt.rn.f16x2.f32 %r4, %f1, %f2;\n\tcvt.u64.u32 %rd0, %r4;");
    // `a` goes to the high half, `b` to the low one.
    assert_eq!(run(&k, [f(1.0), f(-0.1), 0]), h(-0.1) | (h(1.0) << 16));
    let k = kernel("cvt.rn.bf16x2.f32 %r4, %f1, %f2;\n\tcvt.u64.u32 %rd0, %r4;");
    assert_eq!(run(&k, [f(3.0e38), f(1.0 / 3.0), 0]), b(1.0 / 3.0) | (b(3.0e38) << 16));
    let k = kernel("cvt.rn.relu.f16x2.f32 %r4, %f1, %f2;\n\tcvt.u64.u32 %rd0, %r4;");
    assert_eq!(run(&k, [f(-5.0), f(2.0), 0]), h(2.0));

    let values: [i64; 9] = [0, 1, -1, 127, 128, -129, 255, 65536, i32::MIN as i64];
    for (to, lo, hi) in [("s8", -128i64, 127i64), ("u8", 0, 255), ("s16", -32768, 32767), ("u16", 0, 65535)] {
        for (from, signed) in [("s32", true), ("u32", false)] {
            let k = kernel(&format!("cvt.sat.{to}.{from} %r4, %r1;\n\tcvt.u64.u32 %rd0, %r4;"));
            for v in values {
                let x = v as u64 & 0xffff_ffff;
                let as_int = if signed { x as u32 as i32 as i64 } else { x as i64 };
                let bits = if to.ends_with('8') { 8 } else { 16 };
                let want = (as_int.clamp(lo, hi) as u64) & ((1 << bits) - 1);
                // The destination is a 32-bit register: the result is the clamped value's bits.
                assert_eq!(run(&k, [x, 0, 0]) & ((1 << bits) - 1), want, "cvt.sat.{to}.{from} {as_int}");
            }
        }
    }
    let k = kernel("cvt.sat.u32.s64 %r4, %rd1;\n\tcvt.u64.u32 %rd0, %r4;");
    assert_eq!(run(&k, [(-5i64) as u64, 0, 0]), 0);
    assert_eq!(run(&k, [1 << 40, 0, 0]), 0xffff_ffff);
    let k = kernel("cvt.sat.s64.u64 %rd0, %rd1;");
    assert_eq!(run(&k, [u64::MAX, 0, 0]), i64::MAX as u64);
}

#[test]
fn float_forms_left_unmodelled_say_why() {
    for (body, why) in [
        ("min.xorsign.abs.f32 %f4, %f1, %f2;", "`.xorsign`"),
        ("cvt.rn.satfinite.e4m3x2.f32 %h4, %f1, %f2;", "`.e4m3x2`"),
        ("cvt.rna.tf32.f32 %r4, %f1;", "`.tf32`"),
        ("setp.lt.f16x2 %p1|%p2, %r1, %r2;", "packed"),
    ] {
        let text = format!(
            ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry t()\n{{\n\t.reg .pred %p<4>;\n\t.reg .b16 %h<8>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<8>;\n\t{body}\n\tret;\n}}\n"
        );
        let parsed = ptx::parse(&text);
        assert!(parsed.errors.is_empty(), "{body}: {:?}", parsed.errors);
        let k = model::lower_module(&parsed.module).pop().unwrap().1.unwrap();
        let reasons: Vec<String> = k.unsupported().map(|(_, r)| r.to_string()).collect();
        assert!(reasons.len() == 1 && reasons[0].contains(why), "{body}: {reasons:?}");
    }
}

/// The approximate transcendental instructions clang writes for fast math are modelled (as their
/// exact functions, evaluated in f64): `ex2.approx.ftz.f32`, `tanh.approx.f32`, `lg2`, `rsqrt`.
#[test]
fn approximate_transcendentals() {
    for (body, x, want) in [
        ("ex2.approx.ftz.f32 %f4, %f1;", 3.0f32, 8.0f32),
        ("ex2.approx.f32 %f4, %f1;", -1.0, 0.5),
        ("tanh.approx.f32 %f4, %f1;", 0.5, 0.5f64.tanh() as f32),
        ("lg2.approx.ftz.f32 %f4, %f1;", 1024.0, 10.0),
        ("rsqrt.approx.ftz.f32 %f4, %f1;", 16.0, 0.25),
        ("fma.rn.relu.f32 %f4, %f1, %f1, %f1;", -0.5, 0.0),
    ] {
        let k = kernel(&format!("{body}\n\tmov.b32 %r4, %f4;\n\tcvt.u64.u32 %rd0, %r4;"));
        assert_eq!(run(&k, [f(x), 0, 0]), f(want), "{body} on {x}");
    }
}
