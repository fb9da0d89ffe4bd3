"""What a notebook shows: the timeline picture and summary tables (_repr_html_)."""

import re
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import pytest

import pipesim
from pipesim import _pipesim


@pytest.mark.skipif(not _pipesim.graphviz_available(), reason="built without Graphviz")
def test_result_shows_its_timeline_as_svg():
    r = pipesim.analyze(schedule="1f1b", p=2, m=3)
    svg = r._picture()
    root = ET.fromstring(svg)  # well-formed SVG
    assert root.tag.endswith("svg")
    # One box per op, each with a tooltip naming it.
    titles = re.findall(r'<a xlink:title="([^"]*)"', svg)
    ops = [t for t in titles if re.match(r"(F|BW)\(mb \d", t)]
    assert len(ops) == r.ops == 12
    assert r.svg(memory=False) != svg
    with pytest.raises(ValueError, match="width: must be ≥ 0"):
        r.svg(width=-1)


def _resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not _pipesim.graphviz_available(), reason="built without Graphviz")
def test_pictures_drawn_again_and_again_do_not_grow_the_process():
    # A Graphviz context per picture kept about 3.7 KB each (3.7 MB over these 1,000).
    r = pipesim.analyze(schedule="1f1b", p=2, m=2)
    first = r.svg()
    before = _resident_bytes()
    for _ in range(1000):
        assert r.svg() == first
    assert _resident_bytes() - before < 1.5e6


@pytest.mark.skipif(not _pipesim.graphviz_available(), reason="built without Graphviz")
def test_threads_draw_pictures_side_by_side():
    # svg() releases the GIL while Graphviz, which is not thread-safe, draws.
    results = [pipesim.analyze(schedule=s, p=4, m=8) for s in ("1f1b", "zb-h1", "gpipe")]
    expected = [r.svg() for r in results]
    with ThreadPoolExecutor(max_workers=6) as pool:
        drawn = list(pool.map(lambda i: results[i % 3].svg(), range(30)))
    assert drawn == [expected[i % 3] for i in range(30)]


def test_a_notebook_stores_the_picture_once():
    # A notebook keeps every representation an object offers: with _repr_svg_ beside
    # _repr_html_ (which holds the picture) it stored the picture twice, 6.8 MB each at 20,000
    # ops.
    r = pipesim.analyze(schedule="1f1b", p=2, m=3)
    offered = [name for name in dir(r) if name.startswith("_repr_") and name.endswith("_")]
    assert offered == ["_repr_html_"]


def test_svg_is_skipped_for_pictures_too_large_for_a_notebook():
    r = pipesim.analyze(schedule="1f1b", p=8, m=2000)
    assert r.ops > 20000
    assert r._picture() is None


def test_result_summary_table():
    r = pipesim.analyze(schedule="zb-h1", p=4, m=8)
    page = r._repr_html_()
    assert page.count("<table>") == 2
    assert f"{100 * r.bubble_rate:.2f} %" in page
    # The summary's label, value rows and no heading row; the devices' rows under theirs.
    assert page.count("<tr>") == len(r._summary_rows()) + 4 + 1
    assert "<th></th>" not in page
    # Units on every figure: the cost unit's times, activations in M_B.
    assert f'<td>{r.busy[0]:.6g} unit</td>' in page
    assert "<td>peak activation</td><td>4 M_B</td>" in page
    assert "zb-h1" in repr(r)


@pytest.mark.skipif(not _pipesim.graphviz_available(), reason="built without Graphviz")
def test_result_html_holds_its_timeline_picture():
    # A notebook shows one representation of a result, and prefers HTML to SVG: the picture
    # is in the HTML, above the tables.
    r = pipesim.analyze(schedule="zb-v", p=4, m=8, model="llama2-7b", gpu="h100-sxm", mb=1)
    page = r._repr_html_()
    picture = r._picture()
    assert page.index(picture[picture.find("<svg"):]) < page.index("<table>")
    # With a model, bytes in GiB as the command line prints them, and times in seconds.
    assert f'<td>{r.peak_activation_max / 2**30:.4g} GiB</td>' in page
    assert f'<td>{r.busy[0]:.6g} s</td>' in page
    assert "e+10" not in page.split("<table>", 1)[1]


