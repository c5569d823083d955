"""The durability lab's report parts: one row per cell in the seed's shape (topic settings, records/s, MB/s,
ms per message) with the latency percentiles it lacked, medians over repeats with a 95 % bootstrap interval,
and whether each cell differs from the fastest beyond noise (compare's permutation test, interval and effect
size). When the availability probe ran: what each distinct RF / min.insync / acks did with brokers down, and
on the chart, beside each cell's medians, what its settings did to writes with the most brokers down."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable

from kafkabench.core.results import ResultDocument, Run
from kafkabench.report.compare import MIN_EFFECT_PCT, compare_metric
from kafkabench.report.family import FDR, chance_text, judge_family, tested
from kafkabench.report.significance import median_interval
from kafkabench.report.table import Table, columns, fixed, ms, split_settings, stat
from kafkabench.report.verdict import MetricChange

TIPS = {"records/s": "records_per_s", "MB/s": "payload_mb_per_s", "publish p50": "publish_latency",
        "e2e p50": "e2e_under_load", "e2e p99": "e2e_under_load", "publish p99": "percentiles", "p99.9": "percentiles"}
NAMES = ["records/s", "records/s CI", "MB/s", "ms/msg", "publish p50", "publish p99", "p99 CI", "p99.9", "e2e p50",
         "e2e p99", "cpu s", "vs fastest", "why", "n"]
WIDE = ("records/s CI", "MB/s", "publish p50", "p99 CI", "p99.9", "e2e p50", "e2e p99", "cpu s", "why", "n")
AVAILABILITY_NAMES = ["RF", "min ISR", "acks", "down", "writes", "how", "stall s", "no ack s", "ISR shrunk s", "reads",
                      "read back", "ISR at the end"]
AVAILABILITY_WIDE = ("how", "stall s", "ISR shrunk s", "read back", "ISR at the end")
PAST = {"pause": "paused", "kill": "killed", "partition": "cut off"}
HOW = {"pause": "paused (SIGSTOP)", "kill": "killed (kill -9)", "partition": "cut off (network partition from every other node and the clients)"}
WRITES = {"accepted": "accepts writes", "refused": "refuses writes", "no answer": "leaves writes unanswered",
          "mixed": "accepts only some writes"}


@dataclass
class CellSummary:
    label: str
    client: str
    params: dict
    produce: list[Run] = field(default_factory=list)  # the repeats that finished
    consume: list[Run] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    versus: MetricChange | None = None

    def median(self, values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return statistics.median(present) if present else None

    @property
    def records_per_s(self) -> list[float]:
        return [run.throughput.get("records_per_s", 0.0) for run in self.produce]

    @property
    def publish_p99s(self) -> list[float]:
        return [v for v in (stat(run, "publish_latency", "p99_ms") for run in self.produce) if v is not None]

    def produce_stat(self, field_name: str) -> float | None:
        return self.median([stat(run, "publish_latency", field_name) for run in self.produce])

    def e2e_stat(self, field_name: str) -> float | None:
        return self.median([stat(run, "e2e", field_name) for run in self.consume])

    @property
    def ms_per_message(self) -> float | None:
        """The seed's "avg latency": duration / count, not a latency."""
        return self.median([run.duration_s * 1000 / run.counters["acked"] for run in self.produce if run.counters.get("acked")])


def summarize(document: ResultDocument) -> list[CellSummary]:
    cells: dict[str, CellSummary] = {}
    for label in document.params.get("cells", []):
        cells[label] = CellSummary(label, "", {})
    for run in document.runs:
        label = run.params.get("cell", run.client)
        cell = cells.setdefault(label, CellSummary(label, run.client, run.params))
        cell.client, cell.params = run.client, run.params
        if run.error:
            cell.failed.append(f"repeat {run.params.get('repeat')}: {run.error}")
        elif run.scenario == "produce":
            cell.produce.append(run)
        elif run.scenario == "consume":
            cell.consume.append(run)
    measured = [c for c in cells.values() if c.produce]
    if measured:
        fastest = max(measured, key=lambda c: statistics.median(c.records_per_s))
        for cell in measured:
            if cell is not fastest:
                cell.versus = compare_metric("throughput.records_per_s", "higher", fastest.records_per_s, cell.records_per_s)
        judge_family([cell.versus for cell in measured if cell.versus], FDR, MIN_EFFECT_PCT)  # one table, one family
    return list(cells.values())



