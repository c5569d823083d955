"""A cluster's feature levels (KIP-584), set with Apache Kafka's own FeatureCommand (kafka-features.sh), which speaks
UpdateFeatures: neither librdkafka's admin API nor kafka-python's has it. Used to run the delivery lab's
transactional cells under each `transaction.version` (KIP-890's transactions V2 at 2, the epoch kept across
transactions below it), to put the level back after, and to finalize a rolling upgrade (operations/upgrade.py)."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.java import tool_command
from kafkabench.connection import Connection
from kafkabench.errors import KafkabenchError

TOOL = "org.apache.kafka.tools.FeatureCommand"


class FeatureChangeFailed(KafkabenchError):
    """The cluster did not take the feature level."""


def set_level(connection: Connection, name: str, level: int, timeout_s: float) -> int:
    """Upgrade or downgrade feature `name` to `level`; the level it had before."""
    with KafkaAdmin(connection, timeout_s=timeout_s) as admin:
        before = admin.feature_level(name) or 0
    if before != level:
        _feature_command(connection, ["upgrade" if level > before else "downgrade", "--feature", f"{name}={level}"],
                         f"{name}={level}", timeout_s)
    return before


def finalize(connection: Connection, release: str, timeout_s: float) -> tuple[int | None, int | None]:
    """Every feature upgraded to the levels of `release` (major.minor: "4.4"), as Kafka's upgrade notes finalize a
    rolling upgrade (`kafka-features upgrade --release-version`); metadata.version's level before and after."""
    with KafkaAdmin(connection, timeout_s=timeout_s) as admin:
        before = admin.feature_level("metadata.version")
    _feature_command(connection, ["upgrade", "--release-version", release], f"the features of release {release}",
                     timeout_s)
    with KafkaAdmin(connection, timeout_s=timeout_s) as admin:
        return before, admin.feature_level("metadata.version")


def _feature_command(connection: Connection, arguments: list[str], what: str, timeout_s: float) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".properties", prefix="kafkabench-features-") as config:
        config.write("".join(f"{key}={value}\n" for key, value in connection.settings.items()))
        config.flush()
        command = [*tool_command(TOOL), "--bootstrap-server", connection.bootstrap_servers, "--command-config",
                   config.name, *arguments]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s + 60,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise FeatureChangeFailed(f"setting {what} took over {timeout_s + 60:g} s") from exc
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise FeatureChangeFailed(f"the cluster refused {what}: {last[0][:200]}")


@contextlib.contextmanager
def level_during(connection: Connection, name: str, level: int | None, timeout_s: float) -> Iterator[None]:
    """Feature `name` at `level` inside the block (None: left alone), put back as it was after, whatever happened."""
    if level is None:
        yield
        return
    before = set_level(connection, name, level, timeout_s)
    try:
        yield
    finally:
        if before != level:
            set_level(connection, name, before, timeout_s)
