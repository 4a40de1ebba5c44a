// latency.cpp: pgjq.latency_histograms(), the wait and run time histograms of the current database's queues
// as core/latency.hpp keeps them, of the queues the caller may read (the view pgjq.queue_latency adds
// percentiles).
#include "core/latency.hpp"
#include "core/api_function.hpp"

namespace {

using namespace pgjq;

ArrayType* float8_array(const double* values, int n)
{
    Datum* elements = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    for (int i = 0; i < n; i++)
        elements[i] = Float8GetDatum(values[i]);
    return construct_array(elements, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

ArrayType* int8_array(const int64* values, int n)
{
    Datum* elements = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    for (int i = 0; i < n; i++)
        elements[i] = Int64GetDatum(values[i]);
    return construct_array(elements, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

}  // namespace

// Rows (queue_name, measure 'wait' or 'run', le: the buckets' upper bounds in seconds ending with Infinity,
// buckets: the cumulative count of each, jobs, sum_seconds).
PGJQ_API_FUNCTION(latency_histograms)
{
    require_some(call, cap_producer | cap_worker | cap_admin | cap_observer);
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    double bounds[k_latency_buckets];
    for (int b = 0; b < k_latency_bounds; b++)
        bounds[b] = k_latency_bound_seconds[b];
    bounds[k_latency_bounds] = static_cast<double>(INFINITY);
    int count;
    const latency_reading* readings = read_latencies(&count);
    for (int i = 0; i < count; i++) {
        const latency_reading& r = readings[i];
        if (!may_read_queue(call.caller, r.queue_name))
            continue;
        int64 cumulative[k_latency_buckets];
        int64 running = 0;
        for (int b = 0; b < k_latency_buckets; b++) {
            running = r.counts[b] > PG_INT64_MAX - running ? PG_INT64_MAX : running + r.counts[b];
            cumulative[b] = running;
        }
        Datum values[6] = {CStringGetTextDatum(r.queue_name),
                           CStringGetTextDatum(r.kind == latency_wait ? "wait" : "run"),
                           PointerGetDatum(float8_array(bounds, k_latency_buckets)),
                           PointerGetDatum(int8_array(cumulative, k_latency_buckets)),
                           Int64GetDatum(running),
                           Float8GetDatum(r.sum_seconds)};
        bool nulls[6] = {false, false, false, false, false, false};
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    return (Datum) 0;
}
