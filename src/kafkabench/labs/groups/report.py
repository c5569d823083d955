"""The groups lab's report parts: per cell (client, protocol, change) what the change cost the group, in one table,
and in words which protocol stopped the group least and processed the fewest records twice."""

from __future__ import annotations

from kafkabench.core.results import ResultDocument, Run
from kafkabench.report.table import Table, columns, fixed

NAMES = ["change", "protocol", "client", "stopped s", "worst gap s", "median gap s", "steady gap s",
         "stable s", "lag peak", "lag back s", "twice", "never", "rebalances", "records/s"]
NAMED = 10  # partitions named in a line, the rest left to result.json
SHOWN_STATES = 8  # the coordinator's state changes printed per cell, the first and the last halves
WIDE = ("median gap s", "steady gap s", "lag peak", "lag back s", "rebalances", "records/s")
TIPS = {"stopped s": "groups_stop_the_world", "worst gap s": "groups_gap", "median gap s": "groups_gap",
        "steady gap s": "groups_gap", "stable s": "groups_stable", "lag peak": "groups_lag",
        "lag back s": "groups_lag", "twice": "groups_twice", "never": "groups_twice", "rebalances": "groups_rebalances",
        "records/s": "groups_pace"}


def measured(document: ResultDocument) -> list[Run]:
    return [run for run in document.runs if "worst_gap_s" in run.timings]


def table(document: ResultDocument) -> Table:
    p = document.params
    found = Table(f"groups: what each change cost, {p.get('members', '?')} members on {p.get('partitions', '?')} "
                  f"partitions at {p.get('rate', 0):,.0f} records/s",
                  columns(NAMES, ("change", "protocol", "client"), TIPS, WIDE))
    for run in document.runs:
        if run.error or "worst_gap_s" not in run.timings:
            found.add(run.params.get("change", "?"), run.params.get("protocol", "?"), run.client,
                      run.error or run.params.get("change_not_made", "not measured"), *[""] * (len(NAMES) - 4),
                      kind="error")
            continue
        t, c = run.timings, run.counters
        found.add(run.params["change"], run.params["protocol"], run.client, fixed(t["stop_the_world_s"]),
                  fixed(t["worst_gap_s"]), fixed(t["median_gap_s"]), fixed(t["steady_worst_gap_s"]),
                  fixed(t.get("time_to_stable_s")), f"{c.get('lag_peak', 0):,}", fixed(t.get("lag_back_s")),
                  f"{c['processed_twice']:,}", f"{c['never_processed']:,}", f"{c['rebalances']:,}",
                  f"{run.throughput.get('processed_per_s', 0):,.0f}")
    return found


