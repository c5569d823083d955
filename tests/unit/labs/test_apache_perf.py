import pytest

from kafkabench.labs.throughput.apache import ApacheToolFailed, parse_consumer_performance, parse_producer_performance

PRODUCER_OUTPUT = """\
1403626 records sent, 280725.2 records/sec (26.77 MB/sec), 310.6 ms avg latency, 468.0 ms max latency.
500000 records sent, 282646.7 records/sec (26.96 MB/sec), 336.12 ms avg latency, 456.00 ms max latency, 336 ms 50th, 440 ms 95th, 450 ms 99th, 454 ms 99.9th.
"""

CONSUMER_OUTPUT = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-11-21 14:50:01:000, 2026-11-21 14:50:02:000, 28.6102, 48.0843, 300000, 504202.3, 3040, 595, 48.0843, 504202.3
"""


def test_producer_summary_is_the_last_line():
    figures = parse_producer_performance(PRODUCER_OUTPUT)
    assert figures["records"] == 500000 and figures["records_per_s"] == 282646.7 and figures["mb_per_s"] == 26.96
    assert (figures["p50_ms"], figures["p99_ms"], figures["p999_ms"], figures["max_ms"]) == (336, 450, 454, 456.0)


def test_consumer_row():
    figures = parse_consumer_performance(CONSUMER_OUTPUT)
    assert figures["records"] == 300000 and figures["records_per_s"] == 504202.3
    assert figures["rebalance_ms"] == 3040 and figures["fetch_ms"] == 595


@pytest.mark.parametrize("parse", [parse_producer_performance, parse_consumer_performance])
def test_unreadable_output_is_a_clear_error(parse):
    with pytest.raises(ApacheToolFailed, match="printed no"):
        parse("Exception in thread main: bootstrap.servers is empty")
