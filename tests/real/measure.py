#!/usr/bin/env python3
"""Measure LARK (and optionally SentryWard) on tests/real, tests/real/bugs and tests/index.

Runs `lark check --format json --kernel NAME` once per kernel entry and setup, compares the
verdicts with the <name>.meta.toml expectations, and prints the tables of tests/real/BASELINE.md:
verdict counts, outcome against the expectations, uncertified reasons grouped by kind, time per
kernel (median, maximum and total wall clock, and the CPU time of the process and its solvers: the
work done, whatever else the machine's cores were doing), unsupported instructions by opcode, and the findings on kernels
expected to be correct. Rerun it after the engine changes to get the same tables for the new build.

Setups ("modes"):
  none          the PTX (and its .cu, for line numbers) copied alone into a temporary directory:
                no lark.toml, every launch and size symbolic
  toml          the corpus's lark.toml (as a user would have it next to the kernels)
  toml-positional  the same lark.toml with parameters renamed to param_N by their position in
                the .cu signature; run only for C++ kernels in a namespace or with internal linkage
                (_ZN..., _ZL...), whose .cu parameter names LARK did not bind at the time of writing
  racy          tests/index only: racy/lark.toml (contents that make each kernel race or go OOB)
  toml-novalues tests/index only: lark.toml with `values`/`values_file` removed (what an engine
  racy-novalues that cannot read fixed contents sees; the index buffers are then unconstrained)

Usage:
  python3 tests/real/measure.py                          # LARK on everything, prints the tables
  python3 tests/real/measure.py --sentryward             # also SentryWard 0.1.1 (toml-equivalent inputs)
  python3 tests/real/measure.py --variants               # also the -O3 / sm_90 PTX in variants/
  python3 tests/real/measure.py --out r.json             # keep the raw results
  python3 tests/real/measure.py --reuse r.json --table-only   # print the tables from saved results
  python3 tests/real/measure.py --only 'vllm_' --corpus real --modes toml
  python3 tests/real/measure.py --lint                   # corpus consistency only (entries, tables, expectations)

Environment: LARK_BIN (default target/release/lark, or $CARGO_TARGET_DIR/release/lark).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests" / "compare"))
import make_inputs  # noqa: E402  (tests/compare/make_inputs.py: SentryWard kernel-input JSON)

CORPORA = {
    "real": {"dir": HERE, "modes": ["none", "toml", "toml-positional"]},
    "bugs": {"dir": HERE / "bugs", "modes": ["none", "toml", "toml-positional"]},
    "index": {"dir": REPO / "tests" / "index", "modes": ["none", "toml", "racy", "toml-novalues", "racy-novalues"]},
}
# The interface file of each mode, relative to the corpus directory (None: no interface at all).
MODE_TOML = {"none": None, "toml": "lark.toml", "toml-positional": "lark.toml", "racy": "racy/lark.toml", "toml-novalues": "lark.toml",
             "racy-novalues": "racy/lark.toml"}
# Which expectation (the `config` key of a [[expect]]; absent means lark.toml) a mode is judged by.
MODE_CONFIG = {"none": "lark.toml", "toml": "lark.toml", "toml-positional": "lark.toml", "racy": "racy/lark.toml", "toml-novalues": "lark.toml",
               "racy-novalues": "racy/lark.toml"}
FINDINGS = ("race", "barrier_divergence", "out_of_bounds")
VERDICT_ORDER = ["verified", "race", "barrier_divergence", "out_of_bounds", "uncertified", "error", "timeout"]


# --------------------------------------------------------------------------- discovery

def ptx_entries(text: str) -> list[str]:
    return re.findall(r"^\.visible\s+\.entry\s+([A-Za-z_$][\w$]*)\s*\(", text, flags=re.M)


def load_expectations(meta: Path) -> list[dict]:
    if not meta.is_file():
        return []
    return tomllib.loads(meta.read_text()).get("expect", [])


def discover(corpus: str, variants: bool, only: re.Pattern | None) -> list[dict]:
    """One item per (PTX file, entry): {corpus, ptx, cu, name, stem, variant, expect: {config: exp}}."""
    d = CORPORA[corpus]["dir"]
    items = []
    for ptx in sorted(d.glob("*.ptx")):
        stem = ptx.stem
        files = [(ptx, "sm80.O2")]
        if variants:
            files += [(d / "variants" / f"{stem}.{v}.ptx", v) for v in ("sm80.O3", "sm90.O2", "sm90.O3")]
        exps = load_expectations(d / f"{stem}.meta.toml")
        for path, variant in files:
            if not path.is_file():
                continue
            for name in ptx_entries(path.read_text()):
                if only and not (only.search(name) or only.search(stem)):
                    continue
                expect = {e.get("config", "lark.toml"): e for e in exps if e["kernel"] == name}
                items.append({"corpus": corpus, "ptx": path, "cu": d / f"{stem}.cu", "name": name, "stem": stem,
                              "variant": variant, "expect": expect})
    return items


# --------------------------------------------------------------------------- running lark

def run(cmd: list[str], timeout: float, cwd: Path | None = None) -> tuple[int | None, str, str, float]:
    """(returncode or None on timeout, stdout, stderr, wall seconds); kills the whole process group.
    The CPU time the command used (its own and its solvers', user + system) is in LAST_CPU_S."""
    global LAST_CPU_S
    t0 = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, start_new_session=True, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        rc = None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU_S = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return rc, out, err, time.monotonic() - t0


# CPU seconds of the last `run` (see there): the work a check did, which wall time shows only as
# far as the machine's cores were free for it.
LAST_CPU_S = 0.0


def strip_values(toml_path: Path, out_path: Path) -> None:
    """Copy of a lark.toml without `values = [...]` / `values_file = ...` in buffer tables."""
    text = toml_path.read_text()
    text = re.sub(r",\s*values\s*=\s*\[[^\]]*\]", "", text)
    text = re.sub(r",\s*values_file\s*=\s*\"[^\"]*\"", "", text)
    out_path.write_text(text)


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise ValueError(f"cannot write {v!r} as TOML")


def positional_toml(item: dict, toml_path: Path, out_path: Path) -> str | None:
    """The kernel's table of toml_path with parameters keyed param_N (position in the .cu signature)."""
    cfg = tomllib.loads(toml_path.read_text()).get("kernel", {}).get(item["name"])
    if cfg is None or not item["cu"].is_file():
        return "kernel or .cu not found"
    sig = make_inputs.cu_signature(item["cu"].read_text(errors="replace"), _source_name(item["name"]))
    if sig is None:
        return "no .cu signature"
    position = {p["name"]: i for i, p in enumerate(sig)}
    lines = [f"[kernel.{item['name']}]"]
    for k, v in cfg.items():
        if k != "params":
            lines.append(f"{k} = {toml_value(v)}")
    lines.append(f"[kernel.{item['name']}.params]")
    for k, v in (cfg.get("params") or {}).items():
        lines.append(f"param_{position[k]} = {toml_value(v)}" if k in position else f"{k} = {toml_value(v)}")
    out_path.write_text("\n".join(lines) + "\n")
    return None


def opcode_at(ptx_text: str, span) -> str | None:
    if not span:
        return None
    inst = ptx_text[span[0]:span[1]].strip()
    inst = re.sub(r"^@!?%\w+\s+", "", inst)
    m = re.match(r"([a-z][\w.:]*)", inst)
    return m.group(1) if m else None


def lark_one(lark: str, item: dict, mode: str, timeout: float, scratch: Path) -> dict:
    corpus_dir = CORPORA[item["corpus"]]["dir"]
    ptx = item["ptx"]
    cmd_tail = ["--format", "json", "--kernel", item["name"]]
    if mode == "none":
        # The PTX and its .cu alone in a fresh directory: no lark.toml anywhere above it.
        tmp = Path(tempfile.mkdtemp(dir=scratch))
        shutil.copy(ptx, tmp / ptx.name)
        if item["cu"].is_file():
            shutil.copy(item["cu"], tmp / item["cu"].name)
        cmd = [lark, "check", str(tmp / ptx.name)] + cmd_tail
    else:
        toml = corpus_dir / MODE_TOML[mode]
        if mode == "toml-positional":
            positional = scratch / f"{item['corpus']}-{item['stem']}-{item['variant']}-{item['name'][:80]}.toml"
            problem = positional_toml(item, toml, positional)
            if problem:
                return {"tool": "lark", "corpus": item["corpus"], "stem": item["stem"], "name": item["name"], "variant": item["variant"],
                        "mode": mode, "wall_ms": 0.0, "findings": [], "uncertified": [], "notes": [], "verdict": "error",
                        "detail": f"positional lark.toml: {problem}"}
            toml = positional
        if mode.endswith("-novalues"):
            stripped = scratch / f"{item['corpus']}-{mode}.toml"
            if not stripped.exists():
                strip_values(toml, stripped)
            toml = stripped
        cmd = [lark, "check", str(ptx), "--interface", str(toml)] + cmd_tail
    rc, out, err, wall = run(cmd, timeout)
    res = {"tool": "lark", "corpus": item["corpus"], "stem": item["stem"], "name": item["name"], "variant": item["variant"],
           "mode": mode, "wall_ms": round(wall * 1000, 1), "cpu_ms": round(LAST_CPU_S * 1000, 1), "findings": [], "uncertified": [],
           "notes": []}
    if rc is None:
        res.update(verdict="timeout", detail=f"killed after {timeout:.0f} s")
        return res
    try:
        doc = json.loads(out)
        kernels = [k for k in doc.get("kernels", []) if k["name"] == item["name"]]
    except json.JSONDecodeError:
        doc, kernels = {}, []
    if not kernels:
        msg = (err.strip() or out.strip() or f"exit {rc}").splitlines()
        res.update(verdict="error", detail=msg[-1][:300] if msg else f"exit {rc}")
        return res
    k = kernels[0]
    ptx_text = ptx.read_text()
    res["verdict"] = k["verdict"]
    res["engine_ms"] = round(k.get("stats", {}).get("millis", 0.0), 1)
    res["stats"] = k.get("stats", {})
    res["notes"] = k.get("notes", [])
    for f in k.get("findings", []):
        lines = sorted({a["line"] for a in f.get("accesses", []) if a.get("line_kind") == "cu" and a.get("line")})
        if f.get("barrier") and f["barrier"].get("line_kind") == "cu":
            lines = sorted(set(lines) | {f["barrier"]["line"]})
        res["findings"].append({"kind": f["kind"], "lines": lines, "message": f["message"][:400], "replayed": f.get("replayed")})
    for u in k.get("uncertified", []):
        loc = u.get("location") or {}
        res["uncertified"].append({"reason": u.get("reason") or u.get("kind", "?"), "line": loc.get("line"), "opcode": opcode_at(ptx_text, loc.get("ptx_span"))})
    return res


# --------------------------------------------------------------------------- running SentryWard

SW_MAP = {"race_free": "verified", "verified": "verified", "potential_race": "race", "not_wellsynced": "barrier_divergence",
          "timeout": "timeout"}
SW_INCONCLUSIVE = {"unsupported", "equivalence_not_proven", "analysis_budget_exceeded", "memory_budget_exceeded", "allocation_failed",
                   "invalid_lifecycle"}
SW_SHAPE_TYPES = {"i32": "s32", "u32": "u32", "i64": "s64", "u64": "u64"}


_MAKE_INPUTS_SOURCE_NAME = make_inputs.source_name


def _source_name(kernel: str) -> str:
    """make_inputs.source_name, also for internal-linkage kernels (_ZL...)."""
    return _MAKE_INPUTS_SOURCE_NAME(re.sub(r"^_ZL", "_Z", kernel))


def sentryward_input(item: dict, mode: str) -> tuple[dict | None, str]:
    corpus_dir = CORPORA[item["corpus"]]["dir"]
    committed = corpus_dir / "sentryward" / (f"{item['name']}.json" if mode == "toml" else f"{item['name']}.racy.json")
    if committed.is_file():
        return json.loads(committed.read_text()), f"committed {committed.relative_to(REPO)}"
    toml_path = corpus_dir / MODE_TOML[mode]
    cfg = tomllib.loads(toml_path.read_text()).get("kernel", {}).get(item["name"])
    if cfg is None:
        return None, "kernel not in lark.toml"
    saved = make_inputs.source_name
    make_inputs.source_name = _source_name
    try:
        doc, index = make_inputs.build_input(item["name"], cfg, corpus_dir, "hi")
    except make_inputs.InputError as e:
        return None, f"make_inputs: {e}"
    finally:
        make_inputs.source_name = saved
    # Fixed index-buffer contents become shape_arrays (flattened row-major, 32/64-bit ints only).
    shapes, lost = [], []
    for src, pname in index["params"].items():
        spec = (cfg.get("params") or {}).get(src) or {}
        values = spec.get("values")
        if "values_file" in spec:  # a JSON list of numbers, relative to the lark.toml
            values = json.loads((toml_path.parent / spec["values_file"]).read_text())
        if values is not None:
            if spec.get("dtype") in SW_SHAPE_TYPES and all(v >= 0 for v in values):
                shapes.append({"parameter": pname, "element_type": SW_SHAPE_TYPES[spec["dtype"]], "shapes": [[v] for v in values]})
            else:
                lost.append(src)
    if shapes:
        doc["shape_arrays"] = shapes
    return doc, "generated" + (f"; contents of {', '.join(lost)} not expressible" if lost else "")


def sentryward_one(item: dict, mode: str, timeout: float, scratch: Path) -> dict:
    res = {"tool": "sentryward", "corpus": item["corpus"], "stem": item["stem"], "name": item["name"], "variant": item["variant"],
           "mode": mode, "findings": [], "uncertified": [], "notes": []}
    doc, how = sentryward_input(item, mode)
    res["input"] = how
    if doc is None:
        res.update(verdict="error", wall_ms=0.0, detail=how)
        return res
    inp = scratch / f"sw-{item['corpus']}-{mode}-{item['name']}.json"
    inp.write_text(json.dumps(doc))
    rc, out, err, wall = run(["sentryward", str(item["ptx"]), "--input", str(inp), "--timeout", str(int(timeout))], timeout + 10)
    res["wall_ms"] = round(wall * 1000, 1)
    if rc is None:
        res.update(verdict="timeout", raw="killed")
        return res
    try:
        d = json.loads(out)
    except json.JSONDecodeError:
        res.update(verdict="error", raw="no JSON", detail=(err or out)[-300:])
        return res
    raw = d.get("result", "?")
    res["raw"] = raw
    res["verdict"] = SW_MAP.get(raw, "uncertified" if raw in SW_INCONCLUSIVE else "error")
    diags = d.get("diagnostics") or []
    if diags:
        res["detail"] = f"{diags[0].get('code')}: {diags[0].get('message', '')[:200]}"
        if res["verdict"] == "uncertified":
            res["uncertified"].append({"reason": diags[0].get("code", raw), "line": None, "opcode": None})
    for r in d.get("races") or []:
        lines = sorted({r[s]["location"]["line"] for s in ("first", "second") if r.get(s, {}).get("location")})
        res["findings"].append({"kind": "race", "lines": lines, "message": "potential_race"})
    return res


# --------------------------------------------------------------------------- judging

def judge(res: dict, expect: dict) -> str:
    """correct | caught_other_lines | false_alarm | finding_unconstrained | wrong_kind | missed | undecided | no_expectation."""
    exp = expect.get(MODE_CONFIG[res["mode"]])
    if exp is None:
        return "no_expectation"
    got = res["verdict"]
    if got not in FINDINGS and got != "verified":
        return "undecided"
    if exp["verdict"] == "verified":
        if got == "verified":
            return "correct"
        # Without an interface (or without the index contents), launches and inputs the kernel was not
        # written for are in scope (a block wider than its shared arrays, a partial warp, duplicate
        # slots): such a finding can be true, so it is counted apart from false alarms.
        return "finding_unconstrained" if res["mode"] == "none" or res["mode"].endswith("-novalues") else "false_alarm"
    if got == "verified":
        return "missed"
    if got != exp["verdict"]:
        return "wrong_kind"
    want = set(exp.get("lines", []))
    if not want or any(set(f["lines"]) == want or want <= set(f["lines"]) for f in res["findings"] if f["kind"] == got):
        return "correct"
    return "caught_other_lines"


# --------------------------------------------------------------------------- reporting

def reason_group(reason: str) -> str:
    if re.match(r"unsupported: unknown instruction", reason):
        return "unsupported instruction"
    if reason.startswith("unsupported:"):
        return "unsupported: " + re.sub(r"`[^`]*`", "`…`", reason[len("unsupported:"):].strip())
    if "solver gave up" in reason or "timeout" in reason:
        return "SMT query timed out (" + ("bounds" if "bounds" in reason else "race" if "race" in reason else "other") + ")"
    if "did not reproduce" in reason:
        kind = "out-of-bounds" if "out-of-bounds" in reason else "race" if "race" in reason else "divergence"
        return f"possible {kind} the interpreter did not reproduce (over-approximation)"
    text = re.sub(r"`[^`]*`", "`…`", reason)
    return re.sub(r"\d+", "N", text)


def error_group(detail: str) -> str:
    """An error message without paths and kernel/parameter names, so that equal causes count together."""
    text = re.sub(r"(?:[^\s:/]*/)+([^\s:/]+)", r"\1", detail)
    text = re.sub(r"kernel\.[\w$]+(\.params\.[\w$]+)?", "kernel.…", text)
    return re.sub(r"^lark: [^:]+\.ptx: ", "", text)[:160]


THREAD_RE = re.compile(r"thread \((\d+),(\d+),(\d+)\)/\((\d+),(\d+),(\d+)\)")


def finding_cause(message: str) -> str:
    """Why a finding exists when launches are unconstrained, from the two threads it names."""
    if "which has exited" in message:
        return "shuffle/vote mask names an exited lane"
    if "not a thread of the block" in message:
        return "partial warp (block size not a multiple of 32)"
    t = [tuple(map(int, m)) for m in THREAD_RE.findall(message)]
    if len(t) >= 2:
        (a, b) = t[0], t[1]
        if a[0] == b[0] and a[3:] == b[3:] and a[1:3] != b[1:3]:
            return "blocks differing only in blockIdx.y/z (kernel indexes by blockIdx.x)"
        if a[:3] == b[:3] and a[3] == b[3] and a[4:] != b[4:]:
            return "threads differing only in threadIdx.y/z (kernel indexes by threadIdx.x)"
        if a[:3] == b[:3]:
            return "same block, other threads (e.g. block wider than a shared array)"
        return "different blocks"
    return "other"


def md_table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def fmt_ms(ms: float) -> str:
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.0f} ms"


