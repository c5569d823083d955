"""A node's clocks against the driver's: the lowest round trip of many pings, the node's reading taken as made
halfway through it, so the offset is known within half that trip (its bound).

Pings go as UDP datagrams to a small echo in the node's actor (`ClockEcho`): a round trip is then the network's and
two syscalls', some 50 us on one machine, where a Ray call costs a millisecond or more on a busy one. A node whose
echo cannot be reached (a firewall between it and the driver) is pinged through Ray calls instead, a looser bound.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

PINGS = 50
REPLY_WAIT_S = 0.5  # a datagram not answered by then is taken as lost
_READING = struct.Struct(">qqQ")  # wall ns, monotonic ns, the ping's number echoed


@dataclass(frozen=True)
class Clock:
    """A node's clocks against this process's: add `offset_ns` to this process's clock to get the node's, give or
    take `bound_ns` (half the lowest round trip). `via`: how it was pinged (udp | ray)."""

    monotonic_offset_ns: int
    wall_offset_ns: int
    bound_ns: int
    via: str = "udp"

    @classmethod
    def measure(cls, read: Callable[[], tuple[int, int]], pings: int = PINGS, via: str = "udp",
                wall: Callable[[], int] = time.time_ns, monotonic: Callable[[], int] = time.monotonic_ns) -> Clock:
        """From `pings` readings of the node's (wall, monotonic) clocks, the one with the lowest round trip,
        taken as read halfway through it."""
        best = None
        for _ in range(pings):
            wall0, mono0 = wall(), monotonic()
            node_wall, node_mono = read()
            wall1, mono1 = wall(), monotonic()
            trip = mono1 - mono0
            if best is None or trip < best[0]:
                best = (trip, node_mono - (mono0 + mono1) // 2, node_wall - (wall0 + wall1) // 2)
        trip, mono_offset, wall_offset = best
        return cls(mono_offset, wall_offset, trip // 2, via)


class ClockEcho:
    """On the node: answers each datagram with this node's (wall, monotonic) clocks, read back to back, until closed.
    Bound to the node's own address (the one the driver pings), never to every interface."""

    def __init__(self, host: str) -> None:
        self._socket = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind((host, 0))
        self.port = self._socket.getsockname()[1]
        threading.Thread(target=self._serve, name="clock echo", daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):  # closed
            while True:
                ping, sender = self._socket.recvfrom(64)
                if len(ping) == 8:
                    self._socket.sendto(_READING.pack(time.time_ns(), time.monotonic_ns(),
                                                      int.from_bytes(ping, "big")), sender)

    def close(self) -> None:
        self._socket.close()


class UdpClockReader:
    """On the driver: `read()` pings a node's ClockEcho once; raises TimeoutError when no answer comes in time."""

    def __init__(self, address: str, port: int) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.connect((address, port))
        self._socket.settimeout(REPLY_WAIT_S)
        self._count = 0

    def __enter__(self) -> UdpClockReader:
        return self

    def __exit__(self, *exc_info) -> None:
        self._socket.close()

    def read(self) -> tuple[int, int]:
        self._count += 1
        self._socket.send(self._count.to_bytes(8, "big"))
        while True:
            try:
                wall, mono, echoed = _READING.unpack(self._socket.recv(64))
            except (socket.timeout, ConnectionRefusedError, struct.error) as exc:
                raise TimeoutError(f"no clock reading within {REPLY_WAIT_S:g} s") from exc
            if echoed == self._count:  # a late answer to an earlier ping is not this one
                return wall, mono
