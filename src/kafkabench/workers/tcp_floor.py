"""The `tcp` pseudo-client: the payload once over a raw loopback socket to another process, the floor
every latency is compared with. The server stamps the moment it holds the whole value, replies at once,
and only then checks the bytes; a corrupt value is reported on its next reply or the final status query.
"""

from __future__ import annotations

import hashlib
import platform
import socket
import struct
from typing import Any

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.protocol import Task
from kafkabench.workers.ping_pong import Exchange, ExchangeFailed
from kafkabench.workers.server_process import ServerProcess, serve_main

REQUEST = struct.Struct("!QQ")  # seq, length (0 = status query)
REPLY = struct.Struct("!QQ")  # received_ns, first corrupt seq (0 = none)


class TcpFloor:
    def __init__(self, task: Task, payload: bytes, clock: Clock = monotonic_ns) -> None:
        self.task = task
        self.payload = payload
        self.clock = clock
        self._server: ServerProcess | None = None
        self._sock: socket.socket | None = None

    def version(self) -> str:
        return f"socket (Python {platform.python_version()})"

    def open(self) -> None:
        self._server = ServerProcess(__name__, len(self.payload), self.task.payload_sha256s[0])
        self._sock = socket.create_connection(("127.0.0.1", self._server.port), timeout=self.task.timeout_s)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def exchange(self, seq: int) -> Exchange:
        sent = self.clock()
        try:
            self._sock.sendmsg([REQUEST.pack(seq, len(self.payload)), self.payload])
            received_ns, corrupt = REPLY.unpack(_recv_exact(self._sock, REPLY.size))
        except OSError as exc:
            raise ExchangeFailed("failure", f"message {seq}: {exc}") from exc
        done = self.clock()
        if corrupt:
            raise ExchangeFailed("integrity", f"the tcp server received message {corrupt} corrupted", acked=True)
        return Exchange(sent, received_ns, done)

    def finish(self) -> None:
        self._sock.sendall(REQUEST.pack(0, 0))
        _, corrupt = REPLY.unpack(_recv_exact(self._sock, REPLY.size))
        if corrupt:
            raise ExchangeFailed("integrity", f"the tcp server received message {corrupt} corrupted", acked=True)

    def effective_config(self) -> dict[str, dict[str, Any]]:
        sock = self._sock
        return {"producer": {"TCP_NODELAY": 1, "SO_SNDBUF": sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
                             "SO_RCVBUF": sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)}, "consumer": {}}

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        if self._server is not None:
            self._server.stop()


def _recv_exact(sock: socket.socket, size: int, into: memoryview | None = None) -> bytes:
    buffer = into if into is not None else memoryview(bytearray(size))
    got = 0
    while got < size:
        n = sock.recv_into(buffer[got:size])
        if n == 0:
            raise ConnectionError("connection closed by the peer")
        got += n
    return bytes(buffer[:size]) if into is None else b""


def serve(size: int, sha256: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        print(server.getsockname()[1], flush=True)
        conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffer = memoryview(bytearray(max(size, 1)))
    corrupt = 0
    with conn:
        while True:
            try:
                seq, length = REQUEST.unpack(_recv_exact(conn, REQUEST.size))
            except ConnectionError:
                return
            if length == 0:
                conn.sendall(REPLY.pack(monotonic_ns(), corrupt))
                continue
            if length != size:
                return  # not our client: the peer sees the connection close
            _recv_exact(conn, size, buffer)
            received = monotonic_ns()
            conn.sendall(REPLY.pack(received, corrupt))
            if not corrupt and hashlib.sha256(buffer[:size]).hexdigest() != sha256:
                corrupt = seq


if __name__ == "__main__":
    serve_main(serve)
