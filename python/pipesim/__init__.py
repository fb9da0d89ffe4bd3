"""pipesim: pipeline-parallel training schedules, simulated.

    >>> import pipesim
    >>> r = pipesim.analyze(schedule="zb-h1", p=8, m=32, costs=(1, 2, 1), comm=0.05)
    >>> r.bubble_rate, r.peak_activation_max

analyze() replays a schedule exactly (no network contention), simulate() runs it on the
SimGrid model of a GPU cluster, compare() runs several schedules on one pipeline, search()
finds the lowest-bubble schedule under an activation-memory cap. Results carry the fields of
the command line's --json output. Bad input raises ValueError with the command line's
message (the parameter named as in Python). See docs/python.md.
"""

import json as _json
import os as _os
import warnings as _warnings

from . import _pipesim
from ._results import (PASSES, TRANSFER_KINDS, Comparison, Op, Result, SearchResult)
from . import _spec

__all__ = ["analyze", "simulate", "compare", "search", "schedules", "models", "gpus", "clusters",
           "Schedule", "Result",
           "Comparison", "SearchResult", "Op", "PASSES", "TRANSFER_KINDS", "PipesimWarning"]

__version__ = _pipesim.__version__

#: A schedule: per device, the ordered ops it runs. Schedule.load(path) reads pipesim schedule
#: JSON (.json) or PyTorch pipelining CSV (.csv); schedule.save(path) writes either.
Schedule = _pipesim.Schedule


def _schedule_from_pickle(text):
    """A pickled or copied Schedule, rebuilt from its JSON (what Schedule.__reduce__ names)."""
    return Schedule.from_json(text, "pickle")


def _run_from_pickle(json_text, schedule_text, timeline_text):
    """A pickled or copied run, rebuilt from its texts (what Run.__reduce__ names)."""
    return _pipesim.run_from_texts(json_text, schedule_text, timeline_text)


class PipesimWarning(UserWarning):
    """A choice that runs but that deserves a look (the command line's "warning:" lines)."""


_PIPELINE_KEYS = ("v", "group_size", "costs", "comm", "mem_w_ratio", "dp", "tp",
                  "overlap_p2p_communication", "a2a", "overlap_fb") + \
    _spec.MODEL_KEYS
_ENGINE_DEFAULTS = {"cluster": None, "layout_order": None, "message_bytes": 0.0,
                    "grad_bytes": 0.0, "overlap_grad_reduce": True,
                    "overlap_param_gather": False, "post_validation": False, "bw_scale": 1.0,
                    "lat_scale": 1.0, "stragglers": None, "nccl_algo": None}


def _pipeline(function, schedule, p, m, options, layout_without_model=False, comparison=False):
    unknown = sorted(set(options) - set(_PIPELINE_KEYS))
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    o = {"v": None, "group_size": None, "costs": None, "comm": 0.0, "mem_w_ratio": None,
         "dp": 1, "tp": 1, "overlap_p2p_communication": True, "a2a": 0.0, "overlap_fb": 0.0}
    o.update({k: v for k, v in options.items() if k in o})
    model_args = dict(_spec.MODEL_DEFAULTS)
    model_args.update({k: v for k, v in options.items() if k in model_args})
    return _spec.pipeline_dict(schedule, p, m, o["v"], o["group_size"], o["costs"], o["comm"],
                               o["mem_w_ratio"], o["dp"], o["tp"],
                               o["overlap_p2p_communication"], model_args, layout_without_model,
                               o["a2a"], o["overlap_fb"], comparison)


def _core(function, *args, callers=()):
    """Calls the compiled core, its ValueError worded for Python; what the caller's own code
    raised (`callers`: the exceptions a search's progress function raised) passes as it is."""
    try:
        return function(*args)
    except ValueError as e:
        if type(e) is not ValueError or any(e is raised for raised in callers):
            raise
        raise ValueError(_spec.python_words(str(e), _spec.texts_in(args))) from None


def _call(function, arguments, defaults, html):
    """The call as the HTML report's Inputs give its command (only with `html`): `function`
    with the arguments given, those with a default in `defaults` where they differ from it."""
    if html is None:
        return ""

    def given(name, value):
        default = defaults.get(name)
        try:
            return not (value is default or bool(value == default))
        except (TypeError, ValueError):  # an array's ==
            return True
    return f"pipesim.{function}(" + ", ".join(
        f"{name}={value!r}" for name, value in arguments.items() if given(name, value)) + ")"


def _warn(messages, verbatim=(), worded=False):
    """Warns of each of `messages` at the caller's call; `worded`: already in Python's words
    (a Result's warnings), which a second rewording would change where a name reads like a
    flag."""
    for message in messages:
        _warnings.warn(message if worded else _spec.python_words(message, verbatim),
                       PipesimWarning, stacklevel=3)


