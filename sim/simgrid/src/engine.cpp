// The SimGrid engine: one actor per pipeline device of every replica, one gradient-reducer
// actor per pipeline device when there are replicas to reduce over.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <xbt/log.h>
#include <simgrid/s4u.hpp>

#include "platform.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim {

namespace sg = simgrid::s4u;

namespace {

std::atomic<bool> engine_used{false};

// A pipeline message: identifies the output it carries. One per output slot and replica,
// allocated before the run; the mailbox carries a pointer to it.
struct Message {
    std::uint32_t slot = 0;
    Op producer;
    Op consumer;
    double sent = 0;
};

struct Shared {
    Shared(const Schedule& sched, const SimWorkload& work, const Layout& lay,
           const SimOptions& opts)
        : schedule(sched), workload(work), layout(lay), options(opts) {}

    const Schedule& schedule;
    const SimWorkload& workload;
    const Layout& layout;
    const SimOptions& options;
    int stages = 0;
    std::vector<double> duration;            // pass_durations(workload.costs)
    std::vector<sg::Host*> hosts;            // by global GPU index
    std::vector<double> slowdown;            // per (replica·pp + device): time multiplier
    std::vector<std::uint8_t> split;         // per (microbatch, stage): backward split into B, W
    std::vector<std::pair<int, int>> pairs;  // (src device, dst device) that exchange data, sorted
    std::vector<sg::Mailbox*> channels;      // per (replica, pair)
    std::vector<std::vector<Message>> messages;      // per replica, per output slot
    std::vector<std::vector<std::uint8_t>> arrived;  // per replica, per output slot
    std::vector<std::size_t> progress;               // per (replica·pp + device): ops done
    std::vector<double> finish;                      // per (replica·pp + device)
    std::vector<int> devices_done;                   // per device: replicas finished
    int all_done = 0;
    sg::MutexPtr mutex;
    sg::ConditionVariablePtr changed;
    Timeline* timeline = nullptr;
    std::vector<double> reduce_end;
    std::string error;

    // Only pairs of devices that exchange data have a mailbox: src and dst must be one.
    sg::Mailbox* channel(int replica, int src, int dst) const {
        const auto it = std::lower_bound(pairs.begin(), pairs.end(), std::pair{src, dst});
        const auto pair = static_cast<std::size_t>(it - pairs.begin());
        return channels[static_cast<std::size_t>(replica) * pairs.size() + pair];
    }
    sg::Host* gpu(int replica, int device, int tp_rank) const {
        return hosts[gpu_index(layout, replica, device, tp_rank)];
    }
};

// Ring all-reduce of `bytes` on each ring: 2(n−1) steps, in each of which every member sends
// bytes/n to its successor (Patarasuk & Yuan, 2009). All rings advance together. `comms` is
// the caller's scratch buffer, reused so that repeated all-reduces (one or more per op with
// tensor parallelism) do not allocate.
void ring_allreduce(const std::vector<std::vector<sg::Host*>>& rings, double bytes,
                    std::vector<sg::CommPtr>& comms) {
    const std::size_t n = rings.empty() ? 0 : rings.front().size();
    if (n < 2) return;
    const auto chunk = static_cast<std::uint64_t>(std::llround(bytes / static_cast<double>(n)));
    comms.reserve(rings.size() * n);
    for (std::size_t step = 0; step < 2 * (n - 1); ++step) {
        comms.clear();
        for (const auto& ring : rings)
            for (std::size_t k = 0; k < n; ++k)
                comms.push_back(sg::Comm::sendto_async(ring[k], ring[(k + 1) % n], chunk));
        sg::Comm::wait_all(comms);
    }
}

class DeviceActor {
  public:
    DeviceActor(Shared& shared, int replica, int device)
        : s_(shared), replica_(replica), device_(device) {}

    void operator()() {
        try {
            run();
        } catch (const std::exception& e) {
            if (s_.error.empty())
                s_.error = fmt::format("replica {} device {}: {}", replica_, device_, e.what());
        }
    }

