#!/usr/bin/env python3
"""Development aid for the equivalence corpus (tests/equiv) and the corpus references (tests/corpus).

For every kernel of a lark.toml that has a `[kernel.NAME.reference]` binding, and for every
`[[...reference.shapes]]` table (or once when every scalar is fixed):

1. builds the kernel's inputs from the interface (random float32 values, index buffers from their
   fixed `values`/`values_file` or random values that respect `in_range`/`injective`);
2. runs the PyTorch reference (real torch, CPU) twice: once on tensors of the declared dtypes (it
   must run and return the bound number of outputs with the bound shapes) and once with every float
   tensor in float64 (the values compared below);
3. runs a plain NumPy re-implementation of the kernel *as written in its .cu* (block by block,
   thread by thread, barrier phase by barrier phase, warp shuffles lane by lane) in float64 with
   the engine's exact semantics: `__expf(x)` and `exp2f(x * 1.4426950f)` are exp(x), `rsqrtf` is
   1/sqrt, float literals stand for the decimal constant they round (0.7978845608f is
   sqrt(2/pi)), rounding to f32 is ignored;
4. compares the outputs elementwise: a shape "agrees" when the largest difference is within
   1e-9 of the largest reference magnitude (f16 outputs: 1e-2).

A kernel expected `verified` must agree at every shape; one expected `mismatch` must disagree at
one shape at least, and its `lines` must be lines of global stores in its .ptx. Kernels marked
`equiv = "none"` in tests/corpus have no reference and are skipped.

    python3 tests/equiv/validate.py                 # both directories
    python3 tests/equiv/validate.py --only rope     # kernels whose name contains "rope"
    python3 tests/equiv/validate.py --corpus-only   # only tests/corpus

Needs torch and numpy (pip install torch numpy); CI does not run it. Exit status 1 when an
expectation does not hold.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import math
import re
import sys
import tomllib
from pathlib import Path

import numpy as np

try:
    import torch
except ImportError:  # --write-concrete-tomls needs no torch
    torch = None

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CORPUS = REPO / "tests" / "corpus"

# --------------------------------------------------------------------------- size expressions


def eval_size(expr, env: dict[str, int]) -> int:
    """A size expression: integers, scalar names, + - * / % (integer, floor division), parentheses,
    ceil_div(a, b), min(a, b), max(a, b)."""
    if isinstance(expr, bool):
        raise ValueError(f"not a size: {expr!r}")
    if isinstance(expr, int):
        return expr
    tokens = re.findall(r"\d+|[A-Za-z_][A-Za-z0-9_]*|[-+*/%(),]", expr)
    if "".join(tokens) != re.sub(r"\s+", "", expr):
        raise ValueError(f"bad size expression {expr!r}")
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take(t=None):
        nonlocal pos
        tok = peek()
        if tok is None or (t is not None and tok != t):
            raise ValueError(f"size expression {expr!r}: expected {t or 'a term'}, found {tok!r}")
        pos += 1
        return tok

    def atom():
        tok = take()
        if tok == "(":
            v = add()
            take(")")
            return v
        if tok == "-":
            return -atom()
        if tok.isdigit():
            return int(tok)
        if tok in ("ceil_div", "min", "max"):
            take("(")
            a = add()
            take(",")
            b = add()
            take(")")
            return {"ceil_div": lambda: -(-a // b), "min": lambda: min(a, b), "max": lambda: max(a, b)}[tok]()
        if tok not in env:
            raise ValueError(f"size expression {expr!r}: unknown name {tok!r}")
        return env[tok]

    def mul():
        v = atom()
        while peek() in ("*", "/", "%"):
            op, r = take(), atom()
            v = v * r if op == "*" else v // r if op == "/" else v % r
        return v

    def add():
        v = mul()
        while peek() in ("+", "-"):
            op, r = take(), mul()
            v = v + r if op == "+" else v - r
        return v

    v = add()
    if pos != len(tokens):
        raise ValueError(f"size expression {expr!r}: trailing {tokens[pos]!r}")
    return v


# --------------------------------------------------------------------------- inputs

NP_DTYPE = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
            "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
TORCH_DTYPE = {} if torch is None else {
    "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64, "i8": torch.int8, "u8": torch.uint8,
    "i32": torch.int32, "u32": torch.uint32, "i64": torch.int64, "u64": torch.uint64}
FLOATS = {"f32", "f16", "bf16", "f64"}


def flatten(v):
    return [y for x in v for y in flatten(x)] if isinstance(v, list) else [v]


class Case:
    """One kernel at one shape: scalar values, launch, buffer contents (float64 / int64 numpy)."""

    def __init__(self, name, spec, shape, rng, base: Path):
        self.name = name
        params = spec.get("params", {})
        self.scalars: dict[str, int | float] = {}
        for p, ps in params.items():
            if "value" in ps and "dtype" not in ps:
                self.scalars[p] = ps["value"]
        for p, v in shape.items():
            if p in self.scalars:
                raise ValueError(f"{name}: shapes table sets {p}, which has a fixed value")
            if p not in params or "range" not in params[p]:
                raise ValueError(f"{name}: shapes table sets {p}, which is not a scalar with a range")
            lo, hi = params[p]["range"]
            if not lo <= v <= hi:
                raise ValueError(f"{name}: {p} = {v} outside its range [{lo}, {hi}]")
            self.scalars[p] = v
        for p, ps in params.items():
            if "range" in ps and p not in self.scalars:
                raise ValueError(f"{name}: {p} has a range and no value in this shapes table")
        ints = {k: v for k, v in self.scalars.items() if isinstance(v, int)}
        self.env = ints
        self.grid = [eval_size(d, ints) for d in spec["grid"]] + [1] * (3 - len(spec["grid"]))
        self.block = [eval_size(d, ints) for d in spec["block"]] + [1] * (3 - len(spec["block"]))
        self.dtypes: dict[str, str] = {}
        self.bufs: dict[str, np.ndarray] = {}
        for p, ps in params.items():
            if "dtype" not in ps:
                continue
            dt = ps["dtype"]
            n = eval_size(ps["len"], ints)
            self.dtypes[p] = dt
            if "values" in ps or "values_file" in ps:
                vals = ps["values"] if "values" in ps else json.loads((base / ps["values_file"]).read_text())
                vals = flatten(vals)
                if len(vals) != n:
                    raise ValueError(f"{name}: {p} has {len(vals)} values for len {n}")
                arr = np.array(vals, dtype=np.float64 if dt in FLOATS else np.int64)
            elif dt in FLOATS:
                arr = rng.standard_normal(n).astype(NP_DTYPE[dt]).astype(np.float64)
            else:
                lo, hi = {"i8": (-128, 128), "u8": (0, 256), "i32": (-1000, 1000), "u32": (0, 1000), "i64": (-1000, 1000), "u64": (0, 1000)}[dt]
                injective = False
                for a in ps.get("assume", []):
                    m = re.fullmatch(r"in_range\((-?\d+),\s*(-?\d+)\)", a)
                    if m:
                        lo, hi = int(m.group(1)), int(m.group(2))
                    elif a == "injective":
                        injective = True
                if injective:
                    arr = rng.choice(np.arange(lo, hi), size=n, replace=False).astype(np.int64)
                else:
                    arr = rng.integers(lo, hi, size=n).astype(np.int64)
            self.bufs[p] = arr

    def tensor(self, buffer, shape, dtype64: bool):
        dt = self.dtypes[buffer]
        n = math.prod(shape)
        data = self.bufs[buffer]
        if n > len(data):
            raise ValueError(f"{self.name}: shape {shape} of {buffer} needs {n} elements, the buffer has {len(data)}")
        arr = data[:n].reshape(shape)
        if dt in FLOATS:
            return torch.tensor(arr, dtype=torch.float64 if dtype64 else TORCH_DTYPE[dt])
        return torch.tensor(arr, dtype=TORCH_DTYPE[dt])


# --------------------------------------------------------------------------- references


def load_reference(path: Path, function: str | None):
    spec = importlib.util.spec_from_file_location(f"ref_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if function is None:
        if hasattr(module, "reference"):
            return module.reference
        mods = [v for v in vars(module).values()
                if inspect.isclass(v) and issubclass(v, torch.nn.Module) and v.__module__ == module.__name__]
        if len(mods) != 1:
            raise ValueError(f"{path}: no `reference` and not exactly one nn.Module")
        return mods[0]().forward
    if "." in function:
        cls, meth = function.split(".")
        return getattr(getattr(module, cls)(), meth)
    return getattr(module, function)


def run_reference(case: Case, ref: dict, base: Path, dtype64: bool):
    fn = load_reference(base / ref["file"], ref.get("function"))
    names = list(inspect.signature(fn).parameters)
    args = ref.get("args", {})
    if list(args) != names:
        raise ValueError(f"{case.name}: binding args {list(args)} != reference parameters {names}")
    values = []
    for a, b in args.items():
        if "buffer" in b:
            values.append(case.tensor(b["buffer"], [eval_size(s, case.env) for s in b["shape"]], dtype64))
        elif "param" in b:
            values.append(case.scalars[b["param"]])
        else:
            values.append(b["value"])
    with torch.no_grad():
        out = fn(*values)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    binds = ref["outputs"]
    if len(outs) != len(binds):
        raise ValueError(f"{case.name}: the reference returned {len(outs)} tensors, the binding has {len(binds)} outputs")
    for o, b in zip(outs, binds):
        want = [eval_size(s, case.env) for s in b["shape"]]
        if list(o.shape) != want:
            raise ValueError(f"{case.name}: output for {b['buffer']} has shape {list(o.shape)}, bound {want}")
    return outs


def bound_view(case: Case, buf: np.ndarray, b: dict) -> np.ndarray:
    """The elements of a kernel buffer that an output binding names, as an array of its shape."""
    shape = [eval_size(s, case.env) for s in b["shape"]]
    offset = eval_size(b.get("offset", 0), case.env)
    if "strides" in b:
        strides = [eval_size(s, case.env) for s in b["strides"]]
    else:
        strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    idx = np.full(shape, offset, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(shape, strides)):
        r = np.arange(n, dtype=np.int64).reshape([n if i == axis else 1 for i in range(len(shape))])
        idx = idx + r * s
    return buf[idx]


# --------------------------------------------------------------------------- simulation helpers
# Vectors indexed by threadIdx.x stand for the threads of one block; every statement of a phase is
# applied to all threads before the next barrier, as the race-free kernels allow.


def strided_sum(row: np.ndarray, threads: int, f=lambda v: v) -> np.ndarray:
    """Each thread t accumulates f(row[c]) for c = t, t + threads, ... (the block-stride loop)."""
    acc = np.zeros(threads)
    for base in range(0, len(row), threads):
        chunk = f(row[base:base + threads])
        acc[:len(chunk)] += chunk
    return acc


def tree(vals: np.ndarray, op=np.add, start=None) -> np.ndarray:
    """The shared-memory tree: for s = start, start/2, .., 1: red[t] = op(red[t], red[t + s]) for t < s."""
    red = vals.copy()
    s = len(red) // 2 if start is None else start
    while s > 0:
        red[:s] = op(red[:s], red[s:2 * s])
        s //= 2
    return red


def shfl_down(v: np.ndarray, o: int) -> np.ndarray:
    """shfl.sync.down over the last axis (32 lanes): lanes whose source is past lane 31 keep their own value."""
    lane = np.arange(32)
    src = np.where(lane + o < 32, lane + o, lane)
    return v[..., src]


def shfl_up(v: np.ndarray, o: int) -> np.ndarray:
    lane = np.arange(32)
    src = np.where(lane - o >= 0, lane - o, lane)
    return v[..., src]


def shfl_xor(v: np.ndarray, o: int) -> np.ndarray:
    return v[..., np.arange(32) ^ o]


def warps(v: np.ndarray) -> np.ndarray:
    return v.reshape(-1, 32)


def expf(x):
    return np.exp(x)


def rsqrtf(x):
    return 1.0 / np.sqrt(x)


def tanh_via_exp(x):
    e = np.exp(2.0 * x)
    return (e - 1.0) / (e + 1.0)


SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


# --------------------------------------------------------------------------- tests/equiv kernels
# sim(c, bug): c.scalars / c.grid / c.block / c.bufs as the launch sees them; `bug` selects the
# <name>_bug variant (the one-line difference is spelled out where it applies).


def sim_rmsnorm_shared(c, bug, div_sqrt=False):  # rmsnorm_eps(_bug), rmsnorm_div_sqrt
    x, w, out = c.bufs["x"], c.bufs["w"], c.bufs["out"]
    cols, eps, T = c.scalars["cols"], c.scalars["eps"], c.block[0]
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        red = tree(strided_sum(xr, T, lambda v: v * v))
        if bug:
            inv_rms = 1.0 / (np.sqrt(red[0] / cols) + eps)
        elif div_sqrt:
            inv_rms = 1.0 / np.sqrt(red[0] / cols + eps)
        else:
            inv_rms = rsqrtf(red[0] / cols + eps)
        out[row * cols:(row + 1) * cols] = xr * inv_rms * w[:cols]


def warp_sum_xor(v):
    for o in (16, 8, 4, 2, 1):
        v = v + shfl_xor(v, o)
    return v


def sim_rmsnorm_weight(c, bug):
    x, w, out = c.bufs["x"], c.bufs["w"], c.bufs["out"]
    cols, eps, T = c.scalars["cols"], c.scalars["eps"], c.block[0]
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        ss = warps(strided_sum(xr, T, lambda v: v * v))
        ss = warp_sum_xor(ss)
        warp_sums = ss[:, 0]                               # lane 0 of each warp
        lane = np.arange(32)
        ss0 = np.where(lane < T // 32, np.concatenate([warp_sums, np.zeros(32 - len(warp_sums))]), 0.0)
        ss0 = warp_sum_xor(ss0)
        inv_rms = rsqrtf(ss0[0] / cols + eps)
        out[row * cols:(row + 1) * cols] = xr * inv_rms if bug else xr * inv_rms * w[:cols]


def sim_bench_rmsnorm(c, bug):
    x, w, out = c.bufs["x"], c.bufs["w"], c.bufs["out"]
    cols, eps, T = 4096, c.scalars["eps"], 256
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        ss = warp_sum_xor(warps(strided_sum(xr, T, lambda v: v * v)))
        warp_sums = ss[:, 0]
        lane = np.arange(32)
        stage2 = np.where(lane < T // 32, np.concatenate([warp_sums, np.zeros(32 - len(warp_sums))]), 0.0)
        total = warp_sum_xor(stage2)                       # every warp computes the same total
        inv_rms = rsqrtf(total[0] / cols + eps)
        out[row * cols:(row + 1) * cols] = xr * inv_rms * w[:cols]


def sim_layernorm_mean(c, bug):
    x, g, bta, y = c.bufs["x"], c.bufs["gamma"], c.bufs["beta"], c.bufs["y"]
    cols, eps, T = c.scalars["cols"], c.scalars["eps"], 128
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        mean = tree(strided_sum(xr, T))[0] / cols
        rstd = rsqrtf(tree(strided_sum(xr, T, lambda v: (v - mean) ** 2))[0] / cols + eps)
        y[row * cols:(row + 1) * cols] = (xr * rstd if bug else (xr - mean) * rstd) * g[:cols] + bta[:cols]


def sim_layernorm_var(c, bug):
    x, g, bta, y = c.bufs["x"], c.bufs["gamma"], c.bufs["beta"], c.bufs["y"]
    cols, eps, T = c.scalars["cols"], c.scalars["eps"], c.block[0]
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        s1, s2 = tree(strided_sum(xr, T)), tree(strided_sum(xr, T, lambda v: v * v))
        mean = s1[0] / cols
        var = (s2[0] - cols * mean * mean) / (cols - 1) if bug else s2[0] / cols - mean * mean
        rstd = rsqrtf(var + eps)
        y[row * cols:(row + 1) * cols] = (xr - mean) * rstd * g[:cols] + bta[:cols]


def sim_gelu_tanh(c, bug):
    x, out, n = c.bufs["x"], c.bufs["out"], c.scalars["n"]
    i = np.arange(c.grid[0] * c.block[0])
    i = i[i < n]
    v = x[i]
    k1 = 0.0447 if bug else 0.044715
    inner = SQRT_2_OVER_PI * (v + k1 * v * v * v)
    out[i] = 0.5 * v * (1.0 + tanh_via_exp(inner))


def sim_gelu_erf(c, bug):
    x, out, n = c.bufs["x"], c.bufs["out"], c.scalars["n"]
    i = np.arange(c.grid[0] * c.block[0])
    i = i[i < n]
    v = x[i]
    scale = 1.0 if bug else 0.70710678
    out[i] = 0.5 * v * (1.0 + np.vectorize(math.erf)(v * scale))


def sim_scaled_dot(c, bug):
    q, k, out, rows = c.bufs["q"], c.bufs["k"], c.bufs["out"], c.scalars["rows"]
    for r in range(min(rows, c.grid[0] * c.block[0])):
        acc = float(np.dot(q[r * 128:(r + 1) * 128], k[r * 128:(r + 1) * 128]))
        out[r] = acc * (0.125 if bug else 0.08838834764)


def sim_total_sum(c, bug):
    x, out, n = c.bufs["x"], c.bufs["out"], c.scalars["n"]
    partials = [float(np.sum(x[b * 256:min((b + 1) * 256, n)])) for b in range(c.grid[0])]
    out[0] = partials[-1] if bug else sum(partials)


def gated(c, act, swap=False):
    inp, out, d = c.bufs["input"], c.bufs["out"], c.scalars["d"]
    for t in range(min(c.grid[0], c.scalars["tokens"])):
        row = inp[t * 2 * d:(t + 1) * 2 * d]
        gate, up = (row[d:], row[:d]) if swap else (row[:d], row[d:])
        out[t * d:(t + 1) * d] = act(gate) * up


def sim_swiglu(c, bug):
    gated(c, (lambda g: 1.0 / (1.0 + expf(-g))) if bug else (lambda g: g / (1.0 + expf(-g))))


def sim_swiglu_exp2(c, bug):
    # exp2f(-gate * 1.4426950f) is exp(-gate): the literal stands for log2(e).
    gated(c, lambda g: g * (1.0 / (1.0 + 2.0 ** (-g * math.log2(math.e)))))


def sim_geglu(c, bug):
    def gelu(x):
        e = expf(2.0 * (SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
        return 0.5 * x * (1.0 + (e - 1.0) / (e + 1.0))
    gated(c, gelu, swap=bug)


def sim_row_sum(c, bug):
    x, out, cols, T = c.bufs["x"], c.bufs["out"], c.scalars["cols"], 256
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        if bug:  # for (k = 0; k < cols / THREADS; ++k) s += xr[k * THREADS + tid];
            s = strided_sum(xr[:cols // T * T], T)
        else:
            s = strided_sum(xr, T)
        out[row] = tree(s)[0]


def sim_row_sum_seq(c, bug):
    x, out, cols = c.bufs["x"], c.bufs["out"], c.scalars["cols"]
    for r in range(c.grid[0] * c.block[0]):
        if r < c.scalars["rows"]:
            s = 0.0
            for v in x[r * cols:(r + 1) * cols]:
                s += v
            out[r] = s


def sim_row_sum_shfl(c, bug):
    x, out, cols, T = c.bufs["x"], c.bufs["out"], c.scalars["cols"], c.block[0]
    for row in range(min(c.grid[0], c.scalars["rows"])):
        s = warp_sum_xor(warps(strided_sum(x[row * cols:(row + 1) * cols], T)))
        totals = s[:, 0]
        lane = np.arange(32)
        s0 = warp_sum_xor(np.where(lane < T // 32, np.concatenate([totals, np.zeros(32 - len(totals))]), 0.0))
        out[row] = s0[0]


def sim_row_mean(c, bug):
    x, out, cols, T = c.bufs["x"], c.bufs["out"], c.scalars["cols"], c.block[0]
    for row in range(min(c.grid[0], c.scalars["rows"])):
        s = warps(strided_sum(x[row * cols:(row + 1) * cols], T))
        for o in (16, 8, 4, 2, 1):
            s = s + shfl_down(s, o)
        partial = s[:, 0]
        total = 0.0
        for w in range(4 if bug else T // 32):
            total += partial[w]
        out[row] = total / cols


def sim_row_mean_serial(c, bug):
    x, out, rows, cols = c.bufs["x"], c.bufs["out"], c.scalars["rows"], c.scalars["cols"]
    for r in range(min(c.grid[0] * c.block[0], rows)):
        s = 0.0
        for v in x[r * cols:(r + 1) * cols]:
            s += v
        out[r] = s / (rows if bug else cols)


def sim_row_sum_block(c, bug):
    x, out, cols, T = c.bufs["x"], c.bufs["out"], c.scalars["cols"], 256
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        s = strided_sum(xr[:T], T) if bug else strided_sum(xr, T)
        out[row] = tree(s)[0]


def sim_concat_rows(c, bug):
    a, b, out = c.bufs["a"], c.bufs["b"], c.bufs["out"]
    rows, ca, cb = c.scalars["rows"], c.scalars["ca"], c.scalars["cb"]
    for r in range(min(c.grid[0], rows)):
        for col in range(ca + cb):
            out[r * (ca + cb) + col] = a[r * ca + col] if col < ca else b[r * (ca if bug else cb) + col - ca]


def sim_l2norm_warp(c, bug):
    x, out, cols = c.bufs["x"], c.bufs["out"], c.scalars["cols"]
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        ss = strided_sum(xr, 32, lambda v: v * v)
        for o in (16, 8, 4, 2, 1):
            ss = ss + shfl_down(ss, o)
        total = ss[31 if bug else 0]
        out[row * cols:(row + 1) * cols] = xr * rsqrtf(total)


def sim_matmul_naive(c, bug):
    A, B, C = c.bufs["A"], c.bufs["B"], c.bufs["C"]
    M, N, K = c.scalars["M"], c.scalars["N"], c.scalars["K"]
    for row in range(min(M, c.grid[1] * c.block[1])):
        for col in range(min(N, c.grid[0] * c.block[0])):
            acc = 0.0
            for k in range(K):
                acc += (A[k * M + row] if bug else A[row * K + k]) * B[k * N + col]
            C[row * N + col] = acc


def sim_matmul_tiled(c, bug, guarded=True):
    A, B, C = c.bufs["A"], c.bufs["B"], c.bufs["C"]
    M, N, K, TILE = c.scalars["M"], c.scalars["N"], c.scalars["K"], 16
    steps = K // TILE if (bug or not guarded) else (K + TILE - 1) // TILE
    for by in range(c.grid[1]):
        for bx in range(c.grid[0]):
            rows = by * TILE + np.arange(TILE)[:, None]    # threadIdx.y
            cols = bx * TILE + np.arange(TILE)[None, :]    # threadIdx.x
            acc = np.zeros((TILE, TILE))
            for t in range(steps):
                ak = t * TILE + np.arange(TILE)[None, :]
                bk = t * TILE + np.arange(TILE)[:, None]
                a_ok = (rows < M) & (ak < K) if guarded else np.ones((TILE, TILE), bool)
                b_ok = (bk < K) & (cols < N) if guarded else np.ones((TILE, TILE), bool)
                As = np.where(a_ok, A[np.where(a_ok, rows * K + ak, 0)], 0.0)
                Bs = np.where(b_ok, B[np.where(b_ok, bk * N + cols, 0)], 0.0)
                for k in range(TILE):
                    acc += As[:, k:k + 1] * Bs[k:k + 1, :]
            ok = (rows < M) & (cols < N) if guarded else np.ones((TILE, TILE), bool)
            rr, cc = np.broadcast_arrays(rows, cols)
            C[(rr * N + cc)[ok]] = acc[ok]


def sim_attention_row(c, bug):
    q, k, v, out = c.bufs["q"], c.bufs["k"], c.bufs["v"], c.bufs["out"]
    k_len, d, T = c.scalars["k_len"], c.scalars["d"], 128
    j = np.arange(T)
    for i in range(min(c.grid[0], c.scalars["q_len"])):
        qi = q[i * d:(i + 1) * d]
        score = np.full(T, -np.inf)
        for jj in range(min(k_len, T)):
            dot = 0.0
            for cc in range(d):
                dot += qi[cc] * k[jj * d + cc]
            score[jj] = dot if bug else dot * rsqrtf(float(d))
        m = tree(score, np.maximum)[0]
        e = np.where(j < k_len, expf(np.where(j < k_len, score, m) - m), 0.0)
        p = e.copy()
        inv = 1.0 / tree(e)[0]
        for cc in range(d):                       # thread cc (d <= THREADS)
            acc = 0.0
            for t in range(k_len):
                acc += p[t] * v[t * d + cc]
            out[i * d + cc] = acc * inv


def sim_softmax_rows(c, bug):
    x, y, cols, T = c.bufs["x"], c.bufs["y"], c.scalars["cols"], 256
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        m = np.full(T, -np.inf)
        for base in range(0, cols, T):
            ch = xr[base:base + T]
            m[:len(ch)] = np.maximum(m[:len(ch)], ch)
        s_max = tree(m, np.maximum)[0]
        s_sum = tree(strided_sum(xr, T, lambda vv: expf(vv - s_max)))[0]
        y[row * cols:(row + 1) * cols] = expf(xr - s_max) / (s_max if bug else s_sum)


def sim_softmax_noshift(c, bug):
    x, y, cols, T = c.bufs["x"], c.bufs["y"], c.scalars["cols"], 256
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        inv = 1.0 / tree(strided_sum(xr, T, expf))[0]
        y[row * cols:(row + 1) * cols] = expf(xr) * inv


def online_merge(m, s, m2, s2):
    mm = np.maximum(m, m2)
    return mm, s * expf(m - mm) + s2 * expf(m2 - mm)


def sim_softmax_online(c, bug):
    x, y, cols, T = c.bufs["x"], c.bufs["y"], c.scalars["cols"], 256
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        m, s = xr[:T].copy(), np.ones(T)
        for base in range(T, cols, T):
            ch = xr[base:base + T]
            n = len(ch)
            m_new = np.maximum(m[:n], ch)
            s[:n] = s[:n] * expf(m[:n] - m_new) + expf(ch - m_new)
            m[:n] = m_new
        k = T // 2
        while k > 0:
            m[:k], s[:k] = online_merge(m[:k], s[:k], m[k:2 * k], s[k:2 * k])
            k //= 2
        y[row * cols:(row + 1) * cols] = expf(xr - m[0]) * (1.0 / s[0])


def sim_bench_softmax_online(c, bug):
    x, y, cols, T = c.bufs["x"], c.bufs["y"], 2048, 256
    for row in range(min(c.grid[0], c.scalars["rows"])):
        xr = x[row * cols:(row + 1) * cols]
        m, s = xr[:T].copy(), np.ones(T)
        for base in range(T, cols, T):
            m, s = online_merge(m, s, xr[base:base + T], np.ones(T))
        m, s = warps(m), warps(s)
        for o in (16, 8, 4, 2, 1):
            m, s = online_merge(m, s, shfl_xor(m, o), shfl_xor(s, o))
        wm, ws = m[:, 0], s[:, 0]
        lane = np.arange(32)
        m0 = wm[lane % (T // 32)]
        s0 = np.where(lane < T // 32, ws[lane % (T // 32)], 0.0)
        for o in (16, 8, 4, 2, 1):
            m0, s0 = online_merge(m0, s0, shfl_xor(m0, o), shfl_xor(s0, o))
        y[row * cols:(row + 1) * cols] = expf(xr - m0[0]) * (1.0 / s0[0])


def sim_causal_softmax(c, bug):
    sc, p = c.bufs["scores"], c.bufs["p"]
    q_len, k_len, T = c.scalars["q_len"], c.scalars["k_len"], 256
    for i in range(min(c.grid[0], q_len)):
        visible = i + (k_len - q_len) + (0 if bug else 1)
        sr = sc[i * k_len:(i + 1) * k_len]
        m = np.full(T, -np.inf)
        for base in range(0, visible, T):
            ch = sr[base:min(base + T, visible)]
            m[:len(ch)] = np.maximum(m[:len(ch)], ch)
        s_max = tree(m, np.maximum)[0]
        s_sum = tree(strided_sum(sr[:max(visible, 0)], T, lambda vv: expf(vv - s_max)))[0]
        j = np.arange(k_len)
        vis = j < visible
        p[i * k_len:(i + 1) * k_len] = np.where(vis, expf(np.where(vis, sr, 0.0) - (s_max if visible > 0 else 0.0)) / (s_sum if visible > 0 else 1.0), 0.0)


def sim_rope(c, bug, layout):
    q, out, pos_buf = c.bufs["q"], c.bufs["out"], c.bufs["positions"]
    cos_c, sin_c = c.bufs["cos_cache"], c.bufs["sin_cache"]
    heads, hd = c.scalars["heads"], c.scalars["head_dim"]
    half = hd // 2
    for t in range(min(c.grid[0], c.scalars["tokens"])):
        pos = int(pos_buf[t])
        for idx in range(heads * half):
            h, i = idx // half, idx % half
            base = (t * heads + h) * hd
            cc, s = cos_c[pos * half + i], sin_c[pos * half + i]
            if layout == "neox":
                x1, x2 = q[base + i], q[base + i + half]
                if bug:
                    out[base + i], out[base + i + half] = x1 * cc + x2 * s, x2 * cc - x1 * s
                else:
                    out[base + i], out[base + i + half] = x1 * cc - x2 * s, x2 * cc + x1 * s
            else:
                x1, x2 = (q[base + i], q[base + i + half]) if bug else (q[base + 2 * i], q[base + 2 * i + 1])
                out[base + 2 * i], out[base + 2 * i + 1] = x1 * cc - x2 * s, x2 * cc + x1 * s


def sim_kv_cache(c, bug):
    key, cache, slots = c.bufs["key"], c.bufs["key_cache"], c.bufs["slot_mapping"]
    heads, hd, bs = c.scalars["heads"], c.scalars["head_dim"], c.scalars["block_size"]
    for t in range(c.grid[0]):
        slot = int(slots[t])
        blk, off = slot // bs, slot % bs
        for i in range(heads * hd):
            h, d = i // hd, i % hd
            dst = ((blk * bs + off) * heads + h) * hd + d if bug else ((blk * heads + h) * bs + off) * hd + d
            cache[dst] = key[t * heads * hd + i]


def sim_transpose_tile(c, bug):
    inp, out = c.bufs["in"], c.bufs["out"]
    rows, cols, TILE, ROWS = c.scalars["rows"], c.scalars["cols"], 32, 8
    tx = np.arange(TILE)[None, :]
    ty = np.arange(ROWS)[:, None]
    for by in range(c.grid[1]):
        for bx in range(c.grid[0]):
            tile = np.zeros((TILE, TILE + 1))
            x, y = bx * TILE + tx, by * TILE + ty
            for j in range(0, TILE, ROWS):
                tile[ty + j, tx] = inp[(y + j) * cols + x]
            x, y = by * TILE + tx, bx * TILE + ty
            for j in range(0, TILE, ROWS):
                out[(y + j) * rows + x] = tile[ty + j, tx] if bug else tile[tx, ty + j]


def sim_embedding(c, bug):
    ids, table, out = c.bufs["ids"], c.bufs["table"], c.bufs["out"]
    dim, stride = c.scalars["dim"], c.scalars["row_stride"]
    for t in range(min(c.grid[0], c.scalars["tokens"])):
        i = int(ids[t])
        out[t * dim:(t + 1) * dim] = table[i * (dim if bug else stride) + np.arange(dim)]


EQUIV_SIMS = {
    "rmsnorm_eps": sim_rmsnorm_shared,
    "rmsnorm_div_sqrt": lambda c, bug: sim_rmsnorm_shared(c, bug, div_sqrt=True),
    "rmsnorm_weight": sim_rmsnorm_weight,
    "bench_rmsnorm_4096": sim_bench_rmsnorm,
    "layernorm_mean": sim_layernorm_mean,
    "layernorm_var": sim_layernorm_var,
    "gelu_tanh": sim_gelu_tanh,
    "gelu_erf": sim_gelu_erf,
    "scaled_dot": sim_scaled_dot,
    "total_sum": sim_total_sum,
    "swiglu": sim_swiglu,
    "swiglu_exp2": sim_swiglu_exp2,
    "geglu": sim_geglu,
    "row_sum": sim_row_sum,
    "row_sum_seq": sim_row_sum_seq,
    "row_sum_shfl": sim_row_sum_shfl,
    "row_mean": sim_row_mean,
    "row_mean_serial": sim_row_mean_serial,
    "row_sum_block": sim_row_sum_block,
    "concat_rows": sim_concat_rows,
    "l2norm_warp": sim_l2norm_warp,
    "matmul_naive": sim_matmul_naive,
    "matmul_tiled_k": sim_matmul_tiled,
    "bench_matmul_64": lambda c, bug: sim_matmul_tiled(c, bug, guarded=False),
    "attention_row": sim_attention_row,
    "softmax_rows": sim_softmax_rows,
    "softmax_noshift": sim_softmax_noshift,
    "softmax_online": sim_softmax_online,
    "bench_softmax_online_2048": sim_bench_softmax_online,
    "causal_softmax": sim_causal_softmax,
    "rope_halves": lambda c, bug: sim_rope(c, bug, "neox"),
    "rope_pairs": lambda c, bug: sim_rope(c, bug, "gptj"),
    "kv_cache_write": sim_kv_cache,
    "transpose_tile": sim_transpose_tile,
    "embedding_padded": sim_embedding,
}


# --------------------------------------------------------------------------- tests/corpus kernels


def global_ids(c):
    return np.arange(c.grid[0] * c.block[0])


def sim_c_vector_add(c, bug):
    i = global_ids(c)
    i = i[i < c.scalars["n"]]
    c.bufs["c"][i] = c.bufs["a"][i] + c.bufs["b"][i]


def sim_c_saxpy(c, bug):
    n, a, x, y = c.scalars["n"], c.scalars["a"], c.bufs["x"], c.bufs["y"]
    stride = c.grid[0] * c.block[0]
    for start in range(0, n, stride):                    # grid-stride rounds
        i = start + np.arange(stride)
        i = i[i < n]
        y[i] = a * x[i] + y[i]


def sim_c_scale_inplace(c, bug):
    i = global_ids(c)
    i = i[i < c.scalars["n"]]
    c.bufs["x"][i] *= c.scalars["alpha"]


def block_values(c, src, n):
    """Per block, the values thread t loads: src[b * T + t] if in range else 0."""
    T = c.block[0]
    i = np.arange(c.grid[0] * T)
    return np.where(i < n, src[np.minimum(i, max(n - 1, 0))], 0.0).reshape(c.grid[0], T)


def sim_c_reduce_sum_shared(c, bug):
    v = block_values(c, c.bufs["input"], c.scalars["n"])
    for b in range(c.grid[0]):
        c.bufs["partial"][b] = tree(v[b])[0]


def sim_c_warp_reduce_shfl(c, bug):
    v = block_values(c, c.bufs["x"], c.scalars["n"]).reshape(-1, 32)
    for o in (16, 8, 4, 2, 1):
        v = v + shfl_down(v, o)
    for w in range(v.shape[0]):                           # atomicAdd by lane 0 of each warp
        c.bufs["sum"][0] += v[w, 0]


def sim_c_transpose_tiled(c, bug):
    width, height = c.scalars["width"], c.scalars["height"]
    i, o = c.bufs["idata"], c.bufs["odata"]
    TILE, ROWS = 32, 8
    tx, ty = np.arange(TILE)[None, :], np.arange(ROWS)[:, None]
    for by in range(c.grid[1]):
        for bx in range(c.grid[0]):
            tile = np.zeros((TILE, TILE + 1))
            x, y = bx * TILE + tx, by * TILE + ty
            for j in range(0, TILE, ROWS):
                ok = np.broadcast_to((x < width) & (y + j < height), (ROWS, TILE))
                vals = i[np.where(ok, (y + j) * width + x, 0)]
                tt = tile[ty + j, tx]
                tile[ty + j, tx] = np.where(ok, vals, tt)
            x, y = by * TILE + tx, bx * TILE + ty
            for j in range(0, TILE, ROWS):
                ok = np.broadcast_to((x < height) & (y + j < width), (ROWS, TILE))
                idx = np.broadcast_to((y + j) * height + x, (ROWS, TILE))
                o[idx[ok]] = tile[tx, ty + j][ok]


def sim_c_matmul_tiled(c, bug):
    sim_matmul_tiled(c, bug, guarded=False)


def sim_c_scan_hillis_steele(c, bug):
    v = block_values(c, c.bufs["in"], c.scalars["n"])
    T = c.block[0]
    offset = 1
    while offset < T:
        shifted = np.zeros_like(v)
        shifted[:, offset:] = v[:, :-offset]             # v = temp[tid - offset] for tid >= offset
        v = v + shifted
        offset <<= 1
    i = np.arange(c.grid[0] * T)
    ok = i < c.scalars["n"]
    c.bufs["out"][i[ok]] = v.reshape(-1)[ok]


def sim_c_scan_blelloch(c, bug):
    N = 512
    inp, out = c.bufs["in"], c.bufs["out"]
    for b in range(c.grid[0]):
        temp = inp[b * N:(b + 1) * N].copy()
        offset = 1
        d = N >> 1
        while d > 0:
            tid = np.arange(d)
            ai, bi = offset * (2 * tid + 1) - 1, offset * (2 * tid + 2) - 1
            temp[bi] += temp[ai]
            offset *= 2
            d >>= 1
        temp[N - 1] = 0.0
        d = 1
        while d < N:
            offset >>= 1
            tid = np.arange(d)
            ai, bi = offset * (2 * tid + 1) - 1, offset * (2 * tid + 2) - 1
            t = temp[ai].copy()
            temp[ai] = temp[bi]
            temp[bi] += t
            d *= 2
        out[b * N:(b + 1) * N] = temp


def sim_c_softmax_row(c, bug):
    x, y, cols, T = c.bufs["x"], c.bufs["y"], c.scalars["cols"], c.block[0]
    for row in range(c.grid[0]):
        xr = x[row * cols:(row + 1) * cols]
        m = np.full(T, -np.inf)
        for base in range(0, cols, T):
            ch = xr[base:base + T]
            m[:len(ch)] = np.maximum(m[:len(ch)], ch)
        mx = tree(m, np.maximum)[0]
        inv = 1.0 / tree(strided_sum(xr, T, lambda v: expf(v - mx)))[0]
        y[row * cols:(row + 1) * cols] = expf(xr - mx) * inv


def sim_c_rmsnorm(c, bug):
    x, w, out = c.bufs["x"], c.bufs["weight"], c.bufs["out"]
    hidden, eps, T = c.scalars["hidden"], c.scalars["eps"], c.block[0]
    for row in range(c.grid[0]):
        xr = x[row * hidden:(row + 1) * hidden]
        ss = warp_sum_xor(warps(strided_sum(xr, T, lambda v: v * v)))
        ws = ss[:, 0]
        lane = np.arange(32)
        s0 = warp_sum_xor(np.where(lane < T // 32, np.concatenate([ws, np.zeros(32 - len(ws))]), 0.0))
        out[row * hidden:(row + 1) * hidden] = xr * rsqrtf(s0[0] / hidden + eps) * w[:hidden]


def sim_c_layernorm(c, bug):
    x, g, bta, y = c.bufs["x"], c.bufs["gamma"], c.bufs["beta"], c.bufs["y"]
    d, eps, T = c.scalars["d"], c.scalars["eps"], 128
    for row in range(c.grid[0]):
        xr = x[row * d:(row + 1) * d]
        mean = tree(strided_sum(xr, T))[0] / d
        rstd = rsqrtf(tree(strided_sum(xr, T, lambda v: v * v))[0] / d - mean * mean + eps)
        y[row * d:(row + 1) * d] = (xr - mean) * rstd * g[:d] + bta[:d]


def sim_c_rope_neox(c, bug):
    q, positions, cache = c.bufs["q"], c.bufs["positions"], c.bufs["cos_sin_cache"]
    heads, hs = c.scalars["num_heads"], c.scalars["head_size"]
    half = hs // 2
    for t in range(c.grid[0]):
        pos = int(positions[t])
        cs, sn = cache[pos * hs:pos * hs + half], cache[pos * hs + half:pos * hs + hs]
        for h in range(heads):
            base = (t * heads + h) * hs
            x1, x2 = q[base:base + half].copy(), q[base + half:base + hs].copy()
            q[base:base + half] = x1 * cs - x2 * sn
            q[base + half:base + hs] = x2 * cs + x1 * sn


def sim_c_silu_and_mul(c, bug):
    inp, out, d = c.bufs["input"], c.bufs["out"], c.scalars["d"]
    for t in range(c.grid[0]):
        g, u = inp[t * 2 * d:t * 2 * d + d], inp[t * 2 * d + d:(t + 1) * 2 * d]
        out[t * d:(t + 1) * d] = g / (1.0 + expf(-g)) * u


def sim_c_gelu_tanh_and_mul(c, bug):
    inp, out, d = c.bufs["input"], c.bufs["out"], c.scalars["d"]
    for b in range(c.grid[0]):
        x, y = inp[b * 2 * d:b * 2 * d + d], inp[b * 2 * d + d:(b + 1) * 2 * d]
        g = 0.5 * x * (1.0 + tanh_via_exp(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
        out[b * d:(b + 1) * d] = g * y


def sim_c_reshape_and_cache(c, bug):
    n = c.scalars["num_heads"] * c.scalars["head_size"]
    for t in range(c.grid[0]):
        slot = int(c.bufs["slot_mapping"][t])
        if slot < 0:
            continue
        c.bufs["key_cache"][slot * n:(slot + 1) * n] = c.bufs["key"][t * n:(t + 1) * n]
        c.bufs["value_cache"][slot * n:(slot + 1) * n] = c.bufs["value"][t * n:(t + 1) * n]


def sim_c_histogram_shared(c, bug):
    data, bins, n = c.bufs["data"], c.bufs["bins"], c.scalars["n"]
    T, G = c.block[0], c.grid[0]
    for b in range(G):
        local = np.zeros(256, dtype=np.int64)
        for start in range(b * T, n, T * G):
            for v in data[start:min(start + T, n)]:
                local[int(v)] += 1
        bins[:256] += local


def sim_c_count_positive_atomic(c, bug):
    x, n = c.bufs["x"], c.scalars["n"]
    i = global_ids(c)
    i = i[i < n]
    pos = i[x[i] > 0.0]
    c.bufs["count"][0] += len(pos)
    for j in pos:
        c.bufs["total"][0] += x[j]


def sim_c_stencil_1d(c, bug):
    inp, out, n = c.bufs["in"], c.bufs["out"], c.scalars["n"]
    R, BLOCK = 3, 256
    for b in range(c.grid[0]):
        g = b * BLOCK + np.arange(BLOCK)
        temp = np.zeros(BLOCK + 2 * R)
        temp[R:R + BLOCK] = inp[g]
        for t in range(R):
            gg = b * BLOCK + t
            temp[t] = inp[gg - R] if gg >= R else 0.0
            temp[t + BLOCK + R] = inp[gg + BLOCK] if gg + BLOCK < n else 0.0
        res = np.zeros(BLOCK)
        for k in range(-R, R + 1):
            res += temp[R + k + np.arange(BLOCK)]
        out[g] = res


def sim_c_laplace_2d(c, bug):
    inp, out, w, h = c.bufs["in"], c.bufs["out"], c.scalars["w"], c.scalars["h"]
    B = 16
    for by in range(c.grid[1]):
        for bx in range(c.grid[0]):
            t = np.zeros((B + 2, B + 2))
            x = bx * B + np.arange(B)[None, :]
            y = by * B + np.arange(B)[:, None]
            cx, cy = np.minimum(x, w - 1), np.minimum(y, h - 1)
            t[1:B + 1, 1:B + 1] = inp[cy * w + cx]
            t[1:B + 1, 0] = inp[cy[:, 0] * w + np.maximum(cx[0, 0] - 1, 0)]
            t[1:B + 1, B + 1] = inp[cy[:, 0] * w + min(cx[0, B - 1] + 1, w - 1)]
            t[0, 1:B + 1] = inp[max(cy[0, 0] - 1, 0) * w + cx[0, :]]
            t[B + 1, 1:B + 1] = inp[min(cy[B - 1, 0] + 1, h - 1) * w + cx[0, :]]
            val = t[0:B, 1:B + 1] + t[2:B + 2, 1:B + 1] + t[1:B + 1, 0:B] + t[1:B + 1, 2:B + 2] - 4.0 * t[1:B + 1, 1:B + 1]
            ok = (x < w) & (y < h)
            xx, yy = np.broadcast_arrays(x, y)
            out[(yy * w + xx)[ok]] = val[ok]


def sim_c_embedding_lookup(c, bug):
    dim = c.scalars["dim"]
    for t in range(c.grid[0]):
        i = int(c.bufs["ids"][t])
        c.bufs["out"][t * dim:(t + 1) * dim] = c.bufs["table"][i * dim:(i + 1) * dim]


def sim_c_dequant_int8(c, bug):
    i = global_ids(c)
    i = i[i < c.scalars["n"]]
    c.bufs["w"][i] = c.bufs["q"][i].astype(np.float64) * c.bufs["scales"][i // c.scalars["group_size"]]


def sim_c_dequant_int4_f16(c, bug):
    i = global_ids(c)
    i = i[i < c.scalars["n_bytes"]]
    b = c.bufs["packed"][i].astype(np.int64)
    s = c.bufs["scales"][(2 * i) // c.scalars["group_size"]]
    # The kernel rounds each product to f16 (out of the exact contract; mirrored here).
    c.bufs["w"][2 * i] = (((b & 0xF) - 8) * s).astype(np.float16).astype(np.float64)
    c.bufs["w"][2 * i + 1] = (((b >> 4) - 8) * s).astype(np.float16).astype(np.float64)


def sim_c_sum_partials(c, bug):
    x, n, T, G = c.bufs["x"], c.scalars["n"], 256, c.grid[0]
    for b in range(G):
        v = np.zeros(T)
        for start in range(b * T, n, T * G):
            ch = x[start:min(start + T, n)]
            v[:len(ch)] += ch
        c.bufs["partials"][b] = tree(v)[0]


def sim_c_sum_final(c, bug):
    p, n = c.bufs["partials"], c.scalars["num_partials"]
    c.bufs["result"][0] = tree(strided_sum(p[:n], 256))[0]


def sim_c_dot_atomic(c, bug):
    a, b, n, T, G = c.bufs["a"], c.bufs["b"], c.scalars["n"], c.block[0], c.grid[0]
    for blk in range(G):
        t = np.zeros(T)
        for start in range(blk * T, n, T * G):
            hi = min(start + T, n)
            t[:hi - start] += a[start:hi] * b[start:hi]
        c.bufs["result"][0] += tree(t)[0]


def sim_c_uniform_branch_barrier(c, bug):
    inp, out, n, T, G = c.bufs["in"], c.bufs["out"], c.scalars["n"], c.block[0], c.grid[0]
    for b in range(G):
        i = b * T + np.arange(T)
        v = np.where(i < n, inp[np.minimum(i, n - 1)], 0.0)
        if b == G - 1:
            v = 0.5 * (v + v[::-1])                       # buf[blockDim.x - 1 - threadIdx.x]
        out[i[i < n]] = v[i < n]


def sim_c_warp_scan_shfl_up(c, bug):
    v = block_values(c, c.bufs["in"], c.scalars["n"]).reshape(-1, 32)
    lane = np.arange(32)
    d = 1
    while d < 32:
        up = shfl_up(v, d)
        v = np.where(lane >= d, v + up, v)
        d <<= 1
    i = global_ids(c)
    ok = i < c.scalars["n"]
    c.bufs["out"][i[ok]] = v.reshape(-1)[ok]


CORPUS_SIMS = {
    "vector_add": sim_c_vector_add,
    "saxpy_grid_stride": sim_c_saxpy,
    "_Z13scale_inplaceIfEvPT_S0_i": sim_c_scale_inplace,
    "reduce_sum_shared": sim_c_reduce_sum_shared,
    "warp_reduce_shfl": sim_c_warp_reduce_shfl,
    "transpose_tiled": sim_c_transpose_tiled,
    "matmul_tiled": sim_c_matmul_tiled,
    "scan_hillis_steele": sim_c_scan_hillis_steele,
    "scan_blelloch": sim_c_scan_blelloch,
    "softmax_row": sim_c_softmax_row,
    "rmsnorm": sim_c_rmsnorm,
    "layernorm": sim_c_layernorm,
    "rope_neox": sim_c_rope_neox,
    "silu_and_mul": sim_c_silu_and_mul,
    "_Z17gelu_tanh_and_mulPfPKfi": sim_c_gelu_tanh_and_mul,
    "reshape_and_cache": sim_c_reshape_and_cache,
    "histogram_shared": sim_c_histogram_shared,
    "count_positive_atomic": sim_c_count_positive_atomic,
    "stencil_1d": sim_c_stencil_1d,
    "laplace_2d": sim_c_laplace_2d,
    "embedding_lookup": sim_c_embedding_lookup,
    "dequant_int8": sim_c_dequant_int8,
    "dequant_int4_f16": sim_c_dequant_int4_f16,
    "sum_partials": sim_c_sum_partials,
    "sum_final": sim_c_sum_final,
    "dot_atomic": sim_c_dot_atomic,
    "uniform_branch_barrier": sim_c_uniform_branch_barrier,
    "warp_scan_shfl_up": sim_c_warp_scan_shfl_up,
}


# --------------------------------------------------------------------------- driver


def expectations(directory: Path) -> dict[str, dict]:
    """kernel name -> its [[expect]] entry, with the file stem under `file`."""
    out = {}
    for meta in sorted(directory.glob("*.meta.toml")):
        for e in tomllib.loads(meta.read_text())["expect"]:
            out[e["kernel"]] = dict(e, file=meta.name[:-len(".meta.toml")])
    return out


def store_lines(ptx: Path) -> set[int]:
    """The .cu lines (from `.loc`) of the global stores in a PTX file."""
    line, lines = None, set()
    for text in ptx.read_text().splitlines():
        m = re.match(r"\s*\.loc\s+\d+\s+(\d+)", text)
        if m:
            line = int(m.group(1))
        elif re.match(r"\s*(st|atom|red)\.global", text):
            lines.add(line)
    return lines


def compare(case: Case, outs, ref: dict) -> float:
    """Largest difference between reference and simulated outputs, relative to the reference's magnitude."""
    worst = 0.0
    for o, b in zip(outs, ref["outputs"]):
        got = bound_view(case, case.bufs[b["buffer"]], b).astype(np.float64)
        want = o.to(torch.float64).numpy()
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
        diff = np.abs(got - want)
        diff = np.where(np.isnan(got) & np.isnan(want), 0.0, diff)
        worst = max(worst, float(np.nanmax(diff)) / scale if diff.size else 0.0, float("inf") if np.isnan(diff).any() else 0.0)
    return worst


