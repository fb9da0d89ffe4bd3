#pragma once
// Placement of virtual stages on devices.

#include <string_view>
#include <vector>

namespace pipesim {

/// Looped placement (interleaved 1F1B): virtual stage s runs on device s mod p.
std::vector<int> looped_placement(int devices, int chunks);

/// V-shape placement: chunk k of device i is stage k·p + i for even k and k·p + (p−1−i) for
/// odd k, so with two chunks device i holds stages i and 2p−1−i. Precondition: chunks even.
std::vector<int> vshape_placement(int devices, int chunks);

enum class PlacementKind { looped, vshape, custom };

/// Which of the named placements `stage_device` is (custom if neither).
PlacementKind classify_placement(const std::vector<int>& stage_device, int devices);

std::string_view placement_name(PlacementKind kind);

}  // namespace pipesim
