//! The reference interpreter on the corpus (tests/corpus):
//!
//! - every kernel whose expected verdict is `verified` runs on random inputs and its outputs are
//!   compared with an independent computation in plain Rust: exactly where the kernel's result is
//!   exact (integer-valued inputs keep every sum and product exact), within a tolerance where it
//!   goes through transcendental approximations;
//! - every verified kernel runs clean (no error, no race) on its `lark.toml` launch (first and
//!   last block);
//! - every buggy kernel is caught on its `lark.toml` launch: the trace shows the race on the
//!   metadata's lines, or the run ends in divergence or out-of-bounds at the metadata's line.

use model::interp::{self, AccessKind, Arg, BufferId, InterpError, Launch, Memory, Trace};
use model::{Kernel, Space};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::Instant;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(corpus().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn load(file: &str) -> Vec<Kernel> {
    let text = read(&format!("{file}.ptx"));
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{file}.ptx: {:?}", parsed.errors);
    model::lower_module(&parsed.module).into_iter().map(|(n, k)| k.unwrap_or_else(|e| panic!("{n}: {}", e.message))).collect()
}

fn kernel(file: &str, name: &str) -> Kernel {
    load(file).into_iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no kernel `{name}` in {file}.ptx"))
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    /// Integer-valued floats in `lo..=hi`.
    fn ints(&mut self, n: usize, lo: i64, hi: i64) -> Vec<f32> {
        (0..n).map(|_| self.int(lo, hi) as f32).collect()
    }

    /// Floats with two fractional bits in `lo..=hi` (for the approximate kernels).
    fn quarters(&mut self, n: usize, lo: i64, hi: i64) -> Vec<f32> {
        (0..n).map(|_| self.int(lo * 4, hi * 4) as f32 / 4.0).collect()
    }
}

fn describe_race(t: &Trace, r: &interp::Race) -> String {
    let (a, b) = (&t.accesses[r.first], &t.accesses[r.second]);
    format!(
        "{:?} {:?} by {:?}/{:?} line {:?} phase {} vs {:?} by {:?}/{:?} line {:?} phase {} at {:#x}",
        a.space, a.kind, a.block, a.thread, a.line, a.phase, b.kind, b.block, b.thread, b.line, b.phase, r.addr
    )
}

/// Runs a kernel that must run clean: no error and no race in the trace, except benign ones
/// (one store instruction racing with itself on equal bits: every lane storing its warp's sum).
fn run_clean(k: &Kernel, l: &Launch, mem: &mut Memory) -> Trace {
    let t = interp::run(k, l, mem).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    let benign = |r: &interp::Race| {
        let (a, b) = (&t.accesses[r.first], &t.accesses[r.second]);
        a.inst == b.inst && a.written.is_some() && a.written == b.written && (a.addr, a.bytes) == (b.addr, b.bytes)
    };
    let races: Vec<interp::Race> = t.races().into_iter().filter(|r| !benign(r)).collect();
    assert!(races.is_empty(), "{}: unexpected race: {}", k.name, describe_race(&t, &races[0]));
    t
}

fn launch(grid: [u32; 3], block: [u32; 3], args: Vec<Arg>) -> Launch {
    Launch::new(grid, block, args)
}

fn buf(id: BufferId) -> Arg {
    Arg::Buffer(id)
}

/// Exact comparison: the interpreter's f32 outputs equal the reference values (which the tests
/// keep exactly representable).
fn assert_exact(what: &str, got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(*g as f64 == *w, "{what}[{i}]: interpreter {g}, reference {w}");
    }
}

fn assert_close(what: &str, got: &[f32], want: &[f64], rel: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (*g as f64 - w).abs();
        assert!(err <= rel * w.abs().max(1e-3), "{what}[{i}]: interpreter {g}, reference {w} (error {err:e})");
    }
}

fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|x| *x as f64).collect()
}

// ---------------------------------------------------------------------------------------------
// Elementwise kernels.

#[test]
fn vector_add() {
    let k = kernel("vector_add", "vector_add");
    let mut r = Rng(1);
    let n = 1000;
    let (a, b) = (r.ints(n, -1000, 1000), r.ints(n, -1000, 1000));
    let mut mem = Memory::new();
    let (ia, ib, ic) = (mem.add_f32("a", &a), mem.add_f32("b", &b), mem.add_zeroed("c", 4 * n as u64));
    run_clean(&k, &launch([4, 1, 1], [256, 1, 1], vec![buf(ia), buf(ib), buf(ic), Arg::i32(n as i32)]), &mut mem);
    let want: Vec<f64> = (0..n).map(|i| a[i] as f64 + b[i] as f64).collect();
    assert_exact("c", &mem.read_f32s(ic), &want);
}

#[test]
fn saxpy_grid_stride() {
    let k = kernel("saxpy_grid_stride", "saxpy_grid_stride");
    let mut r = Rng(2);
    let n = 1500; // more than one grid-stride round of 2 x 128 threads
    let (x, y) = (r.ints(n, -100, 100), r.ints(n, -100, 100));
    let mut mem = Memory::new();
    let (ix, iy) = (mem.add_f32("x", &x), mem.add_f32("y", &y));
    run_clean(&k, &launch([2, 1, 1], [128, 1, 1], vec![Arg::i32(n as i32), Arg::f32(2.5), buf(ix), buf(iy)]), &mut mem);
    let want: Vec<f64> = (0..n).map(|i| 2.5 * x[i] as f64 + y[i] as f64).collect();
    assert_exact("y", &mem.read_f32s(iy), &want);
}

