"""Write tests/durations.json, the seconds each group of the suite took (a module, or a package sharing one cluster),
from the JUnit XML of a full run: `make test PYTEST_ARGS=--junitxml=/tmp/junit.xml`, then
`python tools/test_durations.py /tmp/junit.xml`. tests/conftest.py hands the groups to the suite's workers longest
first from it; a quick group is left out, and one it does not list yet is placed as the median integration
module."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

MIN_S = 1.0  # a group quicker than this is left out: it fills the end of the run wherever it lands
OUT = Path(__file__).resolve().parents[1] / "tests" / "durations.json"


def group_seconds(junit: Path) -> dict[str, float]:
    """Seconds per xdist group (a test's id ends in `@group` under --dist loadgroup), setup and teardown included."""
    seconds: Counter[str] = Counter()
    for case in ElementTree.parse(junit).iter("testcase"):
        name = case.get("name", "")
        if "@" not in name:
            raise SystemExit(f"{junit}: test {name!r} carries no xdist group: write it from `make test` (--dist loadgroup)")
        seconds[name.rsplit("@", 1)[1]] += float(case.get("time", 0))
    return dict(seconds)


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit(__doc__)
    seconds = group_seconds(Path(argv[0]))
    kept = {group: round(s, 1) for group, s in sorted(seconds.items()) if s >= MIN_S}
    OUT.write_text(json.dumps(kept, indent=1) + "\n")
    print(f"{OUT}: {len(kept)} of {len(seconds)} groups, {sum(seconds.values()):,.0f} s in all")


if __name__ == "__main__":
    main(sys.argv[1:])