def analyze(schedule=None, p=None, m=None, *, overlap_grad_reduce=True,
            overlap_param_gather=False, post_validation=False, html=None, **options):
    """Runs `schedule` (a registered name such as "zb-h1", or a Schedule) on p devices with m
    microbatches through the exact analytic replay and returns a Result.

    Options (as the command line's flags): v, group_size, costs=(F, B, W) of a full stage (or
    one triple per virtual stage), comm (latency between devices), mem_w_ratio, a2a and
    overlap_fb (dualpipe's all-to-all time and the share of it an F&B pair hides),
    overlap_p2p_communication (False: interleaved-1f1b exchanges once per step, as
    --no-overlap-p2p-communication); or a model:
    model, gpu, mb, seq, sequence_parallel, recompute, attention ("fused" or "unfused"),
    efficiency, calibration, dist_opt, first_stage_layers, last_stage_layers, zero (ZeRO stage
    1-3), cp (context-parallel degree), tp_comm_overlap, grad_dtype ("fp32", "bf16" or
    "fp16"), gradient_accumulation_fusion, persist_layer_norm,
    cross_entropy_loss_fusion, with dp and tp; overlap_grad_reduce
    (with dp or cp above 1: the gradient reduction during the last backward, else after the
    pipeline);
    overlap_param_gather (with dist_opt or zero 1-2: the parameter all-gather beside the first
    forward instead of after the reduce-scatter); post_validation (optimizer post-validation:
    iterations repeated without a pipeline-wide synchronization, the iteration time their
    period); html (a path ending in .html or .htm: the command line's --html report, its
    table, timeline, memory and inputs, written whole or not at all).
    """
    spec = _pipeline("analyze", schedule, p, m, options)
    _spec.check_grad_reduce(spec, _spec.flag("overlap_grad_reduce", overlap_grad_reduce))
    _spec.check_param_gather(spec, overlap_param_gather)
    call = _call("analyze", dict(schedule=schedule, p=p, m=m,
                                 overlap_grad_reduce=overlap_grad_reduce,
                                 overlap_param_gather=overlap_param_gather,
                                 post_validation=post_validation, **options),
                 dict(overlap_grad_reduce=True, overlap_param_gather=False,
                      post_validation=False), html)
    result = Result._make(_core(
        _pipesim.analyze, spec, _spec.flag("overlap_grad_reduce", overlap_grad_reduce),
        _spec.flag("overlap_param_gather", overlap_param_gather),
        _spec.flag("post_validation", post_validation), html, call), _spec.texts_in(spec, html))
    _warn(result.warnings, worded=True)
    return result


def simulate(schedule=None, p=None, m=None, *, cluster=None, layout_order=None,
             message_bytes=0.0, grad_bytes=0.0, overlap_grad_reduce=True,
             overlap_param_gather=False, post_validation=False, bw_scale=1.0, lat_scale=1.0,
             stragglers=None, nccl_algo=None, html=None, **options):
    """Runs `schedule` on the SimGrid model of a GPU cluster (`cluster`: a preset such as
    "dgx-h100", "dgx-h100:4" for 4 nodes, or a cluster JSON file) and returns a Result whose
    fields are those of `pipesim simulate --json`. Times are seconds: give costs in seconds or
    a model. dp and tp lay the pipeline out on the cluster; layout_order, message_bytes,
    grad_bytes, overlap_grad_reduce, overlap_param_gather, post_validation, bw_scale,
    lat_scale, stragglers ({gpu: factor}) and nccl_algo ("ring", "tree" or "auto"; None: the
    cluster's) as the command line's flags; html as analyze's. Each simulation runs in a child
    process (SimGrid runs one simulation per process).
    """
    if "comm" in options:
        raise ValueError("comm is the analytic replay's latency; simulate takes latencies "
                         "from the cluster (see lat_scale)")
    spec = _pipeline("simulate", schedule, p, m, options, layout_without_model=True)
    _spec.check_grad_reduce(spec, _spec.flag("overlap_grad_reduce", overlap_grad_reduce))
    _spec.check_param_gather(spec, overlap_param_gather)
    engine = _spec.engine_dict(cluster, layout_order, message_bytes, grad_bytes,
                               overlap_grad_reduce, bw_scale, lat_scale, stragglers, nccl_algo,
                               overlap_param_gather, post_validation)
    no_gradients = spec.get("model") is None and not engine["grad_bytes"] > 0
    if not engine["overlap_grad_reduce"] and no_gradients:
        raise ValueError("overlap_grad_reduce=False moves the gradient reduction: give "
                         "grad_bytes=N (or model=, gpu=, mb=); without them there is none")
    call = _call("simulate", dict(schedule=schedule, p=p, m=m, cluster=cluster,
                                  layout_order=layout_order, message_bytes=message_bytes,
                                  grad_bytes=grad_bytes, overlap_grad_reduce=overlap_grad_reduce,
                                  overlap_param_gather=overlap_param_gather,
                                  post_validation=post_validation, bw_scale=bw_scale,
                                  lat_scale=lat_scale, stragglers=stragglers,
                                  nccl_algo=nccl_algo, **options),
                 dict(message_bytes=0.0, grad_bytes=0.0, overlap_grad_reduce=True,
                      overlap_param_gather=False, post_validation=False, bw_scale=1.0,
                      lat_scale=1.0), html)
    result = Result._make(_core(_pipesim.simulate, spec, engine, html, call),
                    _spec.texts_in(spec, engine, html))
    _warn(result.warnings, worded=True)
    return result


