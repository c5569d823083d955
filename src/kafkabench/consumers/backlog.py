"""What a share group has yet to process, per partition, from the histories: the records the input producer had
acknowledged that no member process has processed. A share group commits no offsets (its members acknowledge records,
and the broker keeps its own start offset per partition, which no admin API of librdkafka's reads), so this is its
lag: what GroupWatch looks at instead of committed offsets."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kafkabench.core.delivery_history import ACKNOWLEDGED, History, HistoryFileError
from kafkabench.core.delivery_processed import Processed


class HistoryBacklog:
    """GroupLag's looks (`behind`, `unstable`, `close`), answered from the cell's histories: the producer's in
    `cell_dir/producer`, each member process's in `cell_dir/consumer-*`."""

    def __init__(self, cell_dir: Path, partitions: int) -> None:
        self.cell_dir, self.partitions = Path(cell_dir), partitions

    def behind(self) -> dict[int, int]:
        produced = History.open_mapped(self.cell_dir / "producer")
        done = np.zeros(len(produced.status), bool)
        for directory in self.cell_dir.glob("consumer-*"):
            try:
                done |= Processed.open(directory).counts > 0
            except HistoryFileError:
                continue  # a member still creating its files has processed nothing
        waiting = produced.partition[(produced.status == ACKNOWLEDGED) & ~done]
        return dict(enumerate(np.bincount(waiting, minlength=self.partitions).tolist()))

    def unstable(self) -> str | None:
        return None

    def close(self) -> None:
        pass
