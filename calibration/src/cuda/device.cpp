#include "device.hpp"

#include <fmt/format.h>

#include "calibration/gpu.hpp"
#include "cuda_check.hpp"

namespace pipesim::calibration::detail {

namespace {

// A driver function through the runtime (CUDA ≥ 12.5 API); null when the driver lacks it.
template <class F>
F driver_function(const char* name, int version) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion(name, &fn, static_cast<unsigned>(version),
                                         cudaEnableDefault, &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess)
        return nullptr;
    return reinterpret_cast<F>(fn);
}

struct GreenApi {
    decltype(&::cuDeviceGetDevResource) get_resource = nullptr;
    decltype(&::cuDevSmResourceSplitByCount) split = nullptr;
    decltype(&::cuDevResourceGenerateDesc) describe = nullptr;
    decltype(&::cuGreenCtxCreate) create = nullptr;
    decltype(&::cuGreenCtxDestroy) destroy = nullptr;
    decltype(&::cuGreenCtxStreamCreate) stream = nullptr;
    decltype(&::cuCtxFromGreenCtx) as_context = nullptr;
    decltype(&::cuCtxPushCurrent) push = nullptr;
    decltype(&::cuCtxPopCurrent) pop = nullptr;
    decltype(&::cuDeviceGet) device = nullptr;

    bool complete() const {
        return get_resource && split && describe && create && destroy && stream && as_context &&
               push && pop && device;
    }
};

GreenApi green_api() {
    constexpr int v = 12040;
    GreenApi g;
    g.get_resource = driver_function<decltype(g.get_resource)>("cuDeviceGetDevResource", v);
    g.split = driver_function<decltype(g.split)>("cuDevSmResourceSplitByCount", v);
    g.describe = driver_function<decltype(g.describe)>("cuDevResourceGenerateDesc", v);
    g.create = driver_function<decltype(g.create)>("cuGreenCtxCreate", v);
    g.destroy = driver_function<decltype(g.destroy)>("cuGreenCtxDestroy", v);
    g.stream = driver_function<decltype(g.stream)>("cuGreenCtxStreamCreate", v);
    g.as_context = driver_function<decltype(g.as_context)>("cuCtxFromGreenCtx", v);
    g.push = driver_function<decltype(g.push)>("cuCtxPushCurrent", 4000);
    g.pop = driver_function<decltype(g.pop)>("cuCtxPopCurrent", 4000);
    g.device = driver_function<decltype(g.device)>("cuDeviceGet", 2000);
    return g;
}

// Looked up once; the driver's entry points do not change while the process runs.
const GreenApi& green() {
    static const GreenApi api = green_api();
    return api;
}

}  // namespace

int require_devices() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();  // clear the sticky "no device" error
        throw GpuUnavailable("no CUDA device found");
    }
    return count;
}

DeviceInfo device_info(int device) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    DeviceInfo info;
    info.name = prop.name;
    info.sm_count = prop.multiProcessorCount;
    info.partition_sms = prop.multiProcessorCount;
    info.memory_bytes = static_cast<double>(prop.totalGlobalMem);
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess)
        info.clock_mhz = khz / 1e3;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess)
        info.memory_clock_mhz = khz / 1e3;
    cudaRuntimeGetVersion(&info.cuda_runtime);
    cudaDriverGetVersion(&info.cuda_driver);
    return info;
}

GpuInventory gpu_inventory(int device) {
    GpuInventory inv;
    inv.gpus = require_devices();
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaFree(nullptr), "initializing the device");
    inv.sm_count = device_info(device).sm_count;
    int driver = 0;
    cudaDriverGetVersion(&driver);
    const GreenApi& g = green();
    if (driver < 12040 || !g.complete()) return inv;
    CUdevice dev{};
    CUdevResource all{};
    if (g.device(&dev, device) != CUDA_SUCCESS ||
        g.get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
        return inv;
    inv.green_contexts = true;
    inv.min_partition_sms = static_cast<int>(all.sm.minSmPartitionSize);
    inv.partition_alignment = static_cast<int>(all.sm.smCoscheduledAlignment);
    return inv;
}