def lines(document: ResultDocument) -> list[str]:
    said = []
    for run in document.runs:
        label = f"{run.params.get('change')} under {run.params.get('protocol')} ({run.client})"
        if run.error:
            said.append(f"{label}: {run.error}")
            continue
        if "unfinished" in run.params:
            said.append(f"{label}: {run.params['unfinished']}")
        c = run.counters
        if "records" in c:
            # an unfinished read leaves its records in the topic for a later member: not judged, rather than broken
            kept = "kept" if c["never_processed"] == 0 else "not judged (the run ended before the group read " \
                "everything)" if "unfinished" in run.params else "broken"
            said.append(f"{label}: {c['records']:,} records acknowledged, {c['never_processed']:,} never processed, "
                        f"{c['processed_twice']:,} processed more than once; at least once: {kept}")
        if (counts := run.params.get("delivery_counts")) is not None:
            said.append(f"{label}: {_redelivered(counts, run)}")
        if (waited := run.params.get("new_partitions_s")) is not None:
            added = run.params["partitions_after"] - run.params["partitions"]
            slowest = run.timings.get("new_partitions_read_s")
            said.append(f"{label}: {_first_reads(f'{added} partition(s) added', waited, slowest)}")
        if (new := run.params.get("new_topic")) and "first_read_s" in new:
            since = f"; its first record written {new['first_written_s']:.1f} s after, first processed " \
                    f"{new['first_processed_s']:.1f} s after" if "first_processed_s" in new else ""
            said.append(f"{label}: " + _first_reads(
                f"topic {new['topic']} ({new['partitions']} partition(s)) created {new['created_s']:.1f} s into the "
                f"change, which the members' pattern {new['pattern']} matches{since}", new["first_read_s"],
                run.timings.get("new_topic_read_s"), "topic"))
        if states := run.params.get("states"):
            shown = states if len(states) <= SHOWN_STATES + 1 else [
                *states[:SHOWN_STATES // 2], f"... {len(states) - SHOWN_STATES} more in result.json ...",
                *states[-SHOWN_STATES // 2:]]
            said.append(f"{label}: the coordinator said " + "; ".join(shown))
    return said + _best(document)


def _redelivered(counts: dict, run: Run) -> str:
    """A share group's redelivery, in words."""
    c, t = run.counters, run.timings
    by_count = ", ".join(f"{n:,} at {count}" for count, n in counts.items())
    again = (f", processed again {t['redelivered_first_s']:.1f}-{t['redelivered_last_s']:.1f} s after the change began "
             f"(median {t['redelivered_median_s']:.1f} s)" if "redelivered_first_s" in t else "")
    unseen = (f"; the broker counted {c['deliveries_unseen']:,} deliveries no member process received (acquired by a "
              "member that ended before its application saw them)" if c.get("deliveries_unseen") else "")
    return f"{c['redelivered']:,} records redelivered (delivery counts: {by_count}){again}{unseen}"


def _first_reads(what: str, waited: dict, slowest: float | None, new: str = "partitions") -> str:
    """How soon the group read new partitions (add-partitions) or a new topic's (subscribe-topic), in words."""
    if not waited:
        return f"{what}: none written to before the producer was done"
    unread = [partition for partition, s in waited.items() if s is None]
    if not unread:
        return (f"{what}: each partition first read {min(waited.values()):.1f}-{slowest:.1f} s after its first record "
                "was written")
    named = ", ".join(unread[:NAMED]) + (f", ... {len(unread) - NAMED} more in result.json" if len(unread) > NAMED else "")
    return (f"{what}: {len(unread)} of the {len(waited)} new partition(s) written to never read within the run "
            f"([{named}]): a classic member sees new {new}s at its client's next metadata refresh "
            "(metadata.max.age.ms; librdkafka: topic.metadata.refresh.interval.ms; 5 min by default)")


def _best(document: ResultDocument) -> list[str]:
    """Per change, which protocol stopped the group least and which processed the fewest records twice, among the
    cells in which the group read everything (one given up has not finished paying for the change)."""
    said, finished = [], [run for run in measured(document) if "unfinished" not in run.params]
    for change in dict.fromkeys(run.params["change"] for run in finished):
        runs = [run for run in finished if run.params["change"] == change]
        if len(runs) < 2:
            continue
        stopped = min(runs, key=lambda run: run.timings["stop_the_world_s"])
        twice = min(runs, key=lambda run: run.counters["processed_twice"])
        same = len({run.counters["processed_twice"] for run in runs}) == 1
        said.append(f"{change}: the group stopped least under {stopped.params['protocol']} ({stopped.client}, "
                    f"{stopped.timings['stop_the_world_s']:.2f} s); " + (
                        f"every cell processed {twice.counters['processed_twice']:,} records twice" if same else
                        f"the fewest records processed twice under {twice.params['protocol']} ({twice.client}, "
                        f"{twice.counters['processed_twice']:,})"))
    return said


def headline(document: ResultDocument) -> str:
    runs = measured(document)
    if not runs:
        return ""
    broken = [run for run in runs if run.counters.get("never_processed")]
    worst = max(runs, key=lambda run: run.timings["stop_the_world_s"])
    return (f"{len(runs)} cell(s); longest stop-the-world {worst.timings['stop_the_world_s']:.2f} s "
            f"({worst.params['change']} under {worst.params['protocol']}, {worst.client}); "
            + (f"{len(broken)} cell(s) left records unprocessed" if broken else "every record processed at least once"))
