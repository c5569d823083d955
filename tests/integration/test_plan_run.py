"""A small plan end to end on the real broker: results per cell, the report, and `compare` on real repeats."""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

from kafkabench.admin import KafkaAdmin
from kafkabench.core.results import read_result, write_result
from kafkabench.errors import KafkabenchError
from kafkabench.waiting import wait_until

PLAN = """\
    name: tiny
    repeats: 6  # all 6 against a changed copy: 5 a side decide a family of 5; odd against even: 3, too few
    scenarios:
      - name: ping
        lab: latency
        clients: [confluent]
        size: 10000
        count: 2000  # 200 round trips lasted 0.1 s: their p99 (the 2nd slowest) was one pause, +80 % between halves
        warmup: 2
        rounds: 2
      - name: ping-tcp
        lab: latency
        clients: [tcp]
        size: 10000
        count: 4000  # 200 round trips lasted 7 ms on tcp: scheduler noise, 50 % apart while other tests ran
        warmup: 2
        rounds: 2
      - name: burst
        lab: produce
        size: 100
        count: 3000
    """


def kafkabench(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "kafkabench", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


@pytest.fixture(scope="module")
def tiny_run(kafka_cluster, tmp_path_factory):
    base = tmp_path_factory.mktemp("plan")
    (base / "plan.yaml").write_text(textwrap.dedent(PLAN))
    done = kafkabench("run", str(base / "plan.yaml"), "--out", str(base / "run"), "-b", kafka_cluster.bootstrap_servers)
    assert done.returncode == 0, done.stderr
    return base, done


def test_a_plan_runs_every_cell_and_writes_results_and_the_report(tiny_run):
    base, done = tiny_run
    run = json.loads((base / "run" / "run.json").read_text())
    assert [c["status"] for c in run["cells"]] == ["ok"] * 18
    assert run["cells"][0]["directory"] == "001-ping-default-r1" and run["cells"][2]["name"] == "burst-default-confluent"
    for cell in run["cells"]:
        document = read_result(base / "run" / cell["directory"])
        assert document.plan["plan"] == "tiny" and document.plan["cell"] == cell["name"]
        assert document.runs and all(not r.error for r in document.runs)
    assert (base / "run" / "plan.yaml").read_text() == textwrap.dedent(PLAN)
    html, csv = base / "run" / "report.html", base / "run" / "report.csv"
    assert f"report: {html}" in done.stdout.replace("\n", "")
    assert html.stat().st_size > 10_000 and len(csv.read_text().splitlines()) >= 1 + 18


def _split(run_dir, into, keep):
    into.mkdir()
    for cell in json.loads((run_dir / "run.json").read_text())["cells"]:
        repeat = int(cell["directory"].rsplit("-r", 1)[1])
        if keep(repeat):
            shutil.copytree(run_dir / cell["directory"], into / cell["directory"])
    return into


def test_compare_ignores_noise_between_repeats_and_catches_an_injected_regression(tiny_run, tmp_path):
    run_dir = tiny_run[0] / "run"
    odd = _split(run_dir, tmp_path / "odd", lambda r: r % 2 == 1)
    even = _split(run_dir, tmp_path / "even", lambda r: r % 2 == 0)
    # the same work split in two: dozens of metrics judged together, 3 repeats a side, so nothing can be called and
    # compare says why and what chance alone would have marked
    same = kafkabench("compare", str(odd), str(even), "--json")
    assert same.returncode == 0, same.stderr
    assert "chance alone would mark" in " ".join(same.stderr.split()), same.stderr
    called = [f"{run['label']}: {m['metric']} {m['change_pct']:+.1f} %" for run in json.loads(same.stdout)["matched"]
              for m in run["metrics"] if m["verdict"] in ("regression", "improvement")]
    assert not called, called
    assert json.loads(same.stdout)["family"] > 20

    slower = shutil.copytree(run_dir, tmp_path / "slower", ignore=shutil.ignore_patterns("*.json", "*.html", "*.csv"))
    for directory in run_dir.iterdir():
        if not (directory / "result.json").is_file():
            continue
        document = read_result(directory)
        for run in document.runs:
            for stat in run.stats.values():
                stat.p50_ms *= 1.6
                stat.p99_ms *= 1.6
            if "records_per_s" in run.throughput:
                run.throughput["records_per_s"] *= 0.5
        write_result(document, slower / directory.name)
    # 6 against 6 on the two metrics asked for: a family of 5, which 5 repeats a side can decide
    worse = kafkabench("compare", str(run_dir), str(slower), "--metric", "stats.e2e.p50_ms",
                       "--metric", "throughput.records_per_s", "--fail-on-regression", "40")
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "regression" in worse.stdout and "records_per_s" in worse.stdout + worse.stderr
    assert "5 tests: at a raw p < 0.05" in " ".join(worse.stdout.split())


def slow_cell_writing(process: subprocess.Popen, run_dir, bootstrap: str) -> bool:
    """The first cell done and the slow one measuring: its topic has records, fewer than the first cell's 2000."""
    if process.poll() is not None:
        raise AssertionError(f"the run ended by itself (exit {process.returncode}) before the slow cell")
    if not (run_dir / "002-slow-default-confluent-r1").exists():
        return False
    with KafkaAdmin(bootstrap) as admin:
        for topic in admin.topic_names():
            if topic.startswith("kafkabench-produce-"):
                try:
                    written = sum(high for _low, high in admin.offsets(topic).values())
                except KafkabenchError:
                    continue  # the first cell's, deleted meanwhile
                if 0 < written < 2000:
                    return True
    return False


def test_ctrl_c_keeps_the_finished_cells_and_still_writes_the_report(kafka_cluster, tmp_path):
    (tmp_path / "plan.yaml").write_text("name: long\nscenarios: [{lab: produce, count: 2000, size: 100}, "
                                        "{lab: produce, name: slow, rate: 50, duration: 60}]\n")
    process = subprocess.Popen([sys.executable, "-m", "kafkabench", "run", str(tmp_path / "plan.yaml"), "--out",
                                str(tmp_path / "run"), "-b", kafka_cluster.bootstrap_servers],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        wait_until(lambda: slow_cell_writing(process, tmp_path / "run", kafka_cluster.bootstrap_servers),
                   timeout_s=120, what="the slow cell's records to flow", interval_s=0.2)
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C reaches the whole process group
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, stderr
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [c["status"] for c in run["cells"]] == ["ok", "interrupted"]
    assert (tmp_path / "run" / "report.html").is_file() and "interrupted" in stderr


VARIANT_PLAN = """\
    name: brokers
    profiles: [default, newer]
    scenarios:
      - name: burst
        lab: produce
        size: 100
        count: 2000
    """


def test_a_profile_that_makes_the_broker_a_variable_runs_on_a_cluster_of_its_own(tmp_path):
    from kafkabench.cluster.artifacts import DEFAULT_KAFKA_VERSION, kafka_versions
    from kafkabench.cluster.embedded import SHORT_LIVED_JVM_OPTIONS

    other = next(version for version in reversed(kafka_versions()) if version != DEFAULT_KAFKA_VERSION)
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "newer.yaml").write_text(
        f"kafka_version: {other}\nbroker: {{num.io.threads: 2}}\njvm: [-XX:G1HeapRegionSize=4m]\n")
    (tmp_path / "plan.yaml").write_text(textwrap.dedent(VARIANT_PLAN))
    done = kafkabench("run", str(tmp_path / "plan.yaml"), "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    default, newer = (read_result(tmp_path / "run" / cell).cluster
                      for cell in ("001-burst-default-confluent-r1", "002-burst-newer-confluent-r1"))
    assert default["kind"] == newer["kind"] == "embedded-temporary"
    assert default["bootstrap_servers"] != newer["bootstrap_servers"]  # each profile's cluster, side by side
    # the suite's commands start their brokers for a short life (KAFKABENCH_SHORT_LIVED_JVMS, tests/conftest.py): C1
    # only, said in each result's cluster, before a profile's own options
    assert (default["kafka_version"], "broker_settings" in default, default["jvm_options"]) == (
        DEFAULT_KAFKA_VERSION, False, list(SHORT_LIVED_JVM_OPTIONS))
    assert (newer["kafka_version"], newer["broker_settings"], newer["jvm_options"]) == (
        other, {"num.io.threads": "2"}, [*SHORT_LIVED_JVM_OPTIONS, "-XX:G1HeapRegionSize=4m"])
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert set(run["target"]["profiles"]) == {"default", "newer"}
    refused = kafkabench("run", str(tmp_path / "plan.yaml"), "--out", str(tmp_path / "again"), "-b", "127.0.0.1:9")
    assert refused.returncode != 0 and "profile newer sets the brokers' version" in refused.stderr
