"""The durability lab's chart: what each cell's settings cost (records/s against publish p99, the cells
table's own medians and intervals) beside what they bought (what writes met with the most brokers down)."""

from __future__ import annotations

import plotly.graph_objects as go

from kafkabench.labs.durability.report import interval_text, rate_text
from kafkabench.report import charts
from kafkabench.report.table import ms

TITLE = "Records/s against publish p99, per cell"
SYMBOLS = {"accepted": "circle", "refused": "square", "no answer": "diamond", "mixed": "triangle-up"}
SEVERAL = "star"  # different answers paused and killed
UNPROBED = "availability unknown"  # not probed, or its probe failed


def cost_chart(result: dict) -> dict | None:
    cells = [cell for cell in result.get("durability_cells") or [] if cell["publish_p99_ms"] is not None]
    if not cells:
        return None
    probed = any(cell["availability"] for cell in cells)
    seen: dict[str, str] = {}
    marks = dict.fromkeys(cell["availability"] for cell in cells)
    traces = [_trace([cell for cell in cells if cell["availability"] == mark], mark, seen) for mark in marks]
    latencies = [v for cell in cells for v in (cell["publish_p99_ms"], *(cell["publish_p99_ms_ci"] or ())) if v > 0]
    log = bool(latencies) and max(latencies) / min(latencies) > charts.LOG_WHEN_RATIO
    layout = charts.base_layout(
        TITLE, height=460, showlegend=probed,
        xaxis=charts.axis_style("publish p99 ms, median over repeats" + (" (log scale)" if log else ""),
                                **(charts.log_ticks(latencies) if log else {})),
        yaxis=charts.axis_style("records/s, median over repeats", rangemode="tozero"))
    caption = ("Each point is a cell: the median over its repeats of records/s (up) and of publish p99 (right), the "
               "cells table's numbers. Bars: 95 % bootstrap intervals of those medians (none from one repeat). "
               "Colour: client.")
    if probed:
        caption += (" Marker: what writes met with the most brokers down, probed per RF / min.insync / acks "
                    "(the availability table).")
    return charts.make_chart("durability-cost", result["id"], TITLE, caption, go.Figure(traces, layout), wide=True)


def _trace(cells: list[dict], mark: str | None, seen: dict[str, str]) -> go.Scatter:
    cells = sorted(cells, key=lambda cell: cell["publish_p99_ms"])  # so that neighbours' labels alternate
    x = [cell["publish_p99_ms"] for cell in cells]
    y = [cell["records_per_s"] for cell in cells]
    return go.Scatter(
        x=x, y=y, text=[cell["label"] for cell in cells], name=mark or UNPROBED, mode="markers+text",
        textposition=[("top center", "bottom center")[i % 2] for i in range(len(cells))],
        error_x=_error_bars(x, [cell["publish_p99_ms_ci"] for cell in cells]),
        error_y=_error_bars(y, [cell["records_per_s_ci"] for cell in cells]),
        marker={"size": 13, "symbol": _symbol(cells[0]["writes"]), "line": {"width": 1.5, "color": "#1f2937"},
                "color": [charts.colour(cell["client"], seen) for cell in cells]},
        customdata=[[interval_text(cell["records_per_s_ci"], rate_text), interval_text(cell["publish_p99_ms_ci"], ms),
                     cell["repeats"]] for cell in cells],
        meta={"availability": mark, "cells": [cell["label"] for cell in cells], "runs": [cell["runs"] for cell in cells]},
        hovertemplate=("<b>%{text}</b><br>%{y:,.0f} records/s (CI %{customdata[0]})<br>publish p99 %{x:.2f} ms "
                       "(CI %{customdata[1]})<br>%{customdata[2]} repeat(s)<extra>%{fullData.name}</extra>"))


def _error_bars(values: list[float], intervals: list[list[float] | None]) -> dict:
    """Asymmetric bars to each interval's ends; none for a cell without one."""
    return {"type": "data", "symmetric": False, "thickness": 1.5, "width": 4,
            "array": [bounds[1] - value if bounds else None for value, bounds in zip(values, intervals)],
            "arrayminus": [value - bounds[0] if bounds else None for value, bounds in zip(values, intervals)]}


def _symbol(writes: list[str]) -> str:
    if not writes:
        return "circle-open"
    return SYMBOLS.get(writes[0], SEVERAL) if len(writes) == 1 else SEVERAL
