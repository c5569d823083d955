import pytest

from kafkabench.labs.latency.scenario import LatencyScenario
from kafkabench.labs.latency.session import _round_sizes, latency_settings, load_payload
from kafkabench.errors import ConfigError
from kafkabench.config.properties import parse_overrides


@pytest.mark.parametrize(("count", "rounds", "sizes"), [(200, 10, [20] * 10), (7, 3, [3, 2, 2]), (2, 10, [1, 1]), (5, 1, [5])])
def test_rounds_split_the_count_exactly(count, rounds, sizes):
    assert _round_sizes(count, rounds) == sizes


def test_generated_payload_is_deterministic_and_incompressible(tmp_path):
    import zlib

    for name in "ab":
        load_payload(LatencyScenario(size=100_000)).write(tmp_path / name)
    a, b = (tmp_path / "a").read_bytes(), (tmp_path / "b").read_bytes()
    assert a == b and len(a) == 100_000
    assert len(zlib.compress(a)) > 99_000


def test_missing_payload_file(tmp_path):
    with pytest.raises(ConfigError, match="payload file .*nope.jpg does not exist"):
        load_payload(LatencyScenario(payload=tmp_path / "nope.jpg"))


def test_lab_defaults_and_user_acks():
    settings = latency_settings(LatencyScenario(acks="all", overrides=parse_overrides(["linger.ms=2"])), 1000)
    assert settings.values("producer")["acks"] == "all"
    assert settings.values("producer")["linger.ms"] == "2"
    assert settings.values("consumer")["enable.auto.commit"] == "false"
