#!/usr/bin/env python3
"""Which solver, in which order, decides LARK's SMT queries in the least CPU time.

The engine asks a z3 QF_BV query in stages (`server/smt/src/solver.rs`, `check_timed`): z3's
incremental core for a quarter of the limit, then the `qfbv` tactic for the whole limit (until
2026-12-03 also the core again for three quarters: twice the limit in all). This script measures each query of a dump under each strategy on its
own, then replays staging orders over those times, so another order can be judged on the whole
corpus before it is built (a stage that times out costs its limit; the next starts afresh, as
the engine's does after killing the process).

  # 1. dump the queries of a run (any lark command; here the real corpus with no setup)
  LARK_SMT_DUMP=/tmp/dump python3 tests/real/measure.py --corpus real,bugs --modes none
  # 2. time every query with z3's core (all of them), then the other strategies on those the
  #    core took over --slow seconds for (the only ones a staging order changes)
  python3 scripts/solver_stages.py run /tmp/dump /tmp/times.jsonl
  # 3. compare staging orders at a 2 s limit
  python3 scripts/solver_stages.py simulate /tmp/times.jsonl --limit 2

"Decided" counts queries, not verdicts: on 2026-12-02 the cvc5 third stage decided 7 more of
the real corpus's 283 slow queries in 2 % less CPU, yet built into the engine it made vLLM's
merge_attn_states (verified before) uncertified and the corpus no faster: a query it loses can
matter more than the ones it wins. Measure a candidate with tests/real/measure.py as well.

Times are the solver process's CPU time (user + system, from wait4), so other load on the
machine changes them little. Strategies: core (check-sat inside push, as the engine asks),
qfbv (check-sat-using qfbv), bitblast ((then simplify solve-eqs bit-blast sat)), cvc5.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path

Z3_TACTICS = {
    "core": None,
    "qfbv": "(check-sat-using qfbv)",
    "bitblast": "(check-sat-using (then simplify solve-eqs bit-blast sat))",
}
STRATEGIES = [*Z3_TACTICS, "cvc5"]

# Staging orders to compare: (strategy, share of the query's limit) in order. The first is the
# engine's today.
ORDERS = {
    "core 1/4, qfbv (engine)": [("core", 0.25), ("qfbv", 1)],
    "core 1/8, qfbv 7/8": [("core", 0.125), ("qfbv", 0.875)],
    "core 1/4, qfbv, core 3/4 (engine until 2026-12-03)": [("core", 0.25), ("qfbv", 1), ("core", 0.75)],
    "core 1/4, qfbv, cvc5 3/4": [("core", 0.25), ("qfbv", 1), ("cvc5", 0.75)],
    "core 1/4, bitblast, core 3/4": [("core", 0.25), ("bitblast", 1), ("core", 0.75)],
    "core 1/4, cvc5, core 3/4": [("core", 0.25), ("cvc5", 1), ("core", 0.75)],
    "core 1/4, cvc5, qfbv 3/4": [("core", 0.25), ("cvc5", 1), ("qfbv", 0.75)],
    "core 1/4, qfbv 3/4, cvc5 1/2, core 1/2": [("core", 0.25), ("qfbv", 0.75), ("cvc5", 0.5), ("core", 0.5)],
    "core 1/4, qfbv (no third stage)": [("core", 0.25), ("qfbv", 1)],
}


def script_for(text: str, strategy: str) -> tuple[list[str], str]:
    """The command line and stdin that ask the dumped query `text` with `strategy`."""
    lines = [l for l in text.splitlines() if not l.startswith(";")]
    body = "\n".join(lines)
    cut = body.rfind("(check-sat")
    body = body[:cut] if cut >= 0 else body
    if strategy == "cvc5":
        return ["cvc5", "--lang=smt2"], body + "\n(check-sat)\n"
    header = [l for l in body.splitlines() if l.startswith(("(set-logic", "(set-option"))]
    rest = [l for l in body.splitlines() if not l.startswith(("(set-logic", "(set-option"))]
    tactic = Z3_TACTICS[strategy]
    if tactic is None:  # the engine's scope: the incremental core answers inside push
        return ["z3", "-in"], "\n".join(header) + "\n(push 1)\n" + "\n".join(rest) + "\n(check-sat)\n"
    return ["z3", "-in"], "\n".join(header + rest) + "\n" + tactic + "\n"


def time_one(path: Path, strategy: str, cap: float) -> dict:
    """Asks one query; its answer (or `timeout`) and the CPU seconds the solver used."""
    text = path.read_text()
    limit = re.search(r"timeout (\d+) ms", text)
    argv, stdin = script_for(text, strategy)
    argv += [f"--tlimit={int(cap * 1000)}"] if strategy == "cvc5" else [f"-T:{max(1, round(cap))}"]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watchdog = threading.Timer(cap * 3 + 5, proc.kill)
    watchdog.start()
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = status
    watchdog.cancel()
    first = out.strip().splitlines()[0] if out.strip() else ""
    answer = first if first in ("sat", "unsat") else "timeout"
    return {"query": path.name, "strategy": strategy, "limit_ms": int(limit.group(1)) if limit else 2000, "answer": answer, "cpu": usage.ru_utime + usage.ru_stime}


def run(args) -> None:
    queries = sorted(Path(args.dump).glob("*.smt2"))
    out = open(args.out, "a")

    def ask_all(jobs):
        results = []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for n, r in enumerate(pool.map(lambda j: time_one(j[0], j[1], args.cap), jobs)):
                out.write(json.dumps(r) + "\n")
                out.flush()
                results.append(r)
                if n % 200 == 0:
                    print(f"{n}/{len(jobs)}", file=sys.stderr, flush=True)
        return results

    core = ask_all([(q, "core") for q in queries])
    slow = {r["query"] for r in core if r["answer"] == "timeout" or r["cpu"] > args.slow}
    print(f"{len(slow)} of {len(queries)} queries took the core over {args.slow} s", file=sys.stderr)
    ask_all([(q, s) for q in queries if q.name in slow for s in STRATEGIES if s != "core"])


def simulate(args) -> None:
    times: dict[str, dict[str, tuple[float, str]]] = defaultdict(dict)
    for line in open(args.times):
        r = json.loads(line)
        times[r["query"]][r["strategy"]] = (r["cpu"], r["answer"])
    complete = [q for q, t in times.items() if all(s in t for s in STRATEGIES)]
    print(f"{len(complete)} queries timed under every strategy (the others were fast for the core)")
    limit = args.limit
    for name, order in ORDERS.items():
        decided, cost = 0, 0.0
        for q in complete:
            for strategy, share in order:
                cpu, answer = times[q][strategy]
                if answer != "timeout" and cpu <= share * limit:
                    decided += 1
                    cost += cpu
                    break
                cost += share * limit
        print(f"{name:45} decided {decided:4}/{len(complete)}  CPU {cost:7.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="time each dumped query under each strategy")
    r.add_argument("dump")
    r.add_argument("out")
    r.add_argument("--cap", type=float, default=4.0, help="seconds a strategy may take on one query")
    r.add_argument("--slow", type=float, default=0.3, help="core seconds past which the other strategies are timed")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    s = sub.add_parser("simulate", help="compare staging orders on the measured times")
    s.add_argument("times")
    s.add_argument("--limit", type=float, default=2.0, help="the query limit in seconds (--timeout-ms / 1000)")
    args = parser.parse_args()
    run(args) if args.command == "run" else simulate(args)


if __name__ == "__main__":
    main()