Lanes::Lanes(RunMode mode, int first, int count, int partition_sms) : mode_(mode) {
    lanes_.resize(static_cast<std::size_t>(count));
    if (mode == RunMode::partitions) {
        const GreenApi& g = green();
        if (!g.complete())
            throw std::runtime_error("this driver has no green contexts (CUDA 12.4 or later)");
        check(cudaSetDevice(first), "cudaSetDevice");
        check(cudaFree(nullptr), "initializing the device");
        CUdevice dev{};
        CUdevResource all{}, rest{};
        check(g.device(&dev, first), "cuDeviceGet");
        check(g.get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
        std::vector<CUdevResource> groups(static_cast<std::size_t>(count));
        unsigned made = static_cast<unsigned>(count);
        check(g.split(groups.data(), &made, &all, &rest, 0, static_cast<unsigned>(partition_sms)),
              "cuDevSmResourceSplitByCount");
        if (made < static_cast<unsigned>(count))
            throw std::runtime_error(
                fmt::format("the driver made only {} SM partitions of {} SMs, {} needed", made,
                            partition_sms, count));
        for (std::size_t i = 0; i < lanes_.size(); ++i) {
            CUdevResourceDesc desc{};
            CUgreenCtx ctx{};
            check(g.describe(&desc, &groups[i], 1), "cuDevResourceGenerateDesc");
            check(g.create(&ctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
            green_.push_back(ctx);
            Lane& l = lanes_[i];
            l.gpu = first;
            check(g.as_context(&l.context, ctx), "cuCtxFromGreenCtx");
            CUstream s{};
            check(g.stream(&s, ctx, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
            l.compute = s;
            check(g.stream(&s, ctx, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
            l.copy = s;
        }
    } else {
        for (std::size_t i = 0; i < lanes_.size(); ++i) {
            Lane& l = lanes_[i];
            l.gpu = first + static_cast<int>(i);
            check(cudaSetDevice(l.gpu), "cudaSetDevice");
            check(cudaStreamCreateWithFlags(&l.compute, cudaStreamNonBlocking), "cudaStreamCreate");
            check(cudaStreamCreateWithFlags(&l.copy, cudaStreamNonBlocking), "cudaStreamCreate");
            for (std::size_t j = 0; j < lanes_.size(); ++j) {
                int can = 0;
                const int peer = first + static_cast<int>(j);
                if (j != i && cudaDeviceCanAccessPeer(&can, l.gpu, peer) == cudaSuccess && can)
                    cudaDeviceEnablePeerAccess(peer, 0);
                cudaGetLastError();  // "already enabled" is fine
            }
        }
    }
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
        activate(i);
        check(cublasCreate(&lanes_[i].blas), "cublasCreate");
        check(cublasSetStream(lanes_[i].blas, lanes_[i].compute), "cublasSetStream");
    }
}

Lanes::~Lanes() {
    for (cudaEvent_t e : events_)
        cudaEventDestroy(e);
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
        activate(i);
        cublasDestroy(lanes_[i].blas);
        cudaStreamDestroy(lanes_[i].compute);
        cudaStreamDestroy(lanes_[i].copy);
    }
    if (!green_.empty()) {
        const GreenApi& g = green();
        for (CUgreenCtx ctx : green_)
            g.destroy(ctx);
    }
}

void Lanes::activate(std::size_t i) const {
    cudaSetDevice(lanes_[i].gpu);
}

cudaEvent_t Lanes::make_event(std::size_t i) {
    activate(i);
    cudaEvent_t e{};
    if (lanes_[i].context) {
        const GreenApi& g = green();
        check(g.push(lanes_[i].context), "cuCtxPushCurrent");
        const cudaError_t r = cudaEventCreate(&e);
        CUcontext popped{};
        g.pop(&popped);
        check(r, "cudaEventCreate (green context)");
    } else {
        check(cudaEventCreate(&e), "cudaEventCreate");
    }
    events_.push_back(e);
    return e;
}

}  // namespace pipesim::calibration::detail
