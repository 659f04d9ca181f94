//! `lean/LarkTest/Conformance.lean` is generated from `model::ops`; it must match the Rust
//! functions of today (`UPDATE_EXPECT=1 cargo test -p lean --test conformance` regenerates it).
//! Where Lean is installed, `tests/lean_build.rs` checks every example with `lake build LarkTest`.

use expect_test::expect_file;

#[test]
fn conformance_module_is_up_to_date() {
    expect_file!["../../../lean/LarkTest/Conformance.lean"].assert_eq(&lean::emit::conformance::conformance_module());
}

#[test]
fn conformance_covers_every_operator_at_every_width() {
    let text = lean::emit::conformance::conformance_module();
    for op in ["add", "mulHiS", "divS", "remS", "aShr", "maxS"] {
        assert!(text.contains(&format!("evalBin BinOp.{op} (BitVec.ofNat 64")), "{op}");
    }
    for op in ["popc", "clz", "brev", "absS"] {
        assert!(text.contains(&format!("evalUn UnOp.{op} (BitVec.ofNat 8")), "{op}");
    }
    // Division by zero follows SMT-LIB: all ones.
    assert!(text.contains("example : evalBin BinOp.divU (BitVec.ofNat 32 0x7) (BitVec.ofNat 32 0x0) = (BitVec.ofNat 32 0xffffffff) := by decide"));
}
