//! The decompositions of `bfe`, `bfi`, `prmt` (every mode), `shf`, `lop3`, `bfind`, `mul24`,
//! `mad24`, `sad`, `dp4a`, `dp2a` and the saturating and `.relu` integer forms, against direct
//! transcriptions of the PTX ISA manual's pseudo-code, on edge values (positions and lengths past
//! the width, zero lengths, sign bits, shift amounts of 0, 31, 32 and more).
//!
//! Each instruction runs twice: in the interpreter, and through the symbolic lifter with the
//! inputs substituted as constants (the result must fold to the same constant). Operands that
//! PTX allows as immediates are tried both as immediates (decoded with constant folding) and as
//! registers (decoded into the general sequence).

use model::expr::Sym;
use model::interp::{self, Arg, Launch, Memory};
use std::collections::HashMap;

/// A kernel that runs `body` on the inputs `%r1..%r4` (32-bit) and `%rd1..%rd4` (64-bit, the same
/// values) and stores `%r0` (or `%rd0` when `wide`). The store is repeated at an address that
/// carries the result (under a guard that is false at run time) so that the lifter exposes the
/// result as an access offset.
fn kernel(body: &str, wide: bool) -> model::Kernel {
    let result = if wide { "mov.b64 %rd5, %rd0;" } else { "cvt.u64.u32 %rd5, %r0;" };
    let text = format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n\
         .visible .entry t(.param .u64 t_param_0, .param .u64 t_param_1, .param .u64 t_param_2, .param .u64 t_param_3, .param .u64 t_param_4, .param .u64 t_param_5)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<12>;\n\
         \tld.param.u64 %rd10, [t_param_0];\n\
         \tld.param.u64 %rd1, [t_param_1];\n\tld.param.u64 %rd2, [t_param_2];\n\tld.param.u64 %rd3, [t_param_3];\n\tld.param.u64 %rd4, [t_param_4];\n\
         \tld.param.u64 %rd6, [t_param_5];\n\
         \tcvt.u32.u64 %r1, %rd1;\n\tcvt.u32.u64 %r2, %rd2;\n\tcvt.u32.u64 %r3, %rd3;\n\tcvt.u32.u64 %r4, %rd4;\n\
         \t{body}\n\t{result}\n\
         \tst.global.u64 [%rd10], %rd5;\n\
         \tsetp.ne.u64 %p3, %rd6, 0;\n\tadd.s64 %rd11, %rd10, %rd5;\n\t@%p3 st.global.u8 [%rd11], 0;\n\
         \tret;\n}}\n"
    );
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{body}: {:?}", parsed.errors);
    let mut ks = model::lower_module(&parsed.module);
    let k = ks.pop().unwrap().1.unwrap_or_else(|e| panic!("{body}: {}", e.message));
    assert_eq!(k.unsupported().count(), 0, "{body}: {:?}", k.unsupported().map(|(_, r)| r.to_string()).collect::<Vec<_>>());
    k
}

/// The result of `body` on `inputs`, from the interpreter and from the lifter's constant folding
/// (which must agree).
fn eval(k: &model::Kernel, body: &str, inputs: [u64; 4]) -> u64 {
    let mut mem = Memory::new();
    let out = mem.add_zeroed("out", 8);
    let mut args = vec![Arg::Buffer(out)];
    args.extend(inputs.iter().map(|&v| Arg::u64(v)));
    args.push(Arg::u64(0));
    interp::run(k, &Launch::new([1, 1, 1], [1, 1, 1], args), &mut mem).unwrap_or_else(|e| panic!("{body}: {e}"));
    let ran = u64::from_le_bytes(mem.bytes(out)[..8].try_into().unwrap());

    // With the output buffer at address 0, the guarded store's address is the result.
    let mut lifted = model::symbolic::lift(k);
    let mut map = HashMap::new();
    for (p, &v) in [0].iter().chain(&inputs).enumerate() {
        let c = lifted.exprs.konst(v, 64);
        map.insert(Sym::Param { index: p as u32, offset: 0 }, c);
    }
    lifted.specialize(&map);
    let guarded = lifted.accesses.iter().find(|a| a.bytes == 1).expect("the guarded store");
    let folded = lifted.exprs.as_const(guarded.addr);
    assert_eq!(folded, Some(ran), "{body} on {inputs:x?}: the lifter folds to {folded:x?}, the interpreter gives {ran:#x}");
    ran
}

