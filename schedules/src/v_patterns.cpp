// V-shape schedules from six-slot building blocks of every starting pattern: the adaptive
// scheduler of the controllable-memory paper (Qi et al., "Pipeline Parallelism with
// Controllable Memory", NeurIPS 2024, §3 and Appendix A): a block is repeated once per
// microbatch, squeezed (each pass as early as its inputs allow, the order kept), its warm-up
// and cool-down rebuilt, and its gaps filled without raising the peak.
//
// The grid holds one character per unit slot: F and f the forwards of the first and second
// chunk (stages d and 2p−1−d of device d), B and b the backwards of the second and first
// chunk (stages 2p−1−d and d), W and w their weight passes; ' ' is a free slot. F and B pass
// from device d−1 to d, f and b from d+1 to d; the V turns on device p−1 (F → f, B → b) and
// on device 0 (f → B). Memory: F, f hold one chunk activation, W, w release it.
#include "v_patterns.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "schedules/placement.hpp"

namespace pipesim::detail {

namespace {

constexpr double eps = 1e-9;
constexpr int period = 6;
// The kinds in the order of a block's pattern.
constexpr char kinds[period + 1] = "FfBbWw";
// The largest offset of a chain between neighbouring devices, in slots.
constexpr int max_offset = period - 1;

using Grid = std::vector<std::string>;
// The slot of each kind (in the order of `kinds`) within the period of one device; -1 none.
using Pattern = std::array<int, period>;

int kind_of(char c) {
    switch (c) {
        case 'F':
            return 0;
        case 'f':
            return 1;
        case 'B':
            return 2;
        case 'b':
            return 3;
        case 'W':
            return 4;
        case 'w':
            return 5;
        default:
            return -1;
    }
}
bool downward(char c) {
    return c == 'F' || c == 'B';
}
bool upward(char c) {
    return c == 'f' || c == 'b';
}
bool weight(char c) {
    return c == 'W' || c == 'w';
}
int held_change(char c) {
    return c == 'F' || c == 'f' ? 1 : weight(c) ? -1 : 0;
}
// The backward a weight pass belongs to.
char backward_of(char w) {
    return w == 'W' ? 'B' : 'b';
}

int row_peak(const std::string& row) {
    int held = 0, most = 0;
    for (char c : row)
        most = std::max(most, held += held_change(c));
    return most;
}

int grid_peak(const Grid& g) {
    int most = 0;
    for (const std::string& row : g)
        most = std::max(most, row_peak(row));
    return most;
}

// Puts each W in the first free slot of the period from its B on (cyclically).
void place_weights(Pattern& pattern) {
    std::array<bool, period> used{};
    for (int k = 0; k < 4; ++k)
        if (pattern[k] >= 0) used[pattern[k]] = true;
    for (int k : {2, 3})
        for (int j = 0; j < period; ++j) {
            const int at = (pattern[k] + j) % period;
            if (!used[at]) {
                pattern[k + 2] = at;
                used[at] = true;
                break;
            }
        }
}

// The block of p devices: device d's F and B `step` slots after device d−1's (`step0` for
// d = 1..first_devices, `step1` after), its f and b one slot before (all modulo the period);
// nothing when two passes of a device would share a slot.
std::optional<std::vector<Pattern>> make_block(const Pattern& first, int step0, int step1,
                                               int first_devices, int p) {
    std::vector<Pattern> block{first};
    for (int d = 1; d < p; ++d) {
        const int step = d - 1 < first_devices ? step0 : step1;
        const std::array<int, 4> shift{step, -1, step, -1};
        Pattern next;
        next.fill(-1);
        std::array<bool, period> used{};
        for (int k = 0; k < 4; ++k) {
            const int at = (block.back()[k] + shift[k] + period) % period;
            if (used[at]) return std::nullopt;
            used[at] = true;
            next[k] = at;
        }
        place_weights(next);
        block.push_back(next);
    }
    return block;
}

// Clears row[at], row[at ± period], ... in one direction.
void clear_every_period(std::string& row, int at, int direction) {
    for (; at >= 0 && at < static_cast<int>(row.size()); at += direction * period)
        row[at] = ' ';
}

// The block repeated on every device, with the repetitions that belong to no microbatch
// cleared: each kind's first occurrence after its input's first one is microbatch 0, the
// (m−1)-th period after it the last.
Grid repeated(const std::vector<Pattern>& block, int m) {
    const int p = static_cast<int>(block.size());
    const int periods = 4 * p + m + 1;
    Grid g(static_cast<std::size_t>(p));
    for (int d = 0; d < p; ++d) {
        std::string one(period, ' ');
        for (int k = 0; k < period; ++k)
            if (block[d][k] >= 0) one[block[d][k]] = kinds[k];
        g[d].reserve(static_cast<std::size_t>(periods * period));
        for (int r = 0; r < periods; ++r)
            g[d] += one;
    }
    int at = period;
    for (char c : {'F', 'f', 'B', 'b'}) {
        for (int n = 0; n < p; ++n) {
            const int d = downward(c) ? n : p - 1 - n;
            std::string& row = g[d];
            for (int j = 0; j < period; ++j, ++at) {
                if (row[at] != c) continue;
                clear_every_period(row, at - period, -1);
                clear_every_period(row, at + period * m, 1);
                ++at;
                if (c == 'B' || c == 'b') {
                    const char w = c == 'B' ? 'W' : 'w';
                    for (int k = 0; k < period; ++k)
                        if (row[at + k] == w) {
                            clear_every_period(row, at + k - period, -1);
                            clear_every_period(row, at + k + period * m, 1);
                            break;
                        }
                }
                break;
            }
        }
    }
    return g;
}

// Microbatch n's slot of each kind on each device while the grid is walked.
class SlotIndex {
  public:
    SlotIndex(int p, int m)
        : p_(p),
          slot_(static_cast<std::size_t>(p) * m * period, -1),
          count_(static_cast<std::size_t>(p) * period, 0) {}
    int count(int d, char c) const { return count_[d * period + kind_of(c)]; }
    int slot(int d, char c, int n) const {
        return slot_[(static_cast<std::size_t>(n) * p_ + d) * period + kind_of(c)];
    }
    void add(int d, char c, int at) {
        const int n = count_[d * period + kind_of(c)]++;
        slot_[(static_cast<std::size_t>(n) * p_ + d) * period + kind_of(c)] = at;
    }

