"""Result objects: the fields of the command line's --json object as attributes, the
timeline as ops or NumPy arrays, and notebook views (_repr_html_)."""

import collections
import copy
import html
import json

from ._spec import flag, integer, number, python_words

#: Pass names by the codes of Result.arrays()["pass"].
PASSES = ("F", "B", "W", "BW")
#: Transfer kinds by the codes of Result.transfers()["kind"].
TRANSFER_KINDS = ("pipeline", "tensor_parallel", "data_parallel", "context_parallel")

#: One op as it ran: its device, pass ("F", "B", "W" or "BW"), microbatch, virtual stage,
#: start and end (in the result's time_unit).
Op = collections.namedtuple("Op", "device kind microbatch stage start end")

# The most ops drawn in a notebook (a larger picture is slow to lay out and unreadable).
NOTEBOOK_MAX_OPS = 20000
# The longest time axis svg() draws, in points (some 35 m): 3e9 wrapped to a negative width.
_MAX_PICTURE_WIDTH = 1e5


def _figure(value):
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _table(header, rows):
    """An HTML table; `header` None for one without a heading row (label, value pairs)."""
    head = ("" if header is None else
            "<thead><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) +
            "</tr></thead>")
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_figure(c))}</td>" for c in row) +
                   "</tr>" for row in rows)
    return f"<table>{head}<tbody>{body}</tbody></table>"


def _memory(value, in_bytes):
    """Activation memory as the command line prints it: bytes (a model's) in B, KiB, MiB,
    GiB or TiB; units of M_B (a full stage's activations of one microbatch) otherwise."""
    if not in_bytes:
        return f"{value:.4g} M_B"
    unit, divide = "B", 1.0
    for name in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024 * divide:
            break
        unit, divide = name, divide * 1024
    return f"{value / divide:.4g} {unit}"


# Comparison fields that are shares (shown in percent) and byte counts.
_SHARE_FIELDS = {"bubble_rate", "efficiency", "mfu"}
_BYTE_FIELDS = {"peak_memory_bytes"}


# Parts of a time budget (the `time_budget` JSON object) as they are named in the summary.
_BUDGET_PARTS = (("gemm", "GEMMs"), ("attention", "attention"), ("memory_bound", "memory-bound"),
                 ("communication", "communication"), ("pipeline_idle", "pipeline idle"),
                 ("data_parallel", "data-parallel"), ("optimizer", "optimizer"))


def _budget_text(budget):
    """All devices' step time split, as shares: "GEMMs 65.8 %, attention 8.4 %, ...";
    one "kernels" share where the budget has no split of the kernels."""
    whole = budget["step_time"] * len(budget["devices"])
    parts = budget["all"]
    names = _BUDGET_PARTS if "gemm" in parts else (("kernels", "kernels"),) + _BUDGET_PARTS[3:]
    return ", ".join(f"{label} {100 * parts[key] / whole:.1f} %" for key, label in names)


class _Fields:
    """Attribute access to the keys of a JSON object (`to_dict()`)."""

    _comes_from = ""  # the functions that make a class's objects, for the refusal below

    def __init__(self, *args, **kwargs):
        # Made directly, an object failed later with KeyError or AttributeError inside.
        raise TypeError(f"pipesim.{type(self).__name__} objects cannot be made directly; "
                        f"they come from {self._comes_from}")

    @classmethod
    def _make(cls, *args, **kwargs):
        """An object of the class, made by the pipesim function that ran (not __init__)."""
        made = cls.__new__(cls)
        made._setup(*args, **kwargs)
        return made

    def _setup(self, fields):
        self._fields = fields

    def to_dict(self):
        """The command line's --json object, as a dict (a copy)."""
        return copy.deepcopy(self._fields)

    def __getattr__(self, name):
        fields = self.__dict__.get("_fields")
        if fields is not None and name in fields:
            value = fields[name]
            # A copy of a list or dict: changing it must not change the result.
            return copy.deepcopy(value) if isinstance(value, (list, dict)) else value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.__dict__.get("_fields", {})))

    def __setattr__(self, name, value):
        # r.makespan = 5 was taken, and r.makespan then disagreed with r.to_dict().
        if name in self.__dict__.get("_fields", {}) or isinstance(
                getattr(type(self), name, None), property):
            raise AttributeError(f"{type(self).__name__}.{name} is a figure of the run: it "
                                 "cannot be set")
        super().__setattr__(name, value)

    def __delattr__(self, name):
        if name in self.__dict__.get("_fields", {}) or isinstance(
                getattr(type(self), name, None), property):
            raise AttributeError(f"{type(self).__name__}.{name} is a figure of the run: it "
                                 "cannot be deleted")
        super().__delattr__(name)


