import threading

import numpy as np

from kafkabench.workers.acks import AckLog, seconds_to_us


def test_taking_while_another_thread_appends_loses_and_repeats_nothing():
    """A client's I/O thread appends acknowledgements while the run takes them: no lock, nothing lost."""
    acks = AckLog(sizes=True)
    count = 200_000

    def acknowledge() -> None:
        latency, size = acks.latencies.append, acks.sizes.append
        for i in range(count):
            latency(i * 1000)
            size(i % 7)

    writer = threading.Thread(target=acknowledge)
    writer.start()
    taken, total_bytes = [], 0
    while writer.is_alive() or acks.latencies:
        latencies, payload_bytes, _errors = acks.take()
        taken.append(latencies)
        total_bytes += payload_bytes
    writer.join()
    every = np.concatenate(taken)
    assert np.array_equal(every, np.arange(count, dtype=np.int64))  # each once, in order, ns -> us
    assert total_bytes == sum(i % 7 for i in range(count))


def test_librdkafka_latencies_in_seconds_become_whole_microseconds():
    micros = [0, 1, 999_999, 3_600_000_000, 123_456]
    assert seconds_to_us([m / 1e6 for m in micros]).tolist() == micros
    acks = AckLog(to_us=seconds_to_us, sizes=False)
    acks.latencies.extend([0.000250, 0.5])
    acks.errors.append("MSG_TIMED_OUT: Local: Message timed out")
    latencies, payload_bytes, errors = acks.take()
    assert latencies.tolist() == [250, 500_000] and payload_bytes is None and errors == ["MSG_TIMED_OUT: Local: Message timed out"]
    assert acks.take()[0].size == 0
