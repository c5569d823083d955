"""Labs by name (hatch's plug-ins keyed by a name): the built-in ones, and any registered at run time.
Plans, the runner, the CLI and the report find a lab here and nowhere else."""

from __future__ import annotations

import importlib

from kafkabench.errors import ConfigError
from kafkabench.labs.base import Lab

# each module has LABS, a tuple of Lab instances; a new lab adds its module here
BUILTIN = ("kafkabench.labs.latency", "kafkabench.labs.throughput", "kafkabench.labs.compression",
           "kafkabench.labs.durability", "kafkabench.labs.delivery.lab",
           "kafkabench.labs.monitor.lab", "kafkabench.labs.capacity", "kafkabench.labs.tune", "kafkabench.labs.groups",
           "kafkabench.labs.omb")

_labs: dict[str, Lab] = {}


def register(lab: Lab) -> Lab:
    if not lab.name:
        raise ConfigError(f"{type(lab).__name__} has no name")
    _load_builtin()
    existing = _labs.get(lab.name)
    if existing is not None and existing is not lab:
        raise ConfigError(f"two labs are named {lab.name!r}: {type(existing).__module__}.{type(existing).__name__} and "
                          f"{type(lab).__module__}.{type(lab).__name__}")
    _labs[lab.name] = lab
    return lab


def unregister(name: str) -> None:
    _labs.pop(name, None)


def get(name: str) -> Lab:
    _load_builtin()
    if name not in _labs:
        raise ConfigError(f"unknown lab {name!r}; known labs: {', '.join(names())}")
    return _labs[name]


def for_report(name: str) -> Lab:
    """The lab that wrote a result, or the generic parts for a result of a lab not registered here."""
    _load_builtin()
    return _labs.get(name) or Lab()


def names() -> list[str]:
    _load_builtin()
    return list(_labs)


def labs() -> list[Lab]:
    _load_builtin()
    return list(_labs.values())


_loaded = False


def _load_builtin() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN:
        for lab in importlib.import_module(module).LABS:
            register(lab)
