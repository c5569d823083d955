from hypothesis import given
from hypothesis import strategies as st

from kafkabench.core.shares import even_shares


def test_the_first_shares_take_the_remainder():
    assert even_shares(10, 3) == [4, 3, 3]
    assert even_shares(2, 3) == [1, 1, 0]


@given(st.integers(0, 10**9), st.integers(1, 64))
def test_shares_sum_to_the_total_and_differ_by_one_at_most(total, parts):
    shares = even_shares(total, parts)
    assert len(shares) == parts and sum(shares) == total
    assert max(shares) - min(shares) <= 1 and shares == sorted(shares, reverse=True)
