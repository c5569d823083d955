"""The OMB lab's report parts: one row per workload, its measured phase, and where OMB's result file is."""

from __future__ import annotations

from pathlib import Path

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
    for workload in document.params.get("workloads", []):
        name = Path(workload["file"]).stem
        if compared := workload.get("e2e_compared"):
            ours, theirs = compared["kafkabench"], compared["omb_definition"]
            out.append(f"{name}: e2e p50/p99 {ms(ours['p50_ms'])}/{ms(ours['p99_ms'])} ms here, "
                       f"{ms(theirs['p50_ms'])}/{ms(theirs['p99_ms'])} ms by OMB's definition on the same records "
                       f"({compared['dropped']:,} at or below 0 ms dropped)")
        if times := workload.get("cluster_times"):
            out.append(f"{name}: {cluster_times_text(times)}")
    return out


def run_label(run: Run) -> str:
    return f"{run.params.get('workload')} {run.scenario} {run.client}"


def cluster_times_text(times: dict) -> str:
    """`1,000 topics (1,000 partitions) created and in sync in 3.4 s; a metadata change 0.08 s; controller 3001
    killed: another controller took over, a metadata change 1.9 s after; broker 1 restarted, in sync 12.5 s after`"""
    failover, restart = times["controller_failover"], times["broker_restart"]
    return (f"{_count(times['topics'], 'topic')} ({_count(times['partitions'], 'partition')}) created and in sync in "
            f"{times['create_s']:.1f} s; a metadata change {times['metadata_change_s']:.2f} s; controller "
            f"{failover['killed']} killed: {failover['how']}, a metadata change {failover['metadata_change_s']:.1f} s "
            f"after; broker {restart['broker']} restarted, in sync {restart['in_sync_s']:.1f} s after")


def _count(number: int, thing: str) -> str:
    return f"{number:,} {thing}{'s' if number != 1 else ''}"