  private:
    void run() {
        const auto& ops = s_.schedule.device_ops[device_];
        const std::size_t index = static_cast<std::size_t>(replica_) * s_.layout.pp + device_;
        const double slowdown = s_.slowdown[index];
        std::vector<sg::Host*> tp_group;
        for (int t = 0; t < s_.layout.tp; ++t)
            tp_group.push_back(s_.gpu(replica_, device_, t));
        const std::vector<std::vector<sg::Host*>> tp_ring{tp_group};
        for (const Op& op : ops) {
            wait_for_input(op);
            const double start = sg::Engine::get_clock();
            const double compute = s_.duration[static_cast<std::size_t>(op.stage) * pass_count +
                                               static_cast<std::size_t>(op.pass)] *
                                   slowdown;
            if (compute > 0) sg::this_actor::sleep_for(compute);
            if (s_.layout.tp > 1 && op.pass != Pass::W) {
                const int count = op.pass == Pass::F ? s_.workload.tp_allreduces_forward[op.stage]
                                                     : s_.workload.tp_allreduces_backward[op.stage];
                for (int k = 0; k < count; ++k)
                    ring_allreduce(tp_ring, s_.workload.tp_allreduce_bytes[op.stage], comms_);
            }
            const double end = sg::Engine::get_clock();
            if (replica_ == 0) s_.timeline->device_ops[device_].push_back(TimedOp{op, start, end});
            send_output(op);
            ++s_.progress[index];
        }
        s_.finish[index] = sg::Engine::get_clock();
        const std::unique_lock lock(*s_.mutex);
        ++s_.devices_done[device_];
        ++s_.all_done;
        s_.changed->notify_all();
    }

    // The one input of `op` that may come from another device, if it does.
    void wait_for_input(const Op& op) {
        Op input;
        const StageRange range = s_.schedule.stages_of(op.microbatch);
        if (op.pass == Pass::F && op.stage > range.first) {
            input = Op{Pass::F, op.microbatch, op.stage - 1};
        } else if ((op.pass == Pass::B || op.pass == Pass::BW) && op.stage < range.last) {
            input = Op{Pass::B, op.microbatch, op.stage + 1};  // slot is the same for BW
        } else {
            return;
        }
        const int src = s_.schedule.stage_device[input.stage];
        if (src == device_) return;
        const std::size_t slot = output_slot(input, s_.stages);
        auto& arrived = s_.arrived[replica_];
        sg::Mailbox* channel = s_.channel(replica_, src, device_);
        while (!arrived[slot]) {
            Message* message = nullptr;
            if (replica_ == 0 && s_.options.record_transfers) {
                sg::CommPtr comm = channel->get_async<Message>(&message);
                comm->wait();
                s_.timeline->transfers.push_back(
                    Transfer{src, device_, message->producer, message->consumer,
                             s_.workload.message_bytes[message->producer.stage], message->sent,
                             comm->get_finish_time(), TransferKind::pipeline});
            } else {
                message = channel->get<Message>();
            }
            arrived[message->slot] = 1;
        }
    }

    void send_output(const Op& op) {
        int consumer_stage = -1;
        const StageRange range = s_.schedule.stages_of(op.microbatch);
        if (op.pass == Pass::F && op.stage < range.last) consumer_stage = op.stage + 1;
        if ((op.pass == Pass::B || op.pass == Pass::BW) && op.stage > range.first)
            consumer_stage = op.stage - 1;
        if (consumer_stage < 0) return;
        const int dst = s_.schedule.stage_device[consumer_stage];
        if (dst == device_) return;
        const std::size_t slot = output_slot(op, s_.stages);
        Message& message = s_.messages[replica_][slot];
        message.slot = static_cast<std::uint32_t>(slot);
        message.producer = op;
        const bool consumer_split =
            s_.split[static_cast<std::size_t>(op.microbatch) * s_.stages + consumer_stage];
        message.consumer = Op{op.pass == Pass::F ? Pass::F : (consumer_split ? Pass::B : Pass::BW),
                              op.microbatch, consumer_stage};
        message.sent = sg::Engine::get_clock();
        const double bytes = s_.workload.message_bytes[op.stage];
        s_.channel(replica_, device_, dst)
            ->put_init(&message, static_cast<std::uint64_t>(std::llround(bytes)))
            ->detach();
    }

    Shared& s_;
    int replica_;
    int device_;
    std::vector<sg::CommPtr> comms_;  // ring_allreduce's buffer, reused across ops
};

// All-reduces device `device`'s gradients across the replicas once they are all done (or,
// without overlap, once the whole pipeline of every replica is done).
class GradientReducer {
  public:
    GradientReducer(Shared& shared, int device) : s_(shared), device_(device) {}

