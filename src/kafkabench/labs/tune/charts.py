"""The tune's charts: every trial a point (its objective with the 95 % interval, in the order it ran), feasible and
infeasible apart, the default's runs and the recommendation marked; for `pareto`, every trial at its records/s and
e2e p99, the front drawn through the feasible ones and the points that beat the default at their rate marked."""

from __future__ import annotations

import plotly.graph_objects as go

from kafkabench.labs.tune.front import Point, non_dominated
from kafkabench.report import charts

TITLE = "Trials"
GROUPS = (("default", "the default", "#6b7280", "square"), ("feasible", "meets every check", "#2563eb", "circle"),
          ("infeasible", "fails a check", "#dc2626", "x"))


def trials_chart(entry: dict) -> dict | None:
    params = entry["params"]
    trials = [t for t in params.get("trials", []) if t.get("objective")]
    if not trials or params.get("goal") == "pareto":
        return None
    throughput = params.get("goal") == "throughput"
    objective = "sustainable records/s" if throughput else f"e2e {params.get('objective', 'p50')} ms"
    chosen = (params.get("recommendation") or {}).get("label", "")
    traces = []
    for group, name, colour, symbol in GROUPS:
        members = [t for t in trials if _group(t) == group]
        if not members:
            continue
        traces.append(go.Scatter(
            x=[t["number"] for t in members], y=[t["objective"][0] for t in members], name=name, mode="markers",
            marker={"color": colour, "symbol": symbol, "size": 9},
            error_y={"type": "data", "symmetric": False, "color": "#9ca3af",
                     "array": [t["objective"][2] - t["objective"][0] for t in members],
                     "arrayminus": [t["objective"][0] - t["objective"][1] for t in members]},
            customdata=[t["kind"] for t in members],
            hovertemplate=f"trial %{{x}} (%{{customdata}})<br>{objective} %{{y:,.4g}}<extra></extra>"))
    recommended = [t for t in trials if f"trial {t['number']}" == chosen]
    if recommended:
        traces.append(go.Scatter(x=[recommended[0]["number"]], y=[recommended[0]["objective"][0]],
                                 name="recommended", mode="markers",
                                 marker={"color": "#16a34a", "symbol": "star", "size": 18,
                                         "line": {"color": "#14532d", "width": 1}},
                                 hovertemplate=f"recommended: trial %{{x}}<br>{objective} %{{y:,.4g}}<extra></extra>"))
    values = [v for t in trials for v in t["objective"]]
    yaxis = (charts.axis_style(objective, rangemode="tozero", tickformat=",.0f") if throughput
             else charts.axis_style(f"{objective} (log scale)", **charts.log_ticks(values)))
    layout = charts.base_layout(TITLE, height=420, xaxis=charts.axis_style("trial (in the order it ran)"), yaxis=yaxis)
    spread = ("bars: from the highest rate that passed to the lowest that failed above it" if throughput else
              "bars: its 95 % interval, a bootstrap over the trial's windows")
    caption = (f"Each measured trial's {objective} ({spread}). Grey squares: the default, measured first as the "
               "noise floor; blue: trials that met every check; red: trials that failed one (an SLO at the upper end "
               "of its interval, the rate, send errors or growing lag). The star: the recommendation, confirmed by "
               "the re-runs.")
    return charts.make_chart("tune-trials", entry["id"], TITLE, caption, go.Figure(traces, layout), wide=True)


def _group(trial: dict) -> str:
    if trial["kind"] == "default":
        return "default"
    return "feasible" if trial.get("feasible") else "infeasible"


def front_chart(entry: dict) -> dict | None:
    params = entry["params"]
    trials = [t for t in params.get("trials", []) if t.get("objective") and t.get("achieved")]
    if params.get("goal") != "pareto" or not trials:
        return None
    traces = []
    for group, name, colour, symbol in GROUPS:
        members = [t for t in trials if _group(t) == group]
        if members:
            traces.append(go.Scatter(
                x=[t["achieved"] for t in members], y=[t["objective"][0] for t in members], name=name, mode="markers",
                marker={"color": colour, "symbol": symbol, "size": 9}, customdata=[t["number"] for t in members],
                error_y={"type": "data", "symmetric": False, "color": "#9ca3af",
                         "array": [t["objective"][2] - t["objective"][0] for t in members],
                         "arrayminus": [t["objective"][0] - t["objective"][1] for t in members]},
                hovertemplate="trial %{customdata}<br>%{x:,.0f} records/s<br>e2e p99 %{y:,.4g} ms<extra></extra>"))
    front = _front([t for t in trials if t.get("feasible") and t["kind"] != "default"])
    if front:
        traces.append(go.Scatter(x=[t["achieved"] for t in front], y=[t["objective"][0] for t in front],
                                 name="the front", mode="lines", line={"color": "#2563eb", "shape": "hv", "width": 1},
                                 hoverinfo="skip"))
    better = {e["label"] for e in params.get("front", []) if e.get("recommended")}
    marked = [t for t in trials if f"trial {t['number']}" in better]
    if marked:
        traces.append(go.Scatter(x=[t["achieved"] for t in marked], y=[t["objective"][0] for t in marked],
                                 name="beat the default at its rate", mode="markers",
                                 marker={"color": "#16a34a", "symbol": "star", "size": 18,
                                         "line": {"color": "#14532d", "width": 1}},
                                 customdata=[t["number"] for t in marked],
                                 hovertemplate="trial %{customdata}, re-measured<extra></extra>"))
    values = [v for t in trials for v in t["objective"]]
    layout = charts.base_layout("The front", height=440,
                                xaxis=charts.axis_style("records/s achieved", rangemode="tozero", tickformat=",.0f"),
                                yaxis=charts.axis_style("e2e p99 ms (log scale)", **charts.log_ticks(values)))
    caption = ("Each measured trial at the records/s it achieved and its e2e p99 (bars: the 95 % interval, a bootstrap "
               "over the trial's windows); each trial ran at a rate the sampler chose with its settings. Grey squares: "
               "the default at rates across the range, its own curve; blue: trials that met every check; red: trials "
               "that failed one. The line: the front, the feasible trials nothing beats on both. Stars: front points "
               "that beat the default at their rate in the interleaved re-runs.")
    return charts.make_chart("tune-front", entry["id"], "The front", caption, go.Figure(traces, layout), wide=True)


def _front(trials: list[dict]) -> list[dict]:
    """The feasible trials no other beats on both e2e p99 (lower) and records/s (higher), by records/s."""
    points = {t["number"]: t for t in trials}
    kept = non_dominated([Point(t["number"], t["objective"][0], t["achieved"], t.get("offered") or 0) for t in trials])
    return [points[p.number] for p in kept]
