"""Options every lab command shares, beside the ones its scenario model gives it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Optional

import typer

from kafkabench.cli.output import abort

BootstrapOption = typer.Option(None, "--bootstrap-servers", "-b", help="An existing cluster; default: the running embedded one, or one started for this run.")
OutOption = typer.Option(None, "--out", help="Result directory; default: results/<lab>-<time>.")
WideOption = typer.Option(False, "--wide", help="Every column of the tables (the HTML report and the CSV always have them).")
JsonOption = typer.Option(False, "--json", help="Print the result document (the contract in docs/design.md) on stdout.")

LauncherOption = typer.Option("local", "--launcher", help="Where the workers run: local (subprocesses here) or ray (actors on a Ray cluster, one per node).")
RayAddressOption = typer.Option(None, "--ray-address", envvar="RAY_ADDRESS", help="The Ray cluster for --launcher ray, HOST:PORT (`kafkabench ray up` starts one here).")
SpreadOption = typer.Option("spread", "--spread", help="--launcher ray: spread (one worker per node) or pack (several per node).")
FdrOption = typer.Option(0.05, "--fdr", metavar="RATE", help="The false discovery rate across a table's verdicts (Benjamini-Hochberg): a change is called only when its q-value is below it; in (0, 0.5].")
CrossHostE2eOption = typer.Option(False, "--cross-host-e2e", help="--launcher ray: consumers read what producers on other nodes wrote, e2e read across two nodes' clocks (within their measured bounds); default: producer i and consumer i share a node and its partitions.")


def out_dir(lab: str, given: Optional[Path]) -> Path:
    return given or Path("results") / f"{lab}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def check_fdr(fdr: float) -> float:
    """--fdr refused in one line outside (0, 0.5]."""
    from kafkabench.report.family import FdrError, check_fdr as checked  # numpy loads only when verdicts are made

    try:
        return checked(fdr)
    except FdrError as exc:
        abort(str(exc))