def _versus(cell: CellSummary) -> tuple[str, str]:
    """Its records/s against the fastest cell's, beyond noise or not, and why (compare's test)."""
    if not cell.produce:
        return "-", "-"
    if cell.versus is None:
        return "fastest", "-"
    change = cell.versus
    text = f"{change.change_pct:+.0f} %"
    return (text if change.verdict in ("regression", "improvement") else f"({text})"), change.reason


def cell_settings(cell: CellSummary) -> dict[str, str]:
    """What defines a cell: its name (the seed's topics have one), partitions, RF, min.insync (as applied), acks,
    idempotence and client."""
    p = cell.params
    if "replication_factor" not in p:  # a cell whose every repeat failed before it ran
        return {"cell": cell.label, "client": cell.client}
    return {**({"cell": p["name"]} if p.get("name") else {}), "partitions": str(p.get("partitions")), "RF": str(p.get("replication_factor")),
            "min ISR": _min_isr(p), "acks": str(p.get("acks")), "idem": str(p.get("idempotence")), "client": cell.client}


def _defining_settings(cells: list[CellSummary]) -> dict[str, dict[str, str]]:
    """Each cell's settings by label; an Apache tool's row has those of the cell it ran beside (its label's start)."""
    found = {cell.label: cell_settings(cell) for cell in cells}
    for cell in cells:
        mirrored = next((other for other in cells if cell.client == "apache" and other is not cell
                         and cell.label.startswith(f"{other.label} (")), None)
        if mirrored is not None:
            found[cell.label] = {**found[mirrored.label], "client": "apache"}
    return found


def _min_isr(params: dict) -> str:
    effective = params.get("effective_min_isr")
    if effective is None:
        return "-"
    return f"{effective} (capped)" if params.get("min_insync_replicas", effective) != effective else str(effective)


def rate_text(value: float) -> str:
    return f"{value:,.0f}"


def interval_text(bounds: tuple[float, float] | None, text: Callable[[float], str]) -> str:
    return "-" if bounds is None else f"{text(bounds[0])}..{text(bounds[1])}"


def cells_table(document: ResultDocument) -> Table:
    params = document.params
    layout = document.cluster.get("layout") or f"{document.cluster.get('brokers', '?')} brokers"
    title = (f"durability: {params.get('size')}-byte values, {params.get('repeats')} repeat(s) per cell in "
             f"{params.get('order')} order (seed {params.get('seed')}), {layout}; medians over repeats, CI their "
             "95 % bootstrap interval (none from one repeat) "
             "(MB = 2^20 bytes; latencies in ms; ms/msg = duration / count, the seed's \"avg latency\"; vs fastest: "
             "records/s against the fastest cell's, in parentheses when within noise)")
    cells = summarize(document)
    defining = _defining_settings(cells)
    varying, shared = split_settings(list(defining.values()))
    tools = sorted({str(cell.params.get("tool") or "perf tool") for cell in cells if cell.client == "apache"})
    title += f"; {shared}" if shared else ""
    title += f"; apache: Apache's {', '.join(tools)} on the topic of the cell it mirrors" if tools else ""
    table = Table(title, columns(varying + NAMES, (*varying, "records/s CI", "p99 CI", "vs fastest"), TIPS, WIDE))
    for cell in cells:
        rates, settings = cell.records_per_s, [defining[cell.label].get(name, "-") for name in varying]
        if not rates:
            table.add(*settings, *["-"] * (len(NAMES) - 1), str(len(cell.failed)), kind="error")
            continue
        table.add(*settings, rate_text(statistics.median(rates)), interval_text(median_interval(rates), rate_text),
                  fixed(cell.median([r.throughput.get("payload_mb_per_s") for r in cell.produce])),
                  fixed(cell.ms_per_message, 4), ms(cell.produce_stat("p50_ms")), ms(cell.produce_stat("p99_ms")),
                  interval_text(median_interval(cell.publish_p99s), ms),
                  ms(cell.produce_stat("p999_ms")), ms(cell.e2e_stat("p50_ms")), ms(cell.e2e_stat("p99_ms")),
                  fixed(cell.median([r.resources.get("cpu_s") for r in cell.produce]), 1), *_versus(cell),
                  str(len(rates)), kind="reference" if cell.client == "apache" else "")
    return table


# ---- availability (shape: labs/durability/availability.py) ----

def availability_groups(document: ResultDocument) -> list[dict]:
    return document.params.get("availability") or []


