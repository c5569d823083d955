"""The delivery lab's report parts: what became of every message per cell (the checker's counts), the seed's
stopwatch per cell (ms of each single send, of the bulk, of the closing or sleeping, ms per event, and how the
process ended), the faults as they fired and healed, and a verdict in words per cell."""

from __future__ import annotations

import dataclasses

from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs.delivery.checker import Verdict
from kafkabench.labs.delivery.verdicts import verdict_lines
from kafkabench.labs.delivery.cells import CONSUMING_MODES, fault_word
from kafkabench.report.table import Table, columns, fixed, split_settings

VERDICT_NAMES = ["sent", "acked", "failed", "unknown", "lost", "duplicated", "reordered", "failed, present",
                 "unknown found", "unknown absent", "offset mismatch", "delivered %", "worst stall"]
VERDICT_WIDE = ("sent", "failed", "unknown", "failed, present", "unknown found", "unknown absent", "offset mismatch")
VERDICT_TIPS = {"lost": "delivery_lost", "duplicated": "delivery_duplicated", "reordered": "delivery_reordered",
                "failed, present": "delivery_despite_error", "unknown found": "delivery_unknown",
                "unknown absent": "delivery_unknown", "offset mismatch": "delivery_offset_mismatch",
                "delivered %": "delivery_delivered", "worst stall": "delivery_stall"}
ENDED = {"recovered": "recovered by itself", "released": "its partitions went to another member",
         "replaced": "replaced after the stall bound", "killed": "killed by a fault", "exited": "its process ended",
         "finished": "then finished", "stuck": "still stuck when the run ended"}
ENDING = {"sync": "closing", "async-close": "closing", "async-sleep": "sleeping"}
NAMED_PARTITIONS = 6  # partitions named per line, the worst first; the rest are in result.json


def cell_settings(run: Run) -> dict[str, str]:
    """What defines a cell, as short as a column can show it: the mode, acks, idempotence, RF, min.insync, faults
    ("leader killed 2x": each planned fault kind and how often) and the client."""
    p = run.params
    if "mode" not in p:  # a cell that never got its settings recorded
        return {"cell": p.get("settings", p.get("cell", run.client)), "client": run.client}
    kinds = [event["fault"] for event in p.get("faults", [])]
    faults = ", ".join(fault_word(kind, kinds.count(kind)) for kind in dict.fromkeys(kinds))
    return {"mode": p["mode"], "acks": str(p.get("acks")), "idem": p.get("idempotence", "-"),
            "RF": str(p.get("replication_factor")), "ISR": str(p.get("effective_min_isr")),
            **({"TV": str(p["transaction_version"])} if "transaction_version" in p else {}), "faults": faults or "none",
            "client": run.client}


def _settings_table(title: str, runs: list[Run], figures: list[str], tips: dict, wide: tuple = (),
                    text: tuple = ("process end",)) -> tuple[Table, list[str]]:
    """A table whose rows are cells: a column per setting that differs between them, the shared ones in the title;
    the figures named in `text` hold words."""
    varying, shared = split_settings([cell_settings(run) for run in runs])
    title = f"{title}; {shared}" if shared else title
    return Table(title, columns(varying + figures, tuple(varying) + text, tips, wide)), varying


def verdict_of(run: Run) -> Verdict | None:
    """The checker's verdict as the run recorded it; None when the cell never got to the check."""
    if "loss_confirmed" not in run.params:
        return None
    names = {f.name for f in dataclasses.fields(Verdict)} - {"idempotent", "loss_confirmed"}
    return Verdict(idempotent=bool(run.params.get("idempotent")), loss_confirmed=bool(run.params["loss_confirmed"]),
                   **{name: int(run.counters.get(name, 0)) for name in names})


