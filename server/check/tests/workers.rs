//! A check's report does not depend on how many workers answer its questions: a worker out of
//! checks of its own starts the questions the others post (see the engine's `prefetch`), and
//! each query is answered once for all of them, so the answers are the same, only earlier.

mod common;

use check::{KernelReport, Options};
use std::path::PathBuf;

/// What a report says, without its timings and counters (which do depend on the workers).
fn said(r: &KernelReport) -> String {
    let findings = serde_json::to_string_pretty(&r.findings).unwrap();
    let uncertified = serde_json::to_string_pretty(&r.uncertified).unwrap();
    format!("{:?}\n{findings}\n{uncertified}", r.verdict)
}

/// Kernels opened with no setup, whose questions have probes and index abstractions to ask
/// first, so that questions are posted: ggml's quantize, whose one hard race question (line
/// 39 against itself: far out of time under every solver, `uncertified`) is started by a
/// worker out of checks while the probes run, and llm.c's block softmax, a race found through
/// its probe. (llm.c's causal softmax was the first: its hard question takes Yices about 1.8 s
/// of its 2 s, so whether it is answered depends on the run, not on the workers.)
#[test]
fn one_worker_and_four_say_the_same() {
    let real = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/real");
    for (stem, name) in [("ggml_quantize_q8_1", "_ZL13quantize_q8_1PKfPvxxxxxjj"), ("llmc_softmax_fwd_block", "llmc_softmax_fwd_block")] {
        let alone = common::check_kernel_in(&real, stem, name, None, &Options { jobs: 1, ..Options::default() });
        let four = common::check_kernel_in(&real, stem, name, None, &Options { jobs: 4, ..Options::default() });
        assert_eq!(said(&alone), said(&four), "{name}");
    }
}
