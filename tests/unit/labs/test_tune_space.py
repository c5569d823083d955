"""The tune's search spaces: shipped ones load and are checked against each client's vocabulary; a bad one is
refused in one line naming the file, the role and the setting, with the closest names."""

import pytest

from kafkabench.cluster.artifacts import DEFAULT_KAFKA_VERSION
from kafkabench.errors import ConfigError
from kafkabench.labs.tune.space import load_space, parse_space


@pytest.mark.parametrize("client", ["confluent", "java"])
def test_the_shipped_spaces_load_with_a_distribution_per_dimension(client):
    space = load_space(client)
    distributions = space.distributions()
    assert len(distributions) == len(space.dimensions) >= 8
    assert {"producer.linger.ms", "producer.batch.size", "producer.compression", "consumer.fetch.min.bytes",
            "consumer.fetch.max.wait.ms", "consumer.max.partition.fetch.bytes"} <= set(distributions)
    assert distributions["producer.batch.size"].log  # sizes on a log scale
    assert "acks" not in {name for d in space.dimensions for name in d.settings_names}  # durability is not tuned


def test_a_bundle_choice_sets_its_settings_together_and_a_range_its_one():
    space = load_space("confluent")
    settings = space.settings({"producer.compression": "zstd-3", "producer.batch.size": 65536,
                               "consumer.fetch.max.wait.ms": 12})
    assert settings["producer"] == {"compression.type": "zstd", "compression.zstd.level": "3", "batch.size": "65536"}
    assert settings["consumer"] == {"fetch.max.wait.ms": "12"}


def test_params_of_settings_clip_into_ranges_and_match_bundles_only_whole():
    space = load_space("java")
    params = space.params_of({"producer": {"linger.ms": "0", "compression.type": "zstd", "compression.zstd.level": "3"},
                              "consumer": {"fetch.min.bytes": "999999999"}})
    assert params["producer.linger.ms"] == 1  # below the range: its low end
    assert params["producer.compression"] == "zstd-3"
    assert params["consumer.fetch.min.bytes"] == 1048576
    assert "producer.compression" not in space.params_of({"producer": {"compression.type": "zstd"}})


@pytest.mark.parametrize("data, message", [
    ({"producer": {"lingr.ms": {"low": 1, "high": 5}}}, "lingr.ms is not a Kafka producer setting; did you mean linger.ms"),
    ({"consumer": {"linger.ms": {"low": 1, "high": 5}}}, "linger.ms is not a Kafka consumer setting"),
    ({"producer": {"librdkafka:queue.buffering.max.kbyte": {"low": 1, "high": 5}}},
     "did you mean librdkafka:queue.buffering.max.kbytes"),
    ({"producer": {"librdkafka:linger.ms": {"low": -5, "high": 5}}}, "librdkafka:linger.ms=-5"),
    ({"producer": {"linger.ms": {"low": 0, "high": 5, "log": True}}}, "a log scale needs low > 0"),
    ({"producer": {"linger.ms": {"low": 5, "high": 5}}}, "low 5 must be below high 5"),
    ({"producer": {"linger.ms": {"low": 1, "hi": 5}}}, "give {low: L, high: H}"),
    ({"producer": {"linger.ms": {"choices": []}}}, "choices are a list of values"),
    ({"brokers": {}}, "brokers: a search space has producer, consumer, topic"),
    ({}, "has no settings to change"),
])
def test_a_bad_space_is_refused_in_one_line(data, message):
    with pytest.raises(ConfigError, match="^my.yaml") as refused:
        parse_space("confluent", data, "my.yaml")
    assert message in str(refused.value)


def test_keep_takes_out_every_dimension_that_touches_a_kept_setting():
    space = load_space("confluent")
    kept = space.without({"compression.zstd.level": "5", "linger.ms": "0"})
    keys = {d.key for d in kept.dimensions}
    assert "producer.compression" not in keys and "producer.linger.ms" not in keys
    assert len(kept.dimensions) == len(space.dimensions) - 2


