//! Turning `.cu` text into PTX with line information.
//!
//! clang-19 compiles device code without the CUDA SDK thanks to a small prelude (bundled here)
//! that maps CUDA's builtins onto clang's; nvcc is used instead when it is asked for or is the only
//! compiler present (`probe`). The text is compiled from memory (an editor's unsaved buffer),
//! written to a private temporary directory under its own file name; quoted includes still
//! resolve next to the real file, as they would if it were compiled in place, and no path into
//! the temporary directory reaches the user (`workdir`). The compiler runs under a deadline with
//! its output drained as it comes (`process`); its messages come back as diagnostics on the
//! `.cu` lines, notes attached (`diagnostics`).

mod diagnostics;
mod probe;
mod process;
mod workdir;

pub use diagnostics::{elide_identifiers, CuDiagnostic, CuNote};
pub use probe::find_compiler;

use process::RunError;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use workdir::{PathMap, TempDir, PRELUDE_NAME};

/// The prelude for `clang --cuda-device-only -nocudainc`.
pub const PRELUDE: &str = include_str!("cuda_prelude.h");

/// What an SDK header that declares only what the prelude already does contains.
const DECLARED_IN_THE_PRELUDE: &str = "// LARK: declared in the prelude\n";

/// Stand-ins for the CUDA SDK's headers, so that kernels compile with clang and no SDK. Those of
/// the runtime (nvcc includes it implicitly) are empty: the prelude declares what they would.
/// What a kernel has only by including it is in its own stand-in, not in the prelude, so that a
/// kernel with its own `half` or `cg` compiles as long as it does not include the header.
const SDK_HEADERS: [(&str, &str); 18] = [
    ("cuda_runtime.h", DECLARED_IN_THE_PRELUDE),
    ("cuda_runtime_api.h", DECLARED_IN_THE_PRELUDE),
    ("cuda.h", DECLARED_IN_THE_PRELUDE),
    ("device_launch_parameters.h", DECLARED_IN_THE_PRELUDE),
    ("cuda_device_runtime_api.h", DECLARED_IN_THE_PRELUDE),
    ("driver_types.h", DECLARED_IN_THE_PRELUDE),
    ("builtin_types.h", DECLARED_IN_THE_PRELUDE),
    ("host_defines.h", DECLARED_IN_THE_PRELUDE),
    ("vector_types.h", DECLARED_IN_THE_PRELUDE),
    ("vector_functions.h", DECLARED_IN_THE_PRELUDE),
    ("device_functions.h", DECLARED_IN_THE_PRELUDE),
    ("device_atomic_functions.h", DECLARED_IN_THE_PRELUDE),
    ("sm_60_atomic_functions.h", DECLARED_IN_THE_PRELUDE),
    ("cuda_fp16.h", include_str!("sdk/cuda_fp16.h")),
    ("cuda_bf16.h", include_str!("sdk/cuda_bf16.h")),
    ("cooperative_groups.h", include_str!("sdk/cooperative_groups.h")),
    ("cooperative_groups/reduce.h", include_str!("sdk/cooperative_groups/reduce.h")),
    ("math_constants.h", include_str!("sdk/math_constants.h")),
];

/// The wall-clock limit for one compilation when none is set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// A compiler to use (`clang-19`, `/usr/local/cuda/bin/nvcc`, ...); `None` finds one.
    pub compiler: Option<String>,
    /// `sm_80` when `None`.
    pub arch: Option<String>,
    /// Include directories; relative ones are relative to the working directory.
    pub include_paths: Vec<String>,
    /// `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// Wall-clock limit for one compilation ([`DEFAULT_TIMEOUT`] when `None`).
    pub timeout: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompilerKind {
    Clang,
    Nvcc,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiler {
    pub kind: CompilerKind,
    pub program: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("no CUDA compiler found (tried {tried}); install clang-19 (`apt-get install clang-19`) or set the compiler path")]
    Missing { tried: String },
    #[error("`{program}` is not a working CUDA compiler: {why}; use clang-19 or nvcc")]
    NotACompiler { program: String, why: String },
    #[error("the compiler `{program}` could not be run: {message}")]
    Spawn { program: String, message: String },
    #[error("compilation failed with {} error(s)", diagnostics.iter().filter(|d| d.severity == "error").count().max(1))]
    Failed { diagnostics: Vec<CuDiagnostic>, stderr: String },
    #[error("the compiler did not finish within {0:?}")]
    Timeout(Duration),
    #[error("i/o error: {0}")]
    Io(String),
}

