"""Where and with what the results were measured, over all results of a report: each distinct tool version,
client version, Kafka version, cluster shape and machine, with the results it applies to."""

from __future__ import annotations

import json
from collections.abc import Iterable

from kafkabench.core.results import ResultDocument

CLUSTER_FIELDS = ("kind", "brokers", "kafka_version", "bootstrap_servers")
MACHINE_FIELDS = ("cores", "memory_gb", "os", "python", "hostname")


def _distinct(pairs: Iterable[tuple[dict, str]]) -> list[dict]:
    """[{"value": ..., "results": [ids]}] in first-seen order; equal values share one entry."""
    seen: dict[str, dict] = {}
    for value, result_id in pairs:
        entry = seen.setdefault(json.dumps(value, sort_keys=True, default=str), {"value": value, "results": []})
        if result_id not in entry["results"]:
            entry["results"].append(result_id)
    return list(seen.values())


def _pick(source: dict, fields: tuple[str, ...]) -> dict:
    """The fields a result recorded; one it did not record is left out, not shown as a value."""
    return {field: source[field] for field in fields if source.get(field) is not None}


def environment(documents: list[ResultDocument], ids: list[str]) -> dict:
    pairs = list(zip(documents, ids))
    return {
        "tools": _distinct((dict(d.tool), i) for d, i in pairs),
        "kafka_versions": _distinct(({"kafka_version": d.cluster.get("kafka_version")}, i) for d, i in pairs),
        "clusters": _distinct((_pick(d.cluster, CLUSTER_FIELDS), i) for d, i in pairs),
        "machines": _distinct((_pick(d.machine, MACHINE_FIELDS), i) for d, i in pairs),
        "clients": _distinct(({"client": run.client, "version": run.client_version}, i)
                             for d, i in pairs for run in d.runs),
    }
