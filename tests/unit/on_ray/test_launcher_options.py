import pytest

from kafkabench.core.launcher import LOCAL_WORKERS, Launcher
from kafkabench.errors import ConfigError


def test_the_local_launcher_is_the_default_and_an_unknown_one_is_refused():
    with Launcher().open() as launcher:
        assert launcher is LOCAL_WORKERS
    with pytest.raises(ConfigError, match="--launcher k8s: expected local or ray"):
        Launcher("k8s")


def test_ray_needs_an_address_and_a_known_spread(monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ConfigError, match="needs --ray-address HOST:PORT"):
        with Launcher("ray").open():
            pass
    with pytest.raises(ConfigError, match="--spread wide: expected one of spread, pack"):
        with Launcher("ray", "127.0.0.1:1", "wide").open():
            pass
