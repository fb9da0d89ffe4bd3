// The memory-bound kernels of a transformer layer: simple, one warp per row where a row is
// reduced, grid-stride loops elsewhere. fp32 arithmetic on bf16 storage.
#include "kernels.hpp"

namespace pipesim::calibration::detail {

namespace {

constexpr int threads = 256;
constexpr int warps_per_block = threads / 32;

__device__ float to_f(bf16 x) {
    return __bfloat162float(x);
}
__device__ bf16 to_b(float x) {
    return __float2bfloat16(x);
}

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ float gelu_f(float x) {
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__device__ float gelu_grad_f(float x) {
    const float t = tanhf(0.7978845608f * (x + 0.044715f * x * x * x));
    return 0.5f * (1.0f + t) +
           0.5f * x * (1.0f - t * t) * 0.7978845608f * (1.0f + 0.134145f * x * x);
}

unsigned blocks_for(long long count) {
    const long long b = (count + threads - 1) / threads;
    return static_cast<unsigned>(b < 65535LL * 16 ? b : 65535LL * 16);
}

unsigned row_blocks(long long rows) {
    return static_cast<unsigned>((rows + warps_per_block - 1) / warps_per_block);
}

__global__ void layernorm_forward_kernel(const bf16* x, const bf16* gamma, const bf16* beta,
                                         bf16* y, float* mean, float* rstd, int rows, int cols,
                                         float eps) {
    const long long row = static_cast<long long>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const bf16* xr = x + row * cols;
    const bool rms = beta == nullptr;
    float s = 0;
    if (!rms)
        for (int j = lane; j < cols; j += 32)
            s += to_f(xr[j]);
    const float mu = rms ? 0.0f : warp_sum(s) / cols;
    float v = 0;
    for (int j = lane; j < cols; j += 32) {
        const float d = to_f(xr[j]) - mu;
        v += d * d;
    }
    const float r = rsqrtf(warp_sum(v) / cols + eps);
    bf16* yr = y + row * cols;
    for (int j = lane; j < cols; j += 32)
        yr[j] = to_b((to_f(xr[j]) - mu) * r * to_f(gamma[j]) + (rms ? 0.0f : to_f(beta[j])));
    if (lane == 0) {
        if (mean) mean[row] = mu;
        rstd[row] = r;
    }
}

__global__ void layernorm_backward_input_kernel(const bf16* dy, const bf16* x, const float* mean,
                                                const float* rstd, const bf16* gamma,
                                                const bf16* residual_grad, bf16* dx, int rows,
                                                int cols) {
    const long long row = static_cast<long long>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const long long o = row * cols;
    const float mu = mean ? mean[row] : 0.0f, r = rstd[row];
    float sg = 0, sgx = 0;
    for (int j = lane; j < cols; j += 32) {
        const float g = to_f(dy[o + j]) * to_f(gamma[j]);
        sg += g;
        sgx += g * (to_f(x[o + j]) - mu) * r;
    }
    // RMSNorm (no mean) has no mean-gradient term.
    sg = mean ? warp_sum(sg) / cols : 0.0f;
    sgx = warp_sum(sgx) / cols;
    for (int j = lane; j < cols; j += 32) {
        const float g = to_f(dy[o + j]) * to_f(gamma[j]);
        const float xh = (to_f(x[o + j]) - mu) * r;
        float d = r * (g - sg - xh * sgx);
        if (residual_grad) d += to_f(residual_grad[o + j]);
        dx[o + j] = to_b(d);
    }
}

constexpr int reduce_rows = 64;

__global__ void column_reduce_kernel(const bf16* dy, const bf16* x, const float* mean,
                                     const float* rstd, float* dgamma, float* dbeta, int rows,
                                     int cols) {
    const int col = blockIdx.x * threads + threadIdx.x;
    if (col >= cols) return;
    const int first = blockIdx.y * reduce_rows;
    const int last = min(rows, first + reduce_rows);
    float sb = 0, sg = 0;
    for (int i = first; i < last; ++i) {
        const float d = to_f(dy[static_cast<long long>(i) * cols + col]);
        sb += d;
        if (x)
            sg += d * (to_f(x[static_cast<long long>(i) * cols + col]) - (mean ? mean[i] : 0.0f)) *
                  rstd[i];
    }
    if (dbeta) atomicAdd(dbeta + col, sb);
    if (x) atomicAdd(dgamma + col, sg);
}

__global__ void bias_gelu_kernel(bf16* pre, const bf16* bias, bf16* act, long long count,
                                 int cols) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        float v = to_f(pre[i]);
        if (bias) {
            v += to_f(bias[i % cols]);
            pre[i] = to_b(v);
        }
        act[i] = to_b(gelu_f(v));
    }
}

__device__ float sigmoid_f(float x) {
    return 1.0f / (1.0f + __expf(-x));
}

// pre is rows×2f (gate, then up); act is rows×f.
__global__ void swiglu_forward_kernel(bf16* pre, const bf16* bias, bf16* act, long long count,
                                      int f) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long row = i / f;
        const int j = static_cast<int>(i % f);
        bf16* g = pre + row * 2 * f + j;
        float gate = to_f(g[0]), up = to_f(g[f]);
        if (bias) {
            gate += to_f(bias[j]);
            up += to_f(bias[f + j]);
            g[0] = to_b(gate);
            g[f] = to_b(up);
        }
        act[i] = to_b(gate * sigmoid_f(gate) * up);
    }
}

