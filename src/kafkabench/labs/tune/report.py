"""The tune's report parts: a row per trial (what it changed, its objective with the interval, the SLOs, the
verdict or why it was refused), a row per finalist of the re-runs (median, change from the default with its
interval, verdict), and the recommendation in one line."""

from __future__ import annotations

import statistics

from kafkabench.core.results import ResultDocument
from kafkabench.labs import broker_phases
from kafkabench.labs.tune.space import ROLES
from kafkabench.report.table import Table, columns, ms

TIPS = {"objective": "tune_objective", "verdict": "tune_verdict", "change": "tune_change"}


def _title(document: ResultDocument, what: str) -> str:
    p = document.params
    at = ((" one record at a time" if p.get("one_at_a_time") else f" at {p.get('rate', 0):g} records/s")
          if p.get("goal") == "latency" else "")
    if p.get("rates"):
        at = f" at {p['rates'][0]:,.0f}-{p['rates'][1]:,.0f} records/s"
    values = f"{p['size']:,}-byte values" if p.get("size") else "values"  # none in a tune that ended before its trials
    return f"tune {p.get('goal')}: client {p.get('client')}, {values}{at}, {p.get('sampler', '?')}; {what}"


def changes_text(settings: dict, baseline: dict) -> str:
    """What `settings` set that the default does not (role-prefixed where a name is a producer and a consumer one)."""
    changed = [(role, k, v) for role in ROLES for k, v in settings.get(role, {}).items()
               if baseline.get(role, {}).get(k) != v]
    twice = {k for _, k, _ in changed if sum(1 for _, other, _ in changed if other == k) > 1}
    return ", ".join(_change(role, k, v, k in twice) for role, k, v in changed) or "no change"


def _change(role: str, name: str, value: str, ambiguous: bool) -> str:
    """One changed setting; the brokers' said to be theirs (broker num.io.threads=2, jvm -XX:G1HeapRegionSize=4m)."""
    if role == "jvm":
        return f"jvm {name}{value}"
    return f"{role + ' ' if ambiguous or role == 'broker' else ''}{name}={value}"


def changed_count(settings: dict, baseline: dict) -> str:
    """How many settings differ from the default's: the short form of changes_text, for a table's narrow column."""
    changed = sum(1 for role in ROLES for k, v in settings.get(role, {}).items() if baseline.get(role, {}).get(k) != v)
    return "no change" if not changed else f"{changed} setting{'s' if changed > 1 else ''}"


def _verdict(trial: dict) -> tuple[str, str]:
    """A trial's verdict in a word, and why."""
    if trial.get("refused"):
        return "refused", trial["refused"]
    if trial.get("pruned"):
        return "stopped", f"stopped early: {trial['pruned']}"
    if trial.get("objective") is None:
        return ("run failed", "the run failed") if trial.get("state") == "fail" else (trial.get("state", "-"), "-")
    return ("meets", "meets every check") if trial.get("feasible") else ("misses", "; ".join(trial.get("reasons", [])))


def _interval(values: list[float] | None) -> str:
    return "-" if not values else f"{ms(values[0])} ({ms(values[1])}-{ms(values[2])})"


def objective_name(params: dict) -> str:
    if params.get("goal") == "throughput":
        return "records/s"
    return f"e2e {'p99' if params.get('goal') == 'pareto' else params.get('objective', 'p50')} ms (95 %)"


def _objective(params: dict, values: list[float] | None) -> str:
    if params.get("goal") != "throughput" or not values:
        return _interval(values)
    return f"{values[0]:,.0f}" + (f" ({values[2]:,.0f})" if values[2] > values[0] else "")


def trials_table(document: ResultDocument) -> Table:
    p = document.params
    slo_names = [text.split("=")[0].strip().lower() for text in p.get("slo", [])]
    pareto = p.get("goal") == "pareto"
    slo_names = [n for n in slo_names if not (pareto and n == "p99")]
    names = ["trial", "kind", *(["achieved/s"] if pareto else []), objective_name(p),
             *(f"e2e {n} ms (95 %)" for n in slo_names), "verdict", "why", "changed", "settings"]
    what = ("a row per trial, latencies in ms; records/s: the highest rate sustained, in parentheses the next one "
            "tried, which failed" if p.get("goal") == "throughput" else "a row per trial, latencies in ms")
    table = Table(_title(document, what),
                  columns(names, ("kind", "verdict", "why", "changed", "settings"),
                          {objective_name(p): "tune_objective", "verdict": "tune_verdict"}, wide=("why", "settings")))
    for trial in p.get("trials", []):
        slos = [_interval(trial.get("percentiles_ms", {}).get(f"p{float(n.lstrip('p')):g}")) for n in slo_names]
        achieved = [f"{trial['achieved']:,.0f}" if trial.get("achieved") else "-"] if pareto else []
        settings, baseline = trial.get("settings", {}), p.get("baseline", {})
        table.add(str(trial["number"]), trial["kind"], *achieved, _objective(p, trial.get("objective")), *slos,
                  *_verdict(trial), changed_count(settings, baseline), changes_text(settings, baseline),
                  kind="dominated" if trial.get("refused") or not trial.get("feasible") else "")
    return table


