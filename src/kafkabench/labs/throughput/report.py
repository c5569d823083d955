"""The throughput lab's report parts: one line per progress window while it runs, the summary table with
Apache's figures beside kafkabench's when they were asked for, and what the table cannot say."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument, Run
from kafkabench.report.table import Table, columns, fixed, ms, settings_text, stat

TIPS = {"records/s": "records_per_s", "MB/s": "payload_mb_per_s", "publish p50": "publish_latency",
        "delay p99": "publish_delay", "e2e p50": "e2e_under_load", "e2e p99": "e2e_under_load", "cpu s": "cpu_s",
        "p99": "percentiles", "p99.9": "percentiles", "max": "percentiles"}
NAMES = ["role", "client", "version", "records", "records/s", "MB/s", "publish p50", "p99", "p99.9", "max", "delay p99",
         "e2e p50", "e2e p99", "errors", "cpu s"]
WIDE = ("version", "records", "p99.9", "max", "delay p99", "cpu s")


def summary_table(document: ResultDocument) -> Table:
    params = document.params
    values = f", {params.get('size_bytes')}-byte values" if document.lab == "produce" else ""  # a consumer reads what is there
    title = (f"{document.lab}: topic {params.get('topic')}{values}, client {params.get('client')}{settings_text(params)} "
             "(MB = 2^20 bytes; latencies in ms)")
    table = Table(title, columns(NAMES, ("role", "client", "version"), TIPS, WIDE))
    for run in document.runs:
        if run.client == "apache":
            _apache_row(table, run)
        else:
            table.add(run.scenario, run.client, run.client_version, f"{_records(run):,}",
                      f"{run.throughput.get('records_per_s', 0):,.0f}", fixed(run.throughput.get("payload_mb_per_s", 0)),
                      *(ms(stat(run, "publish_latency", f)) for f in ("p50_ms", "p99_ms", "p999_ms", "max_ms")),
                      ms(stat(run, "publish_delay", "p99_ms")), ms(stat(run, "e2e", "p50_ms")),
                      ms(stat(run, "e2e", "p99_ms")), _errors(run), fixed(run.resources.get("cpu_s", 0), 1),
                      kind="error" if run.error else "")
    return table


def _records(run: Run) -> int:
    if "warmup" in run.params:
        return run.params["warmup"]["measured_records"]
    return run.counters.get("acked", run.counters.get("received", run.reported.get("records", 0)))


def _apache_row(table: Table, run: Run) -> None:
    theirs = run.throughput.get("records_per_s")
    whole = [f"{run.reported[key]:g}" if key in run.reported else "-" for key in ("p50_ms", "p99_ms", "p999_ms", "max_ms")]
    table.add(run.scenario, "apache", str(run.params.get("tool")), f"{_records(run):,}", f"{theirs or 0:,.0f}",
              fixed(run.throughput.get("payload_mb_per_s")), *whole, "-", "-", "-", "-", "-", kind="reference")


def _errors(run: Run) -> str:
    by_type = {k.split(".", 1)[1]: v for k, v in run.counters.items() if k.startswith("errors.")}
    total = run.counters.get("errors", 0)
    return f"{total} ({', '.join(f'{k} {v}' for k, v in by_type.items())})" if by_type else str(total)


def headline(document: ResultDocument) -> str:
    run = next((r for r in document.runs if r.scenario == document.lab and "records_per_s" in r.throughput), None)
    if run is None:  # never a 0 that was not measured
        return ""
    return f"{run.client} {run.throughput['records_per_s']:,.0f} records/s, {run.throughput['payload_mb_per_s']:.1f} MB/s"


def definitions(document: ResultDocument) -> list[str]:
    lines = []
    ours = {run.scenario: run for run in document.runs if run.client != "apache"}
    for run in document.runs:
        mine, theirs = ours.get(run.scenario), run.throughput.get("records_per_s")
        if run.client == "apache" and mine and mine.throughput.get("records_per_s") and theirs:
            lines.append(f"{run.scenario}: kafkabench / Apache {run.params.get('tool')} records/s = "
                         f"{mine.throughput['records_per_s'] / theirs:.2f}")
    if any(run.client == "apache" for run in document.runs):
        lines.append("Apache's latencies are whole ms from the actual send (a record that waited for buffer space is timed "
                     "from when it got in), percentiles of a sample; kafkabench's are microsecond HdrHistograms of every "
                     "record, and `delay` is the time records waited past their scheduled send.")
    for run in document.runs:
        metric = "publish_latency" if run.scenario == "produce" else "e2e"
        for node, figures in run.nodes.items():
            latency = figures["stats"].get(metric)
            lines.append(f"{run.scenario} on node {node[:8]}...: {figures['workers']} worker(s), {figures['records']:,} records, "
                         f"{figures['throughput'].get('records_per_s', 0):,.0f} records/s"
                         + (f", {metric.replace('_', ' ')} p50 {latency['p50_ms']:.3g} ms, p99 {latency['p99_ms']:.3g} ms"
                            if latency else ""))
    for run in document.runs:
        if warmup := run.params.get("warmup"):
            metric = warmup["metric"].replace("_", " ")
            latency = (f", {metric} p50 {warmup['p50_ms']:.3g} ms, p99 {warmup['p99_ms']:.3g} ms"
                       if "p99_ms" in warmup else "")
            lines.append(f"{run.scenario}: the warm-up, the first {warmup['span_s']:.1f} s (--warmup "
                         f"{warmup['seconds']:g}, whole windows): {warmup['records']:,} records at "
                         f"{warmup['records_per_s']:,.0f}/s{latency}; kept out of every figure above (counters and "
                         "cpu s are the whole run's)")
    for run in document.runs:
        if run.scenario == "consume" and run.timings:
            lines.append("consume: " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(run.timings.items())))
        if "wire_bytes" in run.counters and run.counters.get("payload_bytes"):
            lines.append(f"{run.scenario}: wire bytes {run.counters['wire_bytes']:,} for {run.counters['payload_bytes']:,} "
                         f"payload bytes ({run.counters['wire_bytes'] / run.counters['payload_bytes']:.2f}x)")
    return lines
