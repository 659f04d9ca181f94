//! The row-major index lemma on a kernel opened with no lark.toml (every launch and size
//! open): two threads writing `row * ne0 + i0` with `0 <= i0 < ne0` name the same element only
//! for the same row and column, a fact the solver cannot find for itself once `ne0` is a
//! parameter. The column here is a global y index (`2 * (blockDim.y * blockIdx.y +
//! threadIdx.y)`, ggml's rope): its block start `blockDim.y * blockIdx.y` is a product too.

mod common;

use check::{FindingKind, Note, Verdict};

#[test]
fn a_row_of_columns_indexed_by_a_global_y_index_is_race_free_for_every_launch() {
    // The lemma's query is decided in about half a second (the query without the products, which
    // has a quarter of the query's time); under the load of the parallel test run that went past
    // the default's 500 ms, so the test gives queries 8 s. Without the lemma, z3 does not
    // decide the race question within those 8 s either.
    let opts = check::Options { timeout_ms: Some(8000), ..Default::default() };
    let report = common::check_with(&common::fixtures(), "rows_2d_copy", None, &opts);
    assert_eq!(report.verdict, Verdict::Verified, "findings {:?}, undecided {:?}", report.findings, report.uncertified);
    assert!(report.findings.iter().all(|f| f.kind != FindingKind::Race));
    // Decided by the lemma (the report names the no-wrap assumption), not by a timeout.
    assert!(report.notes.contains(&Note::IndexNoWrap), "{:?}", report.notes);
}
