"""Whether a cluster kafkabench started has room for a workload's partitions, asked before anything runs.

Each partition replica keeps its active segment's file open on its broker and maps its two index files into memory,
so a broker holds one open file and two memory maps per replica beside its own (sockets, jars, logs: HEADROOM). A
broker whose open-file limit, or a machine whose `vm.max_map_count`, is below that fails mid-run ("Too many open
files", or a JVM that cannot map), long after the run began. On a cluster kafkabench does not own, its brokers'
limits are not known here and nothing is checked.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from kafkabench.cluster.faults import FaultsUnavailable
from kafkabench.cluster.target import Target

HEADROOM = 1_000  # files and maps a broker holds beside its partitions' own
MAX_MAP_COUNT = Path("/proc/sys/vm/max_map_count")


def room_problem(partitions: int, replication_factor: int, target: Target, what: str) -> str | None:
    """One line saying why the cluster cannot hold `partitions` more partitions of `replication_factor`, or None."""
    try:
        pids = target.faults.broker_pids()
    except FaultsUnavailable:
        return None
    if not pids:
        return None
    per_broker = math.ceil(partitions * replication_factor / len(pids))
    files = min((found for pid in pids.values() if (found := _open_files(pid)) is not None), default=None)
    if files is not None and per_broker + HEADROOM > files:
        return (f"{what}: {partitions:,} partitions put {per_broker:,} replicas on each broker, one open file each, "
                f"and its limit is {files:,} open files: at most {max(0, files - HEADROOM):,} replicas a broker (raise "
                "`ulimit -n` before the cluster starts, or run fewer partitions)")
    maps = _max_map_count()
    if maps is not None and 2 * per_broker + HEADROOM > maps:
        return (f"{what}: {partitions:,} partitions put {per_broker:,} replicas on each broker, two memory maps each, "
                f"and vm.max_map_count is {maps:,}: at most {max(0, (maps - HEADROOM) // 2):,} replicas a broker "
                "(raise vm.max_map_count, or run fewer partitions)")
    return None


def _open_files(pid: int) -> int | None:
    """The process's soft limit of open files, None when it cannot be read or is unlimited."""
    try:
        limits = Path(f"/proc/{pid}/limits").read_text()
    except OSError:
        return None
    found = re.search(r"^Max open files\s+(\d+)", limits, re.MULTILINE)
    return int(found[1]) if found else None


def _max_map_count() -> int | None:
    try:
        return int(MAX_MAP_COUNT.read_text())
    except (OSError, ValueError):
        return None
