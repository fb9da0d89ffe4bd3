#pragma once
// Random per-stage pass times for tests that compare engines or check against independent
// calculations: uneven stages catch errors that uniform costs hide.

#include <random>

#include "schedules/costs.hpp"

namespace pipesim::test {

/// F, B, W of each of `stages` virtual stages drawn uniformly from [low, high).
inline StageCosts random_costs(int stages, std::mt19937& rng, double low, double high) {
    std::uniform_real_distribution<double> dist(low, high);
    StageCosts c;
    for (int s = 0; s < stages; ++s) {
        c.forward.push_back(dist(rng));
        c.backward_input.push_back(dist(rng));
        c.backward_weight.push_back(dist(rng));
    }
    return c;
}

}  // namespace pipesim::test
