"""The HTML report of real results, opened in headless Chromium: it draws every chart offline, asks the
network for nothing, and the charts carry the numbers of the result files."""

from __future__ import annotations

import pytest

from kafkabench.cluster import EmbeddedCluster
from kafkabench.cluster.target import Target
from kafkabench.core.results import read_result
from kafkabench.core.events import SILENT
from kafkabench.labs import registry
from kafkabench.report.html import write_report

from tests.debian import CHROMIUM, install

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def chromium():
    """Headless Chromium through playwright, installed from Debian on first use."""
    reason = install("chromium", CHROMIUM)
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run", "--disable-quic"])
        yield browser
        browser.close()



def target_of(cluster) -> Target:
    embedded = isinstance(cluster, EmbeddedCluster)
    return Target.embedded(cluster) if embedded else Target.external(cluster.bootstrap_servers)


@pytest.fixture(scope="module")
def results(kafka_cluster, tmp_path_factory):
    """A few seconds of each lab on the real broker, in one directory as a plan would leave them."""
    root = tmp_path_factory.mktemp("report-results")
    target = target_of(kafka_cluster)
    scenarios = {"latency": dict(size=100_000, count=20, warmup=2, rounds=4, clients=["confluent", "http", "tcp"], timeout=15),
                 "produce": dict(duration=2.0, rate=20_000, consumers=1, interval=0.25, timeout=15),
                 "compression": dict(rows=2000, formats=["json", "avro"], codecs=["none", "lz4", "zstd"])}
    for name, parameters in scenarios.items():
        lab = registry.get(name)
        lab.run(lab.scenario(**parameters), target, root / name, SILENT)
    return root


# what each chart div holds once drawn: Plotly's own view of its traces (gd.data) and whether it drew them
CHARTS_JS = """() => Array.from(document.querySelectorAll("[data-chart]")).map(node => ({
    id: node.id, chart: node.dataset.chart, result: node.dataset.result,
    svg: node.querySelectorAll("svg.main-svg").length,
    drawnTraces: node.querySelectorAll(".scatterlayer .trace, .barlayer .trace").length,
    bars: node.querySelectorAll(".barlayer .point").length,
    data: node.data.map(t => ({name: t.name, x: t.x, y: t.y, meta: t.meta, visible: t.visible, yaxis: t.yaxis})),
    shapes: (node.layout.shapes || []).map(s => ({y0: s.y0, y1: s.y1})),
}))"""


@pytest.fixture(scope="module")
def drawn(results, chromium, tmp_path_factory):
    html, _ = write_report([results], tmp_path_factory.mktemp("report") / "report.html", None)
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    problems, requests = [], []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))

    def only_the_file(route):
        requests.append(route.request.url)
        route.continue_() if route.request.url == html.as_uri() else route.abort()

    page.route("**/*", only_the_file)
    page.goto(html.as_uri())
    page.wait_for_function("document.body.dataset.charts !== 'pending'", timeout=30_000)
    state = page.evaluate("document.body.dataset.charts")
    charts = page.evaluate(CHARTS_JS)
    page.close()
    return {"html": html, "state": state, "problems": problems, "requests": requests, "charts": charts}


def by_kind(drawn, result_dir: str) -> dict:
    ids = {"latency": "r1", "produce": "r2", "compression": "r3"}  # created in this order
    return {c["chart"]: c for c in drawn["charts"] if c["result"] == ids[result_dir]}


def test_the_page_draws_offline_without_errors(drawn):
    assert drawn["html"].stat().st_size <= 5_000_000
    assert drawn["problems"] == []
    assert drawn["requests"] == [drawn["html"].as_uri()]  # nothing but the file itself
    assert drawn["state"] == "drawn"
    assert {c["chart"] for c in drawn["charts"]} == {"latency-spectrum", "latency-bars", "latency-split",
                                                     "produce-phases", "latency-e2e-path", "throughput-timeline",
                                                     "compression-pareto"}
    for chart in drawn["charts"]:
        visible = [t for t in chart["data"] if t["visible"] in (True, None)]
        assert chart["svg"] > 0 and chart["drawnTraces"] >= len(visible) > 0, chart["id"]