#[test]
fn scale_inplace() {
    let k = kernel("scale_inplace", "_Z13scale_inplaceIfEvPT_S0_i");
    let mut r = Rng(3);
    let n = 200; // fewer than the 256 threads launched
    let x = r.ints(256, -1000, 1000);
    let mut mem = Memory::new();
    let ix = mem.add_f32("x", &x);
    run_clean(&k, &launch([2, 1, 1], [128, 1, 1], vec![buf(ix), Arg::f32(0.5), Arg::i32(n)]), &mut mem);
    let want: Vec<f64> = (0..256).map(|i| if i < n as usize { x[i] as f64 * 0.5 } else { x[i] as f64 }).collect();
    assert_exact("x", &mem.read_f32s(ix), &want);
}

#[test]
fn dequant_int8() {
    let k = kernel("dequant_int8", "dequant_int8");
    let mut r = Rng(4);
    let (n, group) = (500usize, 128usize);
    let q: Vec<i8> = (0..n).map(|_| r.int(-128, 127) as i8).collect();
    let scales = r.ints(n.div_ceil(group), -4, 4);
    let mut mem = Memory::new();
    let (iq, is, iw) = (mem.add_i8("q", &q), mem.add_f32("scales", &scales), mem.add_zeroed("w", 4 * n as u64));
    run_clean(&k, &launch([2, 1, 1], [256, 1, 1], vec![buf(iq), buf(is), buf(iw), Arg::i32(n as i32), Arg::i32(group as i32)]), &mut mem);
    let want: Vec<f64> = (0..n).map(|i| q[i] as f64 * scales[i / group] as f64).collect();
    assert_exact("w", &mem.read_f32s(iw), &want);
}

#[test]
fn dequant_int4_f16() {
    let k = kernel("dequant_int4_f16", "dequant_int4_f16");
    let mut r = Rng(5);
    let (n_bytes, group) = (400usize, 128usize);
    let packed: Vec<u8> = (0..n_bytes).map(|_| r.int(0, 255) as u8).collect();
    let scales: Vec<f32> = r.quarters((2 * n_bytes).div_ceil(group), -4, 4);
    let mut mem = Memory::new();
    let (ip, is) = (mem.add_u8("packed", &packed), mem.add_f16("scales", &scales));
    let iw = mem.add_zeroed("w", 2 * 2 * n_bytes as u64 + 64);
    run_clean(&k, &launch([2, 1, 1], [256, 1, 1], vec![buf(ip), buf(is), buf(iw), Arg::i32(n_bytes as i32), Arg::i32(group as i32)]), &mut mem);
    let mut want = vec![0.0f64; 2 * n_bytes + 32];
    for i in 0..n_bytes {
        let s = scales[2 * i / group] as f64;
        want[2 * i] = ((packed[i] & 15) as f64 - 8.0) * s;
        want[2 * i + 1] = ((packed[i] >> 4) as f64 - 8.0) * s;
    }
    assert_exact("w", &mem.read_f16s(iw), &want);
}

#[test]
fn embedding_lookup() {
    let k = kernel("embedding_lookup", "embedding_lookup");
    let mut r = Rng(6);
    let (tokens, dim, vocab) = (4usize, 100usize, 50usize);
    let ids: Vec<i32> = (0..tokens).map(|_| r.int(0, vocab as i64 - 1) as i32).collect();
    let table = r.ints(vocab * dim, -1000, 1000);
    let mut mem = Memory::new();
    let (ii, it, io) = (mem.add_i32("ids", &ids), mem.add_f32("table", &table), mem.add_zeroed("out", 4 * (tokens * dim) as u64));
    // 32 threads per block: each thread covers several columns.
    run_clean(&k, &launch([tokens as u32, 1, 1], [32, 1, 1], vec![buf(ii), buf(it), buf(io), Arg::i32(dim as i32)]), &mut mem);
    let want: Vec<f64> = (0..tokens * dim).map(|j| table[ids[j / dim] as usize * dim + j % dim] as f64).collect();
    assert_exact("out", &mem.read_f32s(io), &want);
}

#[test]
fn reshape_and_cache() {
    let k = kernel("reshape_and_cache", "reshape_and_cache");
    let mut r = Rng(7);
    let (tokens, heads, hs, slots) = (4usize, 2usize, 16usize, 6usize);
    let n = heads * hs;
    let slot_mapping: Vec<i64> = vec![4, -1, 0, 5]; // distinct, one padding token
    let (key, value) = (r.ints(tokens * n, -50, 50), r.ints(tokens * n, -50, 50));
    let mut mem = Memory::new();
    let (ik, iv) = (mem.add_f32("key", &key), mem.add_f32("value", &value));
    let kc0 = r.ints(slots * n, -50, 50);
    let vc0 = r.ints(slots * n, -50, 50);
    let (ikc, ivc) = (mem.add_f32("key_cache", &kc0), mem.add_f32("value_cache", &vc0));
    let is = mem.add_i64("slot_mapping", &slot_mapping);
    let args = vec![buf(ik), buf(iv), buf(ikc), buf(ivc), buf(is), Arg::i32(heads as i32), Arg::i32(hs as i32)];
    run_clean(&k, &launch([tokens as u32, 1, 1], [16, 1, 1], args), &mut mem);
    let (mut kc, mut vc) = (f64s(&kc0), f64s(&vc0));
    for (t, &s) in slot_mapping.iter().enumerate() {
        if s >= 0 {
            for i in 0..n {
                kc[s as usize * n + i] = key[t * n + i] as f64;
                vc[s as usize * n + i] = value[t * n + i] as f64;
            }
        }
    }
    assert_exact("key_cache", &mem.read_f32s(ikc), &kc);
    assert_exact("value_cache", &mem.read_f32s(ivc), &vc);
}

