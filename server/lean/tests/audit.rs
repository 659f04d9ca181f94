//! The proof audit against adversarial proofs: each rejection, the forms that hide forbidden
//! words (escaped identifiers, interpolated strings, comments that end early), the accepted
//! cases, the statement pin, and `#print axioms`.

use lean::audit::{audit_proof, check_axioms, sha256_hex, AuditError, Pinned, Policy, Rule};
use lean::library::LibraryIndex;

fn policy() -> Policy {
    Policy::for_library(&LibraryIndex::load(&lean::library_dir()).unwrap_or_else(|e| panic!("{e}")))
}

/// The rules a proof breaks, in order of appearance.
fn rules(proof: &str) -> Vec<Rule> {
    audit_proof(proof, &policy()).into_iter().map(|f| f.rule).collect()
}

fn messages(proof: &str) -> Vec<String> {
    audit_proof(proof, &policy()).into_iter().map(|f| f.message).collect()
}

#[test]
fn accepts_ordinary_proofs() {
    let proofs = [
        "by simp",
        "by\n  intro h\n  cases h with\n  | inl a => exact a\n  | inr b => omega",
        "fun x => rfl",
        "by decide",
        "by decide +kernel",
        "by grind",
        "by\n  -- sorry would be wrong here, but this is a comment\n  /- admit /- nested -/ axiom -/\n  exact Nat.le_refl _",
        "by simp [Lark.update_apply, show (\"sorry\" : String) = \"sorry\" from rfl]",
        "by set_option maxHeartbeats 0 in omega",
        "by set_option maxRecDepth 2000 in simp",
        "by set_option trace.Meta.Tactic.simp true in simp",
        "by open Lark in exact runThread_frame env fuel",
        "by open Nat (succ_le_succ) in exact succ_le_succ h",
        "by exact (Lark.phase_order_independent env fuel h ts m hd hc)",
        "#[1, 2].size.le_refl",
        "by exact h'.1",
    ];
    for p in proofs {
        assert!(audit_proof(p, &policy()).is_empty(), "{p:?}: {:?}", messages(p));
    }
}

