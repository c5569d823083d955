"""The HTML report: one self-contained file that needs no network to view.

plotly.min.js (4.8 MB) travels inside it gzip-compressed and base64-encoded (about 1.9 MB) and is unpacked
by the browser's DecompressionStream before the charts are drawn, so the page stays small, works from a
file:// URL or an e-mail attachment, and asks no CDN for anything. Tables are plain HTML: they hold every
number even where the charts cannot be drawn.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import os
from pathlib import Path

import plotly.offline
from jinja2 import Environment, PackageLoader

from kafkabench.labs import registry
from kafkabench.report import charts, csv_export
from kafkabench.report.collect import collect

ENVIRONMENT_TITLES = {"tools": "kafkabench", "kafka_versions": "Kafka", "clusters": "cluster", "machines": "machine",
                      "clients": "client"}


@functools.cache
def plotly_js_gzip_base64() -> str:
    # mtime=0: the same plotly version gives the same bytes, so two reports of the same results are identical
    return base64.b64encode(gzip.compress(plotly.offline.get_plotlyjs().encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


@functools.cache
def _templates() -> Environment:
    return Environment(loader=PackageLoader("kafkabench.report", "templates"), autoescape=True,
                       trim_blocks=True, lstrip_blocks=True)


def script_json(value: object) -> str:
    """JSON safe inside <script type="application/json">: no `</script>` or `<!--` can end or bend the element."""
    return json.dumps(value, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(data: dict) -> str:
    sections = [{"result": result, "charts": result_charts(result), "tables": result["tables"]}
                for result in data["results"]]
    summary = summary_charts(data["results"])
    figures = {chart["id"]: chart["figure"] for chart in summary + [c for s in sections for c in s["charts"]]}
    return _templates().get_template("report.html").render(
        data=data, sections=sections, summary_charts=summary, environment=environment_rows(data),
        figures_json=script_json(figures), plotly_js=plotly_js_gzip_base64() if figures else "", counts=_counts(data))


def result_charts(result: dict) -> list[dict]:
    """Every result's percentile spectrum and timeline, with its lab's own charts between them (and where the produce
    time went, for any lab that said)."""
    lab = registry.for_report(result["lab"])
    drawn = [charts.spectrum_chart(result), *lab.charts(result), charts.produce_phases_chart(result),
             None if lab.draws_timeline else charts.timeline_chart(result)]
    return [chart for chart in drawn if chart is not None]


def summary_charts(results: list[dict]) -> list[dict]:
    """Side by side over results of one lab (a plan's profiles and repeats): each lab says what it compares."""
    by_lab: dict[str, list[dict]] = {}
    for result in results:
        by_lab.setdefault(result["lab"], []).append(result)
    return [chart for lab, group in by_lab.items() for chart in registry.for_report(lab).summary_charts(group)]


def _counts(data: dict) -> dict:
    results = data["results"]
    return {"results": len(results), "runs": sum(len(r["runs"]) for r in results),
            "failed": sum(1 for r in results if r["error"] or any(run["error"] for run in r["runs"])),
            "clients": list(dict.fromkeys(run["client"] for r in results for run in r["runs"]))}


def environment_rows(data: dict) -> list[dict]:
    """One row per distinct value of each environment field; `results` is "all" where every result shares it."""
    everyone = [result["id"] for result in data["results"]]
    rows = []
    for field, title in ENVIRONMENT_TITLES.items():
        for entry in data["environment"][field]:
            where = "all" if entry["results"] == everyone else ", ".join(entry["results"])
            rows.append({"what": title, "value": describe(field, entry["value"]), "results": where})
    return rows


def describe(field: str, value: dict) -> str:
    if field == "tools":
        return f"{value.get('name', 'kafkabench')} {value.get('version', '?')}"
    if field == "kafka_versions":
        return value.get("kafka_version") or "not recorded (a cluster kafkabench did not start)"
    if field == "clients":
        return f"{value['client']} {value['version'] or '(version not recorded)'}"
    if field == "clusters":
        brokers = value.get("brokers")
        parts = [value.get("kind", "?"), f"{brokers} broker{'s' * (brokers != 1)}" if brokers else None,
                 f"Kafka {value['kafka_version']}" if value.get("kafka_version") else None, value.get("bootstrap_servers")]
        return ", ".join(part for part in parts if part)
    cores, memory = value.get("cores"), value.get("memory_gb")
    parts = [f"{cores} cores" if cores else None, f"{memory} GB memory" if memory else None, value.get("os"),
             f"Python {value['python']}" if value.get("python") else None, f"host {value['hostname']}" if value.get("hostname") else None]
    return ", ".join(part for part in parts if part)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def write_report(paths: list[Path], html_path: Path | None, csv_path: Path | None) -> tuple[Path | None, Path | None]:
    """Read every result under `paths` and write the HTML report and/or the CSV; what was written, in that order."""
    data = collect(paths)
    if html_path is not None:
        _write(html_path, render_html(data))
    if csv_path is not None:
        _write(csv_path, csv_export.to_csv(data))
    return html_path, csv_path
