"""The delivery lab's chart: progress over time, one cell at a time (a menu picks it), with the faults and the stalls
marked. Each point is one window of fixed length (labs.delivery.liveness): what the producers had acknowledged, the
consumers processed and the group committed in it, per second. A burst stays a window's worth, never a burst divided
by the few milliseconds between two reports, so a stall (windows at zero) and the recovery after it are both visible.
Beside the rates, on an axis of their own, the producers' publish p99 and max per window and the probe's e2e p99
(labs.delivery.latency, from each window's merged histograms), and each step of an operation marked where it began."""

from __future__ import annotations

import plotly.graph_objects as go

from kafkabench.report.charts import axis_style, base_layout, fault_bands, make_chart

KINDS = {"acknowledged": "solid", "processed": "dash", "committed": "dot"}
SHADES = {"acknowledged": "#1d4ed8", "processed": "#059669", "committed": "#d97706"}
STALL_SHADE = "#dc2626"
LATENCY_SHADES = {"publish": "#7c3aed", "e2e": "#db2777"}


def progress_chart(result: dict) -> dict | None:
    cells = [run for run in result["runs"] if run.get("timeline") and "window_s" in run["timeline"][0]]
    if not cells:
        return None
    shown = next((index for index, run in enumerate(cells) if _stalls(run)), 0)
    traces, owner, shapes = [], [], []
    for index, run in enumerate(cells):
        timeline = run["timeline"]
        x = [entry["t_s"] - entry["window_s"] / 2 for entry in timeline]  # each window at its middle
        for kind, dash in KINDS.items():
            if kind not in timeline[0]:
                continue
            traces.append(go.Scatter(
                x=x, y=[entry[f"{kind}_per_s"] for entry in timeline], name=f"{kind}/s", visible=index == shown,
                mode="lines", line={"color": SHADES[kind], "dash": dash, "width": 2, "shape": "hvh"},
                meta={"run": run["index"], "kind": kind},
                customdata=[entry[kind] for entry in timeline],
                hovertemplate=f"%{{x:.1f}} s: %{{y:,.0f}} {kind}/s (%{{customdata:,}} in the window)<extra></extra>"))
            owner.append(index)
        for latency, name, dash in (("publish", "p99", "solid"), ("publish", "max", "dot"), ("e2e", "p99", "dash")):
            if f"{latency}_{name}_ms" not in timeline[0]:
                continue
            traces.append(go.Scatter(
                x=x, y=[entry[f"{latency}_{name}_ms"] for entry in timeline], name=f"{latency} {name} ms",
                yaxis="y2", visible=index == shown, mode="lines",
                line={"color": LATENCY_SHADES[latency], "dash": dash, "width": 1.5},
                meta={"run": run["index"], "kind": f"{latency} {name}"}, connectgaps=False,
                hovertemplate=f"%{{x:.1f}} s: {latency} {name} %{{y:,.1f}} ms<extra></extra>"))
            owner.append(index)
        end = timeline[-1]["t_s"]
        shapes.append([*fault_bands(run, "#6b7280", end), *_stall_bands(run), *_step_marks(run)])
    menu = [{"label": run["label"], "method": "update",
             "args": [{"visible": [one == index for one in owner]}, {"shapes": shapes[index]}]}
            for index, run in enumerate(cells)]
    layout = base_layout("Progress over time", xaxis=axis_style("seconds since the run's start"),
                         yaxis=axis_style("records/s in the window", rangemode="tozero"),
                         yaxis2={**axis_style("latency in the window, ms"), "overlaying": "y", "side": "right",
                                 "type": "log", "dtick": 1, "showgrid": False}, shapes=shapes[shown],
                         updatemenus=[{"buttons": menu, "active": shown, "x": 0, "y": 1.18, "xanchor": "left"}]
                         if len(cells) > 1 else [])
    width = cells[0]["timeline"][0]["window_s"]
    caption = (f"Per window of {width:g} s: messages acknowledged to the producers (solid), processed by the consumers "
               "(dashed) and committed by the group (dotted), per second. Grey: a fault, from when it fired to when it "
               "healed. Red: a process's stall (nothing acknowledged, processed or committed while work waited), "
               "from when it began to how it ended. Purple, on the right-hand axis: the producers' publish latency "
               "(send to acknowledgement, as the client reports it), p99 (solid) and max (dotted) of each window's "
               "merged histograms; pink, dashed, with --e2e: the e2e p99 (intended send to the probe consumer "
               "holding the record). Dotted verticals: an operation's steps (a broker stopped, a partition's move "
               "done).")
    if len(cells) > 1:
        caption += " The menu picks the cell; the first cell with a stall is shown first."
    return make_chart("delivery-progress", result["id"], "Progress over time", caption, go.Figure(traces, layout),
                      wide=True)


def _stalls(run: dict) -> list[dict]:
    return [row for row in (run.get("params", {}).get("liveness") or []) if row.get("stalls")]


def _stall_bands(run: dict) -> list[dict]:
    return [{"type": "rect", "xref": "x", "yref": "paper", "x0": row["began_s"], "x1": row["ended_s"], "y0": 0,
             "y1": 1, "fillcolor": STALL_SHADE, "opacity": 0.10, "line": {"width": 1, "color": STALL_SHADE},
             "layer": "below", "label": {"text": f"{row['process']} {row['longest_stall_s']:.1f} s {row['ended']}",
                                         "textposition": "bottom left", "font": {"size": 10}}}
            for row in _stalls(run)]


def _step_marks(run: dict) -> list[dict]:
    """A dotted vertical per operation step: a broker's or node's stop (a rolling restart or upgrade), an upgrade's
    finalizing, a broker's start (added), a partition's move done (a reassignment)."""
    marks = []
    for event in run.get("params", {}).get("faults") or []:
        for step in event.get("steps") or []:
            at, text = ((step.get("start_s"), f"broker {step['broker']} added") if "start_s" in step else
                        (step.get("stop_s"), f"broker {step['broker']}") if "broker" in step else
                        (step.get("stop_s"), f"{step['role']} {step['node']} -> {step['to']}") if "node" in step else
                        (step.get("finalize_s"), f"finalize {step['finalize']}") if "finalize" in step else
                        (step.get("done_s"), f"[{step['partition']}] moved") if "partition" in step else (None, ""))
            if at is not None:
                marks.append({"type": "line", "xref": "x", "yref": "paper", "x0": at, "x1": at, "y0": 0, "y1": 1,
                              "line": {"color": "#374151", "width": 1, "dash": "dot"},
                              "label": {"text": text, "textposition": "end", "font": {"size": 9}}})
    return marks
