"""Purchase records with the fields of seed 002, generated deterministically from a seed.

Distributions follow what such a log looks like: most sends succeed, counts are small, amounts are
skewed (log-normal) and rounded like prices, discounts come in steps, logins repeat (a customer buys
more than once), Korean names are drawn from common surnames and given-name syllables, times move
forward through the day, and about one purchase in ten was never received (`receive_tm` is null).
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

SURNAMES = ("김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오", "서", "신", "권", "황", "안", "송", "류", "홍")
SURNAME_WEIGHTS = (21, 14, 8, 5, 4, 2, 2, 2, 2, 2, 1.5, 1.5, 1.5, 1.5, 1.4, 1.4, 1.3, 1.3, 1.2, 1.1)
GIVEN_SYLLABLES = ("민", "서", "지", "현", "우", "준", "도", "하", "윤", "수", "영", "진", "은", "예", "성", "태", "호",
                   "연", "주", "원", "경", "재", "유", "혜", "동", "길", "상", "희", "나", "람")
START = datetime(2021, 10, 1)


DISCOUNTS, DISCOUNT_CUMULATIVE = (0, 5, 10, 15, 20, 30, 50), tuple(itertools.accumulate((60, 10, 12, 5, 7, 4, 2)))
STATUSES, STATUS_CUMULATIVE = (1, 0, 2), tuple(itertools.accumulate((92, 5, 3)))
BEFORE_FACTORS = (0, 0, 1, 2, 5)


def purchases(rows: int, seed: int = 2021) -> Iterator[dict]:
    rng = random.Random(seed)
    random_, expovariate = rng.random, rng.expovariate
    customers = [(_login_id(rng), _name(rng), _ip(rng)) for _ in range(max(1, rows // 8))]
    last = len(customers) - 1
    clock_ms = 0.0
    for _ in range(rows):
        clock_ms += expovariate(1 / 1700)
        sent_s = int(clock_ms / 1000)
        login_id, name, ip = customers[min(int(rng.paretovariate(1.2)) - 1, last)] if random_() < 0.6 else rng.choice(customers)
        product_cnt = min(1 + int(expovariate(0.9)), 20)
        price = _price(rng)
        discount = DISCOUNTS[bisect.bisect(DISCOUNT_CUMULATIVE, random_() * DISCOUNT_CUMULATIVE[-1])]
        status = STATUSES[bisect.bisect(STATUS_CUMULATIVE, random_() * STATUS_CUMULATIVE[-1])]
        received = status == 1 and random_() < 0.9
        yield {
            "before_mymoney": _price(rng) * BEFORE_FACTORS[int(random_() * 5)],
            "send_status": status,
            "product_cnt": product_cnt,
            "send_cnt": product_cnt,
            "deny_cnt": product_cnt if status != 1 else 0,
            "receive_cnt": product_cnt if received else 0,
            "send_tm": _timestamp(sent_s),
            "product_mymoney": price,
            "buy_mymoney": int(round(price * product_cnt * (100 - discount) / 100, -1)),
            "discount_rate": discount,
            "buy_ipaddr": ip,
            "buy_login_id": login_id,
            "buy_login_name": name,
            "receive_tm": _timestamp(sent_s + int(expovariate(1 / 40))) if received else None,
        }


def _timestamp(seconds: int) -> str:
    """ISO time `seconds` after START; the date part is formatted once per day (strftime per row is slow)."""
    day, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    return f"{_date(day)}T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


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
