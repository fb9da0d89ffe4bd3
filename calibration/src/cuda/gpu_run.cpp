// gpu_run(): a schedule's ops issued to one stream per pipeline device in the stream plan's
// order, every op and copy between two CUDA events.
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "calibration/gpu.hpp"
#include "calibration/stream_plan.hpp"
#include "cuda_check.hpp"
#include "layer_runner.hpp"
#include "measure.hpp"

namespace pipesim::calibration {

namespace {

using detail::check;

// The events of one run: per op start/end, per copy start/end, per lane its time origin.
struct RunEvents {
    std::vector<cudaEvent_t> op_start, op_end, copy_start, copy_end, origin;
};

RunEvents make_events(detail::Lanes& lanes, const StreamPlan& plan) {
    RunEvents e;
    for (const PlannedOp& op : plan.ops) {
        const auto lane = static_cast<std::size_t>(op.device);
        e.op_start.push_back(lanes.make_event(lane));
        e.op_end.push_back(lanes.make_event(lane));
        for (int k = 0; k < op.input_count; ++k) {
            e.copy_start.push_back(lanes.make_event(lane));
            e.copy_end.push_back(lanes.make_event(lane));
        }
    }
    for (std::size_t i = 0; i < lanes.size(); ++i)
        e.origin.push_back(lanes.make_event(i));
    return e;
}

// Issues the whole plan once. Every lane starts from an origin event recorded after a wait
// on lane 0's, so the lanes' clocks agree to within a launch.
void issue(detail::Lanes& lanes, const StreamPlan& plan,
           const std::vector<std::unique_ptr<detail::LayerRunner>>& runners,
           const std::vector<detail::bf16*>& inbox, std::size_t bytes, RunEvents& e) {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        lanes.activate(i);
        check(cudaDeviceSynchronize(), "synchronizing before the run");
    }
    lanes.activate(0);
    check(cudaEventRecord(e.origin[0], lanes[0].compute), "cudaEventRecord");
    for (std::size_t i = 1; i < lanes.size(); ++i) {
        lanes.activate(i);
        check(cudaStreamWaitEvent(lanes[i].compute, e.origin[0], 0), "cudaStreamWaitEvent");
        check(cudaEventRecord(e.origin[i], lanes[i].compute), "cudaEventRecord");
    }
    std::size_t copy = 0;
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
        const PlannedOp& op = plan.ops[i];
        const auto d = static_cast<std::size_t>(op.device);
        const detail::Lane& lane = lanes[d];
        lanes.activate(d);
        for (int k = 0; k < op.input_count; ++k, ++copy) {
            const CrossInput& in = op.inputs[static_cast<std::size_t>(k)];
            const auto p = static_cast<std::size_t>(in.producer);
            const detail::LayerRunner& src = *runners[static_cast<std::size_t>(in.producer_device)];
            check(cudaStreamWaitEvent(lane.copy, e.op_end[p], 0), "cudaStreamWaitEvent");
            check(cudaEventRecord(e.copy_start[copy], lane.copy), "cudaEventRecord");
            check(cudaMemcpyPeerAsync(inbox[d], lane.gpu, src.message(plan.ops[p].op.pass),
                                      lanes[static_cast<std::size_t>(in.producer_device)].gpu,
                                      bytes, lane.copy),
                  "cudaMemcpyPeerAsync");
            check(cudaEventRecord(e.copy_end[copy], lane.copy), "cudaEventRecord");
            check(cudaStreamWaitEvent(lane.compute, e.copy_end[copy], 0), "cudaStreamWaitEvent");
        }
        check(cudaEventRecord(e.op_start[i], lane.compute), "cudaEventRecord");
        for (int l = 0; l < op.layers; ++l)
            runners[d]->run_pass(op.op.pass, lane.blas, lane.compute);
        check(cudaEventRecord(e.op_end[i], lane.compute), "cudaEventRecord");
    }
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        lanes.activate(i);
        check(cudaDeviceSynchronize(), "running the schedule");
    }
}

double since(cudaEvent_t origin, cudaEvent_t event) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, origin, event), "cudaEventElapsedTime");
    return ms / 1e3;
}

