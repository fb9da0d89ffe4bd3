"""Checks the keyword arguments of the public functions and turns them into the plain dicts
the compiled core reads (python/src/spec_dict.hpp). Messages follow the command line's, with
the Python parameter in place of the flag: "p: must be in 1..4096, got 0"."""

import collections.abc
import decimal
import json
import math
import numbers
import os
import re

from . import _pipesim

# The command line's bounds (cli/bounds.hpp), so that both front ends accept the same shapes.
MAX_DEVICES = 4096
MAX_MICROBATCHES = 1 << 20
MAX_CHUNKS = 64
MAX_MICROBATCH_SIZE = 1 << 20
MAX_SEQ_LEN = 1 << 24
MAX_TP = 1024
MAX_DP = 1 << 16
MAX_LAYERS = 1 << 20
MAX_GPU_INDEX = 1 << 24
# models::least_efficiency: the least share of a peak any rate may be (times stay finite).
LEAST_EFFICIENCY = 1e-6
MAX_WORKLOAD_BYTES = 1e15  # sim/simgrid/simulate.hpp, max_workload_bytes


def integer(name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name}: must be in {low}..{high}, got {value}")
    return int(value)


def number(name, value, low=0.0, high=1e30, low_open=False):
    # decimal.Decimal is a number that is not a numbers.Real ("expected a number, got
    # Decimal('1.5')").
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, decimal.Decimal)):
        raise TypeError(f"{name}: expected a number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:  # an int or a Fraction past a float's range, either way
        bound = f"≥ {low:g}" if value < 0 else f"≤ {high:g}"
        raise ValueError(f"{name}: must be {bound}, got a number beyond a float's range") from None
    except ValueError:  # Decimal('sNaN')
        raise ValueError(f"{name}: must be a finite number, got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name}: must be a finite number, got {value}")
    if low_open and value <= low:
        raise ValueError(f"{name}: must be > {low:g}, got {value:g}")
    if value < low:
        raise ValueError(f"{name}: must be ≥ {low:g}, got {value:g}")
    if value > high:
        raise ValueError(f"{name}: must be ≤ {high:g}, got {value:g}")
    return value


def byte_size(name, value):
    """Bytes (a number above 0) or a size such as "80GiB" (a string the core reads)."""
    if isinstance(value, str):
        size = text(name, value)
        if isinstance(size, bytes):  # not UTF-8: no unit's name
            raise ValueError(f"{name}: expected a size such as '80GiB', got {value!r}")
        return size
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected bytes or a size such as '80GiB', got {value!r}")
    return number(name, value, 0.0, low_open=True)


def flag(name, value):
    """True or False only: bool('no') is True, which no one means."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":  # numpy's bool too
        return bool(value)
    raise TypeError(f"{name}: expected True or False, got {value!r}")


def text(name, value):
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a string, got {value!r}")
    if not value:
        raise ValueError(f"{name}: expected a non-empty string, got ''")
    if "\0" in value:
        raise ValueError(f"{name}: a NUL character cannot be in a name or file name, got "
                         f"{value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # A file name that is not UTF-8 (os.fsdecode's surrogates): its bytes, as open() takes
        # them. A surrogate that escapes no byte is no text at all.
        try:
            return os.fsencode(value)
        except UnicodeEncodeError:
            raise ValueError(f"{name}: not valid text (a lone surrogate in {value!r})") from None
    return value


def sequence(value):
    """`value` as a list if it is a sequence of items, else None: not a string or bytes, and
    not a set or a mapping, whose order is not the caller's (a dict gives its keys: costs=
    {1: 2} read as the one cost 1)."""
    if isinstance(value, (str, bytes, set, frozenset, collections.abc.Mapping)) or not hasattr(
            value, "__iter__"):
        return None
    try:
        return list(value)
    except TypeError:  # iterable by its type only: a 0-d NumPy array ("iteration over a 0-d array")
        return None


def cost_triples(value):
    """(F, B, W), or a list of such triples, one per virtual stage."""
    wrong = f"costs: expected (F, B, W) or a list of such triples, got {value!r}"
    items = sequence(value)
    if items is None:
        raise TypeError(wrong)
    triples = items if items and sequence(items[0]) is not None else [items]
    out = []
    for triple in triples:
        numbers_given = sequence(triple)
        if numbers_given is None:
            raise TypeError(wrong)
        if len(numbers_given) != 3:
            raise ValueError(
                f"costs: expected three numbers F, B, W, got {tuple(numbers_given)!r}")
        out.append([number("costs", t) for t in numbers_given])
    return out


def _kind(value):
    if isinstance(value, bool) or type(value).__name__ == "bool_":  # numpy's bool too
        return "bool"
    if isinstance(value, numbers.Integral):
        return "integer"
    return type(value)


def is_set(value, default):
    """Whether a model option asks for something: not its default, nor equal to it by value
    alone (dist_opt=0 for False, sequence_parallel=1 for True, tp=1.0 for 1 are set, so that
    their types are checked, with a model or without; numpy's bools and integers are bools
    and integers)."""
    return _kind(value) != _kind(default) or value != default


def model_dict(model, gpu, mb, seq, sequence_parallel, recompute, attention, efficiency,
               calibration, dist_opt, first_stage_layers, last_stage_layers, zero, cp,
               tp_comm_overlap, grad_dtype, gradient_accumulation_fusion, persist_layer_norm,
               cross_entropy_loss_fusion):
    # The switches' types first: sequence_parallel=0 is a wrong type, with a model or without.
    for name, value in (("sequence_parallel", sequence_parallel), ("dist_opt", dist_opt),
                        ("tp_comm_overlap", tp_comm_overlap),
                        ("gradient_accumulation_fusion", gradient_accumulation_fusion),
                        ("persist_layer_norm", persist_layer_norm),
                        ("cross_entropy_loss_fusion", cross_entropy_loss_fusion)):
        flag(name, value)
    if model is None or gpu is None or mb is None:
        raise ValueError("model-based costs need all of model=NAME, gpu=NAME and mb=B")
    return {
        "model": text("model", model),
        "gpu": text("gpu", gpu),
        "mb": integer("mb", mb, 1, MAX_MICROBATCH_SIZE),
        "seq": 0 if seq is None else integer("seq", seq, 1, MAX_SEQ_LEN),
        "sequence_parallel": flag("sequence_parallel", sequence_parallel),
        "recompute": text("recompute", recompute),
        "attention": text("attention", attention),
        "efficiency": 0.0 if efficiency is None else number("efficiency", efficiency,
                                                            LEAST_EFFICIENCY, 1.0),
        "calibration": "" if calibration is None else text("calibration", calibration),
        "dist_opt": flag("dist_opt", dist_opt),
        "first_stage_layers": -1 if first_stage_layers is None else integer(
            "first_stage_layers", first_stage_layers, 0, MAX_LAYERS),
        "last_stage_layers": -1 if last_stage_layers is None else integer(
            "last_stage_layers", last_stage_layers, 0, MAX_LAYERS),
        "zero": 0 if zero is None else integer("zero", zero, 1, 3),
        "cp": 1 if cp is None else integer("cp", cp, 1, MAX_TP),
        "tp_comm_overlap": flag("tp_comm_overlap", tp_comm_overlap),
        "grad_dtype": text("grad_dtype", grad_dtype),
        "gradient_accumulation_fusion": flag("gradient_accumulation_fusion",
                                             gradient_accumulation_fusion),
        "persist_layer_norm": flag("persist_layer_norm", persist_layer_norm),
        "cross_entropy_loss_fusion": flag("cross_entropy_loss_fusion",
                                          cross_entropy_loss_fusion),
    }


MODEL_KEYS = ("model", "gpu", "mb", "seq", "sequence_parallel", "recompute", "attention",
              "efficiency", "calibration", "dist_opt", "first_stage_layers", "last_stage_layers",
              "zero", "cp", "tp_comm_overlap", "grad_dtype", "gradient_accumulation_fusion",
              "persist_layer_norm", "cross_entropy_loss_fusion")
MODEL_DEFAULTS = {"model": None, "gpu": None, "mb": None, "seq": None,
                  "sequence_parallel": True, "recompute": "none", "attention": "fused",
                  "efficiency": None, "calibration": None, "dist_opt": False, "first_stage_layers": None,
                  "last_stage_layers": None, "zero": None, "cp": None, "tp_comm_overlap": False,
                  "grad_dtype": "fp32", "gradient_accumulation_fusion": True,
                  "persist_layer_norm": True, "cross_entropy_loss_fusion": False}


def pipeline_dict(schedule, p, m, v, group_size, costs, comm, mem_w_ratio, dp, tp,
                  overlap_p2p_communication, model_args, layout_without_model, a2a=0.0,
                  overlap_fb=0.0, comparison=False):
    """The pipeline of analyze/simulate/compare. `schedule` is a registered name or a
    Schedule; `model_args` the model keywords (MODEL_KEYS). With `comparison`, `schedule` is
    the first of several: the core checks overlap_p2p_communication against each of them."""
    d = {"schedule": "", "given": None, "p": 0, "m": 0, "v": 0, "group_size": 0}
    if isinstance(schedule, _pipesim.Schedule):
        if p is not None or m is not None or v is not None or group_size is not None:
            raise ValueError("a Schedule gives the shape: drop p, m, v and group_size")
        d["given"] = schedule
    else:
        if schedule is None:
            raise ValueError("missing schedule=NAME (see pipesim.schedules())")
        d["schedule"] = text("schedule", schedule)
        if p is None:
            raise ValueError("missing p=P (number of pipeline devices)")
        if m is None:
            raise ValueError("missing m=M (number of microbatches)")
        d["p"] = integer("p", p, 1, MAX_DEVICES)
        d["m"] = integer("m", m, 1, MAX_MICROBATCHES)
        d["v"] = 0 if v is None else integer("v", v, 1, MAX_CHUNKS)
        d["group_size"] = 0 if group_size is None else integer("group_size", group_size, 1,
                                                               MAX_MICROBATCHES)
    # Their types and ranges first: dp=None without a model was told to add a model, and
    # then that dp=None is no integer.
    d["dp"] = integer("dp", dp, 1, MAX_DP)
    d["tp"] = integer("tp", tp, 1, MAX_TP)
    have_model = any(is_set(model_args[k], MODEL_DEFAULTS[k]) for k in MODEL_KEYS)
    if have_model:
        if costs is not None or mem_w_ratio is not None:
            raise ValueError("costs and mem_w_ratio cannot be combined with model (the model "
                             "gives the costs and memory)")
        d["model"] = model_dict(**model_args)
    else:
        d["model"] = None
        if not layout_without_model and (d["dp"] != 1 or d["tp"] != 1):
            raise ValueError("dp and tp set the model's layout: give model=NAME, gpu=NAME and "
                             "mb=B (or lay the pipeline out on a cluster: pipesim.simulate, or "
                             "pipesim.compare with cluster=)")
    d["costs"] = cost_triples((1, 1, 1) if costs is None else costs)
    d["mem_w_ratio"] = 1.0 if mem_w_ratio is None else number("mem_w_ratio", mem_w_ratio, 0.0,
                                                              1.0)
    d["comm"] = number("comm", comm)
    d["a2a"] = number("a2a", a2a)
    d["overlap_fb"] = number("overlap_fb", overlap_fb, 0.0, 1.0)
    d["step_exchange"] = not flag("overlap_p2p_communication", overlap_p2p_communication)
    if d["step_exchange"] and not comparison:
        check_step_exchange(d)
    if d["model"] is not None:
        check_sharding(d["model"], d["dp"], d["tp"])
    return d


def check_step_exchange(d):
    """overlap_p2p_communication=False as the command line's --no-overlap-p2p-communication
    takes it: interleaved-1f1b only, with the shapes whose steps pipesim can pair."""
    if d["given"] is not None or d["schedule"] != "interleaved-1f1b":
        name = "a given Schedule" if d["given"] is not None else d["schedule"]
        raise ValueError("overlap_p2p_communication=False applies to interleaved-1f1b, not to "
                         f"{name}: other schedules send each output as its pass ends")
    group = d["group_size"] or d["p"]
    if d["m"] % group != 0 or d["m"] < 2 * d["p"]:
        raise ValueError("overlap_p2p_communication=False needs m a multiple of the group size "
                         f"{group} and at least 2p = {2 * d['p']}, the shapes whose steps "
                         f"pipesim can pair; got m = {d['m']}")


def check_sharding(model, dp, tp):
    """zero, dist_opt and tp_comm_overlap need the parallelism they act on (as the command
    line's --zero, --dist-opt and --tp-comm-overlap)."""
    zero = model["zero"]
    one_rank = dp * model["cp"] < 2  # the dp·cp ranks that hold the same weights
    if zero > 0 and one_rank:
        raise ValueError(f"zero={zero} shards over data- and context-parallel ranks: give dp=D "
                         f"or cp=C above 1")
    if model["dist_opt"] and one_rank:
        raise ValueError("dist_opt shards over data- and context-parallel ranks: give dp=D or "
                         "cp=C above 1 (with one rank nothing is sharded)")
    if zero > 1 and model["dist_opt"]:
        raise ValueError(f"dist_opt is ZeRO-1 (the optimizer state sharded): drop it or "
                         f"zero={zero}")
    if model["tp_comm_overlap"] and tp < 2:
        raise ValueError("tp_comm_overlap overlaps tensor-parallel collectives: give tp=T with "
                         "T > 1")
    if not model["sequence_parallel"] and tp < 2:
        raise ValueError("sequence_parallel=False turns off tensor-parallel sequence "
                         "parallelism: give tp=T with T > 1")


def check_grad_reduce(spec, overlap_grad_reduce):
    """overlap_grad_reduce=False (the command line's --no-overlap-grad-reduce) moves the
    gradient reduction, which only data- or context-parallel ranks have."""
    if overlap_grad_reduce:
        return
    model = spec.get("model")
    cp = 1 if model is None else model["cp"]
    if spec["dp"] * cp < 2:
        raise ValueError("overlap_grad_reduce=False needs data or context parallelism (dp=D "
                         "or cp=C above 1): there is no gradient reduction")


def check_param_gather(spec, overlap_param_gather):
    """overlap_param_gather moves the sharded optimizer's parameter all-gather (as the command
    line's --overlap-param-gather): it needs dist_opt or zero 1 or 2."""
    if not overlap_param_gather:
        return
    model = spec.get("model")
    sharding = 0 if model is None else (model["zero"] or (1 if model["dist_opt"] else 0))
    if sharding == 3:
        raise ValueError("overlap_param_gather: ZeRO-3 gathers the parameters before every "
                         "pass already; there is no all-gather after the step to move")
    if sharding < 1:
        raise ValueError("overlap_param_gather moves the sharded optimizer's parameter "
                         "all-gather: give dist_opt=True or zero=1|2 (with a model)")


def engine_dict(cluster, layout_order, message_bytes, grad_bytes, overlap_grad_reduce,
                bw_scale, lat_scale, stragglers, nccl_algo=None, overlap_param_gather=False,
                post_validation=False):
    if cluster is None:
        raise ValueError("missing cluster=NAME|FILE ('pipesim list' shows the presets)")
    pairs = []
    wrong = ("stragglers: expected {gpu: factor} or a list of (gpu, factor) pairs, got "
             f"{stragglers!r}")
    if isinstance(stragglers, dict):
        items = list(stragglers.items())
    elif stragglers is None:
        items = []
    else:
        items = sequence(stragglers)
        if items is None:
            raise TypeError(wrong)
    for item in items:
        pair = sequence(item)
        if pair is None or len(pair) != 2:
            raise TypeError(wrong)
        gpu, factor = pair
        # The factor's lower bound (≥ 1) and its message are the core's: a bound of its own
        # here said "> 0" to {0: 0} where {0: 0.5} was told "≥ 1".
        pairs.append([integer("stragglers", gpu, 0, MAX_GPU_INDEX),
                      number("stragglers", factor, -math.inf)])
    return {
        "cluster": text("cluster", cluster),
        "layout_order": None if layout_order is None else text("layout_order", layout_order),
        "message_bytes": number("message_bytes", message_bytes, 0.0, MAX_WORKLOAD_BYTES),
        "grad_bytes": number("grad_bytes", grad_bytes, 0.0, MAX_WORKLOAD_BYTES),
        "overlap_grad_reduce": flag("overlap_grad_reduce", overlap_grad_reduce),
        "overlap_param_gather": flag("overlap_param_gather", overlap_param_gather),
        "post_validation": flag("post_validation", post_validation),
        "bw_scale": number("bw_scale", bw_scale, 0.0, low_open=True),
        "lat_scale": number("lat_scale", lat_scale),
        "stragglers": pairs,
        "nccl_algo": None if nccl_algo is None else text("nccl_algo", nccl_algo),
    }


# The parameters of analyze, simulate, compare and search, by which python_words names the
# command line's flags.
PARAMETERS = set(MODEL_KEYS) | {
    "p", "m", "v", "group_size", "costs", "comm", "mem_w_ratio", "dp", "tp", "a2a",
    "overlap_fb", "overlap_p2p_communication", "cluster", "layout_order", "message_bytes",
    "grad_bytes", "overlap_grad_reduce", "overlap_param_gather", "post_validation", "bw_scale",
    "lat_scale", "stragglers", "nccl_algo", "mem_limit", "html"}
# A flag stands alone: not inside a path or a name ("/tmp/--comm.json", "x-p"), not the
# shell's "ulimit -v".
_FLAG = re.compile(
    r"(?<![\w\-/.\\])(?<!ulimit )(--[a-z][a-z0-9-]*|-[vpmt])"
    r"( -?[0-9][^\s:,;)]*| [A-Z](?![\w-])| [a-z][a-z0-9.\-]*[a-z0-9](?![\w-]))?")
# The parameters whose values are names: a flag followed by one of them ("--recompute full",
# "--gpu a100-80gb") reads as the keyword with the name quoted; any other word after the flag
# is the sentence's.
_NAMED_VALUES = {
    "recompute": lambda: {"none", "selective", "full"},
    "attention": lambda: {"fused", "unfused"},
    "grad_dtype": lambda: {"fp32", "bf16", "fp16"},
    "nccl_algo": lambda: {"ring", "tree", "auto"},
    "gpu": lambda: {name for name, _ in _pipesim.gpu_presets()},
    "model": lambda: {name for name, _ in _pipesim.model_presets()},
    "cluster": lambda: {name for name, _ in _pipesim.cluster_presets()},
}
# Text quoted from a file or an argument ('--dp', an excerpt): left as it is.
_QUOTED = re.compile(r"((?<!\w)'[^'\n]*'(?!\w))")
_RENAMED = {"--sp": "sequence_parallel", "--no-sp": "sequence_parallel=False",
            "--no-overlap-p2p-communication": "overlap_p2p_communication=False",
            "--no-overlap-grad-reduce": "overlap_grad_reduce=False",
            "--mem-limit": "mem_limit", "-t": "tp",
            "--no-persist-layer-norm": "persist_layer_norm=False",
            "--no-gradient-accumulation-fusion": "gradient_accumulation_fusion=False"}
# Where a picture is too large, what the command line offers and what Python has instead.
_TOO_LARGE_TO_DRAW = ("or --trace for Perfetto or --gantt",
                      "or the ops themselves: Result.timeline() or Result.arrays()")


# The largest JSON file whose "name" texts_in() reads: the core's limit for the model, GPU,
# cluster and schedule files whose names its messages quote.
_NAMED_FILE_MOST = 1 << 20


def texts_in(*values):
    """The texts the caller gave (file names, names) among `values`, dicts and lists searched
    through, that python_words would otherwise reword: "exp -p 4/model.json" is a file name,
    not the flag -p. The "name" inside a JSON file given (a model "big -t 2") and a given
    Schedule's name are quoted as written too."""
    found = set()

    def keep(text):
        if isinstance(text, str) and _words_outside_quotes(text) != text:
            found.add(text)

    def named_file(path):
        if not path.lower().endswith(".json"):
            return
        try:
            if os.path.getsize(path) > _NAMED_FILE_MOST:
                return
            with open(path, "rb") as f:
                document = json.load(f)
        except (OSError, ValueError, RecursionError):
            return  # the core says what is wrong with it
        if isinstance(document, dict):
            keep(document.get("name"))

    def visit(value):
        if isinstance(value, bytes):
            value = os.fsdecode(value)
        if isinstance(value, str):
            keep(value)
            named_file(value)
        elif isinstance(value, _pipesim.Schedule):
            keep(value.name)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
    for value in values:
        visit(value)
    return found


def _words_outside_quotes(message):
    def parameter(match):
        flag, value = match.group(1), (match.group(2) or "").strip()
        name = _RENAMED.get(flag, flag.lstrip("-").replace("-", "_"))
        if name.split("=")[0] not in PARAMETERS:
            return match.group(0)
        if value[:1].islower():  # a name: the parameter's value, or the sentence's next word
            if "=" not in name and value in _NAMED_VALUES.get(name, set)():
                return f'{name}="{value}"'
            return f"{name} {value}"
        return f"{name}={value}" if value and "=" not in name else name + (
            " " + value if value else "")

    pieces = _QUOTED.split(message)
    return "".join(piece if i % 2 else _FLAG.sub(parameter, piece)
                   for i, piece in enumerate(pieces))


def python_words(message, verbatim=()):
    """A message of the shared core, which names the command line's flags, with the Python
    parameters in their place: "use --group-size 4 or more" reads "use group_size=4 or
    more"; flags Python has no parameter for stay, and so do the texts in `verbatim` (the
    caller's file names, texts_in())."""
    message = message.replace(*_TOO_LARGE_TO_DRAW)
    if not verbatim:
        return _words_outside_quotes(message)
    # The longest first, so that a name inside a longer one does not cut it.
    given = re.compile("(" + "|".join(re.escape(t) for t in
                                      sorted(verbatim, key=len, reverse=True)) + ")")
    return "".join(piece if i % 2 else _words_outside_quotes(piece)
                   for i, piece in enumerate(given.split(message)))

