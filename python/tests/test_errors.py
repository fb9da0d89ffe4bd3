"""Bad input raises ValueError (or TypeError for a value of the wrong type) with the command
line's one-line message, never a crash."""

import decimal
import fractions
import json
import math
import os
import re
import subprocess
import sys

import pytest

import pipesim


@pytest.mark.parametrize("args, kwargs", [
    (["-s", "nope", "-p", 4, "-m", 4], dict(schedule="nope", p=4, m=4)),
    (["-s", "zb-v", "-p", 4, "-m", 4, "-v", 3], dict(schedule="zb-v", p=4, m=4, v=3)),
    (["-s", "dualpipe", "-p", 3, "-m", 4], dict(schedule="dualpipe", p=3, m=4)),
    (["-s", "1f1b", "-p", 4, "-m", 4, "--model", "nope", "--gpu", "h100-sxm", "--mb", 1],
     dict(schedule="1f1b", p=4, m=4, model="nope", gpu="h100-sxm", mb=1)),
    (["-s", "1f1b", "-p", 4, "-m", 4, "--model", "llama2-7b", "--gpu", "nope", "--mb", 1],
     dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="nope", mb=1)),
    (["-s", "1f1b", "-p", 4, "-m", 4, "--model", "llama2-7b", "--gpu", "h100-sxm", "--mb", 1,
      "--cp", 3], dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1, cp=3)),
    (["-s", "1f1b", "-p", 4, "-m", 4, "--costs", "1,1,1:2,2,2"],
     dict(schedule="1f1b", p=4, m=4, costs=[(1, 1, 1), (2, 2, 2)])),
])
def test_library_errors_carry_the_command_lines_message(cli, args, kwargs):
    message = cli("analyze", *args, expect_error=True)
    with pytest.raises(ValueError) as e:
        pipesim.analyze(**kwargs)
    assert "pipesim analyze: " + str(e.value) + "\n" == message


@pytest.mark.parametrize("kwargs, message", [
    (dict(schedule="1f1b", p=0, m=4), "p: must be in 1..4096, got 0"),
    (dict(schedule="1f1b", p=4, m=2**21), "m: must be in 1..1048576, got 2097152"),
    (dict(schedule="1f1b", p=4, m=4, comm=-1), "comm: must be ≥ 0, got -1"),
    (dict(schedule="1f1b", p=4, m=4, comm=float("nan")), "comm: must be a finite number"),
    (dict(schedule="1f1b", p=4, m=4, mem_w_ratio=2), "mem_w_ratio: must be ≤ 1, got 2"),
    (dict(schedule="1f1b", p=4, m=4, costs=(1, 2)), "costs: expected three numbers"),
    (dict(schedule="1f1b", m=4), "missing p=P"),
    (dict(p=4, m=4), "missing schedule=NAME"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b"), "need all of model=NAME, gpu=NAME"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1, costs=(1, 1, 1)),
     "cannot be combined with model"),
    (dict(schedule="1f1b", p=4, m=4, dp=2), "dp and tp set the model's layout"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1, recompute="some"),
     "recompute"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1, attention="flash"),
     "attention: expected fused or unfused, got 'flash'"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1, tp=3),
     "divide|divides"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1, zero=4),
     "zero: must be in 1..3, got 4"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1, zero=2),
     "zero=2 shards over data- and context-parallel ranks"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1, dp=2, zero=2,
          dist_opt=True), "dist_opt is ZeRO-1"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1,
          tp_comm_overlap=True), "tp_comm_overlap overlaps tensor-parallel collectives"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1,
          sequence_parallel=False), "sequence_parallel=False turns off tensor-parallel"),
    (dict(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1, grad_dtype="fp8"),
     "grad_dtype: expected fp32, bf16 or fp16, got 'fp8'"),
    (dict(schedule="1f1b", p=4, m=4, overlap_p2p_communication=False),
     "overlap_p2p_communication=False applies to interleaved-1f1b, not to 1f1b"),
    (dict(schedule="interleaved-1f1b", p=4, m=6, overlap_p2p_communication=False),
     "overlap_p2p_communication=False needs m a multiple of the group size 4 and at least "
     "2p = 8"),
])
def test_bad_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pipesim.analyze(**kwargs)


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError, match="p: expected an integer"):
        pipesim.analyze(schedule="1f1b", p=4.5, m=4)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        pipesim.analyze(schedule="1f1b", p=4, m=4, bogus=1)
    with pytest.raises(TypeError):
        pipesim.analyze(schedule=1, p=4, m=4)


