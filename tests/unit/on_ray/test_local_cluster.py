import os

import psutil

from kafkabench.on_ray.local_cluster import RayProcess, _env, _last_error, session_dir

# what Ray appends under its --temp-dir for its longest socket path
RAY_SOCKET_TAIL = "session_2026-11-27_02-54-20_730008_13025/sockets/plasma_store"


def test_rays_sockets_fit_a_unix_socket_path_however_deep_the_cluster_directory(tmp_path):
    deep = tmp_path.joinpath(*["a-long-directory-name"] * 8)
    socket = session_dir(deep) / RAY_SOCKET_TAIL
    assert len(str(socket).encode()) <= 107
    assert session_dir(deep) != session_dir(tmp_path), "two clusters' sessions must not share a directory"
    assert session_dir(deep) == session_dir(deep)


def test_a_start_error_names_rays_reason(tmp_path):
    log = tmp_path / "head.log"
    log.write_text("Usage stats collection is disabled.\nTraceback (most recent call last):\n"
                   "OSError: validate_socket_filename failed: AF_UNIX path length cannot exceed 107 bytes: /x\n")
    assert _last_error(str(log)) == ": OSError: validate_socket_filename failed: AF_UNIX path length cannot exceed 107 bytes: /x"
    assert _last_error(str(tmp_path / "missing.log")) == ""


def test_head_and_nodes_share_the_clusters_own_token_and_no_other(monkeypatch):
    """Left unset, a head that finds ~/.ray/auth_token turns authentication on, and nodes started after it cannot join;
    a RAY_AUTH_TOKEN of the user's would be read before the cluster's file."""
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN", "the-users-own")
    env = _env("/state/ray/auth_token")
    assert (env["RAY_AUTH_MODE"], env["RAY_AUTH_TOKEN_PATH"]) == ("token", "/state/ray/auth_token")
    assert "RAY_AUTH_TOKEN" not in env
    assert env["RAY_enable_worker_prestart"] == "0" and env["RAY_USAGE_STATS_ENABLED"] == "0"


def test_insecure_or_the_users_own_mode_opts_out_of_the_clusters_token(monkeypatch):
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    assert _env(insecure=True)["RAY_AUTH_MODE"] == "disabled"
    assert _env()["RAY_AUTH_MODE"] == "disabled"  # no token made: never left for a head to decide alone
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", "/home/me/token")
    env = _env()
    assert (env["RAY_AUTH_MODE"], env["RAY_AUTH_TOKEN_PATH"]) == ("token", "/home/me/token")
    assert _env(insecure=True)["RAY_AUTH_MODE"] == "disabled"  # the command line over the environment


def test_a_ray_process_an_older_kafkabench_saved_is_still_known_while_it_runs():
    saved = {"role": "head", "pid": os.getpid(), "create_time": psutil.Process().create_time(), "log": "head.log"}
    assert RayProcess.of(saved).alive()  # this test process stands in for the head
    assert not RayProcess.of({**saved, "create_time": saved["create_time"] - 1}).alive()
