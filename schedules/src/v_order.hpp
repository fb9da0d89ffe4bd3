#pragma once
// Internal helper of the hand-ordered V-shape generators (zb-v, dualpipe-v): appends one
// device's ops chunk by chunk, numbering each (pass, chunk) stream in order.

#include <deque>
#include <utility>
#include <vector>

#include "schedules/op.hpp"

namespace pipesim::detail {

/// One device of a V-shape schedule: chunk 0 is its first-half stage, chunk 1 its
/// second-half stage. The order may be written for more microbatches than the schedule has:
/// ops of microbatches ≥ `microbatches` are counted but dropped, which keeps the order valid
/// since dependencies never cross microbatches.
class VDeviceOrder {
  public:
    VDeviceOrder(std::vector<Op>& ops, int first_stage, int second_stage, int microbatches)
        : ops_(ops), stage_{first_stage, second_stage}, m_(microbatches) {}

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
    /// How many ops of (pass, chunk) have been written (dropped ones included).
    int count(Pass pass, int chunk) const { return count_[static_cast<int>(pass)][chunk]; }

  private:
    int next(Pass pass, int chunk) { return count_[static_cast<int>(pass)][chunk]++; }
    void emit(Pass pass, int chunk, int mb) {
        if (mb < m_) ops_.push_back(Op{pass, mb, stage_[chunk]});
    }

    std::vector<Op>& ops_;
    int stage_[2];
    int m_;
    int count_[3][2] = {};
    std::deque<std::pair<int, int>> pending_;
};

}  // namespace pipesim::detail
