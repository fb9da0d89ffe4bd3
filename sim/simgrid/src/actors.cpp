// The SimGrid engine's actors: one per pipeline device of every simulated replica, one
// gradient reducer per pipeline device when there are replicas to reduce over.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine_state.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/op_dependencies.hpp"

namespace pipesim::simgrid::detail {

namespace sg = ::simgrid::s4u;

std::size_t EngineState::pair_index(int src, int dst) const {
    const auto it = std::lower_bound(pairs.begin(), pairs.end(), std::pair{src, dst});
    return static_cast<std::size_t>(it - pairs.begin());
}

FlowSet EngineState::data_parallel_flows(std::string name) const {
    return FlowSet(std::move(name), helper_mode, helper_cap);
}

RingCollective EngineState::collective(const std::vector<std::vector<int>>& gpu_rings,
                                       FlowSet flows) const {
    std::vector<std::vector<sg::Host*>> rings;
    std::vector<std::vector<double>> scale;
    for (const auto& ring : gpu_rings) {
        rings.emplace_back();
        scale.emplace_back();
        for (std::size_t k = 0; k < ring.size(); ++k) {
            const int next = ring[(k + 1) % ring.size()];
            rings.back().push_back(hosts[static_cast<std::size_t>(ring[k])]);
            scale.back().push_back(
                ring[k] / gpus_per_node == next / gpus_per_node ? intra_node_scale : 1.0);
        }
    }
    return RingCollective(std::move(rings), std::move(scale), std::move(flows), gpu_rings);
}

void EngineState::op_done() {
    ++ops_done;
    if (!options.progress || ops_done % 256 != 0) return;
    using namespace std::chrono;
    const auto now = steady_clock::now();
    if (now - started < seconds(1) || now - last_report < milliseconds(500)) return;
    last_report = now;
    options.progress(SimProgress{sg::Engine::get_clock(), expected_time, ops_done, ops_total});
}

void EngineState::collective_starting(std::size_t flows) const {
    if (!options.progress || flows < large_collective_flows) return;
    options.progress(
        SimProgress{sg::Engine::get_clock(), expected_time, ops_done, ops_total, flows});
}

CpRing::CpRing(const EngineState& state, int replica, int device, FlowSet flows)
    : work_(state.workload.cp_ring), cp_(state.layout.cp), collectives_(state.collectives) {
    if (cp_ < 2 || work_.layers.empty() || !(work_.block_bytes > 0)) return;
    std::vector<std::vector<int>> rings;
    for (int t = 0; t < state.layout.tp; ++t) {
        rings.emplace_back();
        for (int c = 0; c < cp_; ++c)
            rings.back().push_back(gpu_index(state.layout, replica, device, t, c));
    }
    rings_ = state.collective(rings, std::move(flows));
}

double CpRing::bytes(Pass pass, int stage) const {
    if (!rings_ || pass == Pass::W) return 0;
    return work_.layers[static_cast<std::size_t>(stage)] * (cp_ - 1) * work_.block_bytes *
           (pass == Pass::F ? 1 : 2);
}

double CpRing::run(Pass pass, int stage, double compute, double slowdown) {
    if (!rings_ || pass == Pass::W) return 0;
    const int layers = work_.layers[static_cast<std::size_t>(stage)];
    const bool forward = pass == Pass::F;
    // Every layer's C − 1 steps in one flow set: each step moves a block (F) or a block and
    // its gradient (B), as one all-gather step of C such buffers moves one per member.
    const double step_bytes = work_.block_bytes * (forward ? 1 : 2);
    const double attention =
        (forward ? work_.attention_forward : work_.attention_backward) * slowdown;
    const double hidden = std::min(compute, layers * (cp_ - 1) * attention / cp_);
    const double start = sg::Engine::get_clock();
    rings_->run(CollectiveKind::all_gather, cp_ * step_bytes, layers, collectives_);
    const double moved = sg::Engine::get_clock() - start;
    if (hidden > moved) sg::this_actor::sleep_for(hidden - moved);
    return hidden;
}

void DeviceActor::operator()() {
    try {
        run();
    } catch (const std::exception& e) {
        if (s_.error.empty())
            s_.error = fmt::format("replica {} device {}: {}", replica_, device_, e.what());
    }
}

void DeviceActor::run() {
    const auto& ops = s_.schedule.device_ops[device_];
    const std::size_t index = static_cast<std::size_t>(replica_) * s_.layout.pp + device_;
    const double slowdown = s_.slowdown[index];
    std::vector<int> tp_group;
    for (int t = 0; t < s_.layout.tp; ++t)
        tp_group.push_back(gpu_index(s_.layout, replica_, device_, t));
    // Both rings run from this actor only, one after the other: one courier serves them.
    const FlowSet ring_flows =
        s_.couriers
            ? FlowSet(std::make_shared<Courier>(fmt::format("rings r{} d{}", replica_, device_)))
            : FlowSet();
    RingCollective tp_ring = s_.collective({tp_group}, ring_flows);
    // ZeRO-3: this device's parameters, all-gathered over its data-parallel rails before each
    // F and backward (fetch_parameters).
    const bool fetch = !s_.workload.param_fetch_bytes.empty() && s_.layout.dp > 1;
    const std::vector<std::vector<int>> dp_rings =
        fetch ? gradient_rings(s_.layout, device_, s_.gpus_per_node)
              : std::vector<std::vector<int>>{};
    const double dp_channels = static_cast<double>(dp_rings.size()) / s_.layout.tp;
    // Through the device's courier where it has one (it runs one collective after another
    // from this actor, as the rings do), even where the gather is large enough for helper
    // pairs of its own: llama3-405b at p 16, t 8, dp 64 (8 × 64 transfers a step and more)
    // took 15.4 s with those and 11.5 s through the courier.
    RingCollective dp_ring = s_.collective(
        dp_rings, s_.couriers
                      ? ring_flows
                      : s_.data_parallel_flows(fmt::format("fetch r{} d{}", replica_, device_)));
    const bool tp_overlap = s_.workload.tp_overlap > 0;
    CpRing cp_ring(s_, replica_, device_, ring_flows);
    // Replica 0 records its collectives beside its messages.
    const bool record = replica_ == 0 && s_.options.record_transfers;
    // The last op that produces weight gradients: the gradient reduction may start with it.
    std::size_t last_gradient = ops.empty() ? 0 : ops.size() - 1;
    for (std::size_t i = 0; i < ops.size(); ++i)
        if (ops[i].pass == Pass::W || ops[i].pass == Pass::BW) last_gradient = i;
    // DualPipe's F&B pairs (Schedule::fb_pairs): both inputs before the F, both outputs after
    // the backward, as the analytic replay times them (run back to back, nothing hidden).
    static const std::vector<int> no_pairs;
    const std::vector<int>& pairs =
        s_.schedule.fb_pairs.empty() ? no_pairs : s_.schedule.fb_pairs[device_];
    std::size_t next_pair = 0;
    bool in_pair = false;
    for (std::size_t k = 0; k < ops.size(); ++k) {
        const Op& op = ops[k];
        const bool pair_start =
            next_pair < pairs.size() && static_cast<std::size_t>(pairs[next_pair]) == k;
        double received = 0;
        if (pair_start) {
            received = wait_for_input(op) + wait_for_input(ops[k + 1]);
            ++next_pair;
        } else if (!in_pair) {
            received = wait_for_input(op);
        }
        // Megatron-LM's scatter/gather: each of the t GPUs received 1/t of a message; they
        // all-gather the whole of it inside the node before the op can use it.
        if (s_.layout.tp > 1 && received > 0) {
            const double before = sg::Engine::get_clock();
            tp_ring.run(CollectiveKind::all_gather, received * s_.layout.tp, 1, s_.collectives);
            if (record)  // what each GPU sends: (t − 1) of the ring's t steps of 1/t each
                s_.timeline->transfers.push_back(
                    Transfer{device_, device_, op, op,
                             received * ring_steps(CollectiveKind::all_gather, s_.layout.tp),
                             before, sg::Engine::get_clock(), TransferKind::tensor_parallel});
        }
        if (k == last_gradient) {
            const std::unique_lock lock(*s_.mutex);
            ++s_.last_gradient_started[device_];
            s_.changed->notify_all();
        }
        const double start = sg::Engine::get_clock();
        if (k == 0) s_.first_start[index] = start;
        double compute = s_.duration[static_cast<std::size_t>(op.stage) * pass_count +
                                     static_cast<std::size_t>(op.pass)] *
                         slowdown;
        // Collectives overlapped with the compute run first and shorten the compute's wait:
        // the all-gather fully (prefetched), the TP ones by tp_overlap of the shorter.
        if (fetch && op.pass != Pass::W) {
            fetch_parameters(dp_ring, s_.workload.param_fetch_bytes[op.stage] / dp_channels, k);
            compute = std::max(0.0, compute - (sg::Engine::get_clock() - start));
        }
        const double ring_start = sg::Engine::get_clock();
        compute -= cp_ring.run(op.pass, op.stage, compute, slowdown);
        if (const double ring_bytes = record ? cp_ring.bytes(op.pass, op.stage) : 0.0;
            ring_bytes > 0)
            s_.timeline->transfers.push_back(Transfer{device_, device_, op, op, ring_bytes,
                                                      ring_start, sg::Engine::get_clock(),
                                                      TransferKind::context_parallel});
        if (!tp_overlap && compute > 0) sg::this_actor::sleep_for(compute);
        if (s_.layout.tp > 1 && op.pass != Pass::W) {
            const int count = op.pass == Pass::F ? s_.workload.tp_allreduces_forward[op.stage]
                                                 : s_.workload.tp_allreduces_backward[op.stage];
            const double before = sg::Engine::get_clock();
            tp_ring.run(CollectiveKind::all_reduce, s_.workload.tp_allreduce_bytes[op.stage], count,
                        s_.collectives);
            if (record && count > 0)  // what each GPU sends: 2(t − 1) steps of 1/t each
                s_.timeline->transfers.push_back(Transfer{
                    device_, device_, op, op,
                    count * s_.workload.tp_allreduce_bytes[op.stage] *
                        ring_steps(CollectiveKind::all_reduce, s_.layout.tp) / s_.layout.tp,
                    before, sg::Engine::get_clock(), TransferKind::tensor_parallel});
            if (tp_overlap)
                compute -=
                    s_.workload.tp_overlap * std::min(compute, sg::Engine::get_clock() - before);
        }
        if (tp_overlap && compute > 0) sg::this_actor::sleep_for(compute);
        if (op.pass == Pass::F && s_.gather_pending[device_]) {  // its layers need them
            const double ready = sg::Engine::get_clock();
            std::unique_lock lock(*s_.mutex);
            while (s_.gather_pending[device_])
                s_.changed->wait(lock);
            double& exposed = s_.gather_exposed[device_];
            exposed = std::max(exposed, sg::Engine::get_clock() - ready);
        }
        const double end = sg::Engine::get_clock();
        if (replica_ == 0) s_.timeline->device_ops[device_].push_back(TimedOp{op, start, end});
        if (in_pair) send_output(ops[k - 1]);
        if (!pair_start) send_output(op);
        in_pair = pair_start;
        ++s_.progress[index];
        s_.op_done();
    }
    s_.finish[index] = sg::Engine::get_clock();
    {
        const std::unique_lock lock(*s_.mutex);
        ++s_.devices_done[device_];
        ++s_.all_done;
        s_.changed->notify_all();
    }
    close_sends(true);
}

void DeviceActor::fetch_parameters(RingCollective& rings, double bytes, std::size_t k) {
    if (s_.replicas == 1) {  // symmetric: the one simulated replica runs it
        rings.run(CollectiveKind::all_gather, bytes, 1, s_.collectives);
        return;
    }
    // Each replica running a share of the bytes on rings of its own, as this did before,
    // put D flows of every hop beside the one of a gradient reduction sharing the link, so
    // the gathers took D/(D + 1) of it instead of half: 3–7 % faster iterations than the
    // symmetric run (llama2-13b, 1F1B, p 4, m 8, t 8, dp 2–8, overlapped reduction), and
    // D² flows a gather.
    std::unique_lock lock(*s_.mutex);
    int& arrived = s_.fetch_arrived[device_][k];
    if (++arrived < s_.replicas) {
        while (arrived != EngineState::fetch_done)
            s_.fetch_moved[device_]->wait(lock);
        return;
    }
    lock.unlock();
    rings.run(CollectiveKind::all_gather, bytes, 1, s_.collectives);
    lock.lock();
    arrived = EngineState::fetch_done;
    s_.fetch_moved[device_]->notify_all();
}

// Whether `stage`'s backward for `microbatch` is split into B and W.
bool DeviceActor::split_at(int microbatch, int stage) const {
    return s_.split[static_cast<std::size_t>(microbatch) * s_.stages + stage] != 0;
}

// Waits for the inputs of `op` that come from another device (schedules' dependency rule).
double DeviceActor::wait_for_input(const Op& op) {
    double received = 0;
    const auto split = [&](int stage) { return split_at(op.microbatch, stage); };
    for_each_predecessor(op, s_.schedule.stages_of(op.microbatch), split, [&](const Op& input) {
        const int src = s_.schedule.stage_device[input.stage];
        if (src == device_) return;
        received += s_.workload.message_bytes[input.stage];
        const std::size_t slot = output_slot(input, s_.stages);
        auto& arrived = s_.arrived[replica_];
        const std::size_t channel_at = s_.channel_slot(replica_, src, device_);
        sg::Mailbox* channel = s_.channels[channel_at];
        const double latency = s_.channel_latency[channel_at];
        while (!arrived[slot]) {
            Message* message = nullptr;
            // A message of no bytes may get no network action (SimGrid 3.32 hands it over at
            // once where the permanent receiver asks as it is sent, and reports no finish
            // time): it still takes the route's latency from its sending. Whether it waited.
            const auto arrive = [&] {
                if (s_.workload.message_bytes[message->producer.stage] > 0) return false;
                const double due = message->sent + latency;
                if (!(sg::Engine::get_clock() < due)) return false;
                sg::this_actor::sleep_for(due - sg::Engine::get_clock());
                return true;
            };
            if (replica_ == 0 && s_.options.record_transfers) {
                sg::CommPtr comm = channel->get_async<Message>(&message);
                comm->wait();
                const bool waited = arrive();
                // With no network action SimGrid reports no finish time (-1): it arrived when
                // the wait returned.
                double finish = comm->get_finish_time();
                if (waited || !(finish >= message->sent)) finish = sg::Engine::get_clock();
                s_.timeline->transfers.push_back(
                    Transfer{src, device_, message->producer, message->consumer,
                             s_.workload.message_bytes[message->producer.stage], message->sent,
                             finish, TransferKind::pipeline});
            } else {
                message = channel->get<Message>();
                arrive();
            }
            arrived[message->slot] = 1;
        }
    });
    return received;
}

// Sends `op`'s output to the ops on other devices that wait for it (schedules' dependency
// rule): at most one, the next stage's F or the previous stage's backward.
void DeviceActor::send_output(const Op& op) {
    const auto split = [&](int stage) { return split_at(op.microbatch, stage); };
    for_each_successor(op, s_.schedule.stages_of(op.microbatch), split, [&](const Op& consumer) {
        const int dst = s_.schedule.stage_device[consumer.stage];
        if (dst == device_) return;
        const std::size_t slot = output_slot(op, s_.stages);
        Message& message = s_.messages[replica_][slot];
        message.slot = static_cast<std::uint32_t>(slot);
        message.producer = op;
        message.consumer = consumer;
        message.sent = sg::Engine::get_clock();
        const double bytes = s_.workload.message_bytes[op.stage];
        const std::size_t channel = s_.channel_slot(replica_, device_, dst);
        sg::CommPtr comm = s_.channels[channel]->put_init(
            &message, static_cast<std::uint64_t>(std::llround(bytes)));
        if (const double rate = s_.channel_rates[channel]; rate > 0) comm->set_rate(rate);
        comm->start();
        sending_.emplace_back(std::move(comm), slot);
    });
    close_sends(false);
}

void DeviceActor::close_sends(bool all) {
    // A message its receiver took has arrived, so waiting for its send returns at once; it
    // takes the send off this actor's list. At the end every send is waited for: an actor
    // that ends cancels the sends it still has.
    const auto& arrived = s_.arrived[replica_];
    const auto open = std::remove_if(sending_.begin(), sending_.end(), [&](const auto& send) {
        if (!all && !arrived[send.second]) return false;
        send.first->wait();
        return true;
    });
    sending_.erase(open, sending_.end());
}

void GradientReducer::operator()() {
    try {
        const std::vector<std::vector<int>> rings =
            gradient_rings(s_.layout, device_, s_.gpus_per_node);
        const double channels = static_cast<double>(rings.size()) / s_.layout.tp;
        RingCollective reduce =
            s_.collective(rings, s_.data_parallel_flows(fmt::format("reduce d{}", device_)));
        // The previous step's parameters, all-gathered beside the first forward.
        const bool gather_first = s_.gather_pending[device_] != 0;
        if (gather_first) {
            const double start = sg::Engine::get_clock();
            const double gather = s_.workload.param_gather_bytes[device_];
            s_.collective_starting(reduce.flow_count());
            reduce.run(CollectiveKind::all_gather, gather / channels, 1, s_.collectives);
            s_.timeline->transfers.push_back(Transfer{device_, device_, Op{}, Op{}, gather, start,
                                                      sg::Engine::get_clock(),
                                                      TransferKind::data_parallel});
            s_.gather_time[device_] = sg::Engine::get_clock() - start;
            const std::unique_lock lock(*s_.mutex);
            s_.gather_pending[device_] = 0;
            s_.changed->notify_all();
        }
        {
            std::unique_lock lock(*s_.mutex);
            const int total = s_.replicas * s_.layout.pp;
            // Post-validation: no pipeline-wide synchronization, so a device that is done
            // reduces without waiting for the others.
            while (s_.options.overlap_grad_reduce ? s_.last_gradient_started[device_] < s_.replicas
                   : s_.options.post_validation   ? s_.devices_done[device_] < s_.replicas
                                                  : s_.all_done < total)
                s_.changed->wait(lock);
        }
        const double start = sg::Engine::get_clock();
        const double bytes = s_.workload.gradient_bytes[device_];
        const double gather =
            s_.workload.param_gather_bytes.empty() ? 0.0 : s_.workload.param_gather_bytes[device_];
        if (!s_.workload.param_gather_bytes.empty()) {  // sharded: ZeRO-3 gathers no update
            s_.collective_starting(reduce.flow_count());
            reduce.run(CollectiveKind::reduce_scatter, bytes / channels, 1, s_.collectives);
            if (!gather_first)
                reduce.run(CollectiveKind::all_gather, gather / channels, 1, s_.collectives);
        } else if (s_.reduce_algorithm[device_] == NcclAlgo::tree) {
            TreeCollective tree(gradient_trees(s_.layout, device_, s_.gpus_per_node), s_.hosts,
                                s_.gpus_per_node, s_.intra_node_scale,
                                s_.data_parallel_flows(fmt::format("tree d{}", device_)));
            s_.collective_starting(tree.flow_count());
            tree.run(bytes / channels);
        } else {
            s_.collective_starting(reduce.flow_count());
            reduce.run(CollectiveKind::all_reduce, bytes / channels, 1, s_.collectives);
        }
        const double end = sg::Engine::get_clock();
        s_.reduce_end[device_] = end;
        s_.reduce_time[device_] = end - start;
        // Recorded whatever record_transfers says, as the analytic engine does: one or two
        // records a device, and what the picture and trace show past the makespan.
        s_.timeline->transfers.push_back(
            Transfer{device_, device_, Op{}, Op{}, bytes, start, end, TransferKind::data_parallel});
    } catch (const std::exception& e) {
        if (s_.error.empty())
            s_.error = fmt::format("gradient all-reduce of device {}: {}", device_, e.what());
    }
}

}  // namespace pipesim::simgrid::detail
