"""A plan's verdicts judged as one family on the real broker: an A/A plan calls nothing, and --confirm runs again
exactly the cells behind the verdicts and marks each one replicated or not."""

import json
import subprocess
import sys
import textwrap

PING = """\
    scenarios:
      - name: ping
        lab: latency
        clients: [confluent]
        size: 1000
        count: 20
        warmup: 2
        rounds: 1
    """
FLOOR = """\
      - name: floor
        lab: latency
        clients: [tcp]
        size: 1000
        count: 20
        warmup: 2
        rounds: 1
    """


def kafkabench(*args, timeout=900):
    return subprocess.run([sys.executable, "-m", "kafkabench", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def write_plan(base, head, scenarios=PING, **profiles):
    (base / "profiles").mkdir()
    for name, text in profiles.items():
        (base / "profiles" / f"{name}.yaml").write_text(text)
    (base / "plan.yaml").write_text(textwrap.dedent(head) + textwrap.dedent(scenarios))
    return base / "plan.yaml"


def verdicts(run_dir):
    table = json.loads((run_dir / "cost.json").read_text())
    return [(cost, change) for cost in table["costs"] for change in cost["metrics"]
            if change["verdict"] in ("regression", "improvement")]


def test_an_a_a_plan_calls_nothing(kafka_cluster, tmp_path):
    # the same settings twice (the latency lab's own acks, 1, and the brokers' cleanup policy, said again); at --fdr
    # 0.01 a false call in this one run is a 1-in-100 event at most. (A "same" of acks=all differed from the lab's
    # acks=1, and one CI run called its e2e p99 a regression, 48 ms against 14.6 ms)
    plan = write_plan(tmp_path, """\
        name: a-a-check
        repeats: 6
        clients: [confluent]
        profiles: [default, same]
        baseline_profile: default
        """, same="producer: {acks: '1'}\ntopic: {cleanup.policy: delete}\n")
    done = kafkabench("run", str(plan), "--fdr", "0.01", "--confirm", "--out", str(tmp_path / "run"),
                      "-b", kafka_cluster.bootstrap_servers)
    assert done.returncode == 0, done.stderr
    assert "cost table: 2 tests judged together (q < 0.01); 6 repeats can decide them (6 needed)" in done.stderr
    assert "--confirm: no cost was called beyond noise, so there is nothing to confirm" in done.stderr
    assert not (tmp_path / "run" / "confirm").exists()
    assert verdicts(tmp_path / "run") == []
    table = json.loads((tmp_path / "run" / "cost.json").read_text())
    assert table["family"] == 2 and all(c["q_value"] is not None for cost in table["costs"] for c in cost["metrics"])
    assert "2 tests: at a raw p < 0.05, chance alone would mark 0.1" in " ".join(done.stdout.split())


def test_a_runs_directory_confirmed_later_runs_again_exactly_the_cells_behind_the_verdicts(kafka_cluster, tmp_path):
    # a fetch that waits for 1 MB or 40 ms holds every 1 KB ping for 40 ms: confluent's e2e is called; the tcp floor
    # never touches a consumer, so its cells are nulls the confirmation leaves alone unless one of their rows was
    # (falsely) called. 5 repeats, 4 tests at q < 0.2: 4 could decide (2 / 70 x 4 = 0.11), 5 still can with one
    # repeat out of place. The run first, then `compare RUN --confirm` on its directory (`run --confirm` confirms the
    # same way, cli.run.confirm_costs, right after the run)
    plan = write_plan(tmp_path, """\
        name: confirm-check
        repeats: 5
        profiles: [default, slow]
        baseline_profile: default
        """, scenarios=PING.rstrip(" ") + FLOOR,
        slow="consumer: {fetch.min.bytes: 1000000, fetch.max.wait.ms: 40}\n")
    run_dir = tmp_path / "run"
    ran = kafkabench("run", str(plan), "--fdr", "0.2", "--out", str(run_dir), "-b", kafka_cluster.bootstrap_servers)
    assert ran.returncode == 0, ran.stderr
    assert not (run_dir / "confirm").exists()
    done = kafkabench("compare", str(run_dir), "--confirm", "--fdr", "0.2", "-b", kafka_cluster.bootstrap_servers)
    assert done.returncode == 0, done.stderr
    called = verdicts(run_dir)
    assert ("ping", "stats.e2e.p50_ms", "regression") in {(c["scenario"], m["metric"], m["verdict"]) for c, m in called}
    behind = {f"{cost['scenario']}-{profile}" for cost, _ in called for profile in ("default", "slow")}
    again = json.loads((run_dir / "confirm" / "run.json").read_text())["cells"]
    assert {cell["name"] for cell in again} == behind and len(again) == 5 * len(behind)
    assert all(cell["status"] == "ok" for cell in again)
    for result in (run_dir / "confirm").glob("*/result.json"):
        assert json.loads(result.read_text())["plan"]["round"] == "confirm"
    marks = {(c["scenario"], m["metric"]): m["confirmed"] for c, m in called}
    assert marks[("ping", "stats.e2e.p50_ms")] is True
    assert None not in marks.values()  # every verdict was judged again
    assert "replicated on fresh data" in (run_dir / "report.html").read_text()
    assert "verdict(s) replicated on fresh data" in done.stderr
    again = kafkabench("compare", str(run_dir), "--confirm", "-b", kafka_cluster.bootstrap_servers)
    assert again.returncode == 1 and "this run was confirmed already" in again.stderr
