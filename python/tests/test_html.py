"""html=: the command line's --html report, written from Python."""

import re

import pytest

import pipesim
from pipesim import _pipesim

needs_graphviz = pytest.mark.skipif(not _pipesim.graphviz_available(),
                                    reason="this build has no Graphviz")

COMMAND = re.compile(r"<dt>command</dt><dd><code>(.*?)</code></dd>")


def page_and_command(path):
    """The page with its command line cut out, and that command line."""
    text = path.read_text()
    commands = COMMAND.findall(text)
    assert len(commands) == 1
    return COMMAND.sub("", text), commands[0]


@needs_graphviz
def test_analyze_writes_the_command_lines_page(cli, tmp_path):
    ours, theirs = tmp_path / "py.html", tmp_path / "cli.html"
    result = pipesim.analyze("zb-h1", 4, 8, costs=(1, 2, 1), comm=0.1, html=ours)
    cli("analyze", "-s", "zb-h1", "-p", 4, "-m", 8, "--costs", "1,2,1", "--comm", 0.1,
        "--json", "--html", theirs)
    page, command = page_and_command(ours)
    assert page == page_and_command(theirs)[0]
    # The Inputs name the call that made it, with the arguments given.
    assert command == ("pipesim.analyze(schedule=&#39;zb-h1&#39;, p=4, m=8, "
                       "costs=(1, 2, 1), comm=0.1)")
    assert f"{result.makespan:.6g}" in page


@needs_graphviz
def test_compare_on_a_cluster_beside_a_running_thread(tmp_path):
    # The children run no Python: a thread holding the GIL when one is forked does not
    # block it.
    import threading
    stop = threading.Event()
    busy = threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)])
    busy.start()
    try:
        pipesim.compare("1f1b,zb-h1", 2, 4, costs=(1e-3, 1e-3, 1e-3), cluster="dgx-a100:1",
                        html=tmp_path / "r.html")
    finally:
        stop.set()
        busy.join()
    assert (tmp_path / "r.html").stat().st_size > 0


@needs_graphviz
def test_compare_writes_the_command_lines_page(cli, tmp_path):
    ours, theirs = tmp_path / "py.html", tmp_path / "cli.html"
    comparison = pipesim.compare(["1f1b", "zb-h1", "zb-v"], 4, 8, costs=(1, 2, 1), html=ours)
    fields = cli("compare", "-s", "1f1b,zb-h1,zb-v", "-p", 4, "-m", 8, "--costs", "1,2,1",
                 "--json", "--html", theirs)
    assert page_and_command(ours)[0] == page_and_command(theirs)[0]
    # The rows are those of the run without a report.
    plain = pipesim.compare(["1f1b", "zb-h1", "zb-v"], 4, 8, costs=(1, 2, 1))
    assert list(comparison) == list(plain)
    assert [r["makespan"] for r in comparison] == [r["makespan"] for r in fields["schedules"]]


@needs_graphviz
def test_a_model_on_a_cluster_writes_the_command_lines_pages(cli, tmp_path):
    model = dict(model="llama2-7b", gpu="a100-80gb", mb=1)
    flags = ("--model", "llama2-7b", "--gpu", "a100-80gb", "--mb", 1, "--cluster", "dgx-a100:1")
    ours, theirs = tmp_path / "py.html", tmp_path / "cli.html"
    pipesim.simulate("1f1b", 4, 8, cluster="dgx-a100:1", html=ours, **model)
    cli("simulate", "-s", "1f1b", "-p", 4, "-m", 8, *flags, "--json", "--html", theirs)
    assert page_and_command(ours)[0] == page_and_command(theirs)[0]
    ours, theirs = tmp_path / "cpy.html", tmp_path / "ccli.html"
    comparison = pipesim.compare("1f1b,zb-h1", 4, 8, cluster="dgx-a100:1", html=ours, **model)
    fields = cli("compare", "-s", "1f1b,zb-h1", "-p", 4, "-m", 8, *flags, "--json",
                 "--html", theirs)
    assert page_and_command(ours)[0] == page_and_command(theirs)[0]
    assert comparison.to_dict()["schedules"] == fields["schedules"]


