"""The compression lab's chart: stored size against duration, coloured by CPU, the Pareto front apart."""

from __future__ import annotations

import plotly.graph_objects as go

from kafkabench.report import charts


def pareto_chart(result: dict) -> dict | None:
    cells = [run for run in result["runs"] if run["objectives"] is not None]
    if not cells:
        return None
    cpu = [run["objectives"]["cpu_s"] for run in cells]
    by_duration = sorted(cells, key=lambda run: run["duration_s"])  # so that neighbours' labels alternate
    traces = [_pareto_trace([run for run in by_duration if run["pareto"] == kind], kind, min(cpu), max(cpu))
              for kind in ("front", "dominated")]
    stored = [run["counters"]["stored_bytes"] / 1e6 for run in cells]
    xaxis = charts.axis_style("duration s (start signal -> last ack)")
    yaxis = charts.axis_style("stored MB (10^6 bytes, log scale)", **charts.log_ticks(stored))
    layout = charts.base_layout("Stored size vs time, coloured by CPU", xaxis=xaxis, yaxis=yaxis, height=460)
    caption = ("Each point is a format x codec cell. Filled: on the Pareto front (no other cell is at least as good on "
               "stored size, duration and CPU and better on one); hollow: dominated. Colour: CPU s, producer + broker.")
    return charts.make_chart("compression-pareto", result["id"], "Pareto: stored size, duration, CPU", caption,
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
                "color": [run["objectives"]["cpu_s"] for run in runs], "colorscale": charts.CPU_COLOURS, "cmin": low,
                "cmax": high if high > low else low + 1e-9, "showscale": front,
                "colorbar": {"title": {"text": "CPU s"}, "thickness": 12}},
        meta={"pareto": kind, "runs": [run["index"] for run in runs]},
        hovertemplate=("<b>%{text}</b><br>stored %{y:,.3f} MB (%{customdata[0]:,} bytes)<br>duration %{x:.3f} s<br>"
                       "CPU %{customdata[3]:.3f} s (producer %{customdata[1]:.3f} + broker %{customdata[2]:.3f})"
                       f"<extra>{kind}</extra>"))


def _label_positions(count: int) -> list[str]:
    """Neighbouring front cells often sit close together: alternate where their labels go."""
    return [("top center", "bottom center", "middle right", "middle left")[i % 4] for i in range(count)]
