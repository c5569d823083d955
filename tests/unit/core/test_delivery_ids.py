import numpy as np
from hypothesis import given, strategies as st

from kafkabench.core import delivery_ids as ids


def test_ids_round_trip_in_bulk_and_anything_else_is_foreign():
    values = [ids.encode(3, 7), ids.encode(65535, 2**32 + 5, 100), b"hello", None, b"x" * 40, ids.encode(0, 0)[:-1]]
    producer, sequence, ours = ids.decode(values)
    assert ours.tolist() == [True, True, False, False, False, False]
    assert producer[ours].tolist() == [3, 65535] and sequence[ours].tolist() == [7, 2**32 + 5]
    assert producer.dtype == np.uint16 and sequence.dtype == np.int64
    assert len(ids.encode(1, 1, 1000)) == 1000 and len(ids.encode(1, 1)) == ids.ID_BYTES


@given(st.lists(st.tuples(st.integers(0, 65535), st.integers(0, 2**63 - 1)), min_size=1, max_size=50),
       st.integers(ids.ID_BYTES, 80), st.booleans())
def test_values_of_one_length_decode_as_values_of_several_do(pairs, size, foreign):
    values = [ids.encode(p, s, size) for p, s in pairs] + ([b"y" * size] if foreign else [])
    fast = ids.decode(values)  # one length: viewed in place
    slow = ids.decode(values + [None])  # a None: header by header
    for a, b in zip(fast, slow):
        assert a.tolist() == b.tolist()[:-1]
    assert fast[2].tolist() == [True] * len(pairs) + ([False] if foreign else [])
