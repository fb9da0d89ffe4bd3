// Flash-style causal attention (Dao et al., 2022; Dao, 2023), forward and backward, on tensor
// cores through WMMA (bf16 inputs, fp32 accumulation). Tiles of 64 query rows × 64 key rows,
// four warps of 16 rows each; everything per row (online softmax, rescaling, masking) runs on
// shared-memory copies of the fragments, so no fragment layout is assumed. The algorithm is
// reference::flash_attention_forward/backward's with block_q = block_k = 64.
#include <mma.h>

#include <cmath>
#include <type_traits>

#include "kernels.hpp"

namespace pipesim::calibration::detail {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int tile = 64;  // query and key rows of a tile
constexpr int warps = 4;  // 16 rows each
constexpr int threads = 32 * warps;
constexpr int ld_s = tile + 4;  // fp32 score rows (a multiple of 4, as WMMA needs)
constexpr int ld_p = tile + 8;  // bf16 probability rows (a multiple of 8)

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
using FragAT = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::col_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

__device__ float to_f(bf16 x) {
    return __bfloat162float(x);
}

// Shared memory carved in 128-byte aligned pieces (WMMA pointers need 32-byte alignment).
struct Carve {
    char* base;
    size_t used = 0;
    template <class T>
    __host__ __device__ T* take(size_t count) {
        T* p = reinterpret_cast<T*>(base + used);
        used += (count * sizeof(T) + 127) / 128 * 128;
        return p;
    }
};

// Copies `tile` rows of D bf16 values (row stride ld, rows ≥ limit zeroed) into shared rows of
// stride D + 8, 16 bytes at a time. Precondition: ld, D and the source offset multiples of 8.
template <int D>
__device__ void load_tile(bf16* dst, const bf16* src, long long ld, int rows_left) {
    constexpr int chunks = D / 8;
    for (int i = threadIdx.x; i < tile * chunks; i += threads) {
        const int r = i / chunks, c = (i % chunks) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < rows_left) v = *reinterpret_cast<const uint4*>(src + r * ld + c);
        *reinterpret_cast<uint4*>(dst + r * (D + 8) + c) = v;
    }
}

