"""The check that must pass before any broker or client starts: each cluster address is routed into the
cluster's own bridge. A typo in a subnet, a route the machine gained since the subnet was chosen, or a bridge
that is down would send a test's traffic (floods, partitions, loss) out of the machine; this refuses instead.
"""

from __future__ import annotations

import json
import subprocess

from kafkabench.errors import ClusterError

IP_TIMEOUT_S = 10
PACKAGES = {"ip": "iproute2", "tc": "iproute2", "nft": "nftables", "ethtool": "ethtool", "iptables": "iptables"}


def route_device(address: str) -> str:
    """The device the kernel would send a packet for `address` out of, as `ip route get` says."""
    answer = ip_json("route", "get", address)
    if not answer or "dev" not in answer[0]:
        raise ClusterError(f"`ip route get {address}` gave no device: {answer}")
    return answer[0]["dev"]


def check_routes_into(addresses: list[str], bridge: str) -> None:
    """Every address routes out of `bridge`, or ClusterError naming the first that does not and where it goes."""
    for address in addresses:
        device = route_device(address)
        if device != bridge:
            raise ClusterError(f"cluster address {address} routes out of {device}, not into the cluster's bridge "
                               f"{bridge}: refusing to start (its traffic would leave the cluster's network)")


def ip_json(*arguments: str, namespace: str | None = None) -> list[dict]:
    """`ip -j ...` (in `namespace` when given), parsed."""
    output = ip("-j", *arguments, namespace=namespace)
    return json.loads(output) if output.strip() else []


def ip(*arguments: str, namespace: str | None = None) -> str:
    """One `ip` command; ClusterError with its own message when it fails (a missing capability says so)."""
    return run(["ip", *(["-n", namespace] if namespace else []), *arguments])


def run(command: list[str], namespace: str | None = None, stdin: str | None = None) -> str:
    """One network tool's command (`ip`, `nft`, `tc`, `ethtool`), in `namespace` when given; its output, or
    ClusterError with the tool's own message (a missing tool or capability says how to get it)."""
    if namespace is not None and command[0] != "ip":
        command = ["ip", "netns", "exec", namespace, *command]
    tool = command[4] if command[:3] == ["ip", "netns", "exec"] else command[0]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=IP_TIMEOUT_S,
                              input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)
    except FileNotFoundError:
        raise ClusterError(f"`{tool}` is not installed: the isolated network needs it (Debian: apt-get install "
                           f"{PACKAGES.get(tool, tool)}, or `make network-tools` as root)") from None
    except subprocess.TimeoutExpired:
        raise ClusterError(f"`{' '.join(command)}` did not answer in {IP_TIMEOUT_S} s") from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        if "Operation not permitted" in message:
            message += " (the isolated network needs root or CAP_NET_ADMIN)"
        if "No such file or directory" in message and tool != "ip" and command[0] == "ip":
            message = (f"`{tool}` is not installed: network faults need it (Debian: apt-get install "
                       f"{PACKAGES.get(tool, tool)}, or `make network-tools` as root)")
        raise ClusterError(f"`{' '.join(command)}` failed: {message}")
    return done.stdout
