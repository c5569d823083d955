"""Parameters are defined once: the CLI's options and a plan's scenario come from the same model, so they agree
on every default and on every way to spell a value."""

import textwrap

import pytest
import typer
from hypothesis import given, settings, strategies as st

from kafkabench.cli.lab_command import GENERIC, LAUNCHER, lab_command, scenario_from_options
from kafkabench.errors import ConfigError
from kafkabench.labs import registry
from kafkabench.labs.payload import MAX_VALUE_BYTES
from kafkabench.plans.loading import PlanError, parse_plan

# what a lab's model needs before it validates at all (the rest are defaults)
MINIMAL = {"latency": {}, "produce": {"count": 10}, "consume": {"count": 10, "topic": "t"}, "compression": {}, "durability": {},
           "delivery": {}, "monitor": {}, "max-rate": {}, "backlog": {}}
ACKS = [0, 1, -1, "0", "1", "-1", "all", "ALL", " all "]


def from_plan(lab: str, fields: dict):
    scenario = {"lab": lab, **fields}
    text = textwrap.dedent(f"name: p\nscenarios: [{yaml_flow(scenario)}]\n")
    return parse_plan(text, "plan.yaml")[1][0].scenario


def yaml_flow(mapping: dict) -> str:
    return "{" + ", ".join(f"{key}: {value!r}" if isinstance(value, str) else f"{key}: {value}"
                           for key, value in mapping.items()) + "}"


def from_cli(lab: str, fields: dict):
    """As the typer command would call it: every offered option, given or left at its typer default."""
    command = lab_command(registry.get(lab))
    values = {}
    for name, parameter in command.__signature__.parameters.items():
        if name in GENERIC + LAUNCHER:
            continue
        default = parameter.default.default
        values[name] = fields.get(name, [] if default is ... else default)
    return scenario_from_options(registry.get(lab).scenario, values)


@pytest.mark.parametrize("lab", list(MINIMAL))
def test_the_cli_and_a_plan_give_the_same_scenario_by_default(lab):
    model = registry.get(lab).scenario
    cli_fields = {name: str(value) for name, value in MINIMAL[lab].items()}
    assert from_cli(lab, cli_fields) == from_plan(lab, MINIMAL[lab]) == model(**MINIMAL[lab])


@pytest.mark.parametrize("lab", list(MINIMAL))
def test_every_option_has_help_and_every_default_is_the_models(lab):
    model = registry.get(lab).scenario
    command = lab_command(registry.get(lab))
    for name, parameter in command.__signature__.parameters.items():
        option = parameter.default
        assert isinstance(option, typer.models.OptionInfo) and option.help, name
        if name in model.model_fields and isinstance(model.model_fields[name].default, bool):
            assert option.default is model.model_fields[name].default, name
        elif name in model.model_fields:
            assert option.default in (None, [], ...), f"{name}: a default of its own ({option.default!r}) could drift"


@settings(max_examples=60, deadline=None)
@given(lab=st.sampled_from(["latency", "produce"]), acks=st.sampled_from(ACKS))
def test_acks_is_spelled_the_same_everywhere(lab, acks):
    expected = "all" if str(acks).strip().lower() in ("all", "-1") else str(acks)
    assert from_cli(lab, {**{k: str(v) for k, v in MINIMAL[lab].items()}, "acks": str(acks)}).acks == expected
    assert from_plan(lab, {**MINIMAL[lab], "acks": acks}).acks == expected


def test_a_bad_option_value_names_the_option():
    with pytest.raises(ConfigError, match=r"^--count: must be > 0$"):
        from_cli("latency", {"count": "0"})
    with pytest.raises(ConfigError, match=r"^--acks: must be 0, 1, all or -1"):
        from_cli("produce", {"count": "5", "acks": "2"})
    with pytest.raises(ConfigError, match=r"^needs count or duration"):
        from_cli("produce", {})


@pytest.mark.parametrize("lab", ["produce", "durability", "delivery"])
@pytest.mark.parametrize("rate", ["nan", "inf", "-inf", "0", "-2"])
def test_a_rate_that_is_no_number_of_records_per_second_is_refused(lab, rate):
    with pytest.raises(ConfigError, match=r"^--rate: must be a finite number > 0 \(or -1: as fast as possible\)$"):
        from_cli(lab, {**{k: str(v) for k, v in MINIMAL[lab].items()}, "rate": rate})
    assert from_cli(lab, {**{k: str(v) for k, v in MINIMAL[lab].items()}, "rate": "-1"}).rate == -1


@pytest.mark.parametrize("lab, option", [("max-rate", "start_rate"), ("max-rate", "ceiling"), ("backlog", "rate"),
                                         ("tune", "rate"), ("tune", "max_rate")])
@pytest.mark.parametrize("rate", ["nan", "inf", "0", "-1"])
def test_a_rate_that_must_be_finite_and_positive_refuses_everything_else(lab, option, rate):
    with pytest.raises(ConfigError, match=rf"^--{option.replace('_', '-')}: "):
        from_cli(lab, {option: rate})
    assert getattr(from_cli(lab, {option: "2.5"}), option) == 2.5


@pytest.mark.parametrize("lab", ["latency", "produce", "consume", "durability", "delivery", "max-rate", "backlog", "tune"])
def test_a_size_no_kafka_record_can_carry_is_refused_by_the_option_and_by_a_plan_saying_where(lab):
    minimal = MINIMAL.get(lab, {})
    with pytest.raises(ConfigError, match=r"^--size: must be at most 2147482623 bytes: Kafka's record sizes are 32-bit"):
        from_cli(lab, {**{k: str(v) for k, v in minimal.items()}, "size": str(10**40)})
    with pytest.raises(PlanError, match=rf"^plan.yaml: scenarios -> 1 \({lab}\) -> size: must be at most 2147482623 bytes"):
        from_plan(lab, {**minimal, "size": MAX_VALUE_BYTES + 1})
    assert from_plan(lab, {**minimal, "size": MAX_VALUE_BYTES}).size == MAX_VALUE_BYTES
