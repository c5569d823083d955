"""The latency lab's charts: e2e p50/p99 bars with the tcp floor line, the produce/consume split, and e2e
p50 across results."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from kafkabench.report import charts


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
    log = bool(values) and max(values) / min(values) > charts.LOG_WHEN_RATIO
    layout = charts.base_layout("e2e p50 and p99 per client", barmode="group", xaxis=charts.axis_style(""),
                     yaxis=charts.axis_style("e2e ms" + (" (log scale)" if log else ""), **(charts.log_ticks(values) if log else {})))
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
    return charts.make_chart("latency-bars", result["id"], "e2e p50 and p99 per client", caption, go.Figure(traces, layout))


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
    layout = charts.base_layout("Where the time goes: produce and consume medians", barmode="stack", xaxis=charts.axis_style(""),
                     yaxis=charts.axis_style("ms"), updatemenus=[_scale_buttons()])  # log: the fast clients beside a slow one
    caption = ("Median produce (send call -> ack) stacked on median consume (ack -> value in hand). For every message "
               "the two add up to its e2e, but their medians need not add up to the e2e median (the diamond).")
    return charts.make_chart("latency-split", result["id"], "produce / consume split", caption, go.Figure(traces, layout))


def summary_charts(results: list[dict]) -> list[dict]:
    if len(results) < 2:
        return []
    return [charts.across("latency-summary", "e2e p50 per result", "e2e p50 ms", results,
                          lambda run: run["stats"]["e2e"]["p50_ms"] if "e2e" in run["stats"] else None,
                          lambda run: run["client"])]


def e2e_path_chart(result: dict) -> dict | None:
    """One stacked bar per Kafka client: its mean e2e time as the broker's steps on the message's way and the rest."""
    caption = ("The mean e2e time of the measured messages, stacked: the broker's steps on each message's way (its "
               "Produce request queued and appended, waiting for followers with acks=all, then the response of the "
               "consumer's fetch that delivered it, queued and sent) and the rest, the clients' part and the wire.")
    return charts.stacked_parts(result, "latency-e2e-path", "where the e2e time went", caption,
                                lambda parts: parts.get("e2e", {}), "clients_ms", "clients and wire", "path_ms")
