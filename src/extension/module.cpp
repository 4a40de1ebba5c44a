// module.cpp: PG_MODULE_MAGIC, _PG_init and the GUCs; nothing else.
#include "args.hpp"
#include "spi_plans.hpp"

extern "C" {
PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

void _PG_init(void)
{
    DefineCustomIntVariable("pgjq.max_payload_bytes",
                            "Largest payload or result, in bytes, that pgjq accepts for one job.",
                            "Larger values are rejected with SQLSTATE 54000.",
                            &pgjq::max_payload_bytes, 1024 * 1024, 1, 256 * 1024 * 1024,
                            PGC_SUSET, GUC_UNIT_BYTE, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.depth_slot",
                            "Counter slot of pgjq.queue_depth this session writes (-1: chosen by backend).",
                            "For tests that need two sessions to share or not share a slot.",
                            &pgjq::forced_depth_slot, -1, -1, 15,
                            PGC_USERSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
    MarkGUCPrefixReserved("pgjq");
}
}
