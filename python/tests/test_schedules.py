"""Schedule.load/save: pipesim schedule JSON and PyTorch pipelining CSV round trips."""

import copy
import pickle

import pytest

import pipesim


@pytest.mark.parametrize("name", ["1f1b", "zb-h1", "interleaved-1f1b", "zb-v", "dualpipe"])
def test_json_round_trip_gives_an_equal_schedule(tmp_path, name):
    s = pipesim.analyze(schedule=name, p=4, m=8).to_schedule()
    path = tmp_path / "s.json"
    s.save(str(path))
    back = pipesim.Schedule.load(str(path))
    assert back == s
    assert back.device_ops == s.device_ops and back.stage_device == s.stage_device


@pytest.mark.parametrize("name", ["1f1b", "zb-h1", "interleaved-1f1b", "zb-v"])
def test_csv_round_trip_keeps_every_devices_op_order(tmp_path, name):
    s = pipesim.analyze(schedule=name, p=4, m=8).to_schedule()
    path = tmp_path / "s.csv"
    s.save(str(path))
    back = pipesim.Schedule.load(str(path))
    assert (back.devices, back.microbatches, back.chunks) == (s.devices, s.microbatches, s.chunks)
    assert back.device_ops == s.device_ops
    # The same schedule: the same replay.
    assert pipesim.analyze(back).makespan == pipesim.analyze(s).makespan


def test_schedule_fields_pickling_and_json_text():
    s = pipesim.analyze(schedule="1f1b", p=2, m=2).to_schedule()
    assert (s.name, s.devices, s.microbatches, s.chunks, s.op_count) == ("1f1b", 2, 2, 1, 8)
    assert s.device_ops[0][0] == ("F", 0, 0)
    assert pickle.loads(pickle.dumps(s)) == s
    assert pipesim.Schedule.from_json(s.to_json()) == s
    assert repr(s) == "<pipesim.Schedule 1f1b p=2 m=2 v=1: 8 ops>"


def test_bad_schedule_files_raise_value_error_naming_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "pipesim-schedule", "version": 1, "devices": 0}')
    with pytest.raises(ValueError, match="bad.json:1:"):
        pipesim.Schedule.load(str(bad))
    with pytest.raises(ValueError):
        pipesim.Schedule.load(str(tmp_path / "missing.json"))
    with pytest.raises(ValueError, match="extension|\\.txt"):
        pipesim.analyze(schedule="1f1b", p=2, m=2).to_schedule().save(str(tmp_path / "s.txt"))


def test_schedules_cannot_be_made_empty_and_copy_as_their_json():
    # An object from __new__ alone had no C++ value behind it: using it crashed the interpreter.
    with pytest.raises(TypeError, match="Schedule objects cannot be made directly"):
        pipesim.Schedule.__new__(pipesim.Schedule)
    with pytest.raises(TypeError, match="Schedule objects cannot be made directly"):
        pipesim.Schedule()
    with pytest.raises(TypeError, match="Run objects cannot be made directly"):
        pipesim._pipesim.Run.__new__(pipesim._pipesim.Run)
    s = pipesim.analyze(schedule="zb-v", p=4, m=8).to_schedule()
    for other in (copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s, protocol=2))):
        assert other == s and other is not s
        assert other.device_ops == s.device_ops and other.name == "zb-v"


def test_schedules_load_and_save_paths_and_hash_like_their_equality(tmp_path):
    s = pipesim.analyze(schedule="zb-h1", p=4, m=8).to_schedule()
    s.save(tmp_path / "s.json")  # a pathlib.Path, as open() takes
    loaded = pipesim.Schedule.load(tmp_path / "s.json")
    assert loaded == s and hash(loaded) == hash(s)
    assert len({s, loaded, pickle.loads(pickle.dumps(s))}) == 1
    other = pipesim.analyze(schedule="1f1b", p=4, m=8).to_schedule()
    assert len({s, other}) == 2
    # DualPipe with no F&B pair at m = p (its JSON leaves the empty pair lists out).
    dual = pipesim.analyze(schedule="dualpipe", p=8, m=8).to_schedule()
    for back in (pipesim.Schedule.from_json(dual.to_json()), pickle.loads(pickle.dumps(dual))):
        assert back == dual and len({dual, back}) == 1
    with pytest.raises(TypeError, match="path: expected a str or os.PathLike, got None"):
        pipesim.Schedule.load(None)
    with pytest.raises(TypeError, match="path: expected a str or os.PathLike, got 3"):
        s.save(3)
    with pytest.raises(TypeError, match="text: expected a str, got None"):
        pipesim.Schedule.from_json(None)


def test_saving_pairs_as_csv_warns_that_they_are_not_kept(tmp_path):
    s = pipesim.analyze(schedule="dualpipe-v", p=4, m=8).to_schedule()
    with pytest.warns(pipesim.PipesimWarning, match="no F&B pairs .*: dualpipe-v's 25") as w:
        s.save(tmp_path / "dv.csv")
    # Shown at the line that saved (it was "sys:1", the frame above the caller's).
    assert w[0].filename == __file__
    back = pipesim.Schedule.load(tmp_path / "dv.csv")
    assert back.device_ops == s.device_ops  # the ops are kept, their pairing is not
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.save(tmp_path / "dv.json")
        assert pipesim.Schedule.load(tmp_path / "dv.json") == s


def test_schedule_members_say_what_they_are():
    # help(pipesim.Schedule) is what a notebook user reads: the class and every public
    # member carry their own text (pybind11 gives a bare signature otherwise).
    assert "device's order of passes" in pipesim.Schedule.__doc__
    for name in ("name", "devices", "microbatches", "chunks", "stage_device", "device_ops",
                 "op_count", "to_json", "from_json", "load", "save"):
        doc = getattr(pipesim.Schedule, name).__doc__ or ""
        # Methods' docs start with their signature; the text follows it.
        text = doc.split("\n\n", 1)[-1] if doc.startswith(name + "(") else doc
        assert len(text.strip()) > 10, name
