"""A node that lost a free port to another process before it bound it: the start is tried again on fresh ports."""

import pytest

from kafkabench.cluster.embedded import PORT_ATTEMPTS, EmbeddedCluster, PortTaken


def starts(outcomes: list, **settings) -> tuple[EmbeddedCluster, list]:
    cluster, tried = EmbeddedCluster(brokers=3, **settings), []

    def once():
        tried.append(len(tried))
        outcome = outcomes[len(tried) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return cluster

    cluster._start_once = once
    return cluster, tried


def test_a_port_race_is_tried_again_and_anything_else_fails_at_once():
    taken = PortTaken("broker 2 exited during startup: a port is already in use")
    cluster, tried = starts([taken, taken, "up"])
    assert cluster.start() is cluster and len(tried) == 3 == PORT_ATTEMPTS
    cluster, tried = starts([taken] * PORT_ATTEMPTS)
    with pytest.raises(PortTaken):
        cluster.start()
    assert len(tried) == PORT_ATTEMPTS
    cluster, tried = starts([taken, "up"], port=39092)  # the user's own port: their error to see
    with pytest.raises(PortTaken):
        cluster.start()
    assert len(tried) == 1