def compare(schedules, p=None, m=None, *, cluster=None, post_validation=False, html=None,
            **options):
    """Runs each of `schedules` (registered names) on the same pipeline with the analytic
    replay, or with `cluster` (as simulate's) on its SimGrid model, each schedule in a child
    process, and returns a Comparison: one row per schedule with makespan (iteration_time with
    a model; period with post_validation), bubble_rate, efficiency, peak
    activation (peak_memory_bytes with a model), throughput (samples_per_second) and the
    speed-up over the first. Options as analyze's (on a cluster, dp and tp lay the pipeline
    out without a model too, and latencies come from the cluster); v and group_size apply to
    the schedules that take them. html (a path ending in .html or .htm) writes the command
    line's --html report: the table, every schedule's timeline and memory on one time scale,
    and the inputs."""
    if isinstance(schedules, str):
        given = [name.strip(" ") for name in schedules.split(",")]
        if "" in given:  # "1f1b," said only "expected a non-empty string, got ''"
            raise ValueError(f"schedules: expected names separated by ',', got {schedules!r}")
    else:
        # Read once: an iterator or a generator gives its names only once.
        given = _spec.sequence(schedules)
        if given is None:
            # A set or a dict too: its order, which makes the first the reference, is not the
            # caller's.
            raise TypeError("schedules: expected names, as a list or one comma-separated "
                            f"string, got {schedules!r}")
    names = [_spec.text("schedules", s) for s in given]
    for name in names:
        if isinstance(name, bytes):  # not UTF-8: no schedule's name
            raise ValueError(f"schedules: unknown schedule {_os.fsdecode(name)!r} (see "
                             "pipesim.schedules())")
    if not names:
        raise ValueError("schedules: give at least one schedule name")
    seen = set()
    for name in names:
        if name in seen:
            raise ValueError(f"schedules: '{name}' is listed twice")
        seen.add(name)
    engine = None
    if cluster is not None:
        if "comm" in options:
            raise ValueError("comm is the analytic replay's latency; on a cluster latencies come "
                             "from the cluster")
        engine = _spec.engine_dict(cluster, None, 0.0, 0.0, True, 1.0, 1.0, None,
                                   post_validation=post_validation)
    spec = _pipeline("compare", names[0], p, m, options,
                     layout_without_model=cluster is not None, comparison=True)
    call = _call("compare", dict(schedules=names, p=p, m=m, cluster=cluster,
                                 post_validation=post_validation, **options),
                 dict(post_validation=False), html)
    fields, messages = _core(_pipesim.compare, spec, names,
                             _spec.flag("post_validation", post_validation), engine, html, call)
    verbatim = _spec.texts_in(spec, engine, html)
    _warn(messages, verbatim)
    return Comparison._make(_json.loads(fields), [_spec.python_words(m, verbatim) for m in messages])