class Result(_Fields):
    """One run of a pipeline (pipesim.analyze, pipesim.simulate): every field of
    `pipesim analyze --json` (or `simulate --json`) as an attribute — bubble_rate,
    makespan, peak_activation, ... — plus the timeline."""

    _comes_from = "pipesim.analyze and pipesim.simulate"

    def _setup(self, run, verbatim=()):
        super()._setup(json.loads(run.json))
        self._run = run
        # The caller's file names, which the warnings quote as given (python_words).
        self._verbatim = frozenset(verbatim)

    @property
    def warnings(self):
        """The run's warnings in Python's words (overlap_p2p_communication=False where the
        command line says --no-overlap-p2p-communication); to_dict() keeps the command line's."""
        return [python_words(w, self.__dict__.get("_verbatim", ()))
                for w in self._fields.get("warnings", [])]

    def to_schedule(self):
        """The Schedule that ran (e.g. to save it, or to run it again elsewhere)."""
        return self._run.schedule

    def arrays(self):
        """Every op as NumPy columns, device by device in run order: device, pass (codes into
        pipesim.PASSES), microbatch, stage, start, end."""
        return self._run.op_arrays()

    def timeline(self):
        """Every op as a list of Op(device, kind, microbatch, stage, start, end), device by
        device in run order (`ops`, as in --json, is their count)."""
        return [Op(*t) for t in self._run.op_tuples()]

    def transfers(self):
        """Messages between devices as NumPy columns: src_device, dst_device, kind (codes into
        pipesim.TRANSFER_KINDS), bytes, start, end."""
        return self._run.transfer_arrays()

    def memory_curve(self, device):
        """Activation memory of `device` over time as (time, activation) arrays: a step curve
        with one point per change, in the unit of peak_activation."""
        last = int(self._fields["devices"]) - 1
        return self._run.memory_curve(integer("device", device, 0, last))

    def svg(self, memory=True, transfers=False, critical_path=False, width=0.0):
        """The timeline picture (Graphviz SVG, as `--timeline FILE.svg`): one row per device,
        memory below; `width` is the time axis' length in points, 1 to 100,000 (0: chosen
        from the ops).
        Raises ValueError without Graphviz in this build or for a timeline too large to draw."""
        axis = number("width", width, 0.0, _MAX_PICTURE_WIDTH)
        if 0 < axis < 1:  # 1e-300 drew every op on one spot, below the title's width
            raise ValueError(f"width: must be 0 (chosen from the ops) or at least 1 point, "
                             f"got {axis:g}")
        options = (flag("memory", memory), flag("transfers", transfers),
                   flag("critical_path", critical_path), axis)
        try:
            return self._run.svg(*options)
        except ValueError as e:
            raise ValueError(python_words(str(e))) from None

    def _picture(self):
        """The timeline picture a notebook shows (in _repr_html_), or None for one too large.
        Not _repr_svg_: a notebook keeps every representation an object offers, and would
        store the picture twice."""
        if int(self._fields["ops"]) > NOTEBOOK_MAX_OPS:
            return None
        try:
            return self.svg()
        except (ValueError, RuntimeError):
            return None

    def _summary_rows(self):
        f = self._fields
        unit = f["time_unit"]
        rows = [("schedule", f'{f["schedule"]} (p={f["devices"]} m={f["microbatches"]} '
                             f'v={f["chunks"]})')]
        if "model" in f:
            m = f["model"]
            rows.append(("model", f'{m["name"]} on {m["gpus"]} × {m["gpu"]}, '
                                  f'b={m["microbatch_size"]} s={m["seq_len"]} t={m["tp"]}'))
        if "cluster" in f:
            rows.append(("cluster", f'{f["cluster"]}, dp={f["dp"]} tp={f["tp"]}, '
                                    f'{f["gpus"]} GPUs'))
        if "iteration_time" in f:
            rows.append(("iteration time", f'{f["iteration_time"]:.6g} s'))
        rows.append(("makespan", f'{f["makespan"]:.6g} {unit}'))
        if "period" in f:
            rows.append(("period (post-validation)", f'{f["period"]:.6g} {unit}'))
        rows.append(("bubble rate", f'{100 * f["bubble_rate"]:.2f} % (device '
                                    f'{f["bubble_device"]})'))
        rows.append(("peak activation", _memory(f["peak_activation_max"], "model" in f)))
        if "samples_per_second" in f:
            rows.append(("throughput", f'{f["samples_per_second"]:.6g} samples/s'))
            rows.append(("MFU", f'{100 * f["mfu"]:.1f} %'))
            if "time_budget" in f:
                rows.append(("where the step goes", _budget_text(f["time_budget"])))
        else:
            rows.append(("throughput", f'{f["throughput"]:.6g} microbatches / {unit}'))
        return rows

    def _repr_html_(self):
        # The picture first: a notebook shows one representation, and prefers HTML to SVG.
        f = self._fields
        unit = f["time_unit"]
        in_bytes = "model" in f
        devices = [(d, f'{f["busy"][d]:.6g} {unit}', f'{f["idle"][d]:.6g} {unit}',
                    f'{100 * f["device_bubble_rate"][d]:.2f} %',
                    _memory(f["peak_activation"][d], in_bytes)) for d in range(len(f["busy"]))]
        warnings = "".join(f"<p>warning: {html.escape(w)}</p>" for w in self.warnings)
        picture = self._picture()
        figure = ("" if picture is None else
                  f'<div style="overflow-x:auto">{picture[picture.find("<svg"):]}</div>')
        return (figure + _table(None, self._summary_rows()) +
                _table(("device", "busy", "idle", "bubble", "peak activation"), devices) +
                warnings)

    def __repr__(self):
        f = self._fields
        # The iteration where it is more than the pipeline (a data-parallel reduction, the
        # optimizer step): "makespan 33 s" alone hid an iteration of 2733.7 s.
        # With post-validation the iterations repeat with a period of their own.
        label = "period" if "period" in f else "iteration"
        iteration = f.get("period", f.get("iteration_time"))
        beyond = (f', {label} {iteration:.6g} {f["time_unit"]}'
                  if iteration is not None and iteration != f["makespan"] else "")
        return (f'<pipesim.Result {f["schedule"]} p={f["devices"]} m={f["microbatches"]} '
                f'v={f["chunks"]}: makespan {f["makespan"]:.6g} {f["time_unit"]}{beyond}, '
                f'bubble {100 * f["bubble_rate"]:.2f} %, peak activation '
                f'{_memory(f["peak_activation_max"], "model" in f)}>')