def verdict_table(document: ResultDocument) -> Table:
    title = (f"delivery: what became of every message, {document.params.get('count', '?'):,} per cell, read back "
             f"read_committed after the cluster healed; lost = acknowledged and not read back (confirmed by a second "
             f"read)") if isinstance(document.params.get("count"), int) else "delivery: what became of every message"
    runs = producer_runs(document)
    table, varying = _settings_table(title, runs, VERDICT_NAMES, VERDICT_TIPS, VERDICT_WIDE)
    for run in runs:
        verdict = verdict_of(run)
        settings = [cell_settings(run).get(name, "-") for name in varying]
        if verdict is None:
            table.add(*settings, *["-"] * (len(VERDICT_NAMES) - 1), worst_stall(run),
                      kind="dominated" if run.params.get("refused") else "error")
            continue
        counts = [verdict.sent, verdict.acknowledged, verdict.failed, verdict.unknown, verdict.lost, verdict.duplicated,
                  verdict.reordered, verdict.delivered_despite_error, verdict.unknown_found, verdict.unknown_not_found,
                  verdict.offset_mismatch]
        failing = bool(run.params.get("failures", verdict.failures)) or bool(run.error)
        table.add(*settings, *(f"{count:,}" for count in counts), _pct(verdict.delivered_pct), worst_stall(run),
                  kind="error" if failing else "reference" if run.client == "apache" else "")
    return table


def stopwatch_table(document: ResultDocument) -> Table:
    """The seed's table turned sideways: one row per cell instead of one stopwatch print per run."""
    singles = max((sum(1 for name in run.timings if name.startswith("single_")) for run in document.runs), default=0)
    names = [*(f"send {i}" for i in range(singles)), "bulk", "closing / sleeping", "ms/event", "process end"]
    timed = [run for run in producer_runs(document) if "ms_per_event" in run.timings]
    alone = f"ms of each of the first {singles} sends alone, of the bulk of the rest" if singles else "ms of the bulk"
    table, varying = _settings_table(f"the seed's stopwatch: {alone}, of the closing or sleeping; ms/event = all of it "
                                     "/ count", timed,
                                     names, {"ms/event": "delivery_ms_per_event"},
                                     wide=(*(f"send {i}" for i in range(1, singles)), "process end"))
    for run in timed:
        timings = run.timings
        table.add(*(cell_settings(run).get(name, "-") for name in varying),
                  *(fixed(timings.get(f"single_{i + 1}_ms"), 3) for i in range(singles)),
                  fixed(timings.get("bulk_ms"), 1),
                  fixed(timings.get("ending_ms"), 1) if run.params.get("mode", "").split(":")[0] in ENDING else "-",
                  fixed(timings["ms_per_event"], 4), run.params.get("process_end", "-"),
                  kind="reference" if run.client == "apache" else "")
    return table


CONSUMER_NAMES = ["promise", "input", "processed 0x", "1x", "more", "copied", "lost", "duplicated", "reordered",
                  "kept", "worst stall"]


def consumer_table(document: ResultDocument) -> Table:
    """Consumer and copier cells: how many times each input message was processed, or copied, beside the promise."""
    runs = consumer_runs(document)
    table, varying = _settings_table("delivery: what the consumers did with every input message, read back "
                                     "read_committed after the cluster healed", runs, CONSUMER_NAMES,
                                     {"promise": "delivery_consumer_promise", "worst stall": "delivery_stall"},
                                     ("processings",))
    for run in runs:
        c, copier = run.counters, run.params.get("mode") == "copy"
        settings = [cell_settings(run).get(name, "-") for name in varying]
        if "input" not in c:
            table.add(*settings, run.params.get("promise", "-"), *["-"] * (len(CONSUMER_NAMES) - 2), worst_stall(run),
                      kind="error")
            continue
        shown = (["-", "-", "-", f"{c['copied']:,}", f"{c['lost']:,}", f"{c['duplicated']:,}", f"{c['reordered']:,}"]
                 if copier else [f"{c['processed_zero']:,}", f"{c['processed_once']:,}", f"{c['more_than_once']:,}",
                                 "-", "-", "-", "-"])
        failing = bool(run.params.get("failures")) or bool(run.error)
        table.add(*settings, run.params["promise"].split(":")[0], f"{c['input']:,}", *shown,
                  "no" if failing else "yes", worst_stall(run), kind="error" if failing else "")
    return table


