// shared_memory_hub.cpp: pgjq's shared memory, one table of regions. With preload, _PG_init registers the
// hub, which requests every region's memory and LWLocks at server start and attaches the postmaster to each
// once the memory exists; forked backends inherit the pointers. Without preload only the maintenance workers'
// state exists, taken from PostgreSQL's spare memory on first use (maintenance/shared_state.cpp); the others
// stay absent, and each of their users has a way without them (its header says which).
#include "hooks/hubs.hpp"

#include "core/claim_floor.hpp"
#include "core/depth_slots.hpp"
#include "core/enqueue_counts.hpp"
#include "core/latency.hpp"
#include "maintenance/shared_memory.hpp"
#include "pg/pg.hpp"
#include "pg/shared_region.hpp"

namespace {

using namespace pgjq;

const shared_region* const k_regions[] = {
    &k_worker_state_region,   &k_relay_region,        &k_latency_region,
    &k_enqueue_counts_region, &k_claim_floors_region, &k_depth_slots_region,
};

shmem_request_hook_type s_previous_request = nullptr;
shmem_startup_hook_type s_previous_startup = nullptr;

void request_regions()
{
    if (s_previous_request)
        s_previous_request();
    for (const shared_region* region : k_regions) {
        RequestAddinShmemSpace(region->size());
        if (region->lwlocks != nullptr)
            RequestNamedLWLockTranche(region->name, region->lwlocks());
    }
}

void attach_regions()
{
    if (s_previous_startup)
        s_previous_startup();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    for (const shared_region* region : k_regions) {
        bool found;
        void* memory = ShmemInitStruct(region->name, region->size(), &found);
        region->attach(memory, !found, region->lwlocks != nullptr ? GetNamedLWLockTranche(region->name) : nullptr);
    }
    LWLockRelease(AddinShmemInitLock);
}

}  // namespace

namespace pgjq {

void register_shared_memory_hub()
{
    s_previous_request = shmem_request_hook;
    shmem_request_hook = request_regions;
    s_previous_startup = shmem_startup_hook;
    shmem_startup_hook = attach_regions;
}

}  // namespace pgjq
