"""Bad input raises ValueError (or TypeError for a value of the wrong type) with the command
line's one-line message, never a crash."""

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
