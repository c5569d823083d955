"""The subnet an isolated cluster takes: the first /24 of its pool that overlaps no route and no address."""

import ipaddress

import pytest

from kafkabench.cluster.network.subnets import check_subnet, free_subnet, taken_networks
from kafkabench.errors import ClusterError

# `ip -j route` and `ip -j addr` as this machine answered them, plus another cluster's bridge
ROUTES = [{"dst": "default", "gateway": "192.0.2.1", "dev": "eth0"},
          {"dst": "192.0.2.0/24", "dev": "eth0", "protocol": "kernel", "scope": "link", "prefsrc": "192.0.2.2"},
          {"dst": "10.213.0.0/24", "dev": "kb1a2b3c", "protocol": "kernel"},
          {"dst": "10.213.1.7", "dev": "tun0"}]
ADDRESSES = [{"ifname": "lo", "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8},
                                            {"family": "inet6", "local": "::1", "prefixlen": 128}]},
             {"ifname": "eth0", "addr_info": [{"family": "inet", "local": "192.0.2.2", "prefixlen": 24}]}]


def test_routes_and_addresses_are_taken_but_the_default_route_is_not():
    taken = taken_networks(ROUTES, ADDRESSES)
    assert ipaddress.ip_network("0.0.0.0/0") not in taken
    assert {str(n) for n in taken} == {"192.0.2.0/24", "10.213.0.0/24", "10.213.1.7/32", "127.0.0.0/8"}


def test_the_first_free_subnet_skips_every_overlap():
    assert str(free_subnet(taken_networks(ROUTES, ADDRESSES))) == "10.213.2.0/24"
    assert str(free_subnet([])) == "10.213.0.0/24"


def test_a_pool_with_nothing_free_is_refused_in_one_line():
    with pytest.raises(ClusterError, match="no free /24 in 10.213.0.0/23"):
        free_subnet([ipaddress.ip_network("10.213.0.0/16")], pool=ipaddress.ip_network("10.213.0.0/23"))


@pytest.mark.parametrize("subnet, says", [("8.8.8.0/24", "is not private"), ("192.0.2.0/25", "overlaps 192.0.2.0/24"),
                                          ("10.213.0.128/25", "overlaps 10.213.0.0/24")])
def test_a_subnet_given_that_is_public_or_already_routed_is_refused(subnet, says):
    with pytest.raises(ClusterError, match=says):
        check_subnet(ipaddress.ip_network(subnet), taken_networks(ROUTES, ADDRESSES))
    check_subnet(ipaddress.ip_network("10.213.9.0/24"), taken_networks(ROUTES, ADDRESSES))


def test_an_isolated_network_names_the_capabilities_it_lacks():
    from kafkabench.cluster.network.bridge import missing_capabilities

    assert missing_capabilities("Name:\tx\nCapEff:\t000001ffffffffff\n") == []  # root
    assert missing_capabilities("CapEff:\t0000000000000000\n") == ["CAP_NET_ADMIN", "CAP_SYS_ADMIN"]
    assert missing_capabilities("CapEff:\t0000000000001000\n") == ["CAP_SYS_ADMIN"]  # CAP_NET_ADMIN alone
