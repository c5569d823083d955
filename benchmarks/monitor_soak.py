"""Soak: does `kafkabench monitor` stay up through half an hour of broker faults, raise the right alert for the right
broker in a real Prometheus, clear it after the heal, and keep its memory flat?

    .venv/bin/python benchmarks/monitor_soak.py [--minutes 30] [--fault-every 5] [--pause-for 3] [--kill-for 2]
        [--interval 1] [--out DIR] [--network]

Starts its own embedded cluster (3 brokers beside a dedicated KRaft controller), writes the monitoring files with
`kafkabench monitor --write-config` and starts a real Prometheus on them (Debian's /usr/bin/prometheus, installed
with apt-get when missing, as root), at the written scrape and evaluation interval (5 s: the command has no option
for another). Then `kafkabench monitor --interval 1 --json-lines` runs as a process of its own (for --minutes + 1),
and every --fault-every minutes, the first one period in, comes the next fault of the cycle:

- pause: a broker SIGSTOPped for --pause-for minutes, then resumed;
- kill: a broker killed (kill -9) for --kill-for minutes, then restarted (healed once it serves metadata again);
- controller: the dedicated controller restarted;
- with --network (root): partition: a broker cut from the clients (the monitor) for --pause-for minutes, its replication
  untouched; slow: a broker's packets to the clients delayed SLOW_MS for --pause-for minutes. The cluster then runs
  on a network of its own and the cycle has five faults.

Pauses and kills take the brokers in turn, a cycle's pause and kill never the same broker. Every 5 s: Prometheus'
active alerts (name, labels, pending or firing), whether the monitor is alive, and the RSS of the monitor with all
its child processes (psutil, over the process tree). Targets, one verdict line each, with the figures:

- the monitor never exits (if it does: when, its exit code or signal, its last stderr line);
- each pause, kill and partition: KafkabenchBrokerDown{broker_id=<victim>} firing within the rule's `for` (read from the written
  alerts.yml) + 30 s of the fault, and gone within 2 minutes of the heal;
- no KafkabenchBrokerDown firing for a broker not under a fault (a broker is from its fault until its alert is gone
  after the heal, at most 2 minutes); pending ones are listed;
- RSS at the end <= 1.1 x RSS at 1 minute;
- nothing this run started is left running after it.

The controller restart's and the slow link's alerts are listed (expected: no KafkabenchBrokerDown, a slow broker is
not a down one; those active before it marked). After
--minutes the watch goes on (at most TAIL_S) while a heal's 2 minutes are still running; Ctrl-C stops everything
started, by pid, and judges what was seen (the run then misses its targets).

Written to --out (default: a new temporary directory, printed at the end): timeline.html (the faults as bands, a row
per alert and broker with its pending and firing periods, the RSS below; plotly inline, it opens offline), soak.json
(every sample, the faults, the verdicts), the monitor's windows (monitor.jsonl), stderr and result, the written
configuration and Prometheus' log. Exit code 0 when every target is met, else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from contextlib import ExitStack, suppress
from dataclasses import asdict, dataclass
from pathlib import Path

import plotly.graph_objects as go
import psutil
import yaml
from plotly.subplots import make_subplots

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.faults import CLIENTS, EmbeddedFaults
from kafkabench.processes import popen
from kafkabench.waiting import wait_until

PROMETHEUS = Path("/usr/bin/prometheus")
BROKER_DOWN = "KafkabenchBrokerDown"
SAMPLE_S = 5.0
FIRE_MARGIN_S = 30.0  # beyond the rule's `for`: a scrape and an evaluation interval, with room
RESOLVE_S = 120.0
SLOW_MS = 200  # --network's slow link: a cross-region hop, well within a probe's SLA
RSS_GROWTH = 1.1
MONITOR_EXTRA_S = 60  # the monitor watches longer than the soak: its own end is never taken for a crash
TAIL_S = 45  # < MONITOR_EXTRA_S
HTTP_TIMEOUT_S = 2
STOP_TIMEOUT_S = 30
FAULT_JOIN_S = 150  # a restart under way ends within the cluster's startup timeout (120 s)
INSTALL_TIMEOUT_S = 600


@dataclass
class Fault:
    kind: str  # pause, kill, controller, partition, slow
    node: int
    at_s: float
    lasts_s: float
    fired_s: float | None = None
    healed_s: float | None = None
    error: str | None = None
    cleared_s: float | None = None  # its BrokerDown gone after the heal (set when judged)

    @property
    def label(self) -> str:
        if self.kind == "controller":
            return f"restart controller {self.node}"
        return f"slow link of broker {self.node} ({SLOW_MS} ms)" if self.kind == "slow" else f"{self.kind} broker {self.node}"

    @property
    def quiet(self) -> bool:
        """A fault that should raise no BrokerDown: the controller's restart, a slow link."""
        return self.kind in ("controller", "slow")

    def covers(self, broker: str, t_s: float) -> bool:
        """Whether a BrokerDown for `broker` at `t_s` is this fault's: from the fault until the alert is gone after the
        heal (at most RESOLVE_S after it). One raised again later is not."""
        if self.quiet or str(self.node) != broker or self.fired_s is None:
            return False
        healed = self.healed_s if self.healed_s is not None else float("inf")
        return self.fired_s <= t_s < (self.cleared_s if self.cleared_s is not None else healed + RESOLVE_S)


