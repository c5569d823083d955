"""Broker liveness of its own, not inferred from probes: a broker whose probe partition moved away gets no probes,
yet it must not vanish from view.

The brokers part (`run`, a process of its own) looks every interval at the cluster's metadata (the brokers
listed, the probe topic's leaders and preferred leaders) and asks each broker it ever saw for an ApiVersions answer
of its own (`wire.answers`: a paused broker accepts the connection and says nothing). The serving process keeps the
states (`BrokerStates`): up, fenced (no longer in the metadata), not answering (listed but silent), with the time each
began, sets `kafkabench_broker_up` and `kafkabench_broker_seconds_since_probe_leader`, and gives the screen its view.
"""

from __future__ import annotations

import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kafkabench.admin import KafkaAdmin
from kafkabench.connection import Connection
from kafkabench.errors import KafkaAdminError
from kafkabench.labs.monitor.metrics import MonitorMetrics
from kafkabench.wire import answers, unverified_tls

ANSWER_TIMEOUT_S = 5.0  # ApiVersions takes a live broker milliseconds; a loaded machine, a few seconds at worst
METADATA_TIMEOUT_S = 5.0


def run(connection: Connection, scenario, send, stopping: threading.Event) -> None:
    """The brokers part: one look per interval, sent as it is, until `stopping`."""
    addresses: dict[int, str] = {}
    tls = unverified_tls() if connection.protocol in ("SSL", "SASL_SSL") else None
    with KafkaAdmin(connection, timeout_s=METADATA_TIMEOUT_S) as admin, ThreadPoolExecutor(4) as pool:
        while not stopping.is_set():
            begun = time.monotonic()
            listed, leaders, preferred = _metadata(admin, scenario.probe_topic)
            addresses.update(listed or {})
            asked = {broker: pool.submit(_answers, address, tls) for broker, address in addresses.items()}
            answering = {broker: future.result() for broker, future in asked.items()}
            live = [addresses[broker] for broker, said in answering.items() if said]
            if listed is None and live:  # the admin's broker is silent (paused: its connection stays open, the
                # client keeps asking it for a minute): the cluster's view from the brokers that answer
                with KafkaAdmin(connection.at(",".join(live)), timeout_s=METADATA_TIMEOUT_S) as fresh:
                    listed, leaders, preferred = _metadata(fresh, scenario.probe_topic)
            send({"kind": "brokers", "listed": None if listed is None else sorted(listed), "answering": answering,
                  "leaders": leaders, "preferred": preferred})
            stopping.wait(max(0.0, scenario.interval - (time.monotonic() - begun)))


def _metadata(admin: KafkaAdmin, topic: str) -> tuple[dict[int, str] | None, dict[int, int | None], dict[int, int]]:
    """(broker id -> host:port, or None when no broker answered; probe partition -> leader; -> preferred leader)."""
    try:
        listed = admin.brokers(timeout_s=METADATA_TIMEOUT_S)
    except KafkaAdminError:
        return None, {}, {}
    try:
        info = admin.describe_topic(topic)
    except KafkaAdminError:
        return listed, {}, {}
    return (listed, {p.partition: p.leader for p in info.partitions},
            {p.partition: p.replicas[0] for p in info.partitions if p.replicas})


def _answers(address: str, tls: ssl.SSLContext | None) -> bool:
    host, _, port = address.rpartition(":")
    return answers(host.strip("[]"), int(port), tls, ANSWER_TIMEOUT_S)


class BrokerStates:
    """What the brokers part saw, kept across its restarts: each broker's state and since when, and when it last led
    its probe partition (the one it is the preferred leader of)."""

    def __init__(self, metrics: MonitorMetrics) -> None:
        self._metrics = metrics
        self._states: dict[int, tuple[str, float]] = {}  # broker -> (state, since, monotonic s)
        self._last_led: dict[int, float] = {}

    def saw(self, message: dict, now_s: float) -> None:
        listed = message["listed"]
        answering = {int(broker): said for broker, said in message["answering"].items()}
        leaders = {int(p): leader for p, leader in message["leaders"].items()}
        for partition, broker in message["preferred"].items():
            self._states.setdefault(broker, ("unknown", now_s))
            if leaders.get(int(partition)) == broker:
                self._last_led[broker] = now_s
        for broker in set(answering) | set(listed or ()):
            self._states.setdefault(broker, ("unknown", now_s))
        for broker, (state, _since) in list(self._states.items()):
            if listed is None:
                now = "not answering" if not answering.get(broker) else "up"
            elif broker not in listed:
                now = "fenced"
            else:
                now = "up" if answering.get(broker) else "not answering"
            if now != state:
                self._states[broker] = (now, now_s)
            self._metrics.broker_up.labels(str(broker)).set(1 if now == "up" else 0)
            if broker in self._last_led:
                self._metrics.since_probe_leader.labels(str(broker)).set(round(now_s - self._last_led[broker], 3))

    def known(self) -> bool:
        return bool(self._states)

    def view(self, now_s: float) -> dict[int, dict]:
        """broker -> {state, state_for_s, since_probe_leader_s}, for the window the screen shows."""
        return {broker: {"state": state, "state_for_s": round(now_s - since, 1),
                         "since_probe_leader_s": (round(now_s - self._last_led[broker], 1)
                                                  if broker in self._last_led else None)}
                for broker, (state, since) in sorted(self._states.items())}
