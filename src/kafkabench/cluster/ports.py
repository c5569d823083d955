"""Loopback ports for embedded nodes."""

from __future__ import annotations

import contextlib
import errno
import socket

from kafkabench.errors import ClusterError


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` distinct ports the kernel reports free right now (all held open until all are chosen)."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(sock.getsockname()[1])
        return ports


def client_port(port: int | None, brokers: int) -> int | None:
    """Broker 1's client port as given (the others follow it), refused in one line when the brokers' ports cannot all
    be TCP ports; 0 is "any free port", as a socket takes it: None, like none given."""
    if port is not None and not 0 <= port <= 65536 - max(brokers, 1):
        raise ClusterError(f"--port {port}: broker 1's client port, the others after it, so 1 to "
                           f"{65536 - max(brokers, 1)} for {max(brokers, 1)} broker(s); 0 or none: free ports")
    return port or None


def require_free(port: int, host: str = "127.0.0.1") -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            state = "is in use" if exc.errno == errno.EADDRINUSE else "cannot be bound"
            raise ClusterError(
                f"port {port} on {host} {state} ({exc.strerror}); choose another with --port or omit it to use free ports"
            ) from exc


def accepts(port: int, host: str = "127.0.0.1", timeout_s: float = 1.0) -> bool:
    """Something listens on the port and takes a connection."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False
