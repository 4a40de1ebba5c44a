// boundary.hpp: the single bridge between PostgreSQL's C calling convention and pgjq's C++.
//
// Every SQL-callable symbol is declared with PGJQ_FUNCTION, which puts it in extern "C" and routes the
// call through pgjq::entry. PostgreSQL errors (ereport) longjmp straight through these frames, so the
// code behind an entry keeps only trivially destructible locals. A C++ exception that escapes anyway
// (std::bad_alloc from a helper) is caught here and turned into an ERROR after the catch block has
// closed: raising inside it would longjmp over the live exception object.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

template <typename Impl>
inline Datum entry(FunctionCallInfo fcinfo, Impl impl)
{
    char message[256];
    try {
        return impl(fcinfo);
    } catch (const std::exception& e) {
        strlcpy(message, e.what(), sizeof message);
    } catch (...) {
        strlcpy(message, "unknown C++ exception", sizeof message);
    }
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgjq internal error: %s", message)));
    pg_unreachable();
}

// The same bridge for a background worker's main: a C++ exception must not reach the postmaster as an
// abort() (that restarts the whole cluster); it becomes FATAL, exit code 1, and a restart of this
// worker alone after bgw_restart_time.
template <typename Main>
inline void worker_entry(const char* who, Main main)
{
    char message[256];
    try {
        main();
        return;
    } catch (const std::exception& e) {
        strlcpy(message, e.what(), sizeof message);
    } catch (...) {
        strlcpy(message, "unknown C++ exception", sizeof message);
    }
    ereport(FATAL, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: %s", who, message)));
}

}  // namespace pgjq

// clang-format off
#define PGJQ_FUNCTION(sql_name)                                                        \
    static Datum sql_name##_impl(FunctionCallInfo fcinfo);                             \
    extern "C" {                                                                       \
    PG_FUNCTION_INFO_V1(pgjq_##sql_name);                                              \
    Datum pgjq_##sql_name(PG_FUNCTION_ARGS) { return pgjq::entry(fcinfo, sql_name##_impl); } \
    }                                                                                  \
    static Datum sql_name##_impl(FunctionCallInfo fcinfo)
// clang-format on
