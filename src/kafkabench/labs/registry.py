"""Labs by name (hatch's plug-ins keyed by a name): the built-in ones, and any registered at run time.
Plans, the runner, the CLI and the report find a lab here and nowhere else."""

from __future__ import annotations

import importlib

from kafkabench.errors import ConfigError
from kafkabench.labs.base import Lab

# each lab's name and the module whose LABS holds it: a new lab adds its line here. A lab's module is imported when
# that lab is first asked for (a `kafkabench latency` call builds the latency lab alone: 0.85 of the CPU it starts on
# with every lab built, benchmarks/cli_startup.py)
BUILTIN = {"latency": "kafkabench.labs.latency", "produce": "kafkabench.labs.throughput",
           "consume": "kafkabench.labs.throughput", "compression": "kafkabench.labs.compression",
           "durability": "kafkabench.labs.durability", "delivery": "kafkabench.labs.delivery.lab",
           "monitor": "kafkabench.labs.monitor.lab", "max-rate": "kafkabench.labs.capacity",
           "backlog": "kafkabench.labs.capacity", "tune": "kafkabench.labs.tune", "groups": "kafkabench.labs.groups",
           "omb": "kafkabench.labs.omb"}

_labs: dict[str, Lab] = {}
_imported: set[str] = set()


def register(lab: Lab) -> Lab:
    _load_builtin()
    return _add(lab)


def unregister(name: str) -> None:
    _labs.pop(name, None)


def get(name: str) -> Lab:
    if name in BUILTIN:
        _import(BUILTIN[name])
    if name not in _labs:
        raise ConfigError(f"unknown lab {name!r}; known labs: {', '.join(names())}")
    return _labs[name]


def for_report(name: str) -> Lab:
    """The lab that wrote a result, or the generic parts for a result of a lab not registered here."""
    return get(name) if name in BUILTIN or name in _labs else Lab()


def names() -> list[str]:
    """The built-in labs in BUILTIN's order, then those registered at run time; none imported to say so."""
    return [*BUILTIN, *(name for name in _labs if name not in BUILTIN)]


def labs() -> list[Lab]:
    _load_builtin()
    return [_labs[name] for name in names()]


def _add(lab: Lab) -> Lab:
    if not lab.name:
        raise ConfigError(f"{type(lab).__name__} has no name")
    existing = _labs.get(lab.name)
    if existing is not None and existing is not lab:
        raise ConfigError(f"two labs are named {lab.name!r}: {type(existing).__module__}.{type(existing).__name__} and "
                          f"{type(lab).__module__}.{type(lab).__name__}")
    _labs[lab.name] = lab
    return lab


def _import(module: str) -> None:
    if module not in _imported:
        for lab in importlib.import_module(module).LABS:
            _add(lab)
        _imported.add(module)


def _load_builtin() -> None:
    for module in dict.fromkeys(BUILTIN.values()):
        _import(module)
