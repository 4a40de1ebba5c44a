// trigger.hpp: the prologue every pgjq trigger function shares.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// The call's trigger data, or an ERROR naming `function` when it was not called as a trigger.
inline TriggerData* trigger_data(FunctionCallInfo fcinfo, const char* function)
{
    if (!CALLED_AS_TRIGGER(fcinfo))
        ereport(
            ERROR,
            (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED), errmsg("%s must be called as a trigger", function)));
    return reinterpret_cast<TriggerData*>(fcinfo->context);
}

// The row as it will be stored: the new version for an UPDATE, the inserted one for an INSERT.
inline HeapTuple new_row(const TriggerData* trigger)
{
    return TRIGGER_FIRED_BY_UPDATE(trigger->tg_event) ? trigger->tg_newtuple : trigger->tg_trigtuple;
}

}  // namespace pgjq
