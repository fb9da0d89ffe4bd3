"""pipesim.analyze: the figures of the analytic replay, checked against closed forms and
against the command line's --json output."""

import copy
import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

import pipesim
from pipesim import _pipesim


def test_1f1b_matches_the_command_line(cli):
    r = pipesim.analyze(schedule="1f1b", p=4, m=8)
    expected = cli("analyze", "-s", "1f1b", "-p", 4, "-m", 8, "--json")
    assert r.to_dict() == expected
    assert r.bubble_rate == expected["bubble_rate"]


def test_1f1b_bubble_and_makespan_follow_the_closed_form():
    # Unit F, B, W (BW = 2), no latency: makespan (m + p − 1)(F + B + W), bubble
    # (p − 1)/(m + p − 1), device i holds p − i microbatches at its peak.
    p, m = 4, 8
    r = pipesim.analyze(schedule="1f1b", p=p, m=m)
    assert r.makespan == pytest.approx((m + p - 1) * 3)
    assert r.bubble_rate == pytest.approx((p - 1) / (m + p - 1))
    assert r.peak_activation == [4, 3, 2, 1]
    assert r.peak_activation_max == 4


def test_zb_h1_with_costs_and_latency_matches_the_command_line(cli):
    r = pipesim.analyze(schedule="zb-h1", p=8, m=32, costs=(1, 2, 1), comm=0.05)
    expected = cli("analyze", "-s", "zb-h1", "-p", 8, "-m", 32, "--costs", "1,2,1",
                   "--comm", 0.05, "--json")
    assert r.to_dict() == expected
    assert r.comm_latency == 0.05


def test_interleaved_exchange_per_step_matches_the_command_line(cli):
    # Megatron-LM's interleaved schedule without p2p overlap: with latency, the outputs held
    # to the end of each step lengthen the iteration; without, on equal stages, its warm-up
    # absorbs them.
    options = dict(schedule="interleaved-1f1b", p=4, m=8, v=2, costs=(1, 2, 1), comm=0.3)
    r = pipesim.analyze(overlap_p2p_communication=False, **options)
    expected = cli("analyze", "-s", "interleaved-1f1b", "-p", 4, "-m", 8, "-v", 2, "--costs",
                   "1,2,1", "--comm", 0.3, "--no-overlap-p2p-communication", "--json")
    assert r.to_dict() == expected
    assert expected["step_exchange"] is True
    assert r.makespan > pipesim.analyze(**options).makespan
    # The 1F1B baseline and a comparison's other schedules exchange after each pass.
    one = pipesim.analyze(schedule="1f1b", p=4, m=8, costs=(1, 2, 1), comm=0.3)
    assert expected["speedup_1f1b"] == pytest.approx(one.makespan / r.makespan)
    both = cli("compare", "-s", "1f1b,interleaved-1f1b", "-p", 4, "-m", 8, "-v", 2, "--costs",
               "1,2,1", "--comm", 0.3, "--no-overlap-p2p-communication", "--json")
    makespans = {row["schedule"]: row["makespan"] for row in both["schedules"]}
    assert makespans == pytest.approx({"1f1b": one.makespan, "interleaved-1f1b": r.makespan})
    options["comm"] = 0
    assert pipesim.analyze(overlap_p2p_communication=False, **options).makespan == \
        pytest.approx(pipesim.analyze(**options).makespan)


def test_per_stage_costs_and_chunks():
    r = pipesim.analyze(schedule="interleaved-1f1b", p=2, m=4, v=2,
                        costs=[(1, 1, 1), (2, 2, 2), (1, 1, 1), (2, 2, 2)], mem_w_ratio=0.5)
    assert r.chunks == 2 and r.virtual_stages == 4
    # Busy time of each device: m microbatches × the F, B, W of its two chunks.
    assert r.busy == pytest.approx([4 * (3 + 3), 4 * (6 + 6)])


