"""The stall bound of a delivery cell's group (consumers.watch acts on it): --stall-bound, or STALL_SESSIONS session
timeouts, refused where it cannot work."""

from __future__ import annotations

from kafkabench.cluster.target import Target
from kafkabench.errors import ConfigError
from kafkabench.labs.delivery.scenario import DeliveryScenario

# the default stall bound, in session timeouts: long past a broker's failover, well short of max.poll.interval.ms
# (300 s), after which the group itself drops a member that heartbeats but no longer polls
STALL_SESSIONS = 5


def stall_bound(scenario: DeliveryScenario, target: Target, defaults: dict[str, str]) -> float | None:
    """The bound after which a stalled member is replaced: --stall-bound, else STALL_SESSIONS x the session timeout
    where the launcher can stop a process; None: stalls are recorded, nobody is replaced."""
    if scenario.stall_bound is not None:
        return scenario.stall_bound
    return STALL_SESSIONS * session_timeout_s(scenario, defaults) if target.launcher.name == "local" else None


def check_stall_bound(scenario: DeliveryScenario, target: Target, defaults: dict[str, str]) -> None:
    """A bound the group's own session would outlast, or one a launcher cannot act on: refused before the cell."""
    if scenario.stall_bound is None:
        return
    if target.launcher.name != "local":
        raise ConfigError(f"--stall-bound replaces a stalled member by stopping its process; with --launcher "
                          f"{target.launcher.name} kafkabench cannot stop it: drop --stall-bound (stalls are still "
                          "recorded) or the launcher")
    if scenario.stall_bound < (session := session_timeout_s(scenario, defaults)):
        raise ConfigError(f"--stall-bound {scenario.stall_bound:g} s is shorter than the consumers' session.timeout.ms "
                          f"({session:g} s): a member would be replaced before the group could move its partitions; "
                          f"give at least {session:g}")


def session_timeout_s(scenario: DeliveryScenario, defaults: dict[str, str]) -> float:
    """The consumers' session.timeout.ms as the cell gives it to them, in seconds."""
    given = {**defaults, **scenario.settings({}).values("consumer")}["session.timeout.ms"]
    return float(given) / 1000
