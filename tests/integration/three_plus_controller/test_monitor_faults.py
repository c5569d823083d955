"""`kafkabench monitor` on 3 brokers beside a dedicated controller while brokers fail: a killed broker's probes are
failed or lost and its availability drops below 1, then, after its restart, probes succeed again; a broker paused for
5 s shows up as roundtrip latency, not as loss; through a broker paused for 15 s, and in the long scenario for 45 s
(past the monitor's 30 s bound on a silent part, so a part the pause hung would have been restarted within it; the
158 s pause that once aborted the monitor inside librdkafka is `benchmarks/librdkafka_4605.py`'s to reproduce) the
monitor serves its endpoint, probes the other brokers, reports the paused one down, and a part killed by SIGABRT is
started again and counted."""


import os
import signal
import socket
import time

import pytest

from kafkabench.cluster.faults import EmbeddedFaults
from kafkabench.cluster.target import Target
from kafkabench.waiting import wait_until

from tests.integration.monitoring import monitor_in_background, part_pid, samples, wait_steady

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]


@pytest.fixture
def faults(cluster):
    return EmbeddedFaults(cluster)


def wait_windows(thread, windows, count: int, timeout_s: float = 60) -> None:
    def enough() -> bool:
        if len(windows.lines) >= count:
            return True
        assert thread.is_alive(), f"the monitor ended after {len(windows.lines)} of {count} windows"
        return False

    wait_until(enough, timeout_s=timeout_s, what=f"{count} monitor windows", interval_s=0.1)


def per_broker(windows, broker: int, name: str, lines=None) -> list:
    return [w["brokers"][str(broker)][name] for w in (lines or windows.lines) if str(broker) in w["brokers"]]


def test_a_killed_broker_loses_probes_and_availability_until_its_restart(cluster, faults, tmp_path):
    target = Target.embedded(cluster)
    # ended once the windows after the restart that it is judged on are in; 120 s only bounds it
    thread, windows, done = monitor_in_background(target, tmp_path, probe_topic="probe-kill", interval=0.5, sla=2,
                                                  duration=120, metrics_port=0)
    wait_steady(thread, windows)
    victim = faults.leader_of("probe-kill", 1)
    faults.kill(victim)
    killed_at = len(windows.lines)
    wait_windows(thread, windows, killed_at + 12)  # 6 s down: failover, probes timed out and lost after the 2 s SLA
    faults.restart(victim)
    restarted_at = len(windows.lines)

    def recovered() -> bool:  # more than an SLA after the restart: four windows in a row, every probe back
        after = windows.lines[restarted_at + 4:][-4:]
        assert thread.is_alive(), "the monitor ended before the probes came back"
        return len(after) == 4 and all(f["lost"] == 0 and f["failed"] == 0 for w in after for f in w["brokers"].values()) \
            and sum(f["received"] for w in after for f in w["brokers"].values()) > 0

    wait_until(recovered, timeout_s=60, what="four windows of probes all read back after the restart", interval_s=0.1)
    done["stop"].set()
    thread.join(60)
    assert not thread.is_alive()
    during = windows.lines[killed_at:restarted_at + 6]
    failing = [n for name in ("lost", "failed") for n in per_broker(windows, victim, name, during)]
    assert sum(failing) > 0, during
    assert min(a for a in per_broker(windows, victim, "availability", during) if a is not None) < 1
    run = done["document"].runs[0]
    assert run.counters["lost"] > 0 and any(o["broker"] == victim for o in run.params["outages"])


