#!/usr/bin/env python3
"""Which kernels get different findings from two runs of `lark check` on the same file.

A verdict that changes between two runs of the same check is one a kernel engineer cannot
trust. Each kernel file is copied alone into a scratch directory (no lark.toml: the no-setup
check, where the solver works hardest) and checked `--runs` times; each run's findings and
uncertified sites are reduced to a fingerprint of their messages, and the kernels whose
fingerprints differ are listed with what differed.

  python3 scripts/repeatability.py --lark target/release/lark tests/real/*.ptx
  python3 scripts/repeatability.py --runs 3 --setup tests/real/bugs/ggml_ssm_scan_missing_sync.ptx

`--setup` keeps the file's own directory (and so its lark.toml). On 2026-12-03, twelve
kernels of tests/real checked twice with no setup: 6 differed while z3 kept its state from
one query to the next (push/pop), 1 after it was reset between queries (a query near its time
limit, answered in one run and not in the other: wall-clock limits remain a source of
difference). Run it on an idle machine: time limits are what a busy one changes.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def fingerprint(report: dict) -> dict[str, list[str]]:
    """Per kernel, the sorted messages of its findings and uncertified sites, with its verdict."""
    kernels = report.get("kernels", []) if isinstance(report, dict) else report
    out: dict[str, list[str]] = {}
    for k in kernels:
        messages = [f"verdict {k.get('verdict')}"]
        messages += sorted(f"finding {f.get('message', '')}" for f in k.get("findings", []))
        messages += sorted(f"uncertified {u.get('message', '')}" for u in k.get("uncertified", []))
        out[k.get("name") or k.get("kernel") or "?"] = messages
    return out


def check(lark: str, ptx: Path, setup: bool, timeout: float) -> dict[str, list[str]] | str:
    """One run's fingerprints, or why the run gave none."""
    with tempfile.TemporaryDirectory(prefix="lark-repeat-") as scratch:
        if setup:
            target, cwd = ptx.resolve(), ptx.resolve().parent
        else:
            target = Path(scratch) / ptx.name
            shutil.copy(ptx, target)
            cwd = Path(scratch)
        try:
            done = subprocess.run([lark, "check", "--format", "json", str(target)], cwd=cwd, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"no answer within {timeout:.0f} s"
        try:
            return fingerprint(json.loads(done.stdout))
        except json.JSONDecodeError:
            return f"exit {done.returncode}, no JSON: {done.stderr.decode(errors='replace')[-300:]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="PTX files to check")
    parser.add_argument("--lark", default="target/release/lark", help="the lark binary (default: target/release/lark)")
    parser.add_argument("--runs", type=int, default=2, help="runs per file (default 2)")
    parser.add_argument("--setup", action="store_true", help="check each file where it is, with its lark.toml")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run (default 120)")
    args = parser.parse_args()
    if args.runs < 2:
        parser.error("--runs must be at least 2")
    # Runs happen in scratch directories: a relative path to the binary must not depend on that.
    lark = str(Path(args.lark).resolve()) if "/" in args.lark else shutil.which(args.lark)
    if not lark or not Path(lark).is_file():
        parser.error(f"no lark binary at {args.lark} (build it with `cargo build --release -p lark`)")
    differing = 0
    for ptx in args.files:
        runs = [check(lark, ptx, args.setup, args.timeout) for _ in range(args.runs)]
        digests = [hashlib.sha256(json.dumps(r, sort_keys=True).encode()).hexdigest()[:8] for r in runs]
        same = len(set(digests)) == 1
        differing += not same
        print(f"{'same     ' if same else 'DIFFERENT'} {ptx}  {' '.join(digests)}", flush=True)
        if not same:
            first = runs[0]
            for n, other in enumerate(runs[1:], start=2):
                if isinstance(first, str) or isinstance(other, str):
                    print(f"    run 1: {first if isinstance(first, str) else 'a report'}; run {n}: {other if isinstance(other, str) else 'a report'}")
                    continue
                for kernel in sorted(set(first) | set(other)):
                    a, b = set(first.get(kernel, [])), set(other.get(kernel, []))
                    verdicts = ({m for m in a if m.startswith("verdict ")}, {m for m in b if m.startswith("verdict ")})
                    if a != b:
                        what = "the verdict" if verdicts[0] != verdicts[1] else "messages (counterexamples) only"
                        print(f"    {kernel}: run 1 and run {n} differ in {what}")
                    for line in sorted(a - b):
                        print(f"    {kernel}: only in run 1: {line[:160]}")
                    for line in sorted(b - a):
                        print(f"    {kernel}: only in run {n}: {line[:160]}")
    print(f"{differing} of {len(args.files)} files differ between runs")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
