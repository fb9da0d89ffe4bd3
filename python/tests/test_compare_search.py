"""pipesim.compare and pipesim.search against the command line."""

import numpy as np
import pytest

import pipesim


def test_compare_matches_the_command_line(cli):
    names = ["1f1b", "zb-h1", "zb-2p", "zb-v", "v-half"]
    c = pipesim.compare(names, p=8, m=32, costs=(1, 2, 1))
    expected = cli("compare", "-s", ",".join(names), "-p", 8, "-m", 32, "--costs", "1,2,1",
                   "--json")
    # The command line's own record of what it ran on; a script holds its call instead.
    assert expected.pop("command").startswith("pipesim compare -s 1f1b,zb-h1")
    assert expected.pop("inputs")["costs"] == "F,B,W = 1,2,1 per full stage; M_W = 1 M_B"
    assert c.to_dict() == expected
    assert [row["schedule"] for row in c] == names and len(c) == 5
    assert c.column("speedup")[0] == 1
    # A column holds copies: changing one of its values changes nothing in the comparison.
    with_model = pipesim.compare(["1f1b", "zb-h1"], 4, 8, model="llama2-7b", gpu="h100-sxm",
                                 mb=1)
    # step_shares, a dict per row, comes as one array per part over the rows.
    shares = with_model.column("step_shares")
    rows = with_model.schedules
    assert list(shares) == list(rows[0]["step_shares"])
    for part, values in shares.items():
        assert isinstance(values, np.ndarray) and values.dtype == np.float64
        assert values.tolist() == [row["step_shares"][part] for row in rows]
    assert sum(shares.values()) == pytest.approx([1, 1])
    gemm = rows[0]["step_shares"]["gemm"]
    shares["gemm"][0] = 99.0
    assert with_model.to_dict()["schedules"][0]["step_shares"]["gemm"] == gemm != 99.0
    assert with_model.column("step_shares")["gemm"][0] == gemm
    # Speed-up is the first makespan over each; efficiency = 1 − bubble for uniform devices
    # of 1F1B (every device is busy m(F+B+W) in the same makespan).
    assert c.column("speedup") == pytest.approx(c.column("makespan")[0] / c.column("makespan"))
    first = c.schedules[0]
    assert first["efficiency"] == pytest.approx(1 - first["bubble_rate"])


def test_compare_on_a_cluster_matches_the_command_line_and_simulate(cli):
    # Each schedule on the cluster's SimGrid model, in a child process as simulate runs it
    # (compare() took only the analytic replay: cluster= was an unknown keyword).
    names = ["1f1b", "zb-h1", "interleaved-1f1b"]
    options = dict(p=4, m=8, costs=(0.01, 0.02, 0.01), dp=2)
    c = pipesim.compare(names, cluster="dgx-h100", **options)
    expected = cli("compare", "-s", ",".join(names), "-p", 4, "-m", 8, "--costs",
                   "0.01,0.02,0.01", "--dp", 2, "--cluster", "dgx-h100", "--json")
    expected.pop("command")
    assert expected.pop("inputs")["cluster"] == "dgx-h100"
    assert c.to_dict() == expected
    assert (c.engine, c.cluster, c.time_unit) == ("simgrid", "dgx-h100", "s")
    for name, row in zip(names, c):
        alone = pipesim.simulate(name, cluster="dgx-h100", **options)
        assert (row["makespan"], row["bubble_rate"]) == (alone.iteration_time, alone.bubble_rate)
    # The cluster's links, not the analytic replay's zero latency, set the times.
    analytic = pipesim.compare(names, p=4, m=8, costs=(0.01, 0.02, 0.01))
    assert c.column("makespan")[0] > analytic.column("makespan")[0]
    with pytest.raises(ValueError, match="comm is the analytic replay's latency"):
        pipesim.compare(names, cluster="dgx-h100", comm=0.1, **options)
    with pytest.raises(ValueError, match="unknown cluster"):
        pipesim.compare(names, cluster="no-such-cluster", **options)


