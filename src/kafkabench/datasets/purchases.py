"""Purchase records with the fields of seed 002, generated deterministically from a seed.

Distributions follow what such a log looks like: most sends succeed, counts are small, amounts are
skewed (log-normal) and rounded like prices, discounts come in steps, logins repeat (a customer buys
more than once; popular ones often), Korean names are drawn from common surnames and given-name
syllables, times move forward through the days, and about one purchase in ten was never received
(`receive_tm` is null).

Speed: drawing every field of every row costs microseconds in Python. Instead the generator draws pools
once (16,384 purchase events, one customer per 8 rows, 16,384 time gaps and receive delays), and row i
combines pool entries picked by index arithmetic, its send time moving forward from the gaps. `picks`
does that arithmetic with numpy for a block of rows at once; encoders concatenate pre-encoded fragments
of the picked events and customers with the rows' times (formats/codecs.py), so a row never becomes a
dict on the fast path.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Iterator

import numpy as np

FIELDS = ("before_mymoney", "send_status", "product_cnt", "send_cnt", "deny_cnt", "receive_cnt", "send_tm",
          "product_mymoney", "buy_mymoney", "discount_rate", "buy_ipaddr", "buy_login_id", "buy_login_name", "receive_tm")
EVENT_FIELDS = ("before_mymoney", "send_status", "product_cnt", "send_cnt", "deny_cnt", "receive_cnt", "product_mymoney",
                "buy_mymoney", "discount_rate")
CUSTOMER_FIELDS = ("buy_ipaddr", "buy_login_id", "buy_login_name")

SURNAMES = ("김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오", "서", "신", "권", "황", "안", "송", "류", "홍")
SURNAME_WEIGHTS = (21, 14, 8, 5, 4, 2, 2, 2, 2, 2, 1.5, 1.5, 1.5, 1.5, 1.4, 1.4, 1.3, 1.3, 1.2, 1.1)
GIVEN_SYLLABLES = ("민", "서", "지", "현", "우", "준", "도", "하", "윤", "수", "영", "진", "은", "예", "성", "태", "호",
                   "연", "주", "원", "경", "재", "유", "혜", "동", "길", "상", "희", "나", "람")
PUBLIC_FIRST_OCTETS = (1, 14, 27, 39, 49, 58, 61, 110, 112, 121, 175, 211, 218, 222)
START = datetime(2021, 10, 1)
DISCOUNTS, DISCOUNT_WEIGHTS = (0, 5, 10, 15, 20, 30, 50), (60, 10, 12, 5, 7, 4, 2)
STATUSES, STATUS_WEIGHTS = (1, 0, 2), (92, 5, 3)
BEFORE_FACTORS = (0, 0, 1, 2, 5)
# A power of two: `i & MASK` picks from a pool. Large enough that a 1 MB batch of the smallest encoding
# (~12,000 Avro rows) holds each event at most once: i * SPREAD permutes any POOL consecutive rows.
POOL_BITS = 14
POOL = 1 << POOL_BITS
MASK = POOL - 1
SPREAD = 2654435761  # Knuth's multiplicative hash: consecutive rows pick far-apart pool entries
DELAY_SPREAD = 40503
CYCLE_SHIFT = 977  # popular customers move by this many places every POOL rows
TIMESTAMP_WIDTH = 19  # 2021-10-01T00:00:00


@dataclass(frozen=True)
class Picks:
    """Rows start..stop as arrays: event and customer indexes, send second, receive second (-1: never)."""
    event: np.ndarray
    customer: np.ndarray
    sent: np.ndarray
    received: np.ndarray


class PurchasePools:
    def __init__(self, rows: int, seed: int = 2021) -> None:
        draw = np.random.default_rng(seed)
        self.events, self._received = _events(draw, POOL)
        self.customers = _customers(draw, max(1, rows // 8))
        count = len(self.customers)
        # popular customers come back: a Pareto-distributed rank, shifted every pool cycle so the mix moves
        popular = np.minimum((draw.pareto(1.2, POOL) + 1).astype(np.int64) - 1, count - 1)
        self._ranks = np.where(draw.random(POOL) < 0.6, popular, draw.integers(0, count, POOL))
        gaps = draw.exponential(1700, POOL).astype(np.int64)  # ms between purchases
        self._gap_prefix = np.concatenate(([0], np.cumsum(gaps)))
        delays = draw.exponential(40, POOL).astype(np.int64)  # s until received
        positions = np.arange(POOL, dtype=np.int64)
        self._event_at = (positions * SPREAD) & MASK  # i * SPREAD mod POOL depends on i mod POOL only
        self._delay_at = delays[(positions * DELAY_SPREAD) & MASK]

    def picks(self, start: int, stop: int) -> Picks:
        """Rows start..stop, which lie in one cycle of POOL rows (blocks() yields such ranges)."""
        cycle = start >> POOL_BITS
        assert (stop - 1) >> POOL_BITS == cycle, "picks() takes rows of one pool cycle"
        at = slice(start & MASK, ((stop - 1) & MASK) + 1)
        event = self._event_at[at]
        customer = (self._ranks[at] + cycle * CYCLE_SHIFT) % len(self.customers)
        sent = (cycle * int(self._gap_prefix[POOL]) + self._gap_prefix[at]) // 1000
        received = np.where(self._received[event], sent + self._delay_at[at], -1)
        return Picks(event, customer, sent, received)

    def rows(self, start: int, stop: int) -> list[dict]:
        """Rows start..stop as dicts (the slow path: for checks, CSV-like use, and tests)."""
        out = []
        for lo, hi in blocks(start, stop):
            p = self.picks(lo, hi)
            sent = _text(timestamps(p.sent))
            received = _text(timestamps(np.maximum(p.received, 0)))
            for event, customer, s, r, got in zip(p.event.tolist(), p.customer.tolist(), sent, received,
                                                  (p.received >= 0).tolist()):
                ip, login_id, name = self.customers[customer]
                out.append({**self.events[event], "send_tm": s, "buy_ipaddr": ip, "buy_login_id": login_id,
                            "buy_login_name": name, "receive_tm": r if got else None})
        return out

    def row(self, i: int) -> dict:
        return self.rows(i, i + 1)[0]


def blocks(start: int, stop: int, size: int = POOL) -> Iterator[tuple[int, int]]:
    """start..stop cut into ranges of at most `size` rows that never cross a pool cycle."""
    while start < stop:
        end = min(stop, (start // size + 1) * size, ((start >> POOL_BITS) + 1) << POOL_BITS)
        yield start, end
        start = end


def purchases(rows: int, seed: int = 2021, start: int = 0) -> Iterator[dict]:
    pools = PurchasePools(rows, seed)
    for lo, hi in blocks(start, rows):
        yield from pools.rows(lo, hi)


def timestamps(seconds: np.ndarray) -> np.ndarray:
    """ISO times `seconds` after START, one row of TIMESTAMP_WIDTH ASCII bytes each."""
    days, second = np.divmod(seconds, 86_400)
    out = np.empty((len(seconds), TIMESTAMP_WIDTH), dtype=np.uint8)
    out[:, :10] = _dates(int(days.max(initial=0)) + 1)[days]
    out[:, 10] = ord("T")
    out[:, 11:] = _CLOCK[second]
    return out


def _text(times: np.ndarray) -> list[str]:
    return times.view(f"S{TIMESTAMP_WIDTH}").ravel().astype(str).tolist()


def _clock() -> np.ndarray:
    h, rest = np.divmod(np.arange(86_400), 3600)
    m, s = np.divmod(rest, 60)
    digits = [h // 10, h % 10, None, m // 10, m % 10, None, s // 10, s % 10]
    return np.stack([d + ord("0") if d is not None else np.full(86_400, ord(":")) for d in digits], axis=1).astype(np.uint8)


_CLOCK = _clock()
_DATES = np.empty((0, 10), dtype=np.uint8)


def _dates(count: int) -> np.ndarray:
    global _DATES
    if len(_DATES) < count:
        text = b"".join((START + timedelta(days=d)).strftime("%Y-%m-%d").encode() for d in range(max(count, 2 * len(_DATES))))
        _DATES = np.frombuffer(text, dtype=np.uint8).reshape(-1, 10)
    return _DATES


def _events(draw: np.random.Generator, count: int) -> tuple[list[dict], np.ndarray]:
    """Purchase events (the fields that are not customer or time) and whether each was received."""
    product_cnt = np.minimum(1 + draw.exponential(1 / 0.9, count).astype(np.int64), 20)
    price = _prices(draw, count)
    discount = np.array(DISCOUNTS)[draw.choice(len(DISCOUNTS), count, p=_share(DISCOUNT_WEIGHTS))]
    status = np.array(STATUSES)[draw.choice(len(STATUSES), count, p=_share(STATUS_WEIGHTS))]
    received = (status == 1) & (draw.random(count) < 0.9)
    columns = {
        "before_mymoney": _prices(draw, count) * np.array(BEFORE_FACTORS)[draw.integers(0, len(BEFORE_FACTORS), count)],
        "send_status": status,
        "product_cnt": product_cnt,
        "send_cnt": product_cnt,
        "deny_cnt": np.where(status != 1, product_cnt, 0),
        "receive_cnt": np.where(received, product_cnt, 0),
        "product_mymoney": price,
        "buy_mymoney": np.round(price * product_cnt * (100 - discount) / 1000).astype(np.int64) * 10,
        "discount_rate": discount,
    }
    assert tuple(columns) == EVENT_FIELDS
    return [dict(zip(EVENT_FIELDS, values)) for values in zip(*(c.tolist() for c in columns.values()))], received


def _prices(draw: np.random.Generator, count: int) -> np.ndarray:
    """Median ~11,000 won, in 100s."""
    return np.maximum(100, np.round(draw.lognormal(9.3, 1.0, count) / 100).astype(np.int64) * 100)


def _share(weights: tuple[float, ...]) -> np.ndarray:
    return np.array(weights) / sum(weights)


def _customers(draw: np.random.Generator, count: int) -> list[tuple[str, int, str]]:
    """(ip, login id, Korean name) per customer: 30 % from a home network, the rest public addresses."""
    home = draw.random(count) < 0.3
    octets = np.stack([np.where(home, 192, np.array(PUBLIC_FIRST_OCTETS)[draw.integers(0, len(PUBLIC_FIRST_OCTETS), count)]),
                       np.where(home, 168, draw.integers(0, 256, count)),
                       np.where(home, draw.integers(0, 4, count), draw.integers(0, 256, count)),
                       np.where(home, draw.integers(2, 255, count), draw.integers(1, 255, count))], axis=1)
    ips = ["%d.%d.%d.%d" % tuple(o) for o in octets.tolist()]
    login_ids = draw.integers(10_000_000, 100_000_000, count).tolist()
    surnames = draw.choice(len(SURNAMES), count, p=_share(SURNAME_WEIGHTS)).tolist()
    first, second = draw.integers(0, len(GIVEN_SYLLABLES), (2, count)).tolist()
    two = (draw.random(count) < 0.9).tolist()
    names = [SURNAMES[s] + GIVEN_SYLLABLES[a] + (GIVEN_SYLLABLES[b] if t else "")
             for s, a, b, t in zip(surnames, first, second, two)]
    return list(zip(ips, login_ids, names))
