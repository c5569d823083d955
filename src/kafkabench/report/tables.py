"""The terminal tables' content for the HTML report, built from the report's data dict (not from rich
objects): each table is {"title", "columns": [{"name", "numeric", "tip"}], "rows": [{"cells", "kind"}]},
a row kind being "" (a run), "sub" (a metric under its run), "dominated", "reference" (another tool's
figures) or "error"."""

from __future__ import annotations

from kafkabench.report.definitions import tooltip

LATENCY_SPLIT = ("produce", "consume")
OBJECTIVE_KEYS = ("stored_bytes", "wire_bytes", "duration_s", "cpu_s", "broker_cpu_s")


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _fixed(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:.2f}"


def _columns(names: list[str], text: tuple[str, ...], tips: dict[str, str]) -> list[dict]:
    return [{"name": name, "numeric": name not in text, "tip": tooltip(tips.get(name, name))} for name in names]


def _stat(run: dict, metric: str, field: str) -> float | None:
    stat = run["stats"].get(metric)
    return stat[field] if stat else None


def tables(result: dict) -> list[dict]:
    lab = result["lab"]
    if lab == "latency":
        return [latency_table(result)]
    if lab in ("produce", "consume"):
        return [throughput_table(result)]
    if lab == "compression":
        return [compression_table(result), ratio_table(result)]
    return [runs_table(result)]


LATENCY_TIPS = {"metric": "e2e", "cold": "cold", "x floor": "x_floor", "cpu/msg": "cpu_per_msg", "p50": "percentiles",
                "p90": "percentiles", "p99": "percentiles", "p99.9": "percentiles", "max": "percentiles"}


def latency_table(result: dict) -> dict:
    params = result["params"]
    title = (f"e2e latency of one {params.get('size_bytes', '?')}-byte value, ms (acks={params.get('acks')}, "
             f"{params.get('count')} measured after {params.get('warmup')} warm-up, {params.get('rounds')} interleaved rounds)")
    names = ["client", "version", "metric", "count", "cold", "p50", "p90", "p99", "p99.9", "max", "x floor", "cpu/msg"]
    floor = result["floor_p50_ms"]
    rows = []
    for run in sorted(result["runs"], key=_e2e_p50):
        e2e, cold = run["stats"].get("e2e"), run["stats"].get("cold")
        ratio = f"{e2e['p50_ms'] / floor:.1f}" if e2e and floor else "-"
        rows.append({"cells": [run["client"], run["client_version"], "e2e", *_latency_cells(e2e, cold), ratio,
                               _cpu_per_message(run)], "kind": "error" if run["error"] else ""})
        for metric in LATENCY_SPLIT:
            rows.append({"cells": ["", "", metric, *_latency_cells(run["stats"].get(metric), None), "", ""], "kind": "sub"})
    return {"title": title, "columns": _columns(names, ("client", "version", "metric"), LATENCY_TIPS), "rows": rows}


def _e2e_p50(run: dict) -> float:
    stat = run["stats"].get("e2e")
    return stat["p50_ms"] if stat else float("inf")


