#include "timeline_bytes.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "viz/chrome_trace.hpp"

namespace pipesim::python {

namespace {

constexpr std::string_view magic = "pipesim-timeline-bytes";
constexpr std::uint32_t version = 1;
constexpr double max_amount = 1e100;  // the saved-timeline reader's bound (timeline_file.cpp)

class Writer {
  public:
    template <typename T>
    void put(T value) {
        static_assert(std::is_trivially_copyable_v<T>);
        out_.append(reinterpret_cast<const char*>(&value), sizeof value);
    }
    void count(std::size_t n) { put(static_cast<std::uint64_t>(n)); }
    void text(std::string_view s) {
        count(s.size());
        out_ += s;
    }
    void op(const Op& o) {
        put(static_cast<std::uint8_t>(o.pass));
        put(o.microbatch);
        put(o.stage);
    }
    void doubles(const std::vector<double>& values) {
        count(values.size());
        for (double v : values)
            put(v);
    }
    void ints(const std::vector<int>& values) {
        count(values.size());
        for (int v : values)
            put(static_cast<std::int32_t>(v));
    }
    std::string take() { return std::move(out_); }

  private:
    std::string out_;
};

class Reader {
  public:
    Reader(std::string_view in, const std::string& source) : in_(in), source_(source) {}

    [[noreturn]] void fail(std::string_view what) const {
        throw std::invalid_argument(fmt::format("{}: {}", source_, what));
    }

    template <typename T>
    T get() {
        if (in_.size() < sizeof(T)) fail("cut short");
        T value;
        std::memcpy(&value, in_.data(), sizeof value);
        in_.remove_prefix(sizeof value);
        return value;
    }
    // A count of items of at least `item_bytes` each, which the bytes left must hold.
    std::size_t count(std::size_t item_bytes) {
        const auto n = get<std::uint64_t>();
        if (item_bytes > 0 && n > in_.size() / item_bytes) fail("cut short (a count too large)");
        return static_cast<std::size_t>(n);
    }
    std::string text() {
        const std::size_t n = count(1);
        std::string s(in_.substr(0, n));
        in_.remove_prefix(n);
        return s;
    }
    int index(int limit, std::string_view what) {
        const auto v = get<std::int32_t>();
        if (v < 0 || v >= limit) fail(fmt::format("{} {} out of range 0..{}", what, v, limit - 1));
        return v;
    }
    Op op(const Timeline& t) {
        Op o;
        const auto pass = get<std::uint8_t>();
        if (pass > static_cast<std::uint8_t>(Pass::BW)) fail(fmt::format("unknown pass {}", pass));
        o.pass = static_cast<Pass>(pass);
        o.microbatch = index(t.microbatches, "microbatch");
        o.stage = index(t.stages(), "stage");
        return o;
    }
    std::vector<double> doubles() {
        std::vector<double> values(count(sizeof(double)));
        for (double& v : values)
            v = amount("a memory figure");
        return values;
    }
    // A time, byte count or memory figure: finite and not negative, as the saved-timeline
    // reader takes them.
    double amount(std::string_view what) {
        const auto v = get<double>();
        if (!(v >= 0 && v <= max_amount)) fail(fmt::format("{} of {}", what, v));
        return v;
    }
    bool done() const { return in_.empty(); }

