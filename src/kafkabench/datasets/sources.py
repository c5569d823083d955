"""Where a compression run's rows come from: the generator, the user's CSV, or a directory of files."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from kafkabench.datasets.purchases import FIELDS, purchases
from kafkabench.errors import ConfigError


@dataclass(frozen=True)
class Dataset:
    name: str
    kind: str  # "purchases", "csv" (all fields strings), "files" (values are the files' bytes)
    fields: tuple[str, ...]
    path: Path | None = None

    def rows(self, count: int) -> Iterator:
        if self.kind == "purchases":
            return purchases(count)
        if self.kind == "csv":
            return _csv_rows(self.path, count)
        return _file_rows(self.path, count)


def open_dataset(spec: str) -> Dataset:
    """`purchases`, `FILE.csv` or `images DIR` (also `images:DIR`)."""
    if spec == "purchases":
        return Dataset("purchases", "purchases", FIELDS)
    if spec.startswith(("images ", "images:")):
        directory = Path(spec[7:].strip())
        files = sorted(p for p in directory.glob("*") if p.is_file()) if directory.is_dir() else []
        if not files:
            raise ConfigError(f"--dataset {spec!r}: {directory} is not a directory with files in it")
        return Dataset(f"images {directory.name}", "files", ("bytes",), directory)
    path = Path(spec)
    if path.suffix.lower() != ".csv":
        raise ConfigError(f"--dataset {spec!r}: expected purchases, a .csv file or 'images DIR'")
    try:
        with path.open(newline="", encoding="utf-8") as f:
            header = next(csv.reader(f))
    except FileNotFoundError:
        raise ConfigError(f"--dataset: {path} does not exist") from None
    except StopIteration:
        raise ConfigError(f"--dataset: {path} is empty (a header row is needed)") from None
    return Dataset(path.name, "csv", tuple(h.strip() for h in header), path)


def _csv_rows(path: Path, count: int) -> Iterator[dict]:
    """The file's rows, from the top again if it has fewer than `count`."""
    produced = 0
    while produced < count:
        with path.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                yield row
                produced += 1
                if produced == count:
                    return
        if produced == 0:
            raise ConfigError(f"--dataset: {path} has a header but no rows")


def _file_rows(directory: Path, count: int) -> Iterator[bytes]:
    """Each file once, up to `count`: repeating a file would hand a codec duplicates to compress away."""
    files = sorted(p for p in directory.glob("*") if p.is_file())
    for path in files[:count]:
        yield path.read_bytes()
