"""What checking a delivery run costs: 10 million messages against their histories, in seconds and memory.

    .venv/bin/python benchmarks/delivery_checker_cost.py [--producers 4] [--per-producer 2500000]
        [--partitions 6] [--chunk 100000] [--seed 4]

This process builds a synthetic run (producer p sends sequence s to partition (s + p) % partitions) with
anomalies planted at random, well apart, in known numbers per partition: acknowledged records dropped
(lost), copies inserted a few records later (duplicated), two records of one producer swapped (one
reorder each), failed and unknown sends present or absent, acknowledgements pointing one offset off
(offset mismatch), a few strays. It saves the histories (`History.save`) and the read-back, one raw file
per partition as a consumer's fetches would deliver it, into a temporary directory.

A child process then does what the lab will do, and only that is measured: load the histories, feed the
read-back chunk by chunk (one fetch of each partition in turn per chunk), take the verdict, then
confirm the misses with a second read of their spans, then (`--transactions N`) the transactional checks as if
the run had been sent in transactions of N (aborted reads, torn transactions, a read_uncommitted pass). It reports seconds per step and peak RSS (VmHWM,
the interpreter and numpy included; MB = 10^6 bytes); the parent checks every count against the planted
truth and fails if one differs. Targets: first read + verdict <= 30 s, peak RSS <= 200 MB.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RECORD = np.dtype([("producer", "<u2"), ("sequence", "<u4"), ("partition", "<i4"), ("offset", "<i8")])
PLANTS = {"lost": 200, "duplicated": 100, "reordered": 50, "failed_present": 40, "failed_absent": 20,
          "unknown_present": 30, "unknown_absent": 10, "mismatch": 20}  # per partition
WINDOW = 64  # plants sit in windows this far apart, so that no two touch
STRAYS = 3
FOREIGN_PER_CHUNK = 7
TARGET_S, TARGET_MB = 30, 200


def partition_log(q: int, args, rng, histories):
    """One partition's records with its plants, and the histories' outcomes for its ids."""
    producer = np.concatenate([np.full(len(range((q - p) % args.partitions, args.per_producer, args.partitions)), p,
                                       np.uint16) for p in range(args.producers)])
    sequence = np.concatenate([np.arange((q - p) % args.partitions, args.per_producer, args.partitions,
                                         dtype=np.int64) for p in range(args.producers)])
    order = np.argsort(sequence, kind="stable")  # one send per step: the log is in step order
    producer, sequence = producer[order], sequence[order]
    sites = rng.choice(len(sequence) // WINDOW - 1, sum(PLANTS.values()), replace=False) * WINDOW
    site = dict(zip(PLANTS, np.split(sites, np.cumsum(list(PLANTS.values()))[:-1])))
    for i in site["reordered"].tolist():
        j = i + 1 + int(np.flatnonzero(producer[i + 1:i + WINDOW] == producer[i])[0])
        sequence[[i, j]] = sequence[[j, i]]
    planted = {name: (producer[at], sequence[at]) for name, at in site.items()}  # ids, before copies shift positions
    copy_at = site["duplicated"] + 11
    producer = np.insert(producer, copy_at, producer[site["duplicated"]])
    sequence = np.insert(sequence, copy_at, sequence[site["duplicated"]])
    original = np.insert(np.ones(len(order), bool), copy_at, False)
    offset = np.arange(len(sequence), dtype=np.int64)
    record_outcomes(q, producer[original], sequence[original], offset[original], planted, histories)
    absent = np.zeros(len(sequence), bool)
    shifted = np.flatnonzero(original)  # position of the i-th original record
    for name in ("lost", "failed_absent", "unknown_absent"):
        absent[shifted[site[name]]] = True
    keep = ~absent
    return producer[keep], sequence[keep], offset[keep]


def record_outcomes(q, producer, sequence, offset, planted, histories):
    for p, history in enumerate(histories):
        mine = producer == p
        history.record_acks(sequence[mine], q, offset[mine])
    for name, error in (("failed_present", "NOT_ENOUGH_REPLICAS"), ("failed_absent", "REQUEST_TIMED_OUT")):
        for p, s in zip(*planted[name]):
            histories[p].record_failure(int(s), error)
    for name in ("unknown_present", "unknown_absent"):
        for p, s in zip(*planted[name]):
            histories[p].status[s], histories[p].partition[s], histories[p].offset[s] = 0, -1, -1
    for p, s in zip(*planted["mismatch"]):
        histories[p].offset[s] += 1


def build(args, out: Path) -> dict:
    from kafkabench.core.delivery_history import History

    rng = np.random.default_rng(args.seed)
    histories = [History(p, args.per_producer) for p in range(args.producers)]
    for q in range(args.partitions):
        producer, sequence, offset = partition_log(q, args, rng, histories)
        records = np.empty(len(sequence) + (STRAYS if q == 0 else 0), RECORD)
        records["producer"][:len(sequence)], records["sequence"][:len(sequence)] = producer, sequence
        records["offset"][:len(sequence)], records["partition"] = offset, q
        if q == 0:  # strays: a producer no history describes, after the log
            records[len(sequence):] = [(args.producers + 1, i, 0, offset[-1] + 1 + i) for i in range(STRAYS)]
        records.tofile(out / f"partition-{q}.bin")
    started = time.perf_counter()
    for history in histories:
        history.save(out / f"producer-{history.producer}.npz")
    save_s = time.perf_counter() - started
    return {"save_s": save_s, "history_mb": sum(f.stat().st_size for f in out.glob("producer-*.npz")) / 1e6}


def expected(args, chunks: int) -> dict:
    n, parts = args.producers * args.per_producer, args.partitions
    plants = {name: count * parts for name, count in PLANTS.items()}
    failed = plants["failed_present"] + plants["failed_absent"]
    unknown = plants["unknown_present"] + plants["unknown_absent"]
    absent = plants["lost"] + plants["failed_absent"] + plants["unknown_absent"]
    return dict(sent=n, acknowledged=n - failed - unknown, failed=failed, unknown=unknown,
                read=n - absent + plants["duplicated"] + STRAYS, foreign=FOREIGN_PER_CHUNK * chunks, strays=STRAYS,
                distinct_read=n - absent, lost=plants["lost"], unconfirmed_misses=0, loss_confirmed=True,
                duplicated=plants["duplicated"], duplicated_ids=plants["duplicated"], reordered=plants["reordered"],
                delivered_despite_error=plants["failed_present"], unknown_found=plants["unknown_present"],
                unknown_not_found=plants["unknown_absent"], offset_mismatch=plants["mismatch"])


def read_back(directory: Path, partitions: int, chunk: int, spans=None):
    """Chunks of about `chunk` records, each a dict of field arrays: a fetch of each partition in turn, as a
    consumer's poll returns them. With `spans`, only the records of those partitions within their offsets.
    Every chunk is decoded into the same buffers, as a consumer can: the checker keeps no chunk."""
    wanted = {q: (first, last) for q, first, last in spans} if spans is not None else None
    files = {q: (directory / f"partition-{q}.bin").open("rb") for q in range(partitions)
             if wanted is None or q in wanted}
    per_fetch = max(chunk // max(len(files), 1), 1)
    buffers = {name: np.empty(per_fetch * len(files), RECORD[name]) for name in RECORD.names}
    try:
        while files:
            filled = 0
            for q, source in list(files.items()):
                records = np.fromfile(source, RECORD, per_fetch)
                if len(records) < per_fetch:
                    files.pop(q).close()
                if wanted is not None:
                    records = records[_within(records, wanted)]
                for name, buffer in buffers.items():
                    buffer[filled:filled + len(records)] = records[name]
                filled += len(records)
            yield {name: buffer[:filled] for name, buffer in buffers.items()}
    finally:
        for source in files.values():
            source.close()


def _within(records, wanted) -> np.ndarray:
    keep = np.zeros(len(records), bool)
    for q, (first, last) in wanted.items():
        end = np.iinfo(np.int64).max if last is None else last
        keep |= (records["partition"] == q) & (records["offset"] >= first) & (records["offset"] <= end)
    return keep


def as_chunk(records, foreign: int):
    from kafkabench.labs.delivery.checker import ReadChunk

    return ReadChunk(*(records[name] for name in RECORD.names), foreign=foreign)


def child(args) -> None:
    from kafkabench.labs.delivery.checker import Checker
    from kafkabench.core.delivery_history import History

    directory, figures = Path(args.child), {"imports_b": peak_bytes()}
    started = time.perf_counter()
    histories = [History.load(directory / f"producer-{p}.npz") for p in range(args.producers)]
    figures |= {"load_s": time.perf_counter() - started, "loaded_b": peak_bytes(),
                "histories_b": sum(history.nbytes for history in histories)}
    started, chunks = time.perf_counter(), 0
    checker = Checker(histories, idempotent=True)
    for records in read_back(directory, args.partitions, args.chunk):
        checker.feed(as_chunk(records, FOREIGN_PER_CHUNK))
        chunks += 1
    first = checker.result()
    figures |= {"check_s": time.perf_counter() - started, "chunks": chunks, "first_read_lost": first.lost,
                "checker_b": checker.nbytes}
    started = time.perf_counter()
    spans = checker.missing().spans()
    checker.confirm(as_chunk(records, 0) for records in read_back(directory, args.partitions, args.chunk, spans))
    verdict = checker.result()
    figures |= {"confirm_s": time.perf_counter() - started, "peak_b": peak_bytes(), "verdict": verdict.to_dict()}
    if args.transactions:  # the transactional checks on the same run, as if sent in transactions of that size
        from kafkabench.labs.delivery.transactions import check as check_transactions

        started = time.perf_counter()
        ids = [f"producer-{p}" for p in range(args.producers)]
        uncommitted = (as_chunk(records, 0) for records in read_back(directory, args.partitions, args.chunk))
        checked = check_transactions(checker, args.transactions, ids, uncommitted)
        figures |= {"transactions_s": time.perf_counter() - started, "transactions_peak_b": peak_bytes(),
                    "committed_transactions": checked["committed_transactions"]}
    print(json.dumps(figures))


def peak_bytes() -> int:
    """This process's peak RSS. On Linux from VmHWM: ru_maxrss survives exec, so a child would report the
    parent's peak (the parent held the whole synthetic run)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--producers", type=int, default=4)
    parser.add_argument("--per-producer", type=int, default=2_500_000)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--transactions", type=int, default=100,
                        help="also time the transactional checks, as if sent in transactions of this many; 0: not")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    with tempfile.TemporaryDirectory(prefix="delivery-checker-") as tmp:
        started = time.perf_counter()
        built = build(args, Path(tmp))
        print(f"built {args.producers} x {args.per_producer:,} messages over {args.partitions} partitions in "
              f"{time.perf_counter() - started:.1f} s; histories {built['history_mb']:.1f} MB on disk "
              f"(saved in {built['save_s']:.1f} s)")
        command = [sys.executable, __file__, "--child", tmp] + [f"--{k.replace('_', '-')}={v}" for k, v in
                                                                 vars(args).items() if k != "child"]
        figures = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    report(args, figures)


