from rich.console import Console

from kafkabench.core.results import ResultDocument, Run, Stat
from kafkabench.labs.latency.report import floor_p50, latency_table, run_errors
from kafkabench.report.terminal import render as rich_table


def stat(p50):
    return Stat(count=20, mean_ms=p50, p50_ms=p50, p90_ms=p50 * 1.5, p99_ms=p50 * 2, p999_ms=p50 * 2, max_ms=p50 * 3, min_ms=p50 / 2)


def document():
    runs = [
        Run(client="kafka-python", scenario="ping_pong", stats={"e2e": stat(250.0), "cold": stat(300.0)}, resources={"cpu_s": 5.0}),
        Run(client="tcp", scenario="ping_pong", stats={"e2e": stat(1.25)}),
        Run(client="confluent", scenario="ping_pong", stats={"e2e": stat(7.5), "produce": stat(6.0), "consume": stat(1.5)},
            error="message 9 was not acknowledged"),
    ]
    return ResultDocument(lab="latency", created_at="2026-11-21T00:00:00+00:00", params={"size_bytes": 100, "acks": "1"}, runs=runs)


def render(table) -> str:
    console = Console(width=200, record=True)
    console.print(rich_table(table))
    return console.export_text()


def test_sorted_by_e2e_p50_with_ratio_to_the_floor():
    doc = document()
    assert floor_p50(doc) == 1.25
    text = render(latency_table(doc))
    lines = [line for line in text.splitlines() if " e2e " in line]
    assert [line.split()[1] for line in lines] == ["tcp", "confluent", "kafka-python"]
    assert lines[1].rstrip().rstrip("│").split()[-3] == "6.0"  # 7.5 / 1.25
    assert lines[2].rstrip().rstrip("│").split()[-3] == "200.0"
    assert lines[2].rstrip().rstrip("│").split()[-1] == "250"  # 5 s of CPU over 20 messages
    assert run_errors(doc) == ["confluent: message 9 was not acknowledged"]


def test_without_a_floor_the_ratio_is_a_dash():
    doc = document()
    doc.runs = [r for r in doc.runs if r.client != "tcp"]
    assert floor_p50(doc) is None
    assert all(line.rstrip().rstrip("│").split()[-3] == "-" for line in render(latency_table(doc)).splitlines() if " e2e " in line)
