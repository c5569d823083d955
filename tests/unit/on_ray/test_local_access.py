import json
import os
import stat
from pathlib import Path

import pytest

from kafkabench.on_ray.local_access import (STATE_FILE, KnownCluster, driver_auth_env, is_loopback, known_cluster,
                                            refusal, same_address, started_here, write_token)

ADDRESS = "127.0.0.1:45395"


def test_a_token_is_new_each_time_and_readable_by_its_user_only(tmp_path):
    (tmp_path / "auth_token").write_text("an earlier cluster's")
    (tmp_path / "auth_token").chmod(0o644)
    first = write_token(tmp_path).read_text()
    path = write_token(tmp_path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(path.read_text()) == 64 and path.read_text() != first


@pytest.mark.parametrize("given, known, same", [
    ("127.0.0.1:45395", ADDRESS, True),
    ("localhost:45395", ADDRESS, True),
    ("127.0.1.1:45395", ADDRESS, True),  # loopback, all of it
    (" 127.0.0.1:45395 ", ADDRESS, True),
    ("127.0.0.1:45396", ADDRESS, False),
    ("192.0.2.2:45395", ADDRESS, False),  # another machine's, or this one's network address: not where it listens
    ("ray://127.0.0.1:45395", ADDRESS, False),
    ("127.0.0.1", ADDRESS, False),
    ("", ADDRESS, False),
    ("10.0.0.5:6379", "10.0.0.5:6379", True),
])
def test_an_address_names_the_local_cluster_by_its_port_and_a_loopback_host(given, known, same):
    assert same_address(given, known) is same


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("::1", True), ("::ffff:127.0.0.1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("*", False), ("192.0.2.2", False), ("fd00::2", False),
])
def test_loopback_is_told_apart_from_every_interface(host, loopback):
    assert is_loopback(host) is loopback


def test_a_driver_finds_the_token_of_the_cluster_at_its_address_only(tmp_path):
    state = {"address": ADDRESS, "token_file": str(tmp_path / "auth_token"), "loopback": True, "processes": []}
    (tmp_path / STATE_FILE).write_text(json.dumps(state))
    found = known_cluster("localhost:45395", tmp_path)
    assert found == KnownCluster(ADDRESS, tmp_path, str(tmp_path / "auth_token"), loopback=True)
    assert known_cluster("127.0.0.1:6379", tmp_path) is None
    assert known_cluster(ADDRESS, tmp_path / "elsewhere") is None
    (tmp_path / STATE_FILE).write_text("{not json")
    assert known_cluster(ADDRESS, tmp_path) is None


def test_a_cluster_started_in_this_process_is_found_in_any_directory(tmp_path):
    cluster = KnownCluster("127.0.0.1:40001", tmp_path / "a-benchmarks-own", "/x/auth_token", loopback=True)
    started_here(cluster)
    try:
        assert known_cluster("127.0.0.1:40001", tmp_path) == cluster
    finally:
        started_here(None, cluster.address)
    assert known_cluster("127.0.0.1:40001", tmp_path) is None


def test_the_drivers_environment_takes_the_clusters_token_over_any_other():
    known = KnownCluster(ADDRESS, Path("/state/ray"), "/state/ray/auth_token", loopback=True)
    assert driver_auth_env(known) == {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": "/state/ray/auth_token",
                                      "RAY_AUTH_TOKEN": None}
    assert driver_auth_env(KnownCluster(ADDRESS, Path("/state/ray"))) == {}  # started --insecure
    assert driver_auth_env(None) == {}  # not ours: the user's settings as they are


def test_a_refused_driver_is_told_in_one_line_which_token_it_gave(tmp_path):
    nowhere = tmp_path / "no-default-token"
    (tmp_path / "home_auth_token").write_text("y" * 64)  # a ~/.ray/auth_token
    lines = {
        "none": refusal(ADDRESS, {}, None, nowhere),
        "mode without token": refusal(ADDRESS, {"RAY_AUTH_MODE": "token"}, None, nowhere),
        "env": refusal(ADDRESS, {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "x" * 64}, None, nowhere),
        "path": refusal(ADDRESS, {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": "/t"}, None, nowhere),
        "stale": refusal(ADDRESS, {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": "/t"},
                         KnownCluster(ADDRESS, tmp_path, "/t", True), nowhere),
        "default": refusal(ADDRESS, {"RAY_AUTH_MODE": "token"}, None, tmp_path / "home_auth_token"),
    }
    assert all(line.startswith(f"Ray at {ADDRESS} refused this driver: it needs the cluster's token (")
               and "\n" not in line and "x" * 64 not in line for line in lines.values()), lines
    assert "(this driver gave none;" in lines["none"] and "(this driver gave none;" in lines["mode without token"]
    assert "RAY_AUTH_TOKEN's was refused" in lines["env"]
    assert "the one in /t was refused" in lines["path"]
    assert f"started in {tmp_path} was refused: another Ray listens there now" in lines["stale"]
    assert "(~/.ray/auth_token's was refused;" in lines["default"]