fn bit(x: u64, i: u32) -> u64 {
    if i >= 64 {
        0
    } else {
        (x >> i) & 1
    }
}

fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1 << w) - 1
    }
}

const WORDS: [u64; 8] = [0, 1, 0x8000_0000, 0xffff_ffff, 0x1234_5678, 0x8765_4321, 0x7fff_ffff_ffff_ffff, 0xfedc_ba98_7654_3210];
const POSITIONS: [u64; 11] = [0, 1, 3, 8, 16, 31, 32, 33, 63, 64, 0x1_0005];

// ---------------------------------------------------------------------------------------------
// PTX ISA pseudo-code, transcribed.

fn bfe_ref(w: u32, signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let msb = w - 1;
    let pos = (b & 0xff) as u32;
    let len = (c & 0xff) as u32;
    let sbit = if !signed || len == 0 { 0 } else { bit(a, (pos + len - 1).min(msb)) };
    let mut d = 0;
    for i in 0..=msb {
        let v = if i < len && pos + i <= msb { bit(a, pos + i) } else { sbit };
        d |= v << i;
    }
    d
}

fn bfi_ref(w: u32, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let msb = w - 1;
    let pos = (c & 0xff) as u32;
    let len = (d & 0xff) as u32;
    let mut f = b & mask(w);
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (bit(a, i) << (pos + i));
        i += 1;
    }
    f
}

/// `prmt`; the modes are written from their names (forward/backward 4 extract, replicate 8,
/// edge clamp left/right, replicate 16), independently of the decoder's table.
fn prmt_ref(mode: &str, a: u64, b: u64, c: u64) -> u64 {
    let tmp64 = ((b & 0xffff_ffff) << 32) | (a & 0xffff_ffff);
    let byte = |k: u64| (tmp64 >> (8 * (k & 7))) & 0xff;
    let s = c & 3;
    let mut d = 0;
    for i in 0..4u64 {
        let v = match mode {
            "" => {
                let ctl = (c >> (4 * i)) & 0xf;
                let v = byte(ctl & 7);
                if ctl & 8 != 0 {
                    if v & 0x80 != 0 {
                        0xff
                    } else {
                        0
                    }
                } else {
                    v
                }
            }
            ".f4e" => byte(s + i),
            ".b4e" => byte((s + 8 - i) % 8),
            ".rc8" => byte(s),
            ".ecl" => byte(i.max(s)),
            ".ecr" => byte(i.min(s)),
            ".rc16" => byte((s & 1) * 2 + (i & 1)),
            _ => unreachable!(),
        };
        d |= v << (8 * i);
    }
    d
}

fn shf_ref(left: bool, clamp: bool, a: u64, b: u64, c: u64) -> u64 {
    let (a, b, c) = (a & 0xffff_ffff, b & 0xffff_ffff, c & 0xffff_ffff);
    let n = if clamp { c.min(32) } else { c & 0x1f };
    // Shifts by 32 give 0 in 32-bit arithmetic.
    let shl = |x: u64, k: u64| if k >= 32 { 0 } else { (x << k) & 0xffff_ffff };
    let shr = |x: u64, k: u64| if k >= 32 { 0 } else { x >> k };
    if left {
        shl(b, n) | shr(a, 32 - n)
    } else {
        shl(b, 32 - n) | shr(a, n)
    }
}

fn lop3_ref(a: u64, b: u64, c: u64, lut: u64) -> u64 {
    let mut d = 0;
    for i in 0..32 {
        let k = (bit(a, i) << 2) | (bit(b, i) << 1) | bit(c, i);
        d |= ((lut >> k) & 1) << i;
    }
    d
}

fn sext(x: u64, w: u32) -> i64 {
    ((x << (64 - w)) as i64) >> (64 - w)
}

fn bfind_ref(w: u32, signed: bool, shiftamt: bool, a: u64) -> u64 {
    let a = a & mask(w);
    let negative = signed && bit(a, w - 1) == 1;
    let msb = w as i64 - 1;
    let mut d: i64 = -1;
    let mut i = msb;
    while i >= 0 {
        if bit(a, i as u32) == u64::from(!negative) {
            d = i;
            break;
        }
        i -= 1;
    }
    if shiftamt && d != -1 {
        d = msb - d;
    }
    d as u64 & 0xffff_ffff
}

fn mul24_ref(hi: bool, signed: bool, a: u64, b: u64) -> u64 {
    let ext = |x: u64| if signed { sext(x & 0xff_ffff, 24) } else { (x & 0xff_ffff) as i64 };
    let t = (ext(a) * ext(b)) as u64;
    if hi {
        (t >> 16) & 0xffff_ffff
    } else {
        t & 0xffff_ffff
    }
}

