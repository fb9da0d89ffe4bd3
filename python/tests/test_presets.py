"""models(), gpus() and clusters(): the presets `pipesim list` prints, each model and GPU as
the fields of its file format."""

import json
import os
import shutil
import subprocess

import pytest

import pipesim


def _listed(heading):
    """The names `pipesim list` prints under the heading that starts with `heading`."""
    program = os.environ.get("PIPESIM_CLI") or shutil.which("pipesim")
    if not program or not os.path.exists(program):
        pytest.skip("no pipesim program: set PIPESIM_CLI to build/cli/pipesim")
    text = subprocess.run([program, "list"], capture_output=True, text=True, check=True).stdout
    section = text.split("\n" + heading, 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in section.splitlines()[1:] if line.startswith("  ")]


def test_the_presets_are_those_the_command_line_lists():
    assert list(pipesim.models()) == _listed("models")
    assert list(pipesim.gpus()) == _listed("GPUs")
    assert list(pipesim.clusters()) == _listed("clusters")
    assert all(isinstance(d, str) and d for d in pipesim.clusters().values())


@pytest.mark.filterwarnings("ignore::pipesim.PipesimWarning")  # the large ones on 2 × 8 GPUs
@pytest.mark.parametrize("name", list(pipesim.models()))
def test_a_models_fields_written_out_describe_the_same_model(tmp_path, name):
    # Through the model file's parser: the same shape gives the same run, to the byte.
    path = tmp_path / "model.json"
    path.write_text(json.dumps(dict(pipesim.models()[name], name="mine")))
    common = dict(gpu="h100-sxm", mb=1, tp=8)
    preset = pipesim.analyze("1f1b", 2, 4, model=name, **common)
    from_file = pipesim.analyze("1f1b", 2, 4, model=str(path), **common)
    described = from_file.model
    assert described.pop("name") == "mine"
    assert described == {k: v for k, v in preset.model.items() if k != "name"}
    for field in ("iteration_time", "makespan", "memory_bytes"):
        assert getattr(from_file, field) == getattr(preset, field), field


@pytest.mark.parametrize("name", list(pipesim.gpus()))
def test_a_gpus_fields_written_out_describe_the_same_gpu(tmp_path, name):
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps(dict(pipesim.gpus()[name], name="mine")))
    common = dict(model="llama3-8b", mb=1, tp=2)
    preset = pipesim.analyze("1f1b", 2, 4, gpu=name, **common)
    from_file = pipesim.analyze("1f1b", 2, 4, gpu=str(path), **common)
    assert from_file.model["gpu"] == "mine"
    for field in ("iteration_time", "makespan", "memory_bytes", "mfu"):
        assert getattr(from_file, field) == getattr(preset, field), field


def test_the_fields_are_copies():
    pipesim.models()["llama3-8b"]["layers"] = 1
    assert pipesim.models()["llama3-8b"]["layers"] == 32
