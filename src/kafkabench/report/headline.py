"""One line per result: what a person wants to see first while a plan runs; empty when a partial result
(a failed cell) has nothing to say."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument


def headline(document: ResultDocument) -> str:
    if document.lab == "latency":
        e2e = sorted((run.stats["e2e"].p50_ms, run.client) for run in document.runs if "e2e" in run.stats)
        return "e2e p50 " + ", ".join(f"{client} {p50:.2f}" for p50, client in e2e) + " ms" if e2e else ""
    if document.lab in ("produce", "consume"):
        run = next((r for r in document.runs if r.scenario == document.lab and "records_per_s" in r.throughput), None)
        if run is None:  # never a 0 that was not measured
            return ""
        return f"{run.client} {run.throughput['records_per_s']:,.0f} records/s, {run.throughput['payload_mb_per_s']:.1f} MB/s"
    if document.lab == "compression":
        stored = [r for r in document.runs if "stored_bytes" in r.counters]
        smallest = min(stored, key=lambda r: r.counters["stored_bytes"], default=None)
        return f"smallest {smallest.params['format']} {smallest.params['codec']}: {smallest.counters['stored_bytes'] / 1e6:.2f} MB" if smallest else ""
    return ""
