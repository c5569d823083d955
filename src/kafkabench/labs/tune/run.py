"""`kafkabench tune GOAL`: the settings that meet a goal on this payload and cluster, found by measuring (the goals,
and how a trial measures each: goals.py).

1. The default (the client's defaults under the user's own settings, baseline.py) is measured --noise-runs times:
   the noise floor, and the first points of the study (study.py: the journal, the sampler, the terminator).
2. The well-known presets (the `latency` and `throughput` profiles) are tried, then the sampler proposes. Each
   proposal is refused before it runs when the client would refuse it (the reason kept with the trial), else
   measured. Until --trials, --time, or (with the Gaussian process) Optuna's terminator says further gains are
   unlikely.
3. The best --finalists feasible trials and the default are re-measured --final-runs times each, interleaved; a
   recommendation is made only when it holds beyond noise (recommend.py). For `pareto`, --finalists points along
   the front (front.py), each against the default at its own rate.
4. Written beside the result (outputs.py): the recommendation (or the default, when nothing beat it) as a profile
   (`profiles/tuned.yaml`, with `tuned-plan.yaml` that runs it against the default) and as
   `tuned-producer.properties` / `tuned-consumer.properties`; for `pareto`, each front point that beat the default
   at its rate as `pareto-RATE`.

A pareto study's rate is a dimension of it, between a hundredth of --max-rate and --max-rate (default: 1.2x what
the default's producers send unpaced, probed once and kept in the study).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from kafkabench.admin import KafkaAdmin
from kafkabench.cluster.target import Target
from kafkabench.core.events import SILENT, Listener
from kafkabench.core.results import ResultDocument, write_result
from kafkabench.errors import ConfigError, KafkabenchError
from kafkabench.labs.base import LabFailed
from kafkabench.labs.capacity.step import PROBE, StepsEnded, probe_failure, run_probe, run_steps, settle_note
from kafkabench.labs.document import count_brokers, new_document
from kafkabench.labs.tune import brokers, front, outputs
from kafkabench.labs.tune import study as studies
from kafkabench.labs.tune.report import changes_text
from kafkabench.labs.tune.recommend import DEFAULT, Candidate, Recommendation, judged_changes, recommend
from kafkabench.labs.tune.baseline import PRESETS, default_settings, kept_settings, merged, needed_bytes, preset
from kafkabench.labs.tune.goals import GOALS, Measured
from kafkabench.labs.tune.scenario import TuneScenario
from kafkabench.labs.tune.space import SearchSpace, load_space, variant_of
from kafkabench.labs.tune.trial import Settings, refusal, trial_scenario
from kafkabench.report.compare import MIN_EFFECT_PCT
from kafkabench.report.family import decides_text
from kafkabench.report.significance import can_decide

REFUSALS_PER_TRIAL = 5  # proposals refused in a row, per trial of the budget, before the search gives up
RATE = "rate"  # the pareto study's parameter for the offered rate
FAILED_IN_A_ROW, CLUSTER_CHECK_S = 3, 10  # runs failing one after another end the tune, as a cluster missing a broker does
MAX_RATE_FACTOR, RATE_RANGE = 1.2, 100


def check_tune(scenario: TuneScenario, listener: Listener = SILENT) -> SearchSpace:
    """The space as this tune may use it (kept settings taken out, size limits fitted to the payload); refused in
    one line when it cannot be used."""
    studies.optuna_module()
    kept = kept_settings(scenario)
    reason = refusal(trial_scenario(scenario, kept, "--keep"))
    if reason:
        raise ConfigError(reason)
    space = load_space(scenario.client, scenario.space).without({name for role in kept.values() for name in role})
    space, notes = space.fitted(needed_bytes(scenario))
    for note in notes:
        listener.note(note)
    if not space.dimensions:
        raise ConfigError(f"--keep and the payload's size leave nothing in {space.source} to tune")
    return space


def run_tune(scenario: TuneScenario, target: Target, out_dir: Path, listener: Listener) -> ResultDocument:
    space = check_tune(scenario, listener)
    out_dir.mkdir(parents=True, exist_ok=True)
    if space.reaches_brokers:
        brokers.refuse_on_a_foreign_cluster(target, space)
    document = new_document("tune", target, scenario.model_dump(mode="json", exclude_none=True))
    count_brokers(document, target, scenario.timeout)
    if not scenario.one_at_a_time and (note := settle_note(scenario.client, scenario.settle)):
        listener.note(note)
    session = _Tune(scenario, space, target, out_dir, document, listener)
    try:
        run_steps(document, session.scratch, session.write, session.tune)
    finally:
        session.clusters.close()
    if document.error:
        raise LabFailed(f"{document.error}; the trials done so far are kept in {out_dir} and in the study", document)
    return document


@dataclass
class _Trial:
    number: int  # the study's
    kind: str  # default, preset NAME, search, final
    settings: Settings
    measured: Measured


class _Tune:
    def __init__(self, scenario: TuneScenario, space: SearchSpace, target: Target, out_dir: Path,
                 document: ResultDocument, listener: Listener) -> None:
        self.scenario, self.space, self.target, self.out_dir = scenario, space, target, out_dir
        self.document, self.listener = document, listener
        self.scratch = out_dir / f".trial-{uuid.uuid4().hex[:8]}"
        self.kept = kept_settings(scenario)
        self.histograms: list[dict[str, str]] = []
        self.started = time.monotonic()
        self.goal = GOALS[scenario.goal](scenario)
        self.failed_in_a_row = 0  # trials whose run failed, one after another
        self.rates: tuple[float, float] | None = None  # pareto: the range of offered rates
        self.clusters = brokers.TrialClusters(target, document.cluster.get("brokers", 1), listener, self._warm)

    # ---- the phases ----------------------------------------------------------------------------

    def tune(self) -> None:
        s = self.scenario
        path = s.study or self.out_dir / "study.journal"
        self.study = studies.open_study(path, self._setup(), s.seed, self.goal.directions)
        self.document.params.update(study=str(path), sampler=studies.sampler_name(),
                                    space={"source": self.space.source, "dimensions": [d.key for d in self.space.dimensions]})
        defaults = self.baseline = default_settings(s, self.space)
        self.document.params["baseline"] = defaults
        self.rates = self._rate_range() if s.goal == "pareto" else None
        at = {"latency": " one record at a time" if s.one_at_a_time else f" at {s.rate:g} records/s",
              "throughput": "",
              "pareto": f" at {self.rates[0]:,.0f}-{self.rates[1]:,.0f} records/s" if self.rates else ""}[s.goal]
        self.listener.note(f"study {path} ({studies.sampler_name()}), {len(self.space.dimensions)} settings to tune, "
                           f"{s.trials} trials{at}, objectives: {self.goal.metric} ({', '.join(self.goal.directions)})")
        done = len(self._trials("default"))
        rates = front.default_rates(self.rates[1], s.noise_runs) if self.rates else [None] * s.noise_runs
        for rate in rates[done:]:
            self._enqueue(self._params(self.space.params_of(defaults), rate), "default")
        for name in PRESETS:
            if not self._trials(f"preset {name}"):
                settings = preset(name, self.space)
                rate = self.rates[1] * front.PRESET_SHARE if self.rates else None
                self._enqueue(self._params(self.space.params_of(merged(defaults, settings)), rate), f"preset {name}",
                              settings)
        self.document.params["stop_reason"] = self._search()
        self.listener.note(f"search ended: {self.document.params['stop_reason']}")
        self._final_front() if self.rates else self._final()

    def _search(self) -> str:
        s, refused_in_a_row = self.scenario, 0
        while True:
            measured = self._measured()
            if len(measured) >= s.trials:
                return f"{s.trials} trials measured (--trials)"
            if s.time is not None and time.monotonic() - self.started > s.time:
                return f"{s.time:g} s of trials (--time)"
            if refused_in_a_row >= REFUSALS_PER_TRIAL * s.trials:
                return f"{refused_in_a_row} proposals in a row were refused: the space is mostly settings the client refuses"
            if self._terminated(measured):
                return "Optuna's terminator: further gains are unlikely within the noise"
            refused_in_a_row = 0 if self._one() else refused_in_a_row + 1

    def _one(self) -> bool:
        """One proposal: refused (False) or measured (True)."""
        optuna_trial = self.study.ask(self._distributions())
        kind = optuna_trial.user_attrs.get("kind", "search")
        # the default and the presets run as they are; their parameters only place them in the space
        settings = optuna_trial.user_attrs.get("runs", self.space.settings(optuna_trial.params))
        produce = self._produce(settings, f"tune trial {optuna_trial.number}", optuna_trial.params.get(RATE))
        optuna_trial.set_user_attr("settings", settings)
        reason = refusal(produce) or self.goal.refusal(produce)
        if reason:
            from optuna.trial import TrialState

            optuna_trial.set_user_attr("refused", reason)
            self.study.tell(optuna_trial, state=TrialState.FAIL)
            self.listener.note(f"trial {optuna_trial.number} refused before it ran: {reason}")
            return False
        best = self._best()
        measured = self.goal.measure(produce, self._target(settings), self.scratch, self.listener,
                                     best.value if best is not None and kind == "search" else None)
        for name, value in self.goal.constraints(measured).items():
            optuna_trial.set_constraint(name, value)
        optuna_trial.set_user_attr("figures", studies.figures(measured))
        from optuna.trial import TrialState

        if measured.objective is None and measured.bound is None:
            self.study.tell(optuna_trial, state=TrialState.FAIL)
        else:
            # a trial stopped early is told the value it cannot reach, with its constraint violated: the Gaussian
            # process sees only complete trials, and proposed a pruned trial's settings again and again
            self.study.tell(optuna_trial, self.goal.values(measured))
        self._keep(_Trial(optuna_trial.number, kind, settings, measured))
        return True

    def _final(self) -> None:
        s = self.scenario
        default = Candidate(DEFAULT, {})
        finalists = [Candidate(f"trial {t.number}", t.user_attrs["settings"])
                     for t in studies.best_distinct(self.study, self.goal.better == "higher", s.finalists)]
        if finalists:
            self.listener.note(f"re-measuring the default and {len(finalists)} finalist(s) {s.reruns} times each, "
                               f"interleaved: {', '.join(c.label for c in finalists)}")
            self._too_few(len(finalists))
        for _ in range(s.reruns if finalists else 0):
            for candidate in (default, *finalists):
                self._rerun(candidate)
        self._recommend(recommend(default, finalists, self.goal.metric, self.goal.better, fdr=s.fdr), default,
                        finalists)

    def _too_few(self, family: int) -> None:
        """A --final-runs too few to call any finalist among `family`, said before the re-runs start."""
        s = self.scenario
        if not can_decide(s.reruns, s.reruns, family, s.fdr):
            self.listener.note(decides_text("finalists", family, s.reruns, s.fdr, "--final-runs",
                                            "none will be called an improvement"))

    def _final_front(self) -> None:
        """--finalists points along the front, each re-measured against the default at its rate, interleaved."""
        s = self.scenario
        points = front.points(studies.feasible_search(self.study))
        trials = {t.number: t for t in self.study.get_trials(deepcopy=False)}
        pairs = [(Candidate(DEFAULT, {}, rate=point.offered),
                  Candidate(f"trial {point.number}", trials[point.number].user_attrs["settings"], rate=point.offered))
                 for point in front.spread(front.non_dominated(points), s.finalists)]
        if pairs:
            self.listener.note(f"re-measuring {len(pairs)} point(s) of the front against the default at their rates, "
                               f"{s.reruns} times each, interleaved: {', '.join(p.label for _, p in pairs)}")
            self._too_few(len(pairs))
        for _ in range(s.reruns if pairs else 0):
            for pair in pairs:
                for candidate in pair:
                    self._rerun(candidate)
        entries, written = [], []
        changes = judged_changes(pairs, self.goal.metric, self.goal.better, MIN_EFFECT_PCT, s.fdr)  # one family
        for default, point in pairs:
            chosen = recommend(default, [point], self.goal.metric, self.goal.better, fdr=s.fdr,
                               changes={point.label: changes[point.label]})
            change = chosen.changes[point.label]
            entries.append({"label": point.label, "rate": point.rate, "settings": point.settings,
                            "values": point.values, "feasible": point.feasible, "default_values": default.values,
                            "default_feasible": default.feasible, "change": change.model_dump(),
                            "recommended": chosen.chosen is not None, "reason": chosen.reason})
            if chosen.chosen is not None:
                name = f"pareto-{point.rate:.0f}"
                written += outputs.write_settings(
                    self.out_dir, name, merged(point.settings, self.kept),
                    f"kafkabench tune pareto: {point.label} for {s.client} at {point.rate:,.0f} records/s",
                    f"kafkabench tune pareto ({point.label}, client {s.client}, {s.size} B at {point.rate:,.0f}/s): "
                    f"{chosen.reason}")
        better = [e for e in entries if e["recommended"]]
        if better:
            reason = f"{len(better)} of {len(entries)} front points beat the default at their rate: " + "; ".join(
                f"{e['rate']:,.0f} records/s, {e['label']}, e2e p99 {e['change']['change_pct']:+.1f} %" for e in better)
        elif entries:
            reason = "no front point beat the default at its rate beyond noise: the default is as good as anything found"
        else:
            reason = "no trial met every check: the default is as good as anything found"
        self.document.params.update(front=entries, importances=self._importances(), outputs=written,
                                    recommendation={"label": ", ".join(e["label"] for e in better) or DEFAULT,
                                                    "settings": {}, "reason": reason})
        self.listener.note(f"front: {reason}")

    def _rerun(self, candidate: Candidate) -> None:
        """One re-run of a finalist or the default (at the candidate's rate when it has one)."""
        produce = self._produce(candidate.settings, f"tune {candidate.label}", candidate.rate)
        measured = self.goal.measure(produce, self._target(candidate.settings), self.scratch, self.listener, None)
        self._keep(_Trial(-1, f"final {candidate.label}", candidate.settings, measured))
        runs = measured.judged.runs if measured.judged is not None else []
        if runs and "broker_phases" in runs[0].params:  # one at a time: where its time went, its last re-run's
            self.document.params.setdefault("broker_phases", {})[candidate.label] = runs[0].params["broker_phases"]
        if measured.objective is not None:
            candidate.values.append(measured.objective.value)
        candidate.feasible.append(measured.feasible)

    # ---- pieces ----------------------------------------------------------------------------------

    def _produce(self, settings: Settings, source: str, rate: float | None = None):
        """A trial's produce run: the user's workload and settings, the trial's on top, at its rate if it has one."""
        produce = trial_scenario(self.scenario, merged(settings, self.kept), source)
        return produce if rate is None else produce.model_copy(update={"rate": round(rate, 1)})

    def _warm(self, target: Target) -> None:
        """The default's workload once on a cluster just started, measured nowhere."""
        self.goal.measure(self._produce({}, "tune warm-up"), target, self.scratch, SILENT, None)

    def _target(self, settings: Settings) -> Target:
        """Where a trial runs: the cluster given, or one with the brokers its settings ask for."""
        return self.clusters.target(variant_of(settings)) if self.space.reaches_brokers else self.target

    def _distributions(self) -> dict:
        distributions = self.space.distributions()
        if self.rates:
            from optuna.distributions import FloatDistribution

            distributions[RATE] = FloatDistribution(*self.rates, log=True)
        return distributions

    def _params(self, params: dict, rate: float | None) -> dict:
        return params if rate is None else {**params, RATE: rate}

    def _rate_range(self) -> tuple[float, float]:
        """The pareto study's rates: kept in the study, so a resumed tune samples the same range."""
        s = self.scenario
        if "rates" in self.study.user_attrs:
            low, high = self.study.user_attrs["rates"]
        else:
            high = s.max_rate
            if high is None:
                self.listener.note(f"probe: the default's producers unpaced for {PROBE.for_client(s.client).seconds:g} s")
                probe = run_probe(self._produce({}, "probe"), self.target, self.scratch, self.listener)
                if probe_failure(probe):
                    raise StepsEnded(probe_failure(probe))
                high = MAX_RATE_FACTOR * probe.achieved
            low = high / RATE_RANGE
            self.study.set_user_attr("rates", [low, high])
        self.document.params["rates"] = [low, high]
        return low, high

    def _setup(self) -> dict:
        """What a study is a study of: a journal made for another setup is not resumed."""
        s = self.scenario
        goal = {"latency": {"objective": s.objective, **({"one_at_a_time": True, "count": s.count, "warmup": s.warmup,
                                                          **({"pause": s.pause} if s.pause else {})}
                                                         if s.one_at_a_time else {"rate": s.rate})},
                "throughput": {"precision": s.precision},
                "pareto": {"max_rate": s.max_rate}}[s.goal]
        return {"goal": s.goal, **goal, "client": s.client, "size": s.size, "payload": [str(p) for p in s.payload],
                "slo": s.slo, "producers": s.producers,
                "consumers": s.consumers, "partitions": s.partitions, "replication_factor": s.replication_factor,
                "kept": self.kept, "space": {d.key: repr(d.distribution()) for d in self.space.dimensions}}

    def _enqueue(self, params: dict, kind: str, runs: Settings | None = None) -> None:
        """A trial to run first: `runs`, the settings it runs with ({} for the default), the params its figures
        are placed at in the space (clipped into its ranges)."""
        self.study.enqueue_trial(params, user_attrs={"kind": kind, "runs": runs or {}}, skip_if_exists=False)

    def _trials(self, kind: str) -> list:
        """The trials of a kind that ran or wait to run (enqueued by a tune that stopped before it got to them)."""
        from optuna.trial import TrialState

        return [t for t in self.study.get_trials(deepcopy=False) if t.user_attrs.get("kind") == kind
                and (t.user_attrs.get("figures") or t.state == TrialState.WAITING)]

    def _measured(self) -> list:
        """The trials of the search that ran (completed, stopped early or failed while running; not the default's
        runs, not the refused): what --trials counts."""
        return [t for t in self.study.get_trials(deepcopy=False)
                if t.user_attrs.get("figures") and t.user_attrs.get("kind") != "default"]

    def _terminated(self, measured: list) -> bool:
        """Optuna's terminator, with the noise floor as the error it compares against: the search ends when the
        regret bound of the Gaussian process is below the spread of the default's own runs."""
        if (studies.sampler_name() != "GPSampler" or len(self.goal.directions) > 1
                or len(measured) < studies.STARTUP_TRIALS + len(PRESETS) + 2):
            return False
        noise_runs = [t.value for t in studies.completed(self.study) if t.user_attrs.get("kind") == "default"]
        return studies.terminated(self.study, noise_runs, self.listener)

    def _keep(self, trial: _Trial) -> None:
        """A run per step the trial took (the latency goal's one, or a throughput search's probe and steps)."""
        for step in trial.measured.steps:
            self.document.runs.append(step.as_run(self.scenario.client, {
                "trial": trial.number, "kind": trial.kind, "step": step.kind, "offered_rate": step.offered,
                "settings": trial.settings, "verdict": "pass" if step.passed else "fail", "reasons": step.reasons}))
            self.histograms.append(step.encoded_histograms())
        self.listener.note(self._line(trial))
        self.listener.progress(len(self._measured()), self.scenario.trials, "tune: trials measured")
        self.write()
        failed = next((step for step in trial.measured.steps if step.error), None)
        if failed is None:
            self.failed_in_a_row = 0
            return
        where = f"trial {trial.number}" if trial.number >= 0 else trial.kind
        rate = "unpaced" if failed.offered < 0 else f"at {failed.offered:,.0f} records/s"
        message = f"{where} ({failed.kind} {rate}) failed: {failed.error}"
        self.failed_in_a_row += 1
        if self.failed_in_a_row >= FAILED_IN_A_ROW or not self._cluster_whole():
            raise StepsEnded(message)
        self.document.notes.append(f"{message}; every broker still answers, so the trial's settings are taken as the "
                                   f"cause: it counts as failed and the tune goes on")
        self.listener.note(self.document.notes[-1])

    def _cluster_whole(self) -> bool:
        """Every broker the tune started with still answers (a run that failed beside a whole cluster failed by
        its settings: a Java producer whose batches cannot fit its buffer.memory, say)."""
        try:
            with KafkaAdmin(self.target.connection, timeout_s=CLUSTER_CHECK_S) as admin:
                return len(admin.brokers()) >= self.document.cluster.get("brokers", 1)
        except KafkabenchError:
            return False

    def _line(self, trial: _Trial) -> str:
        m, s = trial.measured, self.scenario
        figure = self.goal.text(m.objective) if m.objective else f"no {self.goal.metric} measured"
        verdict = ("meets every check" if m.feasible else f"stopped early: {m.pruned}" if m.pruned
                   else f"fails: {'; '.join(m.reasons)}")
        changed = changes_text(trial.settings, self.baseline)
        best = self._best()
        incumbent = f"; best so far trial {best.number}: {self.goal.value_text(best.value)}" if best else ""
        if self.rates:
            rate = m.judged.achieved if m.judged and m.judged.achieved else 0
            figure += f" at {rate:,.0f} records/s"
            incumbent = f"; {len(self.study.best_trials)} on the front"
        left = ""
        if s.time is not None:
            left = f"; {max(0.0, s.time - (time.monotonic() - self.started)):,.0f} s left"
        where = f"trial {trial.number}, {len(self._measured())}/{s.trials} measured" if trial.number >= 0 else "re-run"
        return f"{trial.kind} ({where}): {changed}: {figure}, {verdict}{incumbent}{left}"

    def _best(self):
        """The best feasible trial so far (its value the incumbent a throughput trial must beat); none for pareto."""
        if len(self.goal.directions) > 1:
            return None
        best = min if self.goal.better == "lower" else max
        return best(filter(studies.feasible, studies.completed(self.study)), key=lambda t: t.value, default=None)

    def _recommend(self, recommendation: Recommendation, default: Candidate, finalists: list[Candidate]) -> None:
        chosen = recommendation.chosen
        self.document.params["final"] = [
            {"label": c.label, "settings": c.settings, "values": c.values, "feasible": c.feasible,
             **({"change": recommendation.changes[c.label].model_dump()} if c.label in recommendation.changes else {})}
            for c in (default, *finalists)]
        self.document.params["recommendation"] = {"label": chosen.label if chosen else DEFAULT,
                                                  "settings": chosen.settings if chosen else {},
                                                  "reason": recommendation.reason}
        self.document.params["importances"] = self._importances()
        self.listener.note(f"recommendation: {recommendation.reason}")
        self._write_outputs(chosen or default)

    def _importances(self) -> dict[str, float]:
        optuna = studies.optuna_module()
        # pareto: what mattered to e2e p99 (the rate, a parameter of its own, among the settings)
        target = (lambda t: t.values[0]) if len(self.goal.directions) > 1 else None
        try:
            return {k: round(v, 4) for k, v in optuna.importance.get_param_importances(self.study, target=target).items()}
        except (ValueError, RuntimeError):  # too few trials, or every trial gave the same value
            return {}

    def _write_outputs(self, chosen: Candidate) -> None:
        s = self.scenario
        at = (" one at a time" if s.one_at_a_time else f" at {s.rate:g}/s") if s.goal == "latency" else ""
        written = outputs.write_settings(
            self.out_dir, "tuned", merged(chosen.settings, self.kept),
            f"kafkabench tune {s.goal}: {chosen.label} for {s.client}",
            f"kafkabench tune {s.goal} ({chosen.label}, client {s.client}, {s.size} B{at}): "
            f"{self.document.params['recommendation']['reason']}")
        self.document.params["outputs"] = written + [outputs.write_plan(self.out_dir, s)]

    def write(self) -> None:
        self.document.params["trials"] = [studies.trial_entry(t) for t in self.study.get_trials(deepcopy=False)] \
            if hasattr(self, "study") else []
        write_result(self.document, self.out_dir, self.histograms)

