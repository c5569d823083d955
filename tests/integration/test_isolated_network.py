"""The isolated network on the real kernel: namespaces on a bridge, reachable from the root namespace and from each
other through it and from nowhere else, every node address routed into the bridge, and nothing left after
removal. Needs root (or CAP_NET_ADMIN) and network namespaces; skipped, saying which, where they are absent."""

import json
import os
import subprocess
import sys

import psutil
import pytest

from kafkabench.cluster.network.bridge import RECORDS, IsolatedNetwork, remove_stale
from kafkabench.cluster.network.routes import check_routes_into, ip, route_device
from kafkabench.errors import ClusterError

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (or CAP_NET_ADMIN)")

LISTENER = ("import socket, sys; s = socket.create_server((sys.argv[1], 0)); print(s.getsockname()[1], flush=True); "
            "c, _ = s.accept(); c.sendall(b'ok'); c.close()")
CONNECT = ("import socket, sys; c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5); "
           "print(c.recv(2).decode())")


def listen_in(network: IsolatedNetwork, node: int) -> tuple[subprocess.Popen, int]:
    """A one-connection TCP server inside node `node`'s namespace, on its address: (process, port)."""
    server = subprocess.Popen([*network.exec_prefix(node), sys.executable, "-c", LISTENER, network.address(node)],
                              stdout=subprocess.PIPE, text=True)
    return server, int(server.stdout.readline())


def connect(prefix: list[str], address: str, port: int) -> str:
    done = subprocess.run([*prefix, sys.executable, "-c", CONNECT, address, str(port)], capture_output=True,
                          text=True, timeout=30)
    return done.stdout.strip() if done.returncode == 0 else f"failed: {done.stderr.strip().splitlines()[-1:]}"


@pytest.fixture
def network():
    with IsolatedNetwork.create(nodes=2) as made:
        yield made


def test_the_root_namespace_and_each_node_reach_a_node_through_the_bridge(network):
    assert [route_device(network.address(n)) for n in (1, 2)] == [network.name] * 2
    for prefix in ([], network.exec_prefix(2)):  # a client in the root namespace, and the other node
        server, port = listen_in(network, 1)
        try:
            assert connect(prefix, network.address(1), port) == "ok"
        finally:
            server.kill()
            server.wait(timeout=10)


def test_a_node_has_no_way_out_of_the_subnet(network):
    with pytest.raises(ClusterError, match="unreachable|No route"):
        ip("route", "get", "192.0.2.1", namespace=network.namespace(1))
    assert ip("route", namespace=network.namespace(1)).split()[0] == str(network.subnet)


def test_removal_leaves_no_namespace_no_link_and_a_second_network_takes_another_subnet():
    with IsolatedNetwork.create(nodes=1) as first, IsolatedNetwork.create(nodes=1) as second:
        assert not first.subnet.overlaps(second.subnet)
        names = first.name, second.name
    namespaces = ip("netns", "list")
    links = ip("link", "show")
    assert not any(name in namespaces or name in links for name in names)


def test_an_address_that_routes_anywhere_but_the_bridge_is_refused_before_anything_starts():
    with pytest.raises(ClusterError, match="cluster address 127.0.0.1 routes out of lo, not into the cluster's bridge "
                                           "kbnone: refusing to start"):
        check_routes_into(["127.0.0.1"], "kbnone")


# waits for the kill -9 the test sends (bounded: an alarm ends it after 120 s if the test never does)
MAKER = ("import signal; from kafkabench.cluster.network.bridge import IsolatedNetwork; "
         "network = IsolatedNetwork.create(nodes=2); print(network.name, flush=True); signal.alarm(120); signal.pause()")


def test_a_network_whose_maker_was_killed_is_removed_by_the_next_creation():
    maker = subprocess.Popen([sys.executable, "-c", MAKER], stdout=subprocess.PIPE, text=True)
    try:
        name = maker.stdout.readline().strip()
        assert name and f"{name}-1" in ip("netns", "list")
    finally:
        maker.kill()  # kill -9: no teardown runs
        maker.wait(timeout=10)
    assert f"{name}-1" in ip("netns", "list")  # left behind, as after a crash
    with IsolatedNetwork.create(nodes=1):  # the next creation removes it first
        pass
    assert name not in ip("netns", "list") and name not in ip("link", "show")
    assert remove_stale() == []


def test_a_network_is_kept_through_a_step_of_the_wall_clock_and_one_an_older_kafkabench_made_while_its_owner_runs(
        monkeypatch):
    with IsolatedNetwork.create(nodes=1) as network:
        boot = psutil.boot_time()
        monkeypatch.setattr(psutil._pslinux, "boot_time", lambda: boot + 21)  # what a 21 s step did in CI to /proc/stat
        assert network.name not in remove_stale()  # its owner, this process, still runs
        path = RECORDS / f"{network.name}.json"
        record = {key: value for key, value in json.loads(path.read_text()).items() if key != "starts"}
        path.write_text(json.dumps({**record, "owners": [[os.getpid(), psutil.Process().create_time() - 21]]}))
        assert network.name not in remove_stale()  # as an older kafkabench recorded it, before the step
        assert network.name in ip("link", "show")


def test_a_subnet_given_that_overlaps_a_route_or_is_public_is_refused_and_nothing_is_made():
    import ipaddress

    from kafkabench.cluster.network.bridge import RECORDS

    before = set(RECORDS.glob("*.json")) if RECORDS.is_dir() else set()
    with IsolatedNetwork.create(nodes=1) as taken:
        with pytest.raises(ClusterError, match=f"overlaps {taken.subnet}, which this machine already routes"):
            IsolatedNetwork.create(nodes=1, subnet=taken.subnet)
    with pytest.raises(ClusterError, match="is not private"):
        IsolatedNetwork.create(nodes=1, subnet=ipaddress.IPv4Network("8.8.8.0/24"))
    with pytest.raises(ClusterError, match="too small for 3 nodes"):
        IsolatedNetwork.create(nodes=3, subnet=ipaddress.IPv4Network("10.213.250.0/29"))
    assert (set(RECORDS.glob("*.json")) if RECORDS.is_dir() else set()) <= before
