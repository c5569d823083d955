"""The broker as a variable: which Kafka version the embedded cluster runs, with which broker settings and which JVM
options, checked before any broker starts (a setting that version does not know, an option the JVM refuses, a
version kafkabench pins no jars for: one line naming it).

A variant is what a plan's profile (`broker:`, `jvm:`, `kafka_version:`) and `kafkabench cluster up`
(`--broker-config`, `--jvm-option`, `--kafka-version`) say; a cluster started with it records it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from kafkabench.cluster.artifacts import DEFAULT_KAFKA_VERSION, packaged_manifest
from kafkabench.cluster.broker_config import RESERVED
from kafkabench.cluster.java import Java, find_java
from kafkabench.errors import ConfigError

# settings the broker takes under a prefix of its own besides its ConfigDef's names
OPEN_PREFIXES = ("listener.name.",)
JVM_CHECK_TIMEOUT_S = 30


@dataclass(frozen=True)
class BrokerVariant:
    kafka_version: str = DEFAULT_KAFKA_VERSION
    settings: tuple[tuple[str, str], ...] = ()  # broker settings (server.properties names), sorted
    jvm_options: tuple[str, ...] = ()  # after kafkabench's own, so they win (-Xmx4g, -XX:G1HeapRegionSize=4m)

    @classmethod
    def of(cls, kafka_version: str | None = None, settings: dict[str, str] | None = None,
           jvm_options: Sequence[str] = ()) -> BrokerVariant:
        return cls(kafka_version or DEFAULT_KAFKA_VERSION, tuple(sorted((settings or {}).items())), tuple(jvm_options))

    @property
    def is_default(self) -> bool:
        return self == BrokerVariant()

    def describe(self) -> str:
        parts = [f"Kafka {self.kafka_version}", *(f"{k}={v}" for k, v in self.settings),
                 *self.jvm_options]
        return ", ".join(parts)

    def check(self, java: Java | None = None, where: str = "") -> None:
        """Refuse, before any broker starts, what this version or the JVM would: ConfigError naming it."""
        prefix = f"{where}: " if where else ""
        try:
            manifest = packaged_manifest(self.kafka_version)
        except ConfigError as exc:
            raise ConfigError(f"{prefix}{exc}") from None
        for key, _ in self.settings:
            if key in RESERVED:
                raise ConfigError(f"{prefix}broker setting {key}: set by kafkabench to wire the embedded cluster; it "
                                  "cannot be overridden")
            if manifest.broker_settings and key not in manifest.broker_settings and not key.startswith(OPEN_PREFIXES):
                raise ConfigError(f"{prefix}broker setting {key}: Kafka {self.kafka_version} has no such setting "
                                  "(names as in server.properties, e.g. num.io.threads)")
        if self.jvm_options:
            refusal = jvm_refusal(java or find_java(), self.jvm_options)
            if refusal:
                raise ConfigError(f"{prefix}JVM option(s) {' '.join(self.jvm_options)}: the JVM refuses them: {refusal}")


def jvm_refusal(java: Java, options: tuple[str, ...]) -> str | None:
    """What `java OPTIONS -version` says when it refuses the options; None when it starts."""
    try:
        done = subprocess.run([str(java.executable), *options, "-version"], capture_output=True, text=True,
                              timeout=JVM_CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"java {' '.join(options)} -version did not answer in {JVM_CHECK_TIMEOUT_S} s"
    if done.returncode == 0:
        return None
    said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    specific = [line for line in said if not line.startswith("Error: ")]  # not "Could not create the Java VM"
    return (specific or said or [f"exit code {done.returncode}"])[0]