def test_model_based_run_matches_the_command_line(cli):
    r = pipesim.analyze(schedule="zb-h1", p=4, m=8, model="llama2-7b", gpu="h100-sxm", mb=1, tp=2,
                        dp=2, recompute="selective")
    expected = cli("analyze", "-s", "zb-h1", "-p", 4, "-m", 8, "--model", "llama2-7b", "--gpu",
                   "h100-sxm", "--mb", 1, "-t", 2, "--dp", 2, "--recompute", "selective", "--json")
    assert r.to_dict() == expected
    assert r.time_unit == "s" and r.model["gpus"] == 16 and 0 < r.mfu < 1


def test_unfused_attention_matches_the_command_line(cli):
    r = pipesim.analyze(schedule="1f1b", p=2, m=4, model="zb-1.5b", gpu="a100-80gb", mb=2,
                        attention="unfused")
    expected = cli("analyze", "-s", "1f1b", "-p", 2, "-m", 4, "--model", "zb-1.5b", "--gpu",
                   "a100-80gb", "--mb", 2, "--attention", "unfused", "--json")
    assert r.to_dict() == expected
    fused = pipesim.analyze(schedule="1f1b", p=2, m=4, model="zb-1.5b", gpu="a100-80gb", mb=2)
    assert r.model["attention"] == "unfused" and fused.model["attention"] == "fused"
    assert r.makespan > fused.makespan


def test_sharding_overlap_and_context_parallelism_match_the_command_line(cli):
    r = pipesim.analyze(schedule="1f1b", p=4, m=8, model="llama2-7b", gpu="h100-sxm", mb=1,
                        tp=4, dp=8, zero=3, cp=2, tp_comm_overlap=True, last_stage_layers=0)
    expected = cli("analyze", "-s", "1f1b", "-p", 4, "-m", 8, "--model", "llama2-7b", "--gpu",
                   "h100-sxm", "--mb", 1, "-t", 4, "--dp", 8, "--zero", 3, "--cp", 2,
                   "--tp-comm-overlap", "--last-stage-layers", 0, "--json")
    assert r.to_dict() == expected
    assert r.model["gpus"] == 4 * 4 * 8 * 2


# Each kernel-implementation keyword against its flag: (keywords, flags, the JSON it reports).
KERNEL_CHOICES = [
    (dict(dp=2, grad_dtype="fp16", gradient_accumulation_fusion=False),
     ["--dp", 2, "--grad-dtype", "fp16", "--no-gradient-accumulation-fusion"],
     {"grad_bytes": 2, "gradient_accumulation_fusion": False}),
    (dict(persist_layer_norm=False), ["--no-persist-layer-norm"], {"persist_layer_norm": False}),
    (dict(cross_entropy_loss_fusion=True), ["--cross-entropy-loss-fusion"],
     {"cross_entropy_loss_fusion": True}),
]


@pytest.mark.parametrize("keywords, flags, reported", KERNEL_CHOICES)
def test_kernel_choices_match_the_command_line(cli, keywords, flags, reported):
    r = pipesim.analyze(schedule="1f1b", p=2, m=4, model="zb-1.5b", gpu="a100-80gb", mb=2,
                        **keywords)
    expected = cli("analyze", "-s", "1f1b", "-p", 2, "-m", 4, "--model", "zb-1.5b", "--gpu",
                   "a100-80gb", "--mb", 2, *flags, "--json")
    assert r.to_dict() == expected
    for key, value in reported.items():
        if isinstance(value, bool):
            assert r.model[key] is value
        else:
            assert r.model[key] == value


def test_zero_stages_shrink_the_weights_and_optimizer_state():
    # Per parameter: 18 bytes unsharded (16-bit weights and gradients, fp32 master weights
    # and two Adam moments); ZeRO-3 over d ranks shards all of them: 18/d.
    def static_bytes(**kwargs):
        r = pipesim.analyze(schedule="1f1b", p=2, m=4, model="llama2-7b", gpu="h100-sxm", mb=1,
                            dp=4, **kwargs)
        params = [stage["params"] for stage in r.model["virtual_stages"]]
        return r.model["static_bytes"], params
    unsharded, params = static_bytes()
    assert unsharded == pytest.approx([18 * n for n in params], rel=1e-6)
    for zero, per_param in ((1, 6 + 12 / 4), (2, 2 + 16 / 4), (3, 18 / 4)):
        sharded, _ = static_bytes(zero=zero)
        assert sharded == pytest.approx([per_param * n for n in params], rel=1e-6)