def consumer_runs(document: ResultDocument) -> list[Run]:
    return [run for run in document.runs if "promise" in run.params or run.params.get("mode") in CONSUMING_MODES]


def producer_runs(document: ResultDocument) -> list[Run]:
    consumers = consumer_runs(document)
    return [run for run in document.runs if run not in consumers]


COST_NAMES = ["event", "took s", "leaderless s", "under min ISR s", "p99 before", "p99 during", "p99 after",
              "max during", "lost"]
E2E_NAMES = ["e2e p99 before", "e2e p99 during", "e2e p99 after"]  # with a probe, before "lost"


def cost_table(document: ResultDocument) -> Table | None:
    """What each fault or operation cost the producers, one row per event of each cell: how long it took, the worst
    partition's time without a leader and under min.insync.replicas within it, the publish p99 (ms) before, during
    and after it and the max during it, and the cell's loss; None when no cell timed its publish latency."""
    runs = [run for run in producer_runs(document) if (run.params.get("publish_latency") or {}).get("around")]
    if not runs:
        return None
    probed = any(run.params.get("e2e_latency") for run in runs)
    names = [*COST_NAMES[:-1], *(E2E_NAMES if probed else []), COST_NAMES[-1]]
    table, varying = _settings_table("what each fault or operation cost the producers: seconds it took, the worst "
                                     "partition's seconds without a leader and under min.insync.replicas within it, "
                                     "publish latency (ms) before, during and after it"
                                     + (", and the e2e p99 (ms) of the probe consumer" if probed else ""), runs, names,
                                     {}, wide=("under min ISR s", "p99 after"), text=("event",))
    for run in runs:
        verdict = verdict_of(run)
        e2e = (run.params.get("e2e_latency") or {}).get("around") or []
        for index, span in enumerate(run.params["publish_latency"]["around"]):
            within = [worst_within(run.params.get("unavailable"), name, span["fired_s"], span["healed_s"])
                      for name in ("leaderless", "under_min_isr")]
            p99 = [_p99(span, when) for when in ("before", "during", "after")]
            e2e_p99 = [_p99(e2e[index] if index < len(e2e) else {}, when) for when in ("before", "during", "after")]
            table.add(*(cell_settings(run).get(name, "-") for name in varying), span["fault"],
                      fixed(span["healed_s"] - span["fired_s"], 1), *(fixed(value, 1) for value in within), *p99,
                      fixed((span["during"] or {}).get("max_ms"), 1), *(e2e_p99 if probed else []),
                      f"{verdict.lost:,}" if verdict else "-", kind="error" if verdict is None or verdict.lost else "")
    return table


def _p99(span: dict, when: str) -> str:
    return fixed((span.get(when) or {}).get("p99_ms"), 1)


def worst_within(unavailable: dict | None, name: str, from_s: float, to_s: float) -> float | None:
    """The longest time any partition spent so (`leaderless`, `under_min_isr`) between from_s and to_s; None: not
    watched."""
    if not unavailable:
        return None
    return max((sum(max(0.0, min(to, to_s) - max(begun, from_s)) for begun, to in figures[name])
                for figures in unavailable["partitions"].values()), default=0.0)


def tables(document: ResultDocument) -> list[Table]:
    return ([verdict_table(document), stopwatch_table(document)] if producer_runs(document) else []) + \
        [table for table in (cost_table(document),) if table is not None] + \
        ([consumer_table(document)] if consumer_runs(document) else [])


