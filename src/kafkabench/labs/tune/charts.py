"""The tune's chart: every trial a point (its objective with the 95 % interval, in the order it ran), feasible and
infeasible apart, the default's runs and the recommendation marked, the SLO limit as a line where the objective is
the SLO's percentile."""

from __future__ import annotations

import plotly.graph_objects as go

from kafkabench.report import charts

TITLE = "Trials"
GROUPS = (("default", "the default", "#6b7280", "square"), ("feasible", "meets every check", "#2563eb", "circle"),
          ("infeasible", "fails a check", "#dc2626", "x"))


def trials_chart(entry: dict) -> dict | None:
    params = entry["params"]
    trials = [t for t in params.get("trials", []) if t.get("objective")]
    if not trials:
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