  private:
    std::string_view in_;
    const std::string& source_;
};

constexpr std::size_t op_bytes = 1 + 4 + 4;

}  // namespace

std::string timeline_bytes(const Timeline& t, const MemoryModel& memory) {
    Writer w;
    w.text(magic);
    w.put(version);
    w.text(t.schedule);
    w.text(t.time_unit);
    w.put(static_cast<std::int32_t>(t.devices));
    w.put(static_cast<std::int32_t>(t.microbatches));
    w.put(static_cast<std::int32_t>(t.chunks));
    w.ints(t.stage_device);
    w.count(t.microbatch_stages.size());
    for (const StageRange& r : t.microbatch_stages) {
        w.put(static_cast<std::int32_t>(r.first));
        w.put(static_cast<std::int32_t>(r.last));
    }
    w.count(t.fb_pairs.size());
    for (const std::vector<int>& pairs : t.fb_pairs)
        w.ints(pairs);
    w.count(t.device_ops.size());
    for (const std::vector<TimedOp>& ops : t.device_ops) {
        w.count(ops.size());
        for (const TimedOp& o : ops) {
            w.op(o.op);
            w.put(o.start);
            w.put(o.end);
        }
    }
    w.count(t.transfers.size());
    for (const Transfer& x : t.transfers) {
        w.put(static_cast<std::int32_t>(x.src_device));
        w.put(static_cast<std::int32_t>(x.dst_device));
        w.op(x.producer);
        w.op(x.consumer);
        w.put(x.bytes);
        w.put(x.start);
        w.put(x.end);
        w.put(static_cast<std::uint8_t>(x.kind));
    }
    w.doubles(memory.activation);
    w.doubles(memory.held_for_w);
    return w.take();
}

void timeline_from_bytes(std::string_view bytes, const std::string& source, Timeline& t,
                         MemoryModel& memory) {
    Reader r(bytes, source);
    if (r.text() != magic) r.fail("not a pipesim timeline in bytes");
    if (const auto v = r.get<std::uint32_t>(); v != version)
        r.fail(fmt::format("version {} of the timeline bytes, this pipesim reads {}", v, version));
    t = Timeline{};
    t.schedule = r.text();
    t.time_unit = r.text();
    if (!viz::known_time_unit(t.time_unit)) r.fail("an unknown time unit");
    t.devices = r.get<std::int32_t>();
    t.microbatches = r.get<std::int32_t>();
    t.chunks = r.get<std::int32_t>();
    if (t.devices < 1 || t.microbatches < 1 || t.chunks < 1 ||
        static_cast<std::int64_t>(t.devices) * t.chunks > std::int64_t{1} << 30)
        r.fail(fmt::format("a shape of p={} m={} v={}", t.devices, t.microbatches, t.chunks));
    const auto stages = static_cast<std::size_t>(t.stages());
    if (r.count(4) != stages) r.fail("stage_device: not one device per stage");
    for (std::size_t s = 0; s < stages; ++s)
        t.stage_device.push_back(r.index(t.devices, "device"));
    t.microbatch_stages.resize(r.count(8));
    if (!t.microbatch_stages.empty() &&
        t.microbatch_stages.size() != static_cast<std::size_t>(t.microbatches))
        r.fail("microbatch_stages: not one range per microbatch");
    for (StageRange& range : t.microbatch_stages) {
        range.first = r.index(t.stages(), "stage");
        range.last = r.index(t.stages(), "stage");
        if (range.last < range.first) r.fail("a stage range that ends before it starts");
    }
    t.fb_pairs.resize(r.count(8));
    if (!t.fb_pairs.empty() && t.fb_pairs.size() != static_cast<std::size_t>(t.devices))
        r.fail("fb_pairs: not one list per device");
    for (std::vector<int>& pairs : t.fb_pairs) {
        pairs.resize(r.count(4));
        for (int& position : pairs)
            position = r.index(std::numeric_limits<std::int32_t>::max(), "F&B pair position");
    }
    if (r.count(8) != static_cast<std::size_t>(t.devices)) r.fail("not one op list per device");
    t.device_ops.resize(stages / static_cast<std::size_t>(t.chunks));
    for (std::size_t d = 0; d < t.device_ops.size(); ++d) {
        std::vector<TimedOp>& ops = t.device_ops[d];
        ops.resize(r.count(op_bytes + 16));
        for (std::size_t i = 0; i < ops.size(); ++i) {
            TimedOp& o = ops[i];
            o.op = r.op(t);
            o.start = r.amount("a start");
            o.end = r.amount("an end");
            // As the saved-timeline reader: on its stage's device, in order, not overlapping.
            if (t.stage_device[static_cast<std::size_t>(o.op.stage)] != static_cast<int>(d))
                r.fail(fmt::format("{} is listed on device {}, which does not run its stage",
                                   to_string(o.op), d));
            if (o.end < o.start || (i > 0 && o.start < ops[i - 1].end))
                r.fail(fmt::format("{} on device {}: times out of order", to_string(o.op), d));
        }
        if (!t.fb_pairs.empty())
            for (int position : t.fb_pairs[d])
                if (static_cast<std::size_t>(position) + 1 >= ops.size())
                    r.fail(fmt::format("an F&B pair past device {}'s ops", d));
    }
    t.transfers.resize(r.count(8 + 2 * op_bytes + 24 + 1));
    for (Transfer& x : t.transfers) {
        x.src_device = r.index(t.devices, "device");
        x.dst_device = r.index(t.devices, "device");
        x.producer = r.op(t);
        x.consumer = r.op(t);
        x.bytes = r.amount("a transfer's bytes");
        x.start = r.amount("a start");
        x.end = r.amount("an end");
        if (x.end < x.start) r.fail("a transfer that ends before it starts");
        const auto kind = r.get<std::uint8_t>();
        if (kind > static_cast<std::uint8_t>(TransferKind::context_parallel))
            r.fail(fmt::format("unknown transfer kind {}", kind));
        x.kind = static_cast<TransferKind>(kind);
    }
    memory.activation = r.doubles();
    memory.held_for_w = r.doubles();
    if (memory.activation.size() != stages || memory.held_for_w.size() != stages)
        r.fail("the memory model: not one figure per stage");
    for (std::size_t s = 0; s < stages; ++s)
        if (memory.held_for_w[s] > memory.activation[s])
            r.fail("the memory model: a stage holds more for W than its activation");
    if (!r.done()) r.fail("bytes left over after the timeline");
}

}  // namespace pipesim::python