def consumer_lines(run: Run, label: str) -> list[str]:
    """A consumer or copier cell's counts in words, beside what Kafka promises for it."""
    c = run.counters
    if "input" not in c:
        return []
    if run.params.get("mode") == "copy":
        said = (f"{label}: {c['copied']:,} of {c['input']:,} input messages in the output, {c['lost']:,} missing, "
                f"{c['duplicated']:,} extra copies, {c['reordered']:,} out of order")
    else:
        said = (f"{label}: of {c['input']:,} input messages, {c['processed_zero']:,} processed zero times, "
                f"{c['processed_once']:,} once, {c['more_than_once']:,} more than once ({c['processings']:,} "
                "processings)")
    kept = "kept" if not run.params.get("failures") else f"broken: {', '.join(run.params['failures'])}"
    found = [f"{said}; promised: {run.params['promise']}: {kept}"]
    found += [f"{label}: {name.replace('_', ' ')}, e.g. {'; '.join(examples)}"
              for name, examples in run.params.get("examples", {}).items()]
    found += [f"{label}: {event}" for event in run.params.get("consumer_events", [])
              if any(word in event for word in ("by itself", "made no progress", "not resumed"))]
    if run.params.get("unfinished"):
        found.append(f"{label}: {run.params['unfinished']}: what it did not commit is counted above as not processed")
    return found


def worst_stall(run: Run) -> str:
    """The cell's longest stall in a table cell: "6.4 s replaced", "0" when no process stalled, "-" unmeasured."""
    rows = run.params.get("liveness")
    if rows is None:
        return "-"
    stalled = [row for row in rows if row.get("stalls")]
    if not stalled:
        return "0"
    row = max(stalled, key=lambda row: row["longest_stall_s"])
    return f"{row['longest_stall_s']:.1f} s {row['ended']}"


def liveness_lines(run: Run, label: str) -> list[str]:
    """Each process that stalled: how long, from when against the faults, and how it ended; or that none did."""
    rows = run.params.get("liveness")
    if not rows:
        return []
    stalled = [row for row in rows if row.get("stalls")]
    if not stalled:
        return [f"{label}: liveness: no process stalled ({len(rows)} watched; a stall: 1 s or more without progress "
                "while work waited)"]
    return [f"{label}: {row['process']}: stalled {row['longest_stall_s']:.1f} s from {row['began_s']:.1f} s "
            f"({row['against']}): {ENDED.get(row['ended'], row['ended'])}"
            + (f"; {row['stalls']} stalls in all" if row["stalls"] > 1 else "") for row in stalled]


LATENCIES = {"publish": "publish latency (send to acknowledgement, as the client reports it)",
             "e2e": "e2e latency (intended send to the probe consumer holding the record)"}


def latency_lines(run: Run, label: str) -> list[str]:
    """The producers' publish latency and the probe's e2e latency, in all and before, during and after each fault or
    operation; a probe that failed says why."""
    def said(figures: dict | None) -> str:
        return (f"p50 {figures['p50_ms']:.1f} / p99 {figures['p99_ms']:.1f} / max {figures['max_ms']:.1f} ms "
                f"({figures['count']:,})") if figures else "nothing"

    found = []
    for name, words in LATENCIES.items():
        latency = run.params.get(f"{name}_latency")
        if not latency or not latency["all"]:
            continue
        found += [f"{label}: {words}: {said(latency['all'])}"] + [
            f"{label}: {name} latency around {span['fault']} ({span['fired_s']:.1f}-{span['healed_s']:.1f} s): before "
            f"{said(span['before'])}; during {said(span['during'])}; after {said(span['after'])}"
            for span in latency["around"]]
    if (probe := run.params.get("e2e_probe")) and probe.get("error"):
        found.append(f"{label}: the e2e probe read {probe['received']:,} records, then: {probe['error']}")
    return found