def test_a_run_too_large_for_memory_is_refused_not_attempted():
    # 4096 devices × 2^20 microbatches: trillions of ops.
    with pytest.raises(ValueError):
        pipesim.analyze(schedule="1f1b", p=4096, m=2**20)


@pytest.mark.parametrize("call", [
    lambda: pipesim.analyze("1f1b", 4, 8, post_validation="no"),
    lambda: pipesim.analyze("1f1b", 4, 8, overlap_grad_reduce="false"),
    lambda: pipesim.compare(["1f1b", "zb-h1"], 4, 8, post_validation="yes"),
    lambda: pipesim.analyze("1f1b", 4, 8, model="llama2-7b", gpu="h100-sxm", mb=1,
                            sequence_parallel="no"),
])
def test_switches_take_true_or_false_only(call):
    # bool("no") is True: a string would silently mean the opposite of what it says.
    with pytest.raises(TypeError, match="expected True or False"):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: pipesim.analyze("1f1b", 4, 8, sequence_parallel=1), "sequence_parallel: expected True"),
    (lambda: pipesim.analyze("1f1b", 4, 8, sequence_parallel=0), "sequence_parallel: expected True"),
    (lambda: pipesim.analyze("1f1b", 4, 8, dist_opt=0), "dist_opt: expected True"),
    (lambda: pipesim.analyze("1f1b", 4, 8, tp_comm_overlap=0), "tp_comm_overlap: expected True"),
    (lambda: pipesim.analyze("1f1b", 4, 8, cross_entropy_loss_fusion=0.0),
     "cross_entropy_loss_fusion: expected True"),
    (lambda: pipesim.analyze("1f1b", 4, 8, tp=1.0), "tp: expected an integer"),
    (lambda: pipesim.search(4, 8, 3, tp=True), "tp: expected an integer"),
    (lambda: pipesim.search(4, 8, 3, tp=1.0), "tp: expected an integer"),
])
def test_a_model_option_equal_to_its_default_by_value_alone_is_checked(call, message):
    # Without a model, an option at its default asks for nothing; 0 for False or 1.0 for 1
    # compared equal to it and passed unchecked.
    with pytest.raises(TypeError, match=message):
        call()


def test_model_options_at_their_defaults_ask_for_no_model():
    np = pytest.importorskip("numpy")
    plain = pipesim.analyze("1f1b", 4, 8)
    for options in (dict(dist_opt=False, tp=1), dict(dist_opt=np.False_, tp=np.int64(1)),
                    dict(recompute="none", sequence_parallel=True)):
        assert pipesim.analyze("1f1b", 4, 8, **options).makespan == plain.makespan


@pytest.mark.parametrize("call, error, message", [
    (lambda: pipesim.analyze("1f1b", 4, 8, costs=2.0), TypeError,
     "costs: expected (F, B, W) or a list of such triples, got 2.0"),
    (lambda: pipesim.analyze("1f1b", 4, 8, costs=[(1, 1, 1), 5]), TypeError,
     "costs: expected (F, B, W) or a list of such triples, got [(1, 1, 1), 5]"),
    (lambda: pipesim.analyze("1f1b", 4, 8, costs=("1", "2", "3")), TypeError,
     "costs: expected a number, got '1'"),
    (lambda: pipesim.analyze("1f1b", 4, 8, costs=(10**400, 1, 1)), ValueError,
     "costs: must be ≤ 1e+30, got a number beyond a float's range"),
    (lambda: pipesim.analyze("1f1b", 4, 8, costs=(-10**400, 1, 1)), ValueError,
     "costs: must be ≥ 0, got a number beyond a float's range"),
    (lambda: pipesim.analyze("1f1b", 4, 8, comm=fractions.Fraction(10**400, 3)), ValueError,
     "comm: must be ≤ 1e+30, got a number beyond a float's range"),
    (lambda: pipesim.analyze("1f1b", 4, 8, comm=decimal.Decimal("sNaN")), ValueError,
     "comm: must be a finite number, got Decimal('sNaN')"),
    (lambda: pipesim.compare("1f1b,\tzb-h1", 4, 8), ValueError,
     "'\\x09zb-h1': unknown schedule '\\x09zb-h1'"),
    (lambda: pipesim.compare(None, 4, 8), TypeError,
     "schedules: expected names, as a list or one comma-separated string, got None"),
    (lambda: pipesim.compare(b"1f1b", 4, 8), TypeError,
     "schedules: expected names, as a list or one comma-separated string, got b'1f1b'"),
    (lambda: pipesim.simulate("1f1b", 4, 8, cluster="dgx-h100", stragglers="0:2"), TypeError,
     "stragglers: expected {gpu: factor} or a list of (gpu, factor) pairs, got '0:2'"),
    (lambda: pipesim.simulate("1f1b", 4, 8, cluster="dgx-h100", stragglers={0: 0}), ValueError,
     "straggler GPU 0: factor must be a number ≥ 1 (it runs that many times slower), got 0;"),
    (lambda: pipesim.simulate("1f1b", 4, 8, cluster="dgx-h100", stragglers={1: -2.5}),
     ValueError, "straggler GPU 1: factor must be a number ≥ 1"),
    (lambda: pipesim.simulate("1f1b", 4, 8, cluster="dgx-h100", stragglers=[(0, 2, 3)]),
     TypeError, "stragglers: expected {gpu: factor} or a list of (gpu, factor) pairs"),
    (lambda: pipesim.analyze("1f1b", 4, 8).memory_curve(1.0), TypeError,
     "device: expected an integer, got 1.0"),
    (lambda: pipesim.analyze("1f1b", 4, 8).memory_curve(True), TypeError,
     "device: expected an integer, got True"),
    (lambda: pipesim.analyze("1f1b", 4, 8).memory_curve(4), ValueError,
     "device: must be in 0..3, got 4"),
    (lambda: pipesim.analyze("1f1b", 4, 8).svg(memory="no"), TypeError,
     "memory: expected True or False, got 'no'"),
])
def test_wrong_arguments_are_named(call, error, message):
    with pytest.raises(error) as e:
        call()
    assert str(e.value).startswith(message)


