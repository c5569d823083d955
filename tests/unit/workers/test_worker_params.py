"""The real Python worker refuses bad params with one config error before it creates a client, so these
run without a broker (about 0.3 s each: one interpreter start)."""

import subprocess
import sys

import pytest

from kafkabench.core import protocol
from kafkabench.core.protocol import Error, Task

EXIT_TIMEOUT_S = 10  # far above the ~0.3 s a refusal takes; only a hung worker gets near it

CASES = [
    ("produce", {"count": 10, "rate_per_s": 0}, "produce: params.rate_per_s must be > 0 or -1, got 0"),
    ("consume", {"group": "g", "intervl_s": 1}, "consume: params.intervl_s is not a parameter of consume"),
    ("ping_pong", {"count": 5}, "ping_pong: params.count is not a parameter of ping_pong"),
]


@pytest.mark.parametrize("scenario, params, message", CASES, ids=[c[0] for c in CASES])
def test_worker_answers_one_config_error_naming_the_parameter(scenario, params, message):
    # an unreachable broker and a missing payload: the worker must stop at the params, before either matters
    task = Task(scenario=scenario, client="confluent", bootstrap_servers="127.0.0.1:1", topic="t",
                payload_files=["/nonexistent/payload.bin"], timeout_s=1, params=params)
    worker = subprocess.run([sys.executable, "-m", "kafkabench.workers.python_worker"], input=protocol.encode(task),
                            capture_output=True, text=True, timeout=EXIT_TIMEOUT_S)
    lines = worker.stdout.splitlines()
    assert len(lines) == 1, worker.stdout + worker.stderr
    answer = protocol.decode(lines[0])
    assert isinstance(answer, Error) and answer.kind == "config"
    assert answer.message == message
    assert worker.returncode == 2