def lines(document: ResultDocument) -> list[str]:
    found = []
    if (version := document.cluster.get("transaction_version")) is not None:
        found.append(f"the cluster's transaction.version: {version}" + (
            " (KIP-890's transactions V2: a new producer epoch for every transaction)" if version == 2 else
            " (a producer keeps its epoch across transactions: before KIP-890)" if version in (0, 1) else "")
            + ("; each cell ran under the level in its TV column, set by kafkabench and put back after"
               if any("transaction_version" in run.params for run in document.runs) else ""))
    for run in document.runs:
        label = f"{run.params.get('settings', '')} ({run.client})"
        verdict = verdict_of(run)
        if verdict is not None:
            said = verdict_lines(verdict, label)
            coverage = run.params.get("fault_coverage")
            found += [f"{said[0]}; {coverage}" if coverage else said[0], *said[1:]]
            found += transaction_lines(run, label)
        found += consumer_lines(run, label)
        found += [f"{label}: {text}" for text in fault_texts(run)]
        if ended := run.params.get("sending_ended"):
            found.append(f"{label}: sending ended at {ended['told_s']:.1f} s, --end-after-heal after the last planned "
                         f"fault: {ended['sent']:,} of at most {ended['at_most']:,} messages sent")
        found += latency_lines(run, label)
        found += liveness_lines(run, label)
        if run.error:
            found.append(f"{label}: {run.error}")
    return found


def transaction_lines(run: Run, label: str) -> list[str]:
    """What a transactional cell's readers saw, beside what Kafka promises."""
    if "aborted_reads" not in run.counters:
        return []
    c, examples = run.counters, run.params.get("transactions", {}).get("examples", {})
    said = [f"{label}: {c['committed_transactions']:,} transactions committed, {c['aborted_transactions']:,} aborted; "
            f"read_committed saw {c['aborted_reads']:,} messages of aborted transactions and "
            f"{c['torn_transactions']:,} committed transactions in part (Kafka promises 0 and 0); read_uncommitted saw "
            f"{c['aborted_seen_uncommitted']:,} messages of aborted transactions (written, marked aborted: a reader that "
            "asks for uncommitted records gets them)"]
    said += [f"{label}: {name.replace('_', ' ')}, e.g. {'; '.join(found)}" for name, found in examples.items()]
    return said


def fault_texts(run: Run) -> list[str]:
    texts = []
    for event in run.params.get("faults", []):
        what = event.get("what") or (f"{event['fault']} (broker {event['broker']})" if event.get("broker") is not None
                                     else event["fault"])
        if event.get("fired_s") is None:
            texts.append(f"{what}: {event.get('error') or 'not fired'}")
            continue
        ended = "done" if event.get("steps") is not None else "healed"
        healed = f", {ended} at {event['healed_s']:.1f} s" if event.get("healed_s") is not None else ""
        failed = f": {event['error']}" if event.get("error") else ""
        texts.append(f"{what} at {event['fired_s']:.1f} s{healed}{failed}" + _steps(event.get("steps") or []))
    if unavailable := run.params.get("unavailable"):
        texts.append(_unavailable(unavailable, run.params.get("effective_min_isr", 1)))
    return texts


def _steps(steps: list[dict]) -> str:
    """An operation's steps, each in its own words (`_step`); "" for a fault or an operation without steps."""
    said = [text for text in map(_step, steps) if text]
    return "; " + "; ".join(said) if said else ""


def _step(step: dict) -> str:
    """A restarted broker (stopped, serving again, back in every ISR); an upgraded (or downgraded) node (its releases
    before and after, the same times); an upgrade's finalizing; a broker added (started, serving); a partition moved
    (its replicas before and after, when its move was done and its new replica's bytes)."""
    if "partition" in step:
        return (f"[{step['partition']}] {','.join(map(str, step['from']))} -> {','.join(map(str, step['to']))}"
                + (f" done {step['done_s']:.1f} s, {step['bytes']:,} bytes" if step.get("done_s") is not None
                   else " not done"))
    if "finalize" in step:
        return f"finalized to {step['finalize']} at {step['finalize_s']:.1f} s in {step['finalize_took_s']:.1f} s"
    if "start_s" in step:
        return f"broker {step['broker']} started {step['start_s']:.1f} s, serving {_at(step.get('serving_s'))}"
    if "stop_s" in step:
        who = (f"{step['role']} {step['node']} ({step['from']} -> {step['to']})" if "node" in step
               else f"broker {step['broker']}")
        return (f"{who} stopped {step['stop_s']:.1f} s, serving {_at(step.get('serving_s'))}, "
                f"{'topic whole' if 'node' in step else 'back in every ISR'} {_at(step.get('in_isr_s'))}")
    return ""


