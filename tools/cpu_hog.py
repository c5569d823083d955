"""A bounded busy process on one core: the machine a CI run gets when other work shares it (`make test-stress`).

Spins on the last core (or the one given) until its time is up or it is told to stop (SIGTERM), whichever comes
first, so a hog whose starter died still ends by itself.

    python tools/cpu_hog.py [--seconds 3600] [--core N]
"""

from __future__ import annotations

import argparse
import os
import signal
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3600.0, help="the most it may run (default: an hour)")
    parser.add_argument("--core", type=int, default=max(os.sched_getaffinity(0)), help="the core it spins on")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.core})
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    deadline = time.monotonic() + args.seconds
    spins = 0
    while time.monotonic() < deadline:  # the clock read between spins keeps it bounded
        for _ in range(100_000):
            spins += 1


if __name__ == "__main__":
    main()
