//! PTX in nvcc's style: shared memory addressed through 32-bit registers (`mov.u32 %r, smem`),
//! `ld.global.nc`, no `.loc` (lines are PTX lines).

use check::{check_ptx, Context, FindingKind, LineKind, Options, Solver, Verdict};

#[test]
fn shared_memory_through_32_bit_addresses_is_checked() {
    let ptx = include_str!("fixtures/nvcc_shared32.ptx");
    let iface = spec::parse_lark_toml("lark.toml", "[kernel._Z6reducePKfPfi]\ngrid = [4, 1, 1]\nblock = [256, 1, 1]\n").unwrap();
    let cx = Context { interface: Some(&iface), cu_text: None, only: None };
    let mut solver = Solver::new();
    let report = check_ptx("nvcc_shared32.ptx", ptx, &cx, &Options::default(), &mut solver);
    let k = &report.kernels[0];
    // Thread 255 also reads smem[256], one past the array: that out-of-bounds read names the
    // verdict (what it reads is undefined), and the race is reported beside it.
    assert_eq!(k.verdict, Verdict::OutOfBounds, "{:#?}", k);
    assert_eq!(k.findings[0].kind, FindingKind::OutOfBounds);
    assert_eq!(k.findings[0].address.as_ref().unwrap().offset, 1024);
    let f = k.findings.iter().find(|f| f.kind == FindingKind::Race).expect("the race");
    assert_eq!(f.address.as_ref().unwrap().target, "smem");
    // Thread t reads smem[t+1] (PTX line 38) while thread t+1 writes it (line 37 or 40).
    let lines: Vec<u32> = f.accesses.iter().map(|a| a.location.line).collect();
    assert!(lines.contains(&38), "{lines:?}");
    assert!(f.accesses.iter().all(|a| a.location.line_kind == LineKind::Ptx));
    assert!(k.uncertified.is_empty(), "{:?}", k.uncertified);
}
