"""Can a user plan with `kafkabench max-rate`'s answer? How often 80 % of an answer then meets the SLO.

    .venv/bin/python benchmarks/max_rate_answers.py [--rounds 20] [--case 1k] [--check 60] [--share 0.8]
        [--bootstrap-servers HOST:PORT] [-- MAX-RATE OPTIONS...]

One embedded broker (or --bootstrap-servers), the confluent client, one producer and one consumer, the cases of
max_rate_accuracy.py (1 KB records within e2e p99 50 ms; the 1.3 MB image within 100 ms). After 60 s of unpaced
producing warm the broker up, each round is:

1. one `kafkabench max-rate` with its defaults (2 searches, then 3 holds in a row of 30 s each, every hold a fresh
   run), or the options given after `--`;
2. at once, `kafkabench produce` at --share (80 %) of its answer for --check seconds (its first 10 s a warm-up, kept
   out), judged by the same SLO on the e2e percentile of its measured part, as a user planning with the answer would.

Target: 19 checks in 20 meet the SLO. Prints per round the answer, how it was held, the check's rate, its e2e
percentile and verdict, and the machine's load average; then the count.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from max_rate_accuracy import CASES, WARM_UP_S, found, load, max_rate, warm_up

from kafkabench.cluster import EmbeddedCluster

CHECK_WARMUP_S = 10
TARGET = 0.95


def check(bootstrap: str, size: int, rate: float, seconds: float, out: Path) -> dict:
    """A produce run at `rate`, its first CHECK_WARMUP_S a warm-up: the e2e figures of its measured part."""
    command = [sys.executable, "-m", "kafkabench", "produce", "--size", str(size), "--rate", f"{rate:.0f}",
               "--duration", str(seconds), "--warmup", str(CHECK_WARMUP_S), "--consumers", "1", "-b", bootstrap,
               "--out", str(out), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=seconds + 600)
    if done.returncode != 0:
        raise SystemExit(f"produce failed: {done.stderr.strip().splitlines()[-1:]}")
    return next(run for run in json.loads(done.stdout)["runs"] if run["scenario"] == "consume")["stats"]["e2e"]


def answer_text(document: dict) -> str:
    answer = document["params"].get("sustainable") or {}
    holds = document["params"].get("hold_results") or {}
    rates = ", ".join(f"{rate:,.0f}" for rate in holds.get("failed", []))
    failed = f", holds at {rates} failed" if rates else ""
    return f"held {answer.get('holds', 0)} times{failed}" if answer.get("held") else "not held"


def run(bootstrap: str, args: argparse.Namespace, work: Path) -> bool:
    size, slo = CASES[args.case]
    percentile, limit_ms = slo.removesuffix("ms").split("=")
    print(f"{args.case}: {size:,} B records, e2e {slo}; warming the broker up for {WARM_UP_S} s", flush=True)
    warm_up(bootstrap, size, WARM_UP_S, work / "warm-up")
    met = 0
    print(f"{'round':<7}{'answer/s':>11}  {'how':<40}{'check/s':>10}{f'e2e {percentile}':>12}  verdict")
    for index in range(1, args.rounds + 1):
        document = max_rate(bootstrap, size, slo, work / f"max-rate-{index}", *args.max_rate_options, hold=None)
        answer = found(document)
        if not answer:
            print(f"{index:<7}{'-':>11}  no rate sustained: {document['params'].get('stop_reason')}; {load()}",
                  flush=True)
            continue
        e2e = check(bootstrap, size, args.share * answer, args.check, work / f"check-{index}")
        figure = e2e[f"{percentile}_ms"]
        ok = figure <= float(limit_ms)
        met += ok
        print(f"{index:<7}{answer:>11,.0f}  {answer_text(document):<40}{args.share * answer:>10,.0f}"
              f"{figure:>10,.1f} ms  {'meets' if ok else 'MISSES'} the SLO; {load()}", flush=True)
    print(f"\n{met} of {args.rounds} checks at {args.share:.0%} of the answer met e2e {slo} "
          f"(target: {TARGET:.0%}, 19 in 20): {'PASS' if met >= TARGET * args.rounds else 'MISS'}")
    return met >= TARGET * args.rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--case", choices=sorted(CASES), default="1k")
    parser.add_argument("--check", type=float, default=60, help="Seconds of each check's produce run.")
    parser.add_argument("--share", type=float, default=0.8, help="The share of the answer each check runs at.")
    parser.add_argument("--bootstrap-servers")
    parser.add_argument("--keep", type=Path, help="Keep every run's result directory here.")
    parser.add_argument("max_rate_options", nargs="*", help="After --: options for each max-rate run.")
    args = parser.parse_args()
    with (contextlib.nullcontext(str(args.keep)) if args.keep else
          tempfile.TemporaryDirectory(prefix="max-rate-answers-")) as work:
        if args.bootstrap_servers:
            ok = run(args.bootstrap_servers, args, Path(work))
        else:
            with EmbeddedCluster(brokers=1, directory=Path(work) / "cluster") as cluster:
                print(f"broker: {cluster.bootstrap_servers} (embedded)")
                ok = run(cluster.bootstrap_servers, args, Path(work))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