@pytest.mark.parametrize("call, message", [
    (lambda: pipesim.analyze("interleaved-1f1b", 4, 8, group_size=1), "use group_size=4 or more"),
    (lambda: pipesim.compare("1f1b,gpipe", 4, 8, v=2),
     "v=2: none of 1f1b, gpipe runs with v = 2, so it would change nothing"),
    (lambda: pipesim.compare("1f1b", 4, 8, group_size=4),
     "group_size=4: none of 1f1b runs microbatches in groups"),
    (lambda: pipesim.compare("1f1b,zb-h1", 4, 8, overlap_p2p_communication=False),
     "overlap_p2p_communication=False: none of 1f1b, zb-h1 is interleaved-1f1b"),
    (lambda: pipesim.compare(["1f1b", ""], 4, 8), "schedules: expected a non-empty string"),
    (lambda: pipesim.compare("1f1b,", 4, 8),
     "schedules: expected names separated by ',', got '1f1b,'"),
    (lambda: pipesim.compare(["\udcff"], 4, 8), "schedules: unknown schedule '\\udcff'"),
    (lambda: pipesim.simulate("1f1b", 4, 8, cluster="dgx-h100", message_bytes=1e6,
                              model="llama2-7b", gpu="h100-sxm", mb=1),
     "message_bytes and grad_bytes give the bytes of a run without a model; with model,"),
    (lambda: pipesim.analyze("interleaved-1f1b", 4, 8, overlap_p2p_communication=False, a2a=1),
     "overlap_p2p_communication=False runs each step's F and backward back to back: a2a and "
     "overlap_fb do not apply"),
    (lambda: pipesim.analyze("1f1b", 4, 8, overlap_grad_reduce=False),
     "overlap_grad_reduce=False needs data or context parallelism (dp=D or cp=C above 1)"),
])
def test_messages_name_python_parameters_not_command_line_flags(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert message in str(e.value)
    assert " --" not in str(e.value) and " -v " not in str(e.value)


def test_file_names_and_quoted_text_keep_their_flags(tmp_path):
    # A path or a key quoted from a file is the user's text: "/x/--comm.json" once read
    # "/x/comm.json", another file's name, and "unknown key '--dp'" read "'dp'".
    missing = tmp_path / "--comm.json"
    with pytest.raises(ValueError) as e:
        pipesim.analyze("1f1b", 4, 8, model="llama2-7b", gpu="h100-sxm", mb=1,
                        calibration=str(missing))
    assert str(e.value).startswith(f"calibration file {missing}: cannot read")
    model = tmp_path / "-p 4.json"
    model.write_text('{"base": "llama2-7b", "--dp": 2}')
    with pytest.raises(ValueError) as e:
        pipesim.analyze("1f1b", 4, 8, model=str(model), gpu="h100-sxm", mb=1)
    assert str(e.value).startswith(str(model) + ":1:23: unknown key '--dp'")
    # Flags outside quotes still read as parameters, -t as tp.
    with pytest.raises(ValueError) as e:
        pipesim.analyze("1f1b", 4, 8, model="llama2-7b", gpu="h100-sxm", mb=1,
                        tp_comm_overlap=True)
    assert str(e.value) == ("tp_comm_overlap overlaps tensor-parallel collectives: give tp=T "
                            "with T > 1")


def test_names_read_from_files_keep_their_flags(tmp_path):
    # A model named "big -t 2" read "big tp=2" in the message, a schedule "a --no-sp b" read
    # "a sequence_parallel=False b" in the warning Python gave.
    model = tmp_path / "m.json"
    model.write_text(json.dumps(dict(pipesim.models()["llama3-8b"], name="big -t 2", layers=3)))
    with pytest.raises(ValueError) as e:
        pipesim.analyze("1f1b", 4, 8, model=str(model), gpu="h100-sxm", mb=1)
    assert str(e.value).startswith("cannot split big -t 2's 3 layers into 4 pipeline stages")
    schedule = json.loads(pipesim.analyze("1f1b", 2, 4).to_schedule().to_json())
    schedule["name"] = "a --no-sp b"
    given = tmp_path / "s.json"
    given.write_text(json.dumps(schedule))
    with pytest.warns(pipesim.PipesimWarning) as caught:
        r = pipesim.analyze(pipesim.Schedule.load(str(given)), overlap_fb=0.5)
    assert "which a --no-sp b has none of" in str(caught[0].message)
    assert r.warnings == [str(caught[0].message)]


def test_simulate_names_the_replay_only_parameter_it_was_given():
    with pytest.raises(ValueError) as e:
        pipesim.simulate("dualpipe", 4, 8, cluster="dgx-h100", costs=(.01, .01, .01), a2a=0.005)
    assert str(e.value).startswith("a2a is an option of the analytic replay (analyze, compare)")


def test_svg_refuses_a_width_it_cannot_draw():
    r = pipesim.analyze("1f1b", 4, 8)
    with pytest.raises(ValueError, match="width: must be ≤ 100000, got 3e"):
        r.svg(width=3e9)  # it drew a picture -2147483648 pt wide
    # Below a point every op was drawn on one spot.
    for tiny in (1e-300, 0.5):
        with pytest.raises(ValueError, match="width: must be 0 .chosen from the ops. or at least "
                           "1 point, got " + f"{tiny:g}"):
            r.svg(width=tiny)
    assert 'width="' in r.svg(width=1) and r.svg(width=0) == r.svg()


def test_descriptions_and_picture_limits_speak_python():
    for description in pipesim.schedules().values():
        assert "--" not in description, description
    with pytest.raises(ValueError) as e:
        pipesim.analyze("1f1b", 512, 512).svg()
    assert str(e.value).endswith("(use fewer microbatches, or the ops themselves: "
                                 "Result.timeline() or Result.arrays())")


def test_the_run_fits_in_the_memory_its_check_allows():
    # The result once copied the run's timeline and schedule: a run the memory check let
    # through then needed about 1.6 times what it was allowed, and died with std::bad_alloc.
    # A child measures the check's figure for the run with every op recorded (made when a
    # method first needs them: refused under a tight limit), then runs under that figure and
    # a quarter more, less than a second copy would need.
    program = """
import re, resource, sys
import pipesim
def limit(extra):
    with open("/proc/self/status") as f:
        size = int(re.search(r"VmSize:\\s+(\\d+) kB", f.read()).group(1)) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + extra, resource.RLIM_INFINITY))
if sys.argv[1] == "measure":
    result = pipesim.analyze("1f1b", 1024, 2048)
    limit(64 << 20)
    try:
        result.memory_curve(0)
    except ValueError as e:
        print(re.search(r"needs about ([0-9.]+) GB", str(e)).group(1))
else:
    limit(int(float(sys.argv[1]) * 1e9 * 1.25) + (64 << 20))
    result = pipesim.analyze("1f1b", 1024, 2048)
    result.memory_curve(0)
    print(result.ops)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = lambda arg: subprocess.run([sys.executable, "-c", program, arg], capture_output=True,
                                     text=True, timeout=120, env=env)
    measured = run("measure")
    assert measured.returncode == 0, measured.stderr
    needed_gb = float(measured.stdout)
    assert 0.3 < needed_gb < 1.0  # about 133 bytes for each of the 4,194,304 ops
    done = run(str(needed_gb))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(2 * 1024 * 2048)


def test_flags_that_change_nothing_are_refused():
    # Accepted and ignored: sequence parallelism off at tp=1, and the gradient reduction moved
    # in a simulation that has no gradients (no model, no grad_bytes).
    with pytest.raises(ValueError, match="sequence_parallel=False turns off"):
        pipesim.analyze("1f1b", 4, 8, model="llama2-7b", gpu="h100-sxm", mb=1,
                        sequence_parallel=False)
    with pytest.raises(ValueError, match="overlap_grad_reduce=False moves the gradient "
                                         "reduction: give grad_bytes=N"):
        pipesim.simulate("1f1b", 4, 8, cluster="dgx-h100:2", costs=(0.01, 0.02, 0.01), dp=2,
                         overlap_grad_reduce=False)
    r = pipesim.simulate("1f1b", 4, 8, cluster="dgx-h100:2", costs=(0.01, 0.02, 0.01), dp=2,
                         grad_bytes=1e8, overlap_grad_reduce=False)
    assert r.grad_reduce_time > 0


def test_analyze_keeps_no_op_records_until_a_method_needs_them():
    # analyze() times the schedule as the command line does (no record per op), so a run
    # whose figures fit where its records would not gives its figures; the records, made by
    # the first method that needs them, are refused then with the memory check's message.
    # A child allows 150 MB more than it holds: 1F1B at p = 1,024, m = 2,048 (4,194,304 ops)
    # needs about 0.55 GB with its records, about 0.1 GB without.
    program = """
import re, resource
import pipesim
with open("/proc/self/status") as f:
    size = int(re.search(r"VmSize:\\s+(\\d+) kB", f.read()).group(1)) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + (150 << 20), resource.RLIM_INFINITY))
