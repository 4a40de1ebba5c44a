# bench.mk: plain rules for build/pgjq-bench, the benchmark program (`make bench` runs scripts/bench.sh,
# which builds it with `make bench-bin`). Included by the top Makefile after src/client/client.mk, whose
# static library it links so that the client's cost is part of every pgjq figure. Not part of `all`:
# benchmarks are never built or run by the tests or CI. Every variable here is BENCH_-prefixed.

BENCH_CXX      := g++
BENCH_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -MMD -MP -pthread
BENCH_CPPFLAGS := -Isrc/client/include -I$(shell $(PG_CONFIG) --includedir)
BENCH_LIBS     := build/client/libpgjq_client.a -lpq -lpthread

BENCH_SRCS := $(sort $(wildcard src/bench/*.cpp))
BENCH_OBJS := $(patsubst src/bench/%.cpp,build/obj/bench/%.o,$(BENCH_SRCS))
BENCH_BIN  := build/pgjq-bench

.PHONY: bench-bin clean-bench
bench-bin: $(BENCH_BIN)

build/obj/bench/%.o: src/bench/%.cpp
	@mkdir -p $(dir $@)
	$(BENCH_CXX) $(BENCH_CXXFLAGS) $(BENCH_CPPFLAGS) -c $< -o $@

$(BENCH_BIN): $(BENCH_OBJS) build/client/libpgjq_client.a
	@mkdir -p $(dir $@)
	$(BENCH_CXX) $(BENCH_CXXFLAGS) -o $@ $(BENCH_OBJS) $(BENCH_LIBS)

-include $(BENCH_OBJS:.o=.d)

clean: clean-bench
clean-bench:
	rm -rf build/obj/bench $(BENCH_BIN) build/bench
