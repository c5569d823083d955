"""`kafkabench delivery` as a lab (registered in labs/registry.py). The package's other modules are the parts:
the format its workers write and its checker reads (message ids, histories) lives below both, in core."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kafkabench.core.events import Listener
from kafkabench.core.results import ResultDocument, Run
from kafkabench.faults.spec import FaultSpec
from kafkabench.labs.base import Lab
from kafkabench.labs.delivery import report
from kafkabench.labs.delivery.scenario import DeliveryScenario
from kafkabench.report.definitions import Definition

if TYPE_CHECKING:
    from kafkabench.cluster.target import Target

LAB = ("delivery",)


class DeliveryLab(Lab):
    name = "delivery"
    scenario = DeliveryScenario
    summary = ("Which producer modes, consumer commits and broker faults lose, duplicate or reorder messages, and whether "
               "a transactional copier copies each exactly once: every message checked.")
    brokers = 3
    controllers = 1  # broker faults leave the KRaft quorum alone, as in production
    draws_timeline = True  # progress per window with the stalls marked (labs.delivery.charts)

    def network(self, scenario: DeliveryScenario) -> str:
        return "isolated" if any(FaultSpec.parse(text).is_network for text in scenario.faults) else "loopback"
    definitions = (
        Definition("delivery_lost", "lost", "messages",
                   "Acknowledged to the producer and never read back by a fresh read_committed consumer reading every "
                   "partition from the earliest offset after the cluster healed; confirmed by a second fresh read of "
                   "the missing spans, so a consumer's miss is never called data loss.", LAB),
        Definition("delivery_duplicated", "duplicated", "messages",
                   "Copies read beyond an id's first: one id at several offsets. A failure only with idempotence on, "
                   "which promises none.", LAB),
        Definition("delivery_reordered", "reordered", "messages",
                   "Within one producer and partition, an id first read after a higher sequence of the same producer. "
                   "A failure only with idempotence on.", LAB),
        Definition("delivery_despite_error", "failed, present", "messages",
                   "Sends the client reported failed that were read back anyway: a client that gives up cannot know "
                   "what the broker wrote. Not a failure.", LAB),
        Definition("delivery_unknown", "unknown", "messages",
                   "Sends with no answer before the process ended, or a timeout (which says nothing of the outcome); "
                   "found or absent in the read-back. Never counted as lost: only an acknowledgement promises.", LAB),
        Definition("delivery_offset_mismatch", "offset mismatch", "messages",
                   "Acknowledged at an offset, read back, but never at that (partition, offset).", LAB),
        Definition("delivery_delivered", "delivered %", "%",
                   "Distinct ids read back (by either read) / messages sent.", LAB),
        Definition("delivery_ms_per_event", "ms/event", "ms",
                   "The seed's figure: the producer's whole stopwatch (single sends, bulk, closing or sleeping) / "
                   "messages; with several producers (--producers), the slowest one's stopwatch / the cell's "
                   "messages. A cost per message, not a latency.", LAB),
        Definition("delivery_consumer_promise", "promise", "",
                   "What the consumer mode promises for each input message (the input: what a fresh read_committed "
                   "consumer reads of the input topic after the run): commit-before at most once (none processed "
                   "twice), commit-after at least once (none processed zero times), auto-commit neither, the copier "
                   "exactly once (every input message in the output once, none lost, duplicated or reordered). kept: "
                   "whether the run held it.", LAB),
        Definition("delivery_stall", "worst stall", "s",
                   "Liveness: the longest time any process of the cell (a producer, a consumer, a copier) went without "
                   "progress (nothing acknowledged, processed or committed) while work waited for it (messages sent "
                   "and unanswered; records behind the group's committed offset on a partition it held, or it held "
                   "partitions and said nothing for 2 s), and how that stall ended: recovered, released (its "
                   "partitions went to another member), replaced (stopped after --stall-bound, a new process in its "
                   "slot), killed, exited, finished, or stuck (still so when the run ended). 0: no stall of 1 s or "
                   "more.", LAB),
    )

    def check(self, scenario: DeliveryScenario) -> None:
        from kafkabench.labs.delivery.run import check_request

        check_request(scenario)

    def run(self, scenario: DeliveryScenario, target: Target, out_dir: Path, events: Listener) -> ResultDocument:
        from kafkabench.labs.delivery.run import run_delivery

        return run_delivery(scenario, target, out_dir, events)

    def tables(self, document):
        return report.tables(document)

    def headline(self, document):
        return report.headline(document)

    def lines(self, document):
        return report.lines(document)

    def charts(self, entry):
        from kafkabench.labs.delivery.charts import progress_chart

        return [progress_chart(entry)]

    def run_label(self, run: Run) -> str:
        return f"{run.params.get('settings', run.scenario)} ({run.client})"


LABS = (DeliveryLab(),)