#[test]
fn rope_neox() {
    let k = kernel("rope_neox", "rope_neox");
    let mut r = Rng(8);
    let (tokens, heads, hs, max_pos) = (3usize, 2usize, 8usize, 5usize);
    let half = hs / 2;
    let positions: Vec<i32> = (0..tokens).map(|_| r.int(0, max_pos as i64 - 1) as i32).collect();
    let cache = r.ints(max_pos * hs, -3, 3);
    let q = r.ints(tokens * heads * hs, -20, 20);
    let mut mem = Memory::new();
    let (iq, ip, ic) = (mem.add_f32("q", &q), mem.add_i32("positions", &positions), mem.add_f32("cos_sin_cache", &cache));
    run_clean(&k, &launch([tokens as u32, 1, 1], [4, 1, 1], vec![buf(iq), buf(ip), buf(ic), Arg::i32(heads as i32), Arg::i32(hs as i32)]), &mut mem);
    let mut want = f64s(&q);
    for (t, &p) in positions.iter().enumerate() {
        let p = p as usize;
        for h in 0..heads {
            let base = (t * heads + h) * hs;
            for i in 0..half {
                let (c, s) = (cache[p * hs + i] as f64, cache[p * hs + half + i] as f64);
                let (x1, x2) = (q[base + i] as f64, q[base + i + half] as f64);
                want[base + i] = x1 * c - x2 * s;
                want[base + i + half] = x2 * c + x1 * s;
            }
        }
    }
    assert_exact("q", &mem.read_f32s(iq), &want);
}

// ---------------------------------------------------------------------------------------------
// Reductions, scans, atomics.

#[test]
fn reduce_sum_shared() {
    let k = kernel("reduce_sum_shared", "reduce_sum_shared");
    let mut r = Rng(10);
    let n = 1000; // the last block is partial
    let x = r.ints(n, -1000, 1000);
    let mut mem = Memory::new();
    let (ix, ip) = (mem.add_f32("input", &x), mem.add_zeroed("partial", 16));
    run_clean(&k, &launch([4, 1, 1], [256, 1, 1], vec![buf(ix), buf(ip), Arg::i32(n as i32)]), &mut mem);
    let want: Vec<f64> = (0..4).map(|b| x.iter().skip(b * 256).take(256).map(|v| *v as f64).sum()).collect();
    assert_exact("partial", &mem.read_f32s(ip), &want);
}

#[test]
fn warp_reduce_shfl() {
    let k = kernel("warp_reduce_shfl", "warp_reduce_shfl");
    let mut r = Rng(11);
    let n = 1000;
    let x = r.ints(n, -1000, 1000);
    let mut mem = Memory::new();
    let (ix, is) = (mem.add_f32("x", &x), mem.add_f32("sum", &[0.0]));
    run_clean(&k, &launch([4, 1, 1], [256, 1, 1], vec![buf(ix), buf(is), Arg::i32(n as i32)]), &mut mem);
    let total: f64 = x.iter().map(|v| *v as f64).sum();
    assert_exact("sum", &mem.read_f32s(is), &[total]);
    assert_eq!(mem.read_exact(is, 0).map(|q| q.to_integer()), Some((total as i64).into()));
}

#[test]
fn warp_scan_shfl_up() {
    let k = kernel("warp_scan_shfl_up", "warp_scan_shfl_up");
    let mut r = Rng(12);
    let n = 200;
    let x = r.ints(n, -100, 100);
    let mut mem = Memory::new();
    let (ii, io) = (mem.add_f32("in", &x), mem.add_zeroed("out", 4 * n as u64));
    run_clean(&k, &launch([2, 1, 1], [128, 1, 1], vec![buf(ii), buf(io), Arg::i32(n as i32)]), &mut mem);
    let want: Vec<f64> = (0..n).map(|i| (i - i % 32..=i).map(|j| x[j] as f64).sum()).collect();
    assert_exact("out", &mem.read_f32s(io), &want);
}

#[test]
fn scan_hillis_steele() {
    let k = kernel("scan_hillis_steele", "scan_hillis_steele");
    let mut r = Rng(13);
    let n = 700;
    let x = r.ints(n, -100, 100);
    let mut mem = Memory::new();
    let (ii, io) = (mem.add_f32("in", &x), mem.add_zeroed("out", 4 * n as u64));
    run_clean(&k, &launch([2, 1, 1], [512, 1, 1], vec![buf(ii), buf(io), Arg::i32(n as i32)]), &mut mem);
    let want: Vec<f64> = (0..n).map(|i| (i - i % 512..=i).map(|j| x[j] as f64).sum()).collect();
    assert_exact("out", &mem.read_f32s(io), &want);
}

#[test]
fn scan_blelloch() {
    let k = kernel("scan_blelloch", "scan_blelloch");
    let mut r = Rng(14);
    let n = 1024;
    let x = r.ints(n, -100, 100);
    let mut mem = Memory::new();
    let (ii, io) = (mem.add_f32("in", &x), mem.add_zeroed("out", 4 * n as u64));
    run_clean(&k, &launch([2, 1, 1], [256, 1, 1], vec![buf(ii), buf(io)]), &mut mem);
    let want: Vec<f64> = (0..n).map(|i| (i - i % 512..i).map(|j| x[j] as f64).sum()).collect();
    assert_exact("out", &mem.read_f32s(io), &want);
}

#[test]
fn histogram_shared() {
    let k = kernel("histogram_shared", "histogram_shared");
    let mut r = Rng(15);
    let n = 3000;
    // Skewed bytes, so that bins see many concurrent atomics.
    let data: Vec<u8> = (0..n).map(|_| if r.int(0, 3) == 0 { 7 } else { r.int(0, 255) as u8 }).collect();
    let mut mem = Memory::new();
    let (id, ib) = (mem.add_u8("data", &data), mem.add_zeroed("bins", 4 * 256));
    let t = run_clean(&k, &launch([3, 1, 1], [256, 1, 1], vec![buf(id), buf(ib), Arg::i32(n)]), &mut mem);
    let mut want = vec![0u32; 256];
    for d in &data {
        want[*d as usize] += 1;
    }
    assert_eq!(mem.read_u32s(ib), want);
    assert!(t.accesses.iter().any(|a| a.kind == AccessKind::Atomic && a.space == Space::Shared));
}