r = pipesim.analyze("1f1b", 1024, 2048)
print(r.ops, r.makespan)
try:
    r.memory_curve(0)
    print("recorded")
except ValueError as e:
    print(e)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    figures, refusal = done.stdout.splitlines()
    # 1F1B's makespan with unit costs F = 1 and BW = 2: 3m + 3(p - 1).
    assert figures == f"{2 * 1024 * 2048} {3 * 2048 + 3 * 1023:.1f}"
    assert re.fullmatch(r"1f1b with p·v·m = 1024·1·2048 \(4194304 ops\) needs about 0\.[0-9]+ GB "
                        r"of memory, more than .*", refusal), refusal


def test_a_run_that_read_a_model_file_keeps_its_records_when_the_file_goes(tmp_path):
    # Op records otherwise made later would read the file again: gone, or changed, by then.
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    text = open(os.path.join(root, "experiments", "fidelity", "models", "mlm-h100-1.7b.json")).read()
    model = tmp_path / "m.json"
    model.write_text(text)
    r = pipesim.analyze("1f1b", 4, 8, model=str(model), gpu="h100-sxm", mb=1)
    model.unlink()
    starts = r.arrays()["start"]
    assert len(starts) == r.ops == 4 * 8 * 2
    assert max(r.arrays()["end"]) == pytest.approx(r.makespan)