// A warp's band product C[16×N] = (C +) A[16×K]·B: A row-major at `a` (ld la); B row-major
// at `b` (ld lb), or with transposed_b given as Bᵀ row-major (the key rows of K or V); C
// row-major fp32 at `c` (ld lc), read first when `accumulate`.
template <int K, int N, bool transposed_b, bool accumulate>
__device__ void band_product(const bf16* a, int la, const bf16* b, int lb, float* c, int lc) {
    using Layout = std::conditional_t<transposed_b, wmma::col_major, wmma::row_major>;
    for (int nb = 0; nb < N / 16; ++nb) {
        FragC acc;
        if (accumulate)
            wmma::load_matrix_sync(acc, c + nb * 16, lc, wmma::mem_row_major);
        else
            wmma::fill_fragment(acc, 0.0f);
        for (int kk = 0; kk < K / 16; ++kk) {
            FragA fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, Layout> fb;
            wmma::load_matrix_sync(fa, a + kk * 16, la);
            wmma::load_matrix_sync(
                fb, transposed_b ? b + nb * 16 * lb + kk * 16 : b + kk * 16 * lb + nb * 16, lb);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        wmma::store_matrix_sync(c + nb * 16, acc, lc, wmma::mem_row_major);
    }
}

template <int D>
size_t forward_smem() {
    Carve c{nullptr};
    c.take<bf16>(3 * tile * (D + 8));     // Q, K, V
    c.take<float>(warps * 16 * ld_s);     // scores
    c.take<bf16>(warps * 16 * ld_p);      // probabilities
    c.take<float>(warps * 16 * (D + 4));  // output accumulator
    return c.used;
}

// grid (query tiles, heads, sequences)
template <int D>
__global__ void __launch_bounds__(threads)
    flash_forward_kernel(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
                         FlashShape a) {
    extern __shared__ __align__(128) char smem[];
    constexpr int ld = D + 8, ld_o = D + 4;
    Carve c{smem};
    bf16* qs = c.take<bf16>(tile * ld);
    bf16* ks = c.take<bf16>(tile * ld);
    bf16* vs = c.take<bf16>(tile * ld);
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    float* s_w = c.take<float>(warps * 16 * ld_s) + w * 16 * ld_s;
    bf16* p_w = c.take<bf16>(warps * 16 * ld_p) + w * 16 * ld_p;
    float* o_w = c.take<float>(warps * 16 * ld_o) + w * 16 * ld_o;

    const int q0 = blockIdx.x * tile, head = blockIdx.y, b = blockIdx.z;
    const int kv = head / (a.heads / a.kv_heads);
    const long long row0 = static_cast<long long>(b) * a.seq;  // first row of this sequence
    load_tile<D>(qs, q + (row0 + q0) * a.ld_qkv + head * D, a.ld_qkv, a.seq - q0);
    for (int i = lane; i < 16 * ld_o; i += 32)
        o_w[i] = 0;
    // Lanes 2r and 2r + 1 own row r of the warp's band, each half of its columns.
    const int r = lane / 2, half = lane % 2;
    const int t = q0 + 16 * w + r;
    float m = -INFINITY, l = 0;
    const bool band_live = q0 + 16 * w < a.seq;
    for (int k0 = 0; k0 < a.seq && k0 < q0 + tile; k0 += tile) {
        __syncthreads();
        load_tile<D>(ks, k + (row0 + k0) * a.ld_qkv + kv * D, a.ld_qkv, a.seq - k0);
        load_tile<D>(vs, v + (row0 + k0) * a.ld_qkv + kv * D, a.ld_qkv, a.seq - k0);
        __syncthreads();
        if (!band_live || q0 + 16 * w + 15 < k0) continue;  // the band sees none of these keys
        band_product<D, tile, true, false>(qs + 16 * w * ld, ld, ks, ld, s_w, ld_s);  // Q·Kᵀ
        __syncwarp();
        // Online softmax over this tile's columns of row r.
        float x[tile / 2];
        float tile_max = -INFINITY;
        for (int j = 0; j < tile / 2; ++j) {
            const int col = half * (tile / 2) + j, u = k0 + col;
            const bool valid = t < a.seq && u <= t && u < a.seq;
            x[j] = valid ? s_w[r * ld_s + col] * a.scale : -INFINITY;
            tile_max = fmaxf(tile_max, x[j]);
        }
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        const float m_new = fmaxf(m, tile_max);
        const float m_use = m_new == -INFINITY ? 0.0f : m_new;  // a row with no key yet
        const float alpha = __expf(m - m_use);
        float sum = 0;
        for (int j = 0; j < tile / 2; ++j) {
            const float p = x[j] == -INFINITY ? 0.0f : __expf(x[j] - m_use);
            sum += p;
            p_w[r * ld_p + half * (tile / 2) + j] = __float2bfloat16(p);
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        l = l * alpha + sum;
        m = m_new;
        for (int j = half * (D / 2); j < (half + 1) * (D / 2); ++j)
            o_w[r * ld_o + j] *= alpha;
        __syncwarp();
        band_product<tile, D, false, true>(p_w, ld_p, vs, ld, o_w, ld_o);  // O += P·V
        __syncwarp();
    }
    if (t >= a.seq || !(l > 0)) return;
    bf16* out = o + (row0 + t) * a.ld_o + head * D;
    for (int j = half * (D / 2); j < (half + 1) * (D / 2); ++j)
        out[j] = __float2bfloat16(o_w[r * ld_o + j] / l);
    if (half == 0) lse[(static_cast<long long>(b) * a.heads + head) * a.seq + t] = m + logf(l);
}

// delta[(b·heads + i)·s + t] = Σ_c dO·O over head i of row t: one warp per row.
__global__ void flash_delta_kernel(const bf16* o, const bf16* d_o, float* delta, FlashShape a) {
    const long long row = static_cast<long long>(blockIdx.x) * warps + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const long long rows = static_cast<long long>(a.batch) * a.heads * a.seq;
    if (row >= rows) return;
    const int t = static_cast<int>(row % a.seq);
    const long long bh = row / a.seq;
    const int head = static_cast<int>(bh % a.heads), b = static_cast<int>(bh / a.heads);
    const long long at = (static_cast<long long>(b) * a.seq + t) * a.ld_o +
                         static_cast<long long>(head) * a.head_dim;
    float sum = 0;
    for (int c = lane; c < a.head_dim; c += 32)
        sum += to_f(o[at + c]) * to_f(d_o[at + c]);
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) delta[row] = sum;
}

// dQ (bf16, row stride ld_qkv) from its fp32 sums (rows of heads·D).
__global__ void flash_dq_kernel(const float* dq_sum, bf16* dq, FlashShape a) {
    const long long width = static_cast<long long>(a.heads) * a.head_dim;
    const long long count = static_cast<long long>(a.batch) * a.seq * width;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        dq[(i / width) * a.ld_qkv + i % width] = __float2bfloat16(dq_sum[i]);
}

template <int D>
size_t backward_smem() {
    Carve c{nullptr};
    c.take<bf16>(4 * tile * (D + 8));  // K, V, Q, dO
    c.take<float>(2 * tile);           // lse, delta of the query tile
    c.take<float>(2 * tile * ld_s);    // S, dP
    c.take<bf16>(2 * tile * ld_p);     // P, dS
    c.take<float>(warps * 16 * 16);    // per-warp 16×16 scratch
    return c.used;
}

// grid (key tiles, kv heads, sequences). Each block owns the dK, dV of its key tile (in
// registers: warp w the key rows 16w…16w+15), loops over the query heads of its group and the
// query tiles on or below the diagonal, and adds dQ into fp32 sums with atomics.
template <int D>
__global__ void __launch_bounds__(threads)
    flash_backward_kernel(const bf16* q, const bf16* k, const bf16* v, const bf16* d_o,
                          const float* lse, const float* delta, float* dq_sum, bf16* dk, bf16* dv,
                          FlashShape a) {
    extern __shared__ __align__(128) char smem[];
    constexpr int ld = D + 8;
    Carve c{smem};
    bf16* ks = c.take<bf16>(tile * ld);
    bf16* vs = c.take<bf16>(tile * ld);
    bf16* qs = c.take<bf16>(tile * ld);
    bf16* dos = c.take<bf16>(tile * ld);
    float* lse_s = c.take<float>(tile);
    float* delta_s = c.take<float>(tile);
    float* s_f = c.take<float>(tile * ld_s);
    float* dp_f = c.take<float>(tile * ld_s);
    bf16* p_b = c.take<bf16>(tile * ld_p);
    bf16* ds_b = c.take<bf16>(tile * ld_p);
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    float* scratch = c.take<float>(warps * 256) + w * 256;

    const int k0 = blockIdx.x * tile, kv = blockIdx.y, b = blockIdx.z;
    const int group = a.heads / a.kv_heads;
    const long long row0 = static_cast<long long>(b) * a.seq;
    const long long width = static_cast<long long>(a.heads) * D;  // a row of dq_sum
    load_tile<D>(ks, k + (row0 + k0) * a.ld_qkv + kv * D, a.ld_qkv, a.seq - k0);
    load_tile<D>(vs, v + (row0 + k0) * a.ld_qkv + kv * D, a.ld_qkv, a.seq - k0);
    FragC dk_acc[D / 16], dv_acc[D / 16];
#pragma unroll
    for (int db = 0; db < D / 16; ++db) {
        wmma::fill_fragment(dk_acc[db], 0.0f);
        wmma::fill_fragment(dv_acc[db], 0.0f);
    }
    const int r = lane / 2, half = lane % 2;
    for (int head = kv * group; head < (kv + 1) * group; ++head)
        for (int q0 = k0; q0 < a.seq; q0 += tile) {  // k0 is tile-aligned: the diagonal tile
            __syncthreads();
            load_tile<D>(qs, q + (row0 + q0) * a.ld_qkv + head * D, a.ld_qkv, a.seq - q0);
            load_tile<D>(dos, d_o + (row0 + q0) * a.ld_o + head * D, a.ld_o, a.seq - q0);
            const long long stats = (static_cast<long long>(b) * a.heads + head) * a.seq + q0;
            for (int i = threadIdx.x; i < tile; i += threads) {
                lse_s[i] = q0 + i < a.seq ? lse[stats + i] : 0.0f;
                delta_s[i] = q0 + i < a.seq ? delta[stats + i] : 0.0f;
            }
            __syncthreads();
            // S and dP for the warp's 16 query rows.
            band_product<D, tile, true, false>(qs + 16 * w * ld, ld, ks, ld, s_f + 16 * w * ld_s,
                                               ld_s);
            band_product<D, tile, true, false>(dos + 16 * w * ld, ld, vs, ld, dp_f + 16 * w * ld_s,
                                               ld_s);
            __syncwarp();
            const int qr = 16 * w + r, t = q0 + qr;
            for (int j = 0; j < tile / 2; ++j) {
                const int col = half * (tile / 2) + j, u = k0 + col;
                const bool valid = t < a.seq && u <= t && u < a.seq;
                const float p = valid ? __expf(s_f[qr * ld_s + col] * a.scale - lse_s[qr]) : 0.0f;
                const float ds = p * (dp_f[qr * ld_s + col] - delta_s[qr]) * a.scale;
                p_b[qr * ld_p + col] = __float2bfloat16(p);
                ds_b[qr * ld_p + col] = __float2bfloat16(ds);
            }
            __syncthreads();
            // dV += Pᵀ·dO and dK += dSᵀ·Q for the warp's 16 key rows.
            for (int kk = 0; kk < tile / 16; ++kk) {
                FragAT fp, fds;
                wmma::load_matrix_sync(fp, p_b + kk * 16 * ld_p + 16 * w, ld_p);
                wmma::load_matrix_sync(fds, ds_b + kk * 16 * ld_p + 16 * w, ld_p);
#pragma unroll
                for (int db = 0; db < D / 16; ++db) {
                    FragB fdo, fq;
                    wmma::load_matrix_sync(fdo, dos + kk * 16 * ld + db * 16, ld);
                    wmma::load_matrix_sync(fq, qs + kk * 16 * ld + db * 16, ld);
                    wmma::mma_sync(dv_acc[db], fp, fdo, dv_acc[db]);
                    wmma::mma_sync(dk_acc[db], fds, fq, dk_acc[db]);
                }
            }
            // dQ (the warp's 16 query rows) += dS·K, added to the fp32 sums.
            for (int db = 0; db < D / 16; ++db) {
                FragC acc;
                wmma::fill_fragment(acc, 0.0f);
                for (int kk = 0; kk < tile / 16; ++kk) {
                    FragA fds;
                    FragB fk;
                    wmma::load_matrix_sync(fds, ds_b + 16 * w * ld_p + kk * 16, ld_p);
                    wmma::load_matrix_sync(fk, ks + kk * 16 * ld + db * 16, ld);
                    wmma::mma_sync(acc, fds, fk, acc);
                }
                wmma::store_matrix_sync(scratch, acc, 16, wmma::mem_row_major);
                __syncwarp();
                for (int i = lane; i < 256; i += 32) {
                    const int tq = q0 + 16 * w + i / 16;
                    if (tq < a.seq)
                        atomicAdd(dq_sum + (row0 + tq) * width + static_cast<long long>(head) * D +
                                      db * 16 + i % 16,
                                  scratch[i]);
                }
                __syncwarp();
            }
        }
    // Write the warp's dK and dV rows.
    auto write = [&](const FragC& f, bf16* out) {
        wmma::store_matrix_sync(scratch, f, 16, wmma::mem_row_major);
        __syncwarp();
        for (int i = lane; i < 256; i += 32) {
            const int u = k0 + 16 * w + i / 16;
            if (u < a.seq) out[(row0 + u) * a.ld_qkv + i % 16] = __float2bfloat16(scratch[i]);
        }
        __syncwarp();
    };
#pragma unroll
    for (int db = 0; db < D / 16; ++db) {
        write(dk_acc[db], dk + kv * D + db * 16);
        write(dv_acc[db], dv + kv * D + db * 16);
    }
}

template <int D>
void launch_forward(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
                    const FlashShape& a, cudaStream_t stream) {
    const size_t smem = forward_smem<D>();
    cudaFuncSetAttribute(flash_forward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(smem));
    const dim3 grid((a.seq + tile - 1) / tile, a.heads, a.batch);
    flash_forward_kernel<D><<<grid, threads, smem, stream>>>(q, k, v, o, lse, a);
}

template <int D>
void launch_backward(const bf16* q, const bf16* k, const bf16* v, const bf16* d_o, const float* lse,
                     const float* delta, float* dq_sum, bf16* dk, bf16* dv, const FlashShape& a,
                     cudaStream_t stream) {
    const size_t smem = backward_smem<D>();
    cudaFuncSetAttribute(flash_backward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(smem));
    const dim3 grid((a.seq + tile - 1) / tile, a.kv_heads, a.batch);
    flash_backward_kernel<D>
        <<<grid, threads, smem, stream>>>(q, k, v, d_o, lse, delta, dq_sum, dk, dv, a);
}

}  // namespace

