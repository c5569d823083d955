"""The latency lab's table: clients sorted by e2e p50, the produce/consume split under each, and the
ratio of each e2e p50 to the `tcp` floor."""

from __future__ import annotations

from rich.table import Table

from kafkabench.core.results import ResultDocument, Run, Stat

SPLIT = ("produce", "consume")


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def floor_p50(document: ResultDocument) -> float | None:
    for run in document.runs:
        if run.client == "tcp" and "e2e" in run.stats:
            return run.stats["e2e"].p50_ms
    return None


def _sort_key(run: Run) -> float:
    return run.stats["e2e"].p50_ms if "e2e" in run.stats else float("inf")


def latency_table(document: ResultDocument) -> Table:
    params = document.params
    title = (f"e2e latency of one {params.get('size_bytes', '?')}-byte value, ms "
             f"(acks={params.get('acks')}, {params.get('count')} measured after {params.get('warmup')} warm-up, "
             f"{params.get('rounds')} interleaved rounds)")
    table = Table(title=title, title_justify="left")
    for column in ("client", "version", "metric", "count", "cold", "p50", "p90", "p99", "p99.9", "max", "x floor", "cpu/msg"):
        table.add_column(column, justify="left" if column in ("client", "version", "metric") else "right")
    floor = floor_p50(document)
    for run in sorted(document.runs, key=_sort_key):
        e2e = run.stats.get("e2e")
        cold = run.stats.get("cold")
        ratio = f"{e2e.p50_ms / floor:.1f}" if e2e and floor else "-"
        table.add_row(run.client, run.client_version, "e2e", *_cells(e2e, cold.max_ms if cold else None), ratio,
                      _cpu_per_message(run), style="red" if run.error else None)
        for metric in SPLIT:
            table.add_row("", "", metric, *_cells(run.stats.get(metric), None), "", "", style="dim")
    return table


def run_errors(document: ResultDocument) -> list[str]:
    return [f"{run.client}: {run.error}" for run in document.runs if run.error]


def _cpu_per_message(run: Run) -> str:
    """The worker's CPU time in the measured rounds per measured message (the server side of http/tcp excluded)."""
    cpu, e2e = run.resources.get("cpu_s"), run.stats.get("e2e")
    return _ms(cpu * 1000 / e2e.count) if cpu is not None and e2e else "-"


def _cells(stat: Stat | None, cold_ms: float | None) -> list[str]:
    if stat is None:
        return ["0", _ms(cold_ms), "-", "-", "-", "-", "-"]
    return [str(stat.count), _ms(cold_ms), _ms(stat.p50_ms), _ms(stat.p90_ms), _ms(stat.p99_ms), _ms(stat.p999_ms), _ms(stat.max_ms)]