class Comparison(_Fields):
    """Several schedules on one pipeline (pipesim.compare): the fields of
    `pipesim compare --json` (devices, microbatches, time_unit, schedules: one dict per
    schedule), iterable over those rows."""

    _comes_from = "pipesim.compare"

    def _setup(self, fields, warnings):
        super()._setup(fields)
        object.__setattr__(self, "_warnings", tuple(warnings))

    @property
    def warnings(self):
        """The comparison's warnings, a new list at each call (changing it changes nothing
        here, as the other list fields)."""
        return list(self._warnings)

    def __iter__(self):
        return iter(copy.deepcopy(self._fields["schedules"]))

    def __len__(self):
        return len(self._fields["schedules"])

    def column(self, name):
        """One field of every row as a NumPy array (numbers) or list (names); a field of
        parts (step_shares) as a dict of one array per part."""
        import numpy as np  # only here: results need NumPy for their arrays alone

        if not isinstance(name, str):
            raise TypeError(f"column: expected a field's name, got {name!r}")
        rows = self._fields["schedules"]
        if rows and name not in rows[0]:
            raise KeyError(f"column {name!r}: a row's fields are {', '.join(rows[0])}")
        # Copies: a field that is a dict (step_shares) or list must not be the result's own.
        values = [copy.deepcopy(row[name]) for row in rows]
        if name == "schedule":
            return values
        # step_shares: {"gemm": array, "attention": array, ...}, each part over the rows.
        if values and all(isinstance(v, dict) for v in values):
            return {part: np.asarray([v.get(part, np.nan) for v in values]) for part in values[0]}
        # speedup_1f1b is None where 1F1B could not run: NaN in the array.
        return np.asarray([np.nan if v is None else v for v in values])

    def _repr_html_(self):
        rows = self._fields["schedules"]
        header = [k for k in rows[0] if k != "step_shares"] if rows else []
        # With a model, where each schedule's step goes: one column per part, in percent.
        parts = list(rows[0].get("step_shares", {})) if rows else []
        labels = dict(_BUDGET_PARTS, kernels="kernels")

        def cell(key, value):
            if key in _SHARE_FIELDS:
                return f"{100 * value:.2f} %"
            if key in _BYTE_FIELDS:
                return _memory(value, True)
            return "—" if value is None else value

        # Each heading with its unit; a byte field's cells carry theirs (GiB, MiB, ...).
        unit = self._fields["time_unit"]
        units = {"makespan": unit, "iteration_time": unit, "period": unit,
                 "lifespan_max": unit, "peak_activation_max": "M_B",
                 "throughput": f"microbatches / {unit}", "samples_per_second": "samples / s"}
        titles = [k.removesuffix("_bytes").replace("_", " ") if k in _BYTE_FIELDS else
                  f"{k} ({units[k]})" if k in units else k for k in header]
        return _table(titles + [f"{labels.get(k, k)} %" for k in parts],
                      [[cell(k, r[k]) for k in header] +
                       [f'{100 * r["step_shares"][k]:.1f}' for k in parts] for r in rows])

    def __repr__(self):
        names = ", ".join(r["schedule"] for r in self._fields["schedules"])
        return (f'<pipesim.Comparison p={self._fields["devices"]} '
                f'm={self._fields["microbatches"]}: {names}>')


