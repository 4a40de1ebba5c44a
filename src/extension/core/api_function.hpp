// api_function.hpp: PGJQ_API_FUNCTION, how every function of the SQL API is declared: the bridge of
// pg/boundary.hpp, and around the body the caller's identity (core/privileges.hpp) and the pinned name
// resolution (pg/name_resolution.hpp).
#pragma once

#include "core/privileges.hpp"
#include "pg/boundary.hpp"
#include "pg/name_resolution.hpp"

// clang-format off
// A function of the SQL API: the same bridge, and around the call the caller's identity (api_call, see
// core/privileges.hpp): recorded, checked by the body, and replaced by the extension's owner's until the
// body returns; names resolve in pg_catalog (and pg_temp) alone meanwhile (pg/name_resolution.hpp).
#define PGJQ_API_FUNCTION(sql_name)                                                    \
    static Datum sql_name##_impl(FunctionCallInfo fcinfo, const pgjq::api_call& call); \
    static Datum sql_name##_as_owner(FunctionCallInfo fcinfo)                          \
    {                                                                                  \
        const int pin = pgjq::pin_name_resolution();                                   \
        pgjq::api_call call = pgjq::begin_api_call();                                  \
        Datum result = sql_name##_impl(fcinfo, call);                                  \
        pgjq::end_api_call(call);                                                      \
        pgjq::unpin_name_resolution(pin);                                              \
        return result;                                                                 \
    }                                                                                  \
    extern "C" {                                                                       \
    PG_FUNCTION_INFO_V1(pgjq_##sql_name);                                              \
    Datum pgjq_##sql_name(PG_FUNCTION_ARGS) { return pgjq::entry(fcinfo, sql_name##_as_owner); } \
    }                                                                                  \
    static Datum sql_name##_impl(FunctionCallInfo fcinfo, const pgjq::api_call& call)
// clang-format on
