"""What `kafkabench monitor` shows per window: the window table, which a terminal keeps updated in place, and for a
log the lines worth keeping from 0.5 s windows over hours: a line when a broker's state changes, and a summary each
minute of the watch."""

from __future__ import annotations

from collections import Counter

from kafkabench.labs.monitor.report import DOWN, why_down, window_tables
from kafkabench.report.table import Screen

SUMMARY_EVERY_S = 60.0
SUMMED = ("sent", "received", "lost", "failed", "duplicated", "out_of_order")
STATUS_ORDER = ("OK", "WARNING", "REWIND", "STALL", "STOP")


class Screens:
    """One Screen per window, in order: it remembers each broker's last state, to write a line when it changes, and the
    probe counts since the last summary, which it writes at the first window ending at or after each minute."""

    def __init__(self) -> None:
        self._states: dict[str, str] = {}
        self._sums = dict.fromkeys(SUMMED, 0)
        self._summed_since_s = 0.0
        self._next_summary_s = SUMMARY_EVERY_S

    def next(self, window: dict) -> Screen:
        t_s = window["t_s"]
        lines = [f"t={t_s:.1f} s  {change}" for change in self._changes(window["brokers"])]
        for figures in window["brokers"].values():
            for name in SUMMED:
                self._sums[name] += figures[name]
        if t_s >= self._next_summary_s:
            lines.append(f"t={t_s:.1f} s  {self._summary(window)}")
            self._sums = dict.fromkeys(SUMMED, 0)
            self._summed_since_s = t_s
            self._next_summary_s = (t_s // SUMMARY_EVERY_S + 1) * SUMMARY_EVERY_S  # a stalled watch skips minutes
        return Screen(window_tables(window), lines)

    def _changes(self, brokers: dict) -> list[str]:
        changes = []
        for broker, figures in brokers.items():
            before, now = self._states.get(broker), figures["state"]
            if before is None:
                changes.append(f"broker {broker}: {_word(now)}")
            elif before != now:
                changes.append(f"broker {broker}: {_word(before)} -> {_word(now)}")
            self._states[broker] = now
        for broker in [b for b in self._states if b not in brokers]:
            changes.append(f"broker {broker}: {_word(self._states.pop(broker))} -> no longer reported")
        return changes

    def _summary(self, window: dict) -> str:
        span_s = window["t_s"] - self._summed_since_s
        span = "last minute" if abs(span_s - SUMMARY_EVERY_S) < 1 else f"last {span_s:.0f} s"
        s = self._sums
        probes = f"{s['sent']:,} probes sent, {s['received']:,} read back, {s['lost']:,} lost, {s['failed']:,} failed"
        probes += "".join(f", {s[name]:,} {name.replace('_', ' ')}" for name in ("duplicated", "out_of_order")
                          if s[name])
        clauses = [f"brokers: {_brokers(window['brokers'])}", f"{span}: {probes}"]
        if window["groups"]:
            clauses.append(f"groups: {_statuses(window['groups'])}")
        restarted = [f"{name} {part['restarts']}" + (" (restarting)" if part["state"] != "running" else "")
                     for name, part in window["parts"].items() if part["restarts"] or part["state"] != "running"]
        if restarted:
            clauses.append(f"restarts since the start: {', '.join(restarted)}")
        return "; ".join(clauses)


def _word(state: str) -> str:
    """A state in a log line: up, down (fenced), down (not answering), unknown."""
    return f"down ({state})" if state in DOWN else state


def _brokers(brokers: dict) -> str:
    states = Counter("down" if f["state"] in DOWN else f["state"] for f in brokers.values())
    ordered = [s for s in ("up", "down", "unknown") if s in states] + sorted(set(states) - {"up", "down", "unknown"})
    down = [f"{broker}: {why_down(f['state'], f['state_for_s'])}" for broker, f in brokers.items()
            if f["state"] in DOWN]
    return (", ".join(f"{states[s]} {s}" for s in ordered) or "none") + (f" ({', '.join(down)})" if down else "")


def _statuses(groups: dict) -> str:
    statuses = Counter(g["status"] for g in groups.values())
    ordered = [s for s in STATUS_ORDER if s in statuses] + sorted(set(statuses) - set(STATUS_ORDER))
    return ", ".join(f"{statuses[s]} {s}" for s in ordered)