Timeline measured_timeline(const Schedule& s, const StreamPlan& plan, const RunEvents& e,
                           double bytes) {
    Timeline t = empty_timeline(s, "s");
    std::size_t copy = 0;
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
        const PlannedOp& op = plan.ops[i];
        const auto d = static_cast<std::size_t>(op.device);
        for (int k = 0; k < op.input_count; ++k, ++copy) {
            const PlannedOp& p = plan.ops[static_cast<std::size_t>(op.inputs[k].producer)];
            t.transfers.push_back({p.device, op.device, p.op, op.op, bytes,
                                   since(e.origin[d], e.copy_start[copy]),
                                   since(e.origin[d], e.copy_end[copy]), TransferKind::pipeline});
        }
        t.device_ops[d].push_back(
            {op.op, since(e.origin[d], e.op_start[i]), since(e.origin[d], e.op_end[i])});
    }
    // Time 0 is the first op's start.
    double first = 1e300;
    for (const auto& ops : t.device_ops)
        if (!ops.empty()) first = std::min(first, ops.front().start);
    for (auto& ops : t.device_ops)
        for (TimedOp& o : ops)
            o.start -= first, o.end -= first;
    for (Transfer& x : t.transfers)
        x.start -= first, x.end -= first;
    return t;
}

}  // namespace

GpuRunResult gpu_run(const GpuRunOptions& options, const Progress& progress) {
    const int gpus = detail::require_devices();
    check_kernel_support(options.config, options.workload);
    const Schedule& s = options.schedule;
    const StreamPlan plan = plan_streams(s, options.stage_layers);
    if (options.first_device >= gpus)
        throw std::invalid_argument(
            fmt::format("--device {}: only {} CUDA device(s)", options.first_device, gpus));
    GpuInventory inv = detail::gpu_inventory(options.first_device);
    inv.gpus -= options.first_device;
    GpuRunResult result;
    result.placement = choose_placement(options.mode, s.devices, inv);
    const DeviceInfo info = detail::device_info(options.first_device);
    result.where = result.placement.mode == RunMode::multi_gpu
                       ? fmt::format("{} GPUs ({})", s.devices, info.name)
                       : fmt::format("{} SM partitions of {} SMs ({}, {} SMs)", s.devices,
                                     result.placement.partition_sms, info.name, info.sm_count);
    detail::Lanes lanes(result.placement.mode, options.first_device, s.devices,
                        result.placement.partition_sms);

    // Calibrate on pipeline device 0: the same GPU or partition size the ops run on.
    const LayerShape shape = layer_shape(options.config, options.workload);
    const int total = detail::measure_steps(shape) + 2 + options.warmup_runs;
    int done = 0;
    CalibrationRecord& cal = result.calibration;
    cal.device = info;
    cal.device.partition_sms =
        result.placement.partition_sms > 0 ? result.placement.partition_sms : info.sm_count;
    cal.model = options.config.name;
    cal.layers.push_back(detail::measure_layer(options.config, options.workload, lanes, 0,
                                               options.timing, progress, done, total));
    progress(done++, total, "copy");
    const double bytes = models::pipeline_message_bytes(options.config, options.workload);
    if (s.devices > 1)
        cal.copy = detail::measure_copy(lanes, 0, lanes[1].gpu, bytes, options.timing);

    progress(done++, total, "buffers");
    std::vector<std::unique_ptr<detail::LayerRunner>> runners;
    std::vector<detail::bf16*> inbox;
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        lanes.activate(i);
        runners.push_back(std::make_unique<detail::LayerRunner>(shape, 7 + i));
        void* p = nullptr;
        check(cudaMalloc(&p, static_cast<std::size_t>(bytes)), "cudaMalloc (inbox)");
        inbox.push_back(static_cast<detail::bf16*>(p));
    }
    RunEvents events = make_events(lanes, plan);
    for (int r = 0; r <= options.warmup_runs; ++r) {
        progress(done++, total, r < options.warmup_runs ? "warm-up run" : "measured run");
        issue(lanes, plan, runners, inbox, static_cast<std::size_t>(bytes), events);
    }
    result.measured = measured_timeline(s, plan, events, bytes);
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        lanes.activate(i);
        cudaFree(inbox[i]);
    }
    return result;
}

}  // namespace pipesim::calibration