def search(p=None, m=None, mem_limit=None, *, costs=None, comm=0.0, mem_w_ratio=None, a2a=0.0,
           overlap_fb=0.0, post_validation=False, progress=None, **model_options):
    """The lowest-bubble schedule whose peak activation stays within `mem_limit` (full-stage
    microbatches per device; 1F1B needs p) among the registered schedules, V-shape building
    blocks and the automatic scheduler, each replayed with costs=(F, B, W), comm and
    mem_w_ratio (and a2a, overlap_fb as analyze's). Returns a SearchResult (fields of
    `pipesim search --json`, best_schedule).

    With a model (model=, gpu=, mb= and analyze's other model options, tp and cp among them)
    `mem_limit` caps each whole device instead: bytes, or a size such as "80GiB"; candidates
    are ranked by iteration time, as `pipesim search --model` ranks them, and the best one's
    warnings (devices over their GPU's memory) are issued as PipesimWarning.

    post_validation: every candidate (and 1F1B) is timed by its post-validation period.
    progress: None, or a function called as progress(done, total, label) before each
    candidate is built (and once with done == total and label "" at the end); what it raises
    ends the search. Ctrl-C stops a search between candidates."""
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected a function or None, got {progress!r}")
    if p is None:
        raise ValueError("missing p=P (number of pipeline devices)")
    if m is None:
        raise ValueError("missing m=M (number of microbatches)")
    if mem_limit is None:
        raise ValueError("missing mem_limit=X (activations per device)")
    unknown = sorted(set(model_options) - set(_spec.MODEL_DEFAULTS) - {"tp"})
    if unknown:
        raise TypeError(f"search() got an unexpected keyword argument {unknown[0]!r}")
    raised = []  # what progress raised: its own, not the core's, whatever its type

    def report(*args):
        try:
            return progress(*args)
        except BaseException as e:
            raised.append(e)
            raise

    on_progress = None if progress is None else report
    validation = _spec.flag("post_validation", post_validation)
    # A model option at its default (recompute="none", tp=1) asks for no model.
    defaults = dict(_spec.MODEL_DEFAULTS, tp=1)
    if any(_spec.is_set(value, defaults[key]) for key, value in model_options.items()):
        # tp alone: analyze's message would offer dp and simulate, which search has not.
        if "tp" in model_options and not any(_spec.is_set(value, defaults[key]) for key, value
                                             in model_options.items() if key != "tp"):
            _spec.integer("tp", model_options["tp"], 1, _spec.MAX_TP)
            raise ValueError("tp sets the model's layout: give model=NAME, gpu=NAME and mb=B")
        mem_limit = _spec.byte_size("mem_limit", mem_limit)
        # One data-parallel replica is planned: sharding needs context parallelism (as the
        # command line's search refuses --zero and --dist-opt without --cp).
        sharded = model_options.get("zero") or model_options.get("dist_opt")
        if sharded and (model_options.get("cp") or 1) < 2:
            flag = "dist_opt" if model_options.get("dist_opt") else f'zero={model_options["zero"]}'
            raise ValueError(f"{flag} shards over data- and context-parallel ranks, and search "
                             "plans one data-parallel replica: give cp=C above 1")
        # pipeline_dict refuses costs and mem_w_ratio beside a model, as analyze's does.
        spec = _pipeline("search", "1f1b", p, m,
                         dict(model_options, comm=comm, a2a=a2a, overlap_fb=overlap_fb,
                              costs=costs, mem_w_ratio=mem_w_ratio))
        fields, best, messages = _core(_pipesim.search_model, spec, mem_limit, validation,
                                       on_progress, callers=raised)
        verbatim = _spec.texts_in(spec)
    else:
        triples = _spec.cost_triples((1, 1, 1) if costs is None else costs)
        if len(triples) != 1:
            raise ValueError("costs: search takes one triple (F, B, W)")
        ratio = 1.0 if mem_w_ratio is None else mem_w_ratio
        fields, best, messages = _core(
            _pipesim.search, _spec.integer("p", p, 1, _spec.MAX_DEVICES),
            _spec.integer("m", m, 1, _spec.MAX_MICROBATCHES),
            _spec.number("mem_limit", mem_limit, 0.0, low_open=True), triples[0],
            _spec.number("comm", comm), _spec.number("mem_w_ratio", ratio, 0.0, 1.0),
            _spec.number("a2a", a2a), _spec.number("overlap_fb", overlap_fb, 0.0, 1.0),
            validation, on_progress, callers=raised)
        verbatim = set()
    _warn(messages, verbatim)
    return SearchResult._make(_json.loads(fields), best, verbatim)


def schedules():
    """The registered schedules: {name: description}."""
    return {name: _spec.python_words(description)
            for name, description, *_ in _pipesim.schedule_names()}


def models():
    """The model presets (model=NAME): {name: the fields of a model file}, every field given
    (docs/model-format.md). A dict written out as JSON, with a "name" of one's own, is a model
    file of the same model: `json.dump(dict(pipesim.models()["llama3-8b"], name="mine",
    layers=16), f)`."""
    return dict(_pipesim.model_presets())


def gpus():
    """The GPU presets (gpu=NAME): {name: the fields of a GPU file} (docs/gpu-format.md),
    the operator-level model's rates among them; written out as JSON with a "name" of one's
    own, a GPU file of the same GPU."""
    return dict(_pipesim.gpu_presets())


def clusters():
    """The cluster presets (simulate's cluster=NAME or "NAME:NODES"): {name: description}."""
    return dict(_pipesim.cluster_presets())
