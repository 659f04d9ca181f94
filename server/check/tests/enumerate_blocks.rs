//! A declared launch is decided by enumeration, and blocks whose threads see the same values
//! are enumerated once per class (a row kernel on thousands of rows asked the same barrier
//! question of every block). A block that differs, here only the grid's last, keeps its own
//! class: its divergence is still found, in that block.

mod common;

use check::{FindingKind, Verdict};

const LAUNCH: &str = "[kernel.last_row_divergence]\ngrid = [4096, 1, 1]\nblock = [256, 1, 1]\n\
                      [kernel.last_row_divergence.params]\nin = { dtype = \"f32\", len = 1048576 }\n\
                      out = { dtype = \"f32\", len = 1048576 }\nrows = { value = 4096 }\n";

#[test]
fn the_one_block_that_diverges_is_found_among_thousands_alike() {
    let report = common::check(&common::fixtures(), "last_row_divergence", Some(LAUNCH));
    assert_eq!(report.verdict, Verdict::BarrierDivergence, "{:#?} {:#?}", report.findings, report.uncertified);
    let f = report.findings.iter().find(|f| f.kind == FindingKind::BarrierDivergence).expect("a divergence");
    assert_eq!(f.barrier.as_ref().map(|b| b.line), Some(9));
    assert!(f.threads.iter().all(|t| t.block == [4095, 0, 0]), "{:?}", f.threads);
}