def _latency_cells(stat: dict | None, cold: dict | None) -> list[str]:
    cold_ms = _ms(cold["max_ms"]) if cold else "-"
    if stat is None:
        return ["0", cold_ms, "-", "-", "-", "-", "-"]
    return [str(stat["count"]), cold_ms, *(_ms(stat[f]) for f in ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"))]


def _cpu_per_message(run: dict) -> str:
    cpu, e2e = run["resources"].get("cpu_s"), run["stats"].get("e2e")
    return _ms(cpu * 1000 / e2e["count"]) if cpu is not None and e2e else "-"


THROUGHPUT_TIPS = {"records/s": "records_per_s", "MB/s": "payload_mb_per_s", "publish p50": "publish_latency",
                   "delay p99": "publish_delay", "e2e p50": "e2e_under_load", "e2e p99": "e2e_under_load", "cpu s": "cpu_s",
                   "p99": "percentiles", "p99.9": "percentiles", "max": "percentiles"}


def throughput_table(result: dict) -> dict:
    params = result["params"]
    title = (f"{result['lab']}: topic {params.get('topic')}, {params.get('size_bytes')}-byte values, client "
             f"{params.get('client')} (MB = 2^20 bytes; latencies in ms)")
    names = ["role", "client", "records", "records/s", "MB/s", "publish p50", "p99", "p99.9", "max", "delay p99",
             "e2e p50", "e2e p99", "errors", "cpu s"]
    ours = {run["scenario"]: run for run in result["runs"] if run["client"] != "apache"}
    rows = [_apache_row(run, ours.get(run["scenario"])) if run["client"] == "apache" else _throughput_row(run)
            for run in result["runs"]]
    return {"title": title, "columns": _columns(names, ("role", "client"), THROUGHPUT_TIPS), "rows": rows}


def _records(run: dict) -> int:
    counters = run["counters"]
    return counters.get("acked", counters.get("received", run["reported"].get("records", 0)))


def _throughput_row(run: dict) -> dict:
    publish = [_ms(_stat(run, "publish_latency", f)) for f in ("p50_ms", "p99_ms", "p999_ms", "max_ms")]
    return {"cells": [run["scenario"], f"{run['client']} {run['client_version']}", f"{_records(run):,}",
                      f"{run['throughput'].get('records_per_s', 0):,.0f}", _fixed(run["throughput"].get("payload_mb_per_s", 0)),
                      *publish, _ms(_stat(run, "publish_delay", "p99_ms")), _ms(_stat(run, "e2e", "p50_ms")),
                      _ms(_stat(run, "e2e", "p99_ms")), _errors(run), _fixed(run["resources"].get("cpu_s", 0), 1)],
            "kind": "error" if run["error"] else ""}


def _apache_row(run: dict, ours: dict | None) -> dict:
    figures, theirs = run["reported"], run["throughput"].get("records_per_s")
    ours_rate = ours["throughput"].get("records_per_s") if ours else None
    ratio = f" (kafkabench / Apache = {ours_rate / theirs:.2f})" if ours_rate and theirs else ""
    whole = [f"{figures[key]:g}" if key in figures else "-" for key in ("p50_ms", "p99_ms", "p999_ms", "max_ms")]
    return {"cells": [run["scenario"], f"Apache {run['params'].get('tool')}{ratio}", f"{_records(run):,}",
                      f"{theirs or 0:,.0f}", _fixed(run["throughput"].get("payload_mb_per_s")), *whole,
                      "-", "-", "-", "-", "-"], "kind": "reference"}


def _errors(run: dict) -> str:
    by_type = {k.split(".", 1)[1]: v for k, v in run["counters"].items() if k.startswith("errors.")}
    total = run["counters"].get("errors", 0)
    return f"{total} ({', '.join(f'{k} {v}' for k, v in by_type.items())})" if by_type else str(total)


COMPRESSION_TIPS = {"stored MB": "stored_bytes", "wire MB": "wire_bytes", "payload MB": "payload_bytes",
                    "duration s": "duration_s", "producer CPU s": "cpu_s", "broker CPU s": "broker_cpu_s",
                    "read+decode rows/s": "read_rows_per_s", "stored": "stored_bytes", "wire": "wire_bytes",
                    "duration": "duration_s", "producer CPU": "cpu_s", "broker CPU": "broker_cpu_s"}


def compression_table(result: dict) -> dict:
    params = result["params"]
    title = (f"compression: {params.get('rows')} rows of {params.get('dataset')}, median of {params.get('repeats')} "
             "repeat(s) (MB = 10^6 bytes; CPU = producer process + broker processes)")
    names = ["format codec", "stored MB", "wire MB", "payload MB", "duration s", "producer CPU s", "broker CPU s",
             "read+decode rows/s", "pareto"]
    rows = []
    for run in result["runs"]:
        counters, resources = run["counters"], run["resources"]
        rows.append({"cells": [run["label"], _mb(counters.get("stored_bytes")), _mb(counters.get("wire_bytes")),
                               _mb(counters.get("payload_bytes")), _fixed(run["duration_s"]), _fixed(resources.get("cpu_s")),
                               _fixed(resources.get("broker_cpu_s")), f"{run['throughput'].get('read_rows_per_s', 0):,.0f}",
                               run["pareto"] or "-"],
                     "kind": "error" if run["error"] else "dominated" if run["pareto"] == "dominated" else ""})
    return {"title": title, "columns": _columns(names, ("format codec", "pareto"), COMPRESSION_TIPS), "rows": rows}


def ratio_table(result: dict) -> dict:
    names = ["format codec", "stored", "wire", "duration", "producer CPU", "broker CPU"]
    baseline = {run["params"].get("format"): run for run in result["runs"] if run["params"].get("codec") == "none"}
    rows = []
    for run in result["runs"]:
        base = baseline.get(run["params"].get("format"))
        rows.append({"cells": [run["label"], *(_ratio(_value(run, key), _value(base, key) if base else None)
                                               for key in OBJECTIVE_KEYS)], "kind": ""})
    return {"title": "ratios to the same format uncompressed (below 1: less than without a codec)",
            "columns": _columns(names, ("format codec",), COMPRESSION_TIPS), "rows": rows}


def _value(run: dict, key: str) -> float | None:
    if key in ("stored_bytes", "wire_bytes"):
        return run["counters"].get(key)
    if key == "duration_s":
        return run["duration_s"]
    return run["resources"].get(key)


def _ratio(value: float | None, base: float | None) -> str:
    return "-" if value is None or not base else f"{value / base:.2f}"


def runs_table(result: dict) -> dict:
    """Any other lab: each run's latencies, rate and duration, so a new lab is never left out of a report."""
    metrics = list(dict.fromkeys(metric for run in result["runs"] for metric in run["stats"]))
    names = ["run", "scenario", *(f"{m} {p}" for m in metrics for p in ("p50", "p99")), "records/s", "duration s"]
    rows = [{"cells": [run["label"], run["scenario"],
                       *(_ms(_stat(run, m, f)) for m in metrics for f in ("p50_ms", "p99_ms")),
                       f"{run['throughput'].get('records_per_s', 0):,.0f}", _fixed(run["duration_s"])],
             "kind": "error" if run["error"] else ""} for run in result["runs"]]
    return {"title": f"{result['lab']}: latencies in ms", "columns": _columns(names, ("run", "scenario"),
                                                                                {"duration s": "duration_s"}), "rows": rows}
