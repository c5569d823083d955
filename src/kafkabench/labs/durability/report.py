"""The durability lab's report parts: one row per cell in the seed's shape (topic settings, records/s, MB/s,
ms per message) with the latency percentiles it lacked, medians over repeats with their spread, and whether
each cell differs from the fastest beyond noise (compare's permutation test, interval and effect size)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from kafkabench.core.results import ResultDocument, Run
from kafkabench.report.compare import MetricChange, compare_metric
from kafkabench.report.table import Table, columns, fixed, ms, stat

TIPS = {"records/s": "records_per_s", "MB/s": "payload_mb_per_s", "publish p50": "publish_latency",
        "e2e p50": "e2e_under_load", "e2e p99": "e2e_under_load", "p99": "percentiles", "p99.9": "percentiles"}
NAMES = ["cell", "client", "min ISR", "records/s", "range", "MB/s", "ms/msg", "publish p50", "p99", "p99.9",
         "e2e p50", "e2e p99", "cpu s", "vs fastest", "n"]


@dataclass
class CellSummary:
    label: str
    client: str
    params: dict
    produce: list[Run] = field(default_factory=list)  # the repeats that finished
    consume: list[Run] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    versus: MetricChange | None = None

    def median(self, values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return statistics.median(present) if present else None

    @property
    def records_per_s(self) -> list[float]:
        return [run.throughput.get("records_per_s", 0.0) for run in self.produce]

    def produce_stat(self, field_name: str) -> float | None:
        return self.median([stat(run, "publish_latency", field_name) for run in self.produce])

    def e2e_stat(self, field_name: str) -> float | None:
        return self.median([stat(run, "e2e", field_name) for run in self.consume])

    @property
    def ms_per_message(self) -> float | None:
        """The seed's "avg latency": duration / count, not a latency."""
        return self.median([run.duration_s * 1000 / run.counters["acked"] for run in self.produce if run.counters.get("acked")])


def summarize(document: ResultDocument) -> list[CellSummary]:
    cells: dict[str, CellSummary] = {}
    for label in document.params.get("cells", []):
        cells[label] = CellSummary(label, "", {})
    for run in document.runs:
        label = run.params.get("cell", run.client)
        cell = cells.setdefault(label, CellSummary(label, run.client, run.params))
        cell.client, cell.params = run.client, run.params
        if run.error:
            cell.failed.append(f"repeat {run.params.get('repeat')}: {run.error}")
        elif run.scenario == "produce":
            cell.produce.append(run)
        elif run.scenario == "consume":
            cell.consume.append(run)
    measured = [c for c in cells.values() if c.produce]
    if measured:
        fastest = max(measured, key=lambda c: statistics.median(c.records_per_s))
        for cell in measured:
            if cell is not fastest:
                cell.versus = compare_metric("throughput.records_per_s", "higher", fastest.records_per_s, cell.records_per_s)
    return list(cells.values())


def _versus(cell: CellSummary) -> str:
    if not cell.produce:
        return "-"
    if cell.versus is None:
        return "fastest"
    change = cell.versus
    text = f"{change.change_pct:+.0f} %"
    return f"{text} beyond noise" if change.verdict in ("regression", "improvement") else f"{text} ({change.reason})"


def _min_isr(params: dict) -> str:
    effective = params.get("effective_min_isr")
    if effective is None:
        return "-"
    return f"{effective} (capped)" if params.get("min_insync_replicas", effective) != effective else str(effective)


def cells_table(document: ResultDocument) -> Table:
    params = document.params
    layout = document.cluster.get("layout") or f"{document.cluster.get('brokers', '?')} brokers"
    title = (f"durability: {params.get('size')}-byte values, {params.get('repeats')} repeat(s) per cell in "
             f"{params.get('order')} order (seed {params.get('seed')}), {layout}; medians over repeats "
             "(MB = 2^20 bytes; latencies in ms; ms/msg = duration / count, the seed's \"avg latency\")")
    table = Table(title, columns(NAMES, ("cell", "client", "min ISR", "range", "vs fastest"), TIPS))
    for cell in summarize(document):
        rates = cell.records_per_s
        if not rates:
            table.add(cell.label, cell.client, _min_isr(cell.params), *["-"] * 11, str(len(cell.failed)), kind="error")
            continue
        table.add(cell.label.removesuffix(f" {cell.client}"), cell.client, _min_isr(cell.params),
                  f"{statistics.median(rates):,.0f}", f"{min(rates):,.0f}..{max(rates):,.0f}",
                  fixed(cell.median([r.throughput.get("payload_mb_per_s") for r in cell.produce])),
                  fixed(cell.ms_per_message, 4), ms(cell.produce_stat("p50_ms")), ms(cell.produce_stat("p99_ms")),
                  ms(cell.produce_stat("p999_ms")), ms(cell.e2e_stat("p50_ms")), ms(cell.e2e_stat("p99_ms")),
                  fixed(cell.median([r.resources.get("cpu_s") for r in cell.produce]), 1), _versus(cell),
                  str(len(rates)))
    return table


def lines(document: ResultDocument) -> list[str]:
    out = []
    for cell in summarize(document):
        note = cell.params.get("min_isr_note")
        if note:
            out.append(f"{cell.label}: {note}; it protects no more than that")
        for failure in cell.failed:
            out.append(f"{cell.label} {failure}")
    for label, reason in document.params.get("refused", {}).items():
        out.append(f"{label}: refused by the client: {reason}")
    return out


def headline(document: ResultDocument) -> str:
    measured = [c for c in summarize(document) if c.produce]
    if len(measured) < 2:
        return ""
    fastest = max(measured, key=lambda c: statistics.median(c.records_per_s))
    slowest = min(measured, key=lambda c: statistics.median(c.records_per_s))
    change = slowest.versus
    verdict = "beyond noise" if change and change.verdict in ("regression", "improvement") else "within noise"
    return (f"{fastest.label} is fastest; {slowest.label} costs {-change.change_pct:.0f} % of its records/s "
            f"({verdict})") if change else ""
