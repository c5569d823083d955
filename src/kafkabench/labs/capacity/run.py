"""`kafkabench max-rate`: the highest rate this cluster and client sustain within the SLOs, or with --sweep the
latency-vs-rate curve at fixed rates.

1. Probe (unless --start-rate and --ceiling are both given, or the sweep's rates): producers unpaced for a few
   seconds; the search starts at a quarter of what they achieved, and never goes above twice that.
2. Search (search.py), --searches times from the same start: each step a fixed rate (step.py); raise
   geometrically until a step fails, then bisect until the bracket is within --precision, in at most --max-steps
   steps; a failure that is not clear is run again (a `confirm` step) before it is believed, and a rate that passes
   only its confirm is unsure. The searches' answer is the median of the rates they found, with their range: on a
   shared machine the capacity moves while it is measured, and one search cannot tell.
3. Hold: that rate again for --hold seconds, --holds times in a row, each a fresh run. A hold that fails is believed;
   the holds go on down, bisecting between the highest rate below that passed cleanly and the failed hold (halving
   without one), until a rate passes all its holds, in at most --max-steps failed holds, and say how they got there.

Every step is a run of the result (`runs[i]`, its measured part's histograms kept) and an entry of
`params.steps` (offered, achieved, each SLO percentile with its interval, the lag slope, the verdict and why).
A step that fails because the run itself failed (a broker died, a send was refused) ends the lab: what was
measured is kept and the lab exits non-zero.
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path

from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT, Listener
from kafkabench.core.results import ResultDocument, write_result
from kafkabench.faults import inject
from kafkabench.faults.spec import FaultSpec
from kafkabench.labs.base import LabFailed
from kafkabench.labs.capacity.scenario import MaxRateScenario
from kafkabench.labs.capacity.search import Holds, RateSearch, median_found
from kafkabench.labs.capacity.step import (PROBE, Phase, Step, StepsEnded, probe_failure, run_probe, run_step, run_steps,
                                           settle_note)
from kafkabench.labs.document import count_brokers, new_document
from kafkabench.labs.throughput.plan import plan_throughput
from kafkabench.labs.throughput.run import effective_params
from kafkabench.labs.throughput.scenario import ProduceScenario

START_SHARE, CEILING_FACTOR = 0.25, 2.0
AUTO_SWEEP = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.2)  # shares of the probe's rate


def check_max_rate(scenario: MaxRateScenario, listener: Listener) -> None:
    plan_throughput(_produce(scenario, rate=-1), listener)


def _produce(scenario: MaxRateScenario, rate: float) -> ProduceScenario:
    """The step's produce run (run_step sets its duration and windows from the step's phase)."""
    return ProduceScenario(**scenario.workload(), rate=rate, duration=scenario.settle + scenario.measure,
                           broker_phases=False)


def run_max_rate(scenario: MaxRateScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    out_dir.mkdir(parents=True, exist_ok=True)
    document = new_document("max-rate", target, scenario.model_dump(mode="json", exclude_none=True))
    document.params.update(effective_params(plan_throughput(_produce(scenario, -1), SILENT)))
    count_brokers(document, target, scenario.timeout)
    if note := settle_note(scenario.client, scenario.settle):
        listener.note(note)
    session = _Session(scenario, target, out_dir, document, listener)
    with held_faults(scenario, target, document, listener):
        run_steps(document, session.scratch, session.write, session.sweep if scenario.sweep else session.search)
    if document.error:
        raise LabFailed(f"{document.error}; the steps done so far are kept in {out_dir}", document)
    return document


@contextlib.contextmanager
def held_faults(scenario: MaxRateScenario, target: Target, document: ResultDocument, listener: Listener):
    """The scenario's network faults in place for the whole run (each said in the notes), healed on the way out."""
    specs = [FaultSpec.parse(text) for text in scenario.faults]
    inject.check(specs, target.faults)
    held = []
    try:
        for spec in specs:
            injected = inject.inject(spec, target.faults, inject.aim(spec, target.faults, "", target.connection))
            held.append(injected)
            document.params.setdefault("faults", []).append({"fault": spec.kind, "what": injected.what, "fired_s": 0.0})
            document.notes.append(f"held for the whole run: {injected.what}")
            listener.note(document.notes[-1])
        yield
    finally:
        for injected in held:
            injected.heal()


