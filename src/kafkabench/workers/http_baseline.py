"""The `http` pseudo-client: a keep-alive client POSTing the payload to a real HTTP server in another
process, the way the seed's REST service received camera images. The server stamps the moment it holds
the whole body (the produce-like part ends there), answers at once, and checks the bytes afterwards; a
corrupt body is reported on the next response or the final status request.
"""

from __future__ import annotations

import hashlib
import http.client
import platform
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from kafkabench.core.clock import Clock, monotonic_ns
from kafkabench.core.protocol import Task
from kafkabench.workers.ping_pong import Exchange, ExchangeFailed
from kafkabench.workers.server_process import ServerProcess, serve_main


class HttpBaseline:
    def __init__(self, task: Task, payload: bytes, clock: Clock = monotonic_ns) -> None:
        self.task = task
        self.payload = payload
        self.clock = clock
        self._server: ServerProcess | None = None
        self._conn: http.client.HTTPConnection | None = None

    def version(self) -> str:
        return f"http.client + http.server (Python {platform.python_version()})"

    def open(self) -> None:
        self._server = ServerProcess(__name__, len(self.payload), self.task.payload_sha256s[0])
        self._conn = http.client.HTTPConnection("127.0.0.1", self._server.port, timeout=self.task.timeout_s)

    def exchange(self, seq: int) -> Exchange:
        sent = self.clock()
        try:
            self._conn.request("POST", "/ingest", body=self.payload,
                               headers={"Content-Type": "application/octet-stream", "X-Seq": str(seq)})
            response = self._conn.getresponse()
            response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise ExchangeFailed("failure", f"message {seq}: {exc}") from exc
        done = self.clock()
        self._check(response)
        return Exchange(sent, int(response.getheader("X-Received-Ns")), done)

    def finish(self) -> None:
        self._conn.request("GET", "/status")
        response = self._conn.getresponse()
        response.read()
        self._check(response)

    def _check(self, response: http.client.HTTPResponse) -> None:
        if response.status != 200:
            raise ExchangeFailed("failure", f"the http server answered {response.status} {response.reason}", acked=True)
        corrupt = int(response.getheader("X-Corrupt-Seq", "0"))
        if corrupt:
            raise ExchangeFailed("integrity", f"the http server received message {corrupt} corrupted", acked=True)

    def effective_config(self) -> dict[str, dict[str, Any]]:
        return {"producer": {"protocol": "HTTP/1.1", "keep_alive": True, "method": "POST"}, "consumer": {}}

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._server is not None:
            self._server.stop()


def serve(size: int, sha256: str) -> None:
    corrupt = 0

    class Ingest(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            nonlocal corrupt
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received = monotonic_ns()
            self._answer(received)
            if not corrupt and (len(body) != size or hashlib.sha256(body).hexdigest() != sha256):
                corrupt = int(self.headers.get("X-Seq", "-1"))

        def do_GET(self) -> None:
            self._answer(monotonic_ns())

        def _answer(self, received_ns: int) -> None:
            self.send_response(200)
            self.send_header("X-Received-Ns", str(received_ns))
            self.send_header("X-Corrupt-Seq", str(corrupt))
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line per request would cost more than the request

    with HTTPServer(("127.0.0.1", 0), Ingest) as server:
        print(server.server_address[1], flush=True)
        server.serve_forever()


if __name__ == "__main__":
    serve_main(serve)
