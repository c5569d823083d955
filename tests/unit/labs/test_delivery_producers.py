"""Several producers in one delivery cell make one run: the cell's stopwatch is the slowest producer's."""

from kafkabench.core.protocol import Result
from kafkabench.core.results import Run
from kafkabench.labs.delivery.producer import ProducerRun, fill_producer


def producer(ms_per_event: float, bulk_ms: float, sent: int = 5, told_to_finish_s: float | None = None) -> ProducerRun:
    return ProducerRun(result=Result(timings={"ms_per_event": ms_per_event, "bulk_ms": bulk_ms},
                                     counters={"sent": sent, "acked": sent}),
                       sent=sent, acked=sent, worker={"name": "p"}, told_to_finish_s=told_to_finish_s)


def test_the_cells_stopwatch_is_its_slowest_producers_over_the_cells_count():
    run = Run(client="confluent", scenario="delivery", params={"count": 10})
    fill_producer(run, [producer(0.2, 0.5), producer(0.6, 2.5)], cell=None)  # stopwatches of 1.0 and 3.0 ms
    assert run.timings == {"ms_per_event": 0.3, "bulk_ms": 2.5}  # 3.0 ms for the cell's 10 events
    assert run.duration_s == 0.003 and run.params["stopwatch"] == "producer 2's, the slowest of 2"
    assert [w["timings"]["ms_per_event"] for w in run.workers] == [0.2, 0.6]  # each one's own, kept


def test_one_producer_is_the_cell():
    run = Run(client="confluent", scenario="delivery", params={"count": 10})
    fill_producer(run, [producer(0.2, 0.5, sent=10)], cell=None)
    assert run.timings == {"ms_per_event": 0.2, "bulk_ms": 0.5} and run.duration_s == 0.002
    assert "stopwatch" not in run.params and "timings" not in run.workers[0] and "sending_ended" not in run.params


def test_producers_told_to_finish_are_timed_over_what_they_sent_and_the_cell_says_when():
    run = Run(client="confluent", scenario="delivery", params={"count": 100})
    fill_producer(run, [producer(0.5, 1.0, sent=4, told_to_finish_s=12.5), producer(0.25, 1.0, sent=6,
                                                                                     told_to_finish_s=12.5)], cell=None)
    assert run.duration_s == 0.002 and run.timings["ms_per_event"] == 0.2  # 2.0 ms (4 x 0.5) over the 10 sent
    assert run.params["sending_ended"] == {"told_s": 12.5, "sent": 10, "at_most": 100}