#[test]
fn count_positive_atomic() {
    let k = kernel("count_positive_atomic", "count_positive_atomic");
    let mut r = Rng(16);
    let n = 1000;
    let x = r.ints(n, -5, 5);
    let mut mem = Memory::new();
    let (ix, ic, it) = (mem.add_f32("x", &x), mem.add_i32("count", &[0]), mem.add_f32("total", &[0.0]));
    run_clean(&k, &launch([4, 1, 1], [256, 1, 1], vec![buf(ix), buf(ic), buf(it), Arg::i32(n as i32)]), &mut mem);
    assert_eq!(mem.read_i32s(ic), vec![x.iter().filter(|v| **v > 0.0).count() as i32]);
    assert_exact("total", &mem.read_f32s(it), &[x.iter().filter(|v| **v > 0.0).map(|v| *v as f64).sum()]);
}

#[test]
fn dot_atomic() {
    let k = kernel("dot_atomic", "dot_atomic");
    let mut r = Rng(17);
    let n = 1500; // three grid-stride rounds of 2 x 256
    let (a, b) = (r.ints(n, -30, 30), r.ints(n, -30, 30));
    let mut mem = Memory::new();
    let (ia, ib, ir) = (mem.add_f32("a", &a), mem.add_f32("b", &b), mem.add_f32("result", &[0.0]));
    run_clean(&k, &launch([2, 1, 1], [256, 1, 1], vec![buf(ia), buf(ib), buf(ir), Arg::i32(n as i32)]), &mut mem);
    assert_exact("result", &mem.read_f32s(ir), &[(0..n).map(|i| a[i] as f64 * b[i] as f64).sum()]);
}

#[test]
fn reduce_two_pass() {
    let ks = load("reduce_two_pass");
    let (p1, p2) = (ks.iter().find(|k| k.name == "sum_partials").unwrap(), ks.iter().find(|k| k.name == "sum_final").unwrap());
    let mut r = Rng(18);
    let (n, blocks) = (2000usize, 3usize);
    let x = r.ints(n, -1000, 1000);
    let mut mem = Memory::new();
    let (ix, ip, ir) = (mem.add_f32("x", &x), mem.add_zeroed("partials", 4 * blocks as u64), mem.add_zeroed("result", 4));
    run_clean(p1, &launch([blocks as u32, 1, 1], [256, 1, 1], vec![buf(ix), buf(ip), Arg::i32(n as i32)]), &mut mem);
    let want: Vec<f64> = (0..blocks).map(|b| (0..n).filter(|i| (i / 256) % blocks == b).map(|i| x[i] as f64).sum()).collect();
    assert_exact("partials", &mem.read_f32s(ip), &want);
    // The second pass reads the first pass's exact values from the same memory.
    run_clean(p2, &launch([1, 1, 1], [256, 1, 1], vec![buf(ip), buf(ir), Arg::i32(blocks as i32)]), &mut mem);
    assert_exact("result", &mem.read_f32s(ir), &[x.iter().map(|v| *v as f64).sum()]);
}

#[test]
fn uniform_branch_barrier() {
    let k = kernel("uniform_branch_barrier", "uniform_branch_barrier");
    let mut r = Rng(19);
    let n = 1000;
    let x = r.ints(n, -1000, 1000);
    let mut mem = Memory::new();
    let (ii, io) = (mem.add_f32("in", &x), mem.add_zeroed("out", 4 * n as u64));
    run_clean(&k, &launch([4, 1, 1], [256, 1, 1], vec![buf(ii), buf(io), Arg::i32(n as i32)]), &mut mem);
    let v = |i: usize| if i < n { x[i] as f64 } else { 0.0 };
    let want: Vec<f64> = (0..n).map(|i| if i / 256 == 3 { 0.5 * (v(i) + v(3 * 256 + 255 - i % 256)) } else { v(i) }).collect();
    assert_exact("out", &mem.read_f32s(io), &want);
}

// ---------------------------------------------------------------------------------------------
// Tiled and stencil kernels.

#[test]
fn matmul_tiled() {
    let k = kernel("matmul_tiled", "matmul_tiled");
    let mut r = Rng(20);
    let (m, n, kk) = (32usize, 48usize, 32usize);
    let (a, b) = (r.ints(m * kk, -8, 8), r.ints(kk * n, -8, 8));
    let mut mem = Memory::new();
    let (ia, ib, ic) = (mem.add_f32("A", &a), mem.add_f32("B", &b), mem.add_zeroed("C", 4 * (m * n) as u64));
    let args = vec![buf(ia), buf(ib), buf(ic), Arg::i32(m as i32), Arg::i32(n as i32), Arg::i32(kk as i32)];
    run_clean(&k, &launch([(n / 16) as u32, (m / 16) as u32, 1], [16, 16, 1], args), &mut mem);
    let want: Vec<f64> = (0..m * n).map(|j| (0..kk).map(|t| a[(j / n) * kk + t] as f64 * b[t * n + j % n] as f64).sum()).collect();
    assert_exact("C", &mem.read_f32s(ic), &want);
}