class SearchResult(_Fields):
    """The memory-capped search (pipesim.search): the fields of `pipesim search --json`
    (best, ranking, ...) and the best schedule."""

    _comes_from = "pipesim.search"

    def _setup(self, fields, best, verbatim=()):
        super()._setup(fields)
        self._best = best
        self._verbatim = frozenset(verbatim)

    @property
    def best_schedule(self):
        """The best candidate's Schedule (to run it again, save it or draw it). search()
        raises ValueError where no candidate fits, so there is always one."""
        return self.__dict__.get("_best")

    @property
    def warnings(self):
        """The best schedule's warnings in Python's words; to_dict() keeps the command
        line's."""
        return [python_words(w, self.__dict__.get("_verbatim", ()))
                for w in self._fields.get("warnings", [])]

    def _columns(self):
        """(time field, its heading, the peak's cell function): a model's search times
        iterations and caps bytes."""
        ranking = self._fields["ranking"]
        first = ranking[0] if ranking else {}
        time = next((k for k in ("iteration_time", "period", "makespan") if k in first),
                    "makespan")
        in_bytes = "peak_memory_bytes" in first
        key = "peak_memory_bytes" if in_bytes else "peak_activation_max"
        return time, time.replace("_", " "), lambda e: _memory(e[key], in_bytes)

    def _repr_html_(self):
        time, heading, peak = self._columns()
        rows = [(e["label"], e["kind"], f'{100 * e["bubble_rate"]:.2f} %', e[time], peak(e),
                 "yes" if e["fits"] else "no")
                for e in self._fields["ranking"]]
        page = _table(("candidate", "kind", "bubble", heading, "peak", "fits"), rows)
        front = self._fields["front"]
        if len(front) < 2:
            return page
        # What the cap's memory buys: each lower peak and the bubble it costs.
        lower = [(peak(e), f'{100 * e["bubble_rate"]:.2f} %', e[time], e["label"])
                 for e in front]
        # Ranked by bubble in activation units, by iteration time with a model (as the
        # command line says).
        criterion = "iteration time" if "peak_memory_bytes" in self._fields["best"] else "bubble"
        return (f"<p>What memory buys within the cap (no candidate is better in both "
                f"{criterion} and peak):</p>" +
                _table(("peak", "bubble", heading, "candidate"), lower) +
                "<p>Every candidate, ranked:</p>" + page)

    def __repr__(self):
        b = self._fields["best"]
        cap = self._fields.get("memory_limit_bytes")
        within = _memory(cap, True) if cap else f'{self._fields["memory_limit"]:g}'
        return (f'<pipesim.SearchResult best within {within}: '
                f'{b["label"]}, bubble {100 * b["bubble_rate"]:.2f} %>')
