"""A consume run that sat out pauses in fetching says so, with the rate between them and, for confluent, the setting
that keeps librdkafka fetching (unless it was given); a produce run whose consumers did not read every acknowledged
record says how many they read."""

from types import SimpleNamespace

from kafkabench.labs.throughput.run import fetch_pause_note, unread_note


def plan(client="confluent", config=None):
    return SimpleNamespace(scenario=SimpleNamespace(client=client), consumer_config=config or {})


def run(stalls, idle_s=3.0, duration_s=4.0, received=1_000_000):
    return SimpleNamespace(scenario="consume", counters={"stalls": stalls, "received": received},
                           timings={"idle_s": idle_s}, duration_s=duration_s)


def test_a_read_with_pauses_says_how_long_it_sat_idle_and_what_it_read_between_them():
    note = fetch_pause_note(plan(), [run(3)])
    assert "idle 3.00 s of 4.00 s" in note and "3 pause(s)" in note
    assert "1,000,000 records/s" in note and "fetch.queue.backoff.ms=10" in note


def test_no_note_without_pauses_and_no_advice_when_the_setting_was_given():
    assert fetch_pause_note(plan(), [run(0)]) is None
    assert "fetch.queue.backoff.ms=10" not in fetch_pause_note(plan(config={"fetch.queue.backoff.ms": "10"}), [run(1)])
    assert "librdkafka" not in fetch_pause_note(plan("kafka-python"), [run(1)])


def produce_plan(subscriptions=1):
    return SimpleNamespace(role="produce", group="g", scenario=SimpleNamespace(subscriptions=subscriptions))


def counted(scenario, **counters):
    return SimpleNamespace(scenario=scenario, counters=counters)


def test_consumers_that_did_not_read_every_acknowledged_record_say_how_many_they_read():
    runs = [counted("produce", acked=12_000), counted("consume", received=11_987)]
    assert unread_note(produce_plan(), runs, 30) == (
        "the consumers read 11,987 of the 12,000 acknowledged records they were to read, within 30 s of the producers' "
        "end: the e2e latencies leave out the 13 others")
    # two subscriptions: each group reads every record
    assert "of the 24,000" in unread_note(produce_plan(2), [runs[0], counted("consume", received=23_990)], 5)


def test_no_unread_note_when_all_arrived_or_nothing_was_consumed():
    assert unread_note(produce_plan(), [counted("produce", acked=10), counted("consume", received=10)], 30) is None
    assert unread_note(produce_plan(), [counted("produce", acked=10)], 30) is None
