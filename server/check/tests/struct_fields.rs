//! `check_ptx` with the kernel's `.cu` at hand places fields of a struct passed by value that
//! `lark.toml` names (`p.ncols`) at their byte offsets, as `lark check` does; a name the struct
//! lacks is a note that says so, and the check goes on without it.

use check::{check_ptx, Context, Note, Options, Solver, Verdict};
use std::path::PathBuf;

const KERNEL: &str = "_ZL12soft_max_f32ILb1ELi0ELi0EDF16_EvPKfPKT2_S1_Pf15soft_max_params";

fn real() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/real")
}

fn check_with_fields(fields: &str) -> check::KernelReport {
    let ptx = std::fs::read_to_string(real().join("ggml_soft_max.ptx")).unwrap();
    let cu = std::fs::read_to_string(real().join("ggml_soft_max.cu")).unwrap();
    let toml = format!(
        "[kernel.{KERNEL}]\ngrid = [64, 32, 1]\nblock = [1024, 1, 1]\ndynamic_shared_bytes = 4224\n[kernel.{KERNEL}.params]\n\
         x = {{ dtype = \"f32\", len = 2097152 }}\nmask = {{ dtype = \"f16\", len = 65536 }}\nsinks = {{ dtype = \"f32\", len = 32 }}\n\
         dst = {{ dtype = \"f32\", len = 2097152 }}\n{fields}"
    );
    let iface = spec::parse_lark_toml("lark.toml", &toml).unwrap();
    let cx = Context { interface: Some(&iface), cu_text: Some(&cu), only: Some(KERNEL) };
    let mut solver = Solver::new();
    check_ptx("ggml_soft_max.ptx", &ptx, &cx, &Options::default(), &mut solver).kernels.remove(0)
}

#[test]
fn named_fields_are_placed_by_the_struct_in_the_cu() {
    let fields = "p.ncols = { value = 1024 }\np.n_head_log2 = { value = 32 }\np.ne12 = { value = 1 }\np.ne13 = { value = 1 }\n\
                  p.nb11 = { value = 2048 }\np.nb12 = { value = 131072 }\np.nb13 = { value = 131072 }\np.max_bias = { value = 0.0 }\n";
    let report = check_with_fields(fields);
    assert_eq!(report.verdict, Verdict::Verified, "{report:#?}");
    assert!(report.notes.iter().all(|n| !matches!(n, Note::UnresolvedField { .. })), "{:?}", report.notes);
}

#[test]
fn a_name_the_struct_lacks_is_a_note() {
    let report = check_with_fields("p.num_cols = { value = 1024 }\n");
    let why = report
        .notes
        .iter()
        .find_map(|n| match n {
            Note::UnresolvedField { why, .. } => Some(why.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{:?}", report.notes));
    assert!(why.contains("`num_cols` is not a field of `p`"), "{why}");
    assert_ne!(report.verdict, Verdict::Verified, "without its fields the kernel is not verified");
}
