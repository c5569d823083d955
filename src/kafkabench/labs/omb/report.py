"""The OMB lab's report parts: one row per workload, its measured phase, and where OMB's result file is."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument, Run
from kafkabench.report.table import Table, columns, ms, stat

NAMES = ["workload", "rate", "acked/s", "read/s", "publish p50", "p99", "e2e p50", "e2e p99", "warm-up p99",
         "errors"]
WIDE = ("warm-up p99", "errors")
TIPS = {"publish p50": "publish_latency", "p99": "publish_latency", "e2e p50": "e2e_under_load",
        "e2e p99": "e2e_under_load", "rate": "records_per_s"}


def summary_table(document: ResultDocument) -> Table:
    title = (f"omb: OpenMessaging Benchmark workloads, driver {document.params.get('driver')}, client "
             f"{document.params.get('client')} (the measured phase; latencies in ms)")
    table = Table(title, columns(NAMES, ("workload",), TIPS, WIDE))
    for workload in dict.fromkeys(run.params.get("workload") for run in document.runs):
        runs = {run.scenario: run for run in document.runs if run.params.get("workload") == workload}
        produced = runs.get("produce") or runs.get("build produce")  # a backlog's: built, then drained
        consumed = runs.get("consume") or runs.get("drain consume")
        if produced is None:
            continue
        rate = produced.params.get("rate", -1)
        warmup = produced.params.get("warmup", {})
        table.add(workload, f"{rate:,.0f}" if rate > 0 else "max",
                  f"{produced.throughput.get('records_per_s', 0):,.0f}",
                  f"{consumed.throughput.get('records_per_s', 0):,.0f}" if consumed else "-",
                  ms(stat(produced, "publish_latency", "p50_ms")), ms(stat(produced, "publish_latency", "p99_ms")),
                  ms(stat(consumed, "e2e", "p50_ms")) if consumed else "-",
                  ms(stat(consumed, "e2e", "p99_ms")) if consumed else "-",
                  ms(warmup.get("p99_ms")), str(produced.counters.get("errors", 0)),
                  kind="error" if produced.error else "")
    return table


def headline(document: ResultDocument) -> str:
    produced = [run for run in document.runs if run.scenario == "produce" and "records_per_s" in run.throughput]
    return f"{len(produced)} OMB workload(s); OMB's result files: {', '.join(document.params.get('omb_results', []))}" \
        if produced else ""


def lines(document: ResultDocument) -> list[str]:
    out = [f"OMB's result file: {name} (the same keys as OMB's, for its create_charts.py)"
           for name in document.params.get("omb_results", [])]
    out.append("e2e here runs from each record's intended send time to the consumer, in microseconds on one clock; "
               "OMB's from the record's millisecond timestamp, samples at or below 0 ms dropped")
    return out


def run_label(run: Run) -> str:
    return f"{run.params.get('workload')} {run.scenario} {run.client}"