def validate_dir(directory: Path, sims: dict, only: str | None, rng) -> tuple[list[str], list[str]]:
    spec = tomllib.loads((directory / "lark.toml").read_text())["kernel"]
    expects = expectations(directory)
    rows, failures = [], []
    for name, k in spec.items():
        if only and only not in name:
            continue
        e = expects.get(name)
        if e is None:
            failures.append(f"{name}: no [[expect]] in any meta file")
            continue
        want = e.get("equiv", e["verdict"]) if directory == CORPUS else e["verdict"]
        ref = k.get("reference")
        if want == "none" or ref is None:
            if ref is not None or want in ("verified", "mismatch"):
                failures.append(f"{name}: equiv {want!r} but reference binding {'present' if ref else 'absent'}")
            continue
        base_name = name[:-4] if name.endswith("_bug") else name
        sim = sims.get(base_name)
        shapes = ref.get("shapes") or [{}]
        results = []
        try:
            for shape in shapes:
                case = Case(name, k, shape, rng, directory)
                run_reference(case, ref, directory, dtype64=False)          # runs with the declared dtypes
                outs = run_reference(case, ref, directory, dtype64=True)
                if sim is None:
                    results.append((shape, None))
                    continue
                sim(case, name.endswith("_bug"))
                results.append((shape, compare(case, outs, ref)))
        except Exception as err:  # noqa: BLE001 - report and go on with the next kernel
            failures.append(f"{name}: {type(err).__name__}: {err}")
            rows.append(f"{name:32} {want:9} ERROR {err}")
            continue
        tol = 1e-2 if any(k["params"][b["buffer"]]["dtype"] == "f16" for b in ref["outputs"]) else 1e-9
        agree = [r is not None and r <= tol for _, r in results]
        if sim is None:
            got = "ran (no simulation)"
        else:
            got = "verified" if all(agree) else "mismatch"
            if got != want:
                failures.append(f"{name}: expected {want}, the simulation says {got}")
        if want == "mismatch":
            ptx = directory / f"{e['file']}.ptx"
            missing = set(e["lines"]) - store_lines(ptx)
            if not e["lines"] or missing:
                failures.append(f"{name}: mismatch lines {e['lines']} are not all global-store lines of {ptx.name}")
        detail = ", ".join(
            ("{" + ", ".join(f"{p}={v}" for p, v in s.items()) + "}" if s else "{fixed}") + (f" {'agree' if ok else 'DIFFER'} ({r:.1e})" if r is not None else "")
            for (s, r), ok in zip(results, agree))
        rows.append(f"{name:32} {want:9} {got:9} {detail}")
    return rows, failures