    void operator()() {
        try {
            {
                std::unique_lock lock(*s_.mutex);
                const int total = s_.layout.dp * s_.layout.pp;
                while (s_.options.overlap_grad_reduce ? s_.devices_done[device_] < s_.layout.dp
                                                      : s_.all_done < total)
                    s_.changed->wait(lock);
            }
            std::vector<std::vector<sg::Host*>> rings(static_cast<std::size_t>(s_.layout.tp));
            for (int t = 0; t < s_.layout.tp; ++t)
                for (int r = 0; r < s_.layout.dp; ++r)
                    rings[t].push_back(s_.gpu(r, device_, t));
            const double start = sg::Engine::get_clock();
            const double bytes = s_.workload.gradient_bytes[device_] / s_.layout.tp;
            std::vector<sg::CommPtr> comms;
            ring_allreduce(rings, bytes, comms);
            const double end = sg::Engine::get_clock();
            s_.reduce_end[device_] = end;
            if (s_.options.record_transfers)
                s_.timeline->transfers.push_back(Transfer{device_, device_, Op{}, Op{},
                                                          s_.workload.gradient_bytes[device_],
                                                          start, end, TransferKind::data_parallel});
        } catch (const std::exception& e) {
            if (s_.error.empty())
                s_.error = fmt::format("gradient all-reduce of device {}: {}", device_, e.what());
        }
    }

  private:
    Shared& s_;
    int device_;
};

void check_workload(const SimWorkload& w, const Schedule& schedule) {
    const int stages = schedule.stages();
    check_stage_costs(w.costs, stages);
    auto check_size = [&](std::size_t size, std::size_t expected, const char* what) {
        if (size != expected)
            throw std::invalid_argument(
                fmt::format("workload has {} {} entries, expected {}", size, what, expected));
    };
    check_size(w.message_bytes.size(), static_cast<std::size_t>(stages), "message_bytes");
    check_size(w.tp_allreduces_forward.size(), static_cast<std::size_t>(stages),
               "tp_allreduces_forward");
    check_size(w.tp_allreduces_backward.size(), static_cast<std::size_t>(stages),
               "tp_allreduces_backward");
    check_size(w.tp_allreduce_bytes.size(), static_cast<std::size_t>(stages), "tp_allreduce_bytes");
    check_size(w.gradient_bytes.size(), static_cast<std::size_t>(schedule.devices),
               "gradient_bytes");
    auto check_bytes = [](const std::vector<double>& values, const char* what) {
        for (std::size_t i = 0; i < values.size(); ++i)
            if (!std::isfinite(values[i]) || values[i] < 0 || values[i] > 1e15)
                throw std::invalid_argument(fmt::format(
                    "workload {}[{}] = {} is not a byte count in 0..1e15", what, i, values[i]));
    };
    check_bytes(w.message_bytes, "message_bytes");
    check_bytes(w.tp_allreduce_bytes, "tp_allreduce_bytes");
    check_bytes(w.gradient_bytes, "gradient_bytes");
}

// The (src, dst) device pairs that exchange pipeline messages, both directions, sorted:
// the devices of adjacent stages (a microbatch's stages are a contiguous range).
std::vector<std::pair<int, int>> device_pairs(const Schedule& schedule) {
    std::set<std::pair<int, int>> pairs;
    for (int s = 0; s + 1 < schedule.stages(); ++s) {
        const int a = schedule.stage_device[s];
        const int b = schedule.stage_device[s + 1];
        if (a == b) continue;
        pairs.emplace(a, b);
        pairs.emplace(b, a);
    }
    return {pairs.begin(), pairs.end()};
}

// Every GPU pair that exchanges data: pipeline neighbours, TP rings, DP rings.
std::vector<std::pair<int, int>> communicating_pairs(const Schedule& schedule, const Layout& l) {
    std::set<std::pair<int, int>> pairs;
    const std::vector<std::pair<int, int>> devices = device_pairs(schedule);
    for (int r = 0; r < l.dp; ++r) {
        for (const auto& [a, b] : devices)
            pairs.emplace(gpu_index(l, r, a, 0), gpu_index(l, r, b, 0));
        for (int d = 0; d < l.pp; ++d)
            for (int t = 0; t < l.tp && l.tp > 1; ++t)
                pairs.emplace(gpu_index(l, r, d, t), gpu_index(l, r, d, (t + 1) % l.tp));
    }
    if (l.dp > 1)
        for (int d = 0; d < l.pp; ++d)
            for (int t = 0; t < l.tp; ++t)
                for (int r = 0; r < l.dp; ++r)
                    pairs.emplace(gpu_index(l, r, d, t), gpu_index(l, (r + 1) % l.dp, d, t));
    return {pairs.begin(), pairs.end()};
}

// Each node's compute speed relative to the costs: its group's entry of `group_speeds`, or
// without them the group's own speed (1 where unset).
std::vector<double> node_speeds(const ClusterSpec& cluster,
                                const std::vector<double>& group_speeds) {
    if (!group_speeds.empty() && group_speeds.size() != cluster.nodes.size())
        throw std::invalid_argument(fmt::format("workload has {} group_speeds entries, expected {}",
                                                group_speeds.size(), cluster.nodes.size()));
    std::vector<double> speeds;
    for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
        const NodeGroup& g = cluster.nodes[i];
        const double speed = !group_speeds.empty() ? group_speeds[i] : g.speed > 0 ? g.speed : 1.0;
        if (!(speed > 0 && std::isfinite(speed)))
            throw std::invalid_argument(fmt::format(
                "node group {} ({}): speed must be a finite number > 0, got {}", i, g.gpu, speed));
        speeds.insert(speeds.end(), static_cast<std::size_t>(g.count), speed);
    }
    return speeds;
}

}  // namespace