def test_threads_reading_one_result_at_once_get_the_same_arrays():
    # In a fresh interpreter, so that NumPy's C API is looked up by these threads: with
    # pybind11 2.10 that look-up, a static initialized under the GIL, hung them all. The
    # threads also make the result's op records (left for the first method that needs them)
    # at the same time.
    program = """
import threading
import pipesim
r = pipesim.analyze("zb-v", 8, 64, costs=(1, 1.5, 0.7), comm=0.1)
results = [None] * 4
def read(i):
    results[i] = r.arrays()["start"].tolist(), r.transfers()["end"].tolist()
threads = [threading.Thread(target=read, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
fresh = pipesim.analyze("zb-v", 8, 64, costs=(1, 1.5, 0.7), comm=0.1)
print(all(x == results[0] for x in results), fresh.arrays()["start"].tolist() == results[0][0],
      len(results[0][0]) == r.ops, len(results[0][1]) > 0, max(results[0][1]) <= r.makespan)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True"] * 5


def test_the_ops_of_a_run_too_large_for_the_memory_left_are_refused():
    # timeline() of 3.8 million ops under a 1 GB limit aborted the interpreter ("cannot
    # allocate memory for thread-local data") or raised RuntimeError halfway. A child runs
    # zb-h1 at p = 64, m = 2,000 (384,000 ops), then allows 48 MB more: too little for the Op
    # list (some 300 bytes an op), enough for the arrays (29 bytes an op, twice).
    program = """
import re, resource
import numpy  # its libraries mapped before the limit is set
import pipesim
r = pipesim.analyze("zb-h1", 64, 2000)
r.memory_curve(0)  # the ops recorded (made when a method first needs them)
with open("/proc/self/status") as f:
    size = int(re.search(r"VmSize:\\s+(\\d+) kB", f.read()).group(1)) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + (48 << 20), resource.RLIM_INFINITY))