#[test]
fn transpose_tiled() {
    let k = kernel("transpose_tiled", "transpose_tiled");
    let mut r = Rng(21);
    let (w, h) = (40usize, 24usize); // partial tiles on both axes
    let x = r.ints(w * h, -1000, 1000);
    let mut mem = Memory::new();
    let (io, ii) = (mem.add_zeroed("odata", 4 * (w * h) as u64), mem.add_f32("idata", &x));
    run_clean(&k, &launch([2, 1, 1], [32, 8, 1], vec![buf(io), buf(ii), Arg::i32(w as i32), Arg::i32(h as i32)]), &mut mem);
    // odata is h columns by w rows: odata[c * h + r] = idata[r * w + c].
    let want: Vec<f64> = (0..w * h).map(|j| x[(j % h) * w + j / h] as f64).collect();
    assert_exact("odata", &mem.read_f32s(io), &want);
}

#[test]
fn stencil_1d() {
    let k = kernel("stencil_1d", "stencil_1d");
    let mut r = Rng(22);
    let n = 1024;
    let x = r.ints(n, -1000, 1000);
    let mut mem = Memory::new();
    let (ii, io) = (mem.add_f32("in", &x), mem.add_zeroed("out", 4 * n as u64));
    run_clean(&k, &launch([4, 1, 1], [256, 1, 1], vec![buf(ii), buf(io), Arg::i32(n as i32)]), &mut mem);
    let want: Vec<f64> = (0..n as i64).map(|g| (g - 3..=g + 3).filter(|j| (0..n as i64).contains(j)).map(|j| x[j as usize] as f64).sum()).collect();
    assert_exact("out", &mem.read_f32s(io), &want);
}

#[test]
fn laplace_2d() {
    let k = kernel("laplace_2d", "laplace_2d");
    let mut r = Rng(23);
    let (w, h) = (40usize, 20usize);
    let x = r.ints(w * h, -100, 100);
    let mut mem = Memory::new();
    let (ii, io) = (mem.add_f32("in", &x), mem.add_zeroed("out", 4 * (w * h) as u64));
    run_clean(&k, &launch([3, 2, 1], [16, 16, 1], vec![buf(ii), buf(io), Arg::i32(w as i32), Arg::i32(h as i32)]), &mut mem);
    let at = |x_: i64, y_: i64| x[(y_.clamp(0, h as i64 - 1) as usize) * w + x_.clamp(0, w as i64 - 1) as usize] as f64;
    let want: Vec<f64> = (0..w * h)
        .map(|j| {
            let (cx, cy) = ((j % w) as i64, (j / w) as i64);
            at(cx, cy - 1) + at(cx, cy + 1) + at(cx - 1, cy) + at(cx + 1, cy) - 4.0 * at(cx, cy)
        })
        .collect();
    assert_exact("out", &mem.read_f32s(io), &want);
}

// ---------------------------------------------------------------------------------------------
// Kernels through transcendental approximations (ex2.approx, rsqrt.approx): compared within a
// tolerance.

#[test]
fn softmax_row() {
    let k = kernel("softmax_row", "softmax_row");
    let mut r = Rng(30);
    let (rows, cols) = (2usize, 300usize);
    let x = r.quarters(rows * cols, -4, 4);
    let mut mem = Memory::new();
    let (ix, iy) = (mem.add_f32("x", &x), mem.add_zeroed("y", 4 * (rows * cols) as u64));
    run_clean(&k, &launch([rows as u32, 1, 1], [256, 1, 1], vec![buf(ix), buf(iy), Arg::i32(cols as i32)]), &mut mem);
    let mut want = Vec::new();
    for row in x.chunks(cols) {
        let m = row.iter().fold(f64::NEG_INFINITY, |a, v| a.max(*v as f64));
        let s: f64 = row.iter().map(|v| (*v as f64 - m).exp()).sum();
        want.extend(row.iter().map(|v| (*v as f64 - m).exp() / s));
    }
    assert_close("y", &mem.read_f32s(iy), &want, 1e-5);
}

#[test]
fn rmsnorm() {
    let k = kernel("rmsnorm", "rmsnorm");
    let mut r = Rng(31);
    let (rows, hidden, eps) = (2usize, 300usize, 1e-6f32);
    let (x, w) = (r.quarters(rows * hidden, -4, 4), r.quarters(hidden, -2, 2));
    let mut mem = Memory::new();
    let (io, ix, iw) = (mem.add_zeroed("out", 4 * (rows * hidden) as u64), mem.add_f32("x", &x), mem.add_f32("weight", &w));
    run_clean(&k, &launch([rows as u32, 1, 1], [256, 1, 1], vec![buf(io), buf(ix), buf(iw), Arg::f32(eps), Arg::i32(hidden as i32)]), &mut mem);
    let mut want = Vec::new();
    for row in x.chunks(hidden) {
        let ms: f64 = row.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / hidden as f64;
        let inv = 1.0 / (ms + eps as f64).sqrt();
        want.extend(row.iter().zip(&w).map(|(v, g)| *v as f64 * inv * *g as f64));
    }
    assert_close("out", &mem.read_f32s(io), &want, 1e-5);
}

#[test]
fn layernorm() {
    let k = kernel("layernorm", "layernorm");
    let mut r = Rng(32);
    let (rows, d, eps) = (2usize, 200usize, 1e-5f32);
    let x = r.quarters(rows * d, -4, 4);
    let (g, b) = (r.quarters(d, -2, 2), r.quarters(d, -2, 2));
    let mut mem = Memory::new();
    let iy = mem.add_zeroed("y", 4 * (rows * d) as u64);
    let (ix, ig, ib) = (mem.add_f32("x", &x), mem.add_f32("gamma", &g), mem.add_f32("beta", &b));
    run_clean(&k, &launch([rows as u32, 1, 1], [128, 1, 1], vec![buf(iy), buf(ix), buf(ig), buf(ib), Arg::i32(d as i32), Arg::f32(eps)]), &mut mem);
    let mut want = Vec::new();
    for row in x.chunks(d) {
        let mean: f64 = row.iter().map(|v| *v as f64).sum::<f64>() / d as f64;
        let var = row.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / d as f64 - mean * mean;
        let rstd = 1.0 / (var + eps as f64).sqrt();
        want.extend((0..d).map(|j| (row[j] as f64 - mean) * rstd * g[j] as f64 + b[j] as f64));
    }
    assert_close("y", &mem.read_f32s(iy), &want, 1e-5);
}