def check_peer_files(directory: Path) -> list[str]:
    """<name>.input.json + <name>.binding.json (SentryWard's format) must say what lark.toml says for
    the same kernel at the shape their scalar arguments select."""
    spec = tomllib.loads((directory / "lark.toml").read_text())["kernel"]
    failures = []
    for binding_path in sorted(directory.glob("*.binding.json")):
        name = binding_path.name[:-len(".binding.json")]
        before = len(failures)
        inp = json.loads((directory / f"{name}.input.json").read_text())
        binding = json.loads(binding_path.read_text())
        k = spec[name]
        decls = {d["parameter"]: d for d in inp["declarations"]}
        scalars = {decls[a["parameter"]]["name"]: a["value"] for a in inp["arguments"]}
        shape = {p: v for p, v in scalars.items() if "range" in k["params"].get(p, {})}
        case = Case(name, k, shape, np.random.default_rng(0), directory)
        where = f"{binding_path.name}"
        if inp["launch"]["grid_dim"] != case.grid or inp["launch"]["block_dim"] != case.block:
            failures.append(f"{where}: launch differs from lark.toml")
        for p, v in scalars.items():
            if case.scalars.get(p) != v:
                failures.append(f"{where}: {p} = {v}, lark.toml says {case.scalars.get(p)}")
        ref = k["reference"]
        args = binding["reference"]["arguments"]
        if [a["name"] for a in args] != list(ref["args"]):
            failures.append(f"{where}: argument names differ from lark.toml")
        for a in args:
            want = ref["args"].get(a["name"], {})
            if "parameter" in a:
                if decls[a["parameter"]]["name"] != want.get("param"):
                    failures.append(f"{where}: {a['name']} takes {a['parameter']}, lark.toml binds {want}")
            elif a["allocation"] != want.get("buffer") or a["shape"] != [eval_size(x, case.env) for x in want["shape"]]:
                failures.append(f"{where}: {a['name']} is {a['allocation']} {a['shape']}, lark.toml binds {want}")
            elif "dtype" in a and a["dtype"] != {"f32": "float32", "f16": "float16", "i32": "int32", "i64": "int64"}[case.dtypes[a["allocation"]]]:
                failures.append(f"{where}: {a['name']} dtype {a['dtype']}")
        tensors = binding["outputs"]["tensors"]
        for i, (t, o) in enumerate(zip(tensors, ref["outputs"])):
            shape_o = [eval_size(x, case.env) for x in o["shape"]]
            if (t["left_allocation"], t["right_allocation"], t["shape"]) != (f"reference.output{i}", o["buffer"], shape_o):
                failures.append(f"{where}: output {i} differs from lark.toml")
            contiguous = [4 * math.prod(shape_o[j + 1:]) for j in range(len(shape_o))]
            strides = [4 * eval_size(x, case.env) for x in o["strides"]] if "strides" in o else contiguous
            if t.get("right_strides_bytes", contiguous) != strides or t.get("left_strides_bytes", contiguous) != contiguous:
                failures.append(f"{where}: output {i} strides differ from lark.toml")
        if len(tensors) != len(ref["outputs"]):
            failures.append(f"{where}: {len(tensors)} outputs, lark.toml has {len(ref['outputs'])}")
        print(f"{name:32} peer-format input and binding " + ("agree with lark.toml" if len(failures) == before else "DIFFER from lark.toml"))
    return failures


