"""The delay helper: holds each packet an NFQUEUE queue hands it for a delay (with jitter) and then lets it go.

This kernel has no netem, so delay is done in user space: an iptables rule (`-j NFQUEUE --queue-bypass`) in the
receiving namespace's INPUT hook hands packets to this process through Netfilter's own library
(libnetfilter_queue, Debian's `libnetfilter-queue1`, called through ctypes), which gets only each packet's id (no
payload copied; segmentation-offloaded packets whole) and gives the verdict ACCEPT once the packet's time came.
Packets leave in the order they came (a jittered packet never overtakes the one before it, as on a real link),
so TCP sees a slower link, not a reordering one. The receiving side is the place: a packet there was already
released by its sender's socket (it crossed a veth), so the sender's TCP small-queue limit does not throttle it as
it would in the sender's own OUTPUT hook.

Run as `python -m kafkabench.cluster.network.delayer QUEUE DELAY_MS JITTER_MS [RECORD]` inside the namespace (see
`impairments.Impairments.delay`); it prints "ready" once bound and runs until it is terminated, or until its
network's RECORD is gone: a network removed by a process that could not stop it (one that crashed meanwhile) must
not leave it holding its queue number, which the next network on the same subnet takes again.
"""

from __future__ import annotations

import collections
import ctypes
import ctypes.util
import random
import select
import signal
import socket
import struct
import sys
import time
from pathlib import Path

NF_ACCEPT = 1
NFQNL_COPY_META = 1
NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_GSO = 1, 4
QUEUE_LENGTH = 100_000
RECEIVE_BUFFER = 16 << 20
RECORD_CHECK_S = 1.0  # how often it looks for its network's record
SOL_NETLINK, NETLINK_NO_ENOBUFS = 270, 5  # linux/socket.h, linux/netlink.h
LIBRARY = "libnetfilter_queue.so.1"

Callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def load() -> ctypes.CDLL:
    """libnetfilter_queue, or SystemExit with how to install it."""
    try:
        library = ctypes.CDLL(ctypes.util.find_library("netfilter_queue") or LIBRARY, use_errno=True)
    except OSError:
        raise SystemExit("the delay helper needs libnetfilter_queue (Debian: apt-get install libnetfilter-queue1, "
                         "or `make network-tools` as root)") from None
    for name in ("nfq_open", "nfq_create_queue", "nfq_get_msg_packet_hdr", "nfq_nfnlh"):
        getattr(library, name).restype = ctypes.c_void_p
    library.nfq_create_queue.argtypes = [ctypes.c_void_p, ctypes.c_uint16, Callback, ctypes.c_void_p]
    library.nfq_set_verdict.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32,
                                        ctypes.c_void_p]
    for name in ("nfq_set_mode",):
        getattr(library, name).argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint32]
    library.nfq_set_queue_maxlen.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    library.nfq_set_queue_flags.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
    library.nfq_get_msg_packet_hdr.argtypes = [ctypes.c_void_p]
    library.nfq_fd.argtypes = [ctypes.c_void_p]
    library.nfq_nfnlh.argtypes = [ctypes.c_void_p]
    library.nfnl_rcvbufsiz = ctypes.CDLL(ctypes.util.find_library("nfnetlink") or "libnfnetlink.so.0").nfnl_rcvbufsiz
    library.nfnl_rcvbufsiz.argtypes = [ctypes.c_void_p, ctypes.c_uint]
    library.nfq_handle_packet.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    return library


class Delayer:
    """Queue `queue` of this namespace: every packet held `delay_s` plus a uniform jitter of ±`jitter_s`, in order."""

    def __init__(self, queue: int, delay_s: float, jitter_s: float, seed: int | None = None) -> None:
        self.delay_s, self.jitter_s = delay_s, jitter_s
        self.random = random.Random(seed)
        self.held: collections.deque[tuple[float, int]] = collections.deque()  # (release time, packet id)
        self.last_release = 0.0
        self.lib = load()
        self.handle = self.lib.nfq_open()
        if not self.handle:
            raise SystemExit(f"nfq_open failed (errno {ctypes.get_errno()}): the delay helper needs root or CAP_NET_ADMIN")
        self._callback = Callback(self._arrived)  # kept referenced: the library calls it
        self.queue = self.lib.nfq_create_queue(self.handle, queue, self._callback, None)
        if not self.queue:
            raise SystemExit(f"queue {queue} is taken or cannot be made (errno {ctypes.get_errno()})")
        self.lib.nfq_set_mode(self.queue, NFQNL_COPY_META, 0)
        self.lib.nfq_set_queue_maxlen(self.queue, QUEUE_LENGTH)
        # offloaded packets whole (fewer, larger verdicts); a full queue lets packets through rather than drop them
        flags = NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN
        self.lib.nfq_set_queue_flags(self.queue, flags, flags)
        self.lib.nfnl_rcvbufsiz(self.lib.nfq_nfnlh(self.handle), RECEIVE_BUFFER)
        self.fd = self.lib.nfq_fd(self.handle)
        self.socket = socket.socket(fileno=self.fd)
        self.socket.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)  # a burst must not stop the loop

    def _arrived(self, _queue, _message, data, _user) -> int:
        header = self.lib.nfq_get_msg_packet_hdr(data)
        packet_id = struct.unpack("!I", ctypes.string_at(header, 4))[0]
        now = time.monotonic()
        jitter = self.random.uniform(-self.jitter_s, self.jitter_s) if self.jitter_s else 0.0
        release = max(now + max(0.0, self.delay_s + jitter), self.last_release)
        self.last_release = release
        self.held.append((release, packet_id))
        return 0

    def run(self, record: Path | None = None) -> None:
        """Until SIGTERM, or until `record` is gone; then every packet still held goes at once (the kernel would drop
        them with the queue)."""
        stopping = []
        signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
        looked = time.monotonic()
        while not stopping:
            now = time.monotonic()
            if record is not None and now - looked >= RECORD_CHECK_S:
                looked = now
                if not record.exists():
                    break
            while self.held and self.held[0][0] <= now:
                self.lib.nfq_set_verdict(self.queue, self.held.popleft()[1], NF_ACCEPT, 0, None)
            wait = min(self.held[0][0] - now, 0.5) if self.held else 0.5
            readable, _, _ = select.select([self.fd], [], [], max(0.0, wait))
            if readable:
                self._drain()
        while self.held:
            self.lib.nfq_set_verdict(self.queue, self.held.popleft()[1], NF_ACCEPT, 0, None)

    def _drain(self) -> None:
        """Every message waiting on the socket, each handed to the library (which calls `_arrived`)."""
        while True:
            try:
                data = self.socket.recv(1 << 16, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return
            self.lib.nfq_handle_packet(self.handle, data, len(data))


def main(arguments: list[str]) -> None:
    queue, delay_ms, jitter_ms = int(arguments[0]), float(arguments[1]), float(arguments[2])
    delayer = Delayer(queue, delay_ms / 1000, jitter_ms / 1000)
    print("ready", flush=True)
    delayer.run(Path(arguments[3]) if len(arguments) > 3 else None)


if __name__ == "__main__":
    main(sys.argv[1:])