def test_ops_and_arrays_describe_the_same_timeline():
    r = pipesim.analyze(schedule="zb-h1", p=4, m=8, costs=(1, 2, 1))
    ops = r.timeline()
    a = r.arrays()
    assert len(ops) == r.ops == 4 * 8 * 3  # F, B, W of each microbatch on each device
    assert len(a["start"]) == len(ops)
    assert [pipesim.PASSES[c] for c in a["pass"]] == [o.kind for o in ops]
    assert a["device"].dtype == np.int32 and a["start"].dtype == np.float64
    # Durations are the costs; each device runs one op at a time.
    durations = {"F": 1, "B": 2, "W": 1}
    for o in ops:
        assert o.end - o.start == pytest.approx(durations[o.kind])
    for d in range(4):
        mine = a["device"] == d
        assert np.all(a["start"][mine][1:] >= a["end"][mine][:-1])
        assert a["end"][mine].sum() - a["start"][mine].sum() == pytest.approx(r.busy[d])
    assert a["end"].max() - a["start"].min() == pytest.approx(r.makespan)


def test_memory_curve_peaks_at_peak_activation():
    r = pipesim.analyze(schedule="1f1b", p=4, m=8)
    for d in range(4):
        time, held = r.memory_curve(d)
        assert held.max() == pytest.approx(r.peak_activation[d])
        assert np.all(np.diff(time) >= 0)
    with pytest.raises(ValueError, match="device: must be in 0..3, got 4"):
        r.memory_curve(4)


def test_transfers_connect_devices():
    r = pipesim.analyze(schedule="1f1b", p=4, m=8, comm=0.5)
    t = r.transfers()
    # Each microbatch crosses p − 1 boundaries forward and back.
    assert len(t["src_device"]) == 8 * 3 * 2
    assert np.all(t["end"] - t["start"] == pytest.approx(0.5))
    assert set(np.abs(t["src_device"] - t["dst_device"]).tolist()) == {1}


def test_given_schedule_runs_like_the_generated_one():
    generated = pipesim.analyze(schedule="zb-v", p=4, m=8)
    again = pipesim.analyze(generated.to_schedule())
    assert again.makespan == generated.makespan
    assert again.peak_activation == generated.peak_activation