def settings_name(group: dict) -> str:
    return f"rf{group['replication_factor']} isr{group['effective_min_isr']} acks={group['acks']}"


def group_for(params: dict, groups: list[dict]) -> dict | None:
    """The availability group probed with a cell's replication factor, effective min ISR and acks."""
    key = (params.get("replication_factor"), params.get("effective_min_isr"), str(params.get("acks")))
    return next((g for g in groups if (g["replication_factor"], g["effective_min_isr"], str(g["acks"])) == key), None)


def most_down(group: dict) -> list[dict]:
    """The steps with the most brokers down (paused and killed)."""
    steps = group.get("steps") or []
    most = max((len(step["brokers"]) for step in steps), default=0)
    return [step for step in steps if len(step["brokers"]) == most]


def writes_verdict(group: dict) -> str | None:
    """What writes met with the most brokers down, e.g. "refuses writes with two brokers down" (paused and
    killed alike), else per way of taking them down; None when no step was probed."""
    steps = most_down(group)
    if not steps:
        return None
    if len({step["writes"] for step in steps}) == 1 and len({step["mode"] for step in steps}) > 1:
        return f"{_writes_phrase(steps[0]['writes'])} with {steps[0]['down']} down"
    return " and ".join(f"{_writes_phrase(step['writes'])} with {step['down']} {PAST.get(step['mode'], step['mode'])}"
                        for step in steps)


def _writes_phrase(writes: str) -> str:
    return WRITES.get(writes, f"writes: {writes}")


def availability_table(document: ResultDocument) -> Table | None:
    groups = availability_groups(document)
    if not groups:
        return None
    table = Table(_availability_title(groups), columns(AVAILABILITY_NAMES, ("min ISR", "acks", "down", "writes", "how",
                                                                            "reads", "read back", "ISR at the end"),
                                                       wide=AVAILABILITY_WIDE))
    for group in groups:
        settings = (str(group["replication_factor"]), _min_isr({"min_insync_replicas": group["min_isr"],
                                                                 "effective_min_isr": group["effective_min_isr"]}),
                    str(group["acks"]))
        steps = group.get("steps") or []
        if not steps:
            table.add(*settings, "-", "probe failed" if group.get("error") else "not probed", *["-"] * 7, kind="error")
        for step in steps:
            reads = step.get("reads") or {}
            table.add(*settings, f"{PAST.get(step['mode'], step['mode'])} {step['roles']}", str(step["writes"]),
                      _writes(step), fixed(step.get("stall_s")), _no_ack(step), fixed(step.get("isr_shrunk_s")),
                      ("yes" if reads.get("ok") else "no") if reads else "-", _reads(reads), _isr(step))
    return table


def _availability_title(groups: list[dict]) -> str:
    steps = [step for group in groups for step in group.get("steps") or []]
    clients = ", ".join(dict.fromkeys(str(group.get("probed_with")) for group in groups))
    downs = list(dict.fromkeys(step["down"] for step in sorted(steps, key=lambda step: len(step["brokers"]))))
    modes = [HOW.get(mode, mode) for mode in dict.fromkeys(step["mode"] for step in steps)]
    done = (f"{downs[0]} down" + "".join(f", then {down}" for down in downs[1:]) + f"; {' then '.join(modes)}"
            if steps else "no probe finished")
    return (f"availability per distinct RF / min.insync / acks, on a one-partition topic, probed with {clients}: "
            f"{done} (stall: the longest a write sent after the fault waited for its answer, or until the step ended; no ack: "
            "liveness, the longest time without an acknowledgement after the fault and whether they came back "
            "(recovered) or not before the step ended (stuck); ISR shrunk: when the ISR "
            "stopped waiting for the brokers down, or the partition lost its leader; until then no write with acks=all is "
            "acknowledged and consumers read nothing new; ISR and leader as the step ended)")


def _no_ack(step: dict) -> str:
    verdict = step.get("liveness")
    if not verdict:
        return "-"
    return f"{verdict['longest_stall_s']:.1f} {verdict['ended']}" if verdict["stalls"] else "0"


def _writes(step: dict) -> str:
    """How writes were refused or accepted in part; "-" when all were accepted or none answered."""
    writes = step["writes"]
    if writes == "refused":
        took = step.get("refused_in_ms")
        return f"{step.get('refusal') or 'an error'}" + (f" in {ms(took)} ms" if took is not None else "")
    if writes == "mixed":
        errors = "".join(f", {count:,} {name}" for name, count in (step.get("errors") or {}).items())
        unanswered = f", {step['unanswered']:,} unanswered" if step.get("unanswered") else ""
        return f"{step['acked']:,} of {step['sent']:,} acked{errors}{unanswered}"
    return "-"


