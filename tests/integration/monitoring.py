"""Running `kafkabench monitor` in a thread of a test, its windows collected as the JSON lines it emits; its
endpoint's samples and its parts' processes."""

import json
import os
import re
import threading
import urllib.request

from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.labs.monitor.run import run_monitor
from kafkabench.labs.monitor.scenario import MonitorScenario
from kafkabench.waiting import wait_until


class Windows(Listener):
    def __init__(self) -> None:
        self.lines: list[dict] = []

    def window(self, role, entry) -> None:
        self.lines.append(json.loads(entry))


def monitor_in_background(target: Target, out_dir, **fields):
    """(the thread, its windows as they come, a dict that gets the result document) of a monitor run; setting
    done["stop"] ends the watch before its duration."""
    windows, done = Windows(), {"stop": threading.Event()}
    scenario = MonitorScenario(json_lines=True, **fields)
    thread = threading.Thread(target=lambda: done.update(document=run_monitor(scenario, target, out_dir, windows,
                                                                              done["stop"])), daemon=True)
    thread.start()
    return thread, windows, done


STEADY_WINDOWS = 4


def wait_steady(thread, windows, timeout_s: float = 60) -> None:
    """Until the last 4 windows saw all three brokers, probes of each came back and none was lost: the monitor's start
    is behind it (on a loaded machine its first probes can outlast the SLA, and the windows before its probe topic was
    ready sent none: kb-ci149 and stop 70's CI took 4 of those for steady and faulted a broker before any probe)."""
    def steady() -> bool:
        assert thread.is_alive(), f"the monitor ended after {len(windows.lines)} windows, never steady"
        last = windows.lines[-STEADY_WINDOWS:]
        if len(last) < STEADY_WINDOWS or any(len(w["brokers"]) != 3 for w in last):
            return False
        clean = all(b["lost"] == b["failed"] == 0 for w in last for b in w["brokers"].values())
        return clean and all(sum(w["brokers"][broker]["received"] for w in last) > 0 for broker in last[0]["brokers"])

    wait_until(steady, timeout_s=timeout_s, interval_s=0.1,
               what=f"{STEADY_WINDOWS} monitor windows in a row, every broker's probes back")


SAMPLE = re.compile(r'^(\w+)\{(.*)\} (\S+)$')


def samples(port: int, name: str) -> dict[tuple, float]:
    """The endpoint's samples of `name`: {sorted label items: value}; raises OSError when it does not answer."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    found = {}
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match and match[1] == name:
            labels = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', match[2])))
            found[labels] = float(match[3])
    return found


def part_pid(name: str) -> int | None:
    """The pid of this test process's monitor part `name`, if one runs."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat, open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                command = cmdline.read().split(b"\0")
        except OSError:
            continue  # it ended while we looked
        if parent == os.getpid() and b"kafkabench.labs.monitor.part_main" in command and name.encode() in command:
            return int(entry)
    return None
