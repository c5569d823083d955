"""The capacity lab's chart: latency against the offered rate (seed 000's "latency drops with volume", as a
curve), every step a point (repeats each their own, never averaged), the achieved rate on a second axis, the SLO
as a line and the sustainable rate marked."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from kafkabench.core.results import ResultDocument
from kafkabench.labs.capacity.slo import parse_slo
from kafkabench.report import charts

TITLE = "Latency against offered rate"
PERCENTILES = (("p50_ms", "p50", "#2563eb"), ("p99_ms", "p99", "#dc2626"), ("p999_ms", "p99.9", "#7c3aed"))


def annotate(document: ResultDocument, entry: dict) -> None:
    metric = document.params.get("metric", "e2e")
    stats_key = "e2e" if metric == "e2e" else "publish_latency"
    points = []
    for run, step in zip(document.runs, document.params.get("steps", [])):
        stat = run.stats.get(stats_key)
        if step["kind"] == "probe" or stat is None:
            continue
        points.append({"offered": step["offered"], "achieved": step["achieved"], "verdict": step["verdict"],
                       "kind": step["kind"], "intervals": step["percentiles_ms"],
                       **{key: getattr(stat, key) for key, _name, _colour in PERCENTILES}})
    entry["capacity_points"] = sorted(points, key=lambda point: point["offered"])
    entry["capacity_metric"] = metric
    entry["capacity_slos"] = [[slo.name, slo.limit_ms] for slo in map(parse_slo, document.params.get("slo", []))]
    entry["capacity_found"] = (document.params.get("sustainable") or {}).get("records_per_s")


def rate_chart(entry: dict) -> dict | None:
    points = entry.get("capacity_points") or []
    if len(points) < 2:
        return None
    metric = entry["capacity_metric"]
    x = [point["offered"] for point in points]
    traces = [go.Scatter(x=x, y=[point[key] for point in points], name=f"{metric} {name}", mode="lines+markers",
                         line={"color": colour}, error_y=_slo_bars(points, name),
                         marker={"symbol": ["circle" if p["verdict"] == "pass" else "x" for p in points], "size": 9},
                         hovertemplate=f"%{{x:,.0f}} records/s offered<br>{metric} {name} %{{y:.2f}} ms<extra></extra>")
              for key, name, colour in PERCENTILES]
    traces.append(go.Scatter(x=x, y=[point["achieved"] for point in points], name="achieved records/s", yaxis="y2",
                             mode="markers", marker={"color": "#6b7280", "symbol": "diamond-open", "size": 9},
                             hovertemplate="%{x:,.0f} offered<br>%{y:,.0f} achieved<extra></extra>"))
    latencies = [point[key] for point in points for key, _n, _c in PERCENTILES if point[key]]
    latencies += [limit for _name, limit in entry["capacity_slos"]]
    shapes = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": limit, "y1": limit,
               "line": {"color": "#dc2626", "dash": "dash", "width": 1}} for _name, limit in entry["capacity_slos"]]
    # an annotation on a log axis is placed by the logarithm of its value (a shape by the value itself)
    annotations = [{"xref": "paper", "x": 1, "y": math.log10(limit), "text": f"SLO {name} {limit:g} ms", "showarrow": False,
                    "xanchor": "right", "yanchor": "bottom", "font": {"color": "#dc2626"}}
                   for name, limit in entry["capacity_slos"]]
    if entry.get("capacity_found"):
        shapes.append({"type": "line", "yref": "paper", "y0": 0, "y1": 1, "x0": entry["capacity_found"],
                       "x1": entry["capacity_found"], "line": {"color": "#16a34a", "width": 2}})
        annotations.append({"yref": "paper", "y": 1, "x": entry["capacity_found"], "showarrow": False,
                            "text": f"sustainable {entry['capacity_found']:,.0f}/s", "font": {"color": "#16a34a"},
                            "yanchor": "bottom"})
    layout = charts.base_layout(
        TITLE, height=440, shapes=shapes, annotations=annotations,
        xaxis=charts.axis_style("offered records/s"),
        yaxis=charts.axis_style(f"{metric} ms (log scale)", **charts.log_ticks(latencies)),
        yaxis2={**charts.axis_style("achieved records/s", rangemode="tozero", tickformat=",.0f"), "overlaying": "y",
                "side": "right", "showgrid": False})
    caption = (f"Each step of the search or sweep: {metric} percentiles of its measured seconds against the rate "
               "offered (x: failed step). Bars: the 95 % interval of each SLO percentile (a bootstrap over the "
               "step's windows). Grey: the rate achieved. Dashed: the SLO; green: the sustainable rate found.")
    return charts.make_chart("capacity-rate", entry["id"], TITLE, caption, go.Figure(traces, layout), wide=True)


def _slo_bars(points: list[dict], name: str) -> dict | None:
    if not all(name in point["intervals"] for point in points):
        return None
    return {"type": "data", "symmetric": False, "color": "#9ca3af",
            "array": [point["intervals"][name][2] - point["intervals"][name][0] for point in points],
            "arrayminus": [point["intervals"][name][0] - point["intervals"][name][1] for point in points]}