def test_the_step_exchange_applies_to_interleaved_1f1b_wherever_it_is_listed(cli):
    # Checked against the first schedule only, it was refused with 1f1b listed first.
    for names in (["1f1b", "interleaved-1f1b"], ["interleaved-1f1b", "1f1b"]):
        c = pipesim.compare(names, p=4, m=16, overlap_p2p_communication=False)
        expected = cli("compare", "-s", ",".join(names), "-p", 4, "-m", 16,
                       "--no-overlap-p2p-communication", "--json")
        expected.pop("command"), expected.pop("inputs")
        assert c.to_dict() == expected
    # With a latency, the exchange once per step lengthens interleaved-1f1b's makespan (each
    # output waits for its step's end), not 1F1B's.
    held = pipesim.compare(names, p=4, m=16, comm=0.5, overlap_p2p_communication=False)
    plain = pipesim.compare(names, p=4, m=16, comm=0.5)
    assert held.column("makespan")[0] > plain.column("makespan")[0]
    assert held.column("makespan")[1] == plain.column("makespan")[1]


def test_compare_reads_a_list_typed_with_spaces():
    assert (pipesim.compare("1f1b, zb-h1", p=4, m=8).to_dict() ==
            pipesim.compare(["1f1b", "zb-h1"], p=4, m=8).to_dict())


def test_compare_with_a_model_reports_seconds_and_bytes():
    c = pipesim.compare("1f1b,zb-h1", p=4, m=8, model="llama2-7b", gpu="h100-sxm", mb=1)
    assert c.time_unit == "s"
    assert {"iteration_time", "peak_memory_bytes", "samples_per_second", "tokens_per_second",
            "mfu"} <= set(c.schedules[0])
    alone = pipesim.analyze("zb-h1", p=4, m=8, model="llama2-7b", gpu="h100-sxm", mb=1)
    assert c.schedules[1]["mfu"] == pytest.approx(alone.mfu)
    assert c.schedules[1]["tokens_per_second"] == pytest.approx(alone.tokens_per_second)


def test_compare_warns_of_devices_over_their_gpu_memory():
    # Llama 2 70B on two 40 GB A100s cannot fit, whichever the schedule.
    with pytest.warns(pipesim.PipesimWarning, match="device 0 needs"):
        c = pipesim.compare("1f1b,zb-h1", p=2, m=4, model="llama2-70b", gpu="a100-40gb", mb=1,
                            recompute="full")
    # Device 0 holds the same in both schedules: that warning is listed once, with both names.
    assert [w.split(":")[0] for w in c.warnings] == ["1f1b, zb-h1", "1f1b", "zb-h1", "zb-h1"]
    # zb-h1 splits its backward: with full recomputation its peak memory is a lower bound.
    assert "peak memory is a lower bound" in c.warnings[2]
    assert all("more than the a100-40gb's 40.0 GiB" in w for w in c.warnings[:2] + c.warnings[3:])
    # A copy, as every list field: clearing it cleared the comparison's own.
    c.warnings.clear()
    assert len(c.warnings) == 4


def test_compare_without_a_1f1b_to_compare_with(cli):
    # One device of only the embedding: 1F1B cannot run, so there is no speed-up over it.
    c = pipesim.compare("zb-v", p=1, m=4, model="zb-1.5b", gpu="h200", mb=1,
                        first_stage_layers=0)
    assert c.schedules[0]["speedup_1f1b"] is None
    assert np.isnan(c.column("speedup_1f1b")[0])
    assert "—" in c._repr_html_()


def test_compare_with_post_validation_matches_the_command_line(cli):
    # F = B = W = 1, p = 8, m = 24: 1F1B repeats every (m + p - 1)·3 = 93 either way, ZB-2p
    # every 3m = 72 with post-validation (79 for one iteration alone).
    c = pipesim.compare("1f1b,zb-2p", p=8, m=24, post_validation=True)
    expected = cli("compare", "-s", "1f1b,zb-2p", "-p", 8, "-m", 24, "--post-validation",
                   "--json")
    del expected["command"], expected["inputs"]
    assert c.to_dict() == expected
    assert list(c.column("period")) == [93, 72]
    assert c.column("speedup")[1] == pytest.approx(93 / 72)
    assert pipesim.compare("1f1b,zb-2p", p=8, m=24).column("makespan")[1] == 79


