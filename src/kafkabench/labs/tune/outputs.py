"""What a tune leaves for the user: settings as a profile (`profiles/NAME.yaml`, usable by plans) and as
`NAME-producer.properties` / `NAME-consumer.properties` (usable by every lab's --producer-config), and for the
single-objective goals `tuned-plan.yaml`, which runs the tuned profile against the default on the tune's workload."""

from __future__ import annotations

from pathlib import Path

import yaml

from kafkabench.labs.tune.scenario import TuneScenario
from kafkabench.labs.tune.space import JVM_DEFAULT, ROLES
from kafkabench.labs.tune.trial import Settings


def write_settings(out_dir: Path, name: str, settings: Settings, header: str, description: str) -> list[str]:
    """The settings as properties files and a profile; the paths written, relative to `out_dir`."""
    written = []
    for role in ("producer", "consumer"):
        lines = [f"# {header}"] + [f"{key.replace(':', chr(92) + ':')}={value}"
                                   for key, value in sorted(settings.get(role, {}).items())]
        (out_dir / f"{name}-{role}.properties").write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(f"{name}-{role}.properties")
    profiles = out_dir / "profiles"
    profiles.mkdir(exist_ok=True)
    profile = {"description": description, **{role: settings[role] for role in ROLES if settings.get(role)}}
    if "jvm" in profile:  # a plan's profile lists the brokers' JVM options whole
        profile["jvm"] = [f"{prefix}{value}" for prefix, value in profile["jvm"].items() if value != JVM_DEFAULT]
    (profiles / f"{name}.yaml").write_text(yaml.safe_dump(profile, sort_keys=False), encoding="utf-8")
    return written + [f"profiles/{name}.yaml"]


def write_plan(out_dir: Path, scenario: TuneScenario) -> str:
    """A plan that runs the tuned profile against the default, three times, on the tune's workload (the latency
    lab's, for a tune one record at a time)."""
    s = scenario
    plan = {"name": "tuned", "description": "The tuned profile against the default, on the tune's workload.",
            "repeats": 3, "profiles": ["default", "tuned"], "clients": [s.client],
            "scenarios": [
                {"name": "tuned", "lab": "latency", "size": s.size, "count": s.count, "warmup": s.warmup, "pause": s.pause,
                 "replication_factor": s.replication_factor} if s.one_at_a_time else
                {"name": "tuned", "lab": "produce", "size": s.size, "rate": s.rate, "duration": s.settle + s.measure,
                 "consumers": s.consumers, "producers": s.producers, "partitions": s.partitions,
                 "replication_factor": s.replication_factor}]}
    (out_dir / "tuned-plan.yaml").write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
    return "tuned-plan.yaml"
