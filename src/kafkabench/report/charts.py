"""Plotly figures of a report, from its data dict. Built with plotly.graph_objects so every property is
validated here, then handed to the page as JSON.

Every chart carries the exact numbers of the result files (no rounding): tests read them back from the
drawn page. Each chart is {"id", "chart" (its kind), "result" (its result's id, or "summary"), "title",
"caption", "wide" (takes a whole row), "figure"}.
"""

from __future__ import annotations

import json
import math

import plotly.graph_objects as go
import plotly.io as pio

from kafkabench.report.spectrum import axis_position

# one colour per client in every chart; others take the rest in turn
CLIENT_COLOURS = {"confluent": "#2563eb", "java": "#dc2626", "kafka-python": "#d97706", "aiokafka": "#7c3aed",
                  "http": "#0891b2", "tcp": "#4b5563", "apache": "#db2777"}
OTHER_COLOURS = ("#059669", "#9333ea", "#ea580c", "#0d9488", "#be123c", "#65a30d", "#0369a1", "#a16207")
METRIC_DASH = {"e2e": "solid", "produce": "dash", "consume": "dot", "publish_latency": "solid", "publish_delay": "dot"}
SPECTRUM_TICKS = ((1, "0%"), (2, "50%"), (10, "90%"), (100, "99%"), (1e3, "99.9%"), (1e4, "99.99%"),
                  (1e5, "99.999%"), (1e6, "99.9999%"), (1e7, "99.99999%"))
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
CPU_COLOURS = [[0, "#0ea5e9"], [0.5, "#f59e0b"], [1, "#b91c1c"]]  # dark enough for hollow markers on white
LOG_WHEN_RATIO = 30  # bars spanning more than this factor get a log axis: a 1 ms floor beside 250 ms stays visible


def colour(name: str, seen: dict[str, str]) -> str:
    if name in CLIENT_COLOURS:
        return CLIENT_COLOURS[name]
    return seen.setdefault(name, OTHER_COLOURS[len(seen) % len(OTHER_COLOURS)])


def base_layout(title: str, **extra) -> go.Layout:
    layout = go.Layout(
        template=go.layout.Template(),  # the default template would add ~6 kB to every chart
        title={"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        font={"family": FONT, "size": 12, "color": "#1f2937"},
        paper_bgcolor="#ffffff", plot_bgcolor="#ffffff", height=380,
        margin={"l": 64, "r": 24, "t": 48, "b": 56},
        # under the plot, below the axis title, whatever the height: the margin grows to fit it
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0},
        hoverlabel={"font": {"family": FONT}},
    )
    layout.update(**extra)
    return layout


def axis_style(title: str, **extra) -> dict:
    return {"title": {"text": title}, "gridcolor": "#e5e7eb", "zerolinecolor": "#d1d5db", "linecolor": "#9ca3af",
            "automargin": True, **extra}


def log_ticks(values: list[float]) -> dict:
    """1-2-5 ticks over the values' range with plain labels (Plotly's own log ticks label every minor step)."""
    if not values:
        return {"type": "log"}
    low, high = min(values), max(values)
    ticks = [m * 10 ** e for e in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1) for m in (1, 2, 5)]
    ticks = [t for t in ticks if low / 2.5 <= t <= high * 2.5]
    return {"type": "log", "tickvals": ticks, "ticktext": [f"{t:g}" for t in ticks]}


def make_chart(kind: str, result_id: str, title: str, caption: str, figure: go.Figure, wide: bool = False) -> dict:
    return {"id": f"{result_id}-{kind}", "chart": kind, "result": result_id, "title": title, "caption": caption,
            "wide": wide, "figure": json.loads(pio.to_json(figure, validate=True))}


