"""One metric's change from A to B and its verdict: the figures a verdict rests on (medians, the relative change,
its bootstrap interval, the p-value and the q-value of the table it is judged in) and the rule that calls it."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict

Better = Literal["lower", "higher"]
Verdict = Literal["regression", "improvement", "within noise", "cannot decide", "noise unknown", "unavailable"]


class MetricChange(BaseModel):
    # a change from a zero baseline is infinite: JSON carries it as "Infinity", never as a made-up number
    model_config = ConfigDict(ser_json_inf_nan="strings")

    metric: str  # its path in a run, e.g. stats.e2e.p50_ms
    better: Better
    a_n: int  # samples with a value; None (unavailable) is not a sample
    b_n: int
    a_median: float | None  # the Harrell-Davis median of A's samples (report.significance)
    b_median: float | None
    change_pct: float | None  # (median B - median A) / |median A| * 100
    ci_low_pct: float | None  # bootstrap interval of change_pct
    ci_high_pct: float | None
    p_value: float | None  # permutation test of median B - median A, two-sided; None: no test (see family.tested)
    q_value: float | None = None  # Benjamini-Hochberg across the table this row is judged in
    verdict: Verdict
    reason: str  # why this verdict, in a few words
    confirmed: bool | None = None  # a confirmation round called the same change on fresh data; None: not re-run

    @property
    def worse_by_pct(self) -> float:
        """How much worse B is, in percent (negative when better)."""
        if self.change_pct is None:
            return 0.0
        return self.change_pct if self.better == "lower" else -self.change_pct


def judge(change: MetricChange, q: float, fdr: float, min_effect_pct: float) -> tuple[Verdict, str]:
    """A call needs all three: the test (its q-value; in a family of one, the p-value), the interval (excludes 0)
    and the size of the change."""
    if q >= fdr:
        return "within noise", f"q >= {fdr:g}"
    if change.ci_low_pct <= 0 <= change.ci_high_pct:
        return "within noise", "CI includes 0"
    if abs(change.change_pct) < min_effect_pct:
        return "within noise", f"change < {min_effect_pct:g} %"
    worse = change.change_pct > 0 if change.better == "lower" else change.change_pct < 0
    return ("regression" if worse else "improvement"), f"q < {fdr:g}, CI excludes 0, change >= {min_effect_pct:g} %"


def pct_text(value: float | None) -> str:
    """A change in percent as printed: +12.3, -inf for a zero baseline, "-" when there is none."""
    if value is None:
        return "-"
    return f"{'+' if value > 0 else '-'}inf" if math.isinf(value) else f"{value:+.1f}"