def schedule(args, brokers: list[int], controller: int) -> list[Fault]:
    faults, every, k = [], args.fault_every * 60, 1
    kinds = ("pause", "kill", "controller", "partition", "slow") if args.network else ("pause", "kill", "controller")
    while k * every < args.minutes * 60:
        cycle, step = divmod(k - 1, len(kinds))
        kind = kinds[step]
        if kind == "controller":
            faults.append(Fault("controller", controller, k * every, 0))
        else:
            lasts = args.kill_for if kind == "kill" else args.pause_for
            faults.append(Fault(kind, brokers[(cycle + step) % len(brokers)], k * every, lasts * 60))
        k += 1
    return faults


class FaultRunner(threading.Thread):
    """Fires the faults on schedule; `stop` ends the wait of a fault under way (a paused broker is still resumed)."""

    def __init__(self, cluster: EmbeddedCluster, faults: list[Fault], t0: float, stop: threading.Event) -> None:
        super().__init__(name="faults", daemon=True)
        self.cluster, self.faults, self.t0, self.stop = cluster, faults, t0, stop
        self.pids: set[int] = set()  # every node process a restart started: each must be gone at the end

    def now(self) -> float:
        return time.monotonic() - self.t0

    def run(self) -> None:
        for fault in self.faults:
            if self.stop.wait(max(0.0, fault.at_s - self.now())):
                return
            try:
                self.fire(fault)
            except Exception as exc:  # noqa: BLE001 - recorded as data: the verdict says the fault went wrong
                fault.error = f"{type(exc).__name__}: {exc}"
                say(self.now(), f"{fault.label}: {fault.error}")

    def fire(self, fault: Fault) -> None:
        if fault.kind == "controller":
            fault.fired_s = self.now()
            say(fault.fired_s, f"{fault.label}: restarting")
            self.cluster.restart_broker(fault.node)
            self.pids.add(self.cluster.state.node(fault.node).pid)
        elif fault.kind in ("partition", "slow"):
            faults = EmbeddedFaults(self.cluster)
            impairment = faults.cut(fault.node, [CLIENTS]) if fault.kind == "partition" \
                else faults.delay(fault.node, SLOW_MS, to=CLIENTS)
            fault.fired_s = self.now()
            say(fault.fired_s, f"{fault.label}: fired, for {fault.lasts_s / 60:g} min")
            try:
                self.stop.wait(max(0.0, fault.fired_s + fault.lasts_s - self.now()))
            finally:
                faults.heal(impairment)
        else:
            (self.cluster.pause_broker if fault.kind == "pause" else self.cluster.kill_broker)(fault.node)
            fault.fired_s = self.now()
            say(fault.fired_s, f"{fault.label}: fired, for {fault.lasts_s / 60:g} min")
            try:
                self.stop.wait(max(0.0, fault.fired_s + fault.lasts_s - self.now()))
            finally:
                if fault.kind == "pause":
                    self.cluster.resume_broker(fault.node)
            if fault.kind == "kill":
                if self.stop.is_set():
                    return
                self.cluster.restart_broker(fault.node)
                self.pids.add(self.cluster.state.node(fault.node).pid)
        fault.healed_s = self.now()
        say(fault.healed_s, f"{fault.label}: healed")