def test_compare_errors(cli):
    message = cli("compare", "-s", "1f1b,nope", "-p", 4, "-m", 8, expect_error=True)
    with pytest.raises(ValueError) as e:
        pipesim.compare(["1f1b", "nope"], p=4, m=8)
    assert "pipesim compare: " + str(e.value) + "\n" == message
    with pytest.raises(ValueError, match="listed twice"):
        pipesim.compare(["1f1b", "1f1b"], p=4, m=8)


def test_search_matches_the_command_line(cli):
    s = pipesim.search(p=4, m=8, mem_limit=3, costs=(1, 2, 1))
    expected = cli("search", "-p", 4, "-m", 8, "--mem-limit", 3, "--costs", "1,2,1", "--json")
    assert s.to_dict() == expected
    assert s.best["fits"] and s.best["peak_activation_max"] <= 3
    # The front starts with the best; each further entry a lower peak at a higher bubble.
    assert s.front[0] == s.best
    for before, after in zip(s.front, s.front[1:]):
        assert after["peak_activation_max"] < before["peak_activation_max"]
        assert after["bubble_rate"] > before["bubble_rate"]
    # The best schedule, replayed on its own, gives the figures the search ranked it by.
    again = pipesim.analyze(s.best_schedule, costs=(1, 2, 1))
    assert again.bubble_rate == pytest.approx(s.best["bubble_rate"])
    assert again.peak_activation_max == pytest.approx(s.best["peak_activation_max"])


def test_search_errors_are_the_command_lines(cli):
    message = cli("search", "-p", 4, "-m", 8, "--mem-limit", 0.5, expect_error=True)
    with pytest.raises(ValueError) as e:
        pipesim.search(p=4, m=8, mem_limit=0.5)
    assert "pipesim search: " + str(e.value) + "\n" == message
    with pytest.raises(ValueError, match="mem_limit: must be > 0"):
        pipesim.search(p=4, m=8, mem_limit=0)



def test_search_reports_progress_and_stops_where_its_progress_function_raises():
    seen = []
    result = pipesim.search(p=4, m=8, mem_limit=4, progress=lambda *a: seen.append(a))
    total = seen[0][1]
    assert [done for done, _, _ in seen] == list(range(total + 1))
    assert seen[-1] == (total, total, "")
    labels = [label for _, _, label in seen[:-1]]
    assert {row["label"] for row in result.ranking} <= set(labels)

    class Stop(Exception):
        pass

    calls = []

    def stop_at_third(done, total, label):
        calls.append(done)
        if done == 2:
            raise Stop(label)

    # A p=256, m=1024 search runs for seconds: stopped at its third candidate, it returns at once.
    with pytest.raises(Stop):
        pipesim.search(p=256, m=1024, mem_limit=256, progress=stop_at_third)
    assert calls == [0, 1, 2]
    # A plain ValueError of its own, the same object, flags and all (it was reworded as the
    # core's: "--comm stop" came back as "comm stop", its traceback cut).
    mine = ValueError("--comm stop")

    def raise_mine(done, total, label):
        raise mine

    with pytest.raises(ValueError) as e:
        pipesim.search(p=4, m=8, mem_limit=4, progress=raise_mine)
    assert e.value is mine and str(e.value) == "--comm stop"
    with pytest.raises(TypeError, match="progress: expected a function or None"):
        pipesim.search(p=4, m=8, mem_limit=4, progress=3)


def test_an_unknown_column_is_named_with_the_fields_there_are():
    comparison = pipesim.compare("1f1b,zb-h1", 4, 8)
    with pytest.raises(KeyError, match="column 'nope': a row's fields are schedule, "):
        comparison.column("nope")
    # Not a name at all: a TypeError (a KeyError listed the fields, as if 3 were a field).
    for wrong in (3, None):
        with pytest.raises(TypeError, match="column: expected a field's name, got "):
            comparison.column(wrong)


