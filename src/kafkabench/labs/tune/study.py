"""The tune's Optuna study: kept in a journal file (a tune given the same file resumes it; optuna-dashboard opens
it), sampled by a Gaussian process that models noise and the SLO constraints (`GPSampler`, when PyTorch is
installed: `pip install 'kafkabench[tune-gp]'`) or else by multivariate TPE with the same constraints.

A trial's constraints (each <= 0 when met) are set on the trial itself, where both samplers read them; its user
attributes carry what the tune needs back: its kind (default, preset, search), the settings it ran, why it was
refused, its measured figures.
"""

from __future__ import annotations

import json
import statistics
import warnings
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from kafkabench.errors import ConfigError

STUDY_NAME = "kafkabench-tune"
STARTUP_TRIALS = 8  # sampled at random (after the seeded ones) before the model proposes


def optuna_module():
    try:
        import optuna
    except ImportError:
        raise ConfigError("kafkabench tune needs Optuna: pip install 'kafkabench[tune]'") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    return optuna


def sampler_name() -> str:
    return "GPSampler" if find_spec("torch") and find_spec("scipy") else "TPESampler"


def make_sampler(seed: int):
    optuna = optuna_module()
    if sampler_name() == "GPSampler":
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=STARTUP_TRIALS)
    return optuna.samplers.TPESampler(seed=seed, multivariate=True, n_startup_trials=STARTUP_TRIALS)


def open_study(path: Path, setup: dict[str, Any], seed: int, directions: tuple[str, ...] = ("minimize",)):
    """The study in `path`, made for `setup` (the workload, goal and space); a file made for another setup is
    refused rather than mixed with it."""
    optuna = optuna_module()
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path.parent.mkdir(parents=True, exist_ok=True)
    storage = JournalStorage(JournalFileBackend(str(path)))
    study = optuna.create_study(study_name=STUDY_NAME, storage=storage, sampler=make_sampler(seed),
                                directions=list(directions), load_if_exists=True)
    recorded = study.user_attrs.get("setup")
    canonical = json.loads(json.dumps(setup, default=str))
    if recorded is None:
        study.set_user_attr("setup", canonical)
    elif recorded != canonical:
        differs = sorted(key for key in {*recorded, *canonical} if recorded.get(key) != canonical.get(key))
        raise ConfigError(f"--study {path} holds a tune of another setup ({', '.join(differs)} differ); give a new "
                          f"--study file, or the same options to resume it")
    return study


def completed(study) -> list:
    from optuna.trial import TrialState

    return [t for t in study.get_trials(deepcopy=False) if t.state == TrialState.COMPLETE]


def feasible(trial) -> bool:
    """Measured, and every constraint met."""
    return bool(trial.constraints) and all(value <= 0 for value in trial.constraints.values())


def feasible_search(study) -> list:
    """The search's trials (not the default's runs) that met every constraint."""
    return [t for t in completed(study) if t.user_attrs.get("kind") != "default" and feasible(t)]


def best_distinct(study, higher: bool, count: int) -> list:
    """The `count` best feasible trials of the search, one per distinct settings."""
    ranked = sorted(feasible_search(study), key=lambda t: t.value, reverse=higher)
    best: dict[str, Any] = {}
    for t in ranked:
        key = repr(sorted((role, sorted(v.items())) for role, v in t.user_attrs["settings"].items()))
        best.setdefault(key, t)
        if len(best) == count:
            break
    return list(best.values())


def terminated(study, noise_runs: list[float], listener) -> bool:
    """Optuna's terminator, judged on the feasible trials (a trial stopped early is told its bound, not a figure)
    with the noise floor (the spread of the default's own runs) as the error: True when the Gaussian process's
    regret bound is below it."""
    trials = [t for t in completed(study) if feasible(t)]
    if len(noise_runs) < 2 or len(trials) < 2:
        return False
    from optuna.terminator import RegretBoundEvaluator

    try:
        return RegretBoundEvaluator().evaluate(trials, study.direction) < statistics.stdev(noise_runs)
    except Exception as exc:  # the terminator's own model failing must not end a tune
        listener.note(f"Optuna's terminator could not judge ({exc}); going on")
        return False


def figures(measured) -> dict:
    """A measured trial's figures, as kept in its user attributes (goals.Measured)."""
    judged = measured.judged
    return {"objective": measured.objective.as_list() if measured.objective else None,
            "percentiles_ms": {name: i.as_list() for name, i in judged.percentiles.items()} if judged else {},
            "achieved": judged.achieved if judged else None, "offered": judged.offered if judged else None,
            "feasible": measured.feasible,
            "reasons": measured.reasons, "pruned": measured.pruned, "steps": len(measured.steps)}


def trial_entry(trial) -> dict:
    """A trial as the result document lists it (one stopped early: pruned, without a value; the study holds its
    bound)."""
    attrs = trial.user_attrs
    pruned = bool(attrs.get("figures", {}).get("pruned"))
    return {"number": trial.number, "kind": attrs.get("kind", "search"),
            "state": "pruned" if pruned else trial.state.name.lower(), "params": trial.params,
            "settings": attrs.get("settings", {}), "refused": attrs.get("refused"),
            "value": trial.values[0] if trial.values and not pruned else None,
            "started": _iso(trial.datetime_start), "finished": _iso(trial.datetime_complete),
            **attrs.get("figures", {})}


def _iso(moment) -> str | None:
    return moment.isoformat(timespec="seconds") if moment else None
