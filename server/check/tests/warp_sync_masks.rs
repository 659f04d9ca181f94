//! `__syncwarp(mask)` orders the lanes its mask names, whatever the mask's spelling: a mask
//! computed from the block size (PyTorch's block reduction) is as good as the full immediate,
//! with the launch open (the solver) and declared (enumeration). Lanes that no common mask
//! names stay unordered: two halves of a warp syncing on their own masks still race.

mod common;

use check::{FindingKind, Verdict};

const LAUNCH: &str = "[kernel.syncwarp_computed_mask]\ngrid = [4, 1, 1]\nblock = [1024, 1, 1]\n\
                      [kernel.syncwarp_split_halves]\ngrid = [2, 1, 1]\nblock = [64, 1, 1]\n";

#[test]
fn a_warp_sync_with_a_computed_mask_orders_the_lanes_it_names() {
    for toml in [None, Some(LAUNCH)] {
        let report = common::check(&common::fixtures(), "syncwarp_computed_mask", toml);
        assert_eq!(report.verdict, Verdict::Verified, "launch {toml:?}: {:#?} {:#?}", report.findings, report.uncertified);
        assert!(report.findings.is_empty() && report.uncertified.is_empty(), "{:#?} {:#?}", report.findings, report.uncertified);
    }
}

#[test]
fn halves_of_a_warp_that_sync_on_their_own_masks_still_race() {
    for toml in [None, Some(LAUNCH)] {
        let report = common::check(&common::fixtures(), "syncwarp_split_halves", toml);
        assert_eq!(report.verdict, Verdict::Race, "launch {toml:?}: {:#?} {:#?}", report.findings, report.uncertified);
        let race = report.findings.iter().find(|f| f.kind == FindingKind::Race).expect("a race");
        let mut lines: Vec<u32> = race.accesses.iter().map(|a| a.location.line).collect();
        lines.sort_unstable();
        assert_eq!(lines, vec![8, 10]);
    }
}

const HALVES: &str = "[kernel.shuffle_outside_mask]\ngrid = [2, 1, 1]\nblock = [64, 1, 1]\n\
                      [kernel.shuffle_own_half_mask]\ngrid = [2, 1, 1]\nblock = [64, 1, 1]\n";

/// A lane that runs a warp collective its own mask does not name (undefined in the PTX ISA) is
/// a divergence at the collective, with the launch open and declared; the fix, a mask per half
/// warp, is verified.
#[test]
fn a_lane_that_runs_a_shuffle_outside_its_mask_is_a_divergence() {
    for toml in [None, Some(HALVES)] {
        let report = common::check(&common::fixtures(), "shuffle_outside_mask", toml);
        assert_eq!(report.verdict, Verdict::BarrierDivergence, "launch {toml:?}: {:#?} {:#?}", report.findings, report.uncertified);
        let f = report.findings.iter().find(|f| f.kind == FindingKind::BarrierDivergence).expect("a divergence");
        assert_eq!(f.barrier.as_ref().map(|b| b.line), Some(7));
        match &f.divergence {
            Some(check::Divergence::OutsideMask { mask, lane, .. }) => {
                assert_eq!(*mask, 0x0000_ffff);
                assert!(*lane >= 16, "lane {lane} is in the mask");
            }
            other => panic!("expected a lane outside its mask, got {other:?}"),
        }
        let fixed = common::check(&common::fixtures(), "shuffle_own_half_mask", toml);
        assert_eq!(fixed.verdict, Verdict::Verified, "launch {toml:?}: {:#?} {:#?}", fixed.findings, fixed.uncertified);
    }
}
