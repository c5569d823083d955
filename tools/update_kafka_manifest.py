"""Regenerate the pinned Kafka jar manifest shipped in the package (developers only; needs Maven).

    python tools/update_kafka_manifest.py 4.1.2

Maven resolves the runtime closure of the broker (`kafka_2.13`) and Apache's command-line tools
(`kafka-tools`, without the Connect runtime that only its plugin-path command uses) plus the slf4j
binding the binary distribution adds. Each jar is hashed here and pinned by sha256; at run time
kafkabench downloads exactly these files from Maven Central and verifies them, no Maven involved.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

MANIFEST = Path(__file__).resolve().parents[1] / "src/kafkabench/cluster/kafka-manifest.json"
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


def resolve(version: str) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "pom.xml").write_text(POM.format(v=version, log4j=LOG4J_VERSION))
        listing = Path(tmp, "deps.txt")
        subprocess.run(
            ["mvn", "-q", "-B", "dependency:list", "-DincludeScope=runtime",
             "-DoutputAbsoluteArtifactFilename=true", f"-DoutputFile={listing}"],
            cwd=tmp, check=True,
        )
        jars = []
        for line in listing.read_text().splitlines():
            parts = line.strip().split(":")
            if len(parts) < 6 or parts[2] != "jar":
                continue
            group, artifact, _, ver, _scope, path = parts[:5] + [":".join(parts[5:])]
            data = Path(path).read_bytes()
            jars.append({
                "coordinates": f"{group}:{artifact}:{ver}",
                "sha256": hashlib.sha256(data).hexdigest(),
                "size": len(data),
            })
    return sorted(jars, key=lambda jar: jar["coordinates"])


def main() -> None:
    version = sys.argv[1] if len(sys.argv) > 1 else "4.1.2"
    manifest = {
        "kafka_version": version,
        "scala_version": "2.13",
        "repository": "https://repo1.maven.org/maven2",
        "jars": resolve(version),
    }
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{MANIFEST}: {len(manifest['jars'])} jars, {sum(j['size'] for j in manifest['jars']) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
