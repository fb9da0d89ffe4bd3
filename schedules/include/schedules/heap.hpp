#pragma once
// The C library's heap set up for pipesim's allocations: few, large and short-lived blocks
// (op lists, timing tables) that a page fault per 4 KiB made expensive.

namespace pipesim {

/// Call first in main() (and in a process that runs many jobs; a second call does nothing).
/// On Linux with glibc, and only when this process has no address-space limit (`ulimit -v`:
/// the reservation below would count against it): blocks up to 32 MiB come from the heap
/// instead of a mapping each, the heap grows 256 MiB at a time (address space only), its first
/// such step is marked for transparent huge pages (a fault per 2 MiB instead of per 4 KiB),
/// and up to 128 MiB freed at its top stay for the next allocations instead of going back to
/// the kernel, to be faulted in again. Elsewhere it does nothing.
void tune_heap();

/// Whether tune_heap() changed this process's heap.
bool heap_tuned();

}  // namespace pipesim