/// Compiles the `.cu` text of `path` (which need not exist: an unsaved buffer) to PTX whose
/// `.file` directives name `path`, made absolute.
pub fn compile(path: &Path, text: &str, opts: &CompileOptions) -> Result<String, CompileError> {
    let compiler = find_compiler(opts.compiler.as_deref())?;
    let dir = TempDir::new().map_err(|e| CompileError::Io(format!("cannot create a temporary directory in {}: {e}", std::env::temp_dir().display())))?;
    let file_name = path.file_name().map_or_else(|| "kernel.cu".into(), |n| n.to_string_lossy().into_owned());
    let real = absolute(path);
    let real = if path.file_name().is_some() { real } else { real.join(&file_name) };
    let map = PathMap::new(dir.path(), &file_name, &real);
    let io = |what: &str, e: std::io::Error| CompileError::Io(map.to_user(&format!("{what}: {e}")));
    std::fs::write(dir.path().join(&file_name), text).map_err(|e| io("writing the source for the compiler", e))?;
    let ptx = dir.path().join("out.ptx");
    let source_dir = real.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
    let mut cmd = Command::new(&compiler.program);
    let arch = opts.arch.clone().unwrap_or_else(|| "sm_80".into());
    let includes = opts.include_paths.iter().map(|i| absolute(Path::new(i)));
    match compiler.kind {
        CompilerKind::Clang => {
            let prelude = dir.path().join(PRELUDE_NAME);
            std::fs::write(&prelude, PRELUDE).map_err(|e| io("writing the prelude", e))?;
            cmd.args(["--cuda-device-only", &format!("--cuda-gpu-arch={arch}"), "-nocudainc", "-nocudalib"])
                .args(["-Xclang", "-target-feature", "-Xclang", "+ptx70"])
                .arg("-include")
                .arg(&prelude)
                .args(["-O2", "-gline-tables-only", "-S", "-fno-color-diagnostics", "-fno-caret-diagnostics"]);
            // `#include "x.h"` looks next to the real file first, as it would compiled in place;
            // the directory also ends the `<x.h>` search, as it always has here.
            cmd.arg("-iquote").arg(&source_dir);
            for i in includes {
                cmd.arg("-I").arg(i);
            }
            cmd.arg("-I").arg(&source_dir);
            // `#include <cuda_runtime.h>`, `<cuda_fp16.h>` and the SDK's other headers: the
            // stand-ins end the search after every real directory (an SDK given with -I still
            // wins).
            let stubs = dir.path().join("lark_sdk_stubs");
            for (name, text) in SDK_HEADERS {
                let path = stubs.join(name);
                let parent = path.parent().unwrap_or(&stubs);
                std::fs::create_dir_all(parent).and_then(|()| std::fs::write(&path, text)).map_err(|e| io("writing the SDK stand-ins", e))?;
            }
            cmd.arg("-idirafter").arg(&stubs);
        }
        CompilerKind::Nvcc => {
            cmd.args(["-ptx", "-lineinfo", "-O2", &format!("-arch={arch}")]);
            // nvcc has no -iquote: the file's own directory is searched first.
            cmd.arg("-I").arg(&source_dir);
            for i in includes {
                cmd.arg("-I").arg(i);
            }
        }
    }
    for d in &opts.defines {
        cmd.arg(format!("-D{d}"));
    }
    cmd.arg(&file_name).arg("-o").arg(&ptx).current_dir(dir.path());
    let limit = opts.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let output = match process::run(cmd, limit) {
        Ok(o) => o,
        Err(RunError::Timeout) => return Err(CompileError::Timeout(limit)),
        Err(RunError::Spawn(e) | RunError::Wait(e)) => {
            return Err(CompileError::Spawn { program: compiler.program.clone(), message: map.to_user(&e.to_string()) })
        }
    };
    let stderr = map.to_user(&String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        let real_name = real.display().to_string();
        let diagnostics = diagnostics::parse(&stderr, &[&file_name, &real_name]);
        return Err(CompileError::Failed { diagnostics, stderr });
    }
    let not_ptx = |why: &str| CompileError::NotACompiler { program: compiler.program.clone(), why: why.to_string() };
    let out = match std::fs::read_to_string(&ptx) {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_ptx("it exited successfully but wrote no PTX")),
        Err(e) => return Err(io("reading the compiler's output", e)),
    };
    if !out.contains(".version") || !out.contains(".target") {
        return Err(not_ptx("what it wrote is not PTX (no `.version` and `.target`)"));
    }
    Ok(map.ptx_to_user(&out))
}