def write_concrete_tomls(directory: Path, out: Path) -> list[Path]:
    """Today's lark.toml parser knows no size expressions, fixed contents or reference sections: write
    out/shape<i>/lark.toml with every kernel of directory/lark.toml at its i-th shapes table (its last
    one when it has fewer), integers for grid, block and lengths, and no reference sections."""
    spec = tomllib.loads((directory / "lark.toml").read_text())["kernel"]
    count = max(len(k.get("reference", {}).get("shapes", [])) or 1 for k in spec.values())
    written = []
    for i in range(count):
        lines = [f"# generated by tests/equiv/validate.py --write-concrete-tomls from {directory.name}/lark.toml, shape {i}"]
        for name, k in spec.items():
            shapes = k.get("reference", {}).get("shapes") or [{}]
            shape = shapes[min(i, len(shapes) - 1)]
            params = k["params"]
            scalars = {p: v["value"] for p, v in params.items() if "value" in v and "dtype" not in v}
            scalars.update(shape)
            ints = {p: v for p, v in scalars.items() if isinstance(v, int)}
            dims = lambda ds: "[" + ", ".join(str(eval_size(d, ints)) for d in ds) + "]"
            lines += ["", f"[kernel.{name}]", f"grid = {dims(k['grid'])}", f"block = {dims(k['block'])}"]
            if "dynamic_shared_bytes" in k:
                lines.append(f"dynamic_shared_bytes = {k['dynamic_shared_bytes']}")
            lines.append(f"[kernel.{name}.params]")
            for p, v in params.items():
                if "dtype" in v:
                    assume = f", assume = {json.dumps(v['assume'])}" if "assume" in v else ""
                    lines.append(f'{p} = {{ dtype = "{v["dtype"]}", len = {eval_size(v["len"], ints)}{assume} }}')
                else:
                    lines.append(f"{p} = {{ value = {scalars[p]!r} }}")
        path = out / f"shape{i}" / "lark.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        written.append(path)
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="only kernels whose name contains this")
    ap.add_argument("--corpus-only", action="store_true")
    ap.add_argument("--equiv-only", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write-concrete-tomls", metavar="DIR", type=Path,
                    help="write DIR/shape<i>/lark.toml (tests/equiv at its i-th shapes, in today's parser's format) and stop")
    args = ap.parse_args()
    if args.write_concrete_tomls:
        for path in write_concrete_tomls(HERE, args.write_concrete_tomls):
            print(path)
        return 0
    if torch is None:
        print("validate.py: torch is missing (pip install torch numpy)", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    failures = []
    for directory, sims, skip in ((HERE, EQUIV_SIMS, args.corpus_only), (CORPUS, CORPUS_SIMS, args.equiv_only)):
        if skip:
            continue
        print(f"== {directory.relative_to(REPO)}")
        print(f"{'kernel':32} {'expected':9} {'got':9} shapes")
        rows, fails = validate_dir(directory, sims, args.only, rng)
        print("\n".join(rows))
        failures += fails
        if directory == HERE and not args.only:
            failures += check_peer_files(directory)
    for f in failures:
        print("FAIL", f)
    print(f"{'ok' if not failures else str(len(failures)) + ' failure(s)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
