"""The groups lab's chart: records processed per partition over time, one cell at a time (a menu picks it), the
change marked from its first step to its last. A partition left unread is a pale stretch of its row; the whole group
stopping, a pale column."""

from __future__ import annotations

import plotly.graph_objects as go

from kafkabench.report.charts import axis_style, base_layout, make_chart

CHANGE_SHADE = "#dc2626"


def processed_chart(result: dict) -> dict | None:
    cells = [run for run in result["runs"] if (run.get("params") or {}).get("processed")]
    if not cells:
        return None
    traces, shapes = [], []
    for index, run in enumerate(cells):
        processed = run["params"]["processed"]
        width = processed["window_s"]
        columns = len(processed["counts"][0])
        traces.append(go.Heatmap(
            z=processed["counts"], x=[round((column + 0.5) * width, 3) for column in range(columns)],
            y=processed.get("rows") or list(range(len(processed["counts"]))), colorscale="Greens", visible=index == 0,
            colorbar={"title": {"text": f"records per {width:g} s"}},
            hovertemplate="%{x:.1f} s, partition %{y}: %{z:,} processed<extra></extra>"))
        begun, ended = processed["change_s"]
        shapes.append([{"type": "rect", "xref": "x", "yref": "paper", "x0": begun, "x1": max(ended, begun + width),
                        "y0": 0, "y1": 1, "fillcolor": CHANGE_SHADE, "opacity": 0.08,
                        "line": {"width": 1, "color": CHANGE_SHADE}, "layer": "above",
                        "label": {"text": run["params"].get("change", "change"), "textposition": "top left",
                                  "font": {"size": 10}}}])
    menu = [{"label": run["label"], "method": "update",
             "args": [{"visible": [one == index for one in range(len(cells))]}, {"shapes": shapes[index]}]}
            for index, run in enumerate(cells)]
    layout = base_layout("Records processed per partition", xaxis=axis_style("seconds since the first record processed"),
                         yaxis=axis_style("partition"), shapes=shapes[0],
                         updatemenus=[{"buttons": menu, "active": 0, "x": 0, "y": 1.18, "xanchor": "left"}]
                         if len(cells) > 1 else [])
    caption = ("Per partition (rows) and window (columns): the records the group processed, from the members' "
               "histories. Red: the change, from its first step to its last. A partition left unread is a pale "
               "stretch of its row; the group stopping, a pale column.")
    if len(cells) > 1:
        caption += " The menu picks the cell."
    return make_chart("groups-processed", result["id"], "Records processed per partition", caption,
                      go.Figure(traces, layout), wide=True)