def report(all_results: list[dict], items: list[dict]) -> str:
    """The tables; all but the variants table are about the main PTX (sm_80, -O2)."""
    by_key = {(i["corpus"], i["name"], i["variant"]): i for i in items}
    results = [r for r in all_results if r["variant"] == "sm80.O2"]
    out = []
    groups = defaultdict(list)
    for r in results:
        groups[(r["tool"], r["corpus"], r["mode"])].append(r)
    keys = sorted(groups, key=lambda k: (k[0] != "lark", list(CORPORA).index(k[1]), list(MODE_TOML).index(k[2])))

    out.append("### Verdicts (sm_80, -O2)\n")
    rows = []
    for k in keys:
        c = Counter(r["verdict"] for r in groups[k])
        rows.append([k[0], k[1], k[2], len(groups[k])] + [c.get(v, 0) for v in VERDICT_ORDER])
    out.append(md_table(["tool", "corpus", "setup", "kernels"] + VERDICT_ORDER, rows))

    out.append("\n### Against the expectations\n")
    outcomes = ["correct", "caught_other_lines", "false_alarm", "finding_unconstrained", "wrong_kind", "missed", "undecided", "no_expectation"]
    rows = []
    for k in keys:
        c = Counter(judge(r, by_key[(r["corpus"], r["name"], r["variant"])]["expect"]) for r in groups[k])
        rows.append([k[0], k[1], k[2]] + [c.get(o, 0) for o in outcomes])
    out.append(md_table(["tool", "corpus", "setup"] + outcomes, rows))

    out.append("\n### Time per kernel (wall clock of one `check --kernel` process; CPU: the process and its solvers, user + system)\n")
    rows = []
    for k in keys:
        ws = [r["wall_ms"] for r in groups[k] if r["verdict"] not in ("error",)]
        if not ws:
            continue
        slow = max(groups[k], key=lambda r: r["wall_ms"])
        # CPU time (the process and its solvers) where the results have it (older saved runs do not).
        cpus = [r["cpu_ms"] for r in groups[k] if r["verdict"] not in ("error",) and "cpu_ms" in r]
        cpu = f"{fmt_ms(statistics.median(cpus))} / {fmt_ms(sum(cpus))}" if cpus else "-"
        rows.append([k[0], k[1], k[2], fmt_ms(statistics.median(ws)), fmt_ms(max(ws)), fmt_ms(sum(ws)), cpu, f"{slow['name'][:60]}"])
    out.append(md_table(["tool", "corpus", "setup", "median", "max", "total", "CPU median / total", "slowest kernel"], rows))

    lark_res = [r for r in results if r["tool"] == "lark"]
    out.append("\n### Uncertified reasons (LARK), by kind: kernels affected / sites\n")
    kernels_by, sites_by = defaultdict(set), Counter()
    for r in lark_res:
        if r["verdict"] != "uncertified":
            continue
        for u in r["uncertified"]:
            g = reason_group(u["reason"])
            kernels_by[g].add((r["corpus"], r["mode"], r["name"], r["variant"]))
            sites_by[g] += 1
    modes_present = sorted({r["mode"] for r in lark_res}, key=list(MODE_TOML).index)
    rows = []
    for g in sorted(kernels_by, key=lambda g: (-len(kernels_by[g]), g)):
        per_mode = Counter(m for (_, m, _, _) in kernels_by[g])
        rows.append([g, len(kernels_by[g]), sites_by[g]] + [per_mode.get(m, 0) for m in modes_present])
    out.append(md_table(["reason", "kernels", "sites"] + [f"kernels ({m})" for m in modes_present], rows) if rows else "(none)")

    out.append("\n### Unsupported instructions (LARK), by opcode: sites / kernels\n")
    op_sites, op_kernels = Counter(), defaultdict(set)
    seen = set()
    for r in lark_res:
        for u in r["uncertified"]:
            if not u["reason"].startswith("unsupported"):
                continue
            key = (r["corpus"], r["name"], r["variant"], u.get("line"), u.get("opcode"), u["reason"])
            if key in seen:  # the same site is reported in every setup; count it once
                continue
            seen.add(key)
            op = u.get("opcode") or re.sub(r"^unsupported:\s*", "", u["reason"])
            op_sites[op] += 1
            op_kernels[op].add((r["corpus"], r["name"]))
    rows = [[f"`{op}`", op_sites[op], len(op_kernels[op])] for op in sorted(op_sites, key=lambda o: (-op_sites[o], o))]
    out.append(md_table(["opcode", "sites", "kernels"], rows) if rows else "(none)")

    out.append("\n### Findings on kernels expected to be correct (LARK): false alarms, and findings under missing facts (setup none / -novalues)\n")
    rows = []
    for r in sorted(lark_res, key=lambda r: (r["mode"] == "none" or r["mode"].endswith("-novalues"), r["corpus"], r["mode"], r["name"], r["variant"])):
        if judge(r, by_key[(r["corpus"], r["name"], r["variant"])]["expect"]) not in ("false_alarm", "finding_unconstrained"):
            continue
        f = r["findings"][0] if r["findings"] else {"message": ""}
        rows.append([r["corpus"], r["mode"], r["variant"], f"`{r['name'][:48]}`", r["verdict"], f["message"][:160].replace("|", "/")])
    out.append(md_table(["corpus", "setup", "variant", "kernel", "verdict", "first finding"], rows) if rows else "(none)")

    out.append("\n### Findings under missing facts (LARK, setups none / -novalues), by the shape of the witness\n")
    causes = Counter()
    for r in lark_res:
        if judge(r, by_key[(r["corpus"], r["name"], r["variant"])]["expect"]) == "finding_unconstrained" and r["findings"]:
            causes[(r["mode"], finding_cause(r["findings"][0]["message"]))] += 1
    rows = [[m, c, n] for (m, c), n in sorted(causes.items(), key=lambda x: (x[0][0], -x[1]))]
    out.append(md_table(["setup", "cause", "kernels"], rows) if rows else "(none)")

    out.append("\n### Interfaces LARK did not bind\n")
    unbound = sorted({(r["corpus"], r["name"]) for r in lark_res if r["mode"] != "none" and any("is not a parameter of this kernel" in n for n in r["notes"])})
    errors = Counter((r["corpus"], r["mode"], error_group(r.get("detail", ""))) for r in lark_res if r["verdict"] == "error")
    out.append(f"- kernels whose lark.toml parameters were reported as 'not a parameter of this kernel': {len(unbound)}"
               + (" (" + ", ".join(f"`{n[:40]}`" for _, n in unbound) + ")" if unbound else ""))
    for (c, m, d), n in sorted(errors.items()):
        out.append(f"- {c}/{m}: {n} kernel(s) not checked: {d}")

    variants = defaultdict(dict)
    for r in all_results:
        if r["tool"] != "lark":
            continue
        variants[(r["corpus"], r["mode"], r["name"])][r["variant"]] = r["verdict"]
    multi = {k: v for k, v in variants.items() if len(v) > 1}
    if multi:
        out.append("\n### Compiler variants (LARK): the same kernel at sm80/sm90 x -O2/-O3\n")
        differ = {k: v for k, v in multi.items() if len(set(v.values())) > 1}
        out.append(f"- kernels checked in more than one variant: {len(multi)}; same verdict in every variant: {len(multi) - len(differ)}")
        rows = [[c, m, f"`{n[:50]}`"] + [v.get(x, "") for x in ("sm80.O2", "sm80.O3", "sm90.O2", "sm90.O3")]
                for (c, m, n), v in sorted(differ.items())]
        if rows:
            out.append("")
            out.append(md_table(["corpus", "setup", "kernel", "sm80.O2", "sm80.O3", "sm90.O2", "sm90.O3"], rows))
        per_variant = defaultdict(Counter)
        for v in multi.values():
            for x, verdict in v.items():
                per_variant[x][verdict] += 1
        out.append("")
        out.append(md_table(["variant"] + VERDICT_ORDER, [[x] + [per_variant[x].get(vd, 0) for vd in VERDICT_ORDER] for x in sorted(per_variant)]))

    sw = [r for r in results if r["tool"] == "sentryward"]
    if sw:
        out.append("\n### SentryWard raw results\n")
        rows = []
        for k in sorted({(r["corpus"], r["mode"]) for r in sw}, key=lambda k: (list(CORPORA).index(k[0]), list(MODE_TOML).index(k[1]))):
            c = Counter(r.get("raw", r["verdict"]) for r in sw if (r["corpus"], r["mode"]) == k)
            rows.append([k[0], k[1], ", ".join(f"{v}: {n}" for v, n in sorted(c.items(), key=lambda x: -x[1]))])
        out.append(md_table(["corpus", "setup", "results"], rows))
        causes = Counter(r.get("detail", "").split(":")[0] for r in sw if r["verdict"] in ("uncertified", "error"))
        out.append("\nSentryWard inconclusive/error causes: " + ", ".join(f"{c or '?'} ({n})" for c, n in causes.most_common()))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- main