def test_model_result_table_names_the_model():
    r = pipesim.analyze(schedule="1f1b", p=4, m=8, model="llama2-7b", gpu="h100-sxm", mb=1)
    page = r._repr_html_()
    assert "llama2-7b" in page and "MFU" in page
    # The step split over all devices, each share of p × the step time.
    budget = r.time_budget
    whole = budget["step_time"] * 4
    assert f'pipeline idle {100 * budget["all"]["pipeline_idle"] / whole:.1f} %' in page
    assert f'GEMMs {100 * budget["all"]["gemm"] / whole:.1f} %' in page
    assert sum(budget["devices"][0][k] for k in ("kernels", "communication", "pipeline_idle",
                                                 "data_parallel", "optimizer")) == \
        pytest.approx(budget["step_time"])


def test_comparison_table_splits_the_step():
    c = pipesim.compare(["1f1b", "zb-h1"], p=4, m=8, model="llama2-7b", gpu="h100-sxm", mb=1)
    page = c._repr_html_()
    assert "<th>pipeline idle %</th>" in page and "step_shares" not in page
    # Memory cells read in GiB under a header that says memory, not bytes.
    assert "<th>peak memory</th>" in page and "peak_memory_bytes" not in page
    assert " GiB</td>" in page
    for row in c:
        assert sum(row["step_shares"].values()) == pytest.approx(1)
        assert f'<td>{100 * row["step_shares"]["gemm"]:.1f}</td>' in page


def test_comparison_and_search_tables():
    c = pipesim.compare(["1f1b", "zb-h1"], p=4, m=8)
    page = c._repr_html_()
    assert page.count("<tr>") == 3 and "zb-h1" in page and "speedup" in page
    # Shares in percent: 1F1B at p = 4, m = 8 idles (p−1)/(m+p−1) = 3/11 of its span.
    assert "<td>27.27 %</td>" in page
    s = pipesim.search(p=4, m=8, mem_limit=4)
    page = s._repr_html_()
    # The front (the best, then lower peaks) above the ranking, each with its header row.
    assert len(s.front) > 1 and "What memory buys" in page
    assert page.count("<tr>") == len(s.front) + 1 + len(s.ranking) + 1
    assert "best within 4" in repr(s)


def test_views_give_units_and_python_words():
    # A model's peak read "peak activation 1.726e+10" (bytes) and a unit run's "4" (M_B).
    model = dict(model="llama2-7b", gpu="h100-sxm", mb=1)
    r = pipesim.analyze(schedule="1f1b", p=4, m=8, **model)
    assert repr(r).endswith(f"peak activation {r.peak_activation_max / 2**30:.4g} GiB>")
    assert repr(pipesim.analyze(schedule="1f1b", p=4, m=8)).endswith("peak activation 4 M_B>")
    # The iteration where it is longer than the pipeline, the period where post-validation
    # repeats the iterations.
    assert "makespan 33 unit, bubble" in repr(pipesim.analyze(schedule="1f1b", p=4, m=8))
    assert ": makespan 33 s, iteration 2733.7 s, bubble" in repr(pipesim.simulate(
        "1f1b", 4, 8, cluster="dgx-h100", grad_bytes=1e15, dp=2))
    assert ": makespan 27 unit, period 24 unit, bubble" in repr(pipesim.analyze(
        "zb-2p", 4, 8, post_validation=True))
    # Warnings name the Python parameter (the HTML showed the command line's flag); to_dict()
    # is the command line's JSON, its words included.
    with pytest.warns(pipesim.PipesimWarning):
        r = pipesim.analyze(schedule="interleaved-1f1b", p=2, m=4,
                            overlap_p2p_communication=False)
    assert r.warnings and r.warnings[0].startswith("overlap_p2p_communication=False with p = 2")
    assert r.to_dict()["warnings"][0].startswith("--no-overlap-p2p-communication with p = 2")
    assert "warning: overlap_p2p_communication=False" in r._repr_html_()
    # A comparison's headings carry their units.
    headings = re.findall(r"<th>([^<]*)</th>", pipesim.compare("1f1b,zb-h1", p=4, m=8)._repr_html_())
    assert {"makespan (unit)", "peak_activation_max (M_B)",
            "throughput (microbatches / unit)"} <= set(headings)
    # A model's search ranks by iteration time: the front's caption says so (it said bubble,
    # and a lower-bubble candidate left off the front then contradicted it).
    s = pipesim.search(p=4, m=8, mem_limit="80GiB", **model)
    assert "better in both iteration time and peak" in s._repr_html_()
    assert "better in both bubble and peak" in pipesim.search(p=4, m=8, mem_limit=3)._repr_html_()