#[test]
fn rejects_sorry_in_every_disguise() {
    assert_eq!(rules("sorry"), [Rule::Sorry]);
    assert_eq!(rules("by admit"), [Rule::Sorry]);
    assert_eq!(rules("by exact «sorry»"), [Rule::Sorry]);
    assert_eq!(rules("by exact sorryAx _ false"), [Rule::Sorry]);
    assert_eq!(rules("by exact Lean.«sorryAx» _ false"), [Rule::Sorry]);
    assert_eq!(rules("by\n  constructor\n  stop\n  simp"), [Rule::Sorry]);
    // Code inside an interpolated string's braces is code, even after a `"}"` in the braces.
    assert_eq!(rules(r#"by exact (s!"{sorry}").length"#), [Rule::Sorry]);
    assert_eq!(rules(r#"by exact (s!"{ "}" ++ toString sorry }").length"#), [Rule::Sorry]);
    // A comment that closes early does not hide what follows.
    assert_eq!(rules("by /- a -/ sorry -/"), [Rule::Sorry]);
    assert_eq!(rules("by -- fine\n exact sorry"), [Rule::Sorry]);
    assert_eq!(messages("sorry"), ["`sorry` is not a proof"]);
}

#[test]
fn rejects_axioms_and_trusted_evaluation() {
    assert_eq!(rules("by exact h\naxiom cheat : False"), [Rule::Axiom]);
    assert_eq!(rules("by native_decide"), [Rule::NativeEvaluation]);
    assert_eq!(rules("by decide +native"), [Rule::NativeEvaluation]);
    assert_eq!(rules("by decide (config := { native := true })"), [Rule::NativeEvaluation]);
    assert_eq!(rules("by bv_decide"), [Rule::NativeEvaluation]);
    assert_eq!(rules("Lean.ofReduceBool _ _ rfl"), [Rule::NativeEvaluation]);
    assert_eq!(messages("by native_decide"), ["`native_decide` trusts the compiler (`Lean.ofReduceBool`)"]);
}

#[test]
fn rejects_compiler_directives_unsafe_and_metaprogramming() {
    assert_eq!(rules("by exact h\n@[implemented_by f] def g := 1"), [Rule::Attribute, Rule::CompilerDirective, Rule::Command]);
    assert_eq!(rules("by exact h\n@[extern \"c\"] opaque g : Nat"), [Rule::Attribute, Rule::CompilerDirective, Rule::Command]);
    assert_eq!(rules("by exact h\nunsafe def g := 1"), [Rule::Unsafe, Rule::Command]);
    assert_eq!(rules("by exact h\nmacro \"win\" : tactic => `(tactic| sorry)"), [Rule::Metaprogramming, Rule::Metaprogramming, Rule::Sorry]);
    assert_eq!(rules("by exact h\nmacro_rules | `(tactic| trivial) => `(tactic| rfl)"), [Rule::Metaprogramming, Rule::Metaprogramming, Rule::Metaprogramming]);
    assert_eq!(rules("by exact h\nelab \"x\" : tactic => pure ()"), [Rule::Metaprogramming]);
    assert_eq!(rules("by exact h\nsyntax \"x\" : term"), [Rule::Metaprogramming]);
    assert_eq!(rules("by exact h\nnotation \"⊤\" => True"), [Rule::Metaprogramming]);
    assert_eq!(rules("by run_tac Lean.Elab.Tactic.evalTactic (← `(tactic| rfl))"), [Rule::Metaprogramming, Rule::Metaprogramming]);
}

#[test]
fn rejects_commands_attributes_and_redefinitions() {
    assert_eq!(rules("by exact h\n#eval IO.println \"x\""), [Rule::Command]);
    assert_eq!(rules("by exact h\n#print axioms foo"), [Rule::Command]);
    assert_eq!(rules("by exact h\n#exit"), [Rule::Command]);
    assert_eq!(rules("by exact h\nrun_cmd pure ()"), [Rule::Metaprogramming]);
    assert_eq!(rules("by exact h\nattribute [simp] Lark.update"), [Rule::Attribute]);
    assert_eq!(rules("by exact h\nattribute [-simp] Nat.add_comm"), [Rule::Attribute]);
    assert_eq!(rules("by exact h\ntheorem extra : True := trivial"), [Rule::Command]);
    assert_eq!(rules("by exact h\ndef runKernel := 0"), [Rule::Redefinition]);
    assert_eq!(messages("by exact h\ndef runKernel := 0"), ["`def runKernel` redefines a library name"]);
    assert_eq!(rules("by exact h\nend Lark"), [Rule::Command]);
    assert_eq!(rules("by exact h\nnamespace Lark"), [Rule::Command]);
    assert_eq!(rules("by exact h\ninstance : Inhabited Nat := ⟨0⟩"), [Rule::Command]);
}

#[test]
fn rejects_weakening_options_and_accepts_resource_ones() {
    assert_eq!(rules("by set_option debug.skipKernelTC true in exact h"), [Rule::Option]);
    assert_eq!(rules("by exact h\nset_option debug.skipKernelTC true"), [Rule::Option]);
    assert_eq!(rules("by set_option backward.isDefEq.lazyWhnfCore false in exact h"), [Rule::Option]);
    // A resource option without `in` is a command after the proof.
    assert_eq!(rules("by exact h\nset_option maxHeartbeats 0"), [Rule::Command]);
    assert_eq!(messages("by set_option debug.skipKernelTC true in exact h"), ["`set_option debug.skipKernelTC` is not allowed in a proof"]);
}

#[test]
fn rejects_open_tricks() {
    assert_eq!(rules("by open Evil in exact h"), [Rule::Open]);
    assert_eq!(rules("by open Nat renaming add_comm → runKernel in exact h"), [Rule::Open]);
    assert_eq!(rules("by open Lark hiding runKernel in exact h"), [Rule::Open]);
    assert_eq!(rules("by exact h\nopen Lark"), [Rule::Command]);
    assert_eq!(messages("by open Evil in exact h"), ["`open Evil` is not allowed in a proof (only library and core namespaces)"]);
}

#[test]
fn rejects_unterminated_text() {
    for p in ["by exact h /- unterminated", "by exact \"unterminated", "by exact s!\"{ unterminated\"", "by exact «unterminated"] {
        let r = rules(p);
        assert!(!r.is_empty() && r.iter().all(|x| *x == Rule::Lexical), "{p:?}: {r:?}");
    }
}

const STATEMENT: &str = "import Lark\n\ntheorem lark_obligation_0 : (1 : Nat) + 1 = 2 :=";

#[test]
fn the_statement_is_pinned_by_its_hash_and_prefix() {
    let pinned = Pinned::new(STATEMENT);
    assert_eq!(pinned.hash(), sha256_hex(STATEMENT));
    assert_eq!(pinned.hash().len(), 64);
    let file = format!("{STATEMENT}\n  by decide\n");
    assert_eq!(pinned.audit_file(&file, &policy()).unwrap(), "\n  by decide\n");
    // Restored from storage with its hash.
    assert!(Pinned::with_hash(STATEMENT, pinned.hash()).is_ok());
    let changed = STATEMENT.replace("= 2", "= 3");
    match Pinned::with_hash(changed.clone(), pinned.hash()) {
        Err(AuditError::StatementChanged { expected, found }) => assert!(expected == pinned.hash() && found == sha256_hex(&changed)),
        other => panic!("{other:?}"),
    }
    // A file whose statement differs from the pinned one.
    let tampered = format!("{changed}\n  by decide\n");
    match pinned.audit_file(&tampered, &policy()) {
        Err(AuditError::PrefixChanged { at }) => assert_eq!(at, STATEMENT.find("= 2").unwrap() + 2),
        other => panic!("{other:?}"),
    }
    // A proof that is rejected inside a pinned file.
    match pinned.audit_file(&format!("{STATEMENT} sorry"), &policy()) {
        Err(AuditError::Rejected { findings }) => {
            assert_eq!(findings.len(), 1);
            assert_eq!(findings[0].span.start, STATEMENT.len() + 1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_proof_cannot_change_how_the_statement_reads() {
    // The statement ends inside an identifier: the proof would extend it.
    let pinned = Pinned::new("theorem t : True := tri");
    match pinned.audit_file("theorem t : True := trivial", &policy()) {
        Err(AuditError::Rejected { findings }) => assert_eq!(findings[0].rule, Rule::Lexical),
        other => panic!("{other:?}"),
    }
    // A statement that leaves a comment open is refused outright.
    let open = Pinned::new("theorem t : True := /- ");
    assert!(matches!(open.audit_file("theorem t : True := /- -/ trivial", &policy()), Err(AuditError::BadStatement { .. })));
}

#[test]
fn print_axioms_accepts_only_the_three_standard_axioms() {
    let ok = "T.lean:5:0: info: 'lark_obligation_0' depends on axioms: [propext, Classical.choice, Quot.sound]\n";
    assert_eq!(check_axioms(ok, "lark_obligation_0").unwrap(), ["propext", "Classical.choice", "Quot.sound"]);
    let none = "'lark_obligation_0' does not depend on any axioms\n";
    assert!(check_axioms(none, "lark_obligation_0").unwrap().is_empty());
    let multiline = "'t' depends on axioms:\n[propext,\n Quot.sound]\n";
    assert_eq!(check_axioms(multiline, "t").unwrap(), ["propext", "Quot.sound"]);
    let sorry = "'t' depends on axioms: [propext, sorryAx]";
    match check_axioms(sorry, "t") {
        Err(AuditError::DisallowedAxioms { axioms, .. }) => assert_eq!(axioms, ["sorryAx"]),
        other => panic!("{other:?}"),
    }
    let native = "'t' depends on axioms: [Lean.ofReduceBool, Lean.trustCompiler, propext]";
    match check_axioms(native, "t") {
        Err(e @ AuditError::DisallowedAxioms { .. }) => {
            assert_eq!(e.to_string(), "`t` depends on axioms outside propext, Quot.sound, Classical.choice: Lean.ofReduceBool, Lean.trustCompiler")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(check_axioms("unrelated output", "t"), Err(AuditError::NoAxiomReport { .. })));
    // Another theorem's report does not count.
    assert!(matches!(check_axioms("'t2' does not depend on any axioms", "t"), Err(AuditError::NoAxiomReport { .. })));
}