fn dp4a_ref(sa: bool, sb: bool, a: u64, b: u64, c: u64) -> u64 {
    let byte = |x: u64, k: u32, s: bool| if s { sext((x >> (8 * k)) & 0xff, 8) } else { ((x >> (8 * k)) & 0xff) as i64 };
    let mut d = c as i64;
    for k in 0..4 {
        d = d.wrapping_add(byte(a, k, sa).wrapping_mul(byte(b, k, sb)));
    }
    d as u64 & 0xffff_ffff
}

fn dp2a_ref(hi: bool, sa: bool, sb: bool, a: u64, b: u64, c: u64) -> u64 {
    let half = |k: u32| if sa { sext((a >> (16 * k)) & 0xffff, 16) } else { ((a >> (16 * k)) & 0xffff) as i64 };
    let byte = |k: u32| if sb { sext((b >> (8 * k)) & 0xff, 8) } else { ((b >> (8 * k)) & 0xff) as i64 };
    let base = if hi { 2 } else { 0 };
    let d = (c as i64).wrapping_add(half(0) * byte(base)).wrapping_add(half(1) * byte(base + 1));
    d as u64 & 0xffff_ffff
}

// ---------------------------------------------------------------------------------------------

#[test]
fn bfe_matches_the_ptx_pseudo_code() {
    for (ty, w, signed) in [("u32", 32, false), ("s32", 32, true), ("u64", 64, false), ("s64", 64, true)] {
        let (r, d) = if w == 32 { ("%r", "%r0") } else { ("%rd", "%rd0") };
        let general = format!("bfe.{ty} {d}, {r}1, %r2, %r3;");
        let kg = kernel(&general, w == 64);
        for &a in &WORDS {
            for &pos in &POSITIONS {
                for &len in &[0u64, 1, 4, 8, 24, 31, 32, 33, 64, 65, 0x100] {
                    let want = bfe_ref(w, signed, a, pos, len);
                    assert_eq!(eval(&kg, &general, [a, pos, len, 0]), want, "{general} a={a:#x} pos={pos} len={len}");
                }
            }
        }
        // Immediate position and length, as clang writes them.
        for (pos, len) in [(0, 8), (5, 6), (24, 8), (30, 4), (40, 8), (0, 0), (60, 10)] {
            let body = format!("bfe.{ty} {d}, {r}1, {pos}, {len};");
            let k = kernel(&body, w == 64);
            for &a in &WORDS {
                assert_eq!(eval(&k, &body, [a, 0, 0, 0]), bfe_ref(w, signed, a, pos, len), "{body} a={a:#x}");
            }
        }
    }
}

#[test]
fn bfi_matches_the_ptx_pseudo_code() {
    for (w, r) in [(32, "%r"), (64, "%rd")] {
        let d = if w == 32 { "%r0" } else { "%rd0" };
        let body = format!("bfi.b{w} {d}, {r}1, {r}2, %r3, %r4;");
        let k = kernel(&body, w == 64);
        for &a in &WORDS {
            for &pos in &POSITIONS {
                for &len in &[0u64, 1, 8, 31, 32, 33, 64, 0x108] {
                    let b = 0x0f0f_0f0f_0f0f_0f0f & mask(w);
                    assert_eq!(eval(&k, &body, [a, b, pos, len]), bfi_ref(w, a, b, pos, len), "{body} a={a:#x} pos={pos} len={len}");
                }
            }
        }
        let imm = format!("bfi.b{w} {d}, {r}1, {r}2, 8, 4;");
        let k = kernel(&imm, w == 64);
        assert_eq!(eval(&k, &imm, [0xabcd, 0xffff_0000, 0, 0]), bfi_ref(w, 0xabcd, 0xffff_0000, 8, 4));
    }
}

