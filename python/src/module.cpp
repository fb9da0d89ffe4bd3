// _pipesim: the compiled half of the `pipesim` Python package, a thin layer over the
// analysis library (analysis/run.hpp). The Python half (pipesim/) checks the arguments and
// builds the result objects; errors arrive as ValueError (std::invalid_argument, the
// command line's message) or RuntimeError.
#include <cxxabi.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "analysis/compare.hpp"
#include "analysis/phases.hpp"
#include "analysis/result_json.hpp"
#include "analysis/search.hpp"
#include "fileio/files.hpp"
#include "fileio/memory_budget.hpp"
#include "html_output.hpp"
#include "models/byte_size.hpp"
#include "models/presets.hpp"
#include "presets.hpp"
#include "run_data.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule_file.hpp"
#include "schedules/schedule_json.hpp"
#include "spec_dict.hpp"
#include "timeline_bytes.hpp"
#include "viz/html_report.hpp"
#include "viz/render.hpp"
#include "viz/timeline_file.hpp"
#include "viz/timeline_picture.hpp"

namespace py = pybind11;

namespace pipesim::python {

namespace {

// These classes have no Python constructor: their objects come from C++, which fills them
// through tp_alloc. Python's Cls.__new__(Cls) would make one with no C++ value behind it, and
// using it read null or freed memory (a segmentation fault), so __new__ is refused.
template <class Class>
void refuse_python_new(Class& cls, const char* where_from) {
    const std::string name = py::str(cls.attr("__name__"));
    cls.def_static(
        "__new__",
        [name, where_from](const py::object&, const py::args&, const py::kwargs&) -> py::object {
            throw py::type_error(fmt::format("pipesim.{} objects cannot be made directly; they {}",
                                             name, where_from));
        });
}

// A file name given as str or os.PathLike (pathlib.Path), as open() takes it: in the file
// system's bytes (os.fsencode), so that a name that is not UTF-8 still opens.
std::string path_argument(const py::object& path, const char* name) {
    const py::module_ os = py::module_::import("os");
    if (!py::isinstance<py::str>(path) && !py::isinstance(path, os.attr("PathLike")))
        throw py::type_error(fmt::format("{}: expected a str or os.PathLike, got {}", name,
                                         py::repr(path).cast<std::string>()));
    const py::object text = os.attr("fspath")(path);
    if (!py::isinstance<py::str>(text))
        throw py::type_error(fmt::format("{}: expected a str path, got {}", name,
                                         py::repr(text).cast<std::string>()));
    std::string bytes;
    try {
        bytes = os.attr("fsencode")(text).cast<std::string>();
    } catch (const py::error_already_set& e) {
        // A surrogate that escapes no byte (os.fsdecode's stand for bytes 0x80..0xff).
        if (!e.matches(PyExc_UnicodeEncodeError)) throw;
        throw py::value_error(fmt::format("{}: not a valid file name (a lone surrogate in {})",
                                          name, py::repr(text).cast<std::string>()));
    }
    if (bytes.empty()) throw py::value_error(fmt::format("{}: expected a file name, got ''", name));
    // The file system would see the name up to its first NUL only: refused, as open() does.
    if (bytes.find('\0') != std::string::npos)
        throw py::value_error(fmt::format("{}: a NUL character cannot be in a file name, got {}",
                                          name, py::repr(text).cast<std::string>()));
    return bytes;
}

// A C++ message as Python text. Bytes that are not UTF-8 (a file's own, a file name's)
// become \xNN escapes; pybind11's own translation would leave such a message empty.
py::str message_text(const char* what) {
    PyObject* text =
        PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace");
    if (text == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(text);
}

// The exceptions of the C++ side as pybind11 maps them (ValueError for the invalid_argument
// of every bad input, IndexError for out_of_range, RuntimeError for the rest), with their
// messages through message_text(), and the command line's out-of-memory advice for
// std::bad_alloc (whose own message is "std::bad_alloc").
void translate_exception(std::exception_ptr error) {
    const auto raise = [](PyObject* type, const std::exception& e) {
        PyErr_SetObject(type, message_text(e.what()).ptr());
    };
    try {
        if (error) std::rethrow_exception(error);
    } catch (const py::error_already_set&) {
        throw;
    } catch (const py::builtin_exception&) {
        throw;
    } catch (const std::bad_alloc&) {
        PyErr_SetString(PyExc_MemoryError, std::string(fileio::out_of_memory_message).c_str());
    } catch (const std::invalid_argument& e) {  // nothing here throws the rarer kinds
        raise(PyExc_ValueError, e);
    } catch (const std::out_of_range& e) {
        raise(PyExc_IndexError, e);
    } catch (const std::exception& e) {
        raise(PyExc_RuntimeError, e);
    }
}

std::string text_argument(const py::object& text, const char* name) {
    if (!py::isinstance<py::str>(text))
        throw py::type_error(
            fmt::format("{}: expected a str, got {}", name, py::repr(text).cast<std::string>()));
    // os.fsdecode's surrogates stand for the bytes they escape, as the package's other text
    // arguments read them; a lone surrogate of no byte is not text (it leaked pybind11's
    // "Unable to cast" RuntimeError).
    try {
        return text.attr("encode")("utf-8", "surrogateescape").cast<std::string>();
    } catch (const py::error_already_set&) {
        throw py::value_error(fmt::format("{}: not valid text (a lone surrogate in {})", name,
                                          py::repr(text).cast<std::string>()));
    }
}

// Equal schedules (operator==: every field) hash alike: the hash reads a subset of them.
std::size_t schedule_hash(const Schedule& s) {
    std::size_t h = std::hash<std::string>{}(s.name);
    const auto mix = [&h](std::size_t value) {
        h ^= value + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    };
    mix(static_cast<std::size_t>(s.devices));
    mix(static_cast<std::size_t>(s.microbatches));
    mix(static_cast<std::size_t>(s.chunks));
    for (const std::vector<Op>& ops : s.device_ops) {
        mix(ops.size());
        for (const Op& op : ops)
            mix((static_cast<std::size_t>(op.pass) << 48) ^
                (static_cast<std::size_t>(op.microbatch) << 20) ^
                static_cast<std::size_t>(op.stage));
    }
    return h;
}

void ensure_numpy();

template <typename T>
py::array_t<T> to_array(const std::vector<T>& values) {
    ensure_numpy();
    return py::array_t<T>(static_cast<py::ssize_t>(values.size()), values.data());
}

std::size_t op_count(const Timeline& timeline) {
    std::size_t ops = 0;
    for (const auto& device : timeline.device_ops)
        ops += device.size();
    return ops;
}

// Refuses, as the command line refuses a run too large (fileio::check_memory: ValueError, one
// line), building `count` items of `bytes_per_item` each that this process cannot hold: under
// `ulimit -v`, a timeline() of millions of ops aborted the interpreter or failed halfway.
void check_room(std::size_t count, double bytes_per_item, std::string_view what) {
    fileio::check_memory(static_cast<double>(count) * bytes_per_item, fileio::memory_budget(),
                         fmt::format("{} of {} items", what, count));
}

// Columns of `count` values of these sizes, as vectors and then as the NumPy arrays copied
// from them.
template <typename... Column>
constexpr double column_bytes() {
    return 2.0 * (0.0 + ... + static_cast<double>(sizeof(Column)));
}

// Every op of the timeline as columns, device by device in run order.
py::dict op_arrays(const Timeline& timeline) {
    const std::size_t ops = op_count(timeline);
    check_room(
        ops, column_bytes<std::int32_t, std::uint8_t, std::int32_t, std::int32_t, double, double>(),
        "the op arrays");
    std::vector<std::int32_t> device, microbatch, stage;
    std::vector<std::uint8_t> pass;
    std::vector<double> start, end;
    device.reserve(ops);
    microbatch.reserve(ops);
    stage.reserve(ops);
    pass.reserve(ops);
    start.reserve(ops);
    end.reserve(ops);
    for (std::size_t d = 0; d < timeline.device_ops.size(); ++d)
        for (const TimedOp& t : timeline.device_ops[d]) {
            device.push_back(static_cast<std::int32_t>(d));
            pass.push_back(static_cast<std::uint8_t>(t.op.pass));
            microbatch.push_back(t.op.microbatch);
            stage.push_back(t.op.stage);
            start.push_back(t.start);
            end.push_back(t.end);
        }
    py::dict out;
    out["device"] = to_array(device);
    out["pass"] = to_array(pass);
    out["microbatch"] = to_array(microbatch);
    out["stage"] = to_array(stage);
    out["start"] = to_array(start);
    out["end"] = to_array(end);
    return out;
}

// What Result.timeline() holds per op at its peak, in CPython 3.11's object sizes
// (sys.getsizeof, plus the 16-byte header of the objects the garbage collector tracks): the
// list op_tuples() returns (an 8-byte slot, a 6-tuple of 88 + 16 bytes, its ints of 28 bytes
// beyond the cached small ones, its floats of 24 and the pass name's str of 51), and the list
// of Op tuples made from it while it lives.
constexpr double list_slot_bytes = 8, tuple_bytes = 88 + 16, int_bytes = 28, float_bytes = 24,
                 pass_name_bytes = 51;
constexpr double timeline_bytes_per_op =
    2 * (list_slot_bytes + tuple_bytes) + 3 * int_bytes + 2 * float_bytes + pass_name_bytes;

// Every op as (device, pass name, microbatch, stage, start, end), as op_arrays orders them.
py::list op_tuples(const Timeline& timeline) {
    const std::size_t ops = op_count(timeline);
    check_room(ops, timeline_bytes_per_op, "the timeline's Op list");
    py::list out(static_cast<py::ssize_t>(ops));
    py::ssize_t i = 0;
    for (std::size_t d = 0; d < timeline.device_ops.size(); ++d)
        for (const TimedOp& t : timeline.device_ops[d])
            out[i++] = py::make_tuple(d, std::string(pass_name(t.op.pass)), t.op.microbatch,
                                      t.op.stage, t.start, t.end);
    return out;
}

py::dict transfer_arrays(const Timeline& timeline) {
    const std::size_t transfers = timeline.transfers.size();
    check_room(transfers,
               column_bytes<std::int32_t, std::int32_t, std::uint8_t, double, double, double>(),
               "the transfer arrays");
    std::vector<std::int32_t> src, dst;
    std::vector<std::uint8_t> kind;
    std::vector<double> bytes, start, end;
    src.reserve(transfers);
    dst.reserve(transfers);
    kind.reserve(transfers);
    bytes.reserve(transfers);
    start.reserve(transfers);
    end.reserve(transfers);
    for (const Transfer& t : timeline.transfers) {
        src.push_back(t.src_device);
        dst.push_back(t.dst_device);
        kind.push_back(static_cast<std::uint8_t>(t.kind));
        bytes.push_back(t.bytes);
        start.push_back(t.start);
        end.push_back(t.end);
    }
    py::dict out;
    out["src_device"] = to_array(src);
    out["dst_device"] = to_array(dst);
    out["kind"] = to_array(kind);
    out["bytes"] = to_array(bytes);
    out["start"] = to_array(start);
    out["end"] = to_array(end);
    return out;
}

const Timeline& recorded(RunData& run);

py::tuple memory_curve(RunData& run, int device) {
    if (device < 0 || device >= run.timeline.devices)
        throw std::invalid_argument(
            fmt::format("device: must be in 0..{}, got {}", run.timeline.devices - 1, device));
    std::vector<double> time, activation;
    for (const MemoryPoint& p : memory_over_time(recorded(run), run.memory, device)) {
        time.push_back(p.time);
        activation.push_back(p.activation);
    }
    return py::make_tuple(to_array(time), to_array(activation));
}

// Runs `work` with the GIL released. Not with py::gil_scoped_release: a daemon thread that
// takes the GIL back while the interpreter exits is ended by CPython (pthread_exit), and the
// unwinding from the scope's noexcept destructor called std::terminate ("terminate called
// without an active exception", SIGABRT, whenever a program exited while such a thread
// drew a picture). Taken back in this frame, the unwinding ends the thread quietly.
template <typename Work>
auto without_gil(Work&& work) -> decltype(work()) {
    PyThreadState* const state = PyEval_SaveThread();
    std::optional<decltype(work())> result;
    try {
        result.emplace(work());
    } catch (abi::__forced_unwind&) {
        throw;  // the thread ends where work took the GIL (a phase's Ctrl-C check): as above
    } catch (...) {
        PyEval_RestoreThread(state);
        throw;
    }
    PyEval_RestoreThread(state);
    return std::move(*result);
}

// pybind11 2.10 (Debian's) looks NumPy's C API up in a function-local static whose
// initializer imports NumPy, and an import may let another thread take the GIL: that thread
// then waited for the static while holding the GIL, the first one for the GIL, forever (four
// threads reading a result's arrays at once in a fresh interpreter hung). The first thread
// that needs NumPy looks it up here with the GIL; the others wait for it without.
void ensure_numpy() {
    static std::atomic<bool> ready{false};
    if (ready.load(std::memory_order_acquire)) return;
    static std::once_flag once;
    without_gil([] {
        std::call_once(once, [] {
            const py::gil_scoped_acquire acquire;
            py::detail::npy_api::get();
        });
        return 0;
    });
    ready.store(true, std::memory_order_release);
}

std::string timeline_svg(RunData& run, bool memory, bool transfers, bool critical_path,
                         double width) {
    viz::TimelinePictureOptions options;
    options.memory = memory;
    options.transfers = transfers;
    options.critical_path = critical_path;
    options.width = width;
    options.memory_in_bytes = run.memory_in_bytes;
    options.iteration_time = run.iteration_time;
    options.iteration_is_period = run.post_validation;
    const std::string dot = viz::timeline_dot(recorded(run), run.memory, options);
    return without_gil([&] { return viz::render_dot(dot, viz::ImageFormat::svg); });
}

py::list device_ops(const Schedule& s) {
    py::list devices;
    for (const std::vector<Op>& ops : s.device_ops) {
        py::list list;
        for (const Op& op : ops)
            list.append(py::make_tuple(std::string(pass_name(op.pass)), op.microbatch, op.stage));
        devices.append(list);
    }
    return devices;
}

bool python_interrupted() {
    py::gil_scoped_acquire acquire;
    return PyErr_CheckSignals() != 0;
}

// Thrown between two phases of an analysis when Ctrl-C was pressed (Python's handler only
// notes the signal while C++ runs): not a std::exception, so that nothing on the way (the
// 1F1B baseline's fallback) takes it for a failed run.
struct Interrupted {};

// Runs `work` without the GIL, checking for Ctrl-C as each analysis phase starts; the
// KeyboardInterrupt is raised once the GIL is back.
template <typename Work>
auto interruptible(Work&& work) {
    try {
        return without_gil([&] {
            const analysis::ReportPhases phases([](std::string_view) {
                if (python_interrupted()) throw Interrupted{};
            });
            return work();
        });
    } catch (const Interrupted&) {
        throw py::error_already_set();
    }
}

// html= as the command line's --html FILE: None, or a path checked before any work (.html or
// .htm, Graphviz in this build, pictures not too large to draw).
std::string html_path(const py::object& html, const analysis::PipelineSpec& spec) {
    if (html.is_none()) return {};
    std::string path = path_argument(html, "html");
    viz::check_html_report("--html", path);
    fileio::check_writable_path(path);
    cli::check_picture_ops(spec, /*picture=*/true, viz::TimelinePictureOptions{}.max_ops);
    return path;
}

RunData analyze(const py::dict& d, bool overlap_grad_reduce, bool overlap_param_gather,
                bool post_validation, const py::object& html, const std::string& call) {
    const analysis::PipelineSpec spec = spec_from_dict(d);
    const std::string report = html_path(html, spec);
    analysis::AnalyticEngine engine;
    engine.overlap_grad_reduce = overlap_grad_reduce;
    engine.overlap_param_gather = overlap_param_gather;
    engine.post_validation = post_validation;
    // The records come later, when a method needs them (PendingRecords), unless the report
    // draws the timeline now, the run reads files (a model, GPU or calibration file), which
    // may change or go before then, or runs a given schedule, which the spec kept for later
    // would hold a second time beside RunData::schedule.
    const auto& model = spec.costs.model;
    const bool reads_files =
        model && (fileio::names_a_file(model->model) || fileio::names_a_file(model->gpu) ||
                  !model->calibration_file.empty());
    std::shared_ptr<PendingRecords> pending;
    if (report.empty() && !reads_files && !spec.given) {
        pending = std::make_shared<PendingRecords>();
        pending->spec = spec;
        pending->engine = engine;
        engine.record_ops = engine.record_transfers = false;
    }
    return interruptible([&] {
        analysis::Analysis result = analysis::run_with_baseline(spec, engine);
        if (!report.empty()) {
            const std::string page = cli::single_html("analyze", call, spec, result);
            // Ctrl-C while the pictures were drawn (no phase reports it): no page.
            if (python_interrupted()) throw Interrupted{};
            fileio::write_file_atomically(report, page);
        }
        RunData data = run_data(std::move(result), spec);
        data.pending = std::move(pending);
        return data;
    });
}

// `run`'s timeline with its ops and transfers: made now if analyze() left them for later
// (PendingRecords), once, whichever thread asks first; the others wait for it. Refused as
// the run would have been refused with them (a ValueError) when they will not fit.
const Timeline& recorded(RunData& run) {
    const std::shared_ptr<PendingRecords> pending = run.pending;
    if (!pending) return run.timeline;
    interruptible([&] {
        const std::lock_guard lock(pending->mutex);
        if (!pending->made) {
            analysis::Analysis records = analysis::run(pending->spec, pending->engine);
            // Only what the records add: another thread may read the timeline's shape and
            // time unit meanwhile (they hold the GIL, this thread does not).
            run.timeline.device_ops = std::move(records.timeline.device_ops);
            run.timeline.transfers = std::move(records.timeline.transfers);
            run.timeline.fb_pairs = std::move(records.timeline.fb_pairs);
            pending->made = true;
        }
        return 0;
    });
    return run.timeline;
}

RunData simulate(const py::dict& d, const py::dict& engine_dict, const py::object& html,
                 const std::string& call) {
    const analysis::PipelineSpec spec = spec_from_dict(d);
    const std::string report = html_path(html, spec);
    const analysis::SimGridEngine engine = engine_from_dict(engine_dict);
    analysis::Pipeline pipeline = analysis::prepare(spec, engine);
    try {
        return without_gil([&] {
            std::string text;
            RunData data = simulate_in_child(std::move(pipeline), engine, python_interrupted,
                                             report.empty() ? std::string() : call, &text);
            if (!report.empty()) fileio::write_file_atomically(report, text);
            return data;
        });
    } catch (const std::runtime_error& e) {
        // A KeyboardInterrupt seen while waiting is the error Python reports.
        if (PyErr_Occurred()) throw py::error_already_set();
        throw;
    }
}

// compare(html=...): every op recorded for the pictures, the report written once all ran.
analysis::Comparison compare_with_report(const analysis::PipelineSpec& spec,
                                         const std::vector<std::string>& names,
                                         bool post_validation, const py::object& engine_dict,
                                         const std::string& path, const std::string& call) {
    analysis::Engine engine = analysis::AnalyticEngine{
        .record_transfers = false, .record_ops = true, .post_validation = post_validation};
    if (!engine_dict.is_none()) {
        analysis::SimGridEngine simgrid = engine_from_dict(engine_dict.cast<py::dict>());
        simgrid.options.record_transfers = false;
        engine = std::move(simgrid);
    }
    // As given (a preset with its node count, or a file), as compare --cluster's report shows it.
    const std::string cluster =
        engine_dict.is_none() ? std::string() : engine_dict["cluster"].cast<std::string>();
    const auto compare_and_write = [&] {
        cli::ComparisonReport run =
            cli::compare_for_report(spec, names, engine, python_interrupted);
        const analysis::Comparison& c = run.comparison;
        const std::string page = viz::html_report_text(
            cli::compare_html_report(call, spec, cluster, c.rows, c.model, c.time_unit,
                                     c.post_validation, std::move(run.pictures)));
        // Ctrl-C while the pictures were drawn (no phase reports it): no page.
        if (python_interrupted()) throw Interrupted{};
        fileio::write_file_atomically(path, page);
        return std::move(run.comparison);
    };
    try {
        if (engine_dict.is_none()) return interruptible(compare_and_write);
        // On SimGrid each schedule runs in a forked child: no phase reporter there, which
        // would call into Python from the child (and wait forever for a GIL another thread
        // held at the fork).
        try {
            return without_gil(compare_and_write);
        } catch (const Interrupted&) {
            throw py::error_already_set();
        }
    } catch (const std::runtime_error& e) {
        // A KeyboardInterrupt seen while a child ran is the error Python reports.
        if (PyErr_Occurred()) throw py::error_already_set();
        throw;
    }
}

// With an engine dict (simulate's), each schedule runs on the SimGrid cluster in a child.
py::tuple compare(const py::dict& d, const std::vector<std::string>& names, bool post_validation,
                  const py::object& engine_dict, const py::object& html, const std::string& call) {
    const analysis::PipelineSpec spec = spec_from_dict(d);
    analysis::Comparison comparison;
    if (!html.is_none()) {
        analysis::check_comparison_shape(spec, names);
        const std::string path = html_path(html, spec);
        for (const std::string& name : names)  // v = 2 and split backwards have more ops
            cli::check_picture_ops(analysis::comparison_spec(name, spec), /*picture=*/true,
                                   viz::TimelinePictureOptions{}.max_ops);
        comparison = compare_with_report(spec, names, post_validation, engine_dict, path, call);
    } else if (engine_dict.is_none()) {
        comparison = interruptible([&] { return analysis::compare(spec, names, post_validation); });
    } else {
        const analysis::SimGridEngine engine = engine_from_dict(engine_dict.cast<py::dict>());
        try {
            comparison = without_gil([&] {
                return analysis::compare_on_cluster(spec, names, engine, python_interrupted);
            });
        } catch (const std::runtime_error& e) {
            // A KeyboardInterrupt seen while waiting is the error Python reports.
            if (PyErr_Occurred()) throw py::error_already_set();
            throw;
        }
    }
    return py::make_tuple(analysis::json_text(analysis::comparison_json(comparison)),
                          comparison.warnings);
}

// Runs the search and returns (its JSON text, the best schedule, the best one's warnings).
py::tuple run_search(SearchOptions options, const analysis::PipelineSpec& spec, double cap_bytes,
                     bool post_validation, const py::object& progress) {
    // Before each candidate: the caller's progress function, if any (what it raises ends the
    // search), and Ctrl-C (while C++ runs, Python's handler only notes the signal).
    options.progress = [&progress](std::size_t done, std::size_t total, const std::string& label) {
        py::gil_scoped_acquire acquire;
        if (!progress.is_none()) progress(done, total, label);
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    };
    // Within a candidate, Ctrl-C as the planners report their steps (interruptible()).
    const analysis::SearchReport report = interruptible(
        [&] { return analysis::search_report(options, spec, cap_bytes, post_validation); });
    return py::make_tuple(analysis::json_text(analysis::search_json(report)), report.result.best,
                          analysis::run_warnings(report.best));
}

py::tuple search(int devices, int microbatches, double memory_limit,
                 const std::array<double, 3>& costs, double comm, double mem_w_ratio,
                 double all_to_all, double fb_overlap, bool post_validation,
                 const py::object& progress) {
    SearchOptions options;
    options.devices = devices;
    options.microbatches = microbatches;
    options.memory_limit = memory_limit;
    options.costs = PassCosts{costs[0], costs[1], costs[2]};
    options.comm_latency = comm;
    options.mem_w_ratio = mem_w_ratio;
    analysis::PipelineSpec spec;
    spec.costs.passes = {options.costs};
    spec.costs.mem_w_ratio = options.mem_w_ratio;
    spec.comm_latency = options.comm_latency;
    spec.all_to_all = all_to_all;
    spec.fb_overlap = fb_overlap;
    return run_search(options, spec, 0, post_validation, progress);
}

// Below one MiB a cap in bytes is a unit mistaken, not a device.
constexpr double mib_cap_floor = 1024.0 * 1024.0;

// With a model (`d` as analyze's, its schedule unused): a cap of `cap` bytes per device, a
// number or a size with a unit ("80GiB").
py::tuple search_model(const py::dict& d, const py::object& cap, bool post_validation,
                       const py::object& progress) {
    const analysis::PipelineSpec spec = spec_from_dict(d);
    double cap_bytes = 0;
    if (py::isinstance<py::str>(cap)) {
        const std::string text = cap.cast<std::string>();
        std::optional<double> bytes;
        try {
            bytes = models::parse_byte_size(text);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(fmt::format("mem_limit: {}", e.what()));
        }
        if (!bytes)  // a plain number as text (parse_byte_size refuses sizes of 0 and below)
            throw std::invalid_argument(fmt::format(
                "mem_limit: expected bytes above 0 or a size such as '80GiB', got '{}'", text));
        cap_bytes = *bytes;
    } else {
        cap_bytes = cap.cast<double>();
        if (!(cap_bytes > 0) || !std::isfinite(cap_bytes))
            throw std::invalid_argument(
                fmt::format("mem_limit: expected bytes above 0, got {:g}", cap_bytes));
        // A number that small was meant in M_B (as without a model) or in GiB: say so rather
        // than that the weights do not fit in it.
        if (cap_bytes < mib_cap_floor)
            throw std::invalid_argument(fmt::format(
                "mem_limit={:g}: with a model the cap is in bytes, and {:g} bytes holds no "
                "model; give bytes (e.g. 80 * 2**30) or a size such as '80GiB'",
                cap_bytes, cap_bytes));
    }
    SearchOptions options;
    options.devices = spec.generator.devices;
    options.microbatches = spec.generator.microbatches;
    options.comm_latency = spec.comm_latency;
    return run_search(options, spec, cap_bytes, post_validation, progress);
}

py::list schedule_names() {
    py::list names;
    for (const ScheduleGenerator& g : schedule_generators())
        names.append(py::make_tuple(std::string(g.name), std::string(g.description),
                                    g.default_chunks, g.min_chunks, g.max_chunks));
    return names;
}

}  // namespace

}  // namespace pipesim::python

PYBIND11_MODULE(_pipesim, m) {
    using namespace pipesim;
    using namespace pipesim::python;
    m.doc() = "pipesim's compiled core; use the `pipesim` package.";
    m.attr("__version__") = PIPESIM_VERSION;
    py::register_exception_translator(&translate_exception);

    py::class_<Schedule> schedule_class(
        m, "Schedule",
        "A pipeline schedule: each device's order of passes (F, B, W, or BW where backward is\n"
        "not split) over microbatches and stages. Comes from Result.to_schedule(),\n"
        "Schedule.load() or Schedule.from_json(); runs with pipesim.analyze(schedule, ...).\n"
        "Equal schedules compare equal and hash alike; they pickle and copy.");
    schedule_class
        .def_readonly("name", &Schedule::name,
                      "the schedule's name (a registered one, or a file's)")
        .def_readonly("devices", &Schedule::devices, "p: pipeline devices")
        .def_readonly("microbatches", &Schedule::microbatches, "m: microbatches per iteration")
        .def_readonly("chunks", &Schedule::chunks, "v: stages (model chunks) per device")
        .def_readonly("stage_device", &Schedule::stage_device,
                      "the device of each of the p·v stages, by stage")
        .def_property_readonly(
            "device_ops", &device_ops,
            "per device, its ops in order as (pass, microbatch, stage) tuples, e.g.\n"
            "(\"F\", 0, 0); pass is \"F\", \"B\", \"W\" or \"BW\"")
        .def_property_readonly("op_count", &Schedule::op_count, "the ops of all devices")
        .def("to_json", &schedule_to_json, "the schedule as pipesim schedule JSON text")
        .def_static(
            "from_json",
            [](const py::object& text, const py::object& source) {
                return parse_schedule_json(text_argument(text, "text"),
                                           text_argument(source, "source"));
            },
            py::arg("text"), py::arg("source") = "<string>",
            "A schedule from pipesim schedule JSON text; `source` names it in errors\n"
            "(ValueError, as 'source:line:column: ...').")
        .def_static(
            "load",
            [](const py::object& path) { return read_schedule_file(path_argument(path, "path")); },
            py::arg("path"),
            "A schedule file (str or pathlib.Path): pipesim JSON (.json) or a PyTorch\n"
            "pipelining CSV (.csv). A bad file raises ValueError naming it (and the line\n"
            "for bad content).")
        .def(
            "save",
            [](const Schedule& s, const py::object& path) {
                const std::string file = path_argument(path, "path");
                write_schedule_file(s, file);
                if (const std::string lost = schedule_file_loss(s, file); !lost.empty())
                    py::module_::import("warnings")
                        .attr("warn")(lost, py::module_::import("pipesim").attr("PipesimWarning"),
                                      1);  // the caller's line: this function has no frame
            },
            py::arg("path"),
            "Writes the schedule by the file's extension: .json (pipesim JSON) or .csv\n"
            "(PyTorch pipelining), whole or not at all; a PipesimWarning says what .csv\n"
            "cannot hold.")
        .def(py::self == py::self)
        .def("__hash__", &schedule_hash)
        .def("__repr__",
             [](const Schedule& s) {
                 return fmt::format("<pipesim.Schedule {} p={} m={} v={}: {} ops>", s.name,
                                    s.devices, s.microbatches, s.chunks, s.op_count());
             })
        // Pickled and copied as its JSON, rebuilt by the package's _schedule_from_pickle (not
        // py::pickle, whose unpickling goes through the __new__ refused below; not from_json,
        // which pickle cannot name).
        .def("__reduce__", [](const Schedule& s) {
            return py::make_tuple(py::module_::import("pipesim").attr("_schedule_from_pickle"),
                                  py::make_tuple(schedule_to_json(s)));
        });
    refuse_python_new(schedule_class,
                      "come from Result.to_schedule(), Schedule.load() or "
                      "Schedule.from_json()");

    py::class_<RunData> run_class(m, "Run");
    run_class
        .def_readonly("json", &RunData::json)
        // Pickled and copied as the result JSON, the schedule JSON and the timeline with its
        // memory model as bytes (timeline_bytes.hpp; the saved-timeline JSON of a 2-million-op
        // run took 44 s to read back), rebuilt by the package's _run_from_pickle.
        .def("__reduce__",
             [](RunData& r) {
                 return py::make_tuple(
                     py::module_::import("pipesim").attr("_run_from_pickle"),
                     py::make_tuple(r.json, schedule_to_json(r.schedule),
                                    py::bytes(timeline_bytes(recorded(r), r.memory))));
             })
        .def_readonly("schedule", &RunData::schedule)
        .def_property_readonly("time_unit", [](const RunData& r) { return r.timeline.time_unit; })
        .def("op_arrays", [](RunData& r) { return op_arrays(recorded(r)); })
        .def("op_tuples", [](RunData& r) { return op_tuples(recorded(r)); })
        .def("transfer_arrays", [](RunData& r) { return transfer_arrays(recorded(r)); })
        .def("memory_curve", &memory_curve, py::arg("device"))
        .def("svg", &timeline_svg, py::arg("memory") = true, py::arg("transfers") = false,
             py::arg("critical_path") = false, py::arg("width") = 0.0);
    refuse_python_new(run_class, "are made by pipesim.analyze() and pipesim.simulate()");

    m.def("run_from_texts", [](const py::object& json, const py::object& schedule,
                               const py::object& timeline) {
        // The timeline as bytes; as saved-timeline JSON text in pickles of earlier versions.
        if (py::isinstance<py::bytes>(timeline))
            return run_from_texts(text_argument(json, "json"), text_argument(schedule, "schedule"),
                                  timeline.cast<std::string>(), /*timeline_is_bytes=*/true);
        return run_from_texts(text_argument(json, "json"), text_argument(schedule, "schedule"),
                              text_argument(timeline, "timeline"));
    });
    m.def("analyze", &analyze);
    m.def("simulate", &simulate);
    m.def("compare", &compare);
    m.def("search", &search);
    m.def("search_model", &search_model);
    m.def("schedule_names", &schedule_names);
    m.def("model_presets", &model_presets);
    m.def("gpu_presets", &gpu_presets);
    m.def("cluster_presets", &cluster_presets);
    m.def("graphviz_available", &viz::graphviz_available);
}
