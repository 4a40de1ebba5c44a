// database_commands.hpp: dropping, renaming and copying a database a maintenance worker serves (see the .cpp).
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// _PG_init: the utility hook.
void register_database_commands_hook();

}  // namespace pgjq
