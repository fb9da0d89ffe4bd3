#pragma once
// Internal helpers of the hand-ordered V-shape generators (zb-v, dualpipe-v, dualpipe): one
// device's ops appended chunk by chunk, each (pass, chunk) stream numbered in order, and
// DeepSeek's eight-step DualPipe order that dualpipe-v and dualpipe share.

#include <deque>
#include <utility>
#include <vector>

#include "schedules/op.hpp"

namespace pipesim::detail {

/// One device of a V-shape schedule: chunk 0 runs stage `first_stage`, chunk 1 stage
/// `second_stage`. The k-th op of a (pass, chunk) stream belongs to microbatch
/// `first_microbatch[chunk]` + k. The order may be written for more microbatches than the
/// schedule has: ops of the k ≥ `microbatches` are counted but dropped, which keeps the order
/// valid since dependencies never cross microbatches.
class VDeviceOrder {
  public:
    VDeviceOrder(std::vector<Op>& ops, int first_stage, int second_stage, int microbatches,
                 int first_microbatch0 = 0, int first_microbatch1 = 0)
        : ops_(ops),
          stage_{first_stage, second_stage},
          base_{first_microbatch0, first_microbatch1},
          m_(microbatches) {}

    /// The next F of `chunk`.
    void f(int chunk) { emit(Pass::F, chunk, next(Pass::F, chunk)); }
    /// The next B of `chunk`; its W is queued for w_pending().
    void b(int chunk) {
        const int mb = next(Pass::B, chunk);
        pending_.emplace_back(chunk, mb);
        emit(Pass::B, chunk, mb);
    }
    /// The next backward of `chunk` as one fused BW (counts as its B and its W).
    void bw(int chunk) {
        ++count_[static_cast<int>(Pass::W)][chunk];
        emit(Pass::BW, chunk, next(Pass::B, chunk));
    }
    /// The next F of `chunk_f` and the next fused backward BW of `chunk_b`, run as one
    /// overlapped F&B op when `overlapped` and both ops are written (recorded in the pair
    /// list given to record_pairs), else back to back.
    void fb(int chunk_f, int chunk_b, bool overlapped = true) {
        const std::size_t at = ops_.size();
        f(chunk_f);
        bw(chunk_b);
        if (overlapped && pairs_ && ops_.size() == at + 2) pairs_->push_back(static_cast<int>(at));
    }
    /// Where fb() records the positions of its pairs (none until this is called).
    void record_pairs(std::vector<int>& pairs) { pairs_ = &pairs; }
    /// The next W of `chunk`, in B order (not through the queue).
    void w(int chunk) { emit(Pass::W, chunk, next(Pass::W, chunk)); }
    /// The next F, B and W of `chunk`, back to back.
    void fbw(int chunk) {
        f(chunk);
        b(chunk);
        w(chunk);
    }
    /// The oldest queued W, if any.
    void w_pending() {
        if (pending_.empty()) return;
        const auto [chunk, mb] = pending_.front();
        pending_.pop_front();
        ++count_[static_cast<int>(Pass::W)][chunk];
        emit(Pass::W, chunk, mb);
    }
    /// The next backward of `chunk`: split (B, W queued) or fused (BW).
    void backward(int chunk, bool split) { split ? b(chunk) : bw(chunk); }
    /// How many ops of (pass, chunk) have been written (dropped ones included).
    int count(Pass pass, int chunk) const { return count_[static_cast<int>(pass)][chunk]; }
    /// Whether every pass of both chunks has reached the last microbatch: whatever is written
    /// from here on is dropped.
    bool complete() const {
        for (const auto& pass : count_)
            if (pass[0] < m_ || pass[1] < m_) return false;
        return true;
    }

  private:
    int next(Pass pass, int chunk) { return count_[static_cast<int>(pass)][chunk]++; }
    void emit(Pass pass, int chunk, int mb) {
        if (mb < m_) ops_.push_back(Op{pass, base_[chunk] + mb, stage_[chunk]});
    }

    std::vector<Op>& ops_;
    int stage_[2];
    int base_[2];
    int m_;
    int count_[3][2] = {};
    std::deque<std::pair<int, int>> pending_;
    std::vector<int>* pairs_ = nullptr;
};

/// DeepSeek's DualPipe order (github.com/deepseek-ai/DualPipe, dualpipe.py `step`) for rank
/// `rank` of a pipeline of `ranks` ranks, with `microbatches` per stream. Chunk 0 is the
/// stream whose first stage is on the nearer end of the pipeline (the rank is in its first
/// half), chunk 1 the other. With r = rank, P = ranks:
///   1. 2(P−1−r) F0            2. r+1 × (F0, F1)          3. P−1−r × (B1, queued W, F1)
///   4. n−2P+r+1 × (F0&B1, F1&B0)                        5. P−1−r × (B1, F1&B0)
///   6. r+1 × (B1, B0), fused BW until half-way through (odd r: before B1, even r: before B0),
///      split B (W queued) after
///   7. P−1−r × (queued W, B0 split)                      8. r+1 × queued W.
/// An "F&B" is an F and a full backward BW written as an overlapped pair (VDeviceOrder::fb):
/// it starts once both inputs are there, as DeepSeek's `_forward_backward_chunk` waits for both
/// receives before computing, except the last rank's first pair of step 4, which DeepSeek runs
/// unpaired ("to further reduce bubble size"). Backwards outside steps 3, 6 (second half) and
/// 7 are fused, as DeepSeek's `enable_zb=False`.
/// Precondition: microbatches ≥ 2·ranks − 1 − rank (the caller pads and drops the surplus).
inline void append_dualpipe_order(VDeviceOrder& d, int ranks, int rank, int microbatches) {
    const int rest = ranks - 1 - rank;
    for (int k = 0; k < 2 * rest; ++k)
        d.f(0);
    for (int k = 0; k <= rank; ++k) {
        d.f(0);
        d.f(1);
    }
    for (int k = 0; k < rest; ++k) {
        d.b(1);
        d.w_pending();
        d.f(1);
    }
    for (int k = 0; k < microbatches - 2 * ranks + rank + 1; ++k) {
        d.fb(0, 1, k > 0 || rank < ranks - 1);
        d.fb(1, 0);
    }
    for (int k = 0; k < rest; ++k) {
        d.bw(1);
        d.fb(1, 0);
    }
    bool split = false;
    for (int k = 0; k <= rank; ++k) {
        const bool half_way = k == (rank + 1) / 2;
        if (half_way && rank % 2 == 1) split = true;
        d.backward(1, split);
        if (half_way && rank % 2 == 0) split = true;
        d.backward(0, split);
    }
    for (int k = 0; k < rest; ++k) {
        d.w_pending();
        d.backward(0, split);
    }
    for (int k = 0; k <= rank; ++k)
        d.w_pending();
}

}  // namespace pipesim::detail