def test_a_space_file_that_is_not_there_or_not_yaml(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_space("confluent", tmp_path / "nope.yaml")
    (tmp_path / "bad.yaml").write_text("producer: [unclosed")
    with pytest.raises(ConfigError, match="is not YAML"):
        load_space("confluent", tmp_path / "bad.yaml")
    with pytest.raises(ConfigError, match="no search space ships for --client kafka-python"):
        load_space("kafka-python")


def test_size_limits_are_fitted_to_the_payload_so_no_proposal_is_refused_for_it():
    space = parse_space("confluent", {"consumer": {"max.partition.fetch.bytes": {"low": 65536, "high": 16777216, "log": True},
                                                   "fetch.max.bytes": {"low": 1024, "high": 65536}},
                                      "producer": {"linger.ms": {"low": 1, "high": 5}}}, "my.yaml")
    fitted, notes = space.fitted(1_303_269)
    limits = {d.key: d for d in fitted.dimensions}
    assert limits["consumer.max.partition.fetch.bytes"].low == 1_303_269 and limits["producer.linger.ms"].low == 1
    assert "consumer.fetch.max.bytes" not in limits  # even its highest value cannot carry the record
    assert notes == ["consumer.max.partition.fetch.bytes from 1,303,269 (was 65,536): a 1,303,269-byte record must fit",
                     "consumer.fetch.max.bytes left out: its highest value 65,536 cannot carry a 1,303,269-byte record"]


def test_a_space_reaching_past_the_client_gives_each_trial_its_brokers():
    from kafkabench.labs.tune.baseline import default_settings
    from kafkabench.labs.tune.report import changes_text
    from kafkabench.labs.tune.scenario import TuneScenario
    from kafkabench.labs.tune.space import variant_of

    space = parse_space("confluent", {"broker": {"num.io.threads": {"choices": [2, 8]}},
                                      "jvm": {"-XX:G1HeapRegionSize=": {"choices": ["default", "4m"]}},
                                      "consumer": {"receive.buffer.bytes": {"choices": [-1, 65536]}}}, "s.yaml")
    assert space.reaches_brokers and not load_space("confluent").reaches_brokers
    asked = space.settings({"broker.num.io.threads": "2", "jvm.-XX:G1HeapRegionSize=": "4m",
                            "consumer.receive.buffer.bytes": "-1"})
    variant = variant_of(asked)
    assert (variant.settings, variant.jvm_options) == ((("num.io.threads", "2"),), ("-XX:G1HeapRegionSize=4m",))
    # Kafka's own default and the JVM's own choice are the brokers as they are: the cluster given
    assert variant_of(space.settings({"broker.num.io.threads": "8", "jvm.-XX:G1HeapRegionSize=": "default"})).is_default
    defaults = default_settings(TuneScenario(size=100), space)
    assert (defaults["broker"], defaults["jvm"]) == ({"num.io.threads": "8"}, {"-XX:G1HeapRegionSize=": "default"})
    assert space.params_of(defaults)["broker.num.io.threads"] == "8"
    assert changes_text(asked, defaults) == ("receive.buffer.bytes=-1, broker num.io.threads=2, "
                                             "jvm -XX:G1HeapRegionSize=4m")


@pytest.mark.parametrize("data, message", [
    ({"broker": {"num.io.thread": {"choices": [2]}}}, f"broker setting num.io.thread: Kafka {DEFAULT_KAFKA_VERSION} has no such setting"),
    ({"jvm": {"-XX:G1HeapRegionSize=": {"choices": ["3x"]}}}, "the JVM refuses them: Improperly specified VM option"),
])
def test_a_broker_setting_or_jvm_option_they_would_refuse_is_refused_when_the_space_loads(data, message):
    with pytest.raises(ConfigError, match=message):
        parse_space("confluent", data, "s.yaml")
