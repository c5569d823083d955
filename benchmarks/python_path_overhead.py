"""Does kafkabench's Python worker produce and consume at the client's own speed? kafkabench / a minimal loop.

    .venv/bin/python benchmarks/python_path_overhead.py [--clients confluent,kafka-python,aiokafka]
        [--sizes 100,10240] [--directions produce,consume] [--repeats 3] [--count 1000000] [--rss] [--quick]
        [--bootstrap-servers HOST:PORT]

One embedded broker (or --bootstrap-servers). For each client, record size and direction, kafkabench (in
process, through the lab API) and the minimal hand-written loop of that client (benchmarks/minimal_*.py,
no kafkabench code, run as a subprocess) take turns: one discarded pass of each first (broker JIT, page
cache), then --repeats interleaved repeats in ABBA order, so neither side always runs first.

- produce: a fresh one-partition topic per run, acks=1 batch.size=1000000 linger.ms=5 on both sides
  (kafkabench: `acks` and -X overrides; the loops: the same settings in the client's own names), the same
  number of records of the same size of random bytes. records/s = acknowledged records / (first send ->
  last ack), both sides.
- consume: one topic per size filled once (by the minimal confluent loop) with more records than any run
  reads; every run reads `count` records from the earliest offset in a fresh group, enable.auto.commit=false,
  confluent with fetch.queue.backoff.ms=10 (FETCH_NATIVE), client defaults otherwise. records/s = records / (partitions assigned -> last record in hand): the loops
  start their clock in the rebalance listener; kafkabench's consume clock starts where fetching starts, which
  for a confluent consumer holding records fetched before its start signal is the assignment too (before
  that was fixed, its clock started at the signal after librdkafka had prefetched, and read up to 1.6x).

Records per run scale with the client, the direction and the size so that each run takes a few seconds
(COUNTS below; kafka-python gets 4x with the C crc32c package): --count is the figure for confluent
producing 100 B records, the others keep their proportion to it. Prints per case each side's records/s
per repeat, the medians and the ratio kafkabench / minimal (median of the per-repeat ratios) against its
target (>= 0.90 for confluent, >= 0.85 for the pure-Python clients). `--rss`: peak RSS of kafkabench's confluent
produce worker at 100 B for 1e5 and 1e7 records, --repeats interleaved runs each, ratio of the medians
(target: <= 1.2). `--quick`: small counts, one
repeat, no warm-up pass: a smoke run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.config.properties import parse_overrides
from kafkabench.core.events import SILENT
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ConsumeScenario, ProduceScenario

HERE = Path(__file__).parent
CLIENTS = ("confluent", "kafka-python", "aiokafka")
TARGET = {"confluent": 0.90, "kafka-python": 0.85, "aiokafka": 0.85}
# the producer settings both sides run with, in Java names, and as each minimal loop takes them
PRODUCER = {"acks": "1", "batch.size": "1000000", "linger.ms": "5"}
NATIVE_NAMES = {"confluent": {}, "kafka-python": {"batch.size": "batch_size", "linger.ms": "linger_ms"},
                "aiokafka": {"batch.size": "max_batch_size", "linger.ms": "linger_ms"}}
CONSUMER = {"enable.auto.commit": "false"}  # the minimal consume loops set it themselves
# librdkafka stops fetching for fetch.queue.backoff.ms (1 s) whenever 100,000 records are queued: a 100 B read then
# takes its own time plus 0 to 4 such seconds, as a race decides, and a ratio compares numbers of pauses. Both sides
# keep fetching (docs/benchmarks.md, "Consume runs that agree").
FETCH_NATIVE = {"confluent": {"fetch.queue.backoff.ms": "10"}}
RSS_COUNTS = (100_000, 10_000_000)
# records per run at --count 1000000, (client, direction) -> (at 100 B, at 10240 B): about 2-4 s each on this
# project's 2-core machine, client defaults for fetching, kafka-python without the C crc32c package
COUNTS = {("confluent", "produce"): (1_000_000, 50_000), ("confluent", "consume"): (600_000, 150_000),
          ("kafka-python", "produce"): (50_000, 2_000), ("kafka-python", "consume"): (80_000, 2_000),
          ("aiokafka", "produce"): (300_000, 80_000), ("aiokafka", "consume"): (1_000_000, 80_000)}


def records_per_run(base: int, client: str, size: int, direction: str) -> int:
    """COUNTS scaled by --count; between and beyond the two sizes it knows, a straight line on log-log axes."""
    (small, at_small), (large, at_large) = zip((100, 10_240), COUNTS[client, direction])
    slope = math.log(at_large / at_small) / math.log(large / small)
    count = base / COUNTS["confluent", "produce"][0] * at_small * (size / small) ** slope
    if client == "kafka-python":
        from kafka.record import util

        count *= 1 if util.crc32c_c is None else 4  # CRC-32C of every batch in pure Python or in C
    return max(100, int(float(f"{count:.2g}")))  # two significant digits


def produce_scenario(client: str, size: int, count: int) -> ProduceScenario:
    """kafkabench produce with PRODUCER: acks is the scenario's field, the rest go in as -X overrides."""
    overrides = parse_overrides([f"{k}={v}" for k, v in PRODUCER.items() if k != "acks"])
    return ProduceScenario(size=size, count=count, acks=PRODUCER["acks"], client=client, overrides=overrides)


