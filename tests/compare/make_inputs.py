#!/usr/bin/env python3
"""Generate one SentryWard kernel-input JSON per corpus kernel.

Reads tests/corpus/lark.toml ([kernel.NAME] grid/block and [kernel.NAME.params])
and the corpus .ptx/.cu files, and writes tests/compare/inputs/NAME.json in the
`spverify.kernel-input/v1` schema described in SENTRYWARD.md.

Source parameter names (the keys of [kernel.NAME.params]) are mapped to PTX
parameters (NAME_param_0..N) by position, using the kernel's signature in the
.cu file; the PTX type of each parameter is read from the .ptx `.entry`
declaration (SentryWard requires the exact PTX type, e.g. `u32` for a C `int`).

Information SentryWard cannot express is dropped and listed in
inputs/_index.json under "dropped": buffer lengths and element types
(SentryWard pointers have unbounded extent), and element-value assumptions.
A scalar `range = [lo, hi]` is specialised to one value (--range-pick, default
`hi`), because SentryWard only verifies concrete scalar values.

Usage: python3 tests/compare/make_inputs.py [--corpus DIR] [--out DIR]
                                           [--range-pick lo|hi|mid] [--check]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_CORPUS = REPO / "tests" / "corpus"
DEFAULT_OUT = HERE / "inputs"
SCHEMA = "spverify.kernel-input/v1"

IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*"


class InputError(Exception):
    pass


# --------------------------------------------------------------------------- PTX

def _strip_ptx_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def ptx_entries(text: str) -> dict[str, list[dict]]:
    """Map entry name -> ordered list of {name, type, bytes|None, array}."""
    text = _strip_ptx_comments(text)
    out: dict[str, list[dict]] = {}
    for m in re.finditer(r"\.entry\s+(" + IDENT + r")\s*\(", text):
        name = m.group(1)
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        body = text[m.end():i - 1]
        params = []
        for decl in body.split(","):
            decl = decl.strip()
            if not decl:
                continue
            pm = re.match(r"\.param\s+(.*?)(" + IDENT + r")\s*(\[\s*\d*\s*\])?\s*$", decl, flags=re.S)
            if not pm:
                raise InputError(f"cannot parse PTX parameter of {name}: {decl!r}")
            tm = re.search(r"\.([busf](?:8|16|32|64|128))\b", pm.group(1))
            ptype = tm.group(1) if tm else None
            params.append({"name": pm.group(2), "type": ptype, "array": bool(pm.group(3)),
                           "bytes": int(ptype[1:]) // 8 if ptype else None})
        out[name] = params
    return out


# --------------------------------------------------------------------------- CUDA source

def _strip_c_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def cu_signature(text: str, kernel: str) -> list[dict] | None:
    """Parameters of `__global__ ... kernel(...)`: [{name, pointer, const}] or None."""
    text = _strip_c_comments(text)
    for m in re.finditer(r"\b" + re.escape(kernel) + r"\s*\(", text):
        # The declaration must be a __global__ one: look back to the previous ';', '}' or '{'.
        start = max(text.rfind(c, 0, m.start()) for c in ";{}")
        if "__global__" not in text[start + 1:m.start()]:
            continue
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        inner = text[m.end():i - 1]
        parts, depth, cur = [], 0, ""
        for ch in inner:
            if ch in "<([":
                depth += 1
            elif ch in ">)]":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        params = []
        for p in parts:
            p = p.split("=")[0].strip()
            if not p or p == "void":
                continue
            is_array = p.endswith("]")
            p_noarr = re.sub(r"\[[^\]]*\]\s*$", "", p).strip()
            nm = re.search(r"(" + IDENT + r")\s*$", p_noarr)
            if not nm:
                raise InputError(f"cannot parse parameter {p!r} of {kernel}")
            decl_type = p_noarr[:nm.start()]
            params.append({"name": nm.group(1), "pointer": "*" in decl_type or is_array,
                           "const": bool(re.search(r"\bconst\b", decl_type.split("*")[0]))})
        return params
    return None


# --------------------------------------------------------------------------- corpus

def load_corpus(corpus: Path) -> dict:
    path = corpus / "lark.toml"
    if not path.is_file():
        raise InputError(f"{path} not found")
    data = tomllib.loads(path.read_text())
    return data.get("kernel", {})


def source_name(kernel: str) -> str:
    """Base source name of a (possibly Itanium-mangled) entry: _Z13scale_inplaceIfEv... -> scale_inplace."""
    m = re.match(r"_ZN?((?:\d+[A-Za-z_$][A-Za-z0-9_$]*)+)", kernel)
    if not m:
        return kernel
    names, rest = [], m.group(1)
    while (nm := re.match(r"(\d+)", rest)):
        n = int(nm.group(1))
        names.append(rest[nm.end():nm.end() + n])
        rest = rest[nm.end() + n:]
        if not kernel.startswith("_ZN"):
            break
    return names[-1] if names else kernel


def find_kernel_files(corpus: Path, kernel: str) -> tuple[Path | None, Path | None]:
    """(ptx, cu) files defining `kernel`; the .cu with the .ptx's stem is preferred.

    A mangled C++ entry (_Z...) is looked up in the .cu under its base source name.
    """
    ptx = None
    for f in sorted(corpus.glob("*.ptx")):
        if re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\(", f.read_text(errors="replace")):
            ptx = f
            break
    cu, base = None, source_name(kernel)
    if ptx is not None and ptx.with_suffix(".cu").is_file():
        cand = ptx.with_suffix(".cu")
        if cu_signature(cand.read_text(errors="replace"), base) is not None:
            cu = cand
    if cu is None:
        for f in sorted(corpus.glob("*.cu")):
            if cu_signature(f.read_text(errors="replace"), base) is not None:
                cu = f
                break
    return ptx, cu


def _dim3(value, what: str) -> list[int]:
    if isinstance(value, int):
        value = [value]
    if not isinstance(value, list) or not 1 <= len(value) <= 3 or not all(isinstance(v, int) and v > 0 for v in value):
        raise InputError(f"{what}: expected [x, y, z] of positive integers, got {value!r}")
    return list(value) + [1] * (3 - len(value))


def _scalar_value(spec: dict, ptype: str, pick: str, src: str, notes: list) -> int | float:
    if "value" in spec:
        v = spec["value"]
    elif "range" in spec:
        lo, hi = spec["range"]
        v = {"lo": lo, "hi": hi, "mid": (lo + hi) // 2 if isinstance(lo, int) and isinstance(hi, int) else (lo + hi) / 2}[pick]
        notes.append(f"{src}: range [{lo}, {hi}] specialised to {v} (--range-pick {pick})")
    else:
        raise InputError(f"scalar parameter {src} needs `value` or `range`")
    if ptype[0] == "f":
        return float(v)
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            raise InputError(f"{src}: integer PTX type {ptype} needs an integer, got {v!r}")
    bits = int(ptype[1:])
    if ptype[0] in "ub":  # clang emits C `int` as .u32: encode negatives in two's complement
        if not -(1 << (bits - 1)) <= v < (1 << bits):
            raise InputError(f"{src}: {v} does not fit {ptype}")
        v %= 1 << bits
    elif not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise InputError(f"{src}: {v} does not fit {ptype}")
    return v


_ALIAS_RE = re.compile(r"^\s*(?:alias|aliases|may_alias)\s*[:=(]\s*(" + IDENT + r")\s*\)?\s*$")


def _aliases(spec: dict) -> list[str]:
    """Names this pointer is declared to alias (assume entries `alias:NAME`/`alias(NAME)`)."""
    out = []
    items = spec.get("assume", [])
    if isinstance(items, (str, dict)):
        items = [items]
    for a in items:
        if isinstance(a, str) and (m := _ALIAS_RE.match(a)):
            out.append(m.group(1))
        elif isinstance(a, dict):
            for key in ("alias", "aliases", "may_alias"):
                v = a.get(key)
                out += [v] if isinstance(v, str) else list(v or [])
    for key in ("alias", "aliases"):
        v = spec.get(key)
        out += [v] if isinstance(v, str) else list(v or [])
    return out


def build_input(kernel: str, cfg: dict, corpus: Path, pick: str) -> tuple[dict, dict]:
    """Return (sentryward_input, index_entry)."""
    ptx, cu = find_kernel_files(corpus, kernel)
    if ptx is None:
        raise InputError(f"no .ptx in {corpus} defines .entry {kernel}")
    entries = ptx_entries(ptx.read_text(errors="replace"))
    ptx_params = entries[kernel]
    params_cfg = cfg.get("params", {}) or {}
    notes: list[str] = []
    dropped: list[str] = []

    if cu is not None:
        src_params = cu_signature(cu.read_text(errors="replace"), source_name(kernel))
        if len(src_params) != len(ptx_params):
            raise InputError(f"{kernel}: {cu.name} has {len(src_params)} parameters, PTX has {len(ptx_params)}")
    else:
        # No source: only positional keys (param_0, 0, ...) can be mapped.
        src_params = [{"name": p["name"], "pointer": None, "const": False} for p in ptx_params]
        notes.append("no .cu signature found; TOML keys must be PTX parameter names")

    names = [p["name"] for p in src_params]
    for key in params_cfg:
        if key not in names:
            raise InputError(f"{kernel}: parameter {key!r} of lark.toml is not in the signature {names}")

    # Aliasing classes: union-find over source names.
    parent = {n: n for n in names}

    def find(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for n in names:
        for other in _aliases(params_cfg.get(n, {}) or {}):
            if other in parent:
                parent[find(n)] = find(other)
            else:
                dropped.append(f"{n}: alias target {other!r} is not a parameter")

    declarations, arguments = [], []
    for idx, (src, pp) in enumerate(zip(src_params, ptx_params)):
        sname, pname, ptype = src["name"], pp["name"], pp["type"]
        spec = params_cfg.get(sname, {}) or {}
        is_pointer = src["pointer"] if src["pointer"] is not None else ("dtype" in spec or "len" in spec)
        if pp["array"] or ptype is None:
            dropped.append(f"{sname}: aggregate PTX parameter {pname} left undeclared")
            continue
        if is_pointer:
            if ptype not in ("u64", "b64", "s64"):
                raise InputError(f"{kernel}: pointer {sname} has PTX type {ptype}")
            declarations.append({"parameter": pname, "name": sname, "type": "pointer",
                                 "space": "global", "object": find(sname)})
            lost = ", ".join(f"{k}={spec[k]!r}" for k in ("dtype", "len") if k in spec)
            if lost:
                dropped.append(f"{sname}: {lost} (no extent/element type in SentryWard)")
            for a in (spec.get("assume", []) if isinstance(spec.get("assume", []), list) else [spec.get("assume")]):
                if not (isinstance(a, str) and _ALIAS_RE.match(a)) and not isinstance(a, dict):
                    dropped.append(f"{sname}: assume {a!r} (not expressible in SentryWard)")
            if "value" in spec or "range" in spec:
                dropped.append(f"{sname}: scalar value given for a pointer parameter")
        else:
            declarations.append({"parameter": pname, "name": sname, "type": ptype})
            if "value" in spec or "range" in spec:
                arguments.append({"parameter": pname, "type": ptype,
                                  "value": _scalar_value(spec, ptype, pick, sname, notes)})
            else:
                notes.append(f"{sname}: no value in lark.toml; left symbolic (SentryWard may answer unsupported)")
            for key in ("assume",):
                if key in spec:
                    dropped.append(f"{sname}: assume {spec[key]!r} (not expressible in SentryWard)")

    doc = {
        "schema": SCHEMA,
        "entry": kernel,
        "launch": {"grid_dim": _dim3(cfg.get("grid", [1, 1, 1]), f"{kernel}.grid"),
                   "block_dim": _dim3(cfg.get("block", [1, 1, 1]), f"{kernel}.block")},
        "declarations": declarations,
        "arguments": arguments,
    }
    index = {"ptx": str(ptx.relative_to(REPO)) if ptx.is_relative_to(REPO) else str(ptx),
             "cu": (str(cu.relative_to(REPO)) if cu.is_relative_to(REPO) else str(cu)) if cu else None,
             "params": {s["name"]: p["name"] for s, p in zip(src_params, ptx_params)},
             "notes": notes, "dropped": dropped}
    return doc, index


def dump(doc) -> str:
    """Two-space indented JSON with short scalar lists kept on one line."""
    text = json.dumps(doc, indent=2)
    return re.sub(r"\[\s*([^\[\]{}]*?)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]"
                  if m.group(1).strip() and "\"" not in m.group(1) else m.group(0), text) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--range-pick", choices=("lo", "hi", "mid"), default="hi",
                    help="value used for a scalar `range = [lo, hi]` (default: hi)")
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if a committed input differs from the generated one")
    ap.add_argument("kernels", nargs="*", help="only these kernels (default: all in lark.toml)")
    args = ap.parse_args(argv)

    try:
        kernels = load_corpus(args.corpus)
    except (InputError, tomllib.TOMLDecodeError) as e:
        print(f"make_inputs: {e}", file=sys.stderr)
        return 2
    selected = args.kernels or sorted(kernels)
    index, failures, stale = {}, 0, []
    if not args.check:
        args.out.mkdir(parents=True, exist_ok=True)
    for name in selected:
        if name not in kernels:
            print(f"make_inputs: {name}: not in lark.toml", file=sys.stderr)
            failures += 1
            continue
        try:
            doc, entry = build_input(name, kernels[name], args.corpus, args.range_pick)
        except (InputError, OSError, ValueError, TypeError, KeyError) as e:
            print(f"make_inputs: {name}: {e}", file=sys.stderr)
            failures += 1
            continue
        index[name] = entry
        target = args.out / f"{name}.json"
        if args.check:
            if not target.is_file() or target.read_text() != dump(doc):
                stale.append(name)
        else:
            target.write_text(dump(doc))
        extra = "; ".join(entry["notes"] + entry["dropped"])
        print(f"{name:32s} {entry['ptx']}" + (f"  [{extra}]" if extra else ""))
    if args.check:
        idx_path = args.out / "_index.json"
        if not args.kernels and (not idx_path.is_file() or idx_path.read_text() != dump(index)):
            stale.append("_index.json")
        if stale:
            print("make_inputs: stale inputs: " + ", ".join(stale), file=sys.stderr)
            return 1
    elif not args.kernels:
        (args.out / "_index.json").write_text(dump(index))
    print(f"{len(index)} input(s) {'checked' if args.check else 'written to ' + str(args.out)}, {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