void flash_attention_forward(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
                             const FlashShape& a, cudaStream_t stream) {
    switch (a.head_dim) {
        case 32:
            return launch_forward<32>(q, k, v, o, lse, a, stream);
        case 64:
            return launch_forward<64>(q, k, v, o, lse, a, stream);
        case 96:
            return launch_forward<96>(q, k, v, o, lse, a, stream);
        default:
            return launch_forward<128>(q, k, v, o, lse, a, stream);
    }
}

void flash_attention_backward(const bf16* q, const bf16* k, const bf16* v, const bf16* o,
                              const bf16* d_o, const float* lse, float* delta, float* dq_sum,
                              bf16* dq, bf16* dk, bf16* dv, const FlashShape& a,
                              cudaStream_t stream) {
    const long long rows = static_cast<long long>(a.batch) * a.heads * a.seq;
    flash_delta_kernel<<<static_cast<unsigned>((rows + warps - 1) / warps), threads, 0, stream>>>(
        o, d_o, delta, a);
    const long long sums = static_cast<long long>(a.batch) * a.seq * a.heads * a.head_dim;
    cudaMemsetAsync(dq_sum, 0, static_cast<size_t>(sums) * sizeof(float), stream);
    switch (a.head_dim) {
        case 32:
            launch_backward<32>(q, k, v, d_o, lse, delta, dq_sum, dk, dv, a, stream);
            break;
        case 64:
            launch_backward<64>(q, k, v, d_o, lse, delta, dq_sum, dk, dv, a, stream);
            break;
        case 96:
            launch_backward<96>(q, k, v, d_o, lse, delta, dq_sum, dk, dv, a, stream);
            break;
        default:
            launch_backward<128>(q, k, v, d_o, lse, delta, dq_sum, dk, dv, a, stream);
            break;
    }
    const long long blocks = (sums + threads - 1) / threads;
    flash_dq_kernel<<<static_cast<unsigned>(blocks < 65535LL * 16 ? blocks : 65535LL * 16), threads,
                      0, stream>>>(dq_sum, dq, a);
}

}  // namespace pipesim::calibration::detail
