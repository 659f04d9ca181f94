//! The first look (`Analysis::first_look`): what it shows for a kernel with no `lark.toml`, and
//! that it leaves declared kernels, the cache and the verdict to the full analysis.

use ide::{AnalysisHost, FileKind, Settings, Severity, SourceFile};
use std::path::{Path, PathBuf};

/// A fixture copied into a folder of its own, with `lark.toml` when given.
fn folder(name: &str, fixture: &str, toml: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lark-ide-first-look-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(fixture), dir.join("k.cu")).unwrap();
    if let Some(t) = toml {
        std::fs::write(dir.join("lark.toml"), t).unwrap();
    }
    dir
}

fn host_with(dir: &Path, settings: Settings) -> (AnalysisHost, String) {
    let path = dir.join("k.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let key = format!("file://{}", path.display());
    let mut host = AnalysisHost::new(settings);
    host.set_file(SourceFile::new(key.clone(), Some(path), FileKind::Cu, text.into(), 1));
    (host, key)
}

#[test]
fn a_race_at_the_assumed_launch_is_a_preliminary_warning_until_the_full_check_makes_it_an_error() {
    let dir = folder("race", "no_setup_missing_sync.cu", None);
    let (host, key) = host_with(&dir, Settings::default());
    let an = host.snapshot();
    let look = an.first_look(&key).unwrap().expect("the kernel has no declared launch");
    let k = &look.kernels[0];
    let launch = k.first_look.as_ref().expect("checked at one launch");
    assert_eq!((launch.grid, launch.block), ([2, 1, 1], [256, 1, 1]));
    assert_ne!(k.report.verdict.as_str(), "verified");
    let diags = ide::diagnostics(&look);
    let race = diags.iter().find(|d| d.code == "race").expect("the race shows at 256 threads");
    assert_eq!(race.severity, Severity::Warning);
    assert!(
        race.message.ends_with("(at the launch LARK assumed for a first look: grid [2, 1, 1] block [256, 1, 1]; the full check is running)"),
        "{}",
        race.message
    );
    assert_eq!(race.data.as_ref().unwrap()["preliminary"], true);
    assert!(ide::region_diagnostics(&look, &|_| None).is_empty(), "a first look verifies nothing");
    assert_eq!(host.stats().kernel_checks, 0, "a first look is not a kernel check");

    let full = an.analyse(&key).unwrap();
    assert!(full.kernels[0].first_look.is_none());
    let race = ide::diagnostics(&full).into_iter().find(|d| d.code == "race").unwrap();
    assert_eq!(race.severity, Severity::Error);
    assert!(race.data.unwrap().get("preliminary").is_none());
    // Once the full result is cached, a first look has nothing of its own to show.
    assert!(host.snapshot().first_look(&key).unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_declared_launch_or_the_setting_off_means_no_first_look() {
    let dir = folder("declared", "no_setup_sized_shared.cu", Some("[kernel.block_sum]\ngrid = [4, 1, 1]\nblock = [256, 1, 1]\n"));
    let (host, key) = host_with(&dir, Settings::default());
    assert!(host.snapshot().first_look(&key).unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
    let dir = folder("off", "no_setup_sized_shared.cu", None);
    let (host, key) = host_with(&dir, Settings { first_look: false, ..Settings::default() });
    assert!(host.snapshot().first_look(&key).unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_launch_site_gives_the_first_look_its_block() {
    let dir = folder("site", "no_setup_launch_site.cu", None);
    let (host, key) = host_with(&dir, Settings::default());
    let look = host.snapshot().first_look(&key).unwrap().expect("a launch site is not a declaration");
    let launch = look.kernels[0].first_look.as_ref().unwrap();
    assert_eq!((launch.origin, launch.block), (ide::LaunchOrigin::LaunchSite, [128, 1, 1]));
    assert!(ide::diagnostics(&look).iter().all(|d| d.severity != Severity::Error), "{:#?}", ide::diagnostics(&look));
    let _ = std::fs::remove_dir_all(&dir);
}
