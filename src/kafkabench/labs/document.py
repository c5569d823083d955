"""The frame of every lab's result document: what ran, where, on what; the lab fills in params and runs."""

from __future__ import annotations

import sys
from datetime import datetime, timezone

from kafkabench.cluster.target import Target
from kafkabench.config.security import hostname_warning
from kafkabench.core import environment
from kafkabench.core.results import ResultDocument


def new_document(lab: str, target: Target, params: dict, notes: list[str] | None = None) -> ResultDocument:
    cluster = {"kind": target.kind, "bootstrap_servers": target.bootstrap_servers,
               "listener": target.connection.describe()}
    if target.kafka_version is not None:
        cluster["kafka_version"] = target.kafka_version
    if target.broker_settings:
        cluster["broker_settings"] = dict(target.broker_settings)
    if target.jvm_options:
        cluster["jvm_options"] = list(target.jvm_options)
    warnings = [hostname_warning(target.connection.settings), environment.short_lived_warning()]
    return ResultDocument(lab=lab, created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), command=sys.argv,
                          tool=environment.tool(), machine=environment.machine(), cluster=cluster, params=params,
                          notes=[*(f"warning: {warning}" for warning in warnings if warning), *(notes or [])])


def count_brokers(document: ResultDocument, target: Target, timeout_s: float) -> int:
    """The cluster's live broker count (and, for an embedded one, its layout) into the document; the count."""
    from kafkabench.admin import KafkaAdmin

    with KafkaAdmin(target.connection, timeout_s=timeout_s) as admin:
        document.cluster["brokers"] = len(admin.brokers())
    layout = getattr(getattr(target.faults, "cluster", None), "layout", None)
    if layout:
        document.cluster["layout"] = layout
    return document.cluster["brokers"]