@dataclass
class Case:
    client: str
    size: int
    direction: str
    count: int
    kafkabench: list[float | None] = field(default_factory=list)
    minimal: list[float | None] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.client}, {self.size} B, {self.direction}"

    def ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.kafkabench, self.minimal) if a and b]

    def verdict(self) -> tuple[str, float | None]:
        ratios = self.ratios()
        if not ratios:
            return "ERROR", None
        ratio = statistics.median(ratios)
        return ("PASS" if ratio >= TARGET[self.client] else "MISS"), ratio


class Bench:
    def __init__(self, target: Target, tmp: Path) -> None:
        self.target, self.tmp = target, tmp
        self.bootstrap = target.bootstrap_servers
        self.filled: dict[int, str] = {}

    # kafkabench, in process through the lab API
    def kafkabench(self, case: Case) -> tuple[float, str]:
        out = self.tmp / f"kb-{uuid.uuid4().hex[:8]}"
        try:
            if case.direction == "produce":
                scenario = produce_scenario(case.client, case.size, case.count)
            else:
                scenario = ConsumeScenario(topic=self.filled[case.size], count=case.count, client=case.client,
                                           group=f"overhead-{uuid.uuid4().hex[:8]}", start_from="earliest",
                                           overrides=parse_overrides([f"{k}={v}" for k, v in CONSUMER.items()] + [
                                               f"librdkafka:{k}={v}" for k, v in FETCH_NATIVE.get(case.client, {}).items()]))
            run = run_throughput(scenario, self.target, out, SILENT).runs[0]
        finally:
            shutil.rmtree(out, ignore_errors=True)
        detail = ""
        if "publish_latency" in run.stats:
            detail = f"publish p50 {run.stats['publish_latency'].p50_ms:,.1f} ms"
        return run.throughput["records_per_s"], detail

    # the minimal loop, a subprocess
    def minimal(self, case: Case) -> tuple[float, str]:
        if case.direction == "consume":
            settings = [f"{k}={v}" for k, v in FETCH_NATIVE.get(case.client, {}).items()]
            result = self._loop(case.client, "consume", [self.filled[case.size], str(case.count)], settings)
            return result["records_per_s"], ""
        topic = f"overhead-minimal-{uuid.uuid4().hex[:8]}"
        with KafkaAdmin(self.bootstrap) as admin:
            admin.create_topic(topic)
            try:
                names = NATIVE_NAMES[case.client]
                settings = [f"{names.get(k, k)}={v}" for k, v in PRODUCER.items()]
                result = self._loop(case.client, "produce", [topic, str(case.size), str(case.count)], settings)
            finally:
                admin.delete_topic(topic)
        return result["records_per_s"], f"publish p50 {result['latency_us']['p50'] / 1000:,.1f} ms"

    def _loop(self, client: str, direction: str, args: list[str], settings: list[str] = ()) -> dict:
        script = HERE / f"minimal_{client.replace('-', '_')}_{direction}.py"
        command = [sys.executable, str(script), self.bootstrap, *args, *(f"-X{s}" for s in settings)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not done.stdout.strip():
            raise RuntimeError(f"{script.name} exited {done.returncode}: {done.stderr.strip()[-400:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if result["records"] < int(args[-1]):
            raise RuntimeError(f"{script.name}: only {result['records']} of {args[-1]} records ({done.stderr.strip()[-200:]})")
        return result

    def fill(self, size: int, records: int) -> None:
        topic = f"overhead-fill-{size}-{uuid.uuid4().hex[:6]}"
        with KafkaAdmin(self.bootstrap) as admin:
            admin.create_topic(topic)
        settings = [f"{k}={v}" for k, v in PRODUCER.items()]
        result = self._loop("confluent", "produce", [topic, str(size), str(records)], settings)
        print(f"filled {topic} with {result['records']:,} records of {size} B", flush=True)
        self.filled[size] = topic

    def drop_fills(self) -> None:
        with contextlib.suppress(Exception), KafkaAdmin(self.bootstrap) as admin:
            for topic in self.filled.values():
                admin.delete_topic(topic)


def measure(bench: Bench, case: Case, repeats: int, warmup: bool) -> None:
    sides = {"kafkabench": bench.kafkabench, "minimal": bench.minimal}

    def once(side: str) -> float | None:
        try:
            rate, detail = sides[side](case)
        except Exception as exc:  # noqa: BLE001 -- one side failing must not lose the other's figures
            message = f"{side}: {type(exc).__name__}: {str(exc).strip()[:300]}"
            case.errors.append(message)
            print(f"    {message}", flush=True)
            return None
        print(f"    {side:10} {rate:>12,.0f} records/s  {detail}", flush=True)
        return rate

    print(f"\n{case.label}: {case.count:,} records per run", flush=True)
    if warmup:
        print("  warm-up (discarded)", flush=True)
        once("kafkabench")
        once("minimal")
    for repeat in range(repeats):
        print(f"  repeat {repeat + 1}/{repeats}", flush=True)
        order = ("kafkabench", "minimal") if repeat % 2 == 0 else ("minimal", "kafkabench")
        rates = {side: once(side) for side in order}
        case.kafkabench.append(rates["kafkabench"])
        case.minimal.append(rates["minimal"])


def fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v]
    return statistics.median(present) if present else None


def print_case(case: Case) -> None:
    repeats = len(case.kafkabench)
    verdict, ratio = case.verdict()
    per_repeat = [a / b if a and b else None for a, b in zip(case.kafkabench, case.minimal)]
    print(f"\n{case.label} ({case.count:,} records per run), records/s")
    print(f"{'':12}" + "".join(f"{'repeat ' + str(i + 1):>12}" for i in range(repeats)) + f"{'median':>12}")
    for name, values in (("kafkabench", case.kafkabench), ("minimal", case.minimal)):
        print(f"{name:12}" + "".join(f"{fmt(v):>12}" for v in values) + f"{fmt(median(values)):>12}")
    print(f"{'ratio':12}" + "".join(f"{fmt(r, '.3f'):>12}" for r in per_repeat) + f"{fmt(ratio, '.3f'):>12}"
          f"   target >= {TARGET[case.client]:.2f}: {verdict}")
    for error in dict.fromkeys(case.errors):
        print(f"  {error}")


def print_summary(cases: list[Case], repeats: int) -> None:
    print(f"\nkafkabench / minimal loop, records/s: median of {repeats} interleaved repeat(s) each, "
          f"ratio = median of the per-repeat ratios")
    print(f"{'client':13}{'size':>7} {'direction':10}{'records':>11}{'kafkabench':>13}{'minimal':>13}{'ratio':>8}{'target':>8}  verdict")
    for case in cases:
        verdict, ratio = case.verdict()
        print(f"{case.client:13}{case.size:>7} {case.direction:10}{case.count:>11,}{fmt(median(case.kafkabench)):>13}"
              f"{fmt(median(case.minimal)):>13}{fmt(ratio, '.3f'):>8}{'>= ' + format(TARGET[case.client], '.2f'):>8}  {verdict}")


def rss_check(bench: Bench, repeats: int) -> list[str]:
    """Peak RSS per count, interleaved (small, large, small, ...), median per count: one peak alone mostly says
    how full librdkafka's queue (queue.buffering.max.messages) happened to get, which is bounded, not a leak."""
    lines = ["", f"peak RSS of kafkabench's confluent produce worker, 100 B records, median of {repeats} interleaved "
             "run(s) per count, " + " ".join(f"{k}={v}" for k, v in PRODUCER.items())]
    peaks: dict[int, list[float]] = {count: [] for count in RSS_COUNTS}
    for repeat in range(repeats):
        for count in RSS_COUNTS if repeat % 2 == 0 else reversed(RSS_COUNTS):
            out = bench.tmp / f"rss-{count}-{repeat}"
            try:
                run = run_throughput(produce_scenario("confluent", 100, count), bench.target, out, SILENT).runs[0]
            except Exception as exc:  # noqa: BLE001
                return lines + [f"  {count:>12,} records: {type(exc).__name__}: {str(exc).strip()[:300]}"]
            finally:
                shutil.rmtree(out, ignore_errors=True)
            peaks[count].append(run.resources["max_rss_mb"])
            print(f"{count:>12,} records: max_rss_mb {peaks[count][-1]:.1f}  "
                  f"({run.throughput['records_per_s']:,.0f} records/s)", flush=True)
    for count, values in peaks.items():
        lines.append(f"  {count:>12,} records: max_rss_mb " + ", ".join(f"{v:.1f}" for v in values)
                     + f"  median {median(values):.1f}")
    small, large = RSS_COUNTS
    ratio = median(peaks[large]) / median(peaks[small])
    return lines + [f"  ratio {large:,} / {small:,} records: {ratio:.2f} (target <= 1.2): {'PASS' if ratio <= 1.2 else 'MISS'}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--sizes", default="100,10240")
    parser.add_argument("--directions", default="produce,consume")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--count", type=int, default=1_000_000, help="records per run for confluent at 100 B; others scale")
    parser.add_argument("--rss", action="store_true")
    parser.add_argument("--quick", action="store_true", help="smoke run: --count 20000 (others scaled alike), one repeat, no warm-up pass")
    parser.add_argument("--bootstrap-servers", "-b")
    args = parser.parse_args()
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    unknown = set(clients) - set(CLIENTS)
    if unknown:
        parser.error(f"--clients: {', '.join(sorted(unknown))} unknown; choose from {', '.join(CLIENTS)}")
    sizes = [int(s) for s in args.sizes.split(",")]
    if not all(0 < s <= 1_000_000 for s in sizes):
        parser.error("--sizes: 1 .. 1000000 bytes (the loops keep the clients' default request and fetch sizes)")
    directions = [d.strip() for d in args.directions.split(",")]
    if set(directions) - {"produce", "consume"}:
        parser.error("--directions: produce and/or consume")
    base, repeats, warmup = (20_000, 1, False) if args.quick else (args.count, args.repeats, True)
    cases = [Case(c, s, d, records_per_run(base, c, s, d)) for c in clients for s in sizes for d in directions]

    with tempfile.TemporaryDirectory(prefix="kafkabench-path-") as tmp, contextlib.ExitStack() as stack:
        if args.bootstrap_servers:
            target = Target.external(args.bootstrap_servers)
        else:
            cluster = stack.enter_context(EmbeddedCluster(brokers=1, directory=Path(tmp) / "cluster"))
            target = Target.embedded(cluster)
        print(f"broker: {target.bootstrap_servers} ({target.kind})", flush=True)
        bench = Bench(target, Path(tmp))
        try:
            for size in sizes:
                needed = [c.count for c in cases if c.size == size and c.direction == "consume"]
                if needed:  # more than any run reads: no reader ever waits at the end of the topic
                    bench.fill(size, int(max(needed) * 1.1) + 1000)
            for case in cases:
                measure(bench, case, repeats, warmup)
            rss = rss_check(bench, repeats) if args.rss else []
        finally:
            bench.drop_fills()
    for case in cases:
        print_case(case)
    print_summary(cases, repeats)
    if args.quick:
        print("--quick: a smoke run; runs this short measure start-up, not speed: the ratios mean nothing")
    print("\n".join(rss))


if __name__ == "__main__":
    main()