#[test]
fn silu_and_mul() {
    let k = kernel("silu_and_mul", "silu_and_mul");
    let mut r = Rng(33);
    let (tokens, d) = (2usize, 100usize);
    let input = r.quarters(tokens * 2 * d, -6, 6);
    let mut mem = Memory::new();
    let (io, ii) = (mem.add_zeroed("out", 4 * (tokens * d) as u64), mem.add_f32("input", &input));
    run_clean(&k, &launch([tokens as u32, 1, 1], [64, 1, 1], vec![buf(io), buf(ii), Arg::i32(d as i32)]), &mut mem);
    let want: Vec<f64> = (0..tokens * d)
        .map(|j| {
            let (t, i) = (j / d, j % d);
            let (g, u) = (input[t * 2 * d + i] as f64, input[t * 2 * d + d + i] as f64);
            g / (1.0 + (-g).exp()) * u
        })
        .collect();
    assert_close("out", &mem.read_f32s(io), &want, 1e-5);
}

#[test]
fn gelu_tanh_and_mul() {
    let k = kernel("gelu_tanh_and_mul", "_Z17gelu_tanh_and_mulPfPKfi");
    let mut r = Rng(34);
    let (tokens, d) = (2usize, 100usize);
    let input = r.quarters(tokens * 2 * d, -3, 3);
    let mut mem = Memory::new();
    let (io, ii) = (mem.add_zeroed("out", 4 * (tokens * d) as u64), mem.add_f32("input", &input));
    run_clean(&k, &launch([tokens as u32, 1, 1], [64, 1, 1], vec![buf(io), buf(ii), Arg::i32(d as i32)]), &mut mem);
    let (k0, k1) = (0.7978845608f64, 0.044715f64);
    let want: Vec<f64> = (0..tokens * d)
        .map(|j| {
            let (t, i) = (j / d, j % d);
            let (x, y) = (input[t * 2 * d + i] as f64, input[t * 2 * d + d + i] as f64);
            0.5 * x * (1.0 + (k0 * (x + k1 * x * x * x)).tanh()) * y
        })
        .collect();
    assert_close("out", &mem.read_f32s(io), &want, 1e-5);
}

// ---------------------------------------------------------------------------------------------
// Kernels of the newer instruction forms: redux.sync, prmt/shf/bfe, vector loads through the
// read-only path, named barriers with a thread count and bar.red.

#[test]
fn warp_count_redux() {
    let k = kernel("warp_count_redux", "warp_count_redux");
    let mut r = Rng(31);
    let n = 1000;
    let x = r.quarters(n, -4, 4);
    let mut mem = Memory::new();
    let (ix, ic) = (mem.add_f32("x", &x), mem.add_u32("count", &[7]));
    run_clean(&k, &launch([4, 1, 1], [256, 1, 1], vec![buf(ix), buf(ic), Arg::f32(0.5), Arg::i32(n as i32)]), &mut mem);
    let above = x.iter().filter(|v| **v > 0.5).count() as u32;
    assert_eq!(mem.read_u32s(ic), vec![7 + above]);
}

#[test]
fn byte_perm_funnel() {
    let k = kernel("byte_perm_funnel", "byte_perm_funnel");
    let mut r = Rng(32);
    let n = 300;
    let words: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
    let mut mem = Memory::new();
    let (ii, io) = (mem.add_u32("in", &words), mem.add_u32("out", &vec![0; n]));
    run_clean(&k, &launch([3, 1, 1], [128, 1, 1], vec![buf(ii), buf(io), Arg::i32(n as i32)]), &mut mem);
    let want: Vec<u32> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let swapped = w.swap_bytes();
            swapped.rotate_left(i as u32 & 31) ^ ((swapped >> 4) & 0xfff)
        })
        .collect();
    assert_eq!(mem.read_u32s(io), want);
}

#[test]
fn float4_copy_nc() {
    let k = kernel("float4_copy_nc", "float4_copy_nc");
    let mut r = Rng(33);
    for n in [1001usize, 1000, 3] {
        let x = r.quarters(n, -100, 100);
        let mut mem = Memory::new();
        let (ix, io) = (mem.add_f32("x", &x), mem.add_zeroed("out", 4 * n as u64));
        run_clean(&k, &launch([4, 1, 1], [64, 1, 1], vec![buf(ix), buf(io), Arg::i32(n as i32)]), &mut mem);
        assert_exact("out", &mem.read_f32s(io), &f64s(&x));
    }
}

#[test]
fn named_barrier_count() {
    let k = kernel("named_barrier_count", "named_barrier_count");
    let mut r = Rng(34);
    let x = r.ints(1024, -50, 50);
    let mut mem = Memory::new();
    let (ix, ic) = (mem.add_f32("x", &x), mem.add_u32("counts", &[0; 8]));
    run_clean(&k, &launch([8, 1, 1], [128, 1, 1], vec![buf(ix), buf(ic)]), &mut mem);
    let want: Vec<u32> = (0..8).map(|b| (0..128).filter(|t| x[b * 128 + t] > x[b * 128 + (t + 1) % 128]).count() as u32).collect();
    assert_eq!(mem.read_u32s(ic), want);
    // With another block size the named barrier would order only part of the block.
    let err = interp::run(&k, &launch([1, 1, 1], [256, 1, 1], vec![buf(ix), buf(ic)]), &mut mem).unwrap_err();
    assert!(matches!(err, InterpError::Unsupported { .. }), "{err}");
}

