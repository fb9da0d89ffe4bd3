#include "models/gpu.hpp"

#include <array>

#include "names.hpp"

namespace pipesim::models {

namespace {

constexpr double tera = 1e12;
constexpr double giga = 1e9;
constexpr double mib = 1024.0 * 1024.0;

// Peak dense bf16 and bandwidth: NVIDIA datasheets (the "with sparsity" figures are twice
// the dense ones). Capacity: the total the driver reports (nvidia-smi memory.total), which
// is what allocations compete for. Default efficiencies are assumptions, documented in
// docs/models.md: Megatron-LM reaches 44–52 % of the A100 peak on large GPT models
// (Narayanan et al., SC'21, Table 1) and Llama 3 405B training 38–43 % on H100 (Llama 3
// paper, Dubey et al., 2024, Table 4), both including pipeline bubbles and communication,
// so a layer's kernels alone run somewhat faster.
const std::array<GpuSpec, 4> specs = {{
    {"a100-40gb", "NVIDIA A100 SXM4 40 GB (HBM2)", 312 * tera, 40960 * mib, 1555 * giga, 0.55,
     "NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOPS bf16 dense, 40 GB HBM2, "
     "1,555 GB/s"},
    {"a100-80gb", "NVIDIA A100 SXM4 80 GB (HBM2e)", 312 * tera, 81920 * mib, 2039 * giga, 0.55,
     "NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOPS bf16 dense, 80 GB HBM2e, "
     "2,039 GB/s"},
    {"h100-sxm", "NVIDIA H100 SXM5 80 GB (HBM3)", 989.4 * tera, 81559 * mib, 3350 * giga, 0.45,
     "NVIDIA H100 Tensor Core GPU datasheet: 1,979 TFLOPS bf16 with sparsity (989.4 dense), "
     "80 GB HBM3, 3.35 TB/s"},
    {"h200", "NVIDIA H200 SXM 141 GB (HBM3e)", 989.4 * tera, 143771 * mib, 4800 * giga, 0.45,
     "NVIDIA H200 Tensor Core GPU datasheet: 1,979 TFLOPS bf16 with sparsity (989.4 dense), "
     "141 GB HBM3e, 4.8 TB/s"},
}};

}  // namespace

std::span<const GpuSpec> gpu_specs() {
    return specs;
}

const GpuSpec& find_gpu(std::string_view name) {
    return detail::find_by_name(gpu_specs(), name, "GPU");
}

}  // namespace pipesim::models
