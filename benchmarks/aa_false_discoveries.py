"""How often does kafkabench call a change where there is none? The built-in A/A plan (the default profile against
one restating only default values), run as --runs independent A/A runs, each judged on its own.

    .venv/bin/python benchmarks/aa_false_discoveries.py [--runs 20] [--out DIR] [--bootstrap-servers HOST:PORT]

One `kafkabench run` of the a-a plan with --runs times its repeats, interleaved as every plan is; run i is repeats
(i-1) n + 1 .. i n of both profiles (n: the plan's repeats), its cost table judged as `kafkabench run` judges one
(report.profile_cost, Benjamini-Hochberg at 0.05). Nothing differs between the profiles, so every verdict is a false
discovery and a run's false discovery proportion is 1 when it calls anything, else 0: their mean is the false
discovery rate (target <= 5 %). Beside it, what the rule before the family would have called on the same rows
(p < 0.05 alone, with the interval and the effect), and the plan's time per A/A run.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafkabench.plans.loading import BUILTIN
from kafkabench.report.profile_cost import profile_costs

TARGET = 0.05
PLAN = "a-a"


def run_plan(out: Path, runs: int, bootstrap_servers: str | None) -> tuple[int, float]:
    text = BUILTIN.joinpath("builtin", f"{PLAN}.yaml").read_text()
    repeats = int(re.search(r"^repeats: (\d+)$", text, re.M).group(1))
    plan = out.parent / f"{PLAN}-x{runs}.yaml"
    plan.write_text(re.sub(r"^repeats: \d+$", f"repeats: {repeats * runs}", text, flags=re.M))
    started = time.perf_counter()
    command = [sys.executable, "-m", "kafkabench", "run", str(plan), "--out", str(out)]
    subprocess.run(command + (["-b", bootstrap_servers] if bootstrap_servers else []), check=True, timeout=4 * 3600)
    return repeats, time.perf_counter() - started


def judged(out: Path, repeats: int, run: int, work: Path) -> tuple[int, int, int, int]:
    """Run `run`'s cells (copied into a directory of their own): its verdicts, the rows the rule before the family
    would have called, the rows at a raw p < 0.05, and the family's size."""
    own = work / f"run-{run}"
    own.mkdir()
    for cell in out.iterdir():
        found = re.search(r"-r(\d+)$", cell.name)
        if found and (run - 1) * repeats < int(found.group(1)) <= run * repeats:
            shutil.copytree(cell, own / cell.name)
    table = profile_costs(own, "default")
    rows = [change for cost in table.costs for change in cost.metrics]
    alone = sum(1 for c in rows if c.p_value is not None and c.p_value < 0.05 and abs(c.change_pct) >= 5
                and not c.ci_low_pct <= 0 <= c.ci_high_pct)
    raw = sum(1 for c in rows if c.p_value is not None and c.p_value < 0.05)
    return len(table.verdicts()), alone, raw, table.family


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", type=Path, help="keep the plan's run directory here (default: a temporary one)")
    parser.add_argument("--bootstrap-servers")
    parser.add_argument("--judge-only", action="store_true", help="judge --out's results again, run nothing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        out = args.out or Path(temporary) / "run"
        if args.judge_only:
            repeats = int(re.search(r"^repeats: (\d+)$", (out / "plan.yaml").read_text(), re.M).group(1)) // args.runs
            seconds = sum(cell["duration_s"] or 0 for cell in json.loads((out / "run.json").read_text())["cells"])
        else:
            repeats, seconds = run_plan(out, args.runs, args.bootstrap_servers)
        work = Path(temporary) / "runs"
        work.mkdir()
        results = [judged(out, repeats, run, work) for run in range(1, args.runs + 1)]
    for run, (verdicts, alone, raw, family) in enumerate(results, 1):
        print(f"A/A run {run:2d}: {verdicts} verdict(s) among {family} tests; the rule before the family: {alone}; "
              f"raw p < 0.05: {raw}")
    fdr = sum(1 for verdicts, *_ in results if verdicts) / len(results)
    tests = sum(family for *_, family in results)
    print(f"{len(results)} A/A runs of {repeats} repeats a side: false discovery rate {fdr:.1%} (runs calling "
          f"anything; target <= {TARGET:.0%}) {'met' if fdr <= TARGET else 'MISSED'}"
          + (f" (none called: at most {3 / len(results):.0%} with 95 % confidence, the rule of three)"
             if not fdr else "")
          + f"; false verdicts {sum(r[0] for r in results)} of {tests} tests; the rule before the family would "
          f"have called {sum(r[1] for r in results)}; raw p < 0.05: {sum(r[2] for r in results)} of {tests}; plan "
          f"time {seconds / len(results):.0f} s per A/A run")


if __name__ == "__main__":
    main()
