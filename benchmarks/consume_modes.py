"""What decides a consume run's records/s? One backlog read again and again, the candidates interleaved.

    .venv/bin/python benchmarks/consume_modes.py [--count 1000000] [--size 100] [--rounds 4]
        [--variants minimal,kafkabench,minimal-nobackoff,kafkabench-nobackoff,evicted,contended]

One embedded broker, one one-partition topic filled once (kafkabench produce, confluent, client defaults), then
each variant reads all of it in a fresh group, in rounds whose order rotates:

- minimal / kafkabench: benchmarks/minimal_confluent_consume.py and `kafkabench consume`, client defaults;
- *-nobackoff: the same with librdkafka's fetch.queue.backoff.ms=10 (default 1000);
- evicted: the minimal loop after the topic's files were dropped from the page cache (posix_fadvise DONTNEED);
- contended: the minimal loop while a busy loop takes one of the machine's cores.

Per read: records/s; kafkabench's `idle_s` and `stalls` (workers/consume.py); the share of the log in the page
cache (mincore), Dirty + Writeback (/proc/meminfo) and the seconds since the fill ended, taken just before it;
the load average. Prints one JSON line per read, then the medians per variant.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import mmap
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.config.properties import parse_overrides
from kafkabench.core.events import SILENT
from kafkabench.labs.throughput.run import run_throughput
from kafkabench.labs.throughput.scenario import ConsumeScenario, ProduceScenario

HERE = Path(__file__).parent
VARIANTS = ("minimal", "kafkabench", "minimal-nobackoff", "kafkabench-nobackoff", "evicted", "contended")
NO_BACKOFF = "fetch.queue.backoff.ms=10"
_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.mmap.restype, _libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                           ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]


def cached_share(directory: Path) -> float:
    """Of the log segments' pages under `directory`, the share in the page cache (mincore)."""
    resident = pages = 0
    for path in directory.rglob("*.log"):
        size = path.stat().st_size
        if not size:
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            address = _libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
            count = -(-size // mmap.PAGESIZE)
            vector = ctypes.create_string_buffer(count)
            _libc.mincore(address, size, vector)
            _libc.munmap(address, size)
        finally:
            os.close(fd)
        resident, pages = resident + sum(b & 1 for b in vector.raw), pages + count
    return resident / pages if pages else 0.0


def evict(directory: Path) -> None:
    os.sync()
    for path in directory.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)


def dirty_mb() -> int:
    fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return sum(int(fields[key].split()[0]) for key in ("Dirty", "Writeback")) // 1024


def read(variant: str, target: Target, topic: str, count: int, work: Path) -> dict:
    if variant.startswith("kafkabench"):
        overrides = parse_overrides([f"librdkafka:{NO_BACKOFF}"] if variant.endswith("nobackoff") else [])
        run = run_throughput(ConsumeScenario(topic=topic, count=count, overrides=overrides), target,
                             work / uuid.uuid4().hex[:8], SILENT).runs[0]
        return {"records_per_s": run.throughput["records_per_s"], "idle_s": run.timings.get("idle_s"),
                "stalls": run.counters.get("stalls")}
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if variant == "contended" else None
    try:
        extra = [f"-X{NO_BACKOFF}"] if variant.endswith("nobackoff") else []
        done = subprocess.run([sys.executable, str(HERE / "minimal_confluent_consume.py"), target.bootstrap_servers,
                               topic, str(count), *extra], capture_output=True, text=True, check=True, timeout=600)
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    return {"records_per_s": json.loads(done.stdout.strip().splitlines()[-1])["records_per_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    variants = args.variants.split(",")
    results: dict[str, list[float]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory(prefix="kafkabench-modes-") as tmp, \
            EmbeddedCluster(brokers=1, directory=Path(tmp) / "cluster") as cluster:
        work, target = Path(tmp), Target.embedded(cluster)
        topic = f"modes-{uuid.uuid4().hex[:8]}"
        run_throughput(ProduceScenario(topic=topic, size=args.size, count=args.count), target, work / "fill", SILENT)
        filled = time.monotonic()
        for round_ in range(args.rounds):
            for variant in variants[round_ % len(variants):] + variants[:round_ % len(variants)]:
                if variant == "evicted":
                    evict(cluster.directory)
                before = {"cached": round(cached_share(cluster.directory), 3), "dirty_mb": dirty_mb(),
                          "since_fill_s": round(time.monotonic() - filled, 1)}
                figures = read(variant, target, topic, args.count, work)
                results[variant].append(figures["records_per_s"])
                print(json.dumps({"variant": variant, **figures, **before,
                                  "load": os.getloadavg()[0]}), flush=True)
    print(f"\n{args.count:,} records of {args.size} B, {args.rounds} rounds; records/s")
    for variant, rates in results.items():
        print(f"{variant:>22}  median {statistics.median(rates):>12,.0f}  min {min(rates):>12,.0f}  max {max(rates):>12,.0f}")


if __name__ == "__main__":
    main()
