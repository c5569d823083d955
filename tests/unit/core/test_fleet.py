import pytest

from kafkabench.core import fleet
from kafkabench.core.clock import FakeClock
from kafkabench.core.events import Events, Listener
from kafkabench.core.fleet import FleetWorker
from kafkabench.core.histogram import LatencyHistogram
from kafkabench.core.protocol import Finish, Outcome, Progress, Result, Task, Window
from kafkabench.core.timeline import Timeline
from kafkabench.core.worker_process import WorkerFailed

MS = 1_000_000
TICK_S = 0.02


class ScriptedWorker:
    """A Worker replaying (at_ms, message) once the clock reaches at_ms; an exception in the script is raised
    as a real worker's `error` would be. `finish` queues `on_finish` at once."""

    def __init__(self, name: str, clock: FakeClock, script: list, on_finish: object = None) -> None:
        self.name = name
        self.sent: list[tuple[int, object]] = []
        self.stopped = False
        self._clock = clock
        self._script = list(script)
        self._on_finish = on_finish

    def send(self, message) -> None:
        self.sent.append((self._clock() // MS, message))
        if isinstance(message, Finish) and self._on_finish is not None:
            self._script.append((self._clock() // MS, self._on_finish))

    def receive(self, expected: type, timeout_s: float):
        message = self.next_message(timeout_s)
        assert isinstance(message, expected)
        return message

    def next_message(self, timeout_s: float):
        if not self._script or self._script[0][0] * MS > self._clock():
            return None
        message = self._script.pop(0)[1]
        if isinstance(message, Exception):
            raise message
        return message

    def stop(self, timeout_s: float = 10) -> None:
        self.stopped = True

    def finishes(self) -> list[int]:
        return [at_ms for at_ms, message in self.sent if isinstance(message, Finish)]


class Recorder(Listener):
    def __init__(self) -> None:
        self.windows: list[tuple[str, int, float]] = []

    def window(self, role: str, entry) -> None:
        self.windows.append((role, entry.records, entry.t_s))


def driven() -> tuple[FakeClock, object]:
    clock = FakeClock()
    return clock, lambda seconds: clock.advance(round(seconds * 1e9))


def window(index: int, records: int, latency_ms: float = 1) -> Window:
    h = LatencyHistogram()
    h.record_ns(int(latency_ms * MS))
    return Window(index=index, start_ns=index * 100 * MS, end_ns=(index + 1) * 100 * MS, records=records,
                  payload_bytes=records * 10, histograms={"publish_latency": h.encode(), "e2e": h.encode()})


def progress(done: int, w: Window | None = None) -> Progress:
    return Progress(done=done, window=w)


def timelines(workers: list[FleetWorker]) -> dict[str, Timeline]:
    metric = {"produce": "publish_latency", "consume": "e2e"}
    roles = {w.role for w in workers}
    return {role: Timeline([w.name for w in workers if w.role == role], metric[role]) for role in roles}


def test_the_tick_hook_runs_on_every_tick_while_windows_are_relayed_in_order():
    clock, sleep = driven()
    producers = [ScriptedWorker(f"producer {n}", clock, [
        (100, progress(10, window(0, 10))), (200, progress(20, window(1, 10))),
        (300, progress(30, window(2, 10))), (300, Result(counters={"acked": 30}))]) for n in (1, 2)]
    consumer = ScriptedWorker("consumer 1", clock, [
        (100, progress(15, window(0, 15))), (200, progress(40, window(1, 25))), (300, progress(60, window(2, 20)))],
        on_finish=Result(counters={"received": 60}))
    workers = [FleetWorker("produce", p) for p in producers] + [FleetWorker("consume", consumer)]
    ticks = []
    recorder = Recorder()
    fleet.follow(workers, timelines(workers), Events(recorder), drain_s=5, finish_timeout_s=1, on_tick=ticks.append,
                 clock=clock, sleep=sleep, tick_s=TICK_S)

    assert ticks == pytest.approx([i * TICK_S for i in range(17)])  # the consumer's result came on the tick at 0.32 s
    assert recorder.windows == [("produce", 20, 0.1), ("consume", 15, 0.1), ("produce", 20, 0.2), ("consume", 25, 0.2),
                                ("produce", 20, 0.3), ("consume", 20, 0.3)]
    assert consumer.finishes() == [300] and not producers[0].finishes()  # asked once every acked record arrived
    assert all(w.outcome is not None and w.error is None for w in workers)


def test_consumers_behind_are_finished_once_the_drain_time_has_passed_on_the_clock():
    clock, sleep = driven()
    producer = ScriptedWorker("producer 1", clock, [(0, Result(counters={"acked": 100}))])
    consumer = ScriptedWorker("consumer 1", clock, [(0, progress(40, window(0, 40)))],
                              on_finish=Result(counters={"received": 40}))
    workers = [FleetWorker("produce", producer), FleetWorker("consume", consumer)]
    fleet.follow(workers, timelines(workers), Events(), drain_s=0.1, finish_timeout_s=1, clock=clock, sleep=sleep)
    assert consumer.finishes() == [120]  # the first tick past 0 + 100 ms
    assert workers[1].outcome.counters == {"received": 40}


def test_consumers_reaching_the_total_are_finished_and_a_silent_one_given_up_on():
    clock, sleep = driven()
    quick = ScriptedWorker("consumer 1", clock, [(0, progress(6, window(0, 6))), (20, progress(6, window(1, 0)))],
                           on_finish=Result(counters={"received": 6}))
    silent = ScriptedWorker("consumer 2", clock, [(0, progress(4, window(0, 4)))])
    workers = [FleetWorker("consume", quick), FleetWorker("consume", silent)]
    recorder, ticks = Recorder(), []
    fleet.follow(workers, timelines(workers), recorder, drain_s=0, finish_timeout_s=0.5, consume_total=10,
                 on_tick=ticks.append, clock=clock, sleep=sleep)
    assert quick.finishes() == silent.finishes() == [0]
    assert workers[0].outcome.counters == {"received": 6}
    assert workers[1].outcome is None and workers[1].error == "no result within 0.5 s of being asked to finish"
    assert ticks[-1] == pytest.approx(0.52)  # given up on at the first tick past its deadline, on the injected clock
    assert [records for _, records, _ in recorder.windows] == [10, 0]  # window 1 no longer waited for consumer 2


def test_a_worker_failing_before_it_is_asked_to_finish_fails_the_run_and_after_it_keeps_its_partial():
    clock, sleep = driven()
    failing = ScriptedWorker("producer 1", clock, [(40, WorkerFailed("producer 1", "broker gone"))])
    with pytest.raises(WorkerFailed, match="broker gone"):
        fleet.follow([FleetWorker("produce", failing)], {"produce": Timeline(["producer 1"], "publish_latency")},
                     Events(), drain_s=0, finish_timeout_s=1, clock=clock, sleep=sleep)
    partial = Outcome(counters={"received": 3})
    consumer = ScriptedWorker("consumer 1", clock, [(0, progress(3))],
                              on_finish=WorkerFailed("consumer 1", "decode failed", partial=partial))
    workers = [FleetWorker("consume", consumer)]
    fleet.follow(workers, timelines(workers), Events(), drain_s=0, finish_timeout_s=1, consume_total=3, clock=clock,
                 sleep=sleep)
    assert (workers[0].outcome, workers[0].error) == (partial, "decode failed")


class Launcher:
    def __init__(self, clock: FakeClock, broken: bool = False) -> None:
        self.started: list[tuple[str, str]] = []
        self.workers: list[ScriptedWorker] = []
        self._clock, self._broken = clock, broken

    def start(self, name: str, client: str) -> ScriptedWorker:
        self.started.append((name, client))
        worker = ScriptedWorker(name, self._clock, [])
        if self._broken:
            def refuse(message) -> None:
                raise WorkerFailed(name, "worker is gone")
            worker.send = refuse
        self.workers.append(worker)
        return worker

    def share(self, path) -> str:
        return str(path)


def test_launch_names_the_worker_by_role_and_sends_its_task():
    launcher = Launcher(FakeClock())
    task = Task(scenario="consume", client="confluent")
    consumer = fleet.launch("consume", 1, launcher, "confluent", task)
    producer = fleet.launch("produce", 0, launcher, "confluent", task)
    assert launcher.started == [("consumer 2", "confluent"), ("producer 1", "confluent")]
    assert (consumer.role, consumer.name, consumer.process) == ("consume", "consumer 2", launcher.workers[0])
    assert launcher.workers[0].sent == [(0, task)]
    assert (producer.outcome, producer.error, producer.done) == (None, None, 0)


def test_launch_stops_a_worker_that_cannot_take_its_task():
    launcher = Launcher(FakeClock(), broken=True)
    with pytest.raises(WorkerFailed):
        fleet.launch("produce", 0, launcher, "java", Task(scenario="produce", client="java"))
    assert launcher.workers[0].stopped


def test_finish_all_waits_for_each_result_and_keeps_a_failure_with_its_partial():
    clock = FakeClock()
    partial = Outcome(counters={"acked": 2})
    done = ScriptedWorker("producer 1", clock, [(0, progress(5))], on_finish=Result(counters={"acked": 5}))
    failing = ScriptedWorker("producer 2", clock, [], on_finish=WorkerFailed("producer 2", "lost", partial=partial))
    settled = FleetWorker("produce", ScriptedWorker("producer 3", clock, []))
    settled.error = "failed earlier"
    workers = [FleetWorker("produce", done), FleetWorker("produce", failing), settled]
    fleet.finish_all(workers, timeout_s=1)
    assert workers[0].outcome.counters == {"acked": 5}
    assert (workers[1].outcome, workers[1].error) == (partial, "lost")
    assert settled.process.sent == [] and settled.outcome is None


def test_a_worker_that_dies_without_a_partial_keeps_what_its_windows_reported():
    """A worker process (or the Ray node under it) gone at once sends no partial outcome: its windows are its partial."""
    clock, sleep = driven()
    dying = ScriptedWorker("producer 2", clock, [(0, progress(100, window(0, 100, 2))), (100, progress(250, window(1, 150, 4))),
                                                 (150, WorkerFailed("producer 2", "died on node 7c1e0a2b... 0.2 s in"))])
    other = ScriptedWorker("producer 1", clock, [(0, progress(10, window(0, 10)))], on_finish=Result(counters={"acked": 10}))
    workers = [FleetWorker("produce", other), FleetWorker("produce", dying)]
    with pytest.raises(WorkerFailed) as failed:
        fleet.follow(workers, timelines(workers), Events(), drain_s=0, finish_timeout_s=1, clock=clock, sleep=sleep)
    line = fleet.finish_after_failure(workers, failed.value, timeout_s=1)
    assert line == "producer 2: died on node 7c1e0a2b... 0.2 s in (2 windows, 250 records reported before)"
    broken = workers[1]
    assert broken.error == "died on node 7c1e0a2b... 0.2 s in"
    assert broken.outcome.counters == {"acked": 250, "payload_bytes": 2500, "errors": 0}
    assert LatencyHistogram.decode(broken.outcome.histograms["publish_latency"]).count == 2  # one latency a window
    assert (broken.outcome.start_ns, broken.outcome.end_ns) == (0, 200 * MS)
    assert workers[0].outcome.counters == {"acked": 10}  # the others finished as usual