try:
    r.timeline()
    print("built")
except ValueError as e:
    print(e)
print(len(r.arrays()["start"]))
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    refusal, arrays = done.stdout.splitlines()
    assert re.fullmatch(r"the timeline's Op list of 384000 items needs about 0\.1[0-9] GB of "
                        r"memory, more than the 0\.0[0-9] GB left under this process's "
                        r"address-space limit \(ulimit -v\)", refusal), refusal
    assert arrays == "384000"


def test_ctrl_c_stops_a_long_analysis_between_its_phases():
    # While C++ runs, Python's handler only notes a SIGINT; analyze checks for it as each
    # phase starts (generation, the 1F1B baseline, the replay) and raises KeyboardInterrupt.
    import signal
    import threading
    timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
    result = None
    timer.start()
    try:
        result = pipesim.analyze("zb-1p", 1024, 1024)  # a second or two of work
    except KeyboardInterrupt:
        pass
    timer.join()
    assert result is None  # interrupted inside the call, not after it returned
    assert pipesim.analyze("1f1b", 4, 8).makespan == 33  # and the module goes on working


def test_files_and_names_that_are_not_utf8_get_clear_messages(tmp_path):
    # A file's bytes that are not text: the message escapes them (it came out empty).
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ValueError, match=r"binary.json:1:1: invalid JSON: .*last read: '\\xff'"):
        pipesim.analyze("1f1b", 4, 8, model=binary, gpu="h100-sxm", mb=1)
    # A file name that is not UTF-8 opens, as open() opens it (it raised pybind11's cast error).
    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/\xff.json")
    schedule = pipesim.analyze("1f1b", 4, 8).to_schedule()
    schedule.save(name)
    assert os.path.exists(os.fsencode(str(tmp_path)) + b"/\xff.json")
    assert pipesim.Schedule.load(name).device_ops == schedule.device_ops
    with pytest.raises(ValueError, match=r"\\xff\.json:2:13: format: expected \"pipesim-model\", got "):
        pipesim.analyze("1f1b", 4, 8, model=name, gpu="h100-sxm", mb=1)
    with pytest.raises(ValueError, match=r"unknown schedule 'x\\xff'"):
        pipesim.analyze(os.fsdecode(b"x\xff"), 4, 8)
    with pytest.raises(ValueError, match="model: a NUL character cannot be in a name"):
        pipesim.analyze("1f1b", 4, 8, model="a\0b", gpu="h100-sxm", mb=1)



def test_files_that_cannot_be_read_are_named_by_their_parameter(tmp_path):
    # "4: cannot read" did not say which argument 4 was.
    with pytest.raises(ValueError, match="^calibration file 4: cannot read: No such file"):
        pipesim.analyze("1f1b", 4, 8, model="llama2-7b", gpu="h100-sxm", mb=1, calibration="4")
    missing = tmp_path / "c.json"
    with pytest.raises(ValueError, match=f"^cluster file {missing}: cannot read: No such file"):
        pipesim.simulate("1f1b", 4, 8, cluster=str(missing), costs=(1, 1, 1))
    missing.write_text("{")
    with pytest.raises(ValueError, match=f"^cluster file {missing}:1:2: invalid JSON"):
        pipesim.simulate("1f1b", 4, 8, cluster=str(missing), costs=(1, 1, 1))
    # A preset's name is no file: its message stays.
    with pytest.raises(ValueError, match="^unknown cluster 'nonesuch'"):
        pipesim.simulate("1f1b", 4, 8, cluster="nonesuch", costs=(1, 1, 1))