def lint() -> list[str]:
    """Consistency of the corpus files themselves: entries, interfaces, expectations, contents."""
    problems = []
    for corpus, spec in CORPORA.items():
        d = spec["dir"]
        tomls = {"lark.toml": d / "lark.toml"}
        if (d / "racy" / "lark.toml").is_file():
            tomls["racy/lark.toml"] = d / "racy" / "lark.toml"
        tables = {}
        for cfg, path in tomls.items():
            try:
                tables[cfg] = tomllib.loads(path.read_text()).get("kernel", {})
            except (OSError, tomllib.TOMLDecodeError) as e:
                problems.append(f"{path.relative_to(REPO)}: {e}")
                tables[cfg] = {}
        entries = set()
        for item in discover(corpus, True, None):
            entries.add(item["name"])
            where = f"{item['ptx'].relative_to(REPO)}: {item['name']}"
            if item["variant"] != "sm80.O2":
                continue
            if not item["cu"].is_file():
                problems.append(f"{where}: no {item['cu'].name}")
                continue
            n_lines = len(item["cu"].read_text().splitlines())
            for cfg, table in tables.items():
                if item["name"] not in table:
                    problems.append(f"{where}: no table in {cfg}")
                if cfg not in item["expect"]:
                    problems.append(f"{where}: no [[expect]] for {cfg} in {item['stem']}.meta.toml")
            for cfg, exp in item["expect"].items():
                if exp.get("verdict") not in ("verified",) + FINDINGS:
                    problems.append(f"{where}: unknown verdict {exp.get('verdict')!r}")
                if exp.get("verdict") in FINDINGS and not exp.get("lines"):
                    problems.append(f"{where}: a {exp['verdict']} expectation needs lines")
                if any(not 1 <= line <= n_lines for line in exp.get("lines", [])):
                    problems.append(f"{where}: expected lines {exp['lines']} outside {item['cu'].name} ({n_lines} lines)")
        for cfg, table in tables.items():
            for name, k in table.items():
                if name not in entries:
                    problems.append(f"{corpus}/{cfg}: kernel.{name} is not an entry of any PTX here")
                for pname, pspec in (k.get("params") or {}).items():
                    values = pspec.get("values")
                    if "values_file" in pspec:
                        f = tomls[cfg].parent / pspec["values_file"]
                        values = json.loads(f.read_text()) if f.is_file() else None
                        if values is None:
                            problems.append(f"{corpus}/{cfg}: kernel.{name}.{pname}: {pspec['values_file']} not found")
                    if values is not None and pspec.get("len") != len(values):
                        problems.append(f"{corpus}/{cfg}: kernel.{name}.{pname}: len {pspec.get('len')} but {len(values)} values")
        for f in sorted((d / "sentryward").glob("*.json")) if (d / "sentryward").is_dir() else []:
            doc = json.loads(f.read_text())
            if doc.get("entry") not in entries:
                problems.append(f"{f.relative_to(REPO)}: entry {doc.get('entry')!r} is not in the PTX")
    return problems


