#!/usr/bin/env python3
"""Side-by-side comparison of LARK and SentryWard on the corpus.

For every `[[expect]]` entry of tests/corpus/*.meta.toml this runs

  sentryward FILE.ptx --input tests/compare/inputs/NAME.json
  $LARK_BIN check FILE.ptx --kernel NAME --input tests/compare/inputs/NAME.json --format json

N times each (--repeat, default 3), timing each whole process with
time.perf_counter, and reports the median. Prints a table, the accuracy of each
tool (verdict kind vs the expected one) and the median times/ratio, and writes
everything to tests/compare/out/results.json.

Verdict mapping (SentryWard `result` -> ours), see SENTRYWARD.md:
  race_free, verified                   -> verified
  potential_race                        -> race
  not_wellsynced                        -> barrier_divergence
  invalid_lifecycle                     -> lifecycle      (no counterpart: never correct)
  unsupported, equivalence_not_proven,
  analysis_budget_exceeded,
  memory_budget_exceeded,
  allocation_failed                     -> inconclusive
  timeout                               -> timeout
  invalid_input, missing_input,
  tool_failure, unparsable output       -> error
SentryWard has no out-of-bounds check, so it can never be right on an
out_of_bounds kernel (it usually answers race_free there).

ratio = sentryward_ms / lark_ms (> 1 means LARK is faster). Runs that errored or
timed out are left out of the median times and of the ratios.

Exit status: 0 after a completed comparison, 2 when a tool is missing
(LARK binary absent without --only-sentryward, or sentryward not installed)
or the corpus has no expectations.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from make_inputs import find_kernel_files  # noqa: E402

KINDS = ("verified", "race", "barrier_divergence", "out_of_bounds")
INCOMPLETE = ("error", "timeout")  # excluded from median times and ratios

SENTRYWARD_MAP = {
    "race_free": "verified",
    "verified": "verified",
    "potential_race": "race",
    "not_wellsynced": "barrier_divergence",
    "invalid_lifecycle": "lifecycle",
    "unsupported": "inconclusive",
    "equivalence_not_proven": "inconclusive",
    "analysis_budget_exceeded": "inconclusive",
    "memory_budget_exceeded": "inconclusive",
    "allocation_failed": "inconclusive",
    "timeout": "timeout",
    "invalid_input": "error",
    "missing_input": "error",
    "tool_failure": "error",
}

# Accept a few spellings LARK might use for the same verdict kinds.
LARK_ALIASES = {
    "verified": "verified", "clean": "verified", "ok": "verified", "safe": "verified", "pass": "verified",
    "race": "race", "data_race": "race", "races": "race", "potential_race": "race",
    "barrier_divergence": "barrier_divergence", "divergence": "barrier_divergence",
    "barrier_divergent": "barrier_divergence", "divergent_barrier": "barrier_divergence",
    "out_of_bounds": "out_of_bounds", "oob": "out_of_bounds", "bounds": "out_of_bounds",
    "unknown": "inconclusive", "inconclusive": "inconclusive", "unsupported": "inconclusive",
    "uncertified": "inconclusive",
    "timeout": "timeout", "error": "error",
}


def norm_lark(word) -> str | None:
    if not isinstance(word, str):
        return None
    w = word.strip().lower().replace("-", "_").replace(" ", "_")
    return LARK_ALIASES.get(w, w)


# --------------------------------------------------------------------------- running

def _kill_group(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _sigterm(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run_once(cmd: list[str], timeout: float) -> dict:
    """Run cmd in its own session; on timeout kill the whole group (SentryWard forks a native child)."""
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                                start_new_session=True)
    except OSError as e:
        return {"rc": None, "ms": 0.0, "stdout": "", "stderr": str(e), "timed_out": False, "spawn_error": True}
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        timed_out = True
    except BaseException:  # Ctrl-C / SIGTERM: don't leave the native checker running
        _kill_group(proc)
        proc.wait()
        raise
    ms = (time.perf_counter() - start) * 1000.0
    return {"rc": proc.returncode, "ms": ms, "stdout": out.decode(errors="replace"),
            "stderr": err.decode(errors="replace"), "timed_out": timed_out, "spawn_error": False}


def _tail(text: str, n: int = 400) -> str:
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def interpret_sentryward(run: dict) -> dict:
    if run["spawn_error"]:
        return {"verdict": "error", "raw": None, "detail": run["stderr"]}
    if run["timed_out"]:
        return {"verdict": "timeout", "raw": None, "detail": "killed after per-run timeout"}
    try:
        doc = json.loads(run["stdout"])
        raw = doc["result"]
    except (ValueError, KeyError, TypeError):
        return {"verdict": "error", "raw": None,
                "detail": f"rc={run['rc']}, unparsable output: {_tail(run['stdout'] or run['stderr'])}"}
    diags = doc.get("diagnostics") or []
    detail = "; ".join(f"{d.get('code')}: {d.get('message', '')}" for d in diags[:2] if isinstance(d, dict))
    lines = set()
    for race in doc.get("races") or []:
        for side in ("first", "second"):
            loc = (race.get(side) or {}).get("location") or {}
            if isinstance(loc.get("line"), int):
                lines.add(loc["line"])
    if raw == "not_wellsynced":  # lines of the events left blocked (the barrier not all threads reach)
        event_line = {e.get("event"): e.get("line") for e in doc.get("source_events") or [] if isinstance(e, dict)}
        blocked = ((doc.get("rejection") or {}).get("blocked") or {}).get("events") or []
        lines |= {event_line[e] for e in blocked if isinstance(event_line.get(e), int)}
    return {"verdict": SENTRYWARD_MAP.get(raw, "error"), "raw": raw, "detail": detail,
            "lines": sorted(lines), "checks": doc.get("checks"),
            "internal_seconds": doc.get("pipeline_elapsed_seconds")}


def _lines(obj) -> set[int]:
    """Every integer found under a "line" key (or in a "lines" list) inside a finding."""
    out = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "line" and isinstance(v, int):
                out.add(v)
            elif k == "lines" and isinstance(v, list):
                out |= {x for x in v if isinstance(x, int)}
            else:
                out |= _lines(v)
    elif isinstance(obj, list):
        for v in obj:
            out |= _lines(v)
    return out


def interpret_lark(run: dict, kernel: str) -> dict:
    if run["spawn_error"]:
        return {"verdict": "error", "raw": None, "detail": run["stderr"]}
    if run["timed_out"]:
        return {"verdict": "timeout", "raw": None, "detail": "killed after per-run timeout"}
    if run["rc"] not in (0, 1):
        return {"verdict": "error", "raw": None,
                "detail": f"exit {run['rc']}: {_tail(run['stderr'] or run['stdout'])}"}
    try:
        doc = json.loads(run["stdout"])
        entries = doc["kernels"]
        entry = next((k for k in entries if k.get("name") == kernel), None)
        if entry is None and len(entries) == 1:
            entry = entries[0]
        if entry is None:
            raise KeyError(kernel)
    except (ValueError, KeyError, TypeError, StopIteration):
        return {"verdict": "error", "raw": None,
                "detail": f"exit {run['rc']}, unparsable output: {_tail(run['stdout'] or run['stderr'])}"}
    raw = entry.get("verdict")
    findings = entry.get("findings") or []
    verdict = norm_lark(raw)
    if verdict not in KINDS + ("inconclusive", "timeout", "error"):
        # Unknown verdict word: fall back to the first finding's kind, else clean.
        verdict = norm_lark(findings[0].get("kind")) if findings else ("verified" if run["rc"] == 0 else verdict)
    lines = sorted({x for f in findings for x in _lines(f)})
    kinds = sorted({norm_lark(f.get("kind")) or "?" for f in findings})
    detail = ",".join(kinds)
    unc = entry.get("uncertified") or []
    if verdict == "inconclusive" and unc:
        first = unc[0] if isinstance(unc[0], dict) else {"reason": str(unc[0])}
        loc = (first.get("location") or {}).get("line")
        detail = f"{len(unc)} uncertified, e.g. line {loc}: {first.get('reason', '')}"
    return {"verdict": verdict, "raw": raw, "detail": detail, "lines": lines,
            "exit": run["rc"], "stats": entry.get("stats")}


def measure(cmd: list[str], repeat: int, timeout: float, interpret) -> dict:
    runs, times, results = [], [], []
    for i in range(repeat):
        run = run_once(cmd, timeout)
        res = interpret(run)
        runs.append(run)
        times.append(run["ms"])
        results.append(res)
        if res["verdict"] in ("error", "timeout"):
            break  # don't repeat a crash or a 60 s timeout
    # A run that finished outranks a timeout (a loaded machine can push a borderline
    # kernel past the limit once); among finished runs the most common verdict wins.
    done = [r for r in results if r["verdict"] != "timeout"]
    if done:
        common = max({r["verdict"] for r in done}, key=lambda v: sum(r["verdict"] == v for r in done))
        final = next(r for r in reversed(done) if r["verdict"] == common)
    else:
        final = results[-1]
    verdicts = {r["verdict"] for r in results}
    out = dict(final)
    out["ms"] = statistics.median(times)  # timed-out runs count as the timeout (a lower bound)
    out["runs_ms"] = [round(t, 2) for t in times]
    out["cmd"] = cmd
    if len(verdicts) > 1:
        out["unstable"] = sorted(verdicts)
    if final["verdict"] == "error":
        out["stderr_tail"] = _tail(runs[-1]["stderr"], 1500)
    return out


# --------------------------------------------------------------------------- corpus

def load_expectations(corpus: Path, only: list[str]) -> list[dict]:
    exps = []
    for meta in sorted(corpus.glob("*.meta.toml")):
        try:
            data = tomllib.loads(meta.read_text())
        except tomllib.TOMLDecodeError as e:
            print(f"compare: skipping {meta.name}: {e}", file=sys.stderr)
            continue
        for e in data.get("expect", []):
            if not isinstance(e, dict) or "kernel" not in e:
                continue
            if only and e["kernel"] not in only:
                continue
            stem = meta.name[: -len(".meta.toml")]
            exps.append({"kernel": e["kernel"], "expected": e.get("verdict"),
                         "lines": e.get("lines", []), "meta": meta, "stem": stem})
    return exps


def ptx_for(exp: dict, corpus: Path, variant: str | None = None) -> Path | None:
    if variant:  # tests/corpus/extra/<stem>.<variant>.ptx, same entry names and expectations
        cand = corpus / "extra" / f"{exp['stem']}.{variant}.ptx"
        return cand if cand.is_file() else None
    cand = corpus / f"{exp['stem']}.ptx"
    if cand.is_file() and f".entry {exp['kernel']}" in cand.read_text(errors="replace").replace("\t", " "):
        return cand
    ptx, _ = find_kernel_files(corpus, exp["kernel"])
    return ptx


def sentryward_cmd(explicit: str | None) -> list[str] | None:
    if explicit:
        return explicit.split()
    exe = shutil.which("sentryward")
    if exe:
        return [exe]
    try:
        import importlib.util
        if importlib.util.find_spec("sentryward") is not None:
            return [sys.executable, "-m", "sentryward"]
    except (ImportError, ValueError):
        pass
    return None


def sentryward_version() -> str | None:
    try:
        from importlib.metadata import version
        return version("sentryward")
    except Exception:
        return None


# --------------------------------------------------------------------------- report

def fmt_ms(v) -> str:
    return "-" if v is None else f"{v:.0f}" if v >= 100 else f"{v:.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernels", nargs="*", help="only these kernels")
    ap.add_argument("--corpus", type=Path, default=REPO / "tests" / "corpus")
    ap.add_argument("--inputs", type=Path, default=HERE / "inputs")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "results.json")
    ap.add_argument("--repeat", type=int, default=3, help="runs per tool and kernel; the median is reported")
    ap.add_argument("--timeout", type=float, default=60.0, help="per-run timeout in seconds (default 60)")
    ap.add_argument("--only-sentryward", action="store_true", help="do not run LARK")
    ap.add_argument("--lark-bin", default=os.environ.get("LARK_BIN", str(REPO / "target" / "release" / "lark")))
    ap.add_argument("--lark-interface", choices=("input", "toml"), default="input",
                    help="give LARK the SentryWard JSON (--input, default; no buffer lengths) or "
                         "tests/corpus/lark.toml (--interface)")
    ap.add_argument("--ptx-variant", metavar="SUFFIX",
                    help="use tests/corpus/extra/<name>.SUFFIX.ptx (e.g. O3, sm90); kernels without one are skipped")
    ap.add_argument("--reuse-sentryward", type=Path, metavar="RESULTS_JSON",
                    help="take SentryWard's result for a kernel from an earlier results.json (e.g. "
                         "tests/compare/sentryward_baseline.json) when its PTX and input are unchanged")
    ap.add_argument("--sentryward", default=os.environ.get("SENTRYWARD_CMD"),
                    help="SentryWard command (default: `sentryward` on PATH, else python -m sentryward)")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _sigterm)
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")

    lark = Path(args.lark_bin)
    if not args.only_sentryward and not (lark.is_file() and os.access(lark, os.X_OK)):
        print(f"compare: LARK binary not found at {lark} (build it with `cargo build --release`, "
              f"set LARK_BIN, or pass --only-sentryward)", file=sys.stderr)
        return 2
    sw = sentryward_cmd(args.sentryward)
    if sw is None:
        print("compare: sentryward not installed (pip install sentryward)", file=sys.stderr)
        return 2

    exps = load_expectations(args.corpus, args.kernels)
    if not exps:
        print(f"compare: no [[expect]] entries in {args.corpus}/*.meta.toml", file=sys.stderr)
        return 2

    reuse = {}
    if args.reuse_sentryward:
        try:
            old = json.loads(args.reuse_sentryward.read_text())
            reuse = {r["kernel"]: r for r in old.get("kernels", []) if r.get("sha256")}
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"compare: cannot reuse {args.reuse_sentryward}: {e}", file=sys.stderr)
            return 2

    if args.ptx_variant:
        exps = [e for e in exps if ptx_for(e, args.corpus, args.ptx_variant)]
        if not exps:
            print(f"compare: none of the selected kernels has tests/corpus/extra/<name>.{args.ptx_variant}.ptx",
                  file=sys.stderr)
            return 2

    load_start = os.getloadavg()
    rows = []
    for exp in exps:
        name = exp["kernel"]
        ptx = ptx_for(exp, args.corpus, args.ptx_variant)
        inp = args.inputs / f"{name}.json"
        row = {"kernel": name, "expected": exp["expected"], "expected_lines": exp["lines"],
               "ptx": str(ptx.relative_to(REPO)) if ptx and ptx.is_relative_to(REPO) else str(ptx),
               "input": str(inp.relative_to(REPO)) if inp.is_relative_to(REPO) else str(inp)}
        problem = None
        if ptx is None:
            problem = "no .ptx defines this kernel"
        elif not inp.is_file():
            problem = f"missing {inp.name}; run tests/compare/make_inputs.py"
        if not problem:
            row["sha256"] = hashlib.sha256(ptx.read_bytes() + b"\0" + inp.read_bytes()).hexdigest()
        tools = [("sentryward", sw + [str(ptx), "--input", str(inp)], interpret_sentryward)]
        if not args.only_sentryward:
            iface = ["--input", str(inp)] if args.lark_interface == "input" else \
                ["--interface", str(args.corpus / "lark.toml")]
            tools.append(("lark", [str(lark), "check", str(ptx), "--kernel", name, *iface,
                                   "--format", "json"], lambda r, n=name: interpret_lark(r, n)))
        for tool, cmd, interp in tools:
            old = reuse.get(name)
            if problem:
                row[tool] = {"verdict": "error", "raw": None, "detail": problem, "ms": None}
            elif tool == "sentryward" and old and old["sha256"] == row["sha256"] and "sentryward" in old:
                row[tool] = dict(old["sentryward"], reused=str(args.reuse_sentryward))
            else:
                row[tool] = measure(cmd, args.repeat, args.timeout, interp)
            t = row[tool]
            t["correct"] = t["verdict"] == exp["expected"]
            # lines_hit: verdict right and every expected .cu line is among the reported ones
            t["lines_hit"] = t["correct"] and set(exp["lines"] or []) <= set(t.get("lines") or [])
        s, l = row["sentryward"], row.get("lark")
        row["ratio"] = (s["ms"] / l["ms"]) if l and s.get("ms") and l.get("ms") and \
            s["verdict"] not in INCOMPLETE and l["verdict"] not in INCOMPLETE else None
        rows.append(row)
        note = lambda t: f" [{t['detail']}]" if t["verdict"] in INCOMPLETE + ("inconclusive",) and t.get("detail") else ""  # noqa: E731
        print(f"  {name}: sentryward={s['verdict']} ({fmt_ms(s.get('ms'))} ms){note(s)}"
              + (f" lark={l['verdict']} ({fmt_ms(l.get('ms'))} ms){note(l)}" if l else ""),
              file=sys.stderr, flush=True)

    # ---- table
    hdr = ["kernel", "expected", "sentryward", "lark", "sw ms", "lark ms", "ratio"]
    table = [[r["kernel"], r["expected"] or "?",
              r["sentryward"]["verdict"] + ("" if r["sentryward"]["correct"] else " ✗"),
              (r["lark"]["verdict"] + ("" if r["lark"]["correct"] else " ✗")) if "lark" in r else "-",
              fmt_ms(r["sentryward"].get("ms")), fmt_ms(r["lark"].get("ms")) if "lark" in r else "-",
              f"{r['ratio']:.2f}" if r["ratio"] else "-"] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(hdr, *table)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    print(line(hdr))
    print(line(["-" * w for w in widths]))
    for t in table:
        print(line(t))
    print()

    summary = {}
    for tool in ("sentryward", "lark"):
        rs = [r[tool] for r in rows if tool in r]
        if not rs:
            continue
        times = [x["ms"] for x in rs if x.get("ms") is not None and x["verdict"] not in INCOMPLETE]
        by_verdict = {}
        for x in rs:
            by_verdict[x["verdict"]] = by_verdict.get(x["verdict"], 0) + 1
        per_kind = {}
        for r in rows:
            k = per_kind.setdefault(r["expected"], [0, 0])
            k[1] += 1
            k[0] += int(r[tool]["correct"])
        summary[tool] = {"correct": sum(x["correct"] for x in rs), "total": len(rs),
                         "correct_with_lines": sum(bool(x.get("lines_hit")) for x in rs),
                         "accuracy": sum(x["correct"] for x in rs) / len(rs),
                         "verdicts": by_verdict,
                         "per_expected": {k: {"correct": v[0], "total": v[1]} for k, v in per_kind.items()},
                         "median_ms": statistics.median(times) if times else None,
                         "total_ms": sum(times) if times else None}
        s = summary[tool]
        kinds = ", ".join(f"{k} {v['correct']}/{v['total']}" for k, v in sorted(s["per_expected"].items(), key=str))
        print(f"{tool:10s} accuracy {s['correct']}/{s['total']} ({100 * s['accuracy']:.0f}%), "
              f"{s['correct_with_lines']} with the expected lines  [{kinds}]  "
              f"median {fmt_ms(s['median_ms'])} ms/kernel  verdicts {s['verdicts']}")
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    if ratios:
        summary["median_ratio"] = statistics.median(ratios)
        print(f"median per-kernel ratio sentryward_ms/lark_ms: {summary['median_ratio']:.2f}")

    result = {"generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "repeat": args.repeat, "timeout_s": args.timeout, "ptx_variant": args.ptx_variant,
              "sentryward": {"command": sw, "version": sentryward_version()},
              "lark": None if args.only_sentryward else {"binary": str(lark), "interface": args.lark_interface},
              "verdict_map": SENTRYWARD_MAP, "ratio": "sentryward_ms / lark_ms",
              "host": {"cpus": os.cpu_count(), "loadavg_start": [round(x, 2) for x in load_start],
                       "loadavg_end": [round(x, 2) for x in os.getloadavg()]},
              "summary": summary, "kernels": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