def test_import_and_runs_need_no_numpy():
    # Only the array functions import NumPy: an interpreter without it still runs pipelines.
    code = ("import sys; sys.modules['numpy'] = None; import pipesim; "
            "r = pipesim.analyze(schedule='1f1b', p=4, m=8); "
            "print(r.bubble_rate, len(r.timeline()), pipesim.compare(['1f1b'], p=4, m=8)"
            ".schedules[0]['bubble_rate'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [repr(3 / 11), "64", repr(3 / 11)]


def test_data_parallel_reduction_is_charged_as_on_the_command_line(cli):
    # dp = 4, t = 1: a rail of 4 GPUs inside one node; the ring moves 2·3/4 of the largest
    # device's fp32 gradients at the A100's NVLink bus bandwidth (200 GB/s) and, overlapped
    # with the last backward, lengthens the iteration by at most that much.
    args = dict(schedule="1f1b", p=4, m=8, model="zb-1.5b", gpu="a100-80gb", mb=1, dp=4)
    r = pipesim.analyze(**args)
    expected = cli("analyze", "-s", "1f1b", "-p", 4, "-m", 8, "--model", "zb-1.5b", "--gpu",
                   "a100-80gb", "--mb", 1, "--dp", 4, "--json")
    assert r.grad_reduce_time == expected["grad_reduce_time"]
    assert r.iteration_time == expected["iteration_time"]
    assert r.grad_reduce_algorithm == "ring"
    params = max(sum(s["params"] for s in r.model["virtual_stages"][d::4]) for d in range(4))
    assert r.grad_reduce_time == pytest.approx(1.5 * 4 * params / 200e9)
    assert r.makespan < r.iteration_time <= r.makespan + r.grad_reduce_time
    after = pipesim.analyze(**args, overlap_grad_reduce=False)
    assert after.iteration_time == pytest.approx(after.makespan + after.grad_reduce_time)


def test_parameter_all_gather_moves_as_on_the_command_line(cli):
    # The distributed optimizer over 4 replicas, reduced after the pipeline: with the
    # all-gather moved beside the first forward, the end of the iteration reduce-scatters only.
    args = dict(schedule="1f1b", p=4, m=8, model="zb-1.5b", gpu="a100-80gb", mb=1, dp=4,
                dist_opt=True, overlap_grad_reduce=False)
    after = pipesim.analyze(**args)
    moved = pipesim.analyze(**args, overlap_param_gather=True)
    expected = cli("analyze", "-s", "1f1b", "-p", 4, "-m", 8, "--model", "zb-1.5b", "--gpu",
                   "a100-80gb", "--mb", 1, "--dp", 4, "--dist-opt", "--no-overlap-grad-reduce",
                   "--overlap-param-gather", "--json")
    assert moved.iteration_time == expected["iteration_time"]
    assert moved.param_gather_time == expected["param_gather_time"]
    # Reduce-scatter of S fp32 bytes and all-gather of S/2 bf16 bytes, both (n-1)/n at the
    # same rate: the gather is a third of the pair.
    assert moved.param_gather_time == pytest.approx(after.grad_reduce_time / 3)
    assert moved.grad_reduce_time == pytest.approx(after.grad_reduce_time * 2 / 3)
    assert moved.iteration_time < after.iteration_time
    with pytest.raises(ValueError, match="give dist_opt=True or zero=1"):
        pipesim.analyze(schedule="1f1b", p=4, m=8, model="zb-1.5b", gpu="a100-80gb", mb=1,
                        dp=4, overlap_param_gather=True)


def test_post_validation_reports_the_period_of_repeated_iterations(cli):
    # ZB-2p with F = B = W = 1 on p = 4, m = 12: one iteration takes 3m + p - 1 = 39, but
    # without a pipeline-wide synchronization the iterations repeat every 3m = 36 (the
    # longest device span), as `analyze --post-validation` says.
    result = pipesim.analyze("zb-2p", 4, 12, costs=(1, 1, 1), post_validation=True)
    expected = cli("analyze", "-s", "zb-2p", "-p", 4, "-m", 12, "--costs", "1,1,1",
                   "--post-validation", "--json")
    assert result.period == expected["period"] == pytest.approx(36)
    assert result.single_iteration_time == pytest.approx(39)
    assert result.speedup_1f1b == pytest.approx(45 / 36)
    plain = pipesim.analyze("zb-2p", 4, 12, costs=(1, 1, 1))
    assert not hasattr(plain, "period")


def test_dualpipe_all_to_all_and_its_overlap_match_the_command_line(cli):
    r = pipesim.analyze(schedule="dualpipe", p=4, m=8, a2a=0.5, overlap_fb=0.5)
    expected = cli("analyze", "-s", "dualpipe", "-p", 4, "-m", 8, "--a2a", 0.5,
                   "--overlap-fb", 0.5, "--json")
    assert r.to_dict() == expected
    # Hiding half of each pair's all-to-all shortens the run against hiding none.
    assert r.makespan < pipesim.analyze(schedule="dualpipe", p=4, m=8, a2a=0.5).makespan


def test_results_pickle_and_copy_with_their_timeline():
    r = pipesim.analyze(schedule="zb-h1", p=4, m=8, costs=(1, 2, 1), comm=0.1)
    for other in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r), copy.copy(r)):
        assert other.to_dict() == r.to_dict()
        assert other.timeline() == r.timeline()
        assert other.to_schedule() == r.to_schedule()
        for name in ("start", "end", "microbatch"):
            assert (other.arrays()[name] == r.arrays()[name]).all()
        assert [c.tolist() for c in other.memory_curve(2)] == \
            [c.tolist() for c in r.memory_curve(2)]
        assert (other.transfers()["bytes"] == r.transfers()["bytes"]).all()


