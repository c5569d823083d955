"""What the minimal hand-written loops share: their command line, settings and the one JSON line they print.
No kafkabench code: these loops are the yardstick kafkabench is measured against.

    produce loops:  BOOTSTRAP TOPIC SIZE COUNT [-X key=value ...]
    consume loops:  BOOTSTRAP TOPIC COUNT [-X key=value ...]

-X keys are the client's own names (librdkafka's `batch.size`, kafka-python's `batch_size`, aiokafka's
`max_batch_size`); they are layered over the loop's defaults. Python clients get Python values: `5` -> 5,
`true` -> True, `all` stays text.
"""

from __future__ import annotations

import argparse
import json
import math


def parse_args(doc: str, produce: bool, defaults: dict, typed: bool) -> tuple[argparse.Namespace, dict]:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("bootstrap")
    parser.add_argument("topic")
    if produce:
        parser.add_argument("size", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("-X", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    settings = dict(defaults)
    for item in args.settings:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"-X {item!r}: expected KEY=VALUE")
        settings[key.strip()] = _python_value(value.strip()) if typed else value.strip()
    return args, settings


def _python_value(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def percentile_us(ordered: list[float], q: float) -> float:
    """Nearest rank, as HdrHistogram reads it: the least value with at least q of all values at or below it."""
    if not ordered:
        return 0.0
    rank = min(len(ordered), max(1, math.ceil(q * len(ordered) - 1e-9)))
    return round(ordered[rank - 1], 1)


def report_produce(latencies_us: list[float], errors: int, seconds: float) -> None:
    ordered = sorted(latencies_us)
    print(json.dumps({"records": len(ordered), "errors": errors, "seconds": round(seconds, 6),
                      "records_per_s": round(len(ordered) / seconds, 1) if seconds > 0 else 0.0,
                      "latency_us": {"p50": percentile_us(ordered, 0.50), "p99": percentile_us(ordered, 0.99)}}))


def report_acks(sent_ns: list[int], acked_ns: list[int], done: int, failed: list[int]) -> None:
    """The i-th ack belongs to the i-th send (one partition); latencies are computed here, after the clock stopped."""
    bad = set(failed)
    ok = [i for i in range(done) if i not in bad] if bad else range(done)
    last_ack = max((acked_ns[i] for i in ok), default=None)
    seconds = (last_ack - sent_ns[0]) / 1e9 if last_ack is not None else 0.0
    report_produce([(acked_ns[i] - sent_ns[i]) / 1000 for i in ok], len(bad), seconds)


def report_consume(records: int, payload_bytes: int, start_ns: int, last_ns: int | None) -> None:
    seconds = (last_ns - start_ns) / 1e9 if last_ns else 0.0
    print(json.dumps({"records": records, "bytes": payload_bytes, "seconds": round(seconds, 6),
                      "records_per_s": round(records / seconds, 1) if seconds > 0 else 0.0}))


def print_paced(latencies_us: list[float], delays_us: list[float], errors: int, seconds: float, cpu_s: float) -> None:
    """The paced loops' line: what report_produce prints, with the delays (due -> send call) and the CPU."""
    latencies, delays = sorted(latencies_us), sorted(delays_us)
    print(json.dumps({"records": len(latencies), "errors": errors, "seconds": round(seconds, 6),
                      "records_per_s": round(len(latencies) / seconds, 1) if seconds > 0 else 0.0,
                      "latency_us": {"p50": percentile_us(latencies, 0.50), "p99": percentile_us(latencies, 0.99)},
                      "delay_us": {"p50": percentile_us(delays, 0.50), "p99": percentile_us(delays, 0.99)},
                      "cpu_s": round(cpu_s, 3)}))
