// name_resolution.hpp: an API call resolves names as under search_path = pg_catalog, pg_temp.
//
// The API's functions run as the extension's owner once they have checked their caller, so a name they
// resolve must never find an object of a schema the caller put on its search_path. SET clauses on the SQL
// functions do this, and for a single-job enqueue they were 5-10 % of its server CPU
// (ProcessGUCArray at each call, AtEOXact_GUC walking every setting of the server at its end, then the
// caller's search path computed again). An override of the search path does the same for a list push and
// pop: the caller's own search_path setting is never touched, and a (sub)transaction's abort drops the
// override with it. Every API call takes it; enqueue, try_enqueue and insert_into_jobs_view have no SET
// clause besides.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Until unpin_name_resolution(token): unqualified names resolve as under search_path = pg_catalog, pg_temp.
int pin_name_resolution();
// Ends the pin that pin_name_resolution returned `token` for; the innermost pin ends first.
void unpin_name_resolution(int token);

}  // namespace pgjq
