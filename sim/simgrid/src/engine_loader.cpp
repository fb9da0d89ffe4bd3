// simulate() in programs: finds the engine plugin, loads it once, and calls it through its
// table (engine_api.hpp), turning the errors it returns back into exceptions.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "engine_api.hpp"
#include "fileio/memory_budget.hpp"
#include "schedules/validate.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::simgrid {

namespace {

using detail::EngineApi;
using detail::EngineError;

constexpr const char* plugin_file = PIPESIM_ENGINE_FILE;
constexpr const char* path_variable = "PIPESIM_SIMGRID_ENGINE";

struct LoadedEngine {
    const EngineApi* api = nullptr;
    std::string path;
};

std::string directory_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// The directory of the program or shared object (the Python module) this code is linked into.
std::string home_directory() {
    Dl_info info{};
    link_map* object = nullptr;
    if (::dladdr1(reinterpret_cast<void*>(&home_directory), &info,
                  reinterpret_cast<void**>(&object), RTLD_DL_LINKMAP) != 0 &&
        object && object->l_name && object->l_name[0] != '\0') {
        // A module loaded through a relative path (PYTHONPATH=.) names it relative to the
        // working directory.
        std::error_code ignored;
        return directory_of(std::filesystem::absolute(object->l_name, ignored).string());
    }
    // The executable's link map has no name.
    std::array<char, 4096> self{};
    const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
    return n > 0 ? directory_of(std::string(self.data(), static_cast<std::size_t>(n)))
                 : std::string();
}

// Opens `file` (a path, or a bare name looked up on the library path) and checks its table.
// Returns no table and the loader's reason in `error` when it cannot be opened.
LoadedEngine open_engine(const std::string& file, std::string& error) {
    void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* reason = ::dlerror();
        error = reason ? reason : "unknown error";
        return {};
    }
    LoadedEngine engine;
    engine.path = file;
    const link_map* map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
        engine.path = map->l_name;
    const auto entry =
        reinterpret_cast<detail::EngineEntryPoint>(::dlsym(handle, detail::engine_entry_point));
    if (!entry) {
        ::dlclose(handle);
        throw EngineUnavailable(fmt::format(
            "the SimGrid engine is not available: {} is not a pipesim engine plugin (no {})",
            engine.path, detail::engine_entry_point));
    }
    engine.api = entry();
    if (!engine.api || engine.api->version != detail::engine_api_version ||
        engine.api->type_sizes != detail::crossing_type_sizes() || !engine.api->simulate) {
        ::dlclose(handle);
        throw EngineUnavailable(
            fmt::format("the SimGrid engine is not available: {} was built from another version of "
                        "pipesim; rebuild or reinstall it with this one",
                        engine.path));
    }
    return engine;
}

// Looks next to the program (or module), in ../LIBDIR/pipesim from there (an installation),
// on the library path (build trees' run paths, LD_LIBRARY_PATH), then in the configured
// LIBDIR/pipesim: what the program was built or installed with comes before another copy.
LoadedEngine find_engine() {
    std::string error;
    const auto open_or_throw = [&](const std::string& path) {
        LoadedEngine engine = open_engine(path, error);
        if (!engine.api)
            throw EngineUnavailable(fmt::format(
                "the SimGrid engine is not available: cannot load {}: {}", path, error));
        return engine;
    };
    if (const char* given = std::getenv(path_variable); given && *given)
        return open_or_throw(given);
    const auto found = [](const std::string& dir) {
        return ::access(fmt::format("{}/{}", dir, plugin_file).c_str(), F_OK) == 0;
    };
    const std::string home = home_directory();
    const std::string home_libdir =
        std::filesystem::path(fmt::format("{}/../{}", home, PIPESIM_ENGINE_LIBDIR))
            .lexically_normal()
            .string();
    for (const std::string& dir : {home, home_libdir})
        if (!home.empty() && found(dir))
            return open_or_throw(fmt::format("{}/{}", dir, plugin_file));
    LoadedEngine engine = open_engine(plugin_file, error);
    if (engine.api) return engine;
    // Found on the library path but not loadable (a library it needs is missing, say).
    if (error.rfind(fmt::format("{}: cannot open shared object file", plugin_file), 0) != 0)
        throw EngineUnavailable(fmt::format(
            "the SimGrid engine is not available: cannot load {}: {}", plugin_file, error));
    const std::string installed = PIPESIM_ENGINE_FULL_LIBDIR;
    if (found(installed)) return open_or_throw(fmt::format("{}/{}", installed, plugin_file));
    throw EngineUnavailable(fmt::format(
        "the SimGrid engine is not available: no {} in {}, {}, on the library path or in {}; set "
        "{} to its path",
        plugin_file, home, home_libdir, installed, path_variable));
}

const LoadedEngine& engine() {
    static const LoadedEngine loaded = find_engine();  // a failure is retried on the next call
    return loaded;
}

}  // namespace

std::string load_engine() {
    return engine().path;
}

SimResult simulate(const Schedule& schedule, const SimWorkload& workload,
                   const ClusterSpec& cluster, const Layout& layout, const SimOptions& options) {
    SimResult result;
    std::string error;
    switch (engine().api->simulate(schedule, workload, cluster, layout, options, result, error)) {
        case EngineError::none:
            return result;
        case EngineError::invalid_schedule:
            throw InvalidSchedule(error);
        case EngineError::invalid_argument:
            throw std::invalid_argument(error);
        case EngineError::over_memory:
            throw fileio::OverMemoryBudget(error);
        case EngineError::logic_error:
            throw std::logic_error(error);
        case EngineError::out_of_memory:
            throw std::bad_alloc();
        case EngineError::runtime_error:
            break;
    }
    throw std::runtime_error(error);
}

}  // namespace pipesim::simgrid
