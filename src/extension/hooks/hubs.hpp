// hubs.hpp: pgjq registers each PostgreSQL mechanism once, here, and each hub calls the domain's handlers in
// the order its file writes down. _PG_init (module.cpp) registers the hubs.
#pragma once

namespace pgjq {

// One transaction callback and one subtransaction callback (transaction_hub.cpp).
void register_transaction_hub();
// One relation-cache and the catalog-cache callbacks (invalidation_hub.cpp).
void register_invalidation_hub();
// One utility hook (utility_hub.cpp).
void register_utility_hub();
// With preload: one table of shared-memory regions, requested and attached together (shared_memory_hub.cpp).
void register_shared_memory_hub();

}  // namespace pgjq
