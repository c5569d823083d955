"""Who can use the Ray cluster `kafkabench ray up` starts: a driver of this machine that holds the cluster's token.

Left to Ray, that cluster would take any driver that reaches its port, from any host, and run its code (the
ShadowRay exposure). Two locks close it:

- Token authentication (Ray's `RAY_AUTH_MODE=token`): a token made per cluster, in a file of mode 0600 in the
  cluster's directory, read by the head and nodes alike through `RAY_AUTH_TOKEN_PATH`. kafkabench's driver finds
  it through the cluster's state file when its `--ray-address` is that cluster's, so nobody copies it.
- Loopback: `ray start` takes `--node-ip-address 127.0.0.1` for "this machine" and puts the machine's network
  address in its place (`resolve_ip_for_localhost`, so that other machines could join); its GCS, raylets and workers
  then listen on every interface. Left as given, they listen on 127.0.0.1 only (each binds loopback when its node's
  address is 127.0.0.1). So the cluster's `ray start`s run Ray's own CLI with that one step left out
  (`python -m kafkabench.on_ray.local_access start ...`), and the driver connects with it left out too, else it
  would look for the GCS at the machine's network address, where nothing listens.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import secrets
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

import platformdirs

from kafkabench.errors import KafkabenchError

STATE_FILE = "ray.json"
TOKEN_FILE = "auth_token"
AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")  # Ray's own: the mode, the token, its file
PROBE_CONNECT_S = 2  # a local GCS accepts at once; a port nobody listens on refuses at once


def default_ray_dir() -> Path:
    return Path(os.environ.get("KAFKABENCH_RAY_DIR") or Path(platformdirs.user_state_dir("kafkabench")) / "ray")


# ---- the cluster's side -------------------------------------------------------------------------------------------

def write_token(directory: Path) -> Path:
    """A new token (256 random bits, as Ray's own generator makes), readable by this user only."""
    path = directory / TOKEN_FILE
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        os.fchmod(file.fileno(), 0o600)  # a file left by an earlier cluster keeps its mode through O_CREAT
        file.write(secrets.token_hex(32))
    return path


def cluster_auth_env(environ: Mapping[str, str], token_file: str, insecure: bool) -> dict[str, str]:
    """The environment of the cluster's processes as far as authentication goes. Head and nodes must agree: left
    unset, a head that finds ~/.ray/auth_token turns token authentication on, and nodes, not reading it, cannot join.
    So: off with --insecure; as the user set it when RAY_AUTH_MODE is set; else the cluster's own token and only it
    (a RAY_AUTH_TOKEN of the user's, which Ray reads before the file, would take its place)."""
    env = dict(environ)
    if insecure or (not token_file and "RAY_AUTH_MODE" not in environ):
        env["RAY_AUTH_MODE"] = "disabled"
    elif token_file:
        env.pop("RAY_AUTH_TOKEN", None)
        env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=token_file)
    return env


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and the IPv4-mapped form gRPC listens on (::ffff:127.0.0.1); `localhost` too."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def ray_cli_on_loopback(arguments: list[str]) -> None:
    """Ray's `ray` command, taking 127.0.0.1 for what it says (see the module's docstring); it exits the process."""
    from ray.scripts.scripts import main

    _keep_loopback()
    sys.argv = ["ray", *arguments]
    main()


def _keep_loopback() -> Callable[[], None]:
    """Ray in this process keeps 127.0.0.1 as given; returns the undo. A Ray without the step is left as it is (`ray up`
    then says which ports are open beyond loopback)."""
    from ray._private import services

    resolve = getattr(services, "resolve_ip_for_localhost", None)
    if resolve is None:
        return lambda: None
    services.resolve_ip_for_localhost = lambda host: host
    return lambda: setattr(services, "resolve_ip_for_localhost", resolve)


# ---- the driver's side --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KnownCluster:
    """A cluster `kafkabench ray up` started, as its state file describes it."""

    address: str
    directory: Path
    token_file: str = ""  # none: started --insecure or with the user's own RAY_AUTH_MODE
    loopback: bool = False  # its processes listen on 127.0.0.1 only (clusters of earlier kafkabench did not)


def same_address(given: str, known: str) -> bool:
    """`given` (a --ray-address) names `known` (HOST:PORT): the same port, and the same host or both loopback."""
    given_host, given_port = _split(given)
    known_host, known_port = _split(known)
    if not given_port or given_port != known_port:
        return False
    return given_host == known_host or (is_loopback(given_host) and is_loopback(known_host))


def _split(address: str) -> tuple[str, str]:
    host, _, port = address.strip().rpartition(":")
    return host.strip("[]"), port if port.isdigit() else ""


_STARTED_HERE: dict[str, KnownCluster] = {}  # by address: clusters this process started, in whatever directory


def started_here(cluster: KnownCluster | None, address: str = "") -> None:
    """A LocalRayCluster this process started (a test's, a benchmark's, in a directory of its own), for its drivers
    to find; None: stopped."""
    if cluster is None:
        _STARTED_HERE.pop(address, None)
    else:
        _STARTED_HERE[cluster.address] = cluster


