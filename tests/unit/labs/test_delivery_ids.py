import numpy as np

from kafkabench.labs.delivery import ids


def test_ids_round_trip_in_bulk_and_anything_else_is_foreign():
    values = [ids.encode(3, 7), ids.encode(65535, 2**32 + 5, 100), b"hello", None, b"x" * 40, ids.encode(0, 0)[:-1]]
    producer, sequence, ours = ids.decode(values)
    assert ours.tolist() == [True, True, False, False, False, False]
    assert producer[ours].tolist() == [3, 65535] and sequence[ours].tolist() == [7, 2**32 + 5]
    assert producer.dtype == np.uint16 and sequence.dtype == np.int64
    assert len(ids.encode(1, 1, 1000)) == 1000 and len(ids.encode(1, 1)) == ids.ID_BYTES
