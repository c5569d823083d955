"""What checking consumers and a copier costs: 10 million input messages, in seconds and memory.

    .venv/bin/python benchmarks/consumer_checker_cost.py [--count 10000000] [--partitions 6] [--chunk 100000]
        [--consumers 3] [--seed 4]

This process writes a synthetic run into a temporary directory: an input of --count ids of producer 0 spread
round-robin over the partitions, one raw file per partition as a consumer's fetches deliver it; --consumers
processed histories (`Processed.create`, each process's share of the messages, with messages planted processed zero
times and twice); and a copier's output: the input with copies planted missing, doubled and swapped.

A child process then does what the lab does after a consumer or copier cell, and only that is measured: read the
input back (`Input.read`), sum the histories and count zero / once / more (`processed`); then judge the output
against the input with the exact checker (`copier_checker`, feed, confirm the misses with a second read, `copied`).
It reports seconds per step and peak RSS (VmHWM, the interpreter and numpy included; MB = 10^6 bytes); the parent
checks every count against the planted truth. Targets: each check <= 30 s, peak RSS <= 300 MB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RECORD = np.dtype([("producer", "<u2"), ("sequence", "<u4"), ("partition", "<i4"), ("offset", "<i8")])
PLANTS = {"zero": 300, "twice": 200, "lost": 100, "duplicated": 80, "reordered": 40}
TARGET_S, TARGET_MB = 30, 300


def build(args, out: Path) -> None:
    from kafkabench.core.delivery_processed import Processed

    rng = np.random.default_rng(args.seed)
    sequence = np.arange(args.count, dtype=np.int64)
    spaced = rng.choice(args.count // 16, sum(PLANTS.values()), replace=False) * 16  # plants well apart
    site = dict(zip(PLANTS, np.split(spaced, np.cumsum(list(PLANTS.values()))[:-1])))
    shares = np.array_split(sequence, args.consumers)
    for number, share in enumerate(shares):
        processed = Processed.create(out / f"consumer-{number}", 0, args.count)
        processed.counts[share] = 1
        processed.counts.flush()
    _patch(out, shares, site["zero"], 0)
    _patch(out, shares, site["twice"], 2)
    for q in range(args.partitions):
        mine = sequence[q::args.partitions]
        _write(out / f"input-{q}.bin", mine, q)
        output = mine.copy()
        swap = np.flatnonzero(np.isin(output, site["reordered"]))
        output[swap], output[swap + 1] = output[swap + 1], output[swap].copy()
        output = output[~np.isin(output, site["lost"])]
        doubled = np.flatnonzero(np.isin(output, site["duplicated"]))
        output = np.insert(output, doubled + 5, output[doubled])
        _write(out / f"output-{q}.bin", output, q)


def _owner(shares, at) -> int:
    return next(number for number, share in enumerate(shares) if share[0] <= at <= share[-1])


def _patch(out: Path, shares, sites, count: int) -> None:
    from kafkabench.core.delivery_processed import COUNTS

    for at in sites.tolist():
        counts = np.load(out / f"consumer-{_owner(shares, at)}" / COUNTS, mmap_mode="r+")
        counts[at] = count
        counts.flush()


def _write(path: Path, sequences: np.ndarray, partition: int) -> None:
    records = np.empty(len(sequences), RECORD)
    records["producer"], records["sequence"], records["partition"] = 0, sequences, partition
    records["offset"] = np.arange(len(sequences))
    records.tofile(path)


def read_back(directory: Path, name: str, partitions: int, chunk: int):
    from kafkabench.labs.delivery.checker import ReadChunk

    files = [(directory / f"{name}-{q}.bin").open("rb") for q in range(partitions)]
    per_fetch = max(chunk // partitions, 1)
    try:
        while files:
            parts = []
            for source in list(files):
                records = np.fromfile(source, RECORD, per_fetch)
                if len(records) < per_fetch:
                    files.remove(source)
                    source.close()
                parts.append(records)
            records = np.concatenate(parts)
            yield ReadChunk(*(records[field] for field in RECORD.names))
    finally:
        for source in files:
            source.close()


def child(args) -> None:
    from kafkabench.core.delivery_processed import Processed
    from kafkabench.labs.delivery import consumer_checks as checks

    directory, figures = Path(args.child), {}
    started = time.perf_counter()
    given = checks.Input.read(0, args.count, read_back(directory, "input", args.partitions, args.chunk))
    consumers = [Processed.open(directory / f"consumer-{n}") for n in range(args.consumers)]
    counts, _ = checks.processed(consumers, given)
    figures |= {"processed_s": time.perf_counter() - started, "processed": counts, "processed_peak_b": peak_bytes()}
    del consumers
    started = time.perf_counter()
    checker = checks.copier_checker(0, given)
    for chunk in read_back(directory, "output", args.partitions, args.chunk):
        checker.feed(chunk)
    spans = checker.missing().spans()
    checker.confirm(chunk for chunk in read_back(directory, "output", args.partitions, args.chunk)
                    if np.isin(chunk.partition, [q for q, _, _ in spans]).any())
    figures |= {"copier_s": time.perf_counter() - started, "copied": checks.copied(checker.result()),
                "peak_b": peak_bytes()}
    print(json.dumps(figures))


def peak_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--consumers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory(prefix="kafkabench-consumer-checker-") as work:
        started = time.perf_counter()
        build(args, Path(work))
        print(f"built {args.count:,} input messages, {args.consumers} histories, an output in "
              f"{time.perf_counter() - started:.1f} s")
        done = subprocess.run([sys.executable, __file__, *sys.argv[1:], "--child", work], capture_output=True,
                              text=True, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    p, c = figures["processed"], figures["copied"]
    truth = {"processed_zero": PLANTS["zero"], "more_than_once": PLANTS["twice"], "input": args.count}
    copier_truth = {"lost": PLANTS["lost"], "duplicated": PLANTS["duplicated"], "reordered": PLANTS["reordered"],
                    "copied": args.count - PLANTS["lost"]}
    wrong = {**{k: (p[k], v) for k, v in truth.items() if p[k] != v},
             **{k: (c[k], v) for k, v in copier_truth.items() if c[k] != v}}
    peak_mb = figures["peak_b"] / 1e6
    print(f"consumers: {args.count:,} input messages, {args.consumers} histories: {figures['processed_s']:.2f} s; "
          f"copier: output judged against the input: {figures['copier_s']:.2f} s; peak RSS {peak_mb:.1f} MB "
          f"(targets <= {TARGET_S} s each, <= {TARGET_MB} MB: "
          f"{'met' if max(figures['processed_s'], figures['copier_s']) <= TARGET_S and peak_mb <= TARGET_MB else 'MISSED'})")
    print(f"counts against the planted truth: {'all right' if not wrong else wrong}")
    if wrong:
        sys.exit(1)


if __name__ == "__main__":
    main()
