"""Room for a workload's partitions on a cluster kafkabench started: its brokers' open-file limit and the machine's
vm.max_map_count, asked before anything runs; a cluster it does not own is not checked."""

from types import SimpleNamespace

from kafkabench.cluster.target import Target
from kafkabench.labs.omb import room


def started_here(brokers: int) -> SimpleNamespace:
    return SimpleNamespace(faults=SimpleNamespace(broker_pids=lambda: {i: 1000 + i for i in range(1, brokers + 1)}))


def test_partitions_beyond_a_brokers_open_files_are_refused_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(room, "_open_files", lambda pid: 20_000)
    (tmp_path / "max_map_count").write_text("65530\n")
    monkeypatch.setattr(room, "MAX_MAP_COUNT", tmp_path / "max_map_count")
    assert room.room_problem(10_000, 1, started_here(1), "w") is None  # what the omb plan runs here
    said = room.room_problem(20_000, 1, started_here(1), "OMB workload w.yaml")
    assert said == ("OMB workload w.yaml: 20,000 partitions put 20,000 replicas on each broker, one open file each, "
                    "and its limit is 20,000 open files: at most 19,000 replicas a broker (raise `ulimit -n` before "
                    "the cluster starts, or run fewer partitions)")
    assert room.room_problem(20_000, 3, started_here(3), "w") is not None  # 3 replicas over 3 brokers: no less
    assert room.room_problem(20_000, 1, started_here(3), "w") is None


def test_partitions_beyond_the_machines_memory_maps_are_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(room, "_open_files", lambda pid: None)
    (tmp_path / "max_map_count").write_text("65530\n")
    monkeypatch.setattr(room, "MAX_MAP_COUNT", tmp_path / "max_map_count")
    assert "vm.max_map_count is 65,530: at most 32,265 replicas a broker" in room.room_problem(
        40_000, 1, started_here(1), "w")


def test_a_cluster_kafkabench_does_not_own_is_not_checked():
    assert room.room_problem(10**7, 3, Target.external("127.0.0.1:9"), "w") is None