def say(t_s: float, text: str) -> None:
    print(f"{t_s / 60:6.2f} min  {text}", flush=True)


class Soak:
    """The state of one soak: the processes it watches, its samples, the monitor's end."""

    def __init__(self, monitor: subprocess.Popen, prometheus: str, faults: list[Fault], out: Path) -> None:
        self.monitor, self.prometheus, self.faults, self.out = monitor, prometheus, faults, out
        self.t0 = time.monotonic()
        self.samples: list[dict] = []
        self.exit: dict | None = None
        self.interrupted_s: float | None = None
        self.tree_pids: set[int] = set()
        self._states: dict[str, str] = {}
        self._reader: threading.Thread | None = None
        self._read: dict = {}

    def now(self) -> float:
        return time.monotonic() - self.t0

    def observe(self, end_s: float) -> None:
        while self.now() < end_s + TAIL_S and (self.now() < end_s or self._healing(self.now())):
            self.samples.append(self.sample())
            time.sleep(SAMPLE_S - self.now() % SAMPLE_S)  # the next tick: a late sample skips those it missed

    def _healing(self, t_s: float) -> bool:
        return any(not f.quiet and f.error is None and (f.healed_s is None or f.healed_s + RESOLVE_S > t_s)
                   for f in self.faults)

    def sample(self) -> dict:
        t_s, took = self.now(), {}
        alerts, error = timed(took, "alerts", self._alerts)
        if self.monitor.poll() is not None and self.exit is None:
            code = self.monitor.returncode
            self.exit = {"t_s": t_s, "returncode": code, "signal": signal.Signals(-code).name if code < 0 else None,
                         "stderr": tail(self.out / "monitor.stderr")}
            say(t_s, f"the monitor exited: {exit_text(self.exit)}")
        rss, pids = timed(took, "rss", self._rss) if self.exit is None else (None, [])
        self.tree_pids.update(pids)
        self._say_changes(t_s, alerts)
        return {"t_s": round(t_s, 3), "monitor_alive": self.exit is None, "rss_bytes": rss, "pids": pids,
                "alerts": alerts, "prometheus_error": error, "scraped": timed(took, "scraped", self._scraped),
                "took_s": took}

    def _rss(self) -> tuple[int | None, list[int]]:
        """Read by a thread of its own, given SAMPLE_S / 2: a read of /proc can block in the kernel, and the
        sampler keeps its cadence (a read still blocked is not started again)."""
        if self._reader is None or not self._reader.is_alive():
            self._reader = threading.Thread(target=lambda: self._read.update(rss=tree_rss(self.monitor.pid)),
                                            name="rss", daemon=True)
            self._reader.start()
        self._reader.join(SAMPLE_S / 2)
        return self._read.pop("rss", (None, []))

    def _alerts(self) -> tuple[list[dict], str | None]:
        try:
            body = get_json(f"{self.prometheus}/api/v1/alerts")
        except (OSError, ValueError) as exc:
            return [], str(exc)
        return [{"name": a["labels"].get("alertname"), "state": a["state"], "active_at": a.get("activeAt"),
                 "labels": {k: v for k, v in a["labels"].items() if k != "alertname"}}
                for a in body["data"]["alerts"]], None

    def _scraped(self) -> bool | None:
        """Whether Prometheus' last scrape of the monitor succeeded (up == 1)."""
        try:
            result = get_json(f"{self.prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": "up"}))
        except (OSError, ValueError):
            return None
        return any(float(series["value"][1]) == 1 for series in result["data"]["result"])

    def _say_changes(self, t_s: float, alerts: list[dict]) -> None:
        states = row_states(alerts)
        for key in sorted(set(states) | set(self._states)):
            if states.get(key) != self._states.get(key):
                say(t_s, f"alert {key}: {states.get(key, 'resolved')}")
        self._states = states


def timed(took: dict, name: str, call):
    begun = time.monotonic()
    try:
        return call()
    finally:
        took[name] = round(time.monotonic() - begun, 3)