  private:
    int p_;
    std::vector<int> slot_;
    std::vector<int> count_;
};

// Every pass as early as its input and its device allow, each device's order kept. Slots are
// walked column by column, F/B/W from the first device down, f/b/w from the last one up.
// False when an input is missing or a kind has more than m passes.
bool squeeze(Grid& g, int m) {
    const int p = static_cast<int>(g.size());
    const int length = static_cast<int>(g[0].size());
    Grid out(g.size(), std::string(static_cast<std::size_t>(length), ' '));
    SlotIndex index(p, m);
    std::vector<int> free_from(static_cast<std::size_t>(p), 0);
    for (int j = 0; j < length; ++j)
        for (int pass = 0; pass < 2; ++pass)
            for (int n = 0; n < p; ++n) {
                const int d = pass == 0 ? n : p - 1 - n;
                const char c = g[d][j];
                if (c == ' ' || (pass == 0) != (c == 'F' || c == 'B' || c == 'W')) continue;
                const int mb = index.count(d, c);
                if (mb >= m) return false;
                int at = free_from[d];
                if (downward(c) && d > 0) {
                    const int input = index.slot(d - 1, c, mb);
                    if (input < 0) return false;
                    at = std::max(at, input + 1);
                } else if (upward(c) && d < p - 1) {
                    const int input = index.slot(d + 1, c, mb);
                    if (input < 0) return false;
                    at = std::max(at, input + 1);
                }
                if (at >= length) return false;
                out[d][at] = c;
                index.add(d, c, at);
                free_from[d] = at + 1;
            }
    const int used = *std::max_element(free_from.begin(), free_from.end());
    for (std::string& row : out)
        row.resize(static_cast<std::size_t>(used));
    g = std::move(out);
    return true;
}

// Writes c at row[at] (if wanted) and advances; false past the row's end.
bool put(std::string& row, int& at, char c, bool wanted) {
    if (at >= static_cast<int>(row.size())) return false;
    if (wanted) row[at] = c;
    ++at;
    return true;
}

// The warm-up rebuilt like ZB-V's within the grid's peak (at most 2p chunk activations):
// device d runs its passes before its first b as 2(p−1−d) F's, then d+1 pairs of F and f,
// then triples of B, W and (f, else F), with at most min(d+1, peak/2) f's and peak − that
// many F's in the first two parts.
bool rebuild_warmup(Grid& g, int m) {
    const int p = static_cast<int>(g.size());
    const int peak = std::min(grid_peak(g), 2 * p);
    for (int d = 0; d < p; ++d) {
        const int most_f1 = std::min({d + 1, peak / 2, m});
        const int most_f0 = std::min(peak - most_f1, m);
        std::string& row = g[d];
        int f0 = 0, f1 = 0, b1 = 0, w = 0;
        for (char& c : row) {
            if (c == 'b') break;
            f0 += c == 'F';
            f1 += c == 'f';
            b1 += c == 'B';
            w += c == 'W';
            c = ' ';
        }
        int at = d, u_f0 = 0, u_f1 = 0, u_b1 = 0, u_w = 0;
        for (int k = 0; k < 2 * (p - 1 - d); ++k) {
            const bool f = u_f0 < most_f0 && u_f0 < f0;
            u_f0 += f;
            if (!put(row, at, 'F', f)) return false;
        }
        for (int k = 0; k <= d; ++k) {
            const bool f = u_f0 < most_f0 && u_f0 < f0;
            u_f0 += f;
            if (!put(row, at, 'F', f)) return false;
            const bool ff = u_f1 < most_f1 && u_f1 < f1;
            u_f1 += ff;
            if (!put(row, at, 'f', ff)) return false;
        }
        while (u_f0 < f0 || u_f1 < f1 || u_b1 < b1 || u_w < w) {
            const bool b = u_b1 < b1;
            u_b1 += b;
            if (!put(row, at, 'B', b)) return false;
            const bool ww = u_w < w;
            u_w += ww;
            if (!put(row, at, 'W', ww)) return false;
            if (u_f1 < f1) {
                if (u_f1 >= u_f0) return false;
                ++u_f1;
                if (!put(row, at, 'f', true)) return false;
            } else {
                const bool f = u_f0 < f0;
                u_f0 += f;
                if (!put(row, at, 'F', f)) return false;
            }
        }
    }
    return true;
}

// Keeps the first m passes of each kind on each device.
void keep_first(Grid& g, int m) {
    for (std::string& row : g) {
        std::array<int, period> seen{};
        for (char& c : row)
            if (c != ' ' && seen[kind_of(c)]++ >= m) c = ' ';
    }
}

// With few microbatches: each device's first W's moved to the end until its peak reaches
// `peak`, so that no device waits for memory it does not need.
void delay_first_weights(Grid& g, int peak) {
    std::vector<int> peaks;
    for (const std::string& row : g)
        peaks.push_back(row_peak(row));
    const int least = *std::min_element(peaks.begin(), peaks.end());
    for (std::size_t d = 0; d < g.size(); ++d) {
        std::string tail(static_cast<std::size_t>(std::max(0, peak - least)), ' ');
        int moved = 0;
        for (char& c : g[d]) {
            if (peaks[d] + moved >= peak) break;
            if (weight(c)) {
                tail[moved++] = c;
                c = ' ';
            }
        }
        g[d] += tail;
    }
}

// The cool-down rebuilt: after the last f, device d's last (peak+1)/2 b's and last
// min(d+1, …) B's go to fixed slots two apart (b's counted from device 0's last f, one slot
// later per device nearer the last one), the W's of the tail taken out and put back into the
// free slots after the last remaining W, oldest B first; then squeezed.
bool rebuild_cooldown(Grid& g, int m) {
    const int p = static_cast<int>(g.size());
    const int peak = grid_peak(g);
    if (peak > 2 * p) return false;
    const int most_b0 = std::min((peak + 1) / 2, m);
    const int most_b1 = std::min(peak - most_b0, m);
    int anchor = -1;
    for (int d = 0; d < p; ++d) {
        std::string& row = g[d];
        const int length = static_cast<int>(row.size());
        int b1 = 0, b0 = 0, w1 = 0, w0 = 0, last_f1 = -1;
        for (int j = length - 1; j >= 0; --j) {
            const char c = row[j];
            if (c == 'f' && last_f1 < 0) last_f1 = j;
            if (c == 'B' && b1 < d + 1 && b1 < most_b1) {
                row[j] = ' ';
                ++b1;
            }
            if (c == 'b' && b0 < most_b0) {
                row[j] = ' ';
                ++b0;
            }
        }
        for (int j = length - 1; j >= 0; --j) {
            if (w1 >= b1 && w0 >= b0 && w1 + w0 >= peak) break;
            if (row[j] == 'W') {
                row[j] = ' ';
                ++w1;
            } else if (row[j] == 'w') {
                row[j] = ' ';
                ++w0;
            }
        }
        if (d == 0) anchor = last_f1;
        for (int k = 0; k < b0; ++k) {
            const int at = anchor - d + 2 * p - 2 * k;
            if (at < 0 || at >= length || row[at] != ' ') return false;
            row[at] = 'b';
        }
        for (int k = 0; k < b1; ++k) {
            const int at = anchor + 1 + d - 2 * k;
            if (at < 0 || at >= length) return false;
            row[at] = 'B';
        }
    }
    std::size_t longest = 0;
    for (std::string& row : g) {
        int owed1 = 0, owed0 = 0, last_w = -1;
        for (int j = static_cast<int>(row.size()) - 1; j >= 0 && last_w < 0; --j)
            if (weight(row[j])) last_w = j;
        for (int j = 0; j < static_cast<int>(row.size()); ++j) {
            const char c = row[j];
            owed1 += (c == 'B') - (c == 'W');
            owed0 += (c == 'b') - (c == 'w');
            if (c != ' ' || j <= last_w) continue;
            if (owed1 > 0) {
                row[j] = 'W';
                --owed1;
            } else if (owed0 > 0) {
                row[j] = 'w';
                --owed0;
            }
        }
        row.append(static_cast<std::size_t>(std::max(0, owed1)), 'W');
        row.append(static_cast<std::size_t>(std::max(0, owed0)), 'w');
        longest = std::max(longest, row.size());
    }
    for (std::string& row : g)
        row.resize(longest, ' ');
    return squeeze(g, m);
}

// Each free slot, left to right, takes the first later pass of its device that may run there
// (its input done in an earlier slot; an F or f only if the device's memory stays within the
// grid's peak), one of each kind looked at.
void fill_gaps(Grid& g, int m) {
    const int p = static_cast<int>(g.size());
    const int length = static_cast<int>(g[0].size());
    const int peak = grid_peak(g);
    std::vector<std::array<int, period>> last(static_cast<std::size_t>(p));
    for (int d = 0; d < p; ++d) {
        last[d].fill(-1);
        for (int j = 0; j < length; ++j)
            if (g[d][j] != ' ') last[d][kind_of(g[d][j])] = j;
    }
    std::vector<int> held(static_cast<std::size_t>(p), 0);
    SlotIndex index(p, m);
    for (int j = 0; j < length; ++j)
        for (int d = 0; d < p; ++d) {
            std::string& row = g[d];
            if (row[j] != ' ') {
                index.add(d, row[j], j);
                held[d] += held_change(row[j]);
                continue;
            }
            std::array<bool, period> open{};
            int open_kinds = 0;
            for (int k = 0; k < period; ++k)
                if (last[d][k] > j) open[k] = true, ++open_kinds;
            int change = 0, highest = 0;
            for (int k = j + 1; k < length && open_kinds > 0; ++k) {
                const char c = row[k];
                change += held_change(c);
                const int before = highest;
                highest = std::max(highest, change);
                const int kind = kind_of(c);
                if (kind < 0 || !open[kind]) continue;
                open[kind] = false;
                --open_kinds;
                if (held_change(c) > 0 && held[d] + before >= peak) continue;
                const int mb = index.count(d, c);
                bool ready = true;
                auto done_before = [&](int dev, char input, int n) {
                    const int s = n < m ? index.slot(dev, input, n) : -1;
                    return s >= 0 && s < j;
                };
                if (downward(c) && d > 0)
                    ready = done_before(d - 1, c, mb);
                else if (upward(c) && d < p - 1)
                    ready = done_before(d + 1, c, mb);
                else if (c == 'B')
                    ready = index.count(d, 'f') > mb;
                else if (c == 'f')
                    ready = index.count(d, 'F') > mb;
                else if (c == 'b')
                    ready = index.count(d, 'B') > mb;
                else if (weight(c))
                    ready = index.count(d, backward_of(c)) > mb;
                if (!ready) continue;
                row[j] = c;
                row[k] = ' ';
                index.add(d, c, j);
                held[d] += held_change(c);
                break;
            }
        }
}

// The W's renamed so that each device's weight passes follow its backwards in order, and the
// grid as a schedule; nothing when a kind does not have m passes or a dependency is broken.
std::optional<Schedule> to_schedule(const Grid& g, int m) {
    const int p = static_cast<int>(g.size());
    const auto stage = [p](int d, char c) {
        return c == 'F' || c == 'b' || c == 'w' ? d : 2 * p - 1 - d;
    };
    Schedule s = make_empty_schedule("v-patterns", p, m, 2, vshape_placement(p, 2));
    // finish[stage][pass][mb]: the slot after the op, to check the order.
    std::vector<int> finish(static_cast<std::size_t>(2 * p) * 3 * m, -1);
    const auto at = [&](int st, Pass pass, int mb) -> int& {
        return finish[(static_cast<std::size_t>(st) * 3 + static_cast<int>(pass)) * m + mb];
    };
    for (int d = 0; d < p; ++d) {
        std::array<int, period> count{};
        std::deque<char> owed;
        for (int j = 0; j < static_cast<int>(g[d].size()); ++j) {
            char c = g[d][j];
            if (c == ' ') continue;
            if (weight(c)) {
                if (owed.empty()) return std::nullopt;
                c = owed.front();
                owed.pop_front();
            } else if (c == 'B' || c == 'b') {
                owed.push_back(c == 'B' ? 'W' : 'w');
            }
            const int mb = count[kind_of(c)]++;
            if (mb >= m) return std::nullopt;
            const Pass pass = c == 'F' || c == 'f' ? Pass::F : weight(c) ? Pass::W : Pass::B;
            s.device_ops[d].push_back(Op{pass, mb, stage(d, c)});
            at(stage(d, c), pass, mb) = j;
        }
        for (int n : count)
            if (n != m) return std::nullopt;
    }
    // Inputs strictly before: F of the previous stage, B of the next one and the own F, W
    // after its B.
    for (int st = 0; st < 2 * p; ++st)
        for (int mb = 0; mb < m; ++mb) {
            const int f = at(st, Pass::F, mb), b = at(st, Pass::B, mb), w = at(st, Pass::W, mb);
            if (st > 0 && at(st - 1, Pass::F, mb) >= f) return std::nullopt;
            if (st < 2 * p - 1 && at(st + 1, Pass::B, mb) >= b) return std::nullopt;
            if (f >= b || b >= w) return std::nullopt;
        }
    return s;
}

// One block through the framework. `reached`: the peak that stopped it (the repeated grid's,
// or with fewer than 2p microbatches the peak after the surplus is dropped) or the one it
// ended with, for the caller to stop enlarging the block. Nothing when the block's schedule
// cannot be built or needs more than `cap_chunks` chunk activations.
std::optional<Schedule> schedule_of_block(const std::vector<Pattern>& block, int m, int cap_chunks,
                                          int& reached, double& cells,
                                          std::unordered_set<std::size_t>& seen) {
    const int p = static_cast<int>(block.size());
    // Built for at least 2p microbatches (the warm-up needs them), the surplus dropped later.
    const int built = std::max(m, 2 * p);
    Grid g = repeated(block, built);
    cells += static_cast<double>(p) * static_cast<double>(g[0].size());
    int limit = reached = grid_peak(g);
    if ((m == built && limit > cap_chunks) || limit > 2 * p) return std::nullopt;
    if (!squeeze(g, built) || !rebuild_warmup(g, built) || !squeeze(g, built)) return std::nullopt;
    const int peak = grid_peak(g);
    if (peak > limit) return std::nullopt;
    if (m < built) {
        keep_first(g, m);
        if (m <= p && 2 * m <= cap_chunks) delay_first_weights(g, std::min(2 * p, peak));
        if (!squeeze(g, m)) return std::nullopt;
        limit = reached = grid_peak(g);
        if (limit > cap_chunks) return std::nullopt;
    }
    if (!rebuild_cooldown(g, m)) return std::nullopt;
    fill_gaps(g, m);
    const int final_peak = grid_peak(g);
    if (final_peak > limit) return std::nullopt;
    reached = final_peak;
    std::string all;
    for (const std::string& row : g)
        all += row + '|';
    if (!seen.insert(std::hash<std::string>{}(all)).second) return std::nullopt;
    return to_schedule(g, m);
}

}  // namespace

void offer_v_patterns(int p, int m, double cap, double max_cells, BestPlan& best) {
    if (p < 2 || m < 1) return;
    const int cap_chunks = static_cast<int>(std::min(2.0 * p, std::floor(2 * cap + eps)));
    double cells = 0;
    // Different blocks often end in the same grid: each grid is timed once.
    std::unordered_set<std::size_t> seen;
    // The first device's F at slot 0, its f, B and b anywhere else in the period.
    std::vector<Pattern> firsts;
    for (int f1 = 1; f1 < period; ++f1)
        for (int b1 = 1; b1 < period; ++b1)
            for (int b0 = 1; b0 < period; ++b0) {
                if (f1 == b1 || f1 == b0 || b1 == b0) continue;
                Pattern first{0, f1, b1, b0, -1, -1};
                place_weights(first);
                firsts.push_back(first);
            }
    // Blocks of one offset throughout first, then those of two (within a budget, the first
    // are the more likely to matter).
    for (bool two_offsets : {false, true})
        for (const Pattern& first : firsts)
            for (int step0 = 1; step0 <= max_offset; ++step0)
                for (int step1 = 1; step1 <= step0; ++step1) {
                    if ((step1 != step0) != two_offsets) continue;
                    for (int split = 1; split < (two_offsets ? p : 2); ++split) {
                        if (cells > max_cells) return;
                        const auto block = make_block(first, step0, step1, split, p);
                        if (!block) continue;
                        int reached = 0;
                        std::optional<Schedule> s =
                            schedule_of_block(*block, m, cap_chunks, reached, cells, seen);
                        // More devices with the larger offset only hold more.
                        if (reached > cap_chunks) break;
                        if (s) best.offer(std::move(*s));
                    }
                }
}

}  // namespace pipesim::detail
