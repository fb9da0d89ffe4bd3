// The SimGrid engine: checks, the platform, the actors (actors.cpp) and the result. Built into
// the engine plugin (plugin.cpp), which simulate() loads.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <xbt/log.h>
#include <simgrid/s4u.hpp>

#include "engine.hpp"
#include "engine_state.hpp"
#include "fileio/memory_budget.hpp"
#include "memory.hpp"
#include "platform.hpp"
#include "routes.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"
#include "setup.hpp"
#include "sim/replay.hpp"
#include "symmetry.hpp"

namespace pipesim::simgrid {

namespace sg = ::simgrid::s4u;
using detail::EngineState;

namespace {

std::atomic<bool> engine_used{false};

// Per (replica, device): the time multiplier of the device's TP and CP group, which runs at
// its slowest GPU's pace.
std::vector<double> device_slowdowns(const ClusterSpec& cluster, const Layout& layout,
                                     const std::vector<double>& speeds, const SimOptions& options) {
    std::vector<double> gpu_slowdown(static_cast<std::size_t>(layout.gpus()), 1.0);
    for (int g = 0; g < layout.gpus(); ++g)
        gpu_slowdown[g] = 1.0 / speeds[g / cluster.gpus_per_node];
    for (const auto& [gpu, factor] : options.stragglers)
        gpu_slowdown[gpu] *= factor;
    std::vector<double> slowdown(static_cast<std::size_t>(layout.dp * layout.pp), 1.0);
    for (int r = 0; r < layout.dp; ++r)
        for (int d = 0; d < layout.pp; ++d) {
            double slowest = 0;
            for (int t = 0; t < layout.tp; ++t)
                for (int c = 0; c < layout.cp; ++c)
                    slowest = std::max(slowest, gpu_slowdown[gpu_index(layout, r, d, t, c)]);
            slowdown[static_cast<std::size_t>(r) * layout.pp + d] = slowest;
        }
    return slowdown;
}

// The transfers replica 0 records: per op its input from another device (W has none), its
// tensor-parallel all-reduces and its K/V ring; per device its gradient reduction and its
// parameter all-gather.
std::size_t transfer_records(const Schedule& schedule, const Layout& layout) {
    const std::size_t per_op = 1 + (layout.tp > 1 ? 1 : 0) + (layout.cp > 1 ? 1 : 0);
    return per_op * schedule.op_count() + 2 * static_cast<std::size_t>(layout.pp);
}

// How the data-parallel collectives run their transfers (detail::FlowSet): the mode, the
// helper pairs one collective may take, and the most pairs alive at once.
struct HelperPlan {
    detail::FlowHelpers mode = detail::FlowHelpers::automatic;
    std::size_t cap = 0;
    std::size_t pairs = 0;
};

// Every collective that may run at once shares helper_pairs_in_all: a gradient reducer per
// device, and with ZeRO-3 one parameter gather per device. With `by_flows_in_flight`, all of
// them take helpers where they hold helpers_from_in_flight transfers in all.
HelperPlan plan_helpers(const ClusterSpec& cluster, const Layout& layout,
                        const SimWorkload& workload, const std::vector<NcclAlgo>& algorithms,
                        const SimOptions& options, bool by_flows_in_flight) {
    HelperPlan plan;
    plan.mode = !options.collective_helpers.has_value() ? detail::FlowHelpers::automatic
                : *options.collective_helpers           ? detail::FlowHelpers::always
                                                        : detail::FlowHelpers::never;
    const bool reducers = layout.dp * layout.cp > 1;
    const bool fetch = !workload.param_fetch_bytes.empty() && layout.dp > 1;
    const std::size_t p = static_cast<std::size_t>(layout.pp);
    // Per device, its reduction and one ZeRO-3 gather (one collective of all replicas:
    // DeviceActor::fetch_parameters) may run at once.
    const std::size_t concurrent = (reducers ? p : 0) + (fetch ? p : 0);
    plan.cap = std::max<std::size_t>(
        1, detail::helper_pairs_in_all / std::max<std::size_t>(1, concurrent));
    std::vector<std::size_t> flows;  // of each collective that may run at once
    for (int d = 0; d < layout.pp; ++d) {
        const auto count = [&](NcclAlgo algorithm) {
            return detail::gradient_flow_count(layout, d, cluster.gpus_per_node, algorithm);
        };
        if (reducers && !algorithms.empty())
            flows.push_back(
                count(workload.param_gather_bytes.empty() ? algorithms[d] : NcclAlgo::ring));
        if (fetch) flows.push_back(count(NcclAlgo::ring));
    }
    // Collectives below helpers_from transfers each but with helpers_from_in_flight in all
    // would all sit on SimGrid's engine-wide list of transfers at once.
    if (by_flows_in_flight && plan.mode == detail::FlowHelpers::automatic &&
        std::accumulate(flows.begin(), flows.end(), std::size_t{0}) >=
            detail::helpers_from_in_flight)
        plan.mode = detail::FlowHelpers::always;
    for (const std::size_t count : flows)
        plan.pairs += detail::flow_helpers(count, plan.mode, plan.cap);
    return plan;
}

// Whether the pipeline devices run their tensor- and context-parallel rings through couriers
// (detail::Courier): where all simulated devices' rings at once hold couriers_from transfers or
// more (as host-to-host transfers each would sit on SimGrid's engine-wide list; full mode
// simulates every replica), or always/never as SimOptions::collective_helpers says.
bool use_couriers(const Layout& layout, int replicas, bool fetch, const SimOptions& options) {
    std::size_t ring_flows = static_cast<std::size_t>(layout.tp) *
                             static_cast<std::size_t>(layout.cp > 1 ? layout.cp : 1);
    // ZeRO-3's parameter all-gather before each pass runs from the device too, over each TP
    // rank's data-parallel rail (dp GPUs, one ring per NIC or more): with it, llama3-405b at
    // p 16, t 8 grew as dp² (11 s at dp 32, over 50 s at 64) with no courier.
    if (fetch && layout.dp > 1)
        ring_flows = std::max(
            ring_flows, static_cast<std::size_t>(layout.tp) * static_cast<std::size_t>(layout.dp));
    if (ring_flows < 2 || options.collective_helpers == false) return false;
    return options.collective_helpers == true ||
           static_cast<std::size_t>(replicas) * static_cast<std::size_t>(layout.pp) * ring_flows >=
               detail::couriers_from;
}

// Refuses a run that cannot fit in memory, before SimGrid allocates any of it.
void check_run_size(const Schedule& schedule, const ClusterSpec& cluster, const Layout& layout,
                    int replicas, std::size_t routes, std::size_t helper_pairs, bool couriers,
                    const SimOptions& options, bool lower_bound = false) {
    const std::size_t p = static_cast<std::size_t>(layout.pp);
    const std::size_t devices = static_cast<std::size_t>(replicas) * p;
    detail::RunSize size;
    size.actors = devices + (layout.dp * layout.cp > 1 ? p : 0) + 2 * helper_pairs +
                  (couriers ? 2 * devices : 0);
    size.gpus = static_cast<std::size_t>(layout.gpus());
    size.routes = routes;
    // platform.cpp: zones of a few nodes, each a full zone of their GPUs; a fat tree's zones
    // in one full zone.
    const int per_zone = detail::nodes_per_zone * cluster.gpus_per_node + 1;
    const auto zones = static_cast<std::size_t>(
        detail::zone_of(cluster, (layout.gpus() - 1) / cluster.gpus_per_node) + 1);
    size.route_table_entries = zones * static_cast<std::size_t>(per_zone * per_zone);
    if (cluster.topology == InterNodeTopology::fat_tree) size.route_table_entries += zones * zones;
    size.links = 2 * size.gpus;
    size.message_slots = static_cast<std::size_t>(replicas) *
                         output_slot_count(schedule.microbatches, schedule.stages());
    size.timeline_ops = schedule.op_count();
    size.transfers = options.record_transfers ? transfer_records(schedule, layout) : 0;
    size.lower_bound = lower_bound;
    detail::check_memory(size, detail::estimate_memory(size));
}

// What progress reports count towards: the analytic replay's makespan with each F and B
// lengthened by its tensor-parallel all-reduces alone on the node's links, and each message
// taking the largest one's time alone through a NIC.
double expected_time(const Schedule& schedule, const SimWorkload& workload,
                     const ClusterSpec& cluster, const Layout& layout, const SimOptions& options) {
    StageCosts costs = workload.costs;
    const int steps = detail::ring_steps(detail::CollectiveKind::all_reduce, layout.tp);
    for (std::size_t s = 0; s < costs.stages() && steps > 0; ++s) {
        const double bandwidth = cluster.intra_node_collective_bandwidth > 0
                                     ? cluster.intra_node_collective_bandwidth
                                     : cluster.intra_node.bandwidth;
        const double one = steps * (cluster.intra_node.latency * options.latency_scale +
                                    workload.tp_allreduce_bytes[s] / layout.tp /
                                        (bandwidth * options.bandwidth_scale));
        costs.forward[s] += workload.tp_allreduces_forward[s] * one;
        costs.backward_input[s] += workload.tp_allreduces_backward[s] * one;
    }
    sim::ReplayOptions quick;
    quick.record_transfers = false;
    const double largest =
        *std::max_element(workload.message_bytes.begin(), workload.message_bytes.end());
    quick.comm_latency = cluster.nic.latency * options.latency_scale +
                         largest / (cluster.nic.bandwidth * options.bandwidth_scale);
    return replay(schedule, costs, quick).last_end();
}

// Lists the devices that did not reach the end of their ops, or "" if all did.
std::string waiting_devices(const EngineState& s) {
    std::string waiting;
    const int p = s.layout.pp;
    for (int r = 0; r < s.replicas; ++r)
        for (int d = 0; d < p; ++d) {
            const std::size_t done = s.progress[static_cast<std::size_t>(r) * p + d];
            if (done < s.schedule.device_ops[d].size())
                waiting += fmt::format("{}replica {} device {} at position {} ({})",
                                       waiting.empty() ? "" : "; ", r, d, done,
                                       to_string(s.schedule.device_ops[d][done]));
        }
    return waiting;
}

}  // namespace

SimResult detail::run_engine(const Schedule& schedule, const SimWorkload& workload,
                             const ClusterSpec& cluster, const Layout& layout,
                             const SimOptions& options) {
    require_valid(schedule);
    detail::check_workload(workload, schedule);
    check_cluster(cluster);
    if (layout.pp != schedule.devices)
        throw std::invalid_argument(fmt::format(
            "layout has pp = {} but the schedule has {} devices", layout.pp, schedule.devices));
    check_layout(layout, cluster);
    const std::vector<double> speeds = detail::node_speeds(cluster, workload.group_speeds);
    check_options(options, cluster, layout);

    const int p = layout.pp;
    const std::vector<double> slowdown = device_slowdowns(cluster, layout, speeds, options);
    const auto any = [](const std::vector<double>& bytes) {
        return std::any_of(bytes.begin(), bytes.end(), [](double b) { return b > 0; });
    };
    // Whether GPUs of different replicas (or context-parallel ranks) exchange bytes.
    const auto replica_collectives = [&any](const Layout& l, const SimWorkload& w) {
        return l.dp * l.cp > 1 &&
               (any(w.gradient_bytes) || any(w.param_gather_bytes) || any(w.param_fetch_bytes));
    };
    const std::vector<std::pair<int, int>> pairs = detail::device_pairs(schedule);
    // The least the run needs (one replica's actors and pipeline routes, no helpers) is
    // refused before the rest is worked out: the symmetry, the collectives' algorithms and
    // routes of 4,194,304 GPUs took 20 s before their run was refused for memory.
    check_run_size(schedule, cluster, layout, 1, pairs.size(), 0, false, options, true);
    const detail::SymmetryPlan symmetry = detail::plan_symmetry(
        cluster, layout, pairs, slowdown, options,
        layout.cp > 1 && !workload.cp_ring.layers.empty(), replica_collectives(layout, workload));
    const int replicas = symmetry.symmetric ? 1 : layout.dp;
    const std::vector<NcclAlgo> algorithms =
        detail::gradient_algorithms(cluster, layout, workload, options);
    const std::vector<std::pair<int, int>> routes =
        detail::communicating_pairs(pairs, layout, replicas, cluster.gpus_per_node, algorithms,
                                    replica_collectives(layout, workload));
    HelperPlan helpers = plan_helpers(cluster, layout, workload, algorithms, options, true);
    const bool fetch = any(workload.param_fetch_bytes);
    bool couriers = use_couriers(layout, replicas, fetch, options);
    const auto check_size = [&] {
        check_run_size(schedule, cluster, layout, replicas, routes.size(), helpers.pairs, couriers,
                       options);
    };
    try {
        check_size();
    } catch (const fileio::OverMemoryBudget&) {
        // The couriers, and helpers for collectives small on their own, only make the run
        // faster: without their actors it may fit.
        if (options.collective_helpers == true) throw;
        const HelperPlan lean = plan_helpers(cluster, layout, workload, algorithms, options, false);
        if (!couriers && lean.pairs == helpers.pairs) throw;
        couriers = false;
        helpers = lean;
        check_size();
    }
    if (options.check_only) return SimResult{};
    if (engine_used.exchange(true))
        throw std::logic_error("SimGrid allows one simulation per process; this one has run");

    // Quiet SimGrid's informational logging; problems are reported through our errors.
    xbt_log_control_set("root.thres:critical");
    // SimGrid's engine puts in its own Ctrl-C handler, which ends the process with exit
    // status 1 and not a word; the caller's (the command line's removes its temporary files,
    // then dies by the signal, status 130 in the shell) is put back at once, before the
    // platform is built (seconds on a large cluster) and the run.
    struct sigaction caller_interrupt {};
    ::sigaction(SIGINT, nullptr, &caller_interrupt);
    sg::Engine engine("pipesim");
    ::sigaction(SIGINT, &caller_interrupt, nullptr);
    sg::Engine::set_config(fmt::format("contexts/stack-size:{}", detail::actor_stack_kib));

    EngineState s(schedule, workload, layout, options);
    s.stages = schedule.stages();
    s.replicas = replicas;
    s.collectives = options.exact_collectives ? detail::CollectiveModel::steps
                                              : detail::CollectiveModel::flow_set;
    s.duration = pass_durations(workload.costs);
    s.hosts = detail::build_platform(
        cluster, layout.gpus(), routes,
        {options.bandwidth_scale, options.latency_scale, symmetry.link_sharing});
    s.slowdown = slowdown;
    s.slowdown.resize(static_cast<std::size_t>(replicas) * p);
    s.split = split_backward_flags(schedule);
    s.pairs = pairs;

    const std::size_t slots = output_slot_count(schedule.microbatches, s.stages);
    s.messages.assign(static_cast<std::size_t>(replicas), std::vector<detail::Message>(slots));
    s.arrived.assign(static_cast<std::size_t>(replicas), std::vector<std::uint8_t>(slots, 0));
    s.progress.assign(static_cast<std::size_t>(replicas) * p, 0);
    s.finish.assign(static_cast<std::size_t>(replicas) * p, 0.0);
    s.first_start.assign(s.finish.size(), 0.0);
    s.devices_done.assign(static_cast<std::size_t>(p), 0);
    s.last_gradient_started.assign(static_cast<std::size_t>(p), 0);
    s.gather_pending.assign(static_cast<std::size_t>(p), 0);
    s.gather_time.assign(static_cast<std::size_t>(p), 0.0);
    if (replicas > 1 && !workload.param_fetch_bytes.empty())
        for (int d = 0; d < p; ++d) {
            s.fetch_arrived.emplace_back(schedule.device_ops[d].size(), 0);
            s.fetch_moved.push_back(sg::ConditionVariable::create());
        }
    s.gather_exposed.assign(static_cast<std::size_t>(p), 0.0);
    if (options.overlap_param_gather && !workload.param_gather_bytes.empty() &&
        layout.dp * layout.cp > 1)
        for (int d = 0; d < p; ++d)
            s.gather_pending[d] =
                workload.gradient_bytes[d] > 0 && workload.param_gather_bytes[d] > 0 ? 1 : 0;
    s.gpus_per_node = cluster.gpus_per_node;
    s.helper_mode = helpers.mode;
    s.helper_cap = helpers.cap;
    s.couriers = couriers;
    if (cluster.intra_node_collective_bandwidth > 0)
        s.intra_node_scale = cluster.intra_node.bandwidth / cluster.intra_node_collective_bandwidth;
    s.reduce_end.assign(static_cast<std::size_t>(p), 0.0);
    s.reduce_time.assign(static_cast<std::size_t>(p), 0.0);
    s.reduce_algorithm = algorithms;
    s.mutex = sg::Mutex::create();
    s.changed = sg::ConditionVariable::create();
    s.ops_total = schedule.op_count() * static_cast<std::size_t>(replicas);
    if (options.progress) {
        s.expected_time = expected_time(schedule, workload, cluster, layout, options);
        s.started = s.last_report = std::chrono::steady_clock::now();
    }

    SimResult result;
    Timeline& timeline = result.timeline;
    timeline = empty_timeline(schedule, "s");
    if (options.record_transfers) timeline.transfers.reserve(transfer_records(schedule, layout));
    s.timeline = &timeline;

    std::vector<sg::ActorPtr> actors;
    for (int r = 0; r < replicas; ++r)
        for (int d = 0; d < p; ++d)
            actors.push_back(sg::Actor::create(fmt::format("r{}d{}", r, d), s.gpu(r, d, 0),
                                               detail::DeviceActor(s, r, d)));
    // Receivers listen permanently, so a message starts moving as soon as it is sent (the
    // receiving side prefetches) rather than when the receiver asks for it.
    // A message between two GPUs of one node moves at most at NCCL's send/receive rate.
    s.channels.reserve(static_cast<std::size_t>(replicas) * pairs.size());
    s.channel_rates.reserve(s.channels.capacity());
    s.channel_latency.reserve(s.channels.capacity());
    for (int r = 0; r < replicas; ++r)
        for (const auto& [src, dst] : pairs) {
            sg::Mailbox* mailbox = sg::Mailbox::by_name(fmt::format("r{}:{}>{}", r, src, dst));
            mailbox->set_receiver(actors[static_cast<std::size_t>(r) * p + dst]);
            s.channels.push_back(mailbox);
            const bool same_node = gpu_index(layout, r, src, 0) / cluster.gpus_per_node ==
                                   gpu_index(layout, r, dst, 0) / cluster.gpus_per_node;
            // --bw-scale scales this rate with the links it bounds.
            s.channel_rates.push_back(
                same_node ? cluster.intra_node_p2p_bandwidth * options.bandwidth_scale : 0.0);
            std::vector<sg::Link*> route;
            double latency = 0;
            s.gpu(r, src, 0)->route_to(s.gpu(r, dst, 0), route, &latency);
            s.channel_latency.push_back(latency);
        }
    if (layout.dp * layout.cp > 1)  // CP ranks hold the same weights: they reduce too
        for (int d = 0; d < p; ++d)
            if (workload.gradient_bytes[d] > 0)
                sg::Actor::create(fmt::format("reduce{}", d), s.gpu(0, d, 0),
                                  detail::GradientReducer(s, d));

    try {
        engine.run();
    } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("SimGrid failed: {}", e.what()));
    }
    for (sg::Mailbox* mailbox : s.channels)
        mailbox->set_receiver(nullptr);

    if (!s.error.empty()) throw std::runtime_error(s.error);
    if (const std::string waiting = waiting_devices(s); !waiting.empty())
        throw std::runtime_error("the simulation stopped with devices still waiting: " + waiting);

    result.mode = symmetry.symmetric ? SimMode::symmetric : SimMode::full;
    result.full_reason = symmetry.reason;
    result.ops_simulated = s.ops_total;
    result.gpus_used = layout.gpus();
    result.device_slowdown.assign(slowdown.begin(), slowdown.begin() + p);
    double speed_sum = 0;
    for (int g = 0; g < layout.gpus(); ++g)
        speed_sum += speeds[static_cast<std::size_t>(g / cluster.gpus_per_node)];
    result.mean_gpu_speed = speed_sum / layout.gpus();
    result.replica_makespan.assign(static_cast<std::size_t>(layout.dp), 0.0);
    for (int r = 0; r < layout.dp; ++r)
        for (int d = 0; d < p; ++d)
            result.replica_makespan[r] =
                std::max(result.replica_makespan[r],
                         s.finish[static_cast<std::size_t>(r % replicas) * p + d]);
    result.iteration_time =
        *std::max_element(result.replica_makespan.begin(), result.replica_makespan.end());
    result.grad_reduce_time = *std::max_element(s.reduce_time.begin(), s.reduce_time.end());
    result.grad_reduce_algorithms = algorithms;
    result.grad_reduce_end = s.reduce_end;
    result.param_gather_time = *std::max_element(s.gather_time.begin(), s.gather_time.end());
    result.param_gather_exposed =
        *std::max_element(s.gather_exposed.begin(), s.gather_exposed.end());
    for (double end : s.reduce_end)
        result.iteration_time = std::max(result.iteration_time, end);
    // Each simulated replica's window, not replica 0's alone: with a straggler in another
    // replica, post-validation's period came out shorter than that replica's iteration.
    result.device_window.assign(static_cast<std::size_t>(p), 0.0);
    for (int r = 0; r < replicas; ++r)
        for (int d = 0; d < p; ++d) {
            const auto at = static_cast<std::size_t>(r) * p + d;
            result.device_window[d] =
                std::max(result.device_window[d],
                         std::max(s.finish[at], s.reduce_end[d]) - s.first_start[at]);
        }
    return result;
}

}  // namespace pipesim::simgrid
