// pgjq/export.hpp: what the client's shared library exports. It is built with -fvisibility=hidden, so
// only what is marked PGJQ_API (the public classes, with their type information, and free functions) is
// part of its ABI; everything in namespace pgjq::detail and the .cpp files stays internal.
#pragma once

#if defined(__GNUC__)
#define PGJQ_API __attribute__((visibility("default")))
#else
#define PGJQ_API
#endif