__global__ void swiglu_backward_kernel(const bf16* dact, const bf16* pre, bf16* dpre,
                                       long long count, int f) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long row = i / f;
        const int j = static_cast<int>(i % f);
        const long long at = row * 2 * f + j;
        const float gate = to_f(pre[at]), up = to_f(pre[at + f]), d = to_f(dact[i]);
        const float sg = sigmoid_f(gate);
        dpre[at] = to_b(d * up * sg * (1.0f + gate * (1.0f - sg)));
        dpre[at + f] = to_b(d * gate * sg);
    }
}

// One thread per rotated pair: row r (position r mod seq), pair i of head `head`.
__global__ void rotary_kernel(bf16* x, long long rows, int seq, int cols, int head_dim, int ld,
                              float log_base, float sign) {
    const int half = head_dim / 2;
    const long long pairs_per_row = cols / 2;
    const long long count = rows * pairs_per_row;
    for (long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; p < count;
         p += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long r = p / pairs_per_row;
        const int k = static_cast<int>(p % pairs_per_row);
        const int head = k / half, i = k % half;
        // angle = position · base^(−2i/d), in fp32 with an accurate sincos (positions reach
        // thousands of radians).
        const float inv_freq = expf(-2.0f * static_cast<float>(i) / head_dim * log_base);
        float sn, cs;
        sincosf(static_cast<float>(r % seq) * inv_freq, &sn, &cs);
        sn *= sign;
        bf16* a = x + r * ld + static_cast<long long>(head) * head_dim + i;
        const float xa = to_f(a[0]), xb = to_f(a[half]);
        a[0] = to_b(xa * cs - xb * sn);
        a[half] = to_b(xb * cs + xa * sn);
    }
}

__global__ void gelu_backward_kernel(const bf16* dact, const bf16* pre, bf16* dpre,
                                     long long count) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        dpre[i] = to_b(to_f(dact[i]) * gelu_grad_f(to_f(pre[i])));
}

__global__ void add_bias_residual_kernel(const bf16* y, const bf16* bias, const bf16* residual,
                                         bf16* out, long long count, int cols) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        float v = to_f(y[i]);
        if (bias) v += to_f(bias[i % cols]);
        if (residual) v += to_f(residual[i]);
        out[i] = to_b(v);
    }
}

__global__ void softmax_forward_kernel(const bf16* scores, bf16* probs, long long rows, int s,
                                       float scale) {
    const long long row = static_cast<long long>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const int last = static_cast<int>(row % s);  // causal: columns 0..last
    const bf16* in = scores + row * s;
    bf16* out = probs + row * s;
    float m = -INFINITY;
    for (int j = lane; j <= last; j += 32)
        m = fmaxf(m, to_f(in[j]) * scale);
    m = warp_max(m);
    float sum = 0;
    for (int j = lane; j <= last; j += 32)
        sum += __expf(to_f(in[j]) * scale - m);
    const float inv = 1.0f / warp_sum(sum);
    for (int j = lane; j < s; j += 32)
        out[j] = to_b(j <= last ? __expf(to_f(in[j]) * scale - m) * inv : 0.0f);
}