def front_table(document: ResultDocument) -> Table | None:
    """pareto: the front points re-measured, each against the default at its own rate."""
    entries = document.params.get("front")
    if not entries:
        return None
    names = ["point", "offered/s", "runs", "e2e p99 ms, median (range)", "default's", "change", "95 % CI", "verdict",
             "checks met", "changed", "settings"]
    table = Table(_title(document, "points of the front and the default at their rates, re-measured, interleaved"),
                  columns(names, ("point", "95 % CI", "verdict", "checks met", "changed", "settings"),
                          {"change": "tune_change"}, wide=("runs", "95 % CI", "checks met", "settings")))
    for entry in entries:
        change = entry["change"]
        table.add(entry["label"], f"{entry['rate']:,.0f}", str(len(entry["values"])),
                  _median_range(entry["values"], False), _median_range(entry["default_values"], False),
                  *_change_text(change), change["verdict"],
                  f"{sum(entry['feasible'])}/{len(entry['feasible'])} (default "
                  f"{sum(entry['default_feasible'])}/{len(entry['default_feasible'])})",
                  changed_count(entry["settings"], document.params.get("baseline", {})),
                  changes_text(entry["settings"], document.params.get("baseline", {})),
                  kind="reference" if entry["recommended"] else "")
    return table


def _change_text(change: dict | None) -> tuple[str, str]:
    """The change against the default, and its 95 % interval."""
    if not change or change.get("change_pct") is None:
        return "-", "-"
    interval = (f"{change['ci_low_pct']:+.1f} to {change['ci_high_pct']:+.1f} %" if change.get("ci_low_pct") is not None
                else "-")
    return f"{change['change_pct']:+.1f} %", interval


def final_table(document: ResultDocument) -> Table | None:
    final = document.params.get("final")
    if not final:
        return None
    throughput = document.params.get("goal") == "throughput"
    objective = "records/s" if throughput else f"e2e {document.params.get('objective', 'p50')} ms"
    names = ["candidate", "runs", f"{objective}, median (range)", "change", "95 % CI", "verdict", "checks met", "changed",
             "settings"]
    table = Table(_title(document, "the finalists and the default re-measured, interleaved"),
                  columns(names, ("candidate", "95 % CI", "verdict", "checks met", "changed", "settings"),
                          {"change": "tune_change"}, wide=("95 % CI", "settings")))
    chosen = document.params.get("recommendation", {}).get("label")
    for entry in final:
        values, change = entry["values"], entry.get("change")
        met = f"{sum(entry['feasible'])}/{len(entry['feasible'])}"
        baseline = document.params.get("baseline", {})
        table.add(entry["label"], str(len(values)), _median_range(values, throughput),
                  *_change_text(change), change["verdict"] if change else "baseline",
                  met, changed_count(entry["settings"], baseline), changes_text(entry["settings"], baseline),
                  kind="reference" if entry["label"] == chosen else "")
    return table


def _median_range(values: list[float], throughput: bool) -> str:
    """A median and its range, never a bare mean: one pause in a re-run makes its figure a long tail's."""
    if not values:
        return "-"
    text = (lambda value: f"{value:,.0f}") if throughput else ms
    spread = f" ({text(min(values))}-{text(max(values))})" if len(values) > 1 else ""
    return f"{text(statistics.median(values))}{spread}"


def headline(document: ResultDocument) -> str:
    recommendation = document.params.get("recommendation")
    if not recommendation:
        return "no recommendation" + (f": {document.error}" if document.error else "")
    return f"recommendation: {recommendation['reason']}"


def lines(document: ResultDocument) -> list[str]:
    out = []
    if document.params.get("stop_reason"):
        out.append(f"search stopped: {document.params['stop_reason']}")
    importances = document.params.get("importances") or {}
    if importances:
        ranked = sorted(importances.items(), key=lambda item: -item[1])
        out.append("what mattered (Optuna's importances): " + ", ".join(f"{k} {v:.0%}" for k, v in ranked[:5]))
    if document.params.get("outputs"):
        out.append("written: " + ", ".join(document.params["outputs"]))
    chosen = (document.params.get("recommendation") or {}).get("label")
    for label, parts in (document.params.get("broker_phases") or {}).items():  # the default's and the chosen's
        if label in ("default", chosen):
            out += broker_phases.text(label, parts)
    return out + [headline(document)]
