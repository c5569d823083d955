"""The frame of every lab's result document: what ran, where, on what; the lab fills in params and runs."""

from __future__ import annotations

import sys
from datetime import datetime, timezone

from kafkabench.cluster.target import Target
from kafkabench.core import environment
from kafkabench.core.results import ResultDocument


def new_document(lab: str, target: Target, params: dict, notes: list[str] | None = None) -> ResultDocument:
    cluster = {"kind": target.kind, "bootstrap_servers": target.bootstrap_servers}
    if target.kafka_version is not None:
        cluster["kafka_version"] = target.kafka_version
    return ResultDocument(lab=lab, created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), command=sys.argv,
                          tool=environment.tool(), machine=environment.machine(), cluster=cluster, params=params,
                          notes=list(notes or []))
