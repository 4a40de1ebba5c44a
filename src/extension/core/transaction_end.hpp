// transaction_end.hpp: what pgjq does as a transaction commits or ends, in one place because the order
// matters: settling waiting jobs (core/waiting_jobs.hpp) may cancel jobs and so change the backpressure
// counters, whose ledger (core/depth.hpp) is written after it.
#pragma once

namespace pgjq {

// _PG_init
void register_transaction_end_callback();

}  // namespace pgjq
