"""The latency lab's report parts: clients sorted by e2e p50 with the produce/consume split under each and the
ratio of each e2e p50 to the `tcp` floor; the headline; what the charts need."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument, Run, Stat
from kafkabench.report.table import Table, columns, ms

SPLIT = ("produce", "consume")
TIPS = {"metric": "e2e", "cold": "cold", "x floor": "x_floor", "cpu/msg": "cpu_per_msg", "p50": "percentiles",
        "p90": "percentiles", "p99": "percentiles", "p99.9": "percentiles", "max": "percentiles"}


def floor_p50(document: ResultDocument) -> float | None:
    for run in document.runs:
        if run.client == "tcp" and "e2e" in run.stats:
            return run.stats["e2e"].p50_ms
    return None


def _sort_key(run: Run) -> float:
    return run.stats["e2e"].p50_ms if "e2e" in run.stats else float("inf")


def _paused(params: dict) -> str:
    pause = params.get("pause_s") or 0
    return f", {pause:g} s of quiet before each" if pause else ""


def latency_table(document: ResultDocument) -> Table:
    params = document.params
    title = (f"e2e latency of one {params.get('size_bytes', '?')}-byte value, ms "
             f"(acks={params.get('acks')}, {params.get('count')} measured after {params.get('warmup')} warm-up, "
             f"{params.get('rounds')} interleaved rounds{_paused(params)})")
    names = ["client", "version", "metric", "count", "cold", "p50", "p90", "p99", "p99.9", "max", "x floor", "cpu/msg"]
    table = Table(title, columns(names, ("client", "version", "metric"), TIPS, wide=("version", "p90", "p99.9")))
    floor = floor_p50(document)
    for run in sorted(document.runs, key=_sort_key):
        e2e, cold = run.stats.get("e2e"), run.stats.get("cold")
        x_floor = f"{e2e.p50_ms / floor:.1f}" if e2e and floor else "-"
        table.add(run.client, run.client_version, "e2e", *_cells(e2e, cold.max_ms if cold else None), x_floor,
                  _cpu_per_message(run), kind="error" if run.error else "")
        for metric in SPLIT:
            table.add("", "", metric, *_cells(run.stats.get(metric), None), "", "", kind="sub")
    return table


def run_errors(document: ResultDocument) -> list[str]:
    return [f"{run.client}: {run.error}" for run in document.runs if run.error]


def headline(document: ResultDocument) -> str:
    e2e = sorted((run.stats["e2e"].p50_ms, run.client) for run in document.runs if "e2e" in run.stats)
    return "e2e p50 " + ", ".join(f"{client} {p50:.2f}" for p50, client in e2e) + " ms" if e2e else ""


def _cpu_per_message(run: Run) -> str:
    """The worker's CPU time in the measured rounds per measured message (the server side of http/tcp excluded)."""
    cpu, e2e = run.resources.get("cpu_s"), run.stats.get("e2e")
    return ms(cpu * 1000 / e2e.count) if cpu is not None and e2e else "-"


def _cells(stat: Stat | None, cold_ms: float | None) -> list[str]:
    if stat is None:
        return ["0", ms(cold_ms), "-", "-", "-", "-", "-"]
    return [str(stat.count), ms(cold_ms), ms(stat.p50_ms), ms(stat.p90_ms), ms(stat.p99_ms), ms(stat.p999_ms), ms(stat.max_ms)]
