"""A delivery verdict in words, one line per failure, worded the same in the terminal and the report:
"acks=1, RF 3, min.insync 1, leader killed 3x: 1,204 acknowledged messages lost (0.12 %)"; "0 lost" only when
every acknowledged message was read back."""

from __future__ import annotations

from kafkabench.labs.delivery.checker import Verdict


def verdict_line(verdict: Verdict, settings_text: str = "") -> str:
    """The loss line: "acks=1, RF 3, min.insync 1, leader killed 3x: 1,204 acknowledged messages lost (0.12 %)".
    "0 lost" only when every acknowledged message was read back."""
    if not verdict.acknowledged:
        return _said(settings_text, f"no message acknowledged ({verdict.sent:,} sent): nothing to lose")
    if not verdict.lost:
        found_late = f" ({verdict.unconfirmed_misses:,} only by the second read)" if verdict.unconfirmed_misses else ""
        return _said(settings_text, f"0 lost: all {verdict.acknowledged:,} acknowledged messages read back{found_late}")
    words = (f"{_counted(verdict.lost, 'acknowledged message')} lost "
             f"({_percent(verdict.lost, verdict.acknowledged)} %)")
    return _said(settings_text, words if verdict.loss_confirmed else f"{words}, not confirmed by a second read")


def verdict_lines(verdict: Verdict, settings_text: str = "") -> list[str]:
    """The loss line, then a line per other failure, then what is reported without being one."""
    failures = verdict.failures
    lines = [verdict_line(verdict, settings_text)]
    if "duplicated" in failures:
        lines.append(f"{_counted(verdict.duplicated, 'duplicate copy', 'duplicate copies')} of "
                     f"{_counted(verdict.duplicated_ids, 'message')} despite idempotence")
    if "reordered" in failures:
        lines.append(f"{_counted(verdict.reordered, 'message')} read out of order despite idempotence")
    if verdict.offset_mismatch:
        lines.append(f"{_counted(verdict.offset_mismatch, 'acknowledged message')} read back, but never at the "
                     f"offset acknowledged")
    if verdict.strays:
        lines.append(f"{_counted(verdict.strays, 'record')} with an id no producer's history sent: the histories "
                     f"do not describe this topic")
    if verdict.delivered_despite_error:
        lines.append(f"{_counted(verdict.delivered_despite_error, 'send')} reported failed delivered anyway (not a "
                     f"failure: a client that gives up cannot know what the broker wrote)")
    return lines[:1] + [_said(settings_text, line) for line in lines[1:]]


def _said(settings_text: str, words: str) -> str:
    return f"{settings_text}: {words}" if settings_text else words


def _counted(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def _percent(part: int, whole: int) -> str:
    """Two decimals, never rounded to 0 or 100 when it is neither."""
    value = 100 * part / whole
    if part in (0, whole):
        return f"{value:.0f}"
    if value < 0.01:
        return "< 0.01"
    if value > 99.99:
        return "> 99.99"
    return f"{value:.2f}"
