# client.mk: plain rules for the C++ client (static and shared library), the demo and the client tests.
# Included by the top Makefile after PGXS, so every variable here has its own CLIENT_ name: nothing leaks
# into the extension's build. Output goes to build/.

# The client's version is the extension's (pgjq.control, read by the top Makefile). The soname names the
# ABI: before 1.0 every minor release may change it (libpgjq_client.so.0.3), from 1.0 on the major.
CLIENT_VERSION  := $(PGJQ_VERSION)
CLIENT_SOVER    := $(if $(filter 0.%,$(CLIENT_VERSION)),$(basename $(CLIENT_VERSION)),$(firstword $(subst ., ,$(CLIENT_VERSION))))
CLIENT_CXX      := g++
CLIENT_PG_INC   := $(shell $(PG_CONFIG) --includedir)
# Hidden by default: the shared library exports only what the public headers mark PGJQ_API.
CLIENT_CXXFLAGS := -std=c++17 -O2 -Wall -Wextra -fPIC -MMD -MP -fvisibility=hidden -fvisibility-inlines-hidden
CLIENT_CPPFLAGS := -Isrc/client/include -I$(CLIENT_PG_INC)
CLIENT_LIBS     := -lpq -lpthread

CLIENT_SRCS := $(sort $(wildcard src/client/*.cpp))
CLIENT_OBJS := $(patsubst src/client/%.cpp,build/client/obj/%.o,$(CLIENT_SRCS))
CLIENT_TEST_SRCS := $(sort $(wildcard tests/client/*.cpp))
CLIENT_TEST_OBJS := $(patsubst tests/client/%.cpp,build/tests/obj/%.o,$(CLIENT_TEST_SRCS))
CLIENT_HEADERS := $(sort $(wildcard src/client/include/pgjq/*.hpp))

CLIENT_STATIC := build/client/libpgjq_client.a
CLIENT_SHARED := build/client/libpgjq_client.so
CLIENT_DEMO   := build/pgjq-demo
CLIENT_TESTS  := build/tests/test_client

.PHONY: client client-tests install-client uninstall-client clean-client
all: client
# `make` builds what a user installs; the Boost.Test suite (libboost-test-dev) only for scripts/client_tests.sh.
client: $(CLIENT_STATIC) $(CLIENT_SHARED) $(CLIENT_DEMO)
client-tests: $(CLIENT_TESTS)

build/client/obj/%.o: src/client/%.cpp
	@mkdir -p $(dir $@)
	$(CLIENT_CXX) $(CLIENT_CXXFLAGS) $(CLIENT_CPPFLAGS) -c $< -o $@

$(CLIENT_STATIC): $(CLIENT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(CLIENT_SHARED): $(CLIENT_OBJS)
	@mkdir -p $(dir $@)
	$(CLIENT_CXX) -shared -Wl,-soname,libpgjq_client.so.$(CLIENT_SOVER) -Wl,-z,defs -o $@ $^ $(CLIENT_LIBS)

# The demo and the tests link the static library, so they run from the build tree without LD_LIBRARY_PATH.
build/demo/obj/pgjq_demo.o: src/demo/pgjq_demo.cpp
	@mkdir -p $(dir $@)
	$(CLIENT_CXX) $(CLIENT_CXXFLAGS) $(CLIENT_CPPFLAGS) -c $< -o $@

$(CLIENT_DEMO): build/demo/obj/pgjq_demo.o $(CLIENT_STATIC)
	$(CLIENT_CXX) -o $@ $^ $(CLIENT_LIBS)

# Boost.Test as a shared library (BOOST_TEST_DYN_LINK): the header-only variant costs ~30 s per build.
build/tests/obj/%.o: tests/client/%.cpp
	@mkdir -p $(dir $@)
	$(CLIENT_CXX) $(CLIENT_CXXFLAGS) $(CLIENT_CPPFLAGS) -DBOOST_TEST_DYN_LINK -c $< -o $@

$(CLIENT_TESTS): $(CLIENT_TEST_OBJS) $(CLIENT_STATIC)
	@mkdir -p $(dir $@)
	$(CLIENT_CXX) -o $@ $^ -lboost_unit_test_framework $(CLIENT_LIBS)

# The client's programs for the TAP tests, run by `make installcheck`: a worker (tests/t/015_failover.pl)
# as $PGJQ_DRAIN, the cluster client (tests/t/027_cluster_client.pl) as $PGJQ_CLUSTER.
TAP_DRAIN := build/tap/pgjq_drain
TAP_CLUSTER := build/tap/pgjq_cluster
export PGJQ_DRAIN = $(CURDIR)/$(TAP_DRAIN)
export PGJQ_CLUSTER = $(CURDIR)/$(TAP_CLUSTER)
installcheck: $(TAP_DRAIN) $(TAP_CLUSTER)
build/tap/%: tests/t/helpers/%.cpp $(CLIENT_STATIC)
	@mkdir -p $(dir $@)
	$(CLIENT_CXX) $(CLIENT_CXXFLAGS) $(CLIENT_CPPFLAGS) -o $@ $< $(CLIENT_STATIC) $(CLIENT_LIBS)

-include $(CLIENT_OBJS:.o=.d) $(CLIENT_TEST_OBJS:.o=.d) build/demo/obj/pgjq_demo.d

# make install-client PREFIX=/opt/pgjq [DESTDIR=...]: headers, both libraries, pgjq.pc, the CMake package
# (lib/cmake/pgjq: find_package(pgjq) gives pgjq::client), the demo.
PREFIX ?= /usr/local
CLIENT_LIBDIR := $(PREFIX)/lib
install-client: $(CLIENT_STATIC) $(CLIENT_SHARED) $(CLIENT_DEMO)
	install -d $(DESTDIR)$(PREFIX)/include/pgjq $(DESTDIR)$(CLIENT_LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/bin \
	    $(DESTDIR)$(CLIENT_LIBDIR)/cmake/pgjq
	install -m 644 $(CLIENT_HEADERS) $(DESTDIR)$(PREFIX)/include/pgjq/
	install -m 644 $(CLIENT_STATIC) $(DESTDIR)$(CLIENT_LIBDIR)/
	install -m 755 $(CLIENT_SHARED) $(DESTDIR)$(CLIENT_LIBDIR)/libpgjq_client.so.$(CLIENT_VERSION)
	ln -sf libpgjq_client.so.$(CLIENT_VERSION) $(DESTDIR)$(CLIENT_LIBDIR)/libpgjq_client.so.$(CLIENT_SOVER)
	ln -sf libpgjq_client.so.$(CLIENT_SOVER) $(DESTDIR)$(CLIENT_LIBDIR)/libpgjq_client.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(CLIENT_LIBDIR)|' -e 's|@VERSION@|$(CLIENT_VERSION)|' \
	    src/client/pgjq.pc.in > $(DESTDIR)$(CLIENT_LIBDIR)/pkgconfig/pgjq.pc
	for f in pgjqConfig pgjqConfigVersion; do \
	  sed -e 's|@VERSION@|$(CLIENT_VERSION)|g' -e 's|@SOVER@|$(CLIENT_SOVER)|g' \
	      src/client/$$f.cmake.in > $(DESTDIR)$(CLIENT_LIBDIR)/cmake/pgjq/$$f.cmake; done
	install -m 755 $(CLIENT_DEMO) $(DESTDIR)$(PREFIX)/bin/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall-client:
	rm -rf $(DESTDIR)$(PREFIX)/include/pgjq
	rm -rf $(DESTDIR)$(CLIENT_LIBDIR)/cmake/pgjq
	rm -f $(DESTDIR)$(CLIENT_LIBDIR)/libpgjq_client.* $(DESTDIR)$(CLIENT_LIBDIR)/pkgconfig/pgjq.pc \
	      $(DESTDIR)$(PREFIX)/bin/pgjq-demo

clean: clean-client
clean-client:
	rm -rf build/client build/demo build/tests $(CLIENT_DEMO)
