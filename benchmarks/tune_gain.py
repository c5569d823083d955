"""What does `kafkabench tune` gain over the defaults, and what does the tune cost?

    .venv/bin/python benchmarks/tune_gain.py [--cases image,1k-confluent,1k-java] [--trials N] [--bootstrap-servers H:P]

One embedded broker (or --bootstrap-servers). Cases:

- `image`: the seed's 1.3 MB image at 30 frames/s, confluent, SLO e2e p99 <= 100 ms, at most 40 trials
  (`tune latency`). Figures: the recommendation's and the default's e2e p50 over the tune's own final re-runs (five
  each, interleaved: round i of the default is paired with round i of the recommendation), how many rounds the
  recommendation won, and the TCP floor for the same payload measured in the same run (`latency --clients tcp`).
  Targets: >= 30 % lower p50, 5 of 5 rounds won, the recommendation's p50 within 2x the floor.
- `1k-confluent`, `1k-java`: 1 KB records, SLO e2e p99 <= 50 ms, at most 50 trials (`tune throughput`): the
  recommendation's sustainable rate against the default's and the `throughput` profile's (their medians over the
  final re-runs; the profile is seeded as a trial, so its own figure is its trial's). Target: >= 1.5x the default,
  and at least the better of the profile and the default.
- Every case: the tune's cost, the trials and the wall time until the best trial so far first reached 95 % of the
  final best gain.

Prints one table per case, each target with its measured figure and PASS or MISS.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.labs.latency.scenario import SEED_IMAGE_BYTES

CASES = {
    "image": ("latency", "confluent", SEED_IMAGE_BYTES, "p99=100ms", 40, ["--rate", "30"]),
    "1k-confluent": ("throughput", "confluent", 1024, "p99=50ms", 50, ["--settle", "2", "--measure", "4"]),
    "1k-java": ("throughput", "java", 1024, "p99=50ms", 50, ["--settle", "2", "--measure", "4"]),  # java settles 5
}


def kafkabench(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "kafkabench", *args, "--json"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=6 * 3600)
    if done.returncode != 0:
        raise SystemExit(f"kafkabench {args[0]} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


def tcp_floor_p50(bootstrap: str, size: int, out: Path) -> float:
    document = kafkabench("latency", "--clients", "tcp", "--size", str(size), "--count", "200", "--warmup", "20",
                          "-b", bootstrap, "--out", str(out))
    return document["runs"][0]["stats"]["e2e"]["p50_ms"]


def time_to_95(document: dict) -> tuple[int, float] | None:
    """(trials, seconds) until the best trial so far first reached 95 % of the final best gain over the default."""
    params, higher = document["params"], document["params"]["goal"] == "throughput"
    trials = [t for t in params["trials"] if t["state"] == "complete" and t.get("feasible")]
    defaults = [t["value"] for t in trials if t["kind"] == "default"]
    searched = [t for t in trials if t["kind"] != "default"]
    if not defaults or not searched:
        return None
    base = statistics.median(defaults)
    gain = (lambda v: v - base) if higher else (lambda v: base - v)
    final = max(gain(t["value"]) for t in searched)
    if final <= 0:
        return None
    start = datetime.fromisoformat(params["trials"][0]["started"])
    for count, trial in enumerate(searched, 1):
        if gain(trial["value"]) >= 0.95 * final:
            return count, (datetime.fromisoformat(trial["finished"]) - start).total_seconds()
    return None


def run_case(name: str, bootstrap: str, trials: int | None, work: Path) -> bool:
    goal, client, size, slo, budget, extra = CASES[name]
    budget = trials or budget
    print(f"\n{name}: tune {goal}, {client}, {size:,} B, e2e {slo}, at most {budget} trials", flush=True)
    document = kafkabench("tune", goal, "--client", client, "--size", str(size), "--slo", slo, "--trials", str(budget),
                          *extra, "-b", bootstrap, "--out", str(work / name))
    params = document["params"]
    final = {entry["label"]: entry for entry in params["final"]}
    chosen = params["recommendation"]["label"]
    print(f"  {len(params['trials'])} trials ({params['stop_reason']}); recommendation: {params['recommendation']['reason']}")
    print(f"  recommended settings: {params['recommendation']['settings'] or 'none (the default)'}")
    default = final["default"]["values"]
    checks: dict[str, tuple[str, bool]] = {}
    if goal == "latency":
        floor = tcp_floor_p50(bootstrap, size, work / f"{name}-floor")
        tuned = final[chosen]["values"] if chosen != "default" else default
        rounds = list(zip(default, tuned))
        won = sum(1 for d, t in rounds if t < d)
        gain = 1 - statistics.median(tuned) / statistics.median(default)
        print(f"  e2e p50 medians: default {statistics.median(default):.2f} ms, recommended "
              f"{statistics.median(tuned):.2f} ms; TCP floor {floor:.2f} ms")
        checks["p50 >= 30 % lower than the default"] = (f"{gain:.1%} lower", gain >= 0.30)
        checks["wins 5 of 5 paired re-runs"] = (f"{won} of {len(rounds)}", won == len(rounds) == 5)
        checks["p50 within 2x the TCP floor"] = (f"{statistics.median(tuned) / floor:.2f}x",
                                                statistics.median(tuned) <= 2 * floor)
    else:
        tuned = final[chosen]["values"] if chosen != "default" else default
        ratio = statistics.median(tuned) / statistics.median(default)
        profile = [t["value"] for t in params["trials"] if t["kind"] == "preset throughput" and t.get("feasible")]
        better_of = max(statistics.median(default), *(profile or [0]))
        print(f"  sustainable medians: default {statistics.median(default):,.0f}/s, recommended "
              f"{statistics.median(tuned):,.0f}/s, throughput profile {profile[0] if profile else 0:,.0f}/s (its trial)")
        checks[">= 1.5x the default's sustainable rate"] = (f"{ratio:.2f}x", ratio >= 1.5)
        checks[">= the better of the profile and the default"] = (
            f"{statistics.median(tuned):,.0f} vs {better_of:,.0f}", statistics.median(tuned) >= better_of)
    cost = time_to_95(document)
    checks["cost: trials and time to 95 % of the final gain"] = (
        f"{cost[0]} trials, {cost[1]:,.0f} s" if cost else "no gain found", True)
    print(f"\n  {'target':<52}{'measured':>22}")
    for check, (figure, ok) in checks.items():
        print(f"  {check:<52}{figure:>22}  {'PASS' if ok else 'MISS'}")
    return all(ok for _figure, ok in checks.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--trials", type=int, help="Override each case's trial budget (a quick look).")
    parser.add_argument("--bootstrap-servers")
    parser.add_argument("--keep", type=Path, help="Keep the tunes' result directories and studies here.")
    args = parser.parse_args()
    cases = args.cases.split(",")
    if set(cases) - set(CASES):
        parser.error(f"--cases: {', '.join(CASES)}")
    with (contextlib.nullcontext(str(args.keep)) if args.keep else
          tempfile.TemporaryDirectory(prefix="tune-gain-")) as work:
        if args.bootstrap_servers:
            ok = all([run_case(case, args.bootstrap_servers, args.trials, Path(work)) for case in cases])
        else:
            with EmbeddedCluster(brokers=1, directory=Path(work) / "cluster") as cluster:
                print(f"broker: {cluster.bootstrap_servers} (embedded)")
                ok = all([run_case(case, cluster.bootstrap_servers, args.trials, Path(work)) for case in cases])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
