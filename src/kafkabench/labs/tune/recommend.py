"""The tune's last word: the finalists and the default re-measured side by side, and a recommendation only where
it holds beyond noise.

A finalist is recommended when every one of its re-runs met every check (the SLOs at the upper end of their
intervals, the rate, no send errors, no growing lag) and `compare`'s test calls it an improvement on the default:
the permutation test, the bootstrap interval of the change and the minimum effect all agree, the finalists judged
together as one family (a q-value below the false discovery rate, report.family). When the default
itself missed a check in any re-run, a finalist that met every check in all of its own is recommended on that
ground, with its change stated as measured. Otherwise the default is as good as anything found.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from kafkabench.report.compare import MIN_EFFECT_PCT, compare_metric
from kafkabench.report.family import FDR, judge_family
from kafkabench.report.verdict import Better, MetricChange

DEFAULT = "default"


@dataclass
class Candidate:
    label: str  # "default", "trial 17"
    settings: dict[str, dict[str, str]]  # what it sets on top of the user's own, per role
    values: list[float] = field(default_factory=list)  # the objective of each re-run
    feasible: list[bool] = field(default_factory=list)  # each re-run met every check
    rate: float | None = None  # pareto: the rate it runs at (else the goal's)

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    @property
    def always_feasible(self) -> bool:
        return bool(self.feasible) and all(self.feasible)


@dataclass
class Recommendation:
    chosen: Candidate | None  # None: keep the default
    reason: str
    changes: dict[str, MetricChange]  # finalist label -> its change from the default


def recommend(default: Candidate, finalists: list[Candidate], metric: str, better: Better = "lower",
              min_effect_pct: float = MIN_EFFECT_PCT, fdr: float = FDR,
              changes: dict[str, MetricChange] | None = None) -> Recommendation:
    """The recommendation, its reason ending with the default's own spread: the noise every change is judged
    against. `changes`: the finalists' changes already judged in a larger family (the front's points)."""
    if changes is None:
        changes = judged_changes([(default, c) for c in finalists], metric, better, min_effect_pct, fdr)
    decided = _recommend(default, finalists, metric, better, changes)
    if noise := spread_text(default.values, metric):
        decided.reason += f"; {noise}"
    return decided


def spread_text(values: list[float], metric: str) -> str:
    """`the default's own 5 re-runs: records/s median 41,300, 4,481 to 60,541`: a median and a range, never a bare
    mean (one pause in a run makes its figure a long tail's)."""
    if not values:
        return ""
    runs = f"{len(values)} re-run{'s' if len(values) > 1 else ''}"
    if len(values) == 1:
        return f"the default's own {runs}: {metric} {figure(values[0])}, its spread unknown"
    return (f"the default's own {runs}: {metric} median {figure(statistics.median(values))}, "
            f"{figure(min(values))} to {figure(max(values))}")


def figure(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def judged_changes(pairs: list[tuple[Candidate, Candidate]], metric: str, better: Better, min_effect_pct: float,
                   fdr: float) -> dict[str, MetricChange]:
    """Each candidate's change from its default, the candidates judged together as one family."""
    changes = {c.label: compare_metric(metric, better, default.values, c.values, min_effect_pct) for default, c in pairs}
    judge_family(list(changes.values()), fdr, min_effect_pct)
    return changes


def _recommend(default: Candidate, finalists: list[Candidate], metric: str, better: Better,
               changes: dict[str, MetricChange]) -> Recommendation:
    feasible = [c for c in finalists if c.always_feasible and c.values]
    best = min if better == "lower" else max
    improved = [c for c in feasible if changes[c.label].verdict == "improvement"]
    if improved:
        chosen = best(improved, key=lambda c: c.median)
        change = changes[chosen.label]
        return Recommendation(chosen, f"{chosen.label}: {metric} {change.change_pct:+.1f} % against the default "
                                      f"(95 % {change.ci_low_pct:+.1f} to {change.ci_high_pct:+.1f} %, "
                                      f"p = {change.p_value:.3g}, q = {change.q_value:.3g}), every check met in all "
                                      f"{len(chosen.feasible)} re-runs", changes)
    if feasible and not default.always_feasible:
        chosen = best(feasible, key=lambda c: c.median)
        missed = default.feasible.count(False)
        return Recommendation(chosen, f"{chosen.label}: met every check in all {len(chosen.feasible)} re-runs where "
                                      f"the default missed one in {missed} of {len(default.feasible)}; {metric} "
                                      f"{_change_text(changes[chosen.label])}", changes)
    if not finalists:
        reason = "no trial met every check: the default is as good as anything found"
    elif not feasible:
        reason = "no finalist met every check in all its re-runs: the default is as good as anything found"
    else:
        top = best(feasible, key=lambda c: c.median)
        reason = (f"the default is as good as anything found: the best finalist, {top.label}, is "
                  f"{_change_text(changes[top.label])} ({changes[top.label].reason})")
    return Recommendation(None, reason, changes)


def _change_text(change: MetricChange) -> str:
    if change.change_pct is None:
        return "not comparable"
    interval = (f" (95 % {change.ci_low_pct:+.1f} to {change.ci_high_pct:+.1f} %)"
                if change.ci_low_pct is not None else "")
    return f"{change.change_pct:+.1f} %{interval} against the default"