def test_every_part_of_a_timeline_survives_pickling():
    # DualPipe's F&B pairs, a simulation's tensor- and data-parallel collectives beside its
    # pipeline transfers, a model's memory in bytes: all go into the pickle's bytes.
    runs = [pipesim.analyze(schedule="dualpipe", p=4, m=8, a2a=0.5, overlap_fb=0.5),
            pipesim.simulate("1f1b", p=2, m=4, cluster="dgx-a100", model="llama2-7b",
                             gpu="a100-80gb", mb=1, tp=2, dp=2)]
    kinds = set(runs[1].transfers()["kind"].tolist())
    assert len(kinds) >= 3  # pipeline, tensor- and data-parallel
    for r in runs:
        other = pickle.loads(pickle.dumps(r))
        assert other.to_dict() == r.to_dict()
        assert other.timeline() == r.timeline()
        for name, column in r.transfers().items():
            assert (other.transfers()[name] == column).all()
        assert [c.tolist() for c in other.memory_curve(0)] == \
            [c.tolist() for c in r.memory_curve(0)]
        if _pipesim.graphviz_available():  # the pairs' borders, the transfers' arrows
            assert other.svg(transfers=True) == r.svg(transfers=True)
        # Nothing is lost or added on the way: pickled again, the bytes are the same.
        assert pickle.dumps(other) == pickle.dumps(r)


def test_a_large_result_pickles_compactly():
    # Pickled as saved-timeline JSON, a 2-million-op run was 516 MiB and took 44 s to load;
    # as bytes an op takes 25 and a transfer 51.
    r = pipesim.analyze(schedule="1f1b", p=8, m=512)
    items = r.ops + len(r.transfers()["start"])
    assert len(pickle.dumps(r)) < 60 * items


def test_a_damaged_or_old_pickle_reads_back_or_says_what_is_wrong(cli):
    r = pipesim.analyze(schedule="1f1b", p=2, m=3, comm=0.1)
    _, (json_text, schedule_text, timeline) = r._run.__reduce__()
    assert isinstance(timeline, bytes)
    for damaged, problem in ((b"garbage", "cut short"),
                             (timeline[:-3], "cut short"),
                             (timeline + b"x", "bytes left over"),
                             (timeline.replace(b"pipesim-timeline-bytes", b"pipesim-timeline-bytez"),
                              "not a pipesim timeline in bytes")):
        with pytest.raises(ValueError, match=problem):
            pipesim._run_from_pickle(json_text, schedule_text, damaged)
    # Pickles of earlier versions held the timeline as saved-timeline JSON text.
    saved = cli("analyze", "-s", "1f1b", "-p", 2, "-m", 3, "--comm", 0.1, "--save-timeline", "-")
    old = pipesim._run_from_pickle(json_text, schedule_text, json.dumps(saved))
    assert old.op_tuples() == r._run.op_tuples()
    assert pickle.dumps(old) == pickle.dumps(r._run)


def test_a_result_at_the_largest_pass_times_pickles():
    # Pass times near the 1e30 costs takes: 1F1B's makespan 3(m + p − 1)·1e29 = 3.3e30 was
    # past what a timeline held, so the result the run returned could not be pickled.
    r = pipesim.analyze(schedule="1f1b", p=4, m=8, costs=(1e29, 1e29, 1e29))
    assert r.makespan == pytest.approx(3.3e30)
    assert pickle.loads(pickle.dumps(r)).timeline() == r.timeline()


def test_result_fields_are_copies():
    r = pipesim.analyze(schedule="1f1b", p=4, m=8)
    busy = r.busy
    busy.append(1.0)
    assert len(r.busy) == 4 and len(r.to_dict()["busy"]) == 4
    assert "<td>3</td>" in r._repr_html_()  # the device table still reads every device
    c = pipesim.compare(["1f1b", "zb-h1"], p=4, m=8)
    for row in c:
        row["schedule"] = "changed"
    assert c.column("schedule") == ["1f1b", "zb-h1"]


