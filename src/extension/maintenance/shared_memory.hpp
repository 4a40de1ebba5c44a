// shared_memory.hpp: what the maintenance side reserves in shared memory with preload, for the shared-memory
// hub (hooks/shared_memory_hub.cpp). What the regions hold stays private to maintenance/.
#pragma once

#include "pg/shared_region.hpp"

namespace pgjq {

// The workers' slots, one per database (shared_state.hpp), sized for pgjq.max_databases.
extern const shared_region k_worker_state_region;
// The notification relay's rings, one per possible worker (notification_relay.hpp).
extern const shared_region k_relay_region;

}  // namespace pgjq