def test_latency_charts_hold_the_result_file_numbers(drawn, results):
    document = read_result(results / "latency")
    kinds = by_kind(drawn, "latency")
    ordered = sorted(document.runs, key=lambda run: run.stats["e2e"].p50_ms)
    p50, p99 = kinds["latency-bars"]["data"]
    assert p50["x"] == [run.client for run in ordered]
    assert p50["y"] == [run.stats["e2e"].p50_ms for run in ordered]
    assert p99["y"] == [run.stats["e2e"].p99_ms for run in ordered]
    assert kinds["latency-bars"]["bars"] == 2 * len(ordered)
    tcp = next(run for run in document.runs if run.client == "tcp")
    assert kinds["latency-bars"]["shapes"] == [{"y0": tcp.stats["e2e"].p50_ms, "y1": tcp.stats["e2e"].p50_ms}]
    produce, consume, e2e = kinds["latency-split"]["data"]
    assert produce["y"] == [run.stats["produce"].p50_ms for run in ordered]
    assert consume["y"] == [run.stats["consume"].p50_ms for run in ordered]
    assert e2e["y"] == p50["y"]
    kafka = [run for run in document.runs if "messages" in run.params.get("broker_phases", {})]
    stacked = {trace["meta"]["part"]: trace for trace in kinds["produce-phases"]["data"]}
    assert kafka and stacked["client"]["x"] == [run.client for run in kafka]
    assert stacked["client"]["y"] == [run.params["broker_phases"]["client_ms"] for run in kafka]
    for index, run in enumerate(kafka):  # the bar's parts add up to the client's mean produce time
        total = sum(trace["y"][index] for trace in stacked.values())
        assert total == pytest.approx(run.stats["produce"].mean_ms, abs=0.01)
    way = {trace["meta"]["part"]: trace for trace in kinds["latency-e2e-path"]["data"]}
    assert way["client"]["y"] == [run.params["broker_phases"]["e2e"]["clients_ms"] for run in kafka]
    assert way["fetch: send"]["x"] == [run.client for run in kafka]
    for index, run in enumerate(kafka):  # and the message's way to the mean e2e time
        assert sum(trace["y"][index] for trace in way.values()) == pytest.approx(run.stats["e2e"].mean_ms, abs=0.01)
    spectra = kinds["latency-spectrum"]["data"]
    assert len(spectra) == 3 * len(document.runs)  # e2e, produce, consume of every client
    for trace in spectra:
        stat = document.runs[trace["meta"]["run"]].stats[trace["meta"]["metric"]]
        assert trace["y"][-1] == stat.max_ms and min(trace["y"]) <= stat.p50_ms


def test_throughput_charts_hold_the_result_file_numbers(drawn, results):
    document = read_result(results / "produce")
    kinds = by_kind(drawn, "produce")
    timeline = {(t["meta"]["run"], t["meta"]["field"]): t for t in kinds["throughput-timeline"]["data"]}
    for index, run in enumerate(document.runs):
        assert len(run.timeline) > 2
        assert timeline[(index, "records_per_s")]["x"] == [w["t_s"] for w in run.timeline]
        assert timeline[(index, "records_per_s")]["y"] == [w["records_per_s"] for w in run.timeline]
        assert timeline[(index, "p99_ms")]["y"] == [w["p99_ms"] for w in run.timeline]
    metrics = {(t["meta"]["run"], t["meta"]["metric"]): t["y"][-1] for t in kinds["latency-spectrum"]["data"]}
    assert metrics == {(i, m): run.stats[m].max_ms for i, run in enumerate(document.runs) for m in run.stats}


def test_the_pareto_points_are_stored_mb_against_duration(drawn, results):
    document = read_result(results / "compression")
    traces = by_kind(drawn, "compression")["compression-pareto"]["data"]
    points = {(x, y) for trace in traces for x, y in zip(trace["x"], trace["y"])}
    assert points == {(run.duration_s, run.counters["stored_bytes"] / 1e6) for run in document.runs}
    assert [t["meta"]["pareto"] for t in traces][0] == "front"


# elements that reach past the right edge of their section (a card), other than inside a table's own scroller;
# SVG shapes are clipped by their chart's own box, which is checked
STICKING_OUT_JS = """() => [...document.querySelectorAll("main section *")].filter(node => !(node instanceof SVGElement)).filter(node => {
    const card = node.closest("section").getBoundingClientRect(), box = node.getBoundingClientRect();
    return box.width > 0 && box.right > card.right + 1 && !node.parentElement.closest(".table-wrap");
}).map(node => `${node.tagName.toLowerCase()}.${node.className}: ${(node.textContent || "").trim().slice(0, 40)}`)"""


@pytest.mark.parametrize("width", [360, 1000])
def test_nothing_sticks_out_of_its_card(results, chromium, tmp_path_factory, width):
    """On a phone and on a laptop: wide tables scroll inside their card, grids of charts and definitions shrink."""
    html, _ = write_report([results], tmp_path_factory.mktemp("report") / "report.html", None)
    page = chromium.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(html.as_uri())
        page.wait_for_function("document.body.dataset.charts !== 'pending'", timeout=30_000)
        page.evaluate("document.querySelectorAll('details').forEach(details => details.open = true)")
        assert page.evaluate(STICKING_OUT_JS) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        page.close()