/// `p` made absolute against the working directory, as a compiler run there would see it.
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `k.cu:12:5: error: use of undeclared identifier 'x'` (clang) and
/// `k.cu(12): error: identifier "x" is undefined` (nvcc), for lines of `file_name`; notes are
/// attached to the message before them, messages in headers land on the `#include` line.
pub fn parse_diagnostics(stderr: &str, file_name: &str) -> Vec<CuDiagnostic> {
    diagnostics::parse(stderr, &[file_name])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A fresh directory for one test's files.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lark-cuda-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn failed(r: Result<String, CompileError>) -> (Vec<CuDiagnostic>, String) {
        match r {
            Err(CompileError::Failed { diagnostics, stderr }) => (diagnostics, stderr),
            other => panic!("expected a compile error, got {other:?}"),
        }
    }

    #[test]
    fn compiles_with_clang_and_names_the_real_file() {
        let src = "extern \"C\" __global__ void k(float* x) {\n  x[threadIdx.x] = 1.0f;\n}\n";
        let ptx = compile(Path::new("/some/dir/k.cu"), src, &CompileOptions::default()).expect("clang-19 is installed by the test script");
        assert!(ptx.contains(".entry k"), "{ptx}");
        assert!(ptx.contains(".loc") && ptx.contains(".file\t1 \"/some/dir/k.cu\""), "{ptx}");
        assert!(!ptx.contains("lark-cc"), "a temporary path in the PTX:\n{ptx}");
    }

    #[test]
    fn compile_errors_become_diagnostics() {
        let src = "extern \"C\" __global__ void k(float* x) {\n  x[threadIdx.x] = nope;\n}\n";
        let (diagnostics, _) = failed(compile(Path::new("k.cu"), src, &CompileOptions::default()));
        assert_eq!(diagnostics[0].line, 2);
        assert!(diagnostics[0].message.contains("nope"));
    }

    #[test]
    fn a_missing_compiler_is_a_clear_error() {
        let opts = CompileOptions { compiler: Some("/nonexistent/clang-99".into()), ..Default::default() };
        let e = compile(Path::new("k.cu"), "", &opts).unwrap_err();
        assert!(matches!(e, CompileError::Missing { .. }), "{e}");
    }

    #[test]
    fn a_program_that_is_not_a_cuda_compiler_says_so() {
        for p in ["/bin/true", "/bin/ls"] {
            let opts = CompileOptions { compiler: Some(p.into()), ..Default::default() };
            let e = compile(Path::new("k.cu"), "", &opts).unwrap_err();
            assert!(matches!(&e, CompileError::NotACompiler { program, .. } if program == p), "{e}");
            assert!(e.to_string().starts_with(&format!("`{p}` is not a working CUDA compiler: `--version` printed")), "{e}");
        }
        // One that claims to be clang but writes nothing.
        let dir = scratch("fake");
        let fake = dir.join("fake-clang");
        std::fs::write(&fake, "#!/bin/sh\necho 'clang version 19.0.0'\n").unwrap();
        make_executable(&fake);
        let opts = CompileOptions { compiler: Some(fake.display().to_string()), ..Default::default() };
        let e = compile(Path::new("k.cu"), "", &opts).unwrap_err();
        assert!(e.to_string().ends_with("is not a working CUDA compiler: it exited successfully but wrote no PTX; use clang-19 or nvcc"), "{e}");
    }

    fn make_executable(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// `kernels/kernel.cu` includes `"compat.h"` next to it and `"../include/util.h"`.
    fn project(name: &str) -> PathBuf {
        let root = scratch(name);
        std::fs::create_dir_all(root.join("kernels")).unwrap();
        std::fs::create_dir_all(root.join("include")).unwrap();
        std::fs::write(root.join("kernels/compat.h"), "#pragma once\n#define SCALE 2.0f\n").unwrap();
        std::fs::write(root.join("include/util.h"), "#pragma once\n#include \"inner.h\"\n__device__ inline float twice(float v) { return INNER * v; }\n")
            .unwrap();
        std::fs::write(root.join("include/inner.h"), "#define INNER 2.0f\n").unwrap();
        root
    }

    const INCLUDING: &str = "#include \"compat.h\"\n#include \"../include/util.h\"\nextern \"C\" __global__ void scale(float* x) {\n  x[threadIdx.x] = twice(x[threadIdx.x]) * SCALE;\n}\n";

    #[test]
    fn quoted_includes_resolve_next_to_the_real_file_however_it_is_named() {
        let root = project("includes");
        let abs = root.join("kernels/kernel.cu");
        // The same file relative to the working directory, through `..` up to the root.
        let cwd = std::env::current_dir().unwrap();
        let up = "../".repeat(cwd.components().count() - 1);
        let relative = PathBuf::from(format!("{up}{}", abs.display().to_string().trim_start_matches('/')));
        assert!(relative.is_relative());
        let dotted = root.join("include/../kernels/./kernel.cu");
        for path in [&abs, &relative, &dotted] {
            let ptx = compile(path, INCLUDING, &CompileOptions::default()).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
            assert!(ptx.contains(".entry scale"), "{}", path.display());
            assert!(!ptx.contains("lark-cc"), "{ptx}");
        }
        // A header missing next to the file is an error on the #include line.
        let (d, stderr) = failed(compile(&root.join("include/kernel.cu"), INCLUDING, &CompileOptions::default()));
        assert_eq!((d[0].line, d[0].message.as_str()), (1, "'compat.h' file not found"), "{stderr}");
    }

    #[test]
    fn output_beyond_a_pipe_buffer_does_not_block_the_compiler() {
        let warnings: String = (0..2000).map(|i| format!("#warning this is warning number {i} of a kernel that warns a great deal\n")).collect();
        let src = format!("{warnings}extern \"C\" __global__ void k(float* x) {{ x[0] = 1.0f; }}\n");
        let started = Instant::now();
        let ptx = compile(Path::new("/w/k.cu"), &src, &CompileOptions { timeout: Some(Duration::from_secs(60)), ..Default::default() }).unwrap();
        assert!(ptx.contains(".entry k"));
        // With an error as well: every warning comes back.
        let (d, stderr) = failed(compile(Path::new("/w/k.cu"), &format!("{src}int nope = nosuchthing;\n"), &CompileOptions::default()));
        assert!(stderr.len() > 64 * 1024, "only {} bytes of warnings", stderr.len());
        assert_eq!(d.iter().filter(|d| d.severity == "warning").count(), 2000);
        assert!(d.iter().any(|d| d.severity == "error" && d.message.starts_with("use of undeclared identifier 'nosuchthing'")), "{:#?}", &d[2000..]);
        assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    }

    #[test]
    fn a_compiler_that_hangs_is_stopped_at_the_timeout() {
        let dir = scratch("hang");
        let fake = dir.join("slow-clang");
        std::fs::write(&fake, "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'clang version 19.0.0'; exit 0; fi\nsleep 30\n").unwrap();
        make_executable(&fake);
        let opts = CompileOptions { compiler: Some(fake.display().to_string()), timeout: Some(Duration::from_millis(300)), ..Default::default() };
        let started = Instant::now();
        let e = compile(Path::new("k.cu"), "", &opts).unwrap_err();
        assert!(matches!(e, CompileError::Timeout(_)), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[test]
    fn notes_are_attached_and_temporary_paths_never_shown() {
        let src = "static __device__ void __syncwarp(unsigned m) {}\n__device__ int f(int a);\n__device__ float f(float a);\n\
                   extern \"C\" __global__ void k(float* x, double d) {\n  x[0] = f(d);\n}\n";
        let (d, stderr) = failed(compile(Path::new("/w/notes.cu"), src, &CompileOptions::default()));
        assert!(!stderr.contains("lark-cc"), "{stderr}");
        assert!(d.iter().all(|d| d.severity == "error" || d.severity == "warning"), "{d:#?}");
        let redefinition = d.iter().find(|d| d.message.contains("redefinition of '__syncwarp'")).unwrap_or_else(|| panic!("{d:#?}"));
        assert_eq!(redefinition.line, 1);
        assert_eq!(redefinition.notes[0].file.as_deref(), Some(workdir::PRELUDE_NAME), "{redefinition:#?}");
        let ambiguous = d.iter().find(|d| d.message.contains("ambiguous")).unwrap();
        assert_eq!((ambiguous.line, ambiguous.notes.len()), (5, 2), "{ambiguous:#?}");
        assert_eq!(ambiguous.notes.iter().map(|n| (n.file.clone(), n.line)).collect::<Vec<_>>(), vec![(None, 2), (None, 3)]);
        assert!(ambiguous.message_with_notes().ends_with("(note: candidate function at line 2; note: candidate function at line 3)"), "{ambiguous:#?}");
    }

    /// A kernel as projects write them, with the host program around it: CUDA's math, half,
    /// cooperative groups, cache hints, atomics, a debug printf and an assert all compile to
    /// instructions, with no call left in the PTX.
    const PROGRAM: &str = r#"#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>
namespace cg = cooperative_groups;
__global__ void gelu_sum(half* y, float* total, const float4* x, int64_t n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  assert(n >= 0);
  float4 v = i < n ? __ldg(&x[i]) : make_float4(0.0f, 0.0f, 0.0f, -FLT_MAX);
  float g = 0.5f * v.x * (1.0f + tanhf(0.79788456f * (v.x + 0.044715f * powf(v.x, 3.0f))));
  float s = cg::reduce(warp, expf(v.y) + fmaxf(v.w, v.z), cg::plus<float>());
  if (warp.thread_rank() == 0) atomicAdd(total, s + std::exp(v.z));
  if (i < n) y[i] = __float2half(g) + __hmul(__float2half(v.z), __float2half(2.0f));
  if (i == 0) printf("n = %lld\n", (long long)n);
}
int main() {
  std::vector<float> h(1024, 1.0f);
  float4* x;
  cudaMalloc(&x, h.size() * sizeof(float));
  cudaMemcpy(x, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
  gelu_sum<<<(256 + 127) / 128, min(128, 256)>>>(nullptr, nullptr, x, 256);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
"#;

    #[test]
    fn the_cuda_device_api_compiles_to_instructions() {
        let ptx = compile(Path::new("/w/program.cu"), PROGRAM, &CompileOptions::default()).unwrap_or_else(|e| panic!("{e:?}"));
        for insn in [
            "ld.global.nc.v4.f32",
            "tanh.approx.f32",
            "ex2.approx.f32",
            "lg2.approx.f32",
            "shfl.sync.bfly.b32",
            "atom.global.add.f32",
            "cvt.rn.f16.f32",
            "fma.rn.f16",
        ] {
            assert!(ptx.contains(insn), "no {insn} in\n{ptx}");
        }
        assert!(!ptx.contains("call"), "a call left in\n{ptx}");
    }

    #[test]
    fn math_without_an_instruction_is_a_libdevice_call() {
        let src =
            "__global__ void gelu(float* y, const float* x) {\n  y[threadIdx.x] = 0.5f * x[threadIdx.x] * (1.0f + erff(x[threadIdx.x] * 0.70710678f));\n}\n";
        let ptx = compile(Path::new("gelu.cu"), src, &CompileOptions::default()).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(ptx.contains(".extern .func  (.param .b32 func_retval0) __nv_erff"), "{ptx}");
        assert_eq!(ptx.matches("call.uni").count(), 1, "{ptx}");
    }

    #[test]
    fn a_kernel_with_its_own_half_and_helpers_compiles() {
        // No cuda_fp16.h, so `half` is the kernel's; its own exp2f and __shfl_up_sync (as kernels
        // written for the earlier prelude have) take precedence over the prelude's.
        let src = "typedef float half;\nstatic __device__ __forceinline__ float exp2f(float x) { return x; }\n\
                   static __device__ float __shfl_up_sync(unsigned m, float v, unsigned d) { return v; }\n\
                   __global__ void k(half* y) {\n  y[threadIdx.x] = __shfl_up_sync(0xffffffffu, exp2f(y[threadIdx.x]), 1);\n}\n";
        let ptx = compile(Path::new("own.cu"), src, &CompileOptions::default()).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(!ptx.contains("ex2.approx") && !ptx.contains("shfl.sync"), "{ptx}");
    }

    #[test]
    fn very_long_identifiers_are_elided() {
        let name = format!("v{}", "x".repeat(5000));
        let src = format!("extern \"C\" __global__ void k(float* p) {{\n  p[0] = {name};\n}}\n");
        let (d, _) = failed(compile(Path::new("k.cu"), &src, &CompileOptions::default()));
        let m = &d[0].message;
        assert!(m.chars().count() < 200, "{m}");
        assert!(m.contains(&format!("'v{}…{}'", "x".repeat(59), "x".repeat(60))), "{m}");
    }
}
