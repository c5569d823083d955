import textwrap

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from kafkabench.cluster.artifacts import DEFAULT_KAFKA_VERSION
from kafkabench.plans.cells import expand
from kafkabench.plans.loading import PlanError, builtin_names, load_plan, parse_plan


def write(tmp_path, text, name="plan.yaml"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def error_of(tmp_path, text) -> str:
    with pytest.raises(PlanError) as caught:
        expand(load_plan(str(write(tmp_path, text))))
    return str(caught.value)


def test_builtin_plans_load_and_expand():
    assert {"quick", "seed-000", "seed-001", "seed-002", "seed-003", "seed-004", "faults", "exactly-once"} <= set(builtin_names())
    assert {"yolo", "throughput-rf3", "durable"} <= set(builtin_names("profiles"))
    for name in builtin_names():
        cells = expand(load_plan(name))
        assert cells and [c.index for c in cells] == list(range(1, len(cells) + 1))
        assert len({c.directory for c in cells}) == len(cells)


def test_errors_say_where(tmp_path):
    plan = """\
        name: p
        scenarios:
          - lab: latency
          - lab: produce
            count: 10
            rate: 0
        """
    message = error_of(tmp_path, plan)
    assert message == f"{tmp_path / 'plan.yaml'}: scenarios -> 2 (produce) -> rate: must be a finite number > 0 (or -1: as fast as possible)"
    assert "scenarios -> 1 (fast) -> count: must be > 0" in error_of(tmp_path, "name: p\nscenarios: [{lab: produce, name: fast, count: -5}]\n")
    assert "scenarios -> 1 (tuner): unknown lab 'tuner'; expected one of 'latency'" in error_of(tmp_path, "name: p\nscenarios: [{lab: tuner}]\n")
    assert "scenarios -> 1 (latency) -> sizes: not a known key here" in error_of(tmp_path, "name: p\nscenarios: [{lab: latency, sizes: 3}]\n")
    assert "scenarios -> 1 (produce): needs count or duration" in error_of(tmp_path, "name: p\nscenarios: [{lab: produce}]\n")
    message = error_of(tmp_path, "name: p\nscenarios: [{lab: produce, count: 5, producer: {lingr.ms: 1}}]\n")
    assert "scenarios -> 1 (produce)" in message and "lingr.ms is not a Kafka producer setting; did you mean linger.ms" in message
    assert "scenarios: required" in error_of(tmp_path, "name: p\n")
    assert "plan.yaml: line 3, column 1: not valid YAML: expected" in error_of(tmp_path, "name: p\nscenarios: [lab: latency\n")
    assert "expected a mapping" in error_of(tmp_path, "- just\n- a list\n")


def test_profiles_are_found_next_to_the_plan_then_built_in(tmp_path):
    write(tmp_path, "producer: {linger.ms: 7}\n", "profiles/mine.yaml")
    path = write(tmp_path, "name: p\nprofiles: [mine, zstd]\nscenarios: [{lab: produce, count: 10}]\n")
    cells = expand(load_plan(str(path)))
    assert [(c.profile, c.scenario.producer["linger.ms"].value) for c in cells] == [("mine", "7"), ("zstd", "5")]
    assert cells[0].scenario.producer["linger.ms"].source == "profile mine"


def test_seed_003_is_the_seed_preset_and_its_topic_profiles_apply_elsewhere(tmp_path):
    loaded = load_plan("seed-003")
    (cell,) = expand(loaded)
    assert (cell.lab, cell.scenario.preset, cell.scenario.count, cell.scenario.repeats, cell.scenario.clients) == (
        "durability", "seed", 100_000, 3, ["java"])
    assert cell.scenario.probes_availability and (loaded.plan.cluster.brokers, loaded.plan.cluster.controllers) == (3, 1)
    path = write(tmp_path, "name: p\nprofiles: [yolo, throughput-rf3, durable]\nscenarios: [{lab: produce, count: 10, "
                           "replication_factor: 1}]\n")
    settings = [(c.profile, c.scenario.producer["acks"].value, c.scenario.topic_config["min.insync.replicas"].value)
                for c in expand(load_plan(str(path)))]
    assert settings == [("yolo", "1", "1"), ("throughput-rf3", "1", "1"), ("durable", "all", "2")]


def test_profile_errors_name_the_profile_file_and_the_closest_setting(tmp_path):
    write(tmp_path, "producer: {linger.mss: 7}\n", "profiles/typo.yaml")
    message = error_of(tmp_path, "name: p\nprofiles: [typo]\nscenarios: [{lab: produce, count: 10}]\n")
    assert "profiles/typo.yaml: producer" in message and "did you mean linger.ms" in message
    assert "profile 'nope': not found" in error_of(tmp_path, "name: p\nprofiles: [nope]\nscenarios: [{lab: latency}]\n")


def test_scenario_settings_win_over_the_profile_and_conflicting_knobs_are_refused(tmp_path):
    cells = expand(load_plan(str(write(tmp_path, "name: p\nprofiles: [throughput]\nscenarios: [{lab: produce, count: 5, producer: {linger.ms: 1}}]\n"))))
    assert cells[0].scenario.producer["linger.ms"].value == "1"
    assert cells[0].scenario.producer["batch.size"].value == "262144"
    assert "sets acks and profile durable sets acks" in error_of(tmp_path, "name: p\nprofiles: [durable]\nscenarios: [{lab: produce, count: 5, acks: '1'}]\n")
    assert "varies compression.type itself" in error_of(tmp_path, "name: p\nprofiles: [zstd]\nscenarios: [{lab: compression, rows: 5}]\n")


def test_cells_cross_profiles_and_clients_and_interleave_repeats(tmp_path):
    text = "name: p\nrepeats: 2\nclients: [confluent, java]\nscenarios: [{lab: produce, count: 5, profiles: [default, latency]}, {lab: latency, count: 3}]\n"
    cells = expand(load_plan(str(write(tmp_path, text))))
    names = [(c.name, c.repeat) for c in cells]
    first = ["produce-default-confluent", "produce-default-java", "produce-latency-confluent", "produce-latency-java", "latency-default"]
    assert names == [(n, 1) for n in first] + [(n, 2) for n in first]
    assert cells[4].clients == ("confluent", "java")  # latency: every client in one cell, rounds interleaved


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_gives_a_plan_or_one_located_error(text):
    try:
        parse_plan(text, "fuzz.yaml")
    except PlanError as exc:
        assert str(exc).startswith("fuzz.yaml: ") and "\n" not in str(exc).strip()


values = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**9) | st.floats(allow_nan=False) | st.text(max_size=10),
                      lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
                      max_leaves=10)
