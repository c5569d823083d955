"""Network impairments on the real kernel, between namespaces on an isolated network: a partition cuts exactly the
links it names (a TCP connect from each side before, during and after), one way when asked, with a TCP reset when
asked; loss drops its share of ≥ 2,000 packets; a bandwidth limit holds the rate. Needs root, nftables, tc and
ethtool (installed from Debian's packages when missing, where the tests run as root)."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkabench.cluster.network.bridge import IsolatedNetwork
from kafkabench.cluster.network.impairments import Impairments
from kafkabench.errors import ClusterError
from tests.debian import install
from tests.integration.network_probe import CONNECT_TIMEOUT_S, TCP_PORT, UDP_PORT

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (or CAP_NET_ADMIN)")
PROBE = Path(__file__).with_name("network_probe.py")
NODES = 3


@pytest.fixture(scope="module")
def network():
    for package, binary in (("nftables", "/usr/sbin/nft"), ("ethtool", "/usr/sbin/ethtool")):
        if reason := install(package, Path(binary)):
            pytest.skip(reason)
    with IsolatedNetwork.create(nodes=NODES) as made:
        servers = [subprocess.Popen([*made.exec_prefix(n), sys.executable, str(PROBE), "serve", made.address(n)],
                                    stdout=subprocess.PIPE, text=True) for n in range(1, NODES + 1)]
        try:
            for server in servers:
                assert server.stdout.readline().strip() == "ready"
            yield made
        finally:
            for server in servers:
                server.kill()
                server.wait(timeout=10)


@pytest.fixture
def impairments(network):
    made = Impairments(network)
    yield made
    made.heal_all()


def reach(network: IsolatedNetwork, source: int | None, target: int) -> str:
    """A TCP connect from node `source` (None: the root namespace, where clients are) to node `target`."""
    prefix = network.exec_prefix(source) if source else []
    done = subprocess.run([*prefix, sys.executable, str(PROBE), "connect", network.address(target)],
                          capture_output=True, text=True, timeout=30)
    return done.stdout.strip() or done.stderr.strip()


def matrix(network: IsolatedNetwork) -> dict[tuple, str]:
    sources = [None, *range(1, NODES + 1)]
    return {(source, target): reach(network, source, target)
            for source in sources for target in range(1, NODES + 1) if source != target}


def test_a_partition_cuts_exactly_the_links_it_names_and_heals(network, impairments):
    assert set(matrix(network).values()) == {"ok"}
    cut = impairments.cut(1, [network.address(2)])
    during = matrix(network)
    assert {link for link, answer in during.items() if answer != "ok"} == {(1, 2), (2, 1)}
    assert during[(1, 2)] == during[(2, 1)] == "timeout"  # a silent drop: the connect waits for its own timeout
    impairments.heal(cut)
    assert set(matrix(network).values()) == {"ok"}


def test_a_node_cut_from_the_clients_still_reaches_the_other_nodes(network, impairments):
    impairments.cut(2, [network.gateway])
    during = matrix(network)
    assert {link for link, answer in during.items() if answer != "ok"} == {(None, 2)}


def refused_in_s(answer: str) -> float:
    """The seconds a refused connect took ("refused in 0.004 s"); anything else fails the test with the answer."""
    assert answer.startswith("refused in "), answer
    return float(answer.split()[2])


def test_a_partition_with_reset_refuses_at_once(network, impairments):
    # at once: well inside the connect's own timeout, which a silent drop waits out (a loaded machine took 0.17 s)
    impairments.cut(3, [network.address(1)], reset=True)
    assert refused_in_s(reach(network, 1, 3)) < CONNECT_TIMEOUT_S / 2
    assert refused_in_s(reach(network, 3, 1)) < CONNECT_TIMEOUT_S / 2
    assert reach(network, 2, 3) == "ok"


def test_a_one_way_partition_cuts_one_direction(network, impairments):
    """UDP tells the directions apart (a TCP connect needs both): what arrived is asked once the cut healed."""
    address = network.address(1)
    ask(address)  # start counting from 0
    cut = impairments.cut(1, [network.gateway], direction="in")
    send(address, 200)
    assert ask(address) is None  # the question does not arrive either
    impairments.heal(cut)
    assert ask(address) == 0  # nothing arrived

    cut = impairments.cut(1, [network.gateway], direction="out")
    send(address, 200)
    assert ask(address) is None  # asked and counted, but the answer does not leave the node
    impairments.heal(cut)
    assert ask(address) == 200  # every datagram had arrived
    assert reach(network, None, 1) == "ok"


def send(address: str, count: int) -> None:
    """`count` datagrams; the question `ask` sends next takes the same path, so it is answered after them (the probe's
    receive buffer holds them all: none is dropped for want of room)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        for _ in range(count):
            udp.sendto(b"x" * 1000, (address, UDP_PORT))


