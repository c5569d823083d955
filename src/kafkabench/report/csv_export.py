"""The report as CSV: one row per run, from the same data dict as the HTML report.

Columns are the union over all runs, in a stable order: the fixed ones first, then each group in turn
(params, stats, throughput, counters, resources, timings), keys in the order results first name them;
stats as `stats.<metric>.<field>`, the known metrics first. A run without a value leaves its cell empty.
Values are exact, never rounded.
"""

from __future__ import annotations

import csv
import io
import json

from kafkabench.core.histogram import Stat

FIXED = ("result_dir", "result_id", "lab", "created_at", "plan", "plan_cell", "plan_profile", "plan_repeat",
         "client", "client_version", "scenario", "duration_s", "error")
GROUPS = ("params", "stats", "throughput", "counters", "resources", "timings")
KNOWN_METRICS = ("e2e", "produce", "consume", "cold", "publish_latency", "publish_delay")
STAT_FIELDS = tuple(Stat.model_fields)


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return value


def _flat(result: dict, run: dict) -> dict[str, object]:
    plan = result["plan"]
    row: dict[str, object] = {
        "result_dir": result["directory"], "result_id": result["id"], "lab": result["lab"],
        "created_at": result["created_at"], "plan": plan.get("plan"), "plan_cell": plan.get("cell"),
        "plan_profile": plan.get("profile"), "plan_repeat": plan.get("repeat"), "client": run["client"],
        "client_version": run["client_version"], "scenario": run["scenario"], "duration_s": run["duration_s"],
        "error": run["error"] or result["error"],
    }
    for group in GROUPS:
        for key, value in run[group].items():
            if group == "stats":
                row.update({f"stats.{key}.{field}": value.get(field) for field in STAT_FIELDS})
            else:
                row[f"{group}.{key}"] = value
    return row


def _columns(rows: list[dict[str, object]]) -> list[str]:
    seen = list(dict.fromkeys(key for row in rows for key in row))
    ordered = list(FIXED)
    for group in GROUPS:
        names = [key for key in seen if key.startswith(f"{group}.")]
        if group == "stats":
            metrics = list(dict.fromkeys(name.split(".")[1] for name in names))
            metrics = [m for m in KNOWN_METRICS if m in metrics] + [m for m in metrics if m not in KNOWN_METRICS]
            names = [f"stats.{metric}.{field}" for metric in metrics for field in STAT_FIELDS]
        ordered += names
    return ordered


def table(data: dict) -> tuple[list[str], list[dict[str, object]]]:
    """(columns, one dict per run) in the report's order."""
    rows = [_flat(result, run) for result in data["results"] for run in result["runs"]]
    return _columns(rows), rows


def to_csv(data: dict) -> str:
    columns, rows = table(data)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(column)) for column in columns])
    return buffer.getvalue()
