"""A peer for the network tests, run inside a node's namespace (or the root one): `serve ADDRESS` answers a TCP
connection on TCP_PORT with b"ok" after reading what it sent (the byte count), and counts UDP datagrams on UDP_PORT,
answering b"?" with the count so far; `connect ADDRESS` tries one TCP connection and prints ok, refused or timeout."""

import socket
import sys
import threading
import time

TCP_PORT, UDP_PORT = 7000, 7001
UDP_BUFFER = 64 << 20
SO_RCVBUFFORCE = 33  # asm-generic/socket.h: SO_RCVBUF beyond net.core.rmem_max, for root
CONNECT_TIMEOUT_S = 1.0


def serve(address: str) -> None:
    def tcp() -> None:
        with socket.create_server((address, TCP_PORT)) as server:
            while True:
                connection, _ = server.accept()
                threading.Thread(target=answer, args=(connection,), daemon=True).start()

    def answer(connection: socket.socket) -> None:
        with connection:
            total = 0
            while chunk := connection.recv(1 << 16):
                total += len(chunk)
                if chunk.endswith(b"\n"):
                    break
            connection.sendall(f"ok {total}".encode())

    threading.Thread(target=tcp, daemon=True).start()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        # room for every datagram a test sends at once (root: beyond net.core.rmem_max), so none is lost to a full buffer
        udp.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, UDP_BUFFER)
        udp.bind((address, UDP_PORT))
        count = 0
        print("ready", flush=True)
        while True:
            data, sender = udp.recvfrom(2048)
            if data == b"?":
                try:
                    udp.sendto(str(count).encode(), sender)
                    count = 0
                except PermissionError:  # dropped on its way out (a cut): the count stays to be asked again
                    pass
            else:
                count += 1


def connect(address: str) -> str:
    started = time.monotonic()
    try:
        with socket.create_connection((address, TCP_PORT), timeout=CONNECT_TIMEOUT_S) as connection:
            connection.sendall(b"hello\n")
            return connection.recv(16).decode().split()[0]
    except ConnectionRefusedError:
        return f"refused in {time.monotonic() - started:.3f} s"
    except OSError:
        return "timeout"


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        print(connect(sys.argv[2]))
