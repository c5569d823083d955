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


def _layout(title: str, **extra) -> go.Layout:
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


def _axis(title: str, **extra) -> dict:
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


def _chart(kind: str, result_id: str, title: str, caption: str, figure: go.Figure, wide: bool = False) -> dict:
    return {"id": f"{result_id}-{kind}", "chart": kind, "result": result_id, "title": title, "caption": caption,
            "wide": wide, "figure": json.loads(pio.to_json(figure, validate=True))}


def result_charts(result: dict) -> list[dict]:
    charts = [spectrum_chart(result)]
    if result["lab"] == "latency":
        charts += [latency_bars_chart(result), latency_split_chart(result)]
    charts.append(timeline_chart(result))
    if result["lab"] == "compression":
        charts.append(pareto_chart(result))
    return [chart for chart in charts if chart is not None]


def spectrum_chart(result: dict) -> dict | None:
    # the latency lab has three metrics per client: one at a time, chosen with buttons, keeps the legend readable
    one_metric = result["lab"] == "latency"
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
    layout = _layout("Latency by percentile", height=440,
                     xaxis=_axis("percentile", type="log", tickvals=[t[0] for t in ticks], ticktext=[t[1] for t in ticks],
                                 range=[0, math.log10(widest) * 1.04]),
                     yaxis=_axis("latency ms", **log_ticks(values)))
    if one_metric:
        layout.update(updatemenus=[_metric_buttons(traces)])
    caption = ("HdrHistogram percentile spectrum of every recorded value: read across at 99 % to see the latency one "
               "message in a hundred exceeds. Each curve ends at its maximum (the dot). x is 1/(1 - percentile) on a "
               "log scale.")
    return _chart("latency-spectrum", result["id"], "Latency by percentile", caption, go.Figure(traces, layout),
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


def _scale_buttons() -> dict:
    return {"type": "buttons", "direction": "right", "showactive": True, "active": 0, "x": 1, "xanchor": "right",
            "y": 1.02, "yanchor": "bottom", "pad": {"r": 0, "t": 0}, "font": {"size": 11},
            "buttons": [{"label": scale, "method": "relayout", "args": [{"yaxis.type": scale}]} for scale in ("linear", "log")]}


def _by_e2e_p50(runs: list[dict]) -> list[dict]:
    return sorted((run for run in runs if "e2e" in run["stats"]), key=lambda run: run["stats"]["e2e"]["p50_ms"])


def latency_bars_chart(result: dict) -> dict | None:
    runs = _by_e2e_p50(result["runs"])
    if not runs:
        return None
    labels = [run["label"] for run in runs]
    p50 = [run["stats"]["e2e"]["p50_ms"] for run in runs]
    p99 = [run["stats"]["e2e"]["p99_ms"] for run in runs]
    traces = [go.Bar(x=labels, y=p50, name="e2e p50", marker_color="#2563eb", meta={"field": "p50_ms"},
                     texttemplate="%{y:.2f}", textposition="outside", hovertemplate="%{x} e2e p50: %{y:,.3f} ms<extra></extra>"),
              go.Bar(x=labels, y=p99, name="e2e p99", marker_color="#93c5fd", meta={"field": "p99_ms"},
                     texttemplate="%{y:.2f}", textposition="outside", hovertemplate="%{x} e2e p99: %{y:,.3f} ms<extra></extra>")]
    values = [v for v in p50 + p99 if v > 0]
    log = bool(values) and max(values) / min(values) > LOG_WHEN_RATIO
    layout = _layout("e2e p50 and p99 per client", barmode="group", xaxis=_axis(""),
                     yaxis=_axis("e2e ms" + (" (log scale)" if log else ""), **(log_ticks(values) if log else {})))
    floor = result["floor_p50_ms"]
    if floor is not None:
        layout.update(shapes=[{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": floor, "y1": floor,
                               "line": {"color": "#111827", "width": 1.5, "dash": "dash"}, "name": "tcp floor"}],
                      # an annotation on a log axis is placed in log10 units, unlike a shape
                      annotations=[{"xref": "paper", "x": 1, "xanchor": "right", "yref": "y", "yanchor": "bottom",
                                    "y": math.log10(floor) if log and floor > 0 else floor,
                                    "text": f"tcp floor (e2e p50) {floor:.2f} ms", "showarrow": False,
                                    "font": {"size": 11, "color": "#111827"}, "bgcolor": "rgba(255,255,255,0.85)"}])
    caption = "Sorted by e2e p50. The dashed line is the floor: the tcp pseudo-client's e2e p50 on this machine."
    return _chart("latency-bars", result["id"], "e2e p50 and p99 per client", caption, go.Figure(traces, layout))


def latency_split_chart(result: dict) -> dict | None:
    runs = [run for run in _by_e2e_p50(result["runs"]) if "produce" in run["stats"] and "consume" in run["stats"]]
    if not runs:
        return None
    labels = [run["label"] for run in runs]
    traces = [go.Bar(x=labels, y=[run["stats"][m]["p50_ms"] for run in runs], name=f"{m} p50", meta={"metric": m},
                     marker_color=colour_, hovertemplate=f"%{{x}} {m} p50: %{{y:,.3f}} ms<extra></extra>")
              for m, colour_ in (("produce", "#2563eb"), ("consume", "#f59e0b"))]
    traces.append(go.Scatter(x=labels, y=[run["stats"]["e2e"]["p50_ms"] for run in runs], name="e2e p50", mode="markers",
                             marker={"symbol": "diamond", "size": 11, "color": "#111827"}, meta={"metric": "e2e"},
                             hovertemplate="%{x} e2e p50: %{y:,.3f} ms<extra></extra>"))
    layout = _layout("Where the time goes: produce and consume medians", barmode="stack", xaxis=_axis(""),
                     yaxis=_axis("ms"), updatemenus=[_scale_buttons()])  # log: the fast clients beside a slow one
    caption = ("Median produce (send call -> ack) stacked on median consume (ack -> value in hand). For every message "
               "the two add up to its e2e, but their medians need not add up to the e2e median (the diamond).")
    return _chart("latency-split", result["id"], "produce / consume split", caption, go.Figure(traces, layout))


def timeline_chart(result: dict) -> dict | None:
    seen: dict[str, str] = {}
    traces = []
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
    if not traces:
        return None
    layout = _layout("Throughput over time", xaxis=_axis("seconds since start"), yaxis=_axis("records/s", rangemode="tozero"),
                     yaxis2=_axis("p99 ms per window", overlaying="y", side="right", rangemode="tozero", showgrid=False,
                                  tickmode="auto"))
    caption = "Records per second in each progress window (solid) and the window's p99 latency (dotted, right axis)."
    return _chart("throughput-timeline", result["id"], "Throughput over time", caption, go.Figure(traces, layout))


def pareto_chart(result: dict) -> dict | None:
    cells = [run for run in result["runs"] if run["objectives"] is not None]
    if not cells:
        return None
    cpu = [run["objectives"]["cpu_s"] for run in cells]
    by_duration = sorted(cells, key=lambda run: run["duration_s"])  # so that neighbours' labels alternate
    traces = [_pareto_trace([run for run in by_duration if run["pareto"] == kind], kind, min(cpu), max(cpu))
              for kind in ("front", "dominated")]
    stored = [run["counters"]["stored_bytes"] / 1e6 for run in cells]
    layout = _layout("Stored size vs time, coloured by CPU", xaxis=_axis("duration s (first send -> last ack)"),
                     yaxis=_axis("stored MB (10^6 bytes, log scale)", **log_ticks(stored)), height=460)
    caption = ("Each point is a format x codec cell. Filled: on the Pareto front (no other cell is at least as good on "
               "stored size, duration and CPU and better on one); hollow: dominated. Colour: CPU s, producer + broker.")
    return _chart("compression-pareto", result["id"], "Pareto: stored size, duration, CPU", caption,
                  go.Figure([t for t in traces if t is not None], layout), wide=True)


def _pareto_trace(runs: list[dict], kind: str, low: float, high: float) -> go.Scatter | None:
    if not runs:
        return None
    front = kind == "front"
    return go.Scatter(
        x=[run["duration_s"] for run in runs], y=[run["counters"]["stored_bytes"] / 1e6 for run in runs],
        text=[run["label"] for run in runs], name="Pareto front" if front else "dominated",
        mode="markers+text" if front else "markers", textposition=_label_positions(len(runs)),
        customdata=[[run["counters"]["stored_bytes"], run["resources"].get("cpu_s"), run["resources"].get("broker_cpu_s"),
                     run["objectives"]["cpu_s"]] for run in runs],
        marker={"size": 15 if front else 12, "symbol": "circle" if front else "circle-open", "line": {"width": 2},
                "color": [run["objectives"]["cpu_s"] for run in runs], "colorscale": CPU_COLOURS, "cmin": low,
                "cmax": high if high > low else low + 1e-9, "showscale": front,
                "colorbar": {"title": {"text": "CPU s"}, "thickness": 12}},
        meta={"pareto": kind, "runs": [run["index"] for run in runs]},
        hovertemplate=("<b>%{text}</b><br>stored %{y:,.3f} MB (%{customdata[0]:,} bytes)<br>duration %{x:.3f} s<br>"
                       "CPU %{customdata[3]:.3f} s (producer %{customdata[1]:.3f} + broker %{customdata[2]:.3f})"
                       f"<extra>{kind}</extra>"))


def _label_positions(count: int) -> list[str]:
    """Neighbouring front cells often sit close together: alternate where their labels go."""
    return [("top center", "bottom center", "middle right", "middle left")[i % 4] for i in range(count)]


def summary_charts(results: list[dict]) -> list[dict]:
    """Side by side over results of one lab (a plan's profiles and repeats): the figure each result leads with."""
    charts = []
    latency = [result for result in results if result["lab"] == "latency"]
    if len(latency) > 1:
        charts.append(_across("latency-summary", "e2e p50 per result", "e2e p50 ms", latency,
                              lambda run: run["stats"]["e2e"]["p50_ms"] if "e2e" in run["stats"] else None,
                              lambda run: run["client"]))
    for lab in ("produce", "consume"):
        group = [result for result in results if result["lab"] == lab]
        if len(group) > 1:
            charts.append(_across(f"{lab}-summary", f"{lab}: records/s per result", "records/s", group,
                                  lambda run: run["throughput"].get("records_per_s"), lambda run: run["label"]))
    return charts


def _across(kind: str, title: str, axis: str, results: list[dict], value, series) -> dict:
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
    layout = _layout(title, barmode="group", xaxis=_axis(""), yaxis=_axis(axis))
    caption = "One group of bars per result, in the order they ran; each result's own section has the detail."
    return _chart(kind, "summary", title, caption, go.Figure(traces, layout))
