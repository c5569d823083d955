"""The producers' publish latency per window and around each fault or operation: from each window's full histogram,
merged over a span (never an average of percentiles), on the run's clock."""

from types import SimpleNamespace

import numpy as np

from kafkabench.core.histogram import LatencyHistogram
from kafkabench.labs.delivery import latency
from kafkabench.labs.delivery.liveness import progress_timeline

T0 = 500.0  # the run's start on the monotonic clock


def window(*micros: int) -> str:
    histogram = LatencyHistogram()
    histogram.record_many_us(np.array(micros, dtype=np.int64))
    return histogram.encode()


def test_a_span_merges_its_windows_so_its_p99_is_the_spans_own_not_an_average_of_the_windows():
    # two producers; 99 fast answers and one slow per window before; during the operation one window of 2 s answers
    fast = [(T0 + 0.2 * k, window(*[1_000] * 99, 3_000)) for k in range(1, 25)]  # up to 4.8 s
    slow = [(T0 + 5.2, window(2_000_000, 1_500_000)), (T0 + 5.4, window(*[1_000] * 10))]
    after = [(T0 + 8.0 + 0.2 * k, window(2_000)) for k in range(5)]
    seen = [SimpleNamespace(windows=fast + after), SimpleNamespace(windows=slow)]
    windows = latency.decoded(fast + after + slow, T0)
    assert [at for at, _ in windows] == sorted(at for at, _ in windows) and round(windows[0][0], 6) == 0.2
    event = {"fault": "rolling-restart", "fired_s": 5.0, "healed_s": 7.5}
    [span] = latency.around(windows, [event, {"fault": "elect-leaders", "fired_s": None, "healed_s": None}], 9.0)
    assert span["before"] == {"count": 2_400, "p50_ms": 1.0, "p99_ms": 1.0, "max_ms": 3.001}
    assert span["during"]["count"] == 12 and span["during"]["max_ms"] == 2_000.895, span  # HdrHistogram's bucket
    assert span["during"]["p50_ms"] == 1.0 and span["during"]["p99_ms"] == span["during"]["max_ms"]
    assert span["after"] == {"count": 5, "p50_ms": 2.0, "p99_ms": 2.0, "max_ms": 2.0}
    # the run's figure: every window merged
    run = SimpleNamespace(params={"faults": [event]}, timeline=progress_timeline(
        {"acknowledged": [[(T0 + 0.2 * k, 100 * k) for k in range(46)]]}, T0, T0 + 9.0))
    latency.producer_cell(run, seen, T0, T0 + 9.0)
    assert run.params["publish_latency"]["all"]["count"] == 2_417
    by_second = {entry["t_s"]: entry for entry in run.timeline}
    assert by_second[1.0]["publish_p99_ms"] == 1.0 and by_second[6.0]["publish_max_ms"] == 2_000.895
    assert by_second[7.0]["publish_p99_ms"] is None  # nothing acknowledged in that second: a gap, not 0
    assert "e2e_latency" not in run.params and "e2e_p99_ms" not in by_second[1.0]  # no probe: no e2e


def test_the_probes_windows_give_the_e2e_latency_beside_the_publish_latency():
    publish = [(T0 + 0.2 * k, window(1_000)) for k in range(1, 46)]
    e2e = [(T0 + 0.2 * k, window(*[3_000] * 9, 4_000_000 if 26 <= k <= 30 else 5_000)) for k in range(1, 46)]
    run = SimpleNamespace(params={"faults": [{"fault": "rolling-restart", "fired_s": 5.0, "healed_s": 6.1}]},
                          timeline=progress_timeline({"acknowledged": [[(T0 + 0.2 * k, 10 * k) for k in range(46)]]},
                                                     T0, T0 + 9.0))
    latency.producer_cell(run, [SimpleNamespace(windows=publish)], T0, T0 + 9.0, e2e)
    [span] = run.params["e2e_latency"]["around"]
    # HdrHistogram's buckets: 5 ms reads 5.003, 4 s 4,001.791
    assert span["before"]["p99_ms"] == 5.003 and span["during"]["max_ms"] == 4_001.791 and span["after"]["max_ms"] == 5.003
    assert span["during"]["count"] == 60 and run.params["e2e_latency"]["all"]["count"] == 450
    assert run.params["publish_latency"]["around"][0]["during"]["max_ms"] == 1.0
    by_second = {entry["t_s"]: entry for entry in run.timeline}
    assert by_second[6.0]["e2e_max_ms"] == 4_001.791 and by_second[2.0]["e2e_p50_ms"] == 3.001


def test_before_an_event_is_the_ten_seconds_before_it_not_the_runs_first_seconds():
    cold = [(T0 + 0.2 * k, window(900_000)) for k in range(1, 26)]  # the first 5 s: cold clients, cold brokers
    warm = [(T0 + 5.0 + 0.2 * k, window(2_000)) for k in range(1, 76)]  # 5.2-20 s
    [span] = latency.around(latency.decoded(cold + warm, T0), [{"fault": "x", "fired_s": 20.0, "healed_s": 21.0}], 25)
    assert span["before"] == {"count": 50, "p50_ms": 2.0, "p99_ms": 2.0, "max_ms": 2.0}  # 10-20 s only


def test_a_cell_whose_client_reported_no_window_has_no_latency():
    run = SimpleNamespace(params={}, timeline=[])
    latency.producer_cell(run, [SimpleNamespace(windows=[])], T0, T0 + 1)
    assert "publish_latency" not in run.params


def test_the_cost_table_has_a_row_per_event_with_the_worst_partitions_unavailability_within_it():
    from kafkabench.core.results import ResultDocument, Run
    from kafkabench.labs.delivery.report import cost_table, worst_within

    unavailable = {"partitions": {"0": {"leaderless": [[1.0, 3.0], [12.0, 13.0]], "under_min_isr": []},
                                  "1": {"leaderless": [[4.0, 9.5]], "under_min_isr": [[4.0, 6.0]]}}}
    assert worst_within(unavailable, "leaderless", 2.0, 10.0) == 5.5  # partition 1's 4-9.5 s; 0's 2-3 s is less
    assert worst_within(unavailable, "leaderless", 11.0, 20.0) == 1.0 and worst_within(None, "leaderless", 0, 1) is None
    figures = {"count": 10, "p50_ms": 1.0, "p99_ms": 2.5, "max_ms": 3.0}
    around = [{"fault": "rolling-restart", "fired_s": 2.0, "healed_s": 10.0, "before": figures,
               "during": {**figures, "p99_ms": 900.0, "max_ms": 1200.0}, "after": None}]
    run = Run(client="confluent", scenario="delivery", params={
        "mode": "async-close", "acks": "all", "loss_confirmed": False, "unavailable": unavailable,
        "publish_latency": {"all": figures, "around": around}}, counters={"acknowledged": 10, "lost": 0})
    table = cost_table(ResultDocument(lab="delivery", created_at="2026-11-29T10:00:00+00:00", command=[], runs=[run]))
    [row] = table.rows
    assert row.cells == ["rolling-restart", "8.0", "5.5", "2.0", "2.5", "900.0", "-", "1,200.0", "0"], row.cells