#[test]
fn prmt_matches_the_ptx_pseudo_code_in_every_mode() {
    let (a, b) = (0x8899_aabb_u64, 0x4455_66f7_u64);
    let selectors = [0x3210u64, 0x7654, 0x0123, 0x4567, 0x1111, 0x5410, 0x3276, 0x89ab, 0xcdef, 0x8f0e, 0xffff_0000, 0x0, 0x1, 0x2, 0x3];
    for mode in ["", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"] {
        let general = format!("prmt.b32{mode} %r0, %r1, %r2, %r3;");
        let k = kernel(&general, false);
        for &c in &selectors {
            for (x, y) in [(a, b), (b, a), (0x8080_8080, 0x7f7f_7f7f)] {
                assert_eq!(eval(&k, &general, [x, y, c, 0]), prmt_ref(mode, x, y, c), "{general} a={x:#x} b={y:#x} c={c:#x}");
            }
            let imm = format!("prmt.b32{mode} %r0, %r1, %r2, {c};");
            let ki = kernel(&imm, false);
            assert_eq!(eval(&ki, &imm, [a, b, 0, 0]), prmt_ref(mode, a, b, c), "{imm}");
        }
    }
}

#[test]
fn shf_matches_the_ptx_pseudo_code() {
    for dir in ["l", "r"] {
        for mode in ["clamp", "wrap"] {
            let body = format!("shf.{dir}.{mode}.b32 %r0, %r1, %r2, %r3;");
            let k = kernel(&body, false);
            for &a in &WORDS {
                for &c in &[0u64, 1, 7, 31, 32, 33, 63, 64, 0xffff_ffff] {
                    let b = 0xdead_beef;
                    assert_eq!(eval(&k, &body, [a, b, c, 0]), shf_ref(dir == "l", mode == "clamp", a, b, c), "{body} a={a:#x} c={c}");
                }
            }
        }
    }
    let k = kernel("shf.l.wrap.b32 %r0, %r1, %r2, 8;", false);
    assert_eq!(eval(&k, "shf.l.wrap.b32 imm", [0x1234_5678, 0x9abc_def0, 0, 0]), 0xbcde_f012);
}

#[test]
fn lop3_matches_its_look_up_table_for_all_256_functions() {
    let inputs = [(0xf0f0_f0f0u64, 0xcccc_ccccu64, 0xaaaa_aaaau64), (0x1234_5678, 0x9abc_def0, 0x0f0f_f0f0), (0, 0xffff_ffff, 0x5555_5555)];
    for lut in 0..256u64 {
        let body = format!("lop3.b32 %r0, %r1, %r2, %r3, {lut};");
        let k = kernel(&body, false);
        for (a, b, c) in inputs {
            assert_eq!(eval(&k, &body, [a, b, c, 0]), lop3_ref(a, b, c, lut), "{body} a={a:#x} b={b:#x} c={c:#x}");
        }
        // The defining property: F(0xF0, 0xCC, 0xAA) = lut.
        assert_eq!(eval(&k, &body, [0xf0, 0xcc, 0xaa, 0]) & 0xff, lut, "{body}");
    }
}

#[test]
fn bfind_matches_the_ptx_pseudo_code() {
    for (ty, w, signed) in [("u32", 32, false), ("s32", 32, true), ("u64", 64, false), ("s64", 64, true)] {
        for shiftamt in [false, true] {
            let src = if w == 32 { "%r1" } else { "%rd1" };
            let body = format!("bfind{}.{ty} %r0, {src};", if shiftamt { ".shiftamt" } else { "" });
            let k = kernel(&body, false);
            for &a in WORDS.iter().chain(&[0xffff_ffff_ffff_ffff, 0x10, 0xffff_fff0]) {
                assert_eq!(eval(&k, &body, [a, 0, 0, 0]), bfind_ref(w, signed, shiftamt, a), "{body} a={a:#x}");
            }
        }
    }
}