def report(args, figures: dict) -> None:
    from kafkabench.labs.delivery.checker import Verdict
    from kafkabench.labs.delivery.verdicts import verdict_lines

    verdict, truth = figures["verdict"], expected(args, figures["chunks"])
    wrong = {name: (verdict[name], value) for name, value in truth.items() if verdict[name] != value}
    sent, mb = truth["sent"], 1e6
    print(f"load histories      {figures['load_s']:6.2f} s  ({figures['histories_b'] / mb:.1f} MB in memory, "
          f"{figures['histories_b'] / sent:.1f} B/message)")
    print(f"first read, verdict {figures['check_s']:6.2f} s  ({figures['chunks']} chunks of ~{args.chunk:,}; "
          f"target <= {TARGET_S} s)")
    print(f"confirm misses      {figures['confirm_s']:6.2f} s  (a second read of the spans of "
          f"{figures['first_read_lost']:,} misses)")
    rest = figures["peak_b"] - figures["loaded_b"] - figures["checker_b"]
    print(f"peak RSS            {figures['peak_b'] / mb:6.1f} MB (target <= {TARGET_MB} MB): interpreter and numpy "
          f"{figures['imports_b'] / mb:.1f}, histories {(figures['loaded_b'] - figures['imports_b']) / mb:.1f}, "
          f"checker state {figures['checker_b'] / mb:.1f}, chunks and temporaries {rest / mb:.1f}")
    if "transactions_s" in figures:
        print(f"transactional checks {figures['transactions_s']:5.2f} s  (aborted reads, torn transactions over "
              f"{figures['committed_transactions']:,} transactions, and a read_uncommitted pass; peak RSS then "
              f"{figures['transactions_peak_b'] / mb:.1f} MB)")
    print("counts: " + ", ".join(f"{name} {verdict[name]:,}" for name in truth if not isinstance(verdict[name], bool)))
    for line in verdict_lines(Verdict(**{field.name: verdict[field.name] for field in dataclasses.fields(Verdict)})):
        print(f"  {line}")
    if wrong:
        raise SystemExit(f"counts differ from the planted truth (got, expected): {wrong}")
    if figures["check_s"] > TARGET_S or figures["peak_b"] > TARGET_MB * mb:
        raise SystemExit("over target")
    print("every count equals the planted truth; within targets")


if __name__ == "__main__":
    main()
