from kafkabench.on_ray.local_cluster import _env, _last_error, session_dir

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


def test_head_and_nodes_agree_on_token_authentication(monkeypatch):
    """Left unset, a head that finds ~/.ray/auth_token turns it on, and nodes started after it cannot join."""
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    assert _env()["RAY_AUTH_MODE"] == "disabled"
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    assert _env()["RAY_AUTH_MODE"] == "token"
