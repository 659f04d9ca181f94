//! Neovim (headless) as a real LSP client of `lark serve`: runs tests/nvim/run.sh and checks
//! what the editor saw. CI installs Neovim (scripts/install-deps.sh); without it this test fails.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
fn neovim_shows_the_race_a_hover_and_applies_the_barrier_fix() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let has_nvim = Command::new("nvim").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(has_nvim, "Neovim is not installed: `apt-get install -y neovim` (scripts/install-deps.sh does it); this test needs a real editor");
    let out = std::env::temp_dir().join(format!("lark-nvim-e2e-{}.json", std::process::id()));
    let run = Command::new("bash")
        .arg(repo.join("tests/nvim/run.sh"))
        .arg(&out)
        .env("LARK_BIN", env!("CARGO_BIN_EXE_lark"))
        .output()
        .expect("bash runs tests/nvim/run.sh");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "tests/nvim/run.sh failed ({:?})\nstdout:\n{stdout}\nstderr:\n{stderr}", run.status);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(r["ok"], true, "{r:#}");
    let race = r["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "race").unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!((race["lnum"].as_u64(), race["col"].as_u64(), race["end_col"].as_u64()), (Some(9), Some(6), Some(32)));
    assert_eq!(race["source"], "lark");
    assert!(race["message"].as_str().unwrap().starts_with("data race on shared s["), "{race}");
    let hover = r["hover"].as_str().unwrap();
    assert!(hover.contains("race") && hover.contains("the phase after the barrier at line 7") && hover.contains("write shared `s["), "{hover}");
    let lenses: Vec<&str> = r["lenses"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(lenses[0].starts_with("race · "), "{lenses:?}");
    assert!(r["actions"].as_array().unwrap().iter().any(|a| a.as_str().unwrap().contains("__syncthreads();")), "{r:#}");
    assert_eq!(r["fixed_line"], "    __syncthreads();");
    assert!(r["after_fix"].as_array().unwrap().iter().all(|d| d["code"] != "race"), "{r:#}");
}