def test_a_file_name_of_any_bytes_reaches_the_result(tmp_path):
    # A calibration file whose name is not UTF-8: the result's JSON names it with U+FFFD (it
    # raised nlohmann's "invalid UTF-8 byte" as a RuntimeError).
    import os
    import shutil
    source = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "examples",
                          "calibration-h100.json")
    path = os.path.join(os.fsencode(tmp_path), b"cal\xff.json")
    shutil.copyfile(source, path)
    r = pipesim.analyze(schedule="1f1b", p=4, m=8, model="llama2-7b", gpu="h100-sxm", mb=1,
                        calibration=os.fsdecode(path))
    assert "cal\ufffd.json" in json.dumps(r.to_dict(), ensure_ascii=False)


def _timeline_bytes(unit="unit", ops=((0, 0.0, 1.0), (3, 1.0, 3.0)), activation=1.0, held=1.0):
    """The pickle's timeline bytes of a one-device, one-microbatch run, written from the
    layout python/src/timeline_bytes.hpp describes (native little-endian)."""
    import struct

    def text(s):
        return struct.pack("<Q", len(s)) + s.encode()

    out = text("pipesim-timeline-bytes") + struct.pack("<I", 1) + text("1f1b") + text(unit)
    out += struct.pack("<iii", 1, 1, 1) + struct.pack("<Qi", 1, 0)  # p, m, v; stage_device
    out += struct.pack("<QQ", 0, 0)  # microbatch_stages, fb_pairs
    out += struct.pack("<QQ", 1, len(ops))
    for kind, start, end in ops:
        out += struct.pack("<Biidd", kind, 0, 0, start, end)
    out += struct.pack("<Q", 0)  # transfers
    return out + struct.pack("<QdQd", 1, activation, 1, held)


def test_pickled_timeline_bytes_are_checked_as_a_saved_timeline_is():
    r = pipesim.analyze(schedule="1f1b", p=1, m=1)
    _, (json_text, schedule_text, timeline) = r._run.__reduce__()
    assert timeline == _timeline_bytes()  # the documented layout, written independently
    for damaged, problem in ((_timeline_bytes(ops=((0, 0.0, float("nan")), (3, 1.0, 3.0))),
                              "an end of nan"),
                             (_timeline_bytes(ops=((0, 2.0, 1.0), (3, 2.0, 3.0))),
                              "times out of order"),
                             (_timeline_bytes(ops=((0, 0.0, 1.0), (3, 0.5, 3.0))),
                              "times out of order"),
                             (_timeline_bytes(held=2.0), "holds more for W"),
                             (_timeline_bytes(unit="fortnights"), "an unknown time unit")):
        with pytest.raises(ValueError, match=problem):
            pipesim._run_from_pickle(json_text, schedule_text, damaged)


def test_a_results_figures_cannot_be_changed():
    # r.makespan = 5 was taken, after which r.makespan and r.to_dict() disagreed.
    r = pipesim.analyze("zb-h1", 4, 8)
    for name in ("makespan", "warnings"):
        with pytest.raises(AttributeError, match=f"Result.{name} is a figure of the run"):
            setattr(r, name, 5)
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del r.makespan
    assert r.makespan == r.to_dict()["makespan"] == 27
    c = pipesim.compare(["1f1b", "zb-h1"], 4, 8)
    with pytest.raises(AttributeError, match="Comparison.schedules is a figure of the run"):
        c.schedules = []
    # A search's best schedule too: it could be replaced and deleted.
    s = pipesim.search(4, 8, 2)
    best = s.best_schedule
    with pytest.raises(AttributeError, match="SearchResult.best_schedule is a figure of the run"):
        s.best_schedule = "mine"
    with pytest.raises(AttributeError, match="SearchResult.best_schedule .* cannot be deleted"):
        del s.best_schedule
    assert s.best_schedule == best and best.name == s.best["label"]
    # The caller's own attributes stay the caller's.
    r.label = "mine"
    assert r.label == "mine"
