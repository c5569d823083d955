"""Which subnet a cluster's network takes: a /24 of a private pool that overlaps no route and no address the
machine already has (another cluster's bridge among them), so two clusters at once never collide and no cluster
address is one the machine sends elsewhere.

Pure: the routes and addresses are read elsewhere (`ip -j route`, `ip -j addr`) and passed in, so the choice is
tested without a machine.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from kafkabench.errors import ClusterError

# 10.213.0.0/16 cut in /24s: inside RFC 1918's 10/8, and a /16 few networks use whole
POOL = ipaddress.IPv4Network("10.213.0.0/16")
PREFIX = 24


def taken_networks(routes: Iterable[dict], addresses: Iterable[dict]) -> list[ipaddress.IPv4Network]:
    """The IPv4 networks the machine already reaches somewhere: every route's destination (the default route
    excepted: it covers everything and the pool is chosen apart from it) and every address's own network."""
    taken = []
    for route in routes:
        destination = route.get("dst", "")
        if destination and destination != "default":
            taken.append(ipaddress.ip_network(destination if "/" in destination else f"{destination}/32", strict=False))
    for link in addresses:
        for info in link.get("addr_info", []):
            if info.get("family") == "inet":
                taken.append(ipaddress.ip_network(f"{info['local']}/{info['prefixlen']}", strict=False))
    return [network for network in taken if network.version == 4]


def free_subnet(taken: Iterable[ipaddress.IPv4Network], pool: ipaddress.IPv4Network = POOL) -> ipaddress.IPv4Network:
    """The first /24 of the pool that overlaps nothing taken; ClusterError when every one does."""
    taken = list(taken)
    for candidate in pool.subnets(new_prefix=PREFIX):
        if not any(candidate.overlaps(network) for network in taken):
            return candidate
    raise ClusterError(f"no free /{PREFIX} in {pool}: every one overlaps a route or an address of this machine "
                       "(`ip route`); `kafkabench cluster down` removes the networks of clusters no longer running")


def check_subnet(subnet: ipaddress.IPv4Network, taken: Iterable[ipaddress.IPv4Network]) -> None:
    """A subnet the user gave: private, and overlapping nothing the machine already reaches."""
    if not subnet.is_private:
        raise ClusterError(f"subnet {subnet} is not private (RFC 1918): a cluster's addresses must never be ones "
                           "the internet uses")
    for network in taken:
        if subnet.overlaps(network):
            raise ClusterError(f"subnet {subnet} overlaps {network}, which this machine already routes: choose "
                               "another")
