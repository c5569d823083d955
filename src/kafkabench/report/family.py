"""A table of verdicts judged together: the Benjamini-Hochberg false discovery rate across its rows, and "cannot
decide" where the repeats could not have called anything.

One test at p < 0.05 is wrong one time in twenty when nothing changed; a table of two dozen such tests calls about
one change by chance alone. The family rule: every row with a p-value gets a q-value (the smallest false discovery
rate at which it would be called), a verdict needs q below the threshold (`--fdr`, 0.05), and a row whose repeats
could not reach that threshold even with its two samples completely apart says "cannot decide" instead of printing
a verdict on the test's floor.
"""

from __future__ import annotations

from typing import Sequence

from kafkabench.errors import KafkabenchError
from kafkabench.report.significance import ALPHA, benjamini_hochberg, can_decide, repeats_for, repeats_text
from kafkabench.report.verdict import MetricChange, judge

FDR = ALPHA
FDR_LIMIT = 0.5  # above it, half the calls may be chance: no longer a verdict


class FdrError(KafkabenchError):
    """An --fdr that cannot be a false discovery rate worth a verdict."""


def check_fdr(fdr: float) -> float:
    if not 0 < fdr <= FDR_LIMIT:
        raise FdrError(f"--fdr {fdr:g}: a false discovery rate is above 0 and at most {FDR_LIMIT:g} (default {FDR:g})")
    return fdr


def tested(changes: Sequence[MetricChange]) -> list[MetricChange]:
    """The family: the rows with a p-value. A metric equal in every repeat on both sides (0 errors against 0) has
    no test (no permutation moves it), and one sample a side has no noise to test against."""
    return [change for change in changes if change.p_value is not None]


def judge_family(changes: Sequence[MetricChange], fdr: float, min_effect_pct: float) -> int:
    """Every tested row's q-value and its verdict judged against the family: q < fdr, the interval and the effect,
    or "cannot decide". Changes are updated in place; returns the family's size."""
    family = tested(changes)
    for change, q in zip(family, benjamini_hochberg([c.p_value for c in family])):
        change.q_value = q
        if can_decide(change.a_n, change.b_n, len(family), fdr):
            change.verdict, change.reason = judge(change, q, fdr, min_effect_pct)
        else:
            change.verdict, change.reason = "cannot decide", too_few_text(change.a_n, change.b_n, len(family), fdr)
    return len(family)


def too_few_text(a_n: int, b_n: int, family: int, fdr: float) -> str:
    return (f"{a_n} vs {b_n} repeats cannot reach q < {fdr:g} among {family} test{'s' if family != 1 else ''}; "
            f"{repeats_text(family, fdr)} a side can")


def repeats_note(a_n: int, b_n: int, family: int, fdr: float) -> str | None:
    """Why nothing in a table can be called, when the sample counts alone decide it: said once under it."""
    if min(a_n, b_n) < 2:
        return (f"{a_n} vs {b_n} repeats: noise unknown; run at least {repeats_text(family, fdr)} repeats on each "
                f"side to tell a change from noise among {family} tests")
    if not can_decide(a_n, b_n, family, fdr):
        return f"{too_few_text(a_n, b_n, family, fdr)}: every verdict here reads cannot decide"
    return None


def decides_text(subject: str, family: int, repeats: int, fdr: float, fix: str, otherwise: str) -> str:
    """Whether `repeats` a side can decide a family of this size, said before the repeats run: `fix`, what to set,
    and `otherwise`, what the table will read, when they cannot."""
    head, needed = f"{subject}: {family} tests judged together (q < {fdr:g})", repeats_for(family, fdr)
    if needed is not None and repeats >= needed:
        return f"{head}; {repeats} repeats can decide them ({needed} needed)"
    return (f"{head}: {repeats} repeats cannot decide any of them, {repeats_text(family, fdr)} a side can ({fix}); "
            f"{otherwise}")


def chance_text(family: int, fdr: float) -> str:
    """What chance alone does to a family this size at the raw 0.05: said under every table of verdicts."""
    return (f"{family} test{'s' if family != 1 else ''}: at a raw p < {ALPHA:g}, chance alone would mark "
            f"{family * ALPHA:.1f} of them; a verdict needs q < {fdr:g} (Benjamini-Hochberg across the table)")
