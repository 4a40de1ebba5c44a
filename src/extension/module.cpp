// module.cpp: PG_MODULE_MAGIC, _PG_init and the GUCs; nothing else.
#include "args.hpp"

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
    MarkGUCPrefixReserved("pgjq");
}
}