#[test]
fn reduction_of_1k_elements_is_fast() {
    // 256 threads, 1024 elements: four grid-stride loads per thread, then the shared tree.
    let k = kernel("reduce_two_pass", "sum_partials");
    let mut r = Rng(40);
    let x = r.ints(1024, -1000, 1000);
    let mut mem = Memory::new();
    let (ix, ip) = (mem.add_f32("x", &x), mem.add_zeroed("partials", 4));
    let start = Instant::now();
    let t = run_clean(&k, &launch([1, 1, 1], [256, 1, 1], vec![buf(ix), buf(ip), Arg::i32(1024)]), &mut mem);
    let took = start.elapsed();
    eprintln!("256-thread 1K-element reduction: {} steps, {} accesses, {took:?}", t.steps, t.accesses.len());
    assert_exact("partials", &mem.read_f32s(ip), &[x.iter().map(|v| *v as f64).sum()]);
    assert!(took.as_secs_f64() < 2.0, "took {took:?}");
}

// ---------------------------------------------------------------------------------------------
// The lark.toml launches: verified kernels run clean, buggy kernels are caught.

struct Expect {
    file: String,
    kernel: String,
    verdict: String,
    lines: Vec<u32>,
    space: Option<String>,
}

fn expectations() -> Vec<Expect> {
    let mut out = Vec::new();
    let mut files: Vec<_> =
        std::fs::read_dir(corpus()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| n.ends_with(".meta.toml")).collect();
    files.sort();
    for f in files {
        let table: toml::Table = read(&f).parse().unwrap_or_else(|e| panic!("{f}: {e}"));
        for e in table["expect"].as_array().unwrap() {
            out.push(Expect {
                file: f.trim_end_matches(".meta.toml").to_string(),
                kernel: e["kernel"].as_str().unwrap().to_string(),
                verdict: e["verdict"].as_str().unwrap().to_string(),
                lines: e["lines"].as_array().unwrap().iter().map(|l| l.as_integer().unwrap() as u32).collect(),
                space: e.get("space").and_then(|s| s.as_str()).map(str::to_string),
            });
        }
    }
    out
}

/// A launch built from lark.toml: geometry, scalar values, buffers of the declared type and
/// length filled with random data that respects the declared assumptions.
struct SpecLaunch {
    launch: Launch,
    mem: Memory,
    /// Buffer name → size in bytes.
    sizes: HashMap<String, u64>,
}

fn spec_launch(file: &str, k: &Kernel, rng: &mut Rng) -> SpecLaunch {
    let iface = spec::parse_lark_toml("lark.toml", &read("lark.toml")).unwrap();
    let ks = iface.kernel(&k.name).unwrap_or_else(|| panic!("{} is not in lark.toml", k.name));
    let src = spec::unmangled_name(&k.name).unwrap_or_else(|| k.name.to_string());
    let names = spec::cu_param_names(&read(&format!("{file}.cu")), &src).unwrap_or_else(|| panic!("no signature for {src}"));
    let dim = |d: Option<[spec::DimRange; 3]>| -> [u32; 3] {
        let d = d.expect("lark.toml gives the geometry");
        [0, 1, 2].map(|i| d[i].value().expect("exact geometry") as u32)
    };
    let (grid, block) = (dim(ks.grid_range()), dim(ks.block_range()));
    let spec_of = |i: usize| {
        let p = &k.params[i];
        let cands = [names[i].clone(), p.name.to_string(), format!("param_{i}")];
        let refs: Vec<&str> = cands.iter().map(|s| s.as_str()).collect();
        ks.param(&refs).unwrap_or_else(|| panic!("{}: no spec for parameter {}", k.name, names[i])).clone()
    };
    // Scalars first: buffer lengths may name them.
    let mut scalars: HashMap<String, i128> = HashMap::new();
    let mut args: Vec<Option<Arg>> = vec![None; k.params.len()];
    for i in 0..k.params.len() {
        if let spec::ParamSpec::Scalar { value, range } = spec_of(i) {
            let ty = k.params[i].ty.as_str();
            let arg = match (value, range) {
                (Some(spec::Scalar::Float(f)), _) if ty == ".f64" => Arg::f64(f),
                (Some(spec::Scalar::Float(f)), _) => Arg::f32(f as f32),
                (Some(spec::Scalar::Int(v)), _) if ty == ".f32" => Arg::f32(v as f32),
                (Some(spec::Scalar::Int(v)), _) => {
                    scalars.insert(names[i].clone(), v);
                    Arg::Scalar(v as u64)
                }
                (None, Some((lo, hi))) => {
                    let v = 4096i128.clamp(lo, hi);
                    scalars.insert(names[i].clone(), v);
                    Arg::Scalar(v as u64)
                }
                (None, None) => Arg::Scalar(0),
            };
            args[i] = Some(arg);
        }
    }
    let mut mem = Memory::new();
    let mut sizes = HashMap::new();
    for i in 0..k.params.len() {
        if let spec::ParamSpec::Buffer { dtype, len, assume, .. } = spec_of(i) {
            let dtype = dtype.unwrap_or(spec::DType::F32);
            let len = match len {
                Some(spec::Len::Elements(n)) => n,
                Some(spec::Len::Param(p)) => scalars[&p] as u64,
                Some(l @ spec::Len::Expr(_)) => l.elements(&|n| scalars.get(n).copied()).expect("the length's scalars have values"),
                None => 4096,
            };
            let (lo, hi) = assume
                .iter()
                .find_map(|a| match a {
                    spec::Assumption::InRange(lo, hi) => Some((*lo, *hi - 1)),
                    _ => None,
                })
                .unwrap_or((-8, 8));
            let injective = assume.contains(&spec::Assumption::Injective);
            let mut used = BTreeSet::new();
            let mut vals: Vec<i64> = Vec::new();
            for _ in 0..len {
                let mut v = rng.int(lo, hi);
                while injective && !used.insert(v) {
                    v = rng.int(lo, hi);
                }
                vals.push(v);
            }
            let name = names[i].clone();
            use spec::DType::*;
            let id = match dtype {
                F32 => mem.add_f32(&name, &vals.iter().map(|v| *v as f32).collect::<Vec<_>>()),
                F64 => mem.add_f64(&name, &vals.iter().map(|v| *v as f64).collect::<Vec<_>>()),
                F16 | BF16 => mem.add_f16(&name, &vals.iter().map(|v| *v as f32).collect::<Vec<_>>()),
                I8 => mem.add_i8(&name, &vals.iter().map(|v| *v as i8).collect::<Vec<_>>()),
                U8 => mem.add_u8(&name, &vals.iter().map(|v| *v as u8).collect::<Vec<_>>()),
                I16 => mem.add_i16(&name, &vals.iter().map(|v| *v as i16).collect::<Vec<_>>()),
                U16 => mem.add_u16(&name, &vals.iter().map(|v| *v as u16).collect::<Vec<_>>()),
                I32 => mem.add_i32(&name, &vals.iter().map(|v| *v as i32).collect::<Vec<_>>()),
                U32 => mem.add_u32(&name, &vals.iter().map(|v| *v as u32).collect::<Vec<_>>()),
                I64 => mem.add_i64(&name, &vals),
                U64 => mem.add_u64(&name, &vals.iter().map(|v| *v as u64).collect::<Vec<_>>()),
            };
            sizes.insert(name, len * dtype.bytes());
            args[i] = Some(Arg::Buffer(id));
        }
    }
    let mut launch = Launch::new(grid, block, args.into_iter().map(|a| a.unwrap()).collect());
    launch.dynamic_shared_bytes = ks.dynamic_shared_bytes.unwrap_or(0);
    // The first and the last block: partial blocks and edge tiles are where bugs show.
    let last = [grid[0] - 1, grid[1] - 1, grid[2] - 1];
    launch.blocks = Some(if last == [0, 0, 0] { vec![last] } else { vec![[0, 0, 0], last] });
    SpecLaunch { launch, mem, sizes }
}

