//! The scalar confirmation of a kernel opened with no interface: a finding whose counterexample
//! needs scalar values nobody declared, and that does not occur when those scalars take an
//! ordinary value, becomes a warning naming the values; one that does occur stays an error;
//! and values the interface declares are never second-guessed.

mod common;

use check::{FindingKind, Verdict};
use common::{check, fixtures};
use std::path::PathBuf;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

#[test]
fn overlapping_rows_under_undeclared_strides_are_a_warning_that_names_the_values() {
    let report = check(&fixtures(), "rows_scale_strided", None);
    let race = report.findings.iter().find(|f| f.kind == FindingKind::Race).expect("blocks' rows overlap when stride < n");
    let why = race.assumed_scalars.as_deref().expect("a warning: it needs undeclared scalar values");
    assert!(
        why.contains(
            "with n = 96 and the row strides stride = 1024 (every undeclared integer parameter at 96, strides apart) on a grid of 2 blocks along each dimension the kernel reads there is none"
        ),
        "{why}"
    );
    assert!(why.contains("stride="), "the message names the values that trigger it: {why}");
    assert!(race.launch.params["stride"] < race.launch.params["n"], "{:?}", race.launch.params);
    assert_eq!(report.verdict, Verdict::Uncertified, "a warning leaves the kernel open, never verified");
}

#[test]
fn declared_scalars_are_not_second_guessed() {
    // The interface says rows overlap: the race is the kernel's, an error.
    let overlapping = "[kernel.rows_scale_strided.params]\nn = { value = 256 }\nstride = { value = 100 }\n";
    let report = check(&fixtures(), "rows_scale_strided", Some(overlapping));
    let race = report.findings.iter().find(|f| f.kind == FindingKind::Race).expect("rows 100 apart overlap");
    assert!(race.assumed_scalars.is_none(), "{:?}", race.assumed_scalars);
    assert_eq!(report.verdict, Verdict::Race);
    // Rows as far apart as they are long: no race at all.
    let apart = "[kernel.rows_scale_strided]\ngrid = [64, 1, 1]\n[kernel.rows_scale_strided.params]\nn = { range = [1, 4096] }\nstride = { value = 4096 }\n";
    assert_eq!(check(&fixtures(), "rows_scale_strided", Some(apart)).verdict, Verdict::Verified);
}

#[test]
fn a_race_that_occurs_at_ordinary_sizes_stays_an_error() {
    // The shared accumulator races whatever n is, as long as two threads are in range.
    let report = check(&corpus(), "block_sum_shared_race", None);
    let race = report.findings.iter().find(|f| f.kind == FindingKind::Race && f.accesses.iter().all(|a| a.location.line == 7)).expect("the race at line 7");
    assert!(race.assumed_scalars.is_none(), "{:?}", race.assumed_scalars);
    assert_eq!(report.verdict, Verdict::Race);
}