#[test]
fn mul24_mad24_sad_and_dot_products_match_the_ptx_pseudo_code() {
    let values = [0u64, 1, 0x7f_ffff, 0x80_0000, 0xff_ffff, 0x1ff_ffff, 0xffff_ffff, 0x1234_5678, 0x8765_4321];
    for hi in [false, true] {
        for signed in [false, true] {
            let ty = if signed { "s32" } else { "u32" };
            let part = if hi { "hi" } else { "lo" };
            let mul = format!("mul24.{part}.{ty} %r0, %r1, %r2;");
            let mad = format!("mad24.{part}.{ty} %r0, %r1, %r2, %r3;");
            let (km, ka) = (kernel(&mul, false), kernel(&mad, false));
            for &a in &values {
                for &b in &values {
                    let want = mul24_ref(hi, signed, a, b);
                    assert_eq!(eval(&km, &mul, [a, b, 0, 0]), want, "{mul} a={a:#x} b={b:#x}");
                    assert_eq!(eval(&ka, &mad, [a, b, 5, 0]), (want + 5) & 0xffff_ffff, "{mad} a={a:#x} b={b:#x}");
                }
            }
        }
    }
    for (ty, signed) in [("u32", false), ("s32", true)] {
        let body = format!("sad.{ty} %r0, %r1, %r2, %r3;");
        let k = kernel(&body, false);
        for &a in &values {
            for &b in &values {
                let diff = if signed {
                    let (x, y) = (sext(a, 32), sext(b, 32));
                    (x - y).unsigned_abs()
                } else {
                    (a & 0xffff_ffff).abs_diff(b & 0xffff_ffff)
                };
                assert_eq!(eval(&k, &body, [a, b, 3, 0]), (diff + 3) & 0xffff_ffff, "{body} a={a:#x} b={b:#x}");
            }
        }
    }
    let words = [0u64, 0x7f80_01ff, 0x8001_7fff, 0xffff_ffff, 0x1234_5678];
    for (ta, tb) in [("u32", "u32"), ("s32", "s32"), ("u32", "s32"), ("s32", "u32")] {
        let (sa, sb) = (ta == "s32", tb == "s32");
        let dp4a = format!("dp4a.{ta}.{tb} %r0, %r1, %r2, %r3;");
        let k4 = kernel(&dp4a, false);
        for &a in &words {
            for &b in &words {
                assert_eq!(eval(&k4, &dp4a, [a, b, 7, 0]), dp4a_ref(sa, sb, a, b, 7), "{dp4a} a={a:#x} b={b:#x}");
            }
        }
        for hi in [false, true] {
            let dp2a = format!("dp2a.{}.{ta}.{tb} %r0, %r1, %r2, %r3;", if hi { "hi" } else { "lo" });
            let k2 = kernel(&dp2a, false);
            for &a in &words {
                for &b in &words {
                    assert_eq!(eval(&k2, &dp2a, [a, b, 7, 0]), dp2a_ref(hi, sa, sb, a, b, 7), "{dp2a} a={a:#x} b={b:#x}");
                }
            }
        }
    }
}

#[test]
fn saturating_and_relu_integer_forms() {
    let values = [0u64, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x4000_0000, 0xc000_0000];
    let add = kernel("add.sat.s32 %r0, %r1, %r2;", false);
    let sub = kernel("sub.sat.s32 %r0, %r1, %r2;", false);
    let max = kernel("max.relu.s32 %r0, %r1, %r2;", false);
    let min = kernel("min.relu.s32 %r0, %r1, %r2;", false);
    for &a in &values {
        for &b in &values {
            let (x, y) = (sext(a, 32), sext(b, 32));
            let clamp = |v: i64| v.clamp(i32::MIN as i64, i32::MAX as i64) as u64 & 0xffff_ffff;
            assert_eq!(eval(&add, "add.sat", [a, b, 0, 0]), clamp(x + y), "add.sat {x} {y}");
            assert_eq!(eval(&sub, "sub.sat", [a, b, 0, 0]), clamp(x - y), "sub.sat {x} {y}");
            assert_eq!(eval(&max, "max.relu", [a, b, 0, 0]), x.max(y).max(0) as u64, "max.relu {x} {y}");
            assert_eq!(eval(&min, "min.relu", [a, b, 0, 0]), x.min(y).max(0) as u64, "min.relu {x} {y}");
        }
    }
}

#[test]
fn forms_left_unmodelled_say_why() {
    let cases = [
        ("add.cc.u32 %r0, %r1, %r2;", "carry"),
        ("lop3.or.b32 %r0|%p1, %r1, %r2, %r3, 0x3f, %p2;", "predicate result"),
        ("mad24.hi.sat.s32 %r0, %r1, %r2, %r3;", "saturation"),
        ("add.sat.u32 %r0, %r1, %r2;", "`.s32` only"),
        ("min.u16x2 %r0, %r1, %r2;", "packed integer"),
        ("prmt.b32.bogus %r0, %r1, %r2, %r3;", "`.bogus`"),
    ];
    for (body, why) in cases {
        let text =
            format!(".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry t()\n{{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t{body}\n\tret;\n}}\n");
        let parsed = ptx::parse(&text);
        assert!(parsed.errors.is_empty(), "{body}: {:?}", parsed.errors);
        let k = model::lower_module(&parsed.module).pop().unwrap().1.unwrap();
        let reasons: Vec<String> = k.unsupported().map(|(_, r)| r.to_string()).collect();
        assert!(reasons.len() == 1 && reasons[0].contains(why), "{body}: {reasons:?}");
    }
}
