"""A value size no Kafka record can carry, from a shell: one line and a non-zero exit before anything is made or
reached (the broker named here refuses every connection), never a traceback."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

COMMANDS = [["latency"], ["max-rate"], ["backlog"], ["tune", "latency"], ["produce", "--count", "1"]]
# size -> what the line says: above what librdkafka takes (1e9, the default client's refusal) / above any 32-bit size
SIZES = {"2000000000": 'rejects max.request.size=2000001024: Configuration property "message.max.bytes"',
         "1" + "0" * 39: "--size: must be at most 2147482623 bytes: Kafka's record sizes are 32-bit"}


@pytest.mark.parametrize("size", SIZES, ids=["2e9", "40-digits"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_size_kafka_cannot_carry_is_one_line_before_anything_starts(tmp_path, command, size):
    out = tmp_path / "out"
    # the timeout only ends a hang: a refusal is an import and a check, no payload made and no broker asked
    done = subprocess.run([sys.executable, "-m", "kafkabench", *command, "--size", size, "-b", "127.0.0.1:1",
                           "--out", str(out)], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
                          env={**os.environ, "KAFKABENCH_CLUSTER_DIR": str(tmp_path / "clusters")})
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and SIZES[size] in line, line
    assert not out.exists()
