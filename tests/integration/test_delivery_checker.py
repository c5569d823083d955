"""The delivery checker against planted truth on a real broker: records deleted with DeleteRecords are
exactly the losses, ids written again by a second producer exactly the duplicates, and a loss is confirmed
by a second fresh read."""

import pytest
from confluent_kafka import Producer

from kafkabench.admin import quiet_client_config
from kafkabench.core import delivery_ids as ids
from kafkabench.labs.delivery.checker import check
from kafkabench.core.delivery_history import History
from kafkabench.labs.delivery.consumer_checks import copies_text
from kafkabench.labs.delivery.readback import copies_of, read_spans, read_topic

pytestmark = [pytest.mark.integration, pytest.mark.quick]  # seconds on the session cluster: in `make test-quick`

SENT = 3000
DELETED_BELOW = 200  # partition 0's first records
COPIES = 50


def produce(bootstrap: str, topic: str, sequences, history: History | None, partition: int | None = None,
            spread_over: int | None = None) -> None:
    """To `partition`, or round robin over `spread_over` partitions (a null key's sticky partitioner may leave one
    nearly empty), or wherever the partitioner puts them. Idempotent: the planted truth is the deletions and the
    copies; a retried batch of a plain producer (a request timing out on a loaded machine) can land after a
    later one, and the checker rightly counts that as reordering (795 of 3,000 once, in a fresh clone's run)."""
    producer = Producer(quiet_client_config(bootstrap, acks="all", **{"enable.idempotence": True}))

    def answered(error, message, sequence):
        if history is None:
            return
        if error is None:
            history.record_ack(sequence, message.partition(), message.offset())
        else:
            history.record_failure(sequence, error.name())

    for sequence in sequences:
        chosen = sequence % spread_over if spread_over else partition
        extra = {} if chosen is None else {"partition": chosen}
        producer.produce(topic, ids.encode(0, sequence, 64), on_delivery=lambda e, m, s=sequence: answered(e, m, s), **extra)
        producer.poll(0)
    assert producer.flush(30) == 0


def test_deleted_records_are_exactly_the_losses_and_copies_exactly_the_duplicates(kafka_cluster, admin, topic_name):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=3)
    history = History(producer=0, sent=SENT)
    produce(bootstrap, topic_name, range(SENT), history, spread_over=3)
    assert history.acked == SENT
    on_zero = history.partition == 0
    assert on_zero.sum() > DELETED_BELOW
    deleted = int(((history.offset < DELETED_BELOW) & on_zero).sum())
    assert deleted == DELETED_BELOW  # a fresh topic: partition 0's offsets start at 0 and are all ours

    admin.delete_records(topic_name, 0, before=DELETED_BELOW)
    copied = [int(s) for s in (history.partition == 1).nonzero()[0][:COPIES]]
    produce(bootstrap, topic_name, copied, None, partition=1)  # the same ids again, after their originals

    verdict = check([history], read_topic(bootstrap, topic_name), idempotent=False,
                    second_read=lambda missing: read_spans(bootstrap, topic_name, missing.spans()))
    assert (verdict.lost, verdict.loss_confirmed, verdict.unconfirmed_misses) == (DELETED_BELOW, True, 0)
    assert (verdict.duplicated, verdict.duplicated_ids) == (COPIES, COPIES)
    assert (verdict.reordered, verdict.offset_mismatch, verdict.strays, verdict.foreign) == (0, 0, 0, 0)
    assert verdict.read == SENT - DELETED_BELOW + COPIES
    assert verdict.failures == ["lost"]  # copies are no failure without idempotence
    # the evidence a duplicate is reported with: where each copy is and when it was written
    found = copies_of(bootstrap, topic_name, 0, copied[:2] + [SENT + 1])
    assert found[SENT + 1] == [] and all(len(found[s]) == 2 for s in copied[:2])
    first, again = found[copied[0]]
    assert first[0] == again[0] == 1 and first[1] == history.offset[copied[0]] and again[1] > first[1]
    assert first[2] <= again[2] and copies_text([first, again], first[2] / 1000) == (
        f"copied to output partition 1 at offsets {first[1]} (0.0 s) and {again[1]} "
        f"({(again[2] - first[2]) / 1000:.1f} s)")


def test_a_clean_topic_gives_all_zeros_and_foreign_records_are_counted_apart(kafka_cluster, admin, topic_name):
    bootstrap = kafka_cluster.bootstrap_servers
    admin.create_topic(topic_name, partitions=2)
    history = History(producer=0, sent=500)
    produce(bootstrap, topic_name, range(500), history)
    other = Producer(quiet_client_config(bootstrap))
    for i in range(7):
        other.produce(topic_name, f"not an id {i}".encode())
    assert other.flush(30) == 0
    verdict = check([history], read_topic(bootstrap, topic_name), idempotent=True)
    assert (verdict.lost, verdict.duplicated, verdict.reordered, verdict.offset_mismatch) == (0, 0, 0, 0)
    assert (verdict.read, verdict.foreign, verdict.distinct_read) == (500, 7, 500)
    assert verdict.failures == []
