"""Is the generator + encoder ever the bottleneck? Its rows/s against the producer's, in one run.

    .venv/bin/python benchmarks/compression_pipeline.py [--rows 300000]

One embedded broker; the compression lab with JSON, Protobuf and Avro, codecs none and lz4 (the
producer's fastest cells). For each format: the rows/s at which rows were generated and encoded (the
pools included), the producer's rows/s replaying them, and their ratio (target >= 5); then the time the
records file took to write, which is disk speed, shown apart. The lab generates and encodes before any
cell runs, so even a slower generator never slows a measured producer; this says whether it could feed
one live.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT
from kafkabench.labs.compression.run import run_compression
from kafkabench.labs.compression.scenario import CompressionScenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000)
    rows = parser.parse_args().rows
    with tempfile.TemporaryDirectory(prefix="kafkabench-bench-") as tmp, \
            EmbeddedCluster(brokers=1, directory=Path(tmp) / "cluster") as cluster:
        scenario = CompressionScenario(rows=rows, codecs=["none", "lz4"])
        document = run_compression(scenario, Target.embedded(cluster), Path(tmp) / "out", SILENT)
    encode, write = document.params["encode_rows_per_s"], document.params["records_file_write_s"]
    print(f"{rows} purchase rows; rows/s of generator+encoder vs the producer (confluent), ratio target >= 5")
    print(f"{'format':9} {'codec':6} {'generate+encode':>16} {'producer':>10} {'ratio':>6} {'file write s':>13}")
    for run in sorted(document.runs, key=lambda r: (r.params["format"], r.params["codec"])):
        produced = run.counters["rows"] / run.duration_s
        fmt = run.params["format"]
        print(f"{fmt:9} {run.params['codec']:6} {encode[fmt]:>16,.0f} {produced:>10,.0f} {encode[fmt] / produced:>6.2f} "
              f"{write[fmt]:>13.2f}")


if __name__ == "__main__":
    main()