#[test]
fn verified_kernels_run_clean_on_their_lark_launch() {
    let mut count = 0;
    for e in expectations().iter().filter(|e| e.verdict == "verified") {
        let k = kernel(&e.file, &e.kernel);
        let mut sl = spec_launch(&e.file, &k, &mut Rng(100));
        let start = Instant::now();
        let t = run_clean(&k, &sl.launch, &mut sl.mem);
        eprintln!("{}: {} steps, {} accesses, {:?}", e.kernel, t.steps, t.accesses.len(), start.elapsed());
        count += 1;
    }
    assert!(count >= 28, "only {count} verified kernels");
}

#[test]
fn buggy_kernels_are_caught() {
    let mut count = 0;
    for e in expectations().iter().filter(|e| e.verdict != "verified") {
        let k = kernel(&e.file, &e.kernel);
        let mut sl = spec_launch(&e.file, &k, &mut Rng(200));
        let (t, result) = interp::run_traced(&k, &sl.launch, &mut sl.mem);
        let what = format!("{} ({})", e.kernel, e.verdict);
        match e.verdict.as_str() {
            "race" => {
                assert!(result.is_ok(), "{what}: {}", result.unwrap_err());
                let races = t.races();
                let want: BTreeSet<u32> = e.lines.iter().copied().collect();
                let space = e.space.as_deref().unwrap();
                let hit = races.iter().find(|r| {
                    let (a, b) = (&t.accesses[r.first], &t.accesses[r.second]);
                    let lines: BTreeSet<u32> = [a.line, b.line].into_iter().flatten().collect();
                    lines == want && a.space.name() == space && b.space == a.space
                });
                let Some(r) = hit else {
                    panic!("{what}: no race on lines {:?}; found: {:#?}", e.lines, races.iter().map(|r| describe_race(&t, r)).collect::<Vec<_>>())
                };
                let (a, b) = (&t.accesses[r.first], &t.accesses[r.second]);
                assert!((a.block, a.thread) != (b.block, b.thread), "{what}: one thread");
                assert!(a.block != b.block || a.phase == b.phase, "{what}: different phases");
                assert!(
                    a.kind == AccessKind::Write || b.kind == AccessKind::Write || (a.kind == AccessKind::Atomic) != (b.kind == AccessKind::Atomic),
                    "{what}: no write"
                );
                eprintln!("{what}: {}", describe_race(&t, r));
            }
            "barrier_divergence" => match &result {
                Err(err @ (InterpError::BarrierDivergence { line, .. } | InterpError::WarpDivergence { line, .. })) => {
                    assert_eq!(*line, Some(e.lines[0]), "{what}: {err}");
                    eprintln!("{what}: {err}");
                }
                other => panic!("{what}: expected divergence, got {other:?}"),
            },
            "out_of_bounds" => match &result {
                Err(err @ InterpError::OutOfBounds { access, region, region_size, .. }) => {
                    assert_eq!(access.line, Some(e.lines[0]), "{what}: {err}");
                    assert_eq!(access.space.name(), e.space.as_deref().unwrap(), "{what}: {err}");
                    if access.space == Space::Global {
                        assert_eq!(Some(region_size), sl.sizes.get(region), "{what}: {err}");
                    }
                    eprintln!("{what}: {err}");
                }
                other => panic!("{what}: expected out-of-bounds, got {other:?}"),
            },
            other => panic!("{what}: unknown verdict {other}"),
        }
        count += 1;
    }
    assert!(count >= 20, "only {count} buggy kernels");
}
