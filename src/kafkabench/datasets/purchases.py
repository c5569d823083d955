"""Purchase records with the fields of seed 002, generated deterministically from a seed.

Distributions follow what such a log looks like: most sends succeed, counts are small, amounts are
skewed (log-normal) and rounded like prices, discounts come in steps, logins repeat (a customer buys
more than once; popular ones often), Korean names are drawn from common surnames and given-name
syllables, times move forward through the days, and about one purchase in ten was never received
(`receive_tm` is null).

Speed: drawing every field of every row costs microseconds in Python. Instead the generator draws pools
(16,384 purchase events, one customer per 8 rows, 16,384 time gaps and receive delays) from those
distributions once, and row i combines pool entries picked by index arithmetic, its send time moving
forward from the gaps. Encoders get the same combination as pre-encoded fragments (`row_parts`), so a
row's JSON, Protobuf or Avro bytes are a few concatenations (formats/codecs.py).
"""

from __future__ import annotations

import bisect
import itertools
import random
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Iterator

FIELDS = ("before_mymoney", "send_status", "product_cnt", "send_cnt", "deny_cnt", "receive_cnt", "send_tm",
          "product_mymoney", "buy_mymoney", "discount_rate", "buy_ipaddr", "buy_login_id", "buy_login_name", "receive_tm")
EVENT_FIELDS = ("before_mymoney", "send_status", "product_cnt", "send_cnt", "deny_cnt", "receive_cnt", "product_mymoney",
                "buy_mymoney", "discount_rate")
CUSTOMER_FIELDS = ("buy_ipaddr", "buy_login_id", "buy_login_name")

SURNAMES = ("김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오", "서", "신", "권", "황", "안", "송", "류", "홍")
SURNAME_WEIGHTS = (21, 14, 8, 5, 4, 2, 2, 2, 2, 2, 1.5, 1.5, 1.5, 1.5, 1.4, 1.4, 1.3, 1.3, 1.2, 1.1)
GIVEN_SYLLABLES = ("민", "서", "지", "현", "우", "준", "도", "하", "윤", "수", "영", "진", "은", "예", "성", "태", "호",
                   "연", "주", "원", "경", "재", "유", "혜", "동", "길", "상", "희", "나", "람")
START = datetime(2021, 10, 1)
DISCOUNTS, DISCOUNT_CUMULATIVE = (0, 5, 10, 15, 20, 30, 50), tuple(itertools.accumulate((60, 10, 12, 5, 7, 4, 2)))
STATUSES, STATUS_CUMULATIVE = (1, 0, 2), tuple(itertools.accumulate((92, 5, 3)))
BEFORE_FACTORS = (0, 0, 1, 2, 5)
# A power of two: `i & MASK` picks from a pool. Large enough that a 1 MB batch of the smallest encoding
# (~12,000 Avro rows) holds each event at most once: i * SPREAD permutes any POOL consecutive rows.
POOL_BITS = 14
POOL = 1 << POOL_BITS
MASK = POOL - 1
SPREAD = 2654435761  # Knuth's multiplicative hash: consecutive rows pick far-apart pool entries


class PurchasePools:
    def __init__(self, rows: int, seed: int = 2021) -> None:
        rng = random.Random(seed)
        self.events = [_event(rng) for _ in range(POOL)]  # (fields, received)
        self.customers = [(_ip(rng), _login_id(rng), _name(rng)) for _ in range(max(1, rows // 8))]
        # popular customers come back: a Pareto-distributed rank, shifted every pool cycle so the mix moves
        self.ranks = [min(int(rng.paretovariate(1.2)) - 1, len(self.customers) - 1) if rng.random() < 0.6
                      else rng.randrange(len(self.customers)) for _ in range(POOL)]
        gaps = [int(rng.expovariate(1 / 1700)) for _ in range(POOL)]  # ms between purchases
        self.gap_prefix = [0, *itertools.accumulate(gaps)]
        self.delays = [int(rng.expovariate(1 / 40)) for _ in range(POOL)]  # s until received

    def pick(self, i: int) -> tuple[int, int, int, int | None]:
        """Row i as (event index, customer index, send second, receive second or None)."""
        event = (i * SPREAD) & MASK
        cycle = i >> POOL_BITS
        customer = (self.ranks[i & MASK] + cycle * 977) % len(self.customers)
        sent = (cycle * self.gap_prefix[POOL] + self.gap_prefix[i & MASK]) // 1000
        received = sent + self.delays[(i * 40503) & MASK] if self.events[event][1] else None
        return event, customer, sent, received

    def row(self, i: int) -> dict:
        event, customer, sent, received = self.pick(i)
        fields, _ = self.events[event]
        ip, login_id, name = self.customers[customer]
        return {**fields, "send_tm": timestamp(sent), "buy_ipaddr": ip, "buy_login_id": login_id,
                "buy_login_name": name, "receive_tm": timestamp(received) if received is not None else None}


def purchases(rows: int, seed: int = 2021, start: int = 0) -> Iterator[dict]:
    pools = PurchasePools(rows, seed)
    return (pools.row(i) for i in range(start, rows))


def _event(rng: random.Random) -> tuple[dict, bool]:
    product_cnt = min(1 + int(rng.expovariate(0.9)), 20)
    price = _price(rng)
    discount = DISCOUNTS[bisect.bisect(DISCOUNT_CUMULATIVE, rng.random() * DISCOUNT_CUMULATIVE[-1])]
    status = STATUSES[bisect.bisect(STATUS_CUMULATIVE, rng.random() * STATUS_CUMULATIVE[-1])]
    received = status == 1 and rng.random() < 0.9
    return {
        "before_mymoney": _price(rng) * BEFORE_FACTORS[int(rng.random() * 5)],
        "send_status": status,
        "product_cnt": product_cnt,
        "send_cnt": product_cnt,
        "deny_cnt": product_cnt if status != 1 else 0,
        "receive_cnt": product_cnt if received else 0,
        "product_mymoney": price,
        "buy_mymoney": int(round(price * product_cnt * (100 - discount) / 100, -1)),
        "discount_rate": discount,
    }, received


_CLOCK = [f"{h:02d}:{m:02d}:{s:02d}" for h in range(24) for m in range(60) for s in range(60)]


def timestamp(seconds: int) -> str:
    """ISO time `seconds` after START."""
    day, second = divmod(seconds, 86_400)
    return f"{_date(day)}T{_CLOCK[second]}"


@lru_cache(maxsize=4096)
def _date(day: int) -> str:
    return (START + timedelta(days=day)).strftime("%Y-%m-%d")


def _price(rng: random.Random) -> int:
    return max(100, int(round(rng.lognormvariate(9.3, 1.0), -2)))  # median ~11,000 won, in 100s


def _login_id(rng: random.Random) -> int:
    return rng.randrange(10_000_000, 99_999_999)


def _name(rng: random.Random) -> str:
    surname = rng.choices(SURNAMES, SURNAME_WEIGHTS)[0]
    return surname + "".join(rng.choice(GIVEN_SYLLABLES) for _ in range(rng.choices((1, 2), (1, 9))[0]))


def _ip(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return f"192.168.{rng.randrange(0, 4)}.{rng.randrange(2, 255)}"
    return f"{rng.choice((1, 14, 27, 39, 49, 58, 61, 110, 112, 121, 175, 211, 218, 222))}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