def _reads(reads: dict) -> str:
    """How much the consumers read back, and how fast."""
    known = reads.get("records") is not None and reads.get("of") is not None
    counted = f"{reads['records']:,} of {reads['of']:,}" if known else ""
    took = f"in {fixed(reads['seconds'])} s" if reads.get("seconds") is not None else ""
    return " ".join(part for part in (counted, took) if part) or "-"


def _isr(step: dict) -> str:
    found = step.get("isr")
    isr = "-" if found is None else ", ".join(str(broker) for broker in found) or "empty"
    leader = step.get("leader")
    return f"{isr} (leader {leader})" if leader is not None else f"{isr} (no leader)"


# ---- what the terminal and the report say ----

def tables(document: ResultDocument) -> list[Table]:
    availability = availability_table(document)
    return [cells_table(document), *([availability] if availability else [])]


def lines(document: ResultDocument) -> list[str]:
    out = []
    for cell in summarize(document):
        note = cell.params.get("min_isr_note")
        if note:
            out.append(f"{cell.label}: {note}; it protects no more than that")
        for failure in dict.fromkeys(cell.failed):  # a failed repeat's produce and consume runs often say the same
            out.append(f"{cell.label} {failure}")
    for label, reason in document.params.get("refused", {}).items():
        out.append(f"{label}: refused by the client: {reason}")
    if family := len(tested([cell.versus for cell in summarize(document) if cell.versus])):
        out.append(f"vs fastest: {chance_text(family, FDR)}")
    for group in availability_groups(document):
        if group.get("error"):
            out.append(f"availability of {settings_name(group)}: the probe failed: {group['error']}")
    return out


def headline(document: ResultDocument) -> str:
    return "; ".join(part for part in (_speed_headline(document), _availability_headline(document)) if part)


def _speed_headline(document: ResultDocument) -> str:
    measured = [c for c in summarize(document) if c.produce]
    if len(measured) < 2:
        return ""
    fastest = max(measured, key=lambda c: statistics.median(c.records_per_s))
    slowest = min(measured, key=lambda c: statistics.median(c.records_per_s))
    change = slowest.versus
    verdict = "beyond noise" if change and change.verdict in ("regression", "improvement") else (
        change.verdict if change else "")
    return (f"{fastest.label} is fastest; {slowest.label} costs {-change.change_pct:.0f} % of its records/s "
            f"({verdict})") if change else ""


def _availability_headline(document: ResultDocument) -> str:
    """What the most durable settings probed (acks=all first, then min ISR, then RF) did with the most down."""
    probed = [group for group in availability_groups(document) if group.get("steps")]
    if not probed:
        return ""
    durable = max(probed, key=lambda g: (str(g["acks"]) in ("all", "-1"), g["effective_min_isr"], g["replication_factor"]))
    return f"{settings_name(durable)} {writes_verdict(durable)}"


# ---- the chart's figures ----

def chart_cells(document: ResultDocument) -> list[dict]:
    """Each measured cell's medians and intervals exactly as the cells table computes them, and what its
    settings did to writes with the most brokers down (None when they were not probed)."""
    groups = availability_groups(document)
    position = {id(run): index for index, run in enumerate(document.runs)}
    out = []
    for cell in summarize(document):
        if not cell.produce:
            continue
        group = group_for(cell.params, groups)
        rates, p99s = cell.records_per_s, cell.publish_p99s
        out.append({"label": cell.label, "client": cell.client, "repeats": len(rates),
                    "records_per_s": statistics.median(rates), "records_per_s_ci": _bounds(median_interval(rates)),
                    "publish_p99_ms": cell.produce_stat("p99_ms"), "publish_p99_ms_ci": _bounds(median_interval(p99s)),
                    "availability": writes_verdict(group) if group else None,
                    "writes": sorted({step["writes"] for step in most_down(group)}) if group else [],
                    "runs": [position[id(run)] for run in cell.produce]})
    return out


def _bounds(interval: tuple[float, float] | None) -> list[float] | None:
    return list(interval) if interval else None


def annotate(document: ResultDocument, entry: dict) -> None:
    entry["durability_cells"] = chart_cells(document)
