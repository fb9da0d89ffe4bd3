#pragma once
// The generators registered in registry.cpp, one per file.

#include "schedules/registry.hpp"

namespace pipesim::detail {

Schedule generate_gpipe(const GeneratorOptions& options);
Schedule generate_1f1b(const GeneratorOptions& options);
Schedule generate_interleaved_1f1b(const GeneratorOptions& options);
Schedule generate_zb_h1(const GeneratorOptions& options);
Schedule generate_zb_h2(const GeneratorOptions& options);
Schedule generate_v_min(const GeneratorOptions& options);
Schedule generate_v_half(const GeneratorOptions& options);
Schedule generate_zb_1p(const GeneratorOptions& options);
Schedule generate_zb_2p(const GeneratorOptions& options);

}  // namespace pipesim::detail
