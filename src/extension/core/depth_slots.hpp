// depth_slots.hpp: which of the k_depth_slots counter rows of each queue (core/depth.hpp) this backend writes.
// Producers that write the same row wait for each other's commit, so each backend that writes counters takes a
// slot of its own for as long as it lives: the lowest one free, from a table in shared memory (with preload),
// so that up to k_depth_slots such backends at once never share one, whatever numbers PostgreSQL gave them.
// Without preload, or when every slot is taken, a backend writes the slot of its backend number (PostgreSQL 17
// hands numbers out oldest-released first, so sessions share slots there more often than on 15 and 16).
#pragma once

#include "pg/pg.hpp"
#include "pg/shared_region.hpp"

namespace pgjq {

// The counter slot this backend writes (pgjq.depth_slot forces one, for tests).
int16 depth_slot();

// With preload, the shared-memory hub (hooks/shared_memory_hub.cpp) reserves the table of slot owners.
extern const shared_region k_depth_slots_region;

}  // namespace pgjq
