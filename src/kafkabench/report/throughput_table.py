"""The throughput lab's tables: one line per progress window while it runs, a summary at the end with
Apache's figures beside kafkabench's when they were asked for."""

from __future__ import annotations

from rich.table import Table

from kafkabench.core.results import ResultDocument, Run


def window_line(role: str, entry: dict) -> str:
    metric = "publish" if entry["metric"] == "publish_latency" else "e2e"
    latency = (f"{metric} p50 {entry['p50_ms']:.2f} ms p99 {entry['p99_ms']:.2f} ms" if entry["p50_ms"] is not None
               else f"{metric} -")
    errors = f"  errors {entry['errors']}" if entry["errors"] else ""
    return (f"{role:8} t={entry['t_s']:7.1f}s  {entry['records_per_s']:>11,.0f} rec/s  {entry['mb_per_s']:>8.2f} MB/s  "
            f"{latency}{errors}")


def _ms(run: Run, metric: str, field: str) -> str:
    stat = run.stats.get(metric)
    return f"{getattr(stat, field):.2f}" if stat else "-"


def summary_table(document: ResultDocument) -> Table:
    table = Table(title=f"{document.lab}: topic {document.params.get('topic')}, {document.params.get('size_bytes')}-byte values, "
                        f"client {document.params.get('client')} (MB = 2^20 bytes; latencies in ms)", title_justify="left")
    for column in ("role", "client", "records", "records/s", "MB/s", "publish p50", "p99", "p99.9", "max",
                   "delay p99", "e2e p50", "e2e p99", "errors", "cpu s"):
        table.add_column(column, justify="left" if column in ("role", "client") else "right")
    ours = {run.scenario: run for run in document.runs if run.client != "apache"}
    for run in document.runs:
        records = run.counters.get("acked", run.counters.get("received", run.reported.get("records", 0)))
        if run.client == "apache":
            figures = run.reported
            base = ours.get(run.scenario)
            ratio = (f" (kafkabench / Apache = {base.throughput['records_per_s'] / run.throughput['records_per_s']:.2f})"
                     if base and base.throughput.get("records_per_s") and run.throughput.get("records_per_s") else "")
            table.add_row(run.scenario, f"Apache {run.params.get('tool')}{ratio}", f"{records:,}",
                          f"{run.throughput['records_per_s']:,.0f}", f"{run.throughput['payload_mb_per_s']:.2f}",
                          _whole(figures, "p50_ms"), _whole(figures, "p99_ms"), _whole(figures, "p999_ms"),
                          _whole(figures, "max_ms"), "-", "-", "-", "-", "-", style="cyan")
            continue
        table.add_row(run.scenario, f"{run.client} {run.client_version}", f"{records:,}",
                      f"{run.throughput.get('records_per_s', 0):,.0f}", f"{run.throughput.get('payload_mb_per_s', 0):.2f}",
                      _ms(run, "publish_latency", "p50_ms"), _ms(run, "publish_latency", "p99_ms"),
                      _ms(run, "publish_latency", "p999_ms"), _ms(run, "publish_latency", "max_ms"),
                      _ms(run, "publish_delay", "p99_ms"), _ms(run, "e2e", "p50_ms"), _ms(run, "e2e", "p99_ms"),
                      _errors(run), f"{run.resources.get('cpu_s', 0):.1f}", style="red" if run.error else None)
    return table


def _whole(figures: dict, key: str) -> str:
    return f"{figures[key]:g}" if key in figures else "-"


def _errors(run: Run) -> str:
    by_type = {k.split(".", 1)[1]: v for k, v in run.counters.items() if k.startswith("errors.")}
    total = run.counters.get("errors", 0)
    return f"{total} ({', '.join(f'{k} {v}' for k, v in by_type.items())})" if by_type else str(total)


def definitions(document: ResultDocument) -> list[str]:
    lines = []
    if any(run.client == "apache" for run in document.runs):
        lines.append("Apache's latencies are whole ms from the actual send (a record that waited for buffer space is timed "
                     "from when it got in), percentiles of a sample; kafkabench's are microsecond HdrHistograms of every "
                     "record, and `delay` is the time records waited past their scheduled send.")
    for run in document.runs:
        if run.scenario == "consume" and run.timings:
            lines.append("consume: " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(run.timings.items())))
        if "wire_bytes" in run.counters and run.counters.get("payload_bytes"):
            lines.append(f"{run.scenario}: wire bytes {run.counters['wire_bytes']:,} for {run.counters['payload_bytes']:,} "
                         f"payload bytes ({run.counters['wire_bytes'] / run.counters['payload_bytes']:.2f}x)")
    return lines
