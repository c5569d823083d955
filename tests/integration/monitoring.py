"""Running `kafkabench monitor` in a thread of a test, its windows collected as the JSON lines it emits."""

import json
import threading

from kafkabench.cluster.target import Target
from kafkabench.core.events import Listener
from kafkabench.labs.monitor.run import run_monitor
from kafkabench.labs.monitor.scenario import MonitorScenario


class Windows(Listener):
    def __init__(self) -> None:
        self.lines: list[dict] = []

    def window(self, role, entry) -> None:
        self.lines.append(json.loads(entry))


def monitor_in_background(target: Target, out_dir, **fields):
    """(the thread, its windows as they come, a dict that gets the result document) of a monitor run."""
    windows, done = Windows(), {}
    scenario = MonitorScenario(json_lines=True, **fields)
    thread = threading.Thread(target=lambda: done.update(document=run_monitor(scenario, target, out_dir, windows)),
                              daemon=True)
    thread.start()
    return thread, windows, done