def known_cluster(address: str, directory: Path | None = None) -> KnownCluster | None:
    """The cluster at `address` if `kafkabench ray up` started it in `directory` (default: default_ray_dir()), or a
    LocalRayCluster of this process did."""
    if found := next((c for known, c in _STARTED_HERE.items() if same_address(address, known)), None):
        return found
    directory = directory or default_ray_dir()
    try:
        state = json.loads((directory / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or not same_address(address, str(state.get("address", ""))):
        return None
    return KnownCluster(state["address"], directory, state.get("token_file") or "", bool(state.get("loopback")))


def driver_auth_env(known: KnownCluster | None) -> dict[str, str | None]:
    """What a driver's environment needs to reach `known` (None: a variable to remove): its token, whatever token
    settings the user has, since no other token can be taken there."""
    if known is None or not known.token_file:
        return {}
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": known.token_file, "RAY_AUTH_TOKEN": None}


def refusal(address: str, environ: Mapping[str, str], known: KnownCluster | None,
            default_token: Path | None = None) -> str:
    """The one line for a driver the cluster at `address` refused: which token it gave, and how it gives the right one.
    `environ` is the driver's as Ray read it: Ray sends a token only when RAY_AUTH_MODE is `token`, the first it finds
    of RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH's file and `default_token` (~/.ray/auth_token)."""
    default_token = default_token or Path.home() / ".ray" / "auth_token"
    path = environ.get("RAY_AUTH_TOKEN_PATH")
    if environ.get("RAY_AUTH_MODE") != "token":
        given = "this driver gave none"
    elif environ.get("RAY_AUTH_TOKEN"):
        given = "RAY_AUTH_TOKEN's was refused"
    elif path and known is not None and path == known.token_file:  # its state outlived it
        given = (f"the one of the cluster `kafkabench ray up` started in {known.directory} was refused: another Ray "
                 "listens there now")
    elif path:
        given = f"the one in {path} was refused"
    elif default_token.exists():
        given = "~/.ray/auth_token's was refused"
    else:
        given = "this driver gave none"
    return (f"Ray at {address} refused this driver: it needs the cluster's token ({given}; kafkabench finds the token "
            "of a cluster `kafkabench ray up` started in KAFKABENCH_RAY_DIR or its default directory; for another, "
            "set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH to a file holding its token)")


class DriverAccess:
    """A driver's way into the Ray cluster at `address`: when `kafkabench ray up` started it, with its token, and kept
    on loopback while connecting; a refusal of its token in one line. `connect(init)` calls `init(address=...)`
    (ray.init); `close()`, after ray.shutdown, puts the environment back."""

    def __init__(self, address: str, directory: Path | None = None) -> None:
        self.known = known_cluster(address, directory)
        self.address = self.known.address if self.known else address  # the address the cluster recorded
        self._saved: dict[str, str | None] = {}

    def connect(self, init: Callable[..., object]) -> None:
        from ray.exceptions import AuthenticationError

        self._set_env(driver_auth_env(self.known))
        try:
            if _token_refused(self.address):
                raise KafkabenchError(refusal(self.address, os.environ, self.known))
            undo = _keep_loopback() if self.known and self.known.loopback else (lambda: None)
            try:
                init(address=self.address)
            finally:
                undo()
        except AuthenticationError:  # RAY_AUTH_MODE=token and no token anywhere: Ray says so before it connects
            message = refusal(self.address, os.environ, self.known)
            self.close()
            raise KafkabenchError(message) from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._saved:
            for name, value in self._saved.items():
                _set(name, value)
            self._saved = {}
            _reload_ray_auth()

    def _set_env(self, changes: dict[str, str | None]) -> None:
        if not changes:
            return
        self._saved = {name: os.environ.get(name) for name in changes}
        for name, value in changes.items():
            _set(name, value)
        _reload_ray_auth()


def _set(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _reload_ray_auth() -> None:
    """Ray reads its auth mode and token once per process: again, after they changed (the config first, in the order
    of Ray's own test helper, so that a gRPC thread still draining never finds token mode without a token)."""
    try:
        from ray._raylet import AuthenticationTokenLoader, Config
    except ImportError:  # a Ray without them reads both when it first needs them, after they were set
        return
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _token_refused(address: str) -> bool:
    """The GCS at `address` refuses this process's token, or its lack of one: asked in milliseconds, where ray.init
    retries for 20 s, logging a warning a second, and ends in a ConnectionError that does not say why. Not asked when
    nothing listens there: the question would wait 40 s, and ray.init says soon enough that it cannot connect. Raises
    Ray's AuthenticationError when token mode is on and this process has no token at all."""
    from ray.exceptions import AuthenticationError

    try:  # Ray's internals (ray>=2.60): without them, ray.init alone says what went wrong
        from ray._private.authentication.authentication_token_setup import ensure_token_if_auth_enabled
        from ray._raylet import GcsClient
    except ImportError:
        return False
    # token mode without a token: ray.init's own check raises AuthenticationError, where a GcsClient would abort the
    # process (a failed RAY_CHECK)
    ensure_token_if_auth_enabled(None, create_token_if_missing=False)
    host, port = _split(address)
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_CONNECT_S).close()
    except (OSError, ValueError):
        return False
    with _stderr_silenced():  # Ray's C++ client logs the refusal on the process's stderr before raising it
        try:
            GcsClient(address=address)
        except AuthenticationError:
            return True
        except Exception:  # anything else is ray.init's to report
            return False
    return False


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


if __name__ == "__main__":
    ray_cli_on_loopback(sys.argv[1:])