scenario = st.fixed_dictionaries({"lab": st.sampled_from(["latency", "produce", "consume", "compression", "nope"])},
                                 optional={"count": values, "rate": values, "size": values, "name": values, "profiles": values,
                                           "clients": values, "codecs": values, "levels": values, "bogus": values})


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({"name": st.sampled_from(["p", "", "a b"])},
                             optional={"scenarios": st.lists(scenario, max_size=3) | values, "repeats": values, "clients": values}))
def test_malformed_structures_give_a_located_error(data):
    try:
        parse_plan(yaml.safe_dump(data, allow_unicode=True), "fuzz.yaml")
    except PlanError as exc:
        message = str(exc)
        assert message.startswith("fuzz.yaml: ") and "\n" not in message
        assert ": " in message.removeprefix("fuzz.yaml: ")  # a location, then what is wrong


def test_a_bad_compression_level_in_a_plan_is_a_located_error(tmp_path):
    assert error_of(tmp_path, "name: p\nscenarios: [{lab: compression, levels: [null]}]\n").endswith(
        "scenarios -> 1 (compression) -> levels: None: expected CODEC=L1,L2 text, such as zstd=1,3,19")
    assert "levels: 'snappy=1': expected CODEC=L1,L2 with CODEC one of gzip, lz4, zstd" in error_of(
        tmp_path, "name: p\nscenarios: [{lab: compression, levels: [snappy=1]}]\n")


def test_a_plan_says_where_its_workers_run_and_a_wrong_launcher_is_a_located_error(tmp_path):
    plan = load_plan(str(write(tmp_path, """\
        name: p
        launcher: {name: ray, ray_address: "10.0.0.1:6379", spread: pack}
        scenarios:
          - lab: produce
            count: 10
        """)))
    assert (plan.plan.launcher.name, plan.plan.launcher.ray_address, plan.plan.launcher.spread) == ("ray", "10.0.0.1:6379", "pack")
    assert load_plan(str(write(tmp_path, "name: p\nscenarios: [{lab: produce, count: 10}]\n", "local.yaml"))).plan.launcher.name == "local"
    error = error_of(tmp_path, """\
        name: p
        launcher: {name: k8s}
        scenarios:
          - lab: produce
            count: 10
        """)
    assert error == f"{tmp_path / 'plan.yaml'}: launcher -> name: must be one of 'local' or 'ray'"


def test_a_profile_makes_the_broker_a_variable_checked_before_any_cluster_starts(tmp_path):
    write(tmp_path, "broker: {num.io.threads: 4}\njvm: [-XX:G1HeapRegionSize=4m]\nkafka_version: 4.4.0\n",
          "profiles/brokers.yaml")
    path = write(tmp_path, "name: p\nprofiles: [default, brokers]\nscenarios: [{lab: produce, count: 10}]\n")
    loaded = load_plan(str(path))
    expand(loaded)
    variant = loaded.profiles["brokers"].variant()
    assert (variant.kafka_version, variant.settings, variant.jvm_options) == (
        "4.4.0", (("num.io.threads", "4"),), ("-XX:G1HeapRegionSize=4m",))
    assert loaded.profiles["default"].variant().is_default and not variant.is_default
    plan = "name: p\nprofiles: [bad]\nscenarios: [{lab: produce, count: 10}]\n"
    for profile, said in (("broker: {num.io.thread: 4}", f"broker setting num.io.thread: Kafka {DEFAULT_KAFKA_VERSION} has no such setting"),
                          ("broker: {node.id: 4}", "broker setting node.id: set by kafkabench"),
                          ("jvm: [-XX:G1HeapRegionSize=3x]", "JVM option(s) -XX:G1HeapRegionSize=3x: the JVM refuses them: Improperly"),
                          ("kafka_version: 3.9.0", "Kafka 3.9.0: kafkabench pins no such version; it has 4.0.2")):
        write(tmp_path, profile + "\n", "profiles/bad.yaml")
        assert f"profile bad: {said}" in error_of(tmp_path, plan), profile
