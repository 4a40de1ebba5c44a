# pgjq: PGXS builds the server extension (pgjq.so); plain rules build the C++ client, the demo and tests.
# `make` builds the extension, the client, the command line and the demo; `make extension` the extension alone.
# `make installcheck` runs the regression, isolation and TAP suites against the staged install
# (scripts/stage.sh): temporary instances, so no server has to be running and nothing has to be installed
# system-wide. scripts/test.sh runs them and the client's suites.

EXTENSION  = pgjq pgjq_router
MODULE_big = pgjq
EXT_SRCS   = $(sort $(wildcard src/extension/*.cpp src/extension/*/*.cpp))
OBJS       = $(EXT_SRCS:.cpp=.o)
# pgjq_router.so, the router database's own module (it parses a node's conninfo with libpq): never pgjq.so,
# whose _PG_init would register pgjq's hooks in the router database. Linked with libpq below.
MODULES    = src/router/pgjq_router
DATA       = $(sort $(wildcard src/extension/pgjq--*.sql src/router/pgjq_router--*.sql))
PGFILEDESC = "pgjq - job queue inside PostgreSQL"

PG_CONFIG ?= pg_config
# One home for the version: pgjq.control's default_version, which the library and the client report.
PGJQ_VERSION := $(shell sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" pgjq.control)
override PG_CPPFLAGS += -DPGJQ_VERSION='"$(PGJQ_VERSION)"' -Isrc/extension
override PG_CXXFLAGS += -std=c++17 -Wall -Wextra -Wno-register -Wno-unused-parameter -Wno-missing-field-initializers
# Header dependencies (PGXS tracks them only in servers configured with --enable-depend): without them an
# object built against an older header survives a rebuild, and the module fails to load.
override PG_CXXFLAGS += -MMD -MP
SHLIB_LINK += -lstdc++
# JIT gains nothing for SPI-bound code, and Debian's clang-14 bitcode step would compile C++17 as C++14.
override with_llvm = no

# Tests: pg_regress runs in a temporary instance created from the staged tree (see scripts/stage.sh).
PG_BINDIR   := $(shell $(PG_CONFIG) --bindir)
STAGE_DIR   ?= $(CURDIR)/build/stage
STAGE_BIN    = $(STAGE_DIR)/runtime$(PG_BINDIR)
TEST_OUT    ?= $(CURDIR)/build/test-output

REGRESS      = $(basename $(notdir $(sort $(wildcard sql/*.sql))))
REGRESS_OPTS = --bindir=$(STAGE_BIN) --temp-instance=$(TEST_OUT)/regress-instance \
               --temp-config=$(CURDIR)/tests/regress.conf --outputdir=$(TEST_OUT)/regress \
               --load-extension=pgjq
ISOLATION      = $(basename $(notdir $(sort $(wildcard tests/isolation/specs/*.spec))))
ISOLATION_OPTS = --bindir=$(STAGE_BIN) --temp-instance=$(TEST_OUT)/isolation-instance \
                 --temp-config=$(CURDIR)/tests/regress.conf --outputdir=$(TEST_OUT)/isolation \
                 --inputdir=$(CURDIR)/tests/isolation --load-extension=pgjq
# TAP (tests/t/*.pl, PostgreSQL::Test::Cluster): prove finds the server on PATH, which installcheck points
# at the staged tree; the tests that need a LISTEN-only worker run the helper built first.
TAP_TESTS    = 1
PROVE_TESTS ?= $(sort $(wildcard tests/t/*.pl))
TAP_HELPER   = $(CURDIR)/build/tap/pgjq_listen
REGRESS_PREP = $(TAP_HELPER)
export PGJQ_LISTEN = $(TAP_HELPER)

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The client library, demo, benchmark and client tests are plain C++ built with the rules below.
# PGJQ_EXTENSION_ONLY=1 leaves them out (scripts/stage.sh installs just the extension).
ifndef PGJQ_EXTENSION_ONLY
-include src/client/client.mk
-include src/cli/cli.mk
-include src/bench/bench.mk
endif

installcheck: bindir = $(STAGE_BIN)

# The router's module calls libpq, as contrib/dblink does: libpq's header directory comes after the server's
# (it holds a pg_config.h of its own), and the link names libpq, which PGXS's rule for MODULES does not.
src/router/pgjq_router.o: override CPPFLAGS += -I$(libpq_srcdir)
src/router/pgjq_router$(DLSUFFIX): src/router/pgjq_router.o
	$(CXX) $(CXXFLAGS) $< $(LDFLAGS) $(LDFLAGS_SL) -shared -o $@ $(libpq) -lstdc++

$(TAP_HELPER): tests/t/helpers/pgjq_listen.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -o $@ $< -I$(shell $(PG_CONFIG) --includedir) -L$(shell $(PG_CONFIG) --libdir) -lpq

# The server extension alone (pgjq.so, pgjq_router.so, the control and SQL files), without the client, the
# command line and the demo: what a server needs, and what the Getting started page builds
# (docs/getting-started.md). `sudo make install-extension` installs just that.
.PHONY: extension install-extension
extension:
	$(MAKE) --no-print-directory PGJQ_EXTENSION_ONLY=1 all
install-extension:
	$(MAKE) --no-print-directory PGJQ_EXTENSION_ONLY=1 install

.PHONY: stage test demo bench
stage: all
	bash scripts/stage.sh

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

# Benchmarks (never part of the tests or CI): pgjq against the seed recipe and the peers, see docs/benchmarks.md
bench:
	bash scripts/bench.sh

# after every target, so that the dependency files' rules never become the default goal
-include $(OBJS:.o=.d) $(addsuffix .d, $(MODULES))