def default_lark() -> str:
    if os.environ.get("LARK_BIN"):
        return os.environ["LARK_BIN"]
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str(target / "release" / "lark")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lark", default=default_lark(), help="the lark binary (default: $LARK_BIN or target/release/lark)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per kernel and tool (default 60)")
    ap.add_argument("--corpus", default=",".join(CORPORA), help="comma-separated: real,bugs,index")
    ap.add_argument("--modes", default=None, help="comma-separated setups (default: all of each corpus)")
    ap.add_argument("--variants", action="store_true", help="also the variants/ PTX (-O3, sm_90)")
    ap.add_argument("--sentryward", action="store_true", help="also run SentryWard on the toml-equivalent inputs")
    ap.add_argument("--only", default=None, help="regex on kernel or file names")
    ap.add_argument("--out", type=Path, default=None, help="write the raw results (JSON) here")
    ap.add_argument("--reuse", type=Path, default=None, help="results JSON to reuse; only missing runs are made")
    ap.add_argument("--table-only", action="store_true", help="with --reuse: run nothing, print the tables")
    ap.add_argument("--lint", action="store_true", help="only check the corpus files for consistency (no tools run)")
    args = ap.parse_args(argv)

    if args.lint:
        problems = lint()
        for p in problems:
            print(f"measure.py: {p}", file=sys.stderr)
        print(f"{len(problems)} problem(s) in the corpus files")
        return 1 if problems else 0

    only = re.compile(args.only) if args.only else None
    corpora = [c for c in args.corpus.split(",") if c]
    for c in corpora:
        if c not in CORPORA:
            print(f"measure.py: unknown corpus {c!r} (expected {', '.join(CORPORA)})", file=sys.stderr)
            return 2
    items = [i for c in corpora for i in discover(c, args.variants, only)]
    previous = {}
    if args.reuse and args.reuse.is_file():
        for r in json.loads(args.reuse.read_text())["results"]:
            previous[(r["tool"], r["corpus"], r["name"], r["variant"], r["mode"])] = r
    if not args.table_only and not Path(args.lark).is_file():
        print(f"measure.py: lark binary not found at {args.lark} (build it with cargo build --release -p lark, or set LARK_BIN)", file=sys.stderr)
        return 2
    if args.sentryward and not args.table_only and shutil.which("sentryward") is None:
        print("measure.py: sentryward not found (pip install sentryward==0.1.1)", file=sys.stderr)
        return 2

    results = []
    with tempfile.TemporaryDirectory(prefix="lark-measure-") as scratch_dir:
        scratch = Path(scratch_dir)
        for n, item in enumerate(items, 1):
            modes = CORPORA[item["corpus"]]["modes"]
            if args.modes:
                modes = [m for m in modes if m in args.modes.split(",")]
            if not re.match(r"_Z[NL]", item["name"]):
                modes = [m for m in modes if m != "toml-positional"]
            jobs = [("lark", m) for m in modes]
            if args.sentryward and item["variant"] == "sm80.O2":
                jobs += [("sentryward", m) for m in modes if m in ("toml", "racy")]
            for tool, mode in jobs:
                key = (tool, item["corpus"], item["name"], item["variant"], mode)
                if key in previous:
                    results.append(previous[key])
                    continue
                if args.table_only:
                    continue
                r = lark_one(args.lark, item, mode, args.timeout, scratch) if tool == "lark" else sentryward_one(item, mode, args.timeout, scratch)
                results.append(r)
                print(f"[{n}/{len(items)}] {tool:10s} {item['corpus']}/{mode:13s} {item['variant']} {item['name'][:50]:50s} "
                      f"{r['verdict']:18s} {fmt_ms(r['wall_ms'])}", file=sys.stderr, flush=True)
                if args.out:  # keep partial results, so an interrupted run can be resumed with --reuse
                    args.out.write_text(json.dumps({"lark": args.lark, "results": results}, indent=1) + "\n")
    if args.out:  # everything measured so far: this run's results and the reused ones it did not select
        done = {(r["tool"], r["corpus"], r["name"], r["variant"], r["mode"]) for r in results}
        kept = [r for k, r in previous.items() if k not in done]
        args.out.write_text(json.dumps({"lark": args.lark, "results": results + kept}, indent=1) + "\n")
    print(report(results, items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
