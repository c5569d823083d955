from typing import Literal

import pytest

from kafkabench.errors import ConfigError
from kafkabench.labs import registry
from kafkabench.labs.base import Lab
from kafkabench.labs.scenario import Scenario


class _Twin(Lab):
    name = "latency"


class _Nameless(Lab):
    pass


def test_the_builtin_labs_are_registered_under_their_names():
    assert registry.names() == ["latency", "produce", "consume", "compression", "durability", "delivery", "monitor",
                              "max-rate", "backlog", "tune", "groups", "omb"]
    for lab in registry.labs():
        assert registry.get(lab.name) is lab and lab.scenario.model_fields["lab"].default == lab.name
        assert lab.summary


def test_each_builtin_lab_is_in_the_module_its_line_names():
    import importlib

    for module in set(registry.BUILTIN.values()):
        named = [name for name, where in registry.BUILTIN.items() if where == module]
        assert [lab.name for lab in importlib.import_module(module).LABS] == named, module


def test_two_labs_may_not_share_a_name():
    with pytest.raises(ConfigError, match=r"two labs are named 'latency': kafkabench.labs.latency.LatencyLab and .*_Twin"):
        registry.register(_Twin())
    assert type(registry.get("latency")).__name__ == "LatencyLab"
    with pytest.raises(ConfigError, match="has no name"):
        registry.register(_Nameless())


def test_an_unknown_lab_names_the_known_ones():
    with pytest.raises(ConfigError, match=r"^unknown lab 'tuner'; known labs: latency, produce, consume, compression, durability, delivery, monitor,"
                       r" max-rate, backlog, tune, groups, omb$"):
        registry.get("tuner")


def test_a_result_of_an_unregistered_lab_still_gets_the_generic_report_parts():
    lab = registry.for_report("tuner")
    assert type(lab) is Lab and lab.headline is not None


def test_registering_the_same_lab_twice_is_harmless_and_unregistering_removes_it():
    class Demo(Scenario):
        lab: Literal["demo"] = "demo"

    class DemoLab(Lab):
        name = "demo"
        scenario = Demo

    demo = DemoLab()
    try:
        assert registry.register(demo) is registry.register(demo)
        assert "demo" in registry.names()
    finally:
        registry.unregister("demo")
    assert "demo" not in registry.names()
