"""Regenerate the Java client's setting names, defaults and types shipped in the package (developers only).

    python tools/update_client_configs.py

Builds the Java worker against the pinned Kafka jars (needs a JDK) and writes what its `--describe` mode
reports to src/kafkabench/config/java_client_configs.json: the vocabulary every client's settings are
checked and translated against, read from the library itself instead of typed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from kafkabench.cluster.artifacts import JarCache
from kafkabench.cluster.java import find_java
from kafkabench.workers.java_build import describe_java_client

OUTPUT = Path(__file__).resolve().parents[1] / "src/kafkabench/config/java_client_configs.json"


def main() -> None:
    described = describe_java_client(find_java(), JarCache().ensure())
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(described, indent=1, sort_keys=True) + "\n")
    counts = ", ".join(f"{role} {len(described[role])}" for role in ("producer", "consumer", "admin", "topic"))
    print(f"wrote {OUTPUT}: Kafka client {described['client_version']}, settings: {counts}")


if __name__ == "__main__":
    main()
