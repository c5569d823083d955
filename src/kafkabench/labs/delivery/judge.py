"""After a delivery run: heal the cluster, read the topic back, and judge the producers' histories with the exact
checker. The history is saved compressed into the result first, so it is kept whatever happens next."""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

from kafkabench.cluster.target import Target
from kafkabench.core.results import Run
from kafkabench.errors import KafkabenchError
from kafkabench.labs.delivery.checker import Checker, Verdict
from kafkabench.core.delivery_history import History
from kafkabench.labs.delivery.readback import DELIVERY_IDS, Decode, read_spans, read_topic
from kafkabench.labs.delivery.transactions import check as check_transactions

HISTORY_DIR = "histories"


class ClusterUnhealed(KafkabenchError):
    """After a cell, the cluster did not come back whole within the bound: nothing after it would be judged fairly."""


def judge(run: Run, target: Target, topic: str, histories: list[History], heal_timeout_s: float, idempotent: bool,
          out_dir: Path, mapped_dir: Path | None, index: int, decode: Decode = DELIVERY_IDS,
          transactions: tuple[int, list[str]] | None = None) -> Verdict:
    """Heal, read back, check every producer's history as one run; the histories are saved compressed into the
    result (`params.history`, or `params.histories` for several) and their mapped files, if any, removed first,
    whatever happens next. `transactions`: the transaction size and each producer's transactional.id, for the
    transactional checks (a second read, read_uncommitted, among them)."""
    (out_dir / HISTORY_DIR).mkdir(parents=True, exist_ok=True)
    names = [f"{HISTORY_DIR}/{index:03d}-{run.client}.npz"] if len(histories) == 1 else \
        [f"{HISTORY_DIR}/{index:03d}-{run.client}-producer-{n}.npz" for n in range(1, len(histories) + 1)]
    for name, history in zip(names, histories):
        history.save(out_dir / name)
    run.params.update({"history": names[0]} if len(names) == 1 else {"histories": names})
    if mapped_dir is not None:
        shutil.rmtree(mapped_dir, ignore_errors=True)
    run.params["healed"] = heal(target, topic, heal_timeout_s)
    checker = Checker(histories, idempotent)
    for chunk in read_topic(target.connection, topic, decode=decode):
        checker.feed(chunk)
    misses = checker.missing()
    checker.confirm(read_spans(target.connection, topic, misses.spans(), decode=decode) if misses.count else ())
    verdict = checker.result()
    counts = verdict.to_dict()
    run.counters.update({name: int(value) for name, value in counts.items() if type(value) is int})
    errors = collections.Counter()
    for history in histories:
        errors.update(history.error_counts())
    run.counters.update({f"errors.{name}": count for name, count in errors.items()})
    run.params.update(idempotent=idempotent, loss_confirmed=verdict.loss_confirmed, failures=verdict.failures)
    if transactions is not None:
        size, transactional_ids = transactions
        checked = check_transactions(checker, size, transactional_ids,
                                     read_topic(target.connection, topic, decode=decode, isolation="read_uncommitted"))
        examples = checked.pop("examples")
        run.counters.update(checked)
        run.params["failures"] = verdict.failures + [name for name in ("aborted_reads", "torn_transactions")
                                                     if checked[name]]
        run.params["transactions"] = {**run.params.get("transactions", {}), "transactional_ids": transactional_ids,
                                      **({"examples": examples} if examples else {})}
    return verdict


def heal(target: Target, topic: str, timeout_s: float) -> list[str]:
    """Every broker running and every partition of the topic back to its full ISR, or ClusterUnhealed; what had to
    be done for it ("restarted broker 2": a broker the faults left down)."""
    if not target.started_here:
        return []  # kafkabench did not break it and cannot mend it: the read-back says what is there
    try:
        done = target.faults.bring_back()
        target.faults.wait_healthy(timeout_s, [topic])
        return done
    except KafkabenchError as exc:
        raise ClusterUnhealed(f"the cluster did not heal after the cell: {exc}") from exc