class _Session:
    def __init__(self, scenario: MaxRateScenario, target: Target, out_dir: Path, document: ResultDocument,
                 listener: Listener) -> None:
        self.scenario, self.target, self.out_dir = scenario, target, out_dir
        self.document, self.listener = document, listener
        self.phase = Phase(scenario.settle, scenario.measure)
        self.slos = scenario.slos
        self.scratch = out_dir / f".step-{uuid.uuid4().hex[:8]}"
        self.steps: list[Step] = []
        self.histograms: list[dict[str, str]] = []  # per run of the document, its measured histograms, encoded

    # ---- the two ways through ------------------------------------------------------------------

    def search(self) -> None:
        s = self.scenario
        probed = None if s.start_rate and s.ceiling else self._probe()
        ceiling = s.ceiling or CEILING_FACTOR * probed
        start = min(s.start_rate or START_SHARE * probed, ceiling)
        self.listener.note(f"{s.searches} search{'es' if s.searches > 1 else ''} from {start:,.0f} records/s, "
                           f"at most {ceiling:,.0f}, within {s.precision:.0%}")
        searches = [self._search(number, start, ceiling) for number in range(1, s.searches + 1)]
        self.document.params["search_results"] = [
            {"found": search.passed, "unsure": search.found_unsure, "stop_reason": search.stop_reason,
             "steps": len(search.steps)} for search in searches]
        self.document.params["stop_reason"] = "; ".join(
            search.stop_reason if len(searches) == 1 else f"search {number}: {search.stop_reason}"
            for number, search in enumerate(searches, 1))
        candidate = median_found([search.passed for search in searches if search.passed is not None])
        holds = None
        if candidate is not None and s.hold > 0:
            clean = sorted({rate for search in searches for rate in search.clean})
            holds = self._hold(Holds(candidate, clean, s.precision, s.max_steps, floor=min(1.0, candidate),
                                     repeats=s.holds))
        unsure = any(search.passed == candidate and search.found_unsure for search in searches)
        self._answer(holds.held if holds else candidate, holds, unsure and not holds)

    def _search(self, number: int, start: float, ceiling: float) -> RateSearch:
        s = self.scenario
        search = RateSearch(start, s.precision, s.max_steps, ceiling, floor=min(1.0, start))
        while (rate := search.next_rate()) is not None:
            step = self._step("confirm" if rate == search.doubted else "search", rate, search=number)
            search.record(rate, step.passed, step.clearly)
        found = f"{search.passed:,.0f} records/s{' (unsure)' if search.found_unsure else ''}" if search.passed else "none"
        self.listener.note(f"search {number} of {s.searches} ended: {search.stop_reason}; found {found}")
        return search

    def sweep(self) -> None:
        s = self.scenario
        rates = s.sweep_rates or [round(share * self._probe()) for share in AUTO_SWEEP]
        rates = sorted(set(max(1.0, rate) for rate in rates))
        self.listener.note(f"sweep of {len(rates)} rates x {s.repeats} repeats, interleaved: "
                           f"{', '.join(f'{rate:,.0f}' for rate in rates)} records/s")
        for repeat in range(s.repeats):
            for rate in rates:
                self._step("sweep", rate, repeat + 1)
        self.document.params["stop_reason"] = "every rate of the sweep ran"
        passing = [step.offered for step in self.steps if step.kind == "sweep"
                   if all(other.passed for other in self.steps if other.kind == "sweep" and other.offered == step.offered)]
        self.document.params["sustainable"] = ({"records_per_s": max(passing), "held": False, "from": "sweep"}
                                               if passing else None)

    # ---- the parts ---------------------------------------------------------------------------

    def _probe(self) -> float:
        self.listener.note(f"probe: producers unpaced for {PROBE.for_client(self.scenario.client).seconds:g} s")
        step = run_probe(_produce(self.scenario, -1), self.target, self.scratch, self.listener)
        self._keep(step)
        if probe_failure(step):
            raise StepsEnded(probe_failure(step))
        self.listener.note(f"probe: {step.achieved:,.0f} records/s unpaced")
        return step.achieved

    def _step(self, kind: str, rate: float, repeat: int | None = None, phase: Phase | None = None,
              search: int = 0) -> Step:
        phase = phase or self.phase
        step = run_step(kind, _produce(self.scenario, rate), phase, self.slos, self.scenario.metric, self.target,
                        self.scratch, self.listener)
        step.search = search
        self._keep(step, repeat)
        self.listener.note(self._line(step, len(self.steps)))
        if step.error:
            raise StepsEnded(f"step {len(self.steps)} ({kind}) at {rate:,.0f} records/s failed: {step.error}")
        return step

    def _hold(self, holds: Holds) -> Holds:
        while (rate := holds.next_rate()) is not None:
            self.listener.note(f"holding {rate:,.0f} records/s for {self.scenario.hold:g} s "
                               f"({len(holds.passes) + 1} of {holds.repeats})")
            step = self._step("hold", rate, phase=Phase(self.scenario.settle, self.scenario.hold))
            holds.record(rate, step.passed)
            if not step.passed:
                self.document.notes.append(f"the hold at {rate:,.0f} records/s failed ({'; '.join(step.reasons)})")
                self.listener.note(self.document.notes[-1])
        self.document.params["hold_results"] = {"held": holds.held, "passed": len(holds.passes),
                                                "repeats": holds.repeats, "failed": holds.failed,
                                                "stop_reason": holds.stop_reason}
        return holds

    def _answer(self, found: float | None, holds: Holds | None, unsure: bool) -> None:
        """The found rate with the figures of its hold that came nearest to an SLO's limit (the last step at it without
        holds), the searches' range, and the nearest rate above it that failed."""
        held = [step for step in self.steps
                if step.kind == "hold" and step.passed and holds and step.offered == holds.held]
        hold = max(held, key=self._nearest_limit, default=None)
        judged = hold or next((step for step in reversed(self.steps) if step.passed and step.offered == found), None)
        if found is None or judged is None:
            self.document.params["sustainable"] = None
            return
        passed = {step.offered for step in self.steps if step.passed}
        # the failures believed: a hold's, or a rate no step passed at (not one a confirm then passed)
        above = [step for step in self.steps if step.kind in ("search", "confirm", "hold") and not step.passed
                 and step.offered > found and (step.kind == "hold" or step.offered not in passed)]
        nearest = min(above, key=lambda step: step.offered, default=None)
        self.document.params["sustainable"] = {
            "records_per_s": found, "mb_per_s": judged.mb_per_s, "held": hold is not None, "unsure": unsure,
            "percentiles_ms": {name: interval.as_list() for name, interval in judged.percentiles.items()},
            "searches": searches_figures(self.document.params["search_results"]),
            "holds": len(held), "holds_failed": holds.failed if holds else [],
            "next_failed": nearest.offered if nearest else None, "next_reasons": nearest.reasons if nearest else []}

    def _nearest_limit(self, step: Step) -> float:
        """How near the step came to its objectives: its highest share of an SLO's limit (0 without SLOs)."""
        return max((step.percentiles[slo.name].value / slo.limit_ms
                    for slo in self.slos if slo.name in step.percentiles), default=0.0)

    def _keep(self, step: Step, repeat: int | None = None) -> None:
        self.steps.append(step)
        params = {"step": len(self.steps), "kind": step.kind, "offered_rate": step.offered,
                  **({"repeat": repeat} if repeat else {})}
        self.document.runs.append(step.as_run(self.scenario.client, params))
        self.histograms.append(step.encoded_histograms())
        self.document.params["steps"] = [s.to_dict() for s in self.steps]
        self.write()

    def write(self) -> None:
        write_result(self.document, self.out_dir, self.histograms)

    def _line(self, step: Step, number: int) -> str:
        achieved = f"{step.achieved:,.0f}" if step.achieved is not None else "-"
        figures = [f"{self.scenario.metric} {name} {i.value:,.3g} ms (95 % up to {i.high:,.3g})"
                   for name, i in step.percentiles.items()]
        verdict = "pass" if step.passed else f"fail: {'; '.join(step.reasons)}"
        warmup = (f" (warm-up apart: {self.scenario.metric} p99 {step.warmup['p99_ms']:,.3g} ms)"
                  if step.warmup and step.kind != "probe" else "")
        return (f"step {number} ({step.kind}): {step.offered:,.0f} records/s offered, {achieved} achieved"
                f"{', ' if figures else ''}{', '.join(figures)}{warmup}: {verdict}")



def searches_figures(searches: list[dict]) -> dict:
    """The searches' answer and spread: the median found rate, the lowest and highest, max / min - 1, and how many
    found none."""
    found = sorted(search["found"] for search in searches if search["found"] is not None)
    return {"count": len(searches), "found": [search["found"] for search in searches], "median": median_found(found),
            "low": found[0] if found else None, "high": found[-1] if found else None,
            "spread": found[-1] / found[0] - 1 if found else None, "none": len(searches) - len(found)}