SimWorkload simple_workload(const StageCosts& costs, int devices, double message_bytes,
                            double gradient_bytes) {
    const std::size_t stages = costs.stages();
    return SimWorkload{costs,
                       std::vector<double>(stages, message_bytes),
                       std::vector<int>(stages, 0),
                       std::vector<int>(stages, 0),
                       std::vector<double>(stages, 0.0),
                       std::vector<double>(static_cast<std::size_t>(devices), gradient_bytes)};
}

SimResult simulate(const Schedule& schedule, const SimWorkload& workload,
                   const ClusterSpec& cluster, const Layout& requested_layout,
                   const SimOptions& options) {
    require_valid(schedule);
    check_workload(workload, schedule);
    check_cluster(cluster);
    Layout layout = requested_layout;
    if (layout.pp != schedule.devices)
        throw std::invalid_argument(fmt::format(
            "layout has pp = {} but the schedule has {} devices", layout.pp, schedule.devices));
    check_layout(layout, cluster);
    const std::vector<double> group_speeds = node_speeds(cluster, workload.group_speeds);
    if (!(options.bandwidth_scale > 0 && std::isfinite(options.bandwidth_scale)) ||
        !(options.latency_scale >= 0 && std::isfinite(options.latency_scale)))
        throw std::invalid_argument("bandwidth scale must be > 0 and latency scale ≥ 0");
    for (const auto& [gpu, factor] : options.stragglers) {
        if (gpu < 0 || gpu >= layout.gpus())
            throw std::invalid_argument(
                fmt::format("straggler GPU {} is not one of the {} GPUs in use (0..{})", gpu,
                            layout.gpus(), layout.gpus() - 1));
        if (!(factor > 0 && std::isfinite(factor)))
            throw std::invalid_argument(
                fmt::format("straggler GPU {}: factor must be a number > 0, got {}", gpu, factor));
    }
    if (engine_used.exchange(true))
        throw std::logic_error("SimGrid allows one simulation per process; this one has run");

    // Quiet SimGrid's informational logging; problems are reported through our errors.
    xbt_log_control_set("root.thres:critical");
    sg::Engine engine("pipesim");

    const int p = layout.pp;
    const int stages = schedule.stages();
    Shared s(schedule, workload, layout, options);
    s.stages = stages;
    s.duration = pass_durations(workload.costs);
    s.hosts = detail::build_platform(cluster, layout.gpus(), communicating_pairs(schedule, layout),
                                     {options.bandwidth_scale, options.latency_scale});

    std::vector<double> gpu_slowdown(static_cast<std::size_t>(layout.gpus()), 1.0);
    for (int g = 0; g < layout.gpus(); ++g)
        gpu_slowdown[g] = 1.0 / group_speeds[g / cluster.gpus_per_node];
    for (const auto& [gpu, factor] : options.stragglers)
        gpu_slowdown[gpu] *= factor;
    s.slowdown.assign(static_cast<std::size_t>(layout.dp * p), 1.0);
    for (int r = 0; r < layout.dp; ++r)
        for (int d = 0; d < p; ++d) {
            double slowest = 0;  // a TP group runs at its slowest GPU's pace
            for (int t = 0; t < layout.tp; ++t)
                slowest = std::max(slowest, gpu_slowdown[gpu_index(layout, r, d, t)]);
            s.slowdown[static_cast<std::size_t>(r) * p + d] = slowest;
        }

    s.split = split_backward_flags(schedule);

    const std::size_t slots = output_slot_count(schedule.microbatches, stages);
    s.messages.assign(static_cast<std::size_t>(layout.dp), std::vector<Message>(slots));
    s.arrived.assign(static_cast<std::size_t>(layout.dp), std::vector<std::uint8_t>(slots, 0));
    s.progress.assign(static_cast<std::size_t>(layout.dp * p), 0);
    s.finish.assign(static_cast<std::size_t>(layout.dp * p), 0.0);
    s.devices_done.assign(static_cast<std::size_t>(p), 0);
    s.reduce_end.assign(static_cast<std::size_t>(p), 0.0);
    s.mutex = sg::Mutex::create();
    s.changed = sg::ConditionVariable::create();

    SimResult result;
    Timeline& timeline = result.timeline;
    timeline = empty_timeline(schedule, "s");
    // Each F, B or BW has at most one input from another device (W has none), plus one
    // gradient all-reduce per device.
    if (options.record_transfers)
        timeline.transfers.reserve(schedule.op_count() + static_cast<std::size_t>(p));
    s.timeline = &timeline;

    s.pairs = device_pairs(schedule);
    s.channels.reserve(static_cast<std::size_t>(layout.dp) * s.pairs.size());
    std::vector<sg::ActorPtr> actors;
    for (int r = 0; r < layout.dp; ++r)
        for (int d = 0; d < p; ++d)
            actors.push_back(sg::Actor::create(fmt::format("r{}d{}", r, d), s.gpu(r, d, 0),
                                               DeviceActor(s, r, d)));
    // Receivers listen permanently, so a message starts moving as soon as it is sent (the
    // receiving side prefetches) rather than when the receiver asks for it.
    for (int r = 0; r < layout.dp; ++r)
        for (const auto& [src, dst] : s.pairs) {
            sg::Mailbox* mailbox = sg::Mailbox::by_name(fmt::format("r{}:{}>{}", r, src, dst));
            mailbox->set_receiver(actors[static_cast<std::size_t>(r) * p + dst]);
            s.channels.push_back(mailbox);
        }
    const bool reduce = layout.dp > 1;
    if (reduce)
        for (int d = 0; d < p; ++d)
            if (workload.gradient_bytes[d] > 0)
                sg::Actor::create(fmt::format("reduce{}", d), s.gpu(0, d, 0),
                                  GradientReducer(s, d));

    engine.run();
    for (sg::Mailbox* mailbox : s.channels)
        mailbox->set_receiver(nullptr);

    if (!s.error.empty()) throw std::runtime_error(s.error);
    std::string waiting;
    for (int r = 0; r < layout.dp; ++r)
        for (int d = 0; d < p; ++d) {
            const std::size_t done = s.progress[static_cast<std::size_t>(r) * p + d];
            if (done < schedule.device_ops[d].size())
                waiting += fmt::format("{}replica {} device {} at position {} ({})",
                                       waiting.empty() ? "" : "; ", r, d, done,
                                       to_string(schedule.device_ops[d][done]));
        }
    if (!waiting.empty())
        throw std::runtime_error("the simulation stopped with devices still waiting: " + waiting);

    result.ops_simulated = schedule.op_count() * static_cast<std::size_t>(layout.dp);
    result.gpus_used = layout.gpus();
    result.replica_makespan.assign(static_cast<std::size_t>(layout.dp), 0.0);
    for (int r = 0; r < layout.dp; ++r)
        for (int d = 0; d < p; ++d)
            result.replica_makespan[r] =
                std::max(result.replica_makespan[r], s.finish[static_cast<std::size_t>(r) * p + d]);
    result.iteration_time =
        *std::max_element(result.replica_makespan.begin(), result.replica_makespan.end());
    for (const Transfer& t : timeline.transfers)
        if (t.kind == TransferKind::data_parallel)
            result.grad_reduce_time = std::max(result.grad_reduce_time, t.end - t.start);
    for (double end : s.reduce_end)
        result.iteration_time = std::max(result.iteration_time, end);
    return result;
}

}  // namespace pipesim
