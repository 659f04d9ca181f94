//! Bounds of loop registers the lifter cannot follow (a binary search's `lo` and `hi` move by
//! data-dependent amounts), proved by induction before the questions are asked: a correct
//! search is verified, and a search whose upper end is one too far is still an error.

mod common;

use check::{FindingKind, Verdict};

/// Both kernels' interface: one block of 64 threads, `n = 64` buckets (`prefix` has 65
/// entries), 256 items.
fn interface(kernel: &str) -> String {
    format!(
        r#"
[kernel.{kernel}]
grid = [1, 1, 1]
block = [64, 1, 1]
[kernel.{kernel}.params]
offsets = {{ dtype = "i32", len = 65 }}
bucket = {{ dtype = "i32", len = 256 }}
n = {{ value = 64 }}
items = {{ value = 256 }}
"#
    )
}

/// `0 <= lo < hi <= n` holds at every iteration of the search, so `prefix[mid]` stays within
/// its 65 entries. Without the proved bounds `lo` and `hi` were any values, and the read was a
/// possible out-of-bounds access that no replay showed: `uncertified`.
#[test]
fn a_binary_search_over_a_prefix_array_is_verified() {
    let report = common::check(&common::fixtures(), "bucket_search", Some(&interface("bucket_search")));
    assert_eq!(report.verdict, Verdict::Verified, "{:#?} {:#?}", report.findings, report.uncertified);
    assert!(report.uncertified.is_empty(), "{:#?}", report.uncertified);
}

/// With `hi = n + 1` the bounds that hold are `lo < hi <= n + 1`, and the last probe reads
/// `prefix[65]`: the invariants must not hide it.
#[test]
fn a_binary_search_one_past_the_array_is_still_out_of_bounds() {
    let report = common::check(&common::fixtures(), "bucket_search_overrun", Some(&interface("bucket_search_overrun")));
    assert_eq!(report.verdict, Verdict::OutOfBounds, "{:#?} {:#?}", report.findings, report.uncertified);
    let oob = report.findings.iter().find(|f| f.kind == FindingKind::OutOfBounds).expect("the overrun");
    assert_eq!(oob.accesses[0].location.line, 12, "{oob:#?}");
    assert!(!oob.is_warning(), "a declared launch and declared scalars: an error, {oob:#?}");
}