__global__ void softmax_backward_kernel(const bf16* probs, bf16* dprobs, long long rows, int s,
                                        float scale) {
    const long long row = static_cast<long long>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const bf16* p = probs + row * s;
    bf16* d = dprobs + row * s;
    float dot = 0;
    for (int j = lane; j < s; j += 32)
        dot += to_f(p[j]) * to_f(d[j]);
    dot = warp_sum(dot);
    for (int j = lane; j < s; j += 32)
        d[j] = to_b(scale * to_f(p[j]) * (to_f(d[j]) - dot));
}

__global__ void fill_uniform_kernel(bf16* data, long long count, float scale, std::uint64_t seed) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        const float u = static_cast<float>(z >> 40) / static_cast<float>(1ULL << 24);
        data[i] = to_b((2.0f * u - 1.0f) * scale);
    }
}

}  // namespace

void layernorm_forward(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y, float* mean,
                       float* rstd, int rows, int cols, float eps, cudaStream_t stream) {
    layernorm_forward_kernel<<<row_blocks(rows), threads, 0, stream>>>(x, gamma, beta, y, mean,
                                                                       rstd, rows, cols, eps);
}

void layernorm_backward_input(const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                              const bf16* gamma, const bf16* residual_grad, bf16* dx, int rows,
                              int cols, cudaStream_t stream) {
    layernorm_backward_input_kernel<<<row_blocks(rows), threads, 0, stream>>>(
        dy, x, mean, rstd, gamma, residual_grad, dx, rows, cols);
}

void column_reduce(const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                   float* dgamma, float* dbeta, int rows, int cols, cudaStream_t stream) {
    const dim3 grid((cols + threads - 1) / threads, (rows + reduce_rows - 1) / reduce_rows);
    column_reduce_kernel<<<grid, threads, 0, stream>>>(dy, x, mean, rstd, dgamma, dbeta, rows,
                                                       cols);
}

void bias_gelu_forward(bf16* pre, const bf16* bias, bf16* act, long long rows, int cols,
                       cudaStream_t stream) {
    const long long count = rows * cols;
    bias_gelu_kernel<<<blocks_for(count), threads, 0, stream>>>(pre, bias, act, count, cols);
}

void swiglu_forward(bf16* pre, const bf16* bias, bf16* act, long long rows, int f,
                    cudaStream_t stream) {
    const long long count = rows * f;
    swiglu_forward_kernel<<<blocks_for(count), threads, 0, stream>>>(pre, bias, act, count, f);
}

void swiglu_backward(const bf16* dact, const bf16* pre, bf16* dpre, long long rows, int f,
                     cudaStream_t stream) {
    const long long count = rows * f;
    swiglu_backward_kernel<<<blocks_for(count), threads, 0, stream>>>(dact, pre, dpre, count, f);
}

void rotary(bf16* x, long long rows, int seq, int cols, int head_dim, int ld, float base,
            bool inverse, cudaStream_t stream) {
    const long long count = rows * (cols / 2);
    rotary_kernel<<<blocks_for(count), threads, 0, stream>>>(x, rows, seq, cols, head_dim, ld,
                                                             logf(base), inverse ? -1.0f : 1.0f);
}

void gelu_backward(const bf16* dact, const bf16* pre, bf16* dpre, long long count,
                   cudaStream_t stream) {
    gelu_backward_kernel<<<blocks_for(count), threads, 0, stream>>>(dact, pre, dpre, count);
}

void add_bias_residual(const bf16* y, const bf16* bias, const bf16* residual, bf16* out,
                       long long rows, int cols, cudaStream_t stream) {
    const long long count = rows * cols;
    add_bias_residual_kernel<<<blocks_for(count), threads, 0, stream>>>(y, bias, residual, out,
                                                                        count, cols);
}

void causal_softmax_forward(const bf16* scores, bf16* probs, long long rows, int s, float scale,
                            cudaStream_t stream) {
    softmax_forward_kernel<<<row_blocks(rows), threads, 0, stream>>>(scores, probs, rows, s, scale);
}

void causal_softmax_backward(const bf16* probs, bf16* dprobs, long long rows, int s, float scale,
                             cudaStream_t stream) {
    softmax_backward_kernel<<<row_blocks(rows), threads, 0, stream>>>(probs, dprobs, rows, s,
                                                                      scale);
}

void fill_uniform(bf16* data, long long count, float scale, std::uint64_t seed,
                  cudaStream_t stream) {
    fill_uniform_kernel<<<blocks_for(count), threads, 0, stream>>>(data, count, scale, seed);
}

}  // namespace pipesim::calibration::detail
