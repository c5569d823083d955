"""The `kafka` marker's settings over the ini options: the closest marker wins, and anything wrong is one line."""

import os
from types import SimpleNamespace

import pytest

from kafkabench.testing.settings import INI, ClusterShape, SettingError, TopicShape, asked, heal_timeout


def kafka(*args, **kwargs) -> SimpleNamespace:
    """What `node.iter_markers("kafka")` gives (this suite does not register the plugin's marker)."""
    return SimpleNamespace(args=args, kwargs=kwargs)


def ini(**given):
    return lambda name: given.get(name, INI[name][1])


def test_without_a_marker_the_ini_options_decide():
    assert asked([], ini()) == (ClusterShape(), TopicShape())
    cluster, topic = asked([], ini(kafka_brokers="3", kafka_controllers="1", kafka_version="4.1.2"))
    assert cluster == ClusterShape(brokers=3, controllers=1, version="4.1.2")
    assert topic.replicas(cluster.brokers) == 3


def test_the_closest_marker_wins_setting_by_setting():
    module = kafka(brokers=3, partitions=6, topic_config={"cleanup.policy": "compact"})
    test = kafka(partitions=2, security="SASL_SSL", broker_config={"log.cleaner.enable": False})
    cluster, topic = asked([test, module], ini())  # node.iter_markers: closest first
    assert (cluster.brokers, cluster.security) == (3, "sasl_ssl")
    assert cluster.broker_config == (("log.cleaner.enable", "false"),)
    assert topic == TopicShape(2, None, {"cleanup.policy": "compact"})


@pytest.mark.parametrize("settings, message", [
    ({"brokerz": 3}, "@pytest.mark.kafka: unknown setting 'brokerz'; known: brokers, controllers, version,"),
    ({"brokers": 0}, "@pytest.mark.kafka(brokers=0): must be a whole number of at least 1"),
    ({"brokers": True}, "@pytest.mark.kafka(brokers=True): must be a whole number of at least 1"),
    ({"security": "kerberos"}, "@pytest.mark.kafka(security='kerberos'): must be one of plaintext, ssl, mtls,"),
    ({"topic_config": ["a"]}, "@pytest.mark.kafka(topic_config=['a']): must be a dict of setting names to values"),
    ({"replication_factor": 3}, "@pytest.mark.kafka(replication_factor=3): the cluster has 1 broker(s); ask for "
                                "brokers=3 too"),
])
def test_a_wrong_setting_is_one_line_naming_it(settings, message):
    with pytest.raises(SettingError) as refused:
        asked([kafka(**settings)], ini())
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)


def test_positional_settings_and_bad_ini_values_are_refused():
    with pytest.raises(SettingError, match=r"settings are named, as in @pytest.mark.kafka\(brokers=3\)"):
        asked([kafka(3)], ini())
    with pytest.raises(SettingError, match="kafka_brokers = three: must be a whole number of at least 1"):
        asked([], ini(kafka_brokers="three"))
    with pytest.raises(SettingError, match="kafka_heal_timeout = -1: must be a number of seconds above 0"):
        heal_timeout(ini(kafka_heal_timeout="-1"))
    assert heal_timeout(ini()) == 60


def test_an_isolated_network_needs_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SettingError, match=r'network="isolated"\): network faults need root'):
        asked([kafka(network="isolated")], ini())
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert asked([kafka(network="isolated")], ini())[0].network == "isolated"
