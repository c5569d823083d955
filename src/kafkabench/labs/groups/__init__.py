"""`kafkabench groups` (registered in labs/registry.py): what a deploy, a scale-out or a crash costs a consumer group,
per rebalance protocol. The group and its members are consumers' (below the labs), their histories core's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.labs.base import Lab
from kafkabench.labs.groups import report
from kafkabench.labs.groups.scenario import GroupsScenario
from kafkabench.report.definitions import Definition

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target

LAB = ("groups",)


class GroupsLab(Lab):
    name = "groups"
    scenario = GroupsScenario
    summary = ("What a rolling restart, a scale-out or a crash costs a consumer group under each rebalance protocol: "
               "how long each partition went unread, how long the group stopped, lag, records processed twice.")
    definitions = (
        Definition("groups_gap", "gap", "s",
                   "A partition is unread from the moment one of its records waits (its timestamp, or the partition's "
                   "previous processing if later) until that record is processed. worst / median gap: of each "
                   "partition's longest unread span overlapping the change (its first step until the group had "
                   "committed everything); steady gap: the worst before the change, the floor to set them beside.",
                   LAB),
        Definition("groups_stop_the_world", "stop-the-world", "s",
                   "The longest time the whole group processed nothing while a record waited (on any partition), during the "
                   "change.", LAB),
        Definition("groups_stable", "stable after", "s",
                   "From the change's first step until the group's coordinator last said STABLE after saying anything "
                   "else (a KIP-848 group: every member holding its target assignment), asked every 0.1 s; 0: it never "
                   "left STABLE as asked.", LAB),
        Definition("groups_lag", "lag", "records",
                   "Records behind the group's committed offsets (a share group's: acknowledged by the producer and not "
                   "yet processed, from the histories), looked at every second: its peak after the change began, and "
                   "the seconds from the change's first step until it was back at its peak before.", LAB),
        Definition("groups_twice", "twice / never", "records",
                   "Acknowledged records the members' histories show processed more than once, and never (at least "
                   "once, the promise of commit-after, is kept when never is 0).", LAB),
        Definition("groups_rebalances", "rebalances", "",
                   "Assignments the members' clients reported (an empty one too), summed over the processes that "
                   "finished; a killed process reports none.", LAB),
        Definition("groups_pace", "records/s", "records/s",
                   "Records the group processed per second, from its first processing to its last (the whole cell: "
                   "what a share group's extra members add, or a consumer group's past the partition count do not).",
                   LAB),
    )

    def run(self, scenario: GroupsScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.groups.run import run_groups

        return run_groups(scenario, target, out_dir, events)

    def tables(self, document):
        return [report.table(document)]

    def headline(self, document):
        return report.headline(document)

    def lines(self, document):
        return report.lines(document)

    def charts(self, entry):
        from kafkabench.labs.groups.charts import processed_chart

        return [processed_chart(entry)]

    def run_label(self, run: Run) -> str:
        return f"{run.params.get('change')} {run.params.get('protocol')} ({run.client})"


LABS = (GroupsLab(),)
