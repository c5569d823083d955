import base64
import gzip
import json
import re

import plotly.offline
import pytest

from kafkabench.core.results import read_result, write_result
from kafkabench.report.collect import collect
from kafkabench.report.html import environment_rows, render_html, result_charts, script_json, write_report

from .results_factory import compression_result, latency_result, produce_result

HOSTILE = '</script><script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    latency_result(root / "lat", {"tcp": 1.0, "confluent": 6.0}, "2026-01-01T10:00:00+00:00")
    produce_result(root / "prod", "2026-01-01T11:00:00+00:00")
    compression_result(root / "comp", "2026-01-01T12:00:00+00:00")
    document = read_result(root / "lat")
    document.notes.append(HOSTILE)  # anything a result file holds is text, never markup
    document.runs[0].client_version = HOSTILE
    write_result(document, root / "lat")
    return root


@pytest.fixture(scope="module")
def page(results):
    data = collect([results])
    return data, render_html(data)


def test_one_file_that_asks_the_network_for_nothing(page):
    _, html = page
    assert len(html.encode()) < 5_000_000
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=", html) and "<link" not in html
    assert "@import" not in html and "url(" not in html
    assert "cdn." not in html.lower() and "fonts.googleapis" not in html


def test_the_embedded_chart_library_is_plotly_js(page):
    _, html = page
    packed = re.search(r'<script type="application/octet-stream" id="kb-plotly"[^>]*>([^<]*)</script>', html).group(1)
    assert gzip.decompress(base64.b64decode(packed)).decode() == plotly.offline.get_plotlyjs()


def test_every_chart_div_has_its_figure_with_the_numbers(page):
    data, html = page
    figures = json.loads(re.search(r'<script type="application/json" id="kb-figures">(.*?)</script>', html, re.S).group(1))
    divs = re.findall(r'<div class="chart" id="([^"]+)" data-chart="([^"]+)" data-result="([^"]+)"', html)
    assert sorted(i for i, _, _ in divs) == sorted(figures)
    assert {kind for _, kind, _ in divs} == {"latency-spectrum", "latency-bars", "latency-split", "throughput-timeline",
                                            "compression-pareto"}
    for result in data["results"]:
        for chart in result_charts(result):
            assert figures[chart["id"]] == chart["figure"]


def test_result_text_is_escaped(page):
    _, html = page
    assert HOSTILE not in html
    assert "&lt;/script&gt;&lt;script&gt;alert(&#34;x&#34;)" in html
    assert html.count("</script>") == 3  # the figures, the library, the drawing code


def test_script_json_cannot_close_its_element():
    text = script_json({"label": "</script><!-- & -->"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"label": "</script><!-- & -->"}


def test_sections_tables_environment_and_definitions(page):
    data, html = page
    for anchor in ("summary", "r1", "r2", "r3", "environment", "definitions"):
        assert f'id="{anchor}"' in html
    tcp_p50 = data["results"][0]["runs"][0]["stats"]["e2e"]["p50_ms"]
    assert f"<td class=\"num\">{tcp_p50:.2f}</td>" in html
    assert "ratios to the same format uncompressed" in html and "dominated" in html
    assert "coordinated omission made visible" in html  # the publish_delay definition
    x_floor = next(d["text"] for d in data["definitions"] if d["key"] == "x_floor")
    assert f'<th class="num" title="{x_floor}">x floor</th>' in html  # a column shows its definition on hover
    rows = environment_rows(data)
    assert {"what": "Kafka", "value": "4.1.2", "results": "all"} in rows
    assert {"what": "machine", "value": "8 cores, 31.3 GB memory, Linux 6.1, Python 3.11.7, host lab", "results": "all"} in rows


def test_write_report_writes_what_it_is_asked_for(results, tmp_path):
    html, csv = write_report([results], tmp_path / "out" / "r.html", tmp_path / "out" / "r.csv")
    assert html.read_text().startswith("<!DOCTYPE html>") and csv.read_text().startswith("result_dir,")
    assert write_report([results], tmp_path / "only.html", None) == (tmp_path / "only.html", None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["only.html", "out"]


def test_failed_runs_partial_cells_and_labs_the_report_does_not_know_still_render(tmp_path):
    from kafkabench.core.results import ResultDocument, Run

    document = latency_result(tmp_path / "lat", {"tcp": 1.0, "confluent": 6.0})
    document.runs.append(Run(client="java", scenario="ping_pong", error="no JDK: javac not found"))
    document.error = "1 of 3 clients failed"
    write_result(document, tmp_path / "lat")
    compression = compression_result(tmp_path / "comp")
    compression.runs.append(Run(client="confluent", scenario="compression", params={"format": "avro", "codec": "zstd"},
                                error="timed out"))
    write_result(compression, tmp_path / "comp")
    write_result(ResultDocument(lab="tuner", created_at="2026-01-02T00:00:00+00:00",
                                runs=[Run(client="confluent", scenario="acks-all", duration_s=2.0)]), tmp_path / "dur")
    data = collect([tmp_path])
    html = render_html(data)
    assert "java: no JDK: javac not found" in html and "1 of 3 clients failed" in html
    assert "avro zstd: timed out" in html
    assert "tuner: latencies in ms" in html  # the generic table of a lab without its own
    assert data["results"][1]["runs"][-1]["pareto"] is None


def test_without_a_chart_the_chart_library_is_left_out(tmp_path):
    from kafkabench.core.results import ResultDocument, Run

    write_result(ResultDocument(lab="tuner", created_at="2026-01-02T00:00:00+00:00",
                                runs=[Run(client="confluent", scenario="acks-all", duration_s=2.0)]), tmp_path / "dur")
    html = render_html(collect([tmp_path]))
    assert 'data-chart="' not in html and len(html) < 100_000
