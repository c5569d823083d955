from hypothesis import given
from hypothesis import strategies as st

from kafkabench.labs.throughput.run import split_count


@given(st.dictionaries(st.integers(0, 50), st.integers(0, 10**6), min_size=1, max_size=12), st.data())
def test_a_count_is_split_exactly_and_no_partition_gives_more_than_it_holds(available, data):
    total = sum(available.values())
    count = data.draw(st.integers(0, total + 5))
    shares = split_count(count, available)
    if total == 0 or count > total:
        assert shares is None
        return
    assert sum(shares.values()) == count
    assert all(0 <= shares[p] <= available[p] for p in available)


def test_shares_follow_what_each_partition_holds():
    assert split_count(10_001, {0: 20_000, 1: 10_000, 2: 0}) == {0: 6_667, 1: 3_334, 2: 0}