def _at(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.1f} s"


def _unavailable(unavailable: dict, min_isr: int) -> str:
    """Per partition, the time it had no leader and the time it was under min.insync.replicas, the worst named."""
    partitions = unavailable["partitions"]
    said = []
    for name, words in (("leaderless", "without a leader"), ("under_min_isr", f"under min.insync.replicas {min_isr}")):
        worst = sorted(partitions.items(), key=lambda item: -item[1][f"{name}_s"])
        hit = [f"[{p}] {figures[f'{name}_s']:.1f} s" for p, figures in worst if figures[f"{name}_s"] > 0]
        said.append(f"{words}: " + (", ".join(hit[:NAMED_PARTITIONS]) + (f", ... {len(hit) - NAMED_PARTITIONS} more"
                                                                           if len(hit) > NAMED_PARTITIONS else "")
                                     if hit else "never"))
    failed = f", {unavailable['failed_looks']} of them unanswered" if unavailable.get("failed_looks") else ""
    return (f"the topic's partitions, looked at every {unavailable['look_s']:g} s ({unavailable['looks']:,} "
            f"looks{failed}): " + "; ".join(said))


def headline(document: ResultDocument) -> str:
    if consumers := [run for run in consumer_runs(document) if "input" in run.counters]:
        broken = [run for run in consumers if run.params.get("failures")]
        said = f"every consumer cell kept its promise ({len(consumers)} cell(s))" if not broken else (
            f"{len(broken)} of {len(consumers)} consumer cell(s) broke their promise; first: "
            f"{broken[0].params.get('settings')} ({broken[0].client}): {', '.join(broken[0].params['failures'])}")
        return said + _longest_stall(consumers)
    judged = [(run, verdict) for run in document.runs if (verdict := verdict_of(run)) is not None]
    if not judged:
        return ""
    losing = [(run, verdict) for run, verdict in judged if verdict.lost]
    short = [run for run, _ in judged if run.params.get("faults_fired", 0) < run.params.get("faults_planned", 0)]
    shortfall = f"; fewer faults fired than planned in {len(short)} cell(s)" if short else ""
    if not losing:
        acknowledged = sum(verdict.acknowledged for _, verdict in judged)
        return f"0 acknowledged messages lost in {len(judged)} cell(s): all {acknowledged:,} read back{shortfall}"
    run, worst = max(losing, key=lambda pair: pair[1].lost_pct or 0)
    return (f"acknowledged messages lost in {len(losing)} of {len(judged)} cell(s); most: "
            f"{run.params.get('settings')} ({run.client}): {worst.lost:,} of {worst.acknowledged:,}{shortfall}")


def _longest_stall(runs: list[Run]) -> str:
    """"; longest stall: 31.0 s, copier 2.1 (confluent), replaced" when a process of these cells stalled; the
    unfinished cells counted."""
    stalled = [(row, run) for run in runs for row in run.params.get("liveness") or [] if row.get("stalls")]
    if not stalled:
        return ""
    row, run = max(stalled, key=lambda pair: pair[0]["longest_stall_s"])
    unfinished = sum(1 for run in runs if run.params.get("unfinished"))
    return (f"; longest stall: {row['longest_stall_s']:.1f} s, {row['process']} ({run.client}), {row['ended']}"
            + (f"; {unfinished} cell(s) given up before the group committed the whole input" if unfinished else ""))


def _pct(value: float | None) -> str:
    if value is None:
        return "-"
    if 99.99 < value < 100:
        return "> 99.99"
    if 0 < value < 0.01:
        return "< 0.01"
    return f"{value:.2f}"
