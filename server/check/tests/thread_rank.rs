//! Kernels indexed by `thread_rank()` in a block of any shape, checked with no interface: the
//! warp collectives of the first warp are proved convergent and the block's slots apart (with
//! the ranks as free values, see `check::thread_rank`), and a collective half a warp reaches is
//! still found. Before the thread-rank abstraction, the correct kernel's store at line 15 timed
//! out (uncertified) and each shuffle took seconds to prove.

mod common;

use check::{FindingKind, Verdict};

fn lines(f: &check::Finding) -> Vec<u32> {
    let mut l: Vec<u32> = f.accesses.iter().map(|a| a.location.line).chain(f.barrier.iter().map(|b| b.line)).collect();
    l.sort_unstable();
    l.dedup();
    l
}

#[test]
fn a_block_sum_by_thread_rank_in_a_block_of_any_shape_is_verified() {
    let report = common::check(&common::fixtures(), "rank_shuffle_3d", None);
    assert_eq!(report.verdict, Verdict::Verified, "{:#?} {:#?}", report.findings, report.uncertified);
    assert!(report.findings.is_empty() && report.uncertified.is_empty(), "{:#?} {:#?}", report.findings, report.uncertified);
}

#[test]
fn shuffles_that_half_a_warp_reaches_are_a_divergence_at_any_block_shape() {
    let report = common::check(&common::fixtures(), "rank_shuffle_3d_half_warp", None);
    assert_eq!(report.verdict, Verdict::BarrierDivergence, "{:#?} {:#?}", report.findings, report.uncertified);
    let divergence = report.findings.iter().find(|f| f.kind == FindingKind::BarrierDivergence).expect("the shuffle at line 14");
    assert_eq!(lines(divergence), vec![14]);
    assert!(!divergence.is_warning(), "an error at every launch: {:?}", divergence.assumed_launch);
}
