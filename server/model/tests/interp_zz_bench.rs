use model::interp::*;
use std::time::Instant;
#[test]
fn bench() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus/dot_atomic.ptx")).unwrap();
    let p = ptx::parse(&text);
    let k = model::lower_module(&p.module).into_iter().next().unwrap().1.unwrap();
    let n = 1000000usize;
    let mut mem = Memory::new();
    let a: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let ia = mem.add_f32("a", &a); let ib = mem.add_f32("b", &a); let ir = mem.add_f32("r", &[0.0]);
    let l = Launch::new([80,1,1],[256,1,1], vec![Arg::Buffer(ia), Arg::Buffer(ib), Arg::Buffer(ir), Arg::i32(n as i32)]).only_blocks(vec![[0,0,0],[79,0,0]]);
    let s = Instant::now();
    let t = run(&k, &l, &mut mem).unwrap();
    eprintln!("run {:?} steps {}", s.elapsed(), t.steps);
    let s = Instant::now();
    let r = t.races();
    eprintln!("races {:?} {}", s.elapsed(), r.len());
}
#[test]
fn bench2() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus/dot_atomic.ptx")).unwrap();
    let p = ptx::parse(&text);
    let k = model::lower_module(&p.module).into_iter().next().unwrap().1.unwrap();
    let n = 1000000usize;
    let mut mem = Memory::new();
    let a: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let ia = mem.add_f32("a", &a); let ib = mem.add_f32("b", &a); let ir = mem.add_f32("r", &[0.0]);
    let l = Launch::new([80,1,1],[256,1,1], vec![Arg::Buffer(ia), Arg::Buffer(ib), Arg::Buffer(ir), Arg::i32(n as i32)]).only_blocks(vec![[0,0,0],[79,0,0]]);
    let t = run(&k, &l, &mut mem).unwrap();
    let mut m: std::collections::HashMap<(model::Space, u64), usize> = Default::default();
    for e in &t.accesses { for b in 0..e.bytes as u64 { *m.entry((e.space, e.addr + b)).or_default() += 1; } }
    let mut v: Vec<_> = m.values().copied().collect(); v.sort(); v.reverse();
    eprintln!("buckets {} top {:?}", m.len(), &v[..10]);
}
