//! A check stopped by the process's memory ceiling is shown as `uncertified` but not cached:
//! the ceiling is shared by everything the process does, so the next analysis checks the kernel
//! again instead of serving the incomplete result. (Its own test binary: it moves the global
//! allocation count by hand, standing in for the `lark` binary's counting allocator.)

use ide::{AnalysisHost, FileKind, Settings, SourceFile};
use model::budget::{set_memory_ceiling, ALLOCATED};
use std::path::Path;
use std::sync::atomic::Ordering;

#[test]
fn a_check_stopped_at_the_memory_ceiling_is_not_cached() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let dir = std::env::temp_dir().join(format!("lark-ide-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(corpus.join("lark.toml"), dir.join("lark.toml")).unwrap();
    let path = dir.join("reduce_missing_sync.ptx");
    std::fs::copy(corpus.join("reduce_missing_sync.ptx"), &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let key = format!("file://{}", path.display());
    let mut host = AnalysisHost::new(Settings::default());

    // Over the ceiling: every budget stops at once.
    set_memory_ceiling(1 << 20);
    ALLOCATED.fetch_add(1 << 30, Ordering::Relaxed);
    host.set_file(SourceFile::new(key.clone(), Some(path.clone()), FileKind::Ptx, text.as_str().into(), 1));
    let fa = host.snapshot().analyse(&key).unwrap();
    let r = &fa.kernels[0].report;
    assert_eq!(r.verdict.as_str(), "uncertified", "{r:#?}");
    assert!(r.uncertified.iter().any(|u| matches!(u.reason, check::Reason::MemoryExhausted { .. })), "{r:#?}");
    let checks = host.stats().kernel_checks;

    // Memory is back: the same text is checked again, and the race is found.
    ALLOCATED.fetch_sub(1 << 30, Ordering::Relaxed);
    host.set_file(SourceFile::new(key.clone(), Some(path.clone()), FileKind::Ptx, text.as_str().into(), 2));
    let fa = host.snapshot().analyse(&key).unwrap();
    assert_eq!(host.stats().kernel_checks, checks + 1, "the stopped check was not served from the cache");
    assert_eq!(fa.kernels[0].report.verdict.as_str(), "race");
    set_memory_ceiling(0);
}
