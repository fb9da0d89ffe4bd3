#include "schedules/placement.hpp"

namespace pipesim {

std::vector<int> looped_placement(int devices, int chunks) {
    std::vector<int> placement(static_cast<std::size_t>(devices * chunks));
    for (int s = 0; s < devices * chunks; ++s)
        placement[s] = s % devices;
    return placement;
}

std::vector<int> vshape_placement(int devices, int chunks) {
    std::vector<int> placement(static_cast<std::size_t>(devices * chunks));
    for (int chunk = 0; chunk < chunks; ++chunk) {
        for (int i = 0; i < devices; ++i) {
            const int offset = (chunk % 2 == 0) ? i : devices - 1 - i;
            placement[chunk * devices + offset] = i;
        }
    }
    return placement;
}

PlacementKind classify_placement(const std::vector<int>& stage_device, int devices) {
    if (devices <= 0 || stage_device.size() % static_cast<std::size_t>(devices) != 0)
        return PlacementKind::custom;
    const int chunks = static_cast<int>(stage_device.size()) / devices;
    if (stage_device == looped_placement(devices, chunks)) return PlacementKind::looped;
    if (chunks % 2 == 0 && stage_device == vshape_placement(devices, chunks))
        return PlacementKind::vshape;
    return PlacementKind::custom;
}

std::string_view placement_name(PlacementKind kind) {
    switch (kind) {
        case PlacementKind::looped:
            return "looped";
        case PlacementKind::vshape:
            return "v-shape";
        case PlacementKind::custom:
            return "custom";
    }
    return "custom";
}

}  // namespace pipesim
