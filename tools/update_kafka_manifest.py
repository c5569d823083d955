"""Regenerate the pinned Kafka jar manifests shipped in the package (developers only; needs Maven and a JDK).

    python tools/update_kafka_manifest.py 4.1.2 4.4.0

Maven resolves the runtime closure of the broker (`kafka_2.13`) and Apache's command-line tools
(`kafka-tools`, without the Connect runtime that only its plugin-path command uses) plus the slf4j
binding the binary distribution adds. Each jar is hashed here and pinned by sha256; at run time
kafkabench downloads exactly these files from Maven Central and verifies them, no Maven involved.
The broker's own settings and their defaults (its ConfigDef, read from those jars) go into the manifest too, so a
setting Kafka does not know is refused before any broker starts, and a tune knows where the broker starts from. Writes src/kafkabench/cluster/manifests/kafka-VERSION.json.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

MANIFESTS = Path(__file__).resolve().parents[1] / "src/kafkabench/cluster/manifests"
AGENTS = [{  # the brokers' -javaagent: Prometheus's JMX exporter
    "coordinates": "io.prometheus.jmx:jmx_prometheus_javaagent:1.0.1",
    "sha256": "7d61f737fd661610ccc14aea79764faa1ea94a340cbc8f0029b3d2edea3d80c1",
    "size": 2886599,
}]
CONFIG_NAMES = """public class BrokerConfigNames {
    public static void main(String[] args) {
        java.util.Map<String, Object> defaults = kafka.server.KafkaConfig.configDef().defaultValues();
        for (String name : kafka.server.KafkaConfig.configDef().names()) {
            Object value = defaults.get(name);
            System.out.println(name + "\t" + (value == null ? "" : value instanceof java.util.List<?> list
                ? String.join(",", list.stream().map(String::valueOf).toList()) : String.valueOf(value)));
        }
    }
}
"""
LOG4J_VERSION = "2.25.3"  # the log4j-core version Kafka's own poms pull in; the binding must match

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkabench</groupId><artifactId>manifest</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>{v}</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>{v}</version>
      <exclusions>
        <exclusion><groupId>org.apache.kafka</groupId><artifactId>connect-runtime</artifactId></exclusion>
        <exclusion><groupId>com.fasterxml.jackson.jakarta.rs</groupId><artifactId>*</artifactId></exclusion>
      </exclusions>
    </dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>{log4j}</version></dependency>
  </dependencies>
</project>
"""


def resolve(version: str) -> tuple[list[dict], dict[str, str]]:
    """The jars, and the broker settings their KafkaConfig knows with their defaults ("" for none)."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "pom.xml").write_text(POM.format(v=version, log4j=LOG4J_VERSION))
        listing = Path(tmp, "deps.txt")
        subprocess.run(
            ["mvn", "-q", "-B", "dependency:list", "-DincludeScope=runtime",
             "-DoutputAbsoluteArtifactFilename=true", f"-DoutputFile={listing}"],
            cwd=tmp, check=True,
        )
        jars, paths = [], []
        for line in listing.read_text().splitlines():
            parts = line.strip().split(":")
            if len(parts) < 6 or parts[2] != "jar":
                continue
            group, artifact, _, ver, _scope, path = parts[:5] + [":".join(parts[5:])]
            data = Path(path).read_bytes()
            paths.append(path)
            jars.append({
                "coordinates": f"{group}:{artifact}:{ver}",
                "sha256": hashlib.sha256(data).hexdigest(),
                "size": len(data),
            })
        source = Path(tmp, "BrokerConfigNames.java")
        source.write_text(CONFIG_NAMES)
        printed = subprocess.run(["java", "-cp", ":".join(paths), str(source)], check=True, capture_output=True,
                                 text=True).stdout.splitlines()
    settings = dict(line.split("\t", 1) for line in printed if "\t" in line)
    return sorted(jars, key=lambda jar: jar["coordinates"]), dict(sorted(settings.items()))


def main() -> None:
    for version in sys.argv[1:] or ["4.1.2"]:
        jars, names = resolve(version)
        manifest = {
            "kafka_version": version,
            "scala_version": "2.13",
            "repository": "https://repo1.maven.org/maven2",
            "jars": jars,
            "agents": AGENTS,
            "broker_settings": names,
        }
        path = MANIFESTS / f"kafka-{version}.json"
        path.write_text(json.dumps(manifest, indent=1) + "\n")
        print(f"{path}: {len(jars)} jars, {sum(j['size'] for j in jars) / 1e6:.1f} MB, {len(names)} broker settings")


if __name__ == "__main__":
    main()
