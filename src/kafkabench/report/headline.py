"""One line per finished result: what a person wants to see first while a plan runs."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument


def headline(document: ResultDocument) -> str:
    if document.lab == "latency":
        e2e = sorted((run.stats["e2e"].p50_ms, run.client) for run in document.runs if "e2e" in run.stats)
        return "e2e p50 " + ", ".join(f"{client} {p50:.2f}" for p50, client in e2e) + " ms"
    if document.lab in ("produce", "consume"):
        run = next((r for r in document.runs if r.scenario == document.lab), None)
        if run is None:
            return ""
        return f"{run.client} {run.throughput.get('records_per_s', 0):,.0f} records/s, {run.throughput.get('payload_mb_per_s', 0):.1f} MB/s"
    if document.lab == "compression":
        smallest = min(document.runs, key=lambda r: r.counters.get("stored_bytes", 0), default=None)
        return f"smallest {smallest.params['format']} {smallest.params['codec']}: {smallest.counters['stored_bytes'] / 1e6:.2f} MB" if smallest else ""
    return ""
