"""pipesim.simulate: the SimGrid engine, each run in its own process."""

import pytest

import pipesim

COSTS = (0.001, 0.002, 0.001)  # seconds


def test_simulate_matches_the_command_line(cli):
    r = pipesim.simulate(schedule="1f1b", p=4, m=8, costs=COSTS, cluster="dgx-h100:1")
    expected = cli("simulate", "-s", "1f1b", "-p", 4, "-m", 8, "--costs", "0.001,0.002,0.001",
                   "--cluster", "dgx-h100:1", "--json")
    assert r.to_dict() == expected
    assert r.engine == "simgrid" and r.time_unit == "s"


def test_several_simulations_in_one_process_with_data_parallel_replicas():
    one = pipesim.simulate(schedule="zb-h1", p=4, m=8, costs=COSTS, cluster="dgx-h100:1",
                           lat_scale=0)
    two = pipesim.simulate(schedule="zb-h1", p=4, m=8, costs=COSTS, cluster="dgx-h100:4", dp=2,
                           grad_bytes=1e9)
    assert two.dp == 2 and two.gpus == 8
    # The pipeline alone is the same; the gradient all-reduce only adds to the iteration.
    assert two.iteration_time >= one.iteration_time
    assert two.grad_reduce_time > 0
    # No latency (lat_scale=0) and no message sizes: SimGrid's makespan is the replay's.
    replay = pipesim.analyze(schedule="zb-h1", p=4, m=8, costs=COSTS)
    assert one.makespan == pytest.approx(replay.makespan, rel=1e-6)
    assert len(one.timeline()) == one.ops


def test_model_based_simulation():
    r = pipesim.simulate(schedule="1f1b", p=4, m=4, model="llama2-7b", gpu="h100-sxm", mb=1,
                         cluster="dgx-h100:1", tp=2)
    assert r.model["name"] == "llama2-7b" and r.tp == 2 and r.samples_per_second > 0


def test_simulate_errors_are_the_command_lines(cli):
    message = cli("simulate", "-s", "1f1b", "-p", 4, "-m", 4, "--cluster", "nope",
                  expect_error=True)
    with pytest.raises(ValueError) as e:
        pipesim.simulate(schedule="1f1b", p=4, m=4, cluster="nope")
    assert "pipesim simulate: " + str(e.value) + "\n" == message
    with pytest.raises(ValueError, match="latencies from the cluster"):
        pipesim.simulate(schedule="1f1b", p=4, m=4, cluster="dgx-h100", comm=0.1)
    with pytest.raises(ValueError, match="missing cluster"):
        pipesim.simulate(schedule="1f1b", p=4, m=4)


def test_nccl_algo_is_the_command_lines(cli):
    shape = dict(schedule="1f1b", p=2, m=4, costs=COSTS, cluster="dgx-h100:8", dp=16, tp=2,
                 grad_bytes=1e8, overlap_grad_reduce=False)
    for algo in ("ring", "tree"):
        r = pipesim.simulate(nccl_algo=algo, **shape)
        expected = cli("simulate", "-s", "1f1b", "-p", 2, "-m", 4, "--costs", "0.001,0.002,0.001",
                       "--cluster", "dgx-h100:8", "--dp", 16, "-t", 2, "--grad-bytes", "1e8",
                       "--no-overlap-grad-reduce", "--nccl-algo", algo, "--json")
        assert r.to_dict() == expected
        assert r.grad_reduce_algorithm == algo
    with pytest.raises(ValueError, match="nccl_algo: expected ring, tree or auto, got 'bogus'"):
        pipesim.simulate(nccl_algo="bogus", **shape)
    with pytest.raises(ValueError, match=r"^nccl_algo sets the gradient all-reduce's algorithm, "
                                         r"which needs data or context parallelism \(dp=D "):
        pipesim.simulate(nccl_algo="tree", **dict(shape, dp=1, grad_bytes=0.0,
                                                  overlap_grad_reduce=True))


def test_a_killed_session_leaves_no_simulation_running():
    # The simulation runs in a child process; with the Python process killed, the child was
    # left running on (reparented) until its run ended.
    import os
    import signal
    import subprocess
    import sys
    import time
    script = ('import pipesim\n'
              'pipesim.simulate("1f1b", 64, 16384, cluster="dgx-h100:8", costs=(1e-3, 2e-3, 1e-3))')
    parent = subprocess.Popen([sys.executable, "-c", script], env=os.environ.copy())

    def children():
        tasks = f"/proc/{parent.pid}/task"
        found = []
        for task in os.listdir(tasks):
            try:
                with open(f"{tasks}/{task}/children") as f:
                    found += [int(pid) for pid in f.read().split()]
            except FileNotFoundError:  # a thread that ended meanwhile
                pass
        return found

    try:
        deadline = time.monotonic() + 60
        while not children():
            assert parent.poll() is None, "the simulation ended before it could be watched"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        child = children()[0]
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()

    def running(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        return state not in ("Z", "X")  # a zombie has ended: it only waits to be reaped

    deadline = time.monotonic() + 10
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    stopped = not running(child)
    if not stopped:
        os.kill(child, signal.SIGKILL)
    assert stopped
