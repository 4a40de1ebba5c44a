// job_insert.hpp: writing jobs' rows into pgjq.live_jobs. A job that neither waits nor has a unique key
// goes through the table access method (tableam/row_insert.hpp), a batch of them many to a page; the others,
// and any table the direct path cannot write, take their INSERT statement.
#pragma once

#include "core/enqueue.hpp"

namespace pgjq {

// The parameters of the insert statements ($1 to $12).
constexpr int k_insert_values = 12;
void fill_insert_values(const enqueue_request& r, int32 max_attempts, Datum* values, char* nulls);

// Inserts r's one job; false when its unique key was taken meanwhile by a transaction that committed (nothing
// inserted then). Requires an SPI connection.
bool insert_job(const enqueue_request& r, const Datum* values, const char* nulls, int64* id);

// A batch's ids, drawn as one contiguous run while no other batch draws (job_insert.cpp says why).
Datum draw_batch_ids(int32 count);
// Inserts a batch of r.count jobs without keys (waiting ones when r waits) with the ids `ids` drawn for them,
// in payload order. Requires an SPI connection.
void insert_batch(const enqueue_request& r, Datum* values, char* nulls, Datum ids);

}  // namespace pgjq
