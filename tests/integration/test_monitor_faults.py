"""`kafkabench monitor` on 3 brokers beside a dedicated controller while brokers fail: a killed broker's probes are
failed or lost and its availability drops below 1, then, after its restart, probes succeed again; a broker paused for
5 s shows up as roundtrip latency, not as loss."""


import pytest

from kafkabench.cluster.faults import EmbeddedFaults
from kafkabench.cluster.target import Target
from kafkabench.waiting import wait_until

from tests.conftest import three_brokers
from tests.integration.monitoring import monitor_in_background

pytestmark = [pytest.mark.integration, pytest.mark.multibroker]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with three_brokers(tmp_path_factory.mktemp("monitor"), controllers=1) as c:
        yield c


@pytest.fixture
def faults(cluster):
    faults = EmbeddedFaults(cluster)
    yield faults
    faults.bring_back()


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
    # 45 s: after the start, 6 s down and a restart that takes a loaded machine 10-20 s, the watch still has the
    # windows after the restart that its end is judged on (26 s could leave none)
    thread, windows, done = monitor_in_background(target, tmp_path, probe_topic="probe-kill", interval=0.5, sla=2,
                                                  duration=45, metrics_port=0)
    wait_windows(thread, windows, 4)
    victim = faults.leader_of("probe-kill", 1)
    faults.kill(victim)
    killed_at = len(windows.lines)
    wait_windows(thread, windows, killed_at + 12)  # 6 s down: failover, probes timed out and lost after the 2 s SLA
    faults.restart(victim)
    restarted_at = len(windows.lines)
    # more than an SLA after the restart and its recovery, before the end: a watch too short fails here, by name
    wait_windows(thread, windows, restarted_at + 12)
    thread.join(60)
    assert not thread.is_alive()
    during = windows.lines[killed_at:restarted_at + 6]
    failing = [n for name in ("lost", "failed") for n in per_broker(windows, victim, name, during)]
    assert sum(failing) > 0, during
    assert min(a for a in per_broker(windows, victim, "availability", during) if a is not None) < 1
    after = windows.lines[-4:]  # more than an SLA after the restart: every probe comes back again
    assert all(f["lost"] == 0 and f["failed"] == 0 for w in after for f in w["brokers"].values()), after
    assert sum(f["received"] for w in after for f in w["brokers"].values()) > 0
    run = done["document"].runs[0]
    assert run.counters["lost"] > 0 and any(o["broker"] == victim for o in run.params["outages"])


def test_a_paused_broker_shows_as_roundtrip_latency_not_as_loss(cluster, faults, tmp_path):
    target = Target.embedded(cluster)
    # 25 s: after the 5 s pause a loaded machine's leader takes a while to answer the probes it held; they must be
    # read back before the watch ends (16 s left it a few seconds)
    thread, windows, done = monitor_in_background(target, tmp_path, probe_topic="probe-pause", interval=0.5, sla=20,
                                                  duration=25, metrics_port=0)
    wait_windows(thread, windows, 4)
    victim = faults.leader_of("probe-pause", 0)
    faults.pause(victim)
    paused_at = len(windows.lines)
    wait_windows(thread, windows, paused_at + 10)  # frozen for 10 of the monitor's 0.5 s windows: ~5 s of its clock
    faults.resume(victim)
    thread.join(60)
    assert not thread.is_alive()
    run = done["document"].runs[0]
    assert run.counters["lost"] == 0 and run.counters["failed"] == 0, run.counters
    assert run.stats["roundtrip"].max_ms > 1000  # the probes through the paused leader waited
    assert run.counters["sent"] - run.counters["received"] <= 3  # at most the last round still on its way
