// depth.cpp: the backpressure counter rows (see depth.hpp).
#include "core/depth.hpp"

#include "core/limits.hpp"
#include "core/settings.hpp"
#include "core/spi.hpp"

namespace pgjq {

static SPIPlanPtr s_adjust_depth, s_create_depth_rows;

// clang-format off
static const plan_text k_adjust_depth = {
    "UPDATE pgjq.queue_depth SET unfinished = unfinished + $3 WHERE queue_name = $1 AND slot = $2",
    3, {TEXTOID, INT2OID, INT8OID}};
static const plan_text k_create_depth_rows = {
    "INSERT INTO pgjq.queue_depth (queue_name, slot) SELECT $1, s FROM pg_catalog.generate_series(0, $2) AS s",
    2, {TEXTOID, INT4OID}};
// clang-format on

int16 depth_slot()
{
    if (forced_depth_slot >= 0)
        return static_cast<int16>(forced_depth_slot);
    // Backend ids are handed out lowest-free first, so up to 16 sessions connected at once get slots of
    // their own; with the process id, two of four workers shared a slot one time in three and then
    // waited for each other's commit on the counter row.
    return static_cast<int16>(MyBackendId % k_depth_slots);
}

void adjust_depth(Datum queue_name, int64 delta)
{
    Datum values[3] = {queue_name, Int16GetDatum(depth_slot()), Int64GetDatum(delta)};
    run_plan(saved_plan(&s_adjust_depth, k_adjust_depth), values, nullptr);
}

void create_depth_rows(Datum queue_name)
{
    Datum values[2] = {queue_name, Int32GetDatum(k_depth_slots - 1)};
    run_plan(saved_plan(&s_create_depth_rows, k_create_depth_rows), values, nullptr);
}

}  // namespace pgjq
