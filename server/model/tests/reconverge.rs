//! Path conditions where branches reconverge: after a short-circuit `||` on a loaded value, the
//! code that follows runs under the condition the branches split, not under a disjunction that
//! mentions the loaded value (which made the enumerator decline and the solver carry it).

use model::expr::Sym;
use model::symbolic::{lift, AccessKind};
use model::Kernel;

fn kernel(body: &str) -> Kernel {
    let text = format!(".version 7.0\n.target sm_80\n.address_size 64\n{body}");
    let parsed = ptx::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let mut ks = model::lower_module(&parsed.module);
    ks.pop().unwrap().1.unwrap_or_else(|e| panic!("{}", e.message))
}

/// `v = x[tid]; if (v > 0 || v < -1) v = 0; x[tid] = v; if (tid < n) return-early-store`: the
/// first store runs for every thread; `early` adds a guarded exit before the join.
fn short_circuit(early_exit: bool) -> Kernel {
    let exit = if early_exit { "\tsetp.ge.u32 %p3, %r1, 7;\n\t@%p3 bra $L_end;\n" } else { "" };
    kernel(&format!(
        ".visible .entry k(.param .u64 k_param_0)\n{{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<4>;\n\t.reg .f32 %f<3>;\n\t.reg .b64 %rd<6>;\n\
         \tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, %tid.x;\n\
         \tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tld.global.f32 %f1, [%rd4];\n\
         \tsetp.gt.f32 %p1, %f1, 0f00000000;\n\t@%p1 bra $L_then;\n{exit}\
         \tsetp.lt.f32 %p2, %f1, 0fBF800000;\n\t@!%p2 bra $L_join;\n$L_then:\n\tmov.f32 %f1, 0f00000000;\n\
         $L_join:\n\tst.global.f32 [%rd4], %f1;\n$L_end:\n\tret;\n}}\n"
    ))
}

fn store_condition_mentions_a_loaded_value(k: &Kernel) -> bool {
    let l = lift(k);
    let store = l.accesses.iter().find(|a| a.kind == AccessKind::Write).expect("the store");
    l.exprs.symbols(store.pc).iter().any(|s| matches!(s, Sym::Value { .. }))
}

#[test]
fn the_join_of_a_short_circuit_or_runs_under_the_split_condition() {
    assert!(!store_condition_mentions_a_loaded_value(&short_circuit(false)));
}

#[test]
fn an_exit_on_one_path_keeps_the_exact_condition() {
    // Some threads leave between the split and the join, on a path that depends on the loaded
    // value: the join does not post-dominate the split, and the condition stays exact.
    assert!(store_condition_mentions_a_loaded_value(&short_circuit(true)));
}
