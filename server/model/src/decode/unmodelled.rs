//! The instructions the model deliberately does not describe, each with the reason a user sees
//! in the uncertified region it becomes ("unsupported is never pass").

/// Why `i` is not modelled, if it is one of the instructions left out on purpose.
pub(super) fn reason(i: &ptx::Instruction) -> Option<String> {
    let m = |x: &str| i.has_modifier(x);
    Some(match i.opcode.as_str() {
        "cp" if m(".async") && (m(".bulk") || i.modifiers.iter().any(|x| x.starts_with(".tensor"))) => {
            "bulk and tensor copies (TMA) move memory asynchronously and complete through an `mbarrier` transaction count, which the phase model does not describe".into()
        }
        "cp" if m(".async") && (m(".wait_group") || m(".wait_all") || m(".commit_group")) => {
            "waits for asynchronous copies (`cp.async`), which are not modelled; the copies it waits for are reported where they are issued".into()
        }
        "cp" if m(".async") => "`cp.async` copies global memory to shared memory in the background; the copy lands at a later `cp.async.wait_group`/`wait_all` or `mbarrier` completion, an ordering the phase model (block-wide `bar.sync` barriers only) does not describe".into(),
        "cp" if m(".reduce") => "asynchronous bulk reductions (`cp.reduce.async.bulk`) are not modelled".into(),
        "mbarrier" => "`mbarrier` objects (split arrive/wait barriers in shared memory, with transaction counts and phases) are not modelled; the phase model has block-wide `bar.sync` barriers only".into(),
        "ldmatrix" | "stmatrix" | "movmatrix" => format!("`{}` moves matrix fragments spread across the registers of a whole warp; warp-wide matrix operations are not modelled", i.opcode),
        "mma" | "wmma" => "tensor-core matrix multiply-accumulate: its operands are fragments spread across the lanes of a warp, which the per-thread model does not describe".into(),
        "wgmma" => "warpgroup matrix multiply (`wgmma`) reads shared memory asynchronously through matrix descriptors and completes at `wgmma.wait_group`; not modelled".into(),
        "tcgen05" => "fifth-generation tensor-core operations (`tcgen05`, tensor memory) are not modelled".into(),
        "tensormap" => "tensor-map (TMA descriptor) updates are not modelled".into(),
        "elect" => "`elect.sync` picks one leader lane by a hardware rule; not modelled".into(),
        "match" => "`match.sync` (the lanes holding equal values) is not modelled".into(),
        "tex" | "tld4" | "txq" | "suld" | "sust" | "sured" | "suq" | "istypep" => format!("texture and surface instructions (`{}`) are not modelled", i.opcode),
        "isspacep" | "mapa" | "getctarank" => format!("`{}` (address spaces of a cluster) is not modelled", i.opcode),
        "alloca" | "stacksave" | "stackrestore" => format!("dynamic stack allocation (`{}`) is not modelled", i.opcode),
        "multimem" => "multimem (multicast memory) accesses are not modelled".into(),
        "st" | "red" if m(".async") => format!("asynchronous remote `{}.async` (distributed shared memory) is not modelled", i.opcode),
        "clusterlaunchcontrol" => "cluster launch control is not modelled".into(),
        "discard" => "`discard` makes the contents of a cache line undefined, a write the model does not describe".into(),
        "addc" | "subc" | "madc" => format!("extended-precision arithmetic with the carry flag (`{}`) is not modelled", i.opcode),
        "vote" if !m(".sync") => "`vote` without `.sync` (pre-Volta warp-synchronous semantics) is not modelled".into(),
        "set" => "`set` (a comparison that writes a number) is not modelled; compilers emit `setp`".into(),
        "bmsk" | "szext" | "fns" => format!("`{}` is not modelled", i.opcode),
        op if is_video(op) => format!("video (packed SIMD) instruction `{op}` is not modelled"),
        _ => return None,
    })
}

/// The video instructions (`vadd`, `vabsdiff4`, `vset2`, ...).
fn is_video(op: &str) -> bool {
    let base = op.trim_end_matches(['2', '4']);
    matches!(base, "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" | "vmad" | "vset" | "vavrg")
}
