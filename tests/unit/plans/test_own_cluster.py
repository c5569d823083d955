"""A scenario whose cells each get a cluster of their own (an upgrade, an added broker change it for good): what the
plan says, checked before any cluster starts, and the runner starting and stopping one around each such cell."""

import contextlib
import dataclasses
import json
import textwrap

import pytest

from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.errors import ClusterError
from kafkabench.plans import runner
from kafkabench.plans.cells import expand
from kafkabench.plans.loading import PlanError, load_plan

PLAN = """\
    name: p
    clients: [confluent, java]
    scenarios:
      - {name: shared, lab: delivery, count: 100}
      - {name: mine, lab: delivery, count: 100, own_cluster: true, kafka_version: 4.3.1}
"""


def loaded(tmp_path, text=PLAN, profile=None):
    if profile is not None:
        (tmp_path / "profiles").mkdir(exist_ok=True)
        (tmp_path / "profiles" / "brokers.yaml").write_text(profile)
    path = tmp_path / "plan.yaml"
    path.write_text(textwrap.dedent(text))
    return load_plan(str(path))


def test_a_scenarios_own_cluster_is_the_profiles_brokers_on_its_release(tmp_path):
    cells = expand(loaded(tmp_path))
    assert [(c.name, c.own_cluster and c.own_cluster.kafka_version) for c in cells] == [
        ("shared-default", None), ("mine-default-confluent", "4.3.1"), ("mine-default-java", "4.3.1")]  # one client each
    text = PLAN.replace("default", "brokers").replace("clients: [confluent, java]", "profiles: [brokers]")
    own = expand(loaded(tmp_path, text, "broker: {num.io.threads: 4}\n"))[-1].own_cluster
    assert (own.kafka_version, own.settings) == ("4.3.1", (("num.io.threads", "4"),))
    five = expand(loaded(tmp_path, PLAN.replace("kafka_version: 4.3.1", "brokers: 5")))
    assert [(c.own_cluster is not None, c.own_brokers) for c in five] == [(False, None), (True, 5), (True, 5)]


@pytest.mark.parametrize("own, said", [
    ("kafka_version: 4.3.1", "scenarios -> 2 (mine): kafka_version: a scenario's release is that of a cluster of "
                             "each cell's own: add `own_cluster: true`"),
    ("own_cluster: true, kafka_version: 3.9.0", "scenarios -> 2 (mine): kafka_version: Kafka 3.9.0: kafkabench pins "
                                                "no such version"),
    ("brokers: 3", "scenarios -> 2 (mine): brokers: a scenario's broker count is that of a cluster of each cell's own"),
    ("own_cluster: true, brokers: 6", "scenarios -> 2 (mine) -> brokers: must be <= 5"),
    ("own_cluster: true, brokers: 2", "scenarios -> 2 (mine): brokers 2: its cells need 3 (their replication factor)"),
])
def test_a_scenarios_release_is_checked_before_any_cluster_starts(tmp_path, own, said):
    with pytest.raises(PlanError) as caught:
        expand(loaded(tmp_path, PLAN.replace("own_cluster: true, kafka_version: 4.3.1", own)))
    assert said in str(caught.value)


def test_a_scenarios_release_and_its_profiles_other_one_are_refused(tmp_path):
    text = PLAN.replace("clients: [confluent, java]", "profiles: [brokers]")
    with pytest.raises(PlanError, match="kafka_version 4.3.1 and profile brokers's 4.1.2; keep one"):
        expand(loaded(tmp_path, text, "kafka_version: 4.1.2\n"))


class Recording:
    """A lab that records the cluster each cell ran on; cells of `failing` fail as a lab's own error would."""

    def __init__(self, failing=()):
        self.ran, self.failing = [], failing

    def run(self, scenario, target, directory, listener):
        self.ran.append(target.bootstrap_servers)
        if target.bootstrap_servers in self.failing:
            raise ClusterError("the cell's brokers broke")


def test_each_own_cluster_cell_runs_on_a_cluster_started_for_it_and_stopped_after(tmp_path, monkeypatch):
    plan = loaded(tmp_path)
    cells = expand(plan)
    lab = Recording(failing={"own-2:9092"})
    monkeypatch.setattr(runner.registry, "get", lambda name: lab)
    monkeypatch.setattr("kafkabench.connection_check.check_connection", lambda connection: None)
    opened = []
    on_disk = []
    monkeypatch.setattr(runner.RunRecord, "write", lambda self, write=runner.RunRecord.write: (
        write(self), on_disk.append([c["status"] for c in json.loads((self.out_dir / "run.json").read_text())["cells"]])))

    @contextlib.contextmanager
    def own_cluster(cell):
        opened.append(f"start {cell.name}")
        if len(opened) == 5:
            raise ClusterError("a port was taken three times")
        try:
            yield Target.external(f"own-{len(opened) // 2 + 1}:9092")
        finally:
            opened.append(f"stop {cell.name}")

    cells = [*cells, dataclasses.replace(cells[-1], index=4, repeat=2)]
    record = runner.run_plan(plan, cells, Target.external("shared:9092"), tmp_path / "run", Listener(), own_cluster)
    assert lab.ran == ["shared:9092", "own-1:9092", "own-2:9092"]
    assert opened == ["start mine-default-confluent", "stop mine-default-confluent", "start mine-default-java",
                      "stop mine-default-java", "start mine-default-java"]
    assert [(c.status, c.error) for c in record.cells] == [
        ("ok", None), ("ok", None), ("failed", "the cell's brokers broke"),
        ("failed", "its own cluster: a port was taken three times")]  # the run went on after its own cluster broke
    assert on_disk[1:3] == [["ok", "not run", "not run", "not run"], ["ok", "ok", "not run", "not run"]]  # cell by cell
    assert json.loads((tmp_path / "run" / "run.json").read_text())["target"] == {
        "kind": "external", "bootstrap_servers": "shared:9092", "own_cluster_cells": True}