def test_a_paused_broker_shows_as_roundtrip_latency_not_as_loss(cluster, faults, tmp_path):
    target = Target.embedded(cluster)
    # ended once the probes the paused leader held are read back (a loaded machine's leader takes a while to answer
    # them after the pause); 60 s only bounds it
    thread, windows, done = monitor_in_background(target, tmp_path, probe_topic="probe-pause", interval=0.5, sla=20,
                                                  duration=60, metrics_port=0)
    wait_steady(thread, windows)
    victim = faults.leader_of("probe-pause", 0)
    faults.pause(victim)
    paused_at = len(windows.lines)
    wait_windows(thread, windows, paused_at + 10)  # frozen for 10 of the monitor's 0.5 s windows: ~5 s of its clock
    faults.resume(victim)
    resumed_at = len(windows.lines)

    def read_back() -> bool:  # four windows after the resume, and every probe sent a round ago back
        assert thread.is_alive(), "the monitor ended before the held probes came back"
        counts = [f for w in windows.lines for f in w["brokers"].values()]
        return len(windows.lines) >= resumed_at + 4 and sum(f["sent"] for f in counts) - sum(f["received"] for f in counts) <= 3

    wait_until(read_back, timeout_s=50, what="the probes the paused leader held read back", interval_s=0.1)
    done["stop"].set()
    thread.join(60)
    assert not thread.is_alive()
    run = done["document"].runs[0]
    assert run.counters["lost"] == 0 and run.counters["failed"] == 0, run.counters
    assert run.stats["roundtrip"].max_ms > 1000  # the probes through the paused leader waited
    assert run.counters["sent"] - run.counters["received"] <= 3  # at most the last round still on its way


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# the pause, and its end in which probes through the healthy brokers must still come back: 15 s (the broker fenced
# after 3 s), and in the long scenario 45 s
@pytest.mark.parametrize("paused_s, last_s", [(15, 7), pytest.param(45, 20, marks=pytest.mark.long)])
def test_through_a_long_pause_the_monitor_serves_probes_the_others_and_restarts_a_part_killed_by_sigabrt(
        cluster, faults, tmp_path, paused_s, last_s):
    port = free_port()
    thread, windows, done = monitor_in_background(Target.embedded(cluster), tmp_path, probe_topic="probe-long",
                                                  interval=0.5, sla=2, duration=paused_s + 90, metrics_port=port)
    wait_steady(thread, windows)

    def lost_at_zero() -> dict | None:  # every probe partition known, each (partition, broker) counter exists at 0
        lost = samples(port, "kafkabench_end_to_end_messages_lost_total")
        return lost if {dict(labels)["broker_id"] for labels in lost} == {"1", "2", "3"} else None

    lost = wait_until(lost_at_zero, timeout_s=30, what="a lost-probe series for every broker", interval_s=0.2)
    assert set(lost.values()) == {0.0}, lost  # before any loss: there, at 0
    assert samples(port, "kafkabench_monitor_part_restarts_total") == {(("part", p),): 0.0 for p in ("brokers", "lag", "prober")}

    os.kill(part_pid("lag"), signal.SIGABRT)  # what librdkafka's assertion did to the whole monitor
    restarts = (("part", "lag"),)
    wait_until(lambda: samples(port, "kafkabench_monitor_part_restarts_total").get(restarts) == 1.0, timeout_s=30,
               what="the lag part's restart counted", interval_s=0.2)
    wait_until(lambda: part_pid("lag") is not None, timeout_s=30, what="the lag part started again", interval_s=0.2)

    victim = faults.leader_of("probe-long", 1)
    others = [str(b) for b in (1, 2, 3) if b != victim]
    faults.pause(victim)
    paused_at = time.monotonic()
    try:
        wait_until(lambda: samples(port, "kafkabench_broker_up").get((("broker_id", str(victim)),)) == 0.0,
                   timeout_s=30, what=f"broker {victim} reported down", interval_s=0.5)
        received = {}
        while time.monotonic() - paused_at < paused_s:  # the endpoint answers every look of the pause (or raises)
            counts = samples(port, "kafkabench_end_to_end_messages_received_total")
            received[round(time.monotonic() - paused_at)] = {b: sum(v for labels, v in counts.items()
                                                                   if dict(labels)["broker_id"] == b) for b in others}
            thread.join(1)  # a look a second, as a scrape would, and the monitor must not end meanwhile
            assert thread.is_alive(), f"the monitor ended {time.monotonic() - paused_at:.0f} s into the pause"
    finally:
        faults.resume(victim)
    last = [second for second in received if second >= paused_s - last_s]
    for broker in others:  # probes through the healthy brokers kept coming back to the end of the pause
        assert received[max(last)][broker] > received[min(last)][broker], (broker, received)
    wait_until(lambda: samples(port, "kafkabench_broker_up").get((("broker_id", str(victim)),)) == 1.0,
               timeout_s=60, what=f"broker {victim} reported up again", interval_s=0.5)
    done["stop"].set()
    thread.join(60)
    states = [w["brokers"][str(victim)]["state"] for w in windows.lines if str(victim) in w["brokers"]]
    assert {"up", "fenced"} <= set(states), set(states)
    assert not thread.is_alive()
    run = done["document"].runs[0]
    notes = done["document"].notes
    assert run.counters["part_restarts"] == 1 and any("monitor part lag was ended by SIGABRT" in n for n in notes), notes
    assert {"broker": victim, "state": "fenced"} in [{k: c[k] for k in ("broker", "state")} for c in run.params["broker_states"]]
