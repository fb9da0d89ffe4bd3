// Stand-ins for the SimGrid engine plugin that the loader must refuse (test_simgrid_cli.cpp):
// with PIPESIM_FAKE_ENTRY_POINT, a plugin whose table is of another version (0, which no
// pipesim has); without it, a shared object without the entry point.
#ifdef PIPESIM_FAKE_ENTRY_POINT
namespace {
struct OldTable {
    int version = 0;  // the first field of every version's table
};
const OldTable table;
}  // namespace

extern "C" __attribute__((visibility("default"))) const void* pipesim_simgrid_engine_api() {
    return &table;
}
#else
extern "C" __attribute__((visibility("default"))) int pipesim_not_an_engine() {
    return 0;
}
#endif