def row_states(alerts: list[dict]) -> dict[str, str]:
    """Per row (alert name and broker or part), firing if any of its alerts fires, else pending."""
    states: dict[str, str] = {}
    for alert in alerts:
        key = row_of(alert)
        states[key] = "firing" if "firing" in (alert["state"], states.get(key)) else alert["state"]
    return states


def row_of(alert: dict) -> str:
    which = ",".join(f'{k}="{alert["labels"][k]}"' for k in ("broker_id", "part") if k in alert["labels"])
    return f"{alert['name']}{{{which}}}" if which else alert["name"]


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as answer:
        return json.load(answer)


def tree_rss(pid: int) -> tuple[int | None, list[int]]:
    """RSS summed over the process and all its descendants, and their pids."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return None, []
    total, pids = 0, []
    for process in processes:
        try:
            total += process.memory_info().rss
            pids.append(process.pid)
        except psutil.NoSuchProcess:
            pass  # ended between the listing and the reading
    return total, pids


def tail(path: Path) -> str:
    lines = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
    return lines[-1] if lines else ""


def exit_text(end: dict) -> str:
    how = f"signal {end['signal']}" if end["signal"] else f"exit code {end['returncode']}"
    return f"{how} at {end['t_s'] / 60:.2f} min" + (f" ({end['stderr']})" if end["stderr"] else "")


# ---- the processes ------------------------------------------------------------------------------------------------


def ensure_prometheus() -> None:
    """Debian's prometheus when missing, as tests/integration/test_monitor.py installs it (root and apt-get)."""
    if PROMETHEUS.exists():
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise SystemExit("monitor_soak: /usr/bin/prometheus is missing; install it (apt-get install prometheus)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "prometheus"]
    for command in (install, ["apt-get", "update"], install):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        if command is install and done.returncode == 0:
            return
    raise SystemExit(f"monitor_soak: apt-get install prometheus failed: {done.stderr.strip()[-300:]}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_config(directory: Path, metrics_port: int) -> dict[str, float]:
    """The monitoring files written by the monitor itself; each alert rule's `for` in seconds."""
    done = subprocess.run([sys.executable, "-m", "kafkabench", "monitor", "--write-config", str(directory),
                           "--metrics-port", str(metrics_port)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"monitor_soak: kafkabench monitor --write-config failed: {done.stderr.strip()[-300:]}")
    rules = yaml.safe_load((directory / "alerts.yml").read_text())
    return {rule["alert"]: seconds(rule.get("for", "0s")) for group in rules["groups"] for rule in group["rules"]
            if "alert" in rule}


def seconds(duration: str) -> float:
    """A Prometheus duration (`1m30s`) in seconds."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return sum(float(n) * units[unit] for n, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)", str(duration)))


def start_prometheus(config: Path, storage: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    with log.open("ab") as output:
        server = popen([str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={storage}",
                        f"--web.listen-address=127.0.0.1:{port}"], stdin=subprocess.DEVNULL, stdout=output,
                       stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if server.poll() is not None:
            raise SystemExit(f"monitor_soak: Prometheus exited at start-up: {tail(log)}")
        try:
            return get_json(f"{url}/api/v1/status/buildinfo")["status"] == "success"
        except (OSError, ValueError):
            return False

    wait_until(ready, timeout_s=60, what="Prometheus to answer", interval_s=0.5)
    return server, url


def start_monitor(bootstrap: str, args, metrics_port: int, out: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "kafkabench", "monitor", "-b", bootstrap, "--interval", str(args.interval),
               "--metrics-port", str(metrics_port), "--duration", str(args.minutes * 60 + MONITOR_EXTRA_S),
               "--json-lines", "--out", str(out / "monitor-result")]
    with (out / "monitor.jsonl").open("wb") as stdout, (out / "monitor.stderr").open("wb") as stderr:
        # a session of its own: a Ctrl-C here reaches the soak, which stops the monitor by its pid
        return popen(command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, start_new_session=True)


def stop_process(process: subprocess.Popen, first: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(first)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def left_running(pids: set[int], since: float) -> list[int]:
    """Those of `pids` still alive that were started by this run (a reused pid is someone else's)."""
    alive = []
    for pid in pids:
        try:
            process = psutil.Process(pid)
            if process.create_time() >= since and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return sorted(alive)


# ---- the verdicts -------------------------------------------------------------------------------------------------


def active_times(samples: list[dict], name: str, broker: str, states: tuple[str, ...]) -> list[float]:
    return [s["t_s"] for s in samples if any(a["name"] == name and a["labels"].get("broker_id") == broker
                                             and a["state"] in states for a in s["alerts"])]


def judge(soak: Soak, rules: dict[str, float], leaked: list[int]) -> list[dict]:
    verdicts = [verdict("the soak ran to its end", False, f"interrupted at {soak.interrupted_s / 60:.2f} min")] \
        if soak.interrupted_s is not None else []
    verdicts += [judge_alive(soak)]
    verdicts += [judge_fault(soak.samples, f, rules) for f in soak.faults if not f.quiet]  # sets cleared_s
    verdicts += [judge_false_alarms(soak.samples, soak.faults, rules), judge_rss(soak.samples)]
    verdicts += [judge_quiet(soak.samples, soak.faults, f) for f in soak.faults if f.quiet]
    return verdicts + [verdict("nothing left running", not leaked, "processes of this run alive after the stop: "
                               + (", ".join(map(str, leaked)) + " (killed now)" if leaked else "none"))]


def verdict(name: str, met: bool, line: str) -> dict:
    return {"target": name, "met": met, "line": f"{line}: {'met' if met else 'MISSED'}"}


def judge_alive(soak: Soak) -> dict:
    watched = soak.samples[-1]["t_s"] / 60 if soak.samples else 0
    if soak.exit:
        return verdict("monitor never exits", False, f"the monitor (pid {soak.monitor.pid}) exited: "
                       f"{exit_text(soak.exit)}, of {watched:.2f} min watched")
    return verdict("monitor never exits", True, f"the monitor (pid {soak.monitor.pid}) alive for all {watched:.2f} min "
                   f"({len(soak.samples)} samples)")


def judge_fault(samples: list[dict], fault: Fault, rules: dict[str, float]) -> dict:
    name, broker = f"{fault.label} for {fault.lasts_s / 60:g} min", str(fault.node)
    if fault.fired_s is None or fault.error:
        return verdict(name, False, f"{fault.label}: not carried out ({fault.error or 'not fired'})")
    span = f"{fault.label} at {fault.fired_s / 60:.2f}-" + (f"{fault.healed_s / 60:.2f} min" if fault.healed_s else "?")
    if BROKER_DOWN not in rules:
        return verdict(name, False, f"{span}: the written alerts.yml has no {BROKER_DOWN} rule")
    limit, alert = rules[BROKER_DOWN] + FIRE_MARGIN_S, f'{BROKER_DOWN}{{broker_id="{broker}"}}'
    firing = [t for t in active_times(samples, BROKER_DOWN, broker, ("firing",)) if fault.covers(broker, t)]
    if not firing:
        pending = [t for t in active_times(samples, BROKER_DOWN, broker, ("pending",)) if fault.covers(broker, t)]
        seen = f"pending from {pending[0] / 60:.2f} min, never firing" if pending else "never pending nor firing"
        return verdict(name, False, f"{span}: {alert} {seen} (limit: for {rules[BROKER_DOWN]:g} s + 30 s)")
    after = firing[0] - fault.fired_s
    fired = (f"{span}: {alert} firing at {firing[0] / 60:.2f} min, {after:.0f} s after the fault "
             f"(limit: for {rules[BROKER_DOWN]:g} s + 30 s = {limit:g} s)")
    if fault.healed_s is None:
        return verdict(name, False, f"{fired}; never healed")
    active = set(active_times(samples, BROKER_DOWN, broker, ("pending", "firing")))
    fault.cleared_s = next((s["t_s"] for s in samples if s["t_s"] >= max(fault.healed_s, firing[0])
                            and s["t_s"] not in active), None)
    if fault.cleared_s is None:
        return verdict(name, False, f"{fired}; still active when the watch ended")
    cleared = fault.cleared_s - fault.healed_s
    return verdict(name, after <= limit and cleared <= RESOLVE_S, f"{fired}; gone at {fault.cleared_s / 60:.2f} min, "
                   f"{cleared:.0f} s after the heal (limit {RESOLVE_S:g} s)")


def judge_false_alarms(samples: list[dict], faults: list[Fault], rules: dict[str, float]) -> dict:
    """BrokerDown firing for a broker no fault covers then; the pending ones too, as a note (nobody is paged)."""
    name = f"no {BROKER_DOWN} for a broker not under a fault"
    wrong: dict[tuple[str, str], list[float]] = {}
    for sample in samples:
        for alert in (a for a in sample["alerts"] if a["name"] == BROKER_DOWN):
            broker = alert["labels"].get("broker_id", "?")
            if not any(f.covers(broker, sample["t_s"]) for f in faults):
                wrong.setdefault((alert["state"], broker), []).append(sample["t_s"])
    def found(which: str) -> str:
        return ", ".join(f"broker {b} at {ts[0] / 60:.2f}-{ts[-1] / 60:.2f} min ({len(ts)} polls)"
                         for (state, b), ts in sorted(wrong.items()) if state == which) or "never"

    vacuous = f" (vacuous: alerts.yml has no {BROKER_DOWN} rule)" if BROKER_DOWN not in rules else ""
    return verdict(name, found("firing") == "never", f"{name}, {len(samples)} polls: firing {found('firing')}; "
                   f"pending {found('pending')}{vacuous}")


def judge_rss(samples: list[dict]) -> dict:
    measured = [s for s in samples if s["rss_bytes"]]
    name = f"RSS at the end <= {RSS_GROWTH} x RSS at 1 min"
    if not measured:
        return verdict(name, False, f"{name}: no RSS measured")
    first = min(measured, key=lambda s: abs(s["t_s"] - 60))
    last = measured[-1]
    ratio = last["rss_bytes"] / first["rss_bytes"]
    return verdict(name, ratio <= RSS_GROWTH, f"RSS of the monitor and its children at {last['t_s'] / 60:.2f} / "
                   f"{first['t_s'] / 60:.2f} min: {last['rss_bytes'] / 2**20:.1f} / {first['rss_bytes'] / 2**20:.1f} "
                   f"MB = {ratio:.3f} ({len(last['pids'])} processes; target <= {RSS_GROWTH})")


def judge_quiet(samples: list[dict], faults: list[Fault], fault: Fault) -> dict:
    """Every alert active from the restart (or the slow link) until 2 minutes after it is back: those already active before it, and
    BrokerDown of a broker under a fault of its own, are marked."""
    name = f"{fault.label}: no {BROKER_DOWN}"
    if fault.fired_s is None or fault.error:
        return verdict(name, False, f"{fault.label}: not carried out ({fault.error or 'not fired'})")
    end = (fault.healed_s or samples[-1]["t_s"]) + RESOLVE_S
    before = row_states(next((s["alerts"] for s in reversed(samples) if s["t_s"] < fault.fired_s), []))
    seen: dict[str, str] = {}
    for sample in (s for s in samples if fault.fired_s <= s["t_s"] <= end):
        for alert in sample["alerts"]:
            key = row_of(alert) + (" (already active)" if row_of(alert) in before else "")
            if alert["name"] == BROKER_DOWN and any(f.covers(alert["labels"].get("broker_id", "?"), sample["t_s"])
                                                    for f in faults):
                key += " (a broker fault's)"
            seen[key] = "firing" if "firing" in (alert["state"], seen.get(key)) else alert["state"]
    down = [k for k, state in seen.items() if k.startswith(BROKER_DOWN) and "(a broker" not in k and state == "firing"]
    listed = ", ".join(f"{k} {state}" for k, state in sorted(seen.items())) or "none"
    took = f"{fault.healed_s - fault.fired_s:.0f} s" if fault.healed_s is not None else "not healed"
    return verdict(name, not down, f"{fault.label} at {fault.fired_s / 60:.2f} min (back in {took}); alerts until 2 "
                   f"min after: {listed}")


# ---- the chart ----------------------------------------------------------------------------------------------------


def alert_periods(samples: list[dict]) -> dict[str, list[tuple[float, float, str]]]:
    """Per row (alert name and broker or part): (from s, to s, state) runs, each to the sample that changed it."""
    rows: dict[str, list[tuple[float, float, str]]] = {}
    states = [row_states(s["alerts"]) for s in samples]
    for key in sorted({key for row in states for key in row}):
        runs, start, state = [], None, None
        for sample, row in zip(samples, states):
            now = row.get(key)
            if now != state:
                if state is not None:
                    runs.append((start, sample["t_s"], state))
                start, state = sample["t_s"], now
        if state is not None:
            runs.append((start, samples[-1]["t_s"] + SAMPLE_S, state))
        rows[key] = runs
    return rows


def write_chart(path: Path, soak: Soak) -> None:
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.7, 0.3], vertical_spacing=0.08,
                        subplot_titles=("Prometheus alerts (polled every 5 s)", "RSS of the monitor and its children"))
    rows = alert_periods(soak.samples)
    for state, color in (("pending", "#f0ad4e"), ("firing", "#d9534f")):
        spans = [(row, a, b) for row, runs in rows.items() for a, b, s in runs if s == state]
        fig.add_trace(go.Bar(orientation="h", name=state, marker_color=color, y=[r for r, _, _ in spans],
                             base=[a / 60 for _, a, _ in spans], x=[(b - a) / 60 for _, a, b in spans],
                             hovertemplate="%{y}: " + state + " %{base:.2f} min for %{x:.2f} min<extra></extra>"),
                      row=1, col=1)
    end = soak.samples[-1]["t_s"] / 60 if soak.samples else 0
    for fault in (f for f in soak.faults if f.fired_s is not None):
        x1 = max((fault.healed_s or end * 60) / 60, fault.fired_s / 60 + 0.05)  # a restart of seconds stays visible
        color = {"pause": "#5bc0de", "kill": "#777777", "controller": "#9b59b6", "partition": "#d9534f",
                 "slow": "#f0ad4e"}[fault.kind]
        fig.add_vrect(x0=fault.fired_s / 60, x1=x1, fillcolor=color, opacity=0.2, line_width=0, row=1, col=1,
                      exclude_empty_subplots=False,
                      annotation_text=fault.label, annotation_position="top left")
        fig.add_vrect(x0=fault.fired_s / 60, x1=x1, fillcolor=color, opacity=0.2, line_width=0, row=2, col=1,
                      exclude_empty_subplots=False)
    measured = [s for s in soak.samples if s["rss_bytes"]]
    fig.add_trace(go.Scatter(x=[s["t_s"] / 60 for s in measured], y=[s["rss_bytes"] / 2**20 for s in measured],
                             mode="lines+markers", name="RSS MB", customdata=[len(s["pids"]) for s in measured],
                             hovertemplate="%{x:.2f} min: %{y:.1f} MB in %{customdata} processes<extra></extra>"),
                  row=2, col=1)
    if soak.exit:
        fig.add_vline(x=soak.exit["t_s"] / 60, line_color="red", line_dash="dash",
                      annotation_text=f"monitor exited ({exit_text(soak.exit)[:60]})", row=1, col=1)
    if not rows:
        fig.add_annotation(text="no alert pending or firing", xref="x domain", yref="y domain", x=0.5, y=0.5,
                           showarrow=False, row=1, col=1)
    fig.update_layout(title="kafkabench monitor soak: faults against alerts", barmode="overlay",
                      height=420 + 28 * len(rows), xaxis2_title="minutes since the monitor started",
                      yaxis2_title="MB", yaxis_autorange="reversed", xaxis_range=[0, max(end, 0.1)],
                      xaxis2_range=[0, max(end, 0.1)])
    fig.write_html(path, include_plotlyjs=True)


# ---- the run ------------------------------------------------------------------------------------------------------


def soak_once(args, out: Path, work: Path) -> tuple[Soak, list[dict], dict]:
    begun = time.time()
    ensure_prometheus()
    metrics_port = free_port()
    rules = write_config(out / "config", metrics_port)
    written = yaml.safe_load((out / "config" / "prometheus.yml").read_text()).get("global", {})
    print(f"Prometheus as written: scrape every {written.get('scrape_interval')}, evaluate every "
          f"{written.get('evaluation_interval')}; alert rules (for): "
          + ", ".join(f"{n} {s:g} s" for n, s in rules.items()), flush=True)
    started: dict[str, set[int]] = {}
    # each process is stopped on the way out, whatever happens, in the reverse order of their starts
    network = "isolated" if args.network else "loopback"
    with EmbeddedCluster(brokers=3, controllers=1, directory=work / "cluster", network=network) as cluster, \
            ExitStack() as stack:
        started["nodes"] = {n.pid for n in cluster.state.nodes}
        prometheus, url = start_prometheus(out / "config" / "prometheus.yml", work / "tsdb", out / "prometheus.log")
        stack.callback(stop_process, prometheus)
        monitor = start_monitor(cluster.bootstrap_servers, args, metrics_port, out)
        stack.callback(stop_process, monitor, signal.SIGINT)  # the monitor's normal end: it writes its result
        started.update(prometheus={prometheus.pid}, monitor={monitor.pid})
        soak = Soak(monitor, url, schedule(args, cluster.broker_ids(), cluster.controller_ids()[0]), out)
        runner = FaultRunner(cluster, soak.faults, soak.t0, threading.Event())
        stack.callback(lambda: runner.is_alive() and runner.join(FAULT_JOIN_S))
        stack.callback(runner.stop.set)
        print(f"cluster {cluster.bootstrap_servers}, Prometheus {url} (pid {prometheus.pid}), monitor pid "
              f"{monitor.pid}; faults: " + ", ".join(f"{f.label} at {f.at_s / 60:g} min" for f in soak.faults),
              flush=True)
        try:
            runner.start()
            soak.observe(args.minutes * 60)
        except KeyboardInterrupt:
            soak.interrupted_s = soak.now()
            say(soak.interrupted_s, "interrupted: stopping everything this run started")
    started["nodes"] |= runner.pids
    started["monitor_tree"] = soak.tree_pids
    leaked = left_running(set().union(*started.values()), begun - 1)
    for pid in leaked:
        with suppress(psutil.NoSuchProcess):
            psutil.Process(pid).kill()
    facts = {"pids": {k: sorted(v) for k, v in started.items()}, "left_running": leaked, "rules_for_s": rules,
             "monitor_returncode_at_stop": monitor.returncode}
    return soak, judge(soak, rules, leaked), facts


def sampling(samples: list[dict]) -> str:
    times = [s["t_s"] for s in samples]
    gap = max((b - a for a, b in zip(times, times[1:])), default=0)
    answered, scraped = sum(not s["prometheus_error"] for s in samples), sum(bool(s["scraped"]) for s in samples)
    return (f"{len(times)} samples, the longest gap {gap:.0f} s; Prometheus answered {answered}, its last scrape of "
            f"the monitor up in {scraped}")


def interrupt(*_) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the soak as Ctrl-C does


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--fault-every", type=float, default=5, help="minutes")
    parser.add_argument("--pause-for", type=float, default=3, help="minutes")
    parser.add_argument("--kill-for", type=float, default=2, help="minutes")
    parser.add_argument("--interval", type=float, default=1, help="the monitor's --interval, seconds")
    parser.add_argument("--out", type=Path, help="default: a new temporary directory")
    parser.add_argument("--network", action="store_true",
                        help="the cluster on a network of its own (root), and a partition and a slow link in the cycle")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="kafkabench-monitor-soak-"))
    (out / "config").mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, interrupt)
    try:
        with tempfile.TemporaryDirectory(prefix="kafkabench-monitor-soak-") as work:
            soak, verdicts, facts = soak_once(args, out, Path(work))
    except KeyboardInterrupt:
        raise SystemExit("monitor_soak: interrupted before the watch began; everything started is stopped") from None
    (out / "soak.json").write_text(json.dumps({"settings": {k: str(v) for k, v in vars(args).items()}, **facts,
                                               "faults": [asdict(f) for f in soak.faults], "monitor_exit": soak.exit,
                                               "verdicts": verdicts, "samples": soak.samples}, indent=1))
    write_chart(out / "timeline.html", soak)
    print(f"\nmonitor soak: {args.minutes:g} min, a fault every {args.fault_every:g} min, monitor interval "
          f"{args.interval:g} s; {sampling(soak.samples)}; the monitor's exit code when stopped (SIGINT): "
          f"{facts['monitor_returncode_at_stop']}")
    for line in (v["line"] for v in verdicts):
        print(f"  {line}")
    print(f"written: {out / 'timeline.html'}, {out / 'soak.json'}")
    sys.exit(0 if all(v["met"] for v in verdicts) else 1)


if __name__ == "__main__":
    main()