def spectrum_chart(result: dict) -> dict | None:
    # several metrics per client (the latency lab's e2e, produce, consume): one at a time, chosen with buttons,
    # keeps the legend readable
    one_metric = result["spectrum_one_metric"]
    seen: dict[str, str] = {}
    traces, widest, values = [], 2.0, []
    for run in result["runs"]:
        for metric, points in run["spectra"].items():
            trace = _spectrum_trace(run, metric, points, colour(run["client"] if one_metric else run["label"], seen),
                                    "solid" if one_metric else METRIC_DASH.get(metric, "solid"))
            trace.visible = metric == "e2e" or not one_metric
            widest = max(widest, *trace.x)
            values += [v for v in points["value_ms"] if v > 0]
            traces.append(trace)
    if not traces:
        return None
    ticks = [(value, text) for value, text in SPECTRUM_TICKS if value <= widest * 1.5]
    layout = base_layout("Latency by percentile", height=440,
                     xaxis=axis_style("percentile", type="log", tickvals=[t[0] for t in ticks], ticktext=[t[1] for t in ticks],
                                 range=[0, math.log10(widest) * 1.04]),
                     yaxis=axis_style("latency ms", **log_ticks(values)))
    if one_metric:
        layout.update(updatemenus=[_metric_buttons(traces)])
    caption = ("HdrHistogram percentile spectrum of every recorded value: read across at 99 % to see the latency one "
               "message in a hundred exceeds. Each curve ends at its maximum (the dot). x is 1/(1 - percentile) on a "
               "log scale.")
    return make_chart("latency-spectrum", result["id"], "Latency by percentile", caption, go.Figure(traces, layout),
                  wide=one_metric)


def _spectrum_trace(run: dict, metric: str, points: dict, shade: str, dash: str) -> go.Scatter:
    x = [axis_position(p) for p in points["percentile"]]
    return go.Scatter(x=x, y=points["value_ms"], customdata=points["percentile"], name=f"{run['label']} {metric}",
                      mode="lines+markers", line={"shape": "hv", "width": 2, "color": shade, "dash": dash},
                      marker={"size": [0] * (len(x) - 1) + [7]},  # the maximum, marked
                      meta={"run": run["index"], "metric": metric},
                      hovertemplate="%{fullData.name}<br>from p%{customdata:.5~f}: %{y:,.3f} ms<extra></extra>")


def _metric_buttons(traces: list[go.Scatter]) -> dict:
    metrics = list(dict.fromkeys(trace.meta["metric"] for trace in traces))
    return {"type": "buttons", "direction": "right", "showactive": True, "active": metrics.index("e2e") if "e2e" in metrics else 0,
            "x": 1, "xanchor": "right", "y": 1.02, "yanchor": "bottom", "pad": {"r": 0, "t": 0}, "font": {"size": 11},
            "buttons": [{"label": metric, "method": "restyle",
                         "args": [{"visible": [trace.meta["metric"] == metric for trace in traces]}]} for metric in metrics]}


def timeline_chart(result: dict) -> dict | None:
    seen: dict[str, str] = {}
    traces, bands = [], []
    for run in result["runs"]:
        timeline = run["timeline"]
        if not timeline:
            continue
        x, shade = [entry["t_s"] for entry in timeline], colour(run["label"], seen)
        traces.append(go.Scatter(x=x, y=[entry["records_per_s"] for entry in timeline], name=f"{run['label']} records/s",
                                 mode="lines+markers", line={"color": shade, "width": 2}, meta={"run": run["index"], "field": "records_per_s"},
                                 customdata=[entry.get("mb_per_s") for entry in timeline],
                                 hovertemplate="t=%{x:.2f} s: %{y:,.0f} records/s, %{customdata:.2f} MB/s<extra></extra>"))
        p99 = [entry.get("p99_ms") for entry in timeline]
        if any(value is not None for value in p99):
            metric = timeline[0].get("metric", "")
            traces.append(go.Scatter(x=x, y=p99, name=f"{run['label']} {metric} p99 ms", yaxis="y2", mode="lines+markers",
                                     line={"color": shade, "width": 1.5, "dash": "dot"}, meta={"run": run["index"], "field": "p99_ms"},
                                     hovertemplate="t=%{x:.2f} s: p99 %{y:,.3f} ms<extra></extra>"))
        bands += fault_bands(run, shade, x[-1])
    if not traces:
        return None
    layout = base_layout("Throughput over time", xaxis=axis_style("seconds since start"), yaxis=axis_style("records/s", rangemode="tozero"),
                     yaxis2=axis_style("p99 ms per window", overlaying="y", side="right", rangemode="tozero", showgrid=False,
                                  tickmode="auto"), shapes=bands)
    caption = "Records per second in each progress window (solid) and the window's p99 latency (dotted, right axis)."
    if bands:
        caption += " Shaded: each broker fault, from when it fired to when it healed (labelled with the broker)."
    return make_chart("throughput-timeline", result["id"], "Throughput over time", caption, go.Figure(traces, layout))


