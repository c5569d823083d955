import base64

from kafkabench.cluster.embedded import _diagnose, new_cluster_id


def test_cluster_ids_are_kafka_uuids_that_never_look_like_options():
    ids = {new_cluster_id() for _ in range(5000)}
    assert len(ids) == 5000
    for cluster_id in ids:
        assert len(cluster_id) == 22 and not cluster_id.startswith("-")
        assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16


def test_diagnose_picks_the_telling_line():
    log = ["[t] INFO starting", "[t] ERROR Fatal error during KafkaServer startup", "[t] INFO shut down"]
    assert _diagnose(log) == "[t] ERROR Fatal error during KafkaServer startup"
    assert "pick another with --port" in _diagnose(["java.net.BindException: Address already in use", "bye"])
    assert _diagnose(["only line"]) == "only line"
    assert _diagnose([]) == "no output"
