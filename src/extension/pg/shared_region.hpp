// shared_region.hpp: what a piece of pgjq's shared memory tells the shared-memory hub
// (hooks/shared_memory_hub.cpp), which requests every region at server start (with preload) and attaches the
// postmaster to each; the backends it forks inherit what the attach functions recorded.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

struct shared_region {
    const char* name;  // of the memory (ShmemInitStruct) and of its LWLock tranche
    Size (*size)();
    int (*lwlocks)();  // how many LWLocks to request in a tranche of the same name; nullptr: none
    // Records where the region and its LWLocks are (nullptr when it has none); `created`: the memory is new
    // and must be initialized first.
    void (*attach)(void* memory, bool created, LWLockPadded* locks);
};

// For shared_region::lwlocks: the region has one LWLock.
inline int one_lwlock()
{
    return 1;
}

}  // namespace pgjq
