// The SimGrid engine's actors: one per pipeline device of every simulated replica, one
// gradient reducer per pipeline device when there are replicas to reduce over.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine_state.hpp"
#include "schedules/dependency_order.hpp"

namespace pipesim::detail {

namespace sg = simgrid::s4u;

std::size_t EngineState::pair_index(int src, int dst) const {
    const auto it = std::lower_bound(pairs.begin(), pairs.end(), std::pair{src, dst});
    return static_cast<std::size_t>(it - pairs.begin());
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
    std::vector<sg::Host*> tp_group;
    for (int t = 0; t < s_.layout.tp; ++t)
        tp_group.push_back(s_.gpu(replica_, device_, t));
    RingCollective tp_ring({tp_group});
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
            tp_ring.run(CollectiveKind::all_reduce, s_.workload.tp_allreduce_bytes[op.stage], count,
                        s_.collectives);
        }
        const double end = sg::Engine::get_clock();
        if (replica_ == 0) s_.timeline->device_ops[device_].push_back(TimedOp{op, start, end});
        send_output(op);
        ++s_.progress[index];
        s_.op_done();
    }
    s_.finish[index] = sg::Engine::get_clock();
    const std::unique_lock lock(*s_.mutex);
    ++s_.devices_done[device_];
    ++s_.all_done;
    s_.changed->notify_all();
}

// The one input of `op` that may come from another device, if it does.
void DeviceActor::wait_for_input(const Op& op) {
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

void DeviceActor::send_output(const Op& op) {
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

void GradientReducer::operator()() {
    try {
        {
            std::unique_lock lock(*s_.mutex);
            const int total = s_.replicas * s_.layout.pp;
            while (s_.options.overlap_grad_reduce ? s_.devices_done[device_] < s_.replicas
                                                  : s_.all_done < total)
                s_.changed->wait(lock);
        }
        std::vector<std::vector<sg::Host*>> rails(static_cast<std::size_t>(s_.layout.tp));
        for (int t = 0; t < s_.layout.tp; ++t)
            for (int r = 0; r < s_.layout.dp; ++r)
                rails[t].push_back(s_.gpu(r, device_, t));
        RingCollective reduce(std::move(rails));
        const double start = sg::Engine::get_clock();
        const double bytes = s_.workload.gradient_bytes[device_];
        reduce.run(CollectiveKind::all_reduce, bytes, 1, s_.collectives);
        const double end = sg::Engine::get_clock();
        s_.reduce_end[device_] = end;
        s_.reduce_time[device_] = end - start;
        if (s_.options.record_transfers)
            s_.timeline->transfers.push_back(Transfer{device_, device_, Op{}, Op{}, bytes, start,
                                                      end, TransferKind::data_parallel});
    } catch (const std::exception& e) {
        if (s_.error.empty())
            s_.error = fmt::format("gradient all-reduce of device {}: {}", device_, e.what());
    }
}

}  // namespace pipesim::detail