def ask(address: str) -> int | None:
    """How many datagrams the probe at `address` counted since it was last asked; None when no answer came."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.settimeout(1)
        udp.sendto(b"?", (address, UDP_PORT))
        try:
            return int(udp.recvfrom(64)[0])
        except OSError:
            return None


def test_loss_drops_its_share_of_the_packets(network, impairments):
    address = network.address(2)
    ask(address)
    impairments.lose(2, 5)
    sent = 4000
    send(address, sent)
    delivered = None
    for _ in range(20):  # the question or its answer may be lost too
        if (delivered := ask(address)) is not None:
            break
    lost = 100 * (1 - delivered / sent)
    assert 3 <= lost <= 7, f"{lost:.1f} % lost"


def test_a_bandwidth_limit_holds_the_rate(network, impairments):
    impairments.limit(3, 20)
    payload = b"x" * (1 << 20)
    started = time.monotonic()
    with socket.create_connection((network.address(3), TCP_PORT), timeout=30) as connection:
        for _ in range(5):
            connection.sendall(payload)
        connection.sendall(b"\n")
        answer = connection.recv(64).decode()
    elapsed = time.monotonic() - started
    mbit = 5 * 8 * (1 << 20) / elapsed / 1e6
    assert answer.startswith("ok") and 16 <= mbit <= 24, f"{mbit:.1f} Mbit/s"


def test_bad_impairments_are_refused_with_one_line(network, impairments):
    with pytest.raises(ClusterError, match="cuts nothing"):
        impairments.cut(1, [network.address(1)])
    with pytest.raises(ClusterError, match="loss of 120 %"):
        impairments.lose(1, 120)
    with pytest.raises(ClusterError, match="one of both, in, out"):
        impairments.cut(1, [network.address(2)], direction="sideways")


def connect_time_s(address: str) -> float:
    """The fastest of ten TCP connects to the probe at `address`: one round trip."""
    times = []
    for _ in range(10):
        started = time.perf_counter()
        with socket.create_connection((address, TCP_PORT), timeout=10):
            times.append(time.perf_counter() - started)
    return min(times)


def carried_mbit(address: str, megabytes: int) -> float:
    payload = b"x" * (1 << 20)
    started = time.monotonic()
    with socket.create_connection((address, TCP_PORT), timeout=60) as connection:
        for _ in range(megabytes):
            connection.sendall(payload)
        connection.sendall(b"\n")
        assert connection.recv(64).decode().startswith("ok")
    return megabytes * 8 * (1 << 20) / (time.monotonic() - started) / 1e6


def test_a_delay_adds_its_round_trip_and_still_carries_100_mbit(network, impairments):
    address = network.address(2)
    before = connect_time_s(address)
    delay = impairments.delay(2, 20)
    added_ms = (connect_time_s(address) - before) * 1000
    assert 32 <= added_ms <= 48, f"{added_ms:.1f} ms added to a round trip by 2 x 20 ms"  # 40 ms ± 20 %
    mbit = carried_mbit(address, 60)
    assert mbit >= 100, f"{mbit:.0f} Mbit/s through the delayed link"
    impairments.heal(delay)
    assert connect_time_s(address) * 1000 < 5


def test_a_directed_delay_slows_one_way_only(network, impairments):
    before = connect_time_s(network.address(3))
    impairments.delay(3, 30, to=0)  # node 3 -> the clients: the SYN-ACK waits
    added_ms = (connect_time_s(network.address(3)) - before) * 1000
    assert 24 <= added_ms <= 36, f"{added_ms:.1f} ms"
    assert not any(helper.pid == 0 for helper in network.helpers())


def test_the_delay_helpers_of_a_network_removed_without_them_end_by_themselves(network):
    import psutil

    with IsolatedNetwork.create(nodes=2) as other:  # `network` only for its tools: this one is taken apart
        Impairments(other).delay(1, 5)
        helpers = other.helpers()
        assert len(helpers) == 3  # into node 1, into node 2 from it, into the clients from it
        other.record.unlink()  # as a remover that could not stop them did (one killed meanwhile, an older kafkabench)
        _, alive = psutil.wait_procs(helpers, timeout=10)
        assert not alive, alive  # else they hold their queue numbers, which the subnet's next network takes again
