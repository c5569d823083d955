"""Which median should a verdict rest on? The sample median against the Harrell-Davis median (report.significance),
side by side on the same synthetic repeats:

    .venv/bin/python benchmarks/verdict_power.py [--trials 400] [--seed 1]

Each trial draws n repeats a side from a log-normal spread (10 % by default) around a base, B's base moved by the
change; "continuous" keeps the values as drawn, "whole ms" rounds them to a whole millisecond around 2.5 ms, as
Apache's perf tools and OMB report their latencies. With no change, the share of p < 0.05 is the test's
false positive rate (at most 0.05); with one, its power. Beside them, how often the whole verdict of a single test
(report.compare.compare_metric: the test, the bootstrap interval of the change, a 5 % effect, each on that median)
calls B a regression (one direction: with no change, at most half of 0.05). A permutation test's false positive
rate is bounded by its p-value whatever the statistic; the statistic decides the power, and the floor of p:
2 / C(2n, n) for the Harrell-Davis median, higher for the sample median, whose labellings tie.
"""

from __future__ import annotations

import argparse

import numpy as np

from kafkabench.report.compare import compare_metric
from kafkabench.report.significance import harrell_davis, permutation_p, sample_median, smallest_p

SHAPES = {"continuous": (10.0, None), "whole ms": (2.5, 1.0)}  # base, resolution
REPEATS = (4, 5, 6, 8)
CHANGES = (0.0, 0.2, 0.5)


def draw(rng: np.random.Generator, n: int, base: float, change: float, spread: float,
         resolution: float | None) -> tuple[np.ndarray, np.ndarray]:
    a = base * np.exp(rng.normal(0, spread, n))
    b = base * (1 + change) * np.exp(rng.normal(0, spread, n))
    if resolution:
        a, b = np.maximum(np.round(a / resolution), 1) * resolution, np.maximum(np.round(b / resolution), 1) * resolution
    return a, b


def rates(rng: np.random.Generator, trials: int, n: int, change: float, spread: float, shape: str) -> dict[str, float]:
    base, resolution = SHAPES[shape]
    called = dict.fromkeys(["test median", "test HD", "verdict median", "verdict HD"], 0)
    for trial in range(trials):
        a, b = draw(rng, n, base, change, spread, resolution)
        if np.ptp(np.concatenate([a, b])) == 0:
            continue  # the same in every repeat: no test
        for name, statistic in (("median", sample_median), ("HD", harrell_davis)):
            called[f"test {name}"] += permutation_p(a, b, seed=trial, statistic=statistic) < 0.05
            verdict = compare_metric("m", "lower", list(a), list(b), seed=trial, statistic=statistic).verdict
            called[f"verdict {name}"] += verdict == "regression"
    return {name: count / trials for name, count in called.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--spread", type=float, default=0.1, help="log-normal sigma of each repeat (0.1: about 10 %%)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print("floor of p, n a side:  " + "  ".join(f"{n}: median {smallest_p(n, n, sample_median):.4f} "
                                                f"HD {smallest_p(n, n):.4f}" for n in REPEATS))
    print(f"{args.trials} trials per row, spread {args.spread:g}: the share with p < 0.05, and with a verdict")
    columns = ("test median", "test HD", "verdict median", "verdict HD")
    print(f"{'values':<11} {'change':>6} {'n':>2} " + " ".join(f"{c:>14}" for c in columns) + f" {'verdicts HD/median':>18}")
    worst_null = 0.0
    for shape in SHAPES:
        for change in CHANGES:
            for n in REPEATS:
                found = rates(rng, args.trials, n, change, args.spread, shape)
                ratio = found["verdict HD"] / found["verdict median"] if found["verdict median"] else float("inf")
                if change == 0:
                    worst_null = max(worst_null, found["test median"], found["test HD"])
                print(f"{shape:<11} {change:>+6.0%} {n:>2} " + " ".join(f"{found[c]:>14.3f}" for c in columns)
                      + f" {ratio if change else float('nan'):>18.2f}")
    print(f"worst false positive rate of a test with no change: {worst_null:.3f} (at most 0.05 up to the trials' "
          f"noise, +-{2 * (0.05 * 0.95 / args.trials) ** 0.5:.3f})")


if __name__ == "__main__":
    main()
