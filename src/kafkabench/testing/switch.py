"""The `pytest11` entry point `kafkabench`. pytest loads every installed plugin's entry point in every run, so this
one does nothing unless asked: `-p kafkabench` (on the command line, in `addopts` or PYTEST_ADDOPTS) turns the
plugin (`kafkabench.testing.plugin`) on. A conftest.py can also load it by its module name."""

from __future__ import annotations

import pytest

NAME = "kafkabench"
PLUGIN = "kafkabench.testing.plugin"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if NAME in (config.getoption("plugins", None) or []):
        config.pluginmanager.import_plugin(PLUGIN)
