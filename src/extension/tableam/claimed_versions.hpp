// claimed_versions.hpp: where this backend's direct claims (core/direct_claim.hpp) left the versions of the
// jobs they claimed, so that the same session's completion of them (core/direct_archive.hpp) fetches each
// by its tuple id instead of descending live_jobs' primary key: the descent was about a fifth of a
// batch-100 completion's CPU. A remembered place is only a guess, checked by a fetch under the completion's
// snapshot with the id compared: a version changed since (a heartbeat, a recovery, a rolled-back claim) is
// not visible there, and the key is read as before.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

void remember_claimed_version(Relation live, int64 id, const ItemPointerData* tid);

// The place remembered for job `id` of `live`, if any (`live` has not been rewritten since).
bool claimed_version(Relation live, int64 id, ItemPointerData* tid);

}  // namespace pgjq
