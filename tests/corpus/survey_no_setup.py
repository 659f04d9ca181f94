#!/usr/bin/env python3
"""The editor's first impression, measured: every tests/corpus/<name>.cu opened alone (copied
into an empty folder, no lark.toml), checked with `lark check --format json`.

Prints verdict counts, errors on kernels whose expectation is `verified` (a correct kernel
opened with no setup must show no errors; warnings about an assumed launch are fine),
uncertified reasons by kind, and the median / maximum time per file.

Usage: python3 tests/corpus/survey_no_setup.py [--lark target/release/lark] [--out r.json]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
import tomllib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def expected_verdicts() -> dict[str, str]:
    out = {}
    for meta in HERE.glob("*.meta.toml"):
        for e in tomllib.loads(meta.read_text()).get("expect", []):
            out[e["kernel"]] = e["verdict"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lark", default=str(HERE.parent.parent / "target" / "release" / "lark"))
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--out")
    args = ap.parse_args()
    expect = expected_verdicts()
    rows = []
    for cu in sorted(HERE.glob("*.cu")):
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(cu, d)
            started = time.monotonic()
            try:
                p = subprocess.run([args.lark, "check", cu.name, "--format", "json"], cwd=d, capture_output=True, timeout=args.timeout)
                doc = json.loads(p.stdout or b"{}")
            except (subprocess.TimeoutExpired, json.JSONDecodeError) as e:
                rows.append({"file": cu.name, "kernel": "?", "verdict": "error", "why": str(e)[:200], "seconds": time.monotonic() - started})
                continue
            seconds = time.monotonic() - started
        for k in doc.get("kernels", []):
            errors = [f for f in k.get("findings", []) if not f.get("assumed_launch") and not f.get("benign")]
            rows.append(
                {
                    "file": cu.name,
                    "kernel": k["name"],
                    "verdict": k["verdict"],
                    "expected": expect.get(k["name"]),
                    "errors": [f["kind"] for f in errors],
                    "uncertified": [u.get("kind", "?") for u in k.get("uncertified", [])],
                    "seconds": seconds,
                }
            )
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    print(f"files: {len({r['file'] for r in rows})}, kernels: {len(rows)}")
    print("verdicts:", dict(Counter(r["verdict"] for r in rows)))
    wrong = [r for r in rows if r.get("expected") == "verified" and r.get("errors")]
    print(f"errors on kernels expected verified: {len(wrong)}", [f"{r['kernel']} ({', '.join(r['errors'])})" for r in wrong])
    print("uncertified reasons (kernels):", dict(Counter(k for r in rows for k in set(r.get("uncertified", [])))))
    secs = sorted({r["file"]: r["seconds"] for r in rows}.values())
    print(f"time per file: median {statistics.median(secs):.2f} s, max {secs[-1]:.2f} s, over 2 s: {sum(s > 2 for s in secs)}")


if __name__ == "__main__":
    main()
