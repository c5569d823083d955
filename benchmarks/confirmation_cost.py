"""What does --confirm cost in plan time? A confirmed run directory's plan round against its confirmation round.

    .venv/bin/python benchmarks/confirmation_cost.py RUN_DIR [RUN_DIR ...]

Reads run.json (the plan's cells) and confirm/run.json (the cells behind its verdicts, run again) of each
directory `kafkabench run PLAN --confirm` or `kafkabench compare RUN --confirm` wrote, and prints per directory the
cells and the seconds of each round (the sum of the cells' own durations: cluster starts left out, the same in
both) and the ratio confirmation / plan, with the verdicts confirmed and replicated from cost.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def seconds(run_json: Path) -> tuple[int, float]:
    cells = json.loads(run_json.read_text())["cells"]
    return len(cells), sum(cell["duration_s"] or 0 for cell in cells)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for directory in map(Path, sys.argv[1:]):
        plan_cells, plan_s = seconds(directory / "run.json")
        table = json.loads((directory / "cost.json").read_text())
        called = [m for cost in table["costs"] for m in cost["metrics"]
                  if m["verdict"] in ("regression", "improvement")]
        if not (directory / "confirm" / "run.json").is_file():
            print(f"{directory}: {len(called)} verdict(s), no confirmation round")
            continue
        confirm_cells, confirm_s = seconds(directory / "confirm" / "run.json")
        held = sum(1 for m in called if m.get("confirmed"))
        print(f"{directory}: plan {plan_cells} cells {plan_s:.0f} s; confirmation {confirm_cells} cells "
              f"{confirm_s:.0f} s: {confirm_s / plan_s:.2f} of the plan's time, for {len(called)} verdict(s), "
              f"{held} replicated")


if __name__ == "__main__":
    main()
