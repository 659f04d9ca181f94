//! A finding that needs a launch nobody declared is a warning with the quick fix "declare the
//! launch", which writes the interface stub into a new lark.toml; declaring a common launch then
//! makes the kernel verified.

use ide::{AnalysisHost, CancelToken, FileKind, Settings, Severity, SourceFile};
use std::path::Path;

#[test]
fn the_warning_offers_to_declare_the_launch_and_declaring_it_verifies_the_kernel() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/no_setup_sized_shared.cu");
    let dir = std::env::temp_dir().join(format!("lark-assumed-launch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("k.cu");
    std::fs::copy(&fixture, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let key = format!("file://{}", path.display());
    let mut host = AnalysisHost::new(Settings::default());
    host.set_file(SourceFile::new(key.clone(), Some(path.clone()), FileKind::Cu, text.as_str().into(), 1));
    let snapshot = host.snapshot();
    let fa = snapshot.analyse(&key).unwrap();
    assert_eq!(fa.kernels[0].report.verdict.as_str(), "uncertified");
    let diags = ide::diagnostics(&fa);
    let warning = diags.iter().find(|d| d.code == "out_of_bounds").expect("the finding is shown");
    assert_eq!(warning.severity, Severity::Warning);
    assert!(
        warning.message.contains("only under an assumed launch") && warning.message.contains("with 64 or 128 or 256 threads per block there is none"),
        "{}",
        warning.message
    );
    let fixes = snapshot.fixes(&fa, warning.range.clone(), &CancelToken::new());
    let declare = fixes
        .iter()
        .find(|f| f.title.starts_with("Declare the launch of `block_sum`"))
        .unwrap_or_else(|| panic!("{:?}", fixes.iter().map(|f| &f.title).collect::<Vec<_>>()));
    let edit = &declare.edits[0];
    assert!(edit.create && edit.path.as_deref() == Some(dir.join("lark.toml").as_path()), "{edit:?}");
    let stub = &edit.edits[0].new_text;
    assert!(stub.contains("[kernel.block_sum]") && stub.contains("block = [256, 1, 1]"), "{stub}");

    // The user declares the launch the stub proposes: the kernel is verified.
    std::fs::write(dir.join("lark.toml"), "[kernel.block_sum]\ngrid = [4, 1, 1]\nblock = [256, 1, 1]\n").unwrap();
    let mut host = AnalysisHost::new(Settings::default());
    host.set_file(SourceFile::new(key.clone(), Some(path.clone()), FileKind::Cu, text.as_str().into(), 1));
    let fa = host.snapshot().analyse(&key).unwrap();
    assert_eq!(fa.kernels[0].report.verdict.as_str(), "verified", "{:#?}", fa.kernels[0].report.findings);
    let _ = std::fs::remove_dir_all(&dir);
}
