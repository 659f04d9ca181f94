//! The launch confirmation of a kernel opened with no interface: a finding that also occurs
//! at the common block sizes stays an error; one that does not becomes a warning naming the
//! launch it needs. The confirmation asks only about the findings' own lines (a focused check),
//! so this pins that its answers are those of the whole check.

mod common;

use check::{check_kernel_scoped, FindingKind, Options, Solver, Sources};
use std::path::PathBuf;

fn corpus(file: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    std::fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn findings_at_an_undeclared_launch_are_confirmed_at_the_common_blocks() {
    let text = corpus("blur_early_return.ptx");
    let cu = corpus("blur_early_return.cu");
    let parsed = ptx::parse(&text);
    let index = ptx::LineIndex::new(&text);
    let map = ptx::SourceMap::new(&parsed.module);
    let (_, lowered) = model::lower_module(&parsed.module).into_iter().find(|(n, _)| *n == "blur_early_return").unwrap();
    let k = lowered.unwrap();
    let cu_file = k.main_file.and_then(|f| map.file_name(ptx::SourceLoc { file: f, line: 1, col: 0 })).map(str::to_string);
    let src = Sources { ptx: &text, index: &index, cu_file, param_names: spec::cu_param_names(&cu, "blur_early_return"), field_names: Default::default() };
    let mut solver = Solver::new();
    let report = check_kernel_scoped(&k, None, &src, &Options::default(), &mut solver);
    let lines = |f: &check::Finding| {
        let mut l: Vec<u32> = f.accesses.iter().map(|a| a.location.line).chain(f.barrier.iter().map(|b| b.line)).collect();
        l.sort_unstable();
        l.dedup();
        l
    };
    // The early return skips the barrier whatever the block: an error.
    let divergence = report.findings.iter().find(|f| f.kind == FindingKind::BarrierDivergence).expect("the divergence at line 11");
    assert_eq!(lines(divergence), vec![11]);
    assert!(divergence.assumed_launch.is_none(), "{:?}", divergence.assumed_launch);
    // The halo is written by thread BS - 1 = 255: with more than 256 threads the tile overflows
    // and other threads write the halo; with 64, 128 or 256 threads there is no such bug.
    let race = report.findings.iter().find(|f| f.kind == FindingKind::Race && lines(f) == vec![8, 10]).expect("the race between lines 8 and 10");
    let assumed = race.assumed_launch.as_deref().expect("a warning under the assumed launch");
    assert!(assumed.contains("with 64 or 128 or 256 threads per block there is none"), "{assumed}");
    let oob = report.findings.iter().find(|f| f.kind == FindingKind::OutOfBounds && lines(f) == vec![8]).expect("the overflow at line 8");
    assert!(oob.assumed_launch.is_some());
}

#[test]
fn a_warp_per_row_kernel_is_confirmed_at_its_32x4_tile() {
    // Rows of neighbouring blocks overlap for taller blocks (16x16, 32x8, 8x8), and the eight
    // warps of a 256x1 block add to one row; at 32x4, the layout it is written for, no race.
    // Before 32x4 was a common tile, this kernel had an error with no setup.
    let report = common::check(&common::fixtures(), "warp_rows_32x4", None);
    let race = report.findings.iter().find(|f| f.kind == FindingKind::Race).expect("rows overlap for some block");
    let assumed = race.assumed_launch.as_deref().expect("a warning: 32x4 is a common launch where it does not occur");
    assert!(assumed.contains("with 32x4 threads per block there is none"), "{assumed}");
    assert!(report.findings.iter().all(|f| f.is_warning()), "{:#?}", report.findings);
    // The witness: a race that needs more than one warp per block, found with small values
    // first (the replay runs every iteration of the loop over `n`).
    assert!(race.launch.block[0] * race.launch.block[1] > 32, "{:?}", race.launch);
    assert!(race.launch.params.values().all(|&v| v <= 128), "parameters up to 128 first: {:?}", race.launch.params);
    for a in &race.accesses {
        assert!(a.iterations.values().all(|&i| i <= 15), "iterations below 16 first: {:?}", a.iterations);
    }
}
