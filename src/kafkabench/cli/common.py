"""Options and helpers every lab command shares."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Optional

import typer

from kafkabench.config.properties import Setting, parse_overrides, read_properties_file

BootstrapOption = typer.Option(None, "--bootstrap-servers", "-b", help="An existing cluster; default: the running embedded one, or one started for this run.")
ProducerConfigOption = typer.Option(None, "--producer-config", help="Java-style .properties file of producer settings.")
ConsumerConfigOption = typer.Option(None, "--consumer-config", help="Java-style .properties file of consumer settings.")
OverrideOption = typer.Option([], "-X", help="Client setting KEY=VALUE in Java names, for the producer, the consumer or both (repeatable).")
TopicConfigOption = typer.Option([], "--topic-config", help="Topic setting KEY=VALUE (repeatable).")
OutOption = typer.Option(None, "--out", help="Result directory; default: results/<lab>-<time>.")
JsonOption = typer.Option(False, "--json", help="Print the result document (DESIGN.md contract) on stdout.")


def config_file(path: Optional[Path]) -> dict[str, Setting]:
    return read_properties_file(path) if path is not None else {}


def overrides(items: list[str], option: str = "-X") -> dict[str, Setting]:
    return parse_overrides(items, option)


def out_dir(lab: str, given: Optional[Path]) -> Path:
    return given or Path("results") / f"{lab}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
