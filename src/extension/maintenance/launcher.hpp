// launcher.hpp: starting maintenance workers: the launcher (with preload) and pgjq.start_worker() both
// register them here.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Registers a dynamic maintenance worker for `dboid`. Returns false when no background worker slot is free.
// `generation` is 0 for the launcher's workers, the slot's generation for pgjq.start_worker()'s.
bool launch_maintenance_worker(Oid dboid, const char* datname, bool by_launcher, uint32 generation, pid_t notify_pid,
                               BackgroundWorkerHandle** handle);
// Registers the launcher at server start (preload only).
void register_launcher();

}  // namespace pgjq

extern "C" {
PGDLLEXPORT void pgjq_maintenance_main(Datum main_arg);
PGDLLEXPORT void pgjq_launcher_main(Datum main_arg);
}