def fault_bands(run: dict, shade: str, end_s: float) -> list[dict]:
    """A run's faults (`params.faults`: fired_s, healed_s, as a lab that injects them records them) and outages
    (`params.outages`, as the monitor saw them) as shaded bands; one that never healed is shaded to the run's end."""
    bands = []
    params = run.get("params", {})
    for event in [*(params.get("faults") or []), *(params.get("outages") or [])]:
        if event.get("fired_s") is None:
            continue
        healed = event.get("healed_s")
        bands.append({"type": "rect", "xref": "x", "yref": "paper", "x0": event["fired_s"],
                      "x1": healed if healed is not None else max(end_s, event["fired_s"]), "y0": 0, "y1": 1,
                      "fillcolor": shade, "opacity": 0.12, "line": {"width": 0}, "layer": "below",
                      "label": {"text": " ".join(str(word) for word in (event["fault"], event.get("broker"))
                                                 if word is not None), "textposition": "top left",
                                "font": {"size": 10}}})
    return bands


PHASE_COLOURS = ("#1d4ed8", "#3b82f6", "#60a5fa", "#93c5fd", "#a78bfa", "#c4b5fd")


def produce_phases_chart(result: dict) -> dict | None:
    """Any lab's result whose runs say where the produce time went (labs/broker_phases.py): one stacked bar per run,
    its mean produce (or publish) time as the client's part and the broker's phases."""
    caption = ("The mean produce time of the measured records, stacked: the broker's own phases of the Produce "
               "requests that carried them (its request logger) and the rest, the client's part and the transfer.")
    return stacked_parts(result, "produce-phases", "where the produce time went", caption, lambda parts: parts,
                         "client_ms", "client and wire", "phases_ms")


def stacked_parts(result: dict, chart_id: str, title: str, caption: str, pick, rest: str, rest_name: str,
                  steps: str) -> dict | None:
    """One bar per run that has `pick(params["broker_phases"])[steps]`: the broker's steps stacked on the rest."""
    runs = [run for run in result["runs"] if steps in pick((run.get("params") or {}).get("broker_phases", {}))]
    if not runs:
        return None
    labels = [run["label"] for run in runs]
    parts = [pick(run["params"]["broker_phases"]) for run in runs]
    traces = [go.Bar(x=labels, y=[p[rest] for p in parts], name=rest_name, marker_color="#f59e0b",
                     meta={"part": "client"}, hovertemplate=f"%{{x}} {rest_name}: %{{y:,.3f}} ms<extra></extra>")]
    traces += [go.Bar(x=labels, y=[p[steps][name] for p in parts], name=f"broker: {name}",
                      marker_color=PHASE_COLOURS[index % len(PHASE_COLOURS)], meta={"part": name},
                      hovertemplate=f"%{{x}} broker {name}: %{{y:,.3f}} ms<extra></extra>")
               for index, name in enumerate(parts[0][steps]) if any(p[steps][name] > 0 for p in parts)]
    layout = base_layout(f"{title} (means)", barmode="stack", xaxis=axis_style(""), yaxis=axis_style("ms"))
    return make_chart(chart_id, result["id"], title, caption, go.Figure(traces, layout))


def across(kind: str, title: str, axis_title: str, results: list[dict], value, series) -> dict:
    """One bar trace per series (a client, a role), one bar group per result; a result without it has a gap."""
    names = [result["name"] for result in results]
    keys = list(dict.fromkeys(series(run) for result in results for run in result["runs"] if value(run) is not None))
    seen: dict[str, str] = {}
    traces = []
    for key in keys:
        found = [{series(run): value(run) for run in result["runs"]}.get(key) for result in results]
        traces.append(go.Bar(x=names, y=found, name=key, marker_color=colour(key, seen), meta={"series": key},
                             customdata=[result["id"] for result in results],
                             hovertemplate="%{fullData.name} in %{x}: %{y:,.3f}<extra></extra>"))
    layout = base_layout(title, barmode="group", xaxis=axis_style(""), yaxis=axis_style(axis_title))
    caption = "One group of bars per result, in the order they ran; each result's own section has the detail."
    return make_chart(kind, "summary", title, caption, go.Figure(traces, layout))