def test_a_report_that_cannot_be_written_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match=r"^html .*report\.txt: the report is an HTML page"):
        pipesim.analyze("1f1b", 4, 8, html=tmp_path / "report.txt")
    with pytest.raises(TypeError, match="html: expected a str or os.PathLike"):
        pipesim.compare("1f1b,zb-h1", 4, 8, html=3)
    # Too many ops to draw: refused before the 1F1B run of 8 million ops.
    with pytest.raises(ValueError, match="too large|ops"):
        pipesim.compare("1f1b", 64, 65536, html=tmp_path / "big.html")
    assert list(tmp_path.iterdir()) == []


@needs_graphviz
def test_a_report_whose_folder_is_missing_is_refused_before_the_run(tmp_path):
    # Each run would fail for another reason once started (a cluster file that is not there,
    # more memory than the run may take): "cannot write" comes first only if the report's
    # folder is checked before the run.
    missing = tmp_path / "missing" / "r.html"
    nowhere = str(tmp_path / "no-cluster.json")
    for run in (lambda: pipesim.compare("1f1b,zb-h1", 4, 8, cluster=nowhere, html=missing),
                lambda: pipesim.analyze("zb-v", 4096, 2**20, html=missing),
                lambda: pipesim.simulate("1f1b", 4, 8, costs=(1, 2, 1), cluster=nowhere,
                                         html=missing)):
        with pytest.raises(ValueError, match=r"^cannot write .*r\.html: No such file"):
            run()
    assert list(tmp_path.iterdir()) == []
    folder = tmp_path / "report.html"
    folder.mkdir()
    with pytest.raises(ValueError, match="cannot write .*report.html: it is a directory"):
        pipesim.analyze("1f1b", 4, 8, html=folder)
    assert list(folder.iterdir()) == []


def run_script(script, timeout):
    """`script` run by this Python in a new process group (which can hang without hanging
    the tests): its exit status, or None when it ran past `timeout` seconds (then the group
    is killed, children included)."""
    import os
    import signal
    import subprocess
    import sys
    process = subprocess.Popen([sys.executable, "-c", script], env=os.environ.copy(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return None


@needs_graphviz
def test_simulate_writes_its_page_while_another_thread_draws(tmp_path):
    # simulate's page is drawn in its child process. A child forked while another thread was
    # inside the renderer inherited the renderer's lock held, and waited for it forever
    # (every run of this script hung at its first simulate).
    script = f"""
import threading
import pipesim
r = pipesim.analyze("zb-v", 8, 64)
stop = threading.Event()
drawing = threading.Thread(target=lambda: [r.svg() for _ in iter(stop.is_set, True)])
drawing.start()
try:
    for i in range(4):
        pipesim.simulate("zb-v", 8, 64, cluster="dgx-h100", costs=(1e-3, 2e-3, 1e-3),
                         html={str(tmp_path / "sim.html")!r})
finally:
    stop.set()
    drawing.join()
"""
    assert run_script(script, timeout=60) == 0
    assert "<svg" in (tmp_path / "sim.html").read_text()


@needs_graphviz
@pytest.mark.parametrize("work", ["r.svg()", 'pipesim.analyze("zb-2p", 64, 2048)'])
def test_a_program_ends_cleanly_while_a_daemon_thread_runs_pipesim(work):
    # At exit CPython ends a daemon thread as it takes the GIL back; taken back in a noexcept
    # destructor that ended the process with SIGABRT ("terminate called without an active
    # exception"), every time while a picture was drawn as the interpreter finalized a large
    # heap. Taken back in a phase's Ctrl-C check, the thread's end was caught and not rethrown
    # ("FATAL: exception not rethrown").
    script = f"""
import threading, time
import pipesim
r = pipesim.analyze("zb-v", 8, 64)
objects = [{{"a": [i]}} for i in range(500_000)]  # a heap whose finalization takes a while
threading.Thread(target=lambda: [{work} for _ in iter(int, 1)], daemon=True).start()
time.sleep(0.3)
"""
    assert run_script(script, timeout=60) == 0