@pytest.mark.parametrize("call", [
    lambda path: pipesim.analyze("1f1b", 4, 8, html=path + ".html"),
    lambda path: pipesim.analyze("1f1b", 4, 8).to_schedule().save(path + ".json"),
    lambda path: pipesim.Schedule.load(path + ".json"),
])
def test_a_nul_in_a_file_name_is_refused_not_cut_short(tmp_path, call):
    # The file system saw the name up to its NUL: "w\0.html" wrote "w", and a file "z"
    # was loaded for "z\0.json".
    (tmp_path / "z").write_text(pipesim.analyze("1f1b", 2, 2).to_schedule().to_json())
    with pytest.raises(ValueError, match="a NUL character cannot be in a file name"):
        call(str(tmp_path / "z\0"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["z"]


@pytest.mark.parametrize("value, error, message", [
    (None, TypeError, "dp: expected an integer, got None"),
    ("4", TypeError, "dp: expected an integer, got '4'"),
    (0, ValueError, "dp: must be in 1..65536, got 0"),
])
def test_dp_without_a_model_is_checked_as_a_number_first(value, error, message):
    # Told first to add a model, the user then learnt that the value was no integer.
    with pytest.raises(error, match=f"^{message}$"):
        pipesim.analyze("1f1b", 4, 8, dp=value)


def test_search_without_a_model_is_told_what_tp_needs():
    # It offered dp and simulate, which search has neither of.
    with pytest.raises(ValueError, match=r"^tp sets the model's layout: give model=NAME, "
                                         r"gpu=NAME and mb=B$"):
        pipesim.search(4, 8, 4, tp=2)
    with pytest.raises(TypeError, match="^tp: expected an integer, got None$"):
        pipesim.search(4, 8, 4, tp=None)


@pytest.mark.parametrize("call, message", [
    # A dict gave its keys: costs={1: 2} was the cost triple (1,), refused as one number.
    (lambda: pipesim.analyze("1f1b", 4, 8, costs={1: 2}), "costs: expected (F, B, W)"),
    # A set's order made an arbitrary schedule the one the others are measured against.
    (lambda: pipesim.compare({"1f1b", "zb-h1"}, 4, 8), "schedules: expected names"),
    (lambda: pipesim.compare({"1f1b": 1}, 4, 8), "schedules: expected names"),
])
def test_sets_and_mappings_are_no_sequences(call, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        call()


def test_an_empty_file_name_is_named_as_such():
    # It read "html : the report is an HTML page ...".
    with pytest.raises(ValueError, match="^html: expected a file name, got ''$"):
        pipesim.analyze("1f1b", 4, 8, html="")
    with pytest.raises(ValueError, match="^path: expected a file name, got ''$"):
        pipesim.Schedule.load("")


def test_flags_inside_a_file_name_stay_as_written(tmp_path):
    # "exp -p 4/model.json" read "exp p=4/model.json", a file that does not exist.
    folder = tmp_path / "exp -p 4"
    folder.mkdir()
    (folder / "model.json").write_text('{"layers": "x"}')
    with pytest.raises(ValueError) as e:
        pipesim.analyze("1f1b", 2, 4, model=str(folder / "model.json"), gpu="h100-sxm", mb=1)
    assert str(e.value).startswith(f"{folder}/model.json:1:12: layers: expected an integer")
    page = tmp_path / "no folder" / "run --comm 1" / "r.html"
    with pytest.raises(ValueError, match=re.escape(f"cannot write {page}: No such file")):
        pipesim.analyze("1f1b", 2, 4, html=str(page))
    # The same flag outside the file name still reads as the parameter.
    with pytest.raises(ValueError, match="^p: must be in 1..4096, got 0$"):
        pipesim.analyze("1f1b", 0, 4, model=str(folder / "model.json"), gpu="h100-sxm", mb=1)


@pytest.mark.parametrize("call, message", [
    (lambda: pipesim.analyze("\ud800", 2, 4), "schedule: not valid text"),
    (lambda: pipesim.analyze("1f1b", 2, 4, model="\ud800", gpu="h100-sxm", mb=1),
     "model: not valid text"),
    (lambda: pipesim.compare(["1f1b", "\ud800"], 2, 4), "schedules: not valid text"),
    (lambda: pipesim.analyze("1f1b", 2, 4, html="\ud800.html"), "html: not a valid file name"),
    (lambda: pipesim.Schedule.load("\ud800.json"), "path: not a valid file name"),
])
def test_a_lone_surrogate_is_refused_by_its_parameter(call, message):
    # A surrogate that escapes no byte leaked Python's UnicodeEncodeError, naming no parameter.
    with pytest.raises(ValueError, match="^" + re.escape(message) + r" \(a lone surrogate in "):
        call()


def test_compare_reads_an_iterator_of_names_once():
    # The type check used the generator up, and the comparison then found no names.
    names = ["1f1b", "zb-v"]
    from_generator = pipesim.compare((name for name in names), 4, 8)
    assert from_generator.to_dict() == pipesim.compare(names, 4, 8).to_dict()
    with pytest.raises(ValueError, match="^schedules: '1f1b' is listed twice$"):
        pipesim.compare(iter(["1f1b", "zb-v", "1f1b"]), 4, 8)


def test_a_zero_dimensional_array_is_no_sequence():
    numpy = pytest.importorskip("numpy")
    # "iteration over a 0-d array" named no parameter.
    with pytest.raises(TypeError, match=re.escape("costs: expected (F, B, W)")):
        pipesim.analyze("1f1b", 2, 4, costs=numpy.array(1.0))
    with pytest.raises(TypeError, match="^schedules: expected names"):
        pipesim.compare(numpy.array("1f1b"), 2, 4)


def test_kernel_choices_beside_one_efficiency_are_refused_in_python_words():
    with pytest.raises(ValueError, match=r"^persist_layer_norm=False chooses kernels of the "
                                         r"operator-level model, which efficiency replaces"):
        pipesim.analyze("1f1b", 4, 8, model="zb-1.5b", gpu="a100-80gb", mb=1, efficiency=0.5,
                        persist_layer_norm=False)


def test_warnings_name_a_value_that_is_a_name_as_a_python_keyword():
    # "--recompute full" read "recompute full", "--gpu a100-80gb" "gpu a100-80gb".
    with pytest.warns(pipesim.PipesimWarning):
        r = pipesim.analyze("zb-h1", 4, 8, model="llama2-7b", gpu="h100-sxm", mb=1,
                            recompute="full")
    assert r.warnings[0].startswith('with recompute="full" each B of zb-h1 re-creates')
    assert r.to_dict()["warnings"][0].startswith("with --recompute full each B")
    with pytest.warns(pipesim.PipesimWarning):
        r = pipesim.simulate("1f1b", 4, 8, cluster="dgx-a100", model="llama2-7b",
                             gpu="h100-sxm", mb=1)
    assert r.warnings[0].endswith('; gpu="a100-80gb" gives them their own rooflines')
    # A word after a flag that is no value of its parameter is the sentence's.
    from pipesim import _spec
    assert _spec.python_words("pass --gpu to choose") == "pass gpu to choose"
    assert _spec.python_words("--nccl-algo tree is slow") == 'nccl_algo="tree" is slow'


def test_ctrl_c_stops_a_search_inside_a_long_candidate():
    # The V planners report their layouts and orders as they place them, and search checks
    # for Ctrl-C there too, not only between candidates: interrupted while the "v-shape
    # planned" candidate runs (seconds at p = 512, m = 1), no later candidate starts.
    import signal
    import threading
    labels = []
    timers = []

    def progress(done, total, label):
        labels.append(label)
        if label.startswith("v-shape planned"):
            timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
            timers.append(timer)
            timer.start()

    result = None
    try:
        result = pipesim.search(512, 1, 512, progress=progress)
    except KeyboardInterrupt:
        pass
    for timer in timers:
        timer.join()
    assert result is None
    assert labels and labels[-1].startswith("v-shape planned"), labels[-3:]
    assert pipesim.analyze("1f1b", 4, 8).makespan == 33


@pytest.mark.parametrize("efficiency, message", [
    # 1e-300 passed the check and timed the layers beyond any sensible time (an efficiency
    # of 1e-308 gave inf and NaN on the command line).
    (1e-300, r"^efficiency: must be ≥ 1e-06, got 1e-300$"),
    (0.0, r"^efficiency: must be ≥ 1e-06, got 0$"),
    (1.5, r"^efficiency: must be ≤ 1, got 1\.5$"),
])
def test_an_efficiency_below_any_gpus_is_refused(efficiency, message):
    with pytest.raises(ValueError, match=message):
        pipesim.analyze("1f1b", 4, 8, model="llama2-7b", gpu="h100-sxm", mb=1,
                        efficiency=efficiency)
    run = pipesim.analyze("1f1b", 4, 8, model="llama2-7b", gpu="h100-sxm", mb=1, efficiency=1e-6)
    assert math.isfinite(run.iteration_time)


def test_result_classes_cannot_be_made_directly():
    # Made directly they failed inside: Result(5) with AttributeError ('int' object has no
    # attribute 'json'), Comparison({}, []) and SearchResult({}, None) with KeyError.
    for make, comes_from in ((lambda: pipesim.Result(5), "pipesim.analyze and pipesim.simulate"),
                             (lambda: pipesim.Comparison({}, []), "pipesim.compare"),
                             (lambda: pipesim.SearchResult({}, None), "pipesim.search")):
        with pytest.raises(TypeError, match="objects cannot be made directly; they come from "
                           + re.escape(comes_from)):
            make()
    # What the functions return works as before.
    assert pipesim.compare("1f1b,zb-h1", 4, 8).column("schedule") == ["1f1b", "zb-h1"]
    assert pipesim.search(4, 8, mem_limit=4).best_schedule is not None


def test_decimal_numbers_are_numbers():
    # Decimal('1.5') was "expected a number", while Fraction was taken.
    assert (pipesim.analyze("zb-h1", 4, 8, costs=(decimal.Decimal("1.5"), 1, 1)).makespan
            == pipesim.analyze("zb-h1", 4, 8, costs=(1.5, 1, 1)).makespan)