def test_search_with_a_model_matches_the_command_line(cli):
    model = dict(model="zb-6.2b", gpu="a100-80gb", mb=2)
    s = pipesim.search(p=4, m=8, mem_limit="36GiB", **model)
    expected = cli("search", "-p", 4, "-m", 8, "--mem-limit", "36GiB", "--model", "zb-6.2b",
                   "--gpu", "a100-80gb", "--mb", 2, "--json")
    assert s.to_dict() == expected
    # The best schedule, run again with the model, takes the iteration the search gave it.
    assert pipesim.analyze(s.best_schedule, **model).iteration_time == pytest.approx(
        s.best["iteration_time"], rel=1e-12)
    # The cap is a whole device's bytes: the same search in bytes.
    assert pipesim.search(p=4, m=8, mem_limit=36 * 2**30, **model).to_dict() == expected
    assert "36 GiB" in repr(s)
    page = s._repr_html_()
    assert "<th>iteration time</th>" in page and " GiB</td>" in page


def test_search_with_a_model_warns_of_devices_over_their_gpu():
    # Llama 3 70B at t 8 under a 120 GiB cap: the best needs more than an H100's 79.6 GiB.
    with pytest.warns(pipesim.PipesimWarning, match="more than the h100-sxm's 79.6 GiB"):
        s = pipesim.search(p=8, m=32, mem_limit="120GiB", model="llama3-70b", gpu="h100-sxm",
                           mb=1, tp=8)
    assert s.warnings and all("more than the h100-sxm's" in w for w in s.warnings)


def test_search_with_a_model_refuses_what_it_cannot_plan():
    model = dict(p=4, m=8, model="zb-6.2b", gpu="a100-80gb", mb=2)
    with pytest.raises(ValueError, match="zero=1 shards .* give cp=C above 1"):
        pipesim.search(mem_limit="36GiB", zero=1, **model)
    with pytest.raises(ValueError, match="mem_limit: '36Gibbles': unknown unit"):
        pipesim.search(mem_limit="36Gibbles", **model)
    # A plain small number with a model, meant in M_B or GiB: the unit is what is wrong.
    for small in (8, 36.5, 2**20 - 1):
        with pytest.raises(ValueError, match=r"with a model the cap is in bytes.*'80GiB'"):
            pipesim.search(mem_limit=small, **model)
    # Bytes of any real number type, or a size as text; a value of no type is a TypeError.
    # (Integers beyond a float, lone surrogates and NumPy integers leaked pybind11's "Unable
    # to cast" RuntimeError or were refused; a NUL cut the message short.)
    import numpy as np
    s = pipesim.search(mem_limit=np.int64(36 * 2**30), **model)
    assert s.to_dict() == pipesim.search(mem_limit="36GiB", **model).to_dict()
    for bad, error, message in ((10**400, ValueError, "mem_limit: must be ≤"),
                                (-(10**400), ValueError, "mem_limit: must be"),
                                (0, ValueError, "mem_limit: must be > 0"),
                                ("\udcff", ValueError, "mem_limit: expected a size"),
                                ("80GiB\x00", ValueError, "mem_limit: a NUL character"),
                                ([80], TypeError, "mem_limit: expected bytes or a size")):
        with pytest.raises(error, match=message):
            pipesim.search(mem_limit=bad, **model)
    with pytest.raises(ValueError, match="costs and mem_w_ratio cannot be combined"):
        pipesim.search(mem_limit="36GiB", costs=(1, 2, 1), **model)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dp'"):
        pipesim.search(mem_limit="36GiB", dp=2, **model)
    # Model options at their defaults ask for no model: the search in activation units.
    assert pipesim.search(p=4, m=8, mem_limit=4, recompute="none", tp=1).to_dict() == \
        pipesim.search(p=4, m=8, mem_limit=4).to_dict()


def test_search_takes_the_all_to_all_time_as_the_command_line_does(cli):
    s = pipesim.search(p=8, m=32, mem_limit=8, costs=(1, 2, 1), a2a=0.5)
    assert s.to_dict() == cli("search", "-p", 8, "-m", 32, "--mem-limit", 8, "--costs", "1,2,1",
                              "--a2a", 0.5, "--json")
    # The all-to-all lengthens every F and B: the best iteration is longer than without it.
    assert s.best["makespan"] > pipesim.search(p=8, m=32, mem_limit=8, costs=(1, 2, 1)).best[
        "makespan"]
