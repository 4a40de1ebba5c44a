# cli.mk: the `pgjq` command line (src/cli/), on the static client library. Included by the top Makefile after
# client.mk, whose CLIENT_ variables it uses. Needs Debian's libcli11-dev (argument parsing) and
# libcpp-httplib-dev (`pgjq metrics --listen`, `pgjq web`).
CLI_SRCS := $(sort $(wildcard src/cli/*.cpp))
CLI_OBJS := $(patsubst src/cli/%.cpp,build/cli/obj/%.o,$(CLI_SRCS))
CLI_BIN  := build/pgjq

.PHONY: cli
client: $(CLI_BIN)
cli: $(CLI_BIN)

build/cli/obj/%.o: src/cli/%.cpp
	@mkdir -p $(dir $@)
	$(CLIENT_CXX) $(CLIENT_CXXFLAGS) $(CLIENT_CPPFLAGS) -DPGJQ_VERSION='"$(PGJQ_VERSION)"' -c $< -o $@

$(CLI_BIN): $(CLI_OBJS) $(CLIENT_STATIC)
	$(CLIENT_CXX) -o $@ $^ -lcpp-httplib $(CLIENT_LIBS)

# The dashboard's files are built into the binary (web_assets.cpp).
build/cli/obj/web_assets.o: CLIENT_CPPFLAGS += -DPGJQ_WEB_DIR='"$(CURDIR)/src/cli/web"'
build/cli/obj/web_assets.o: $(wildcard src/cli/web/*)

-include $(CLI_OBJS:.o=.d)

# Installed with the client (`make install-client`).
.PHONY: install-cli uninstall-cli
install-client: install-cli
install-cli: $(CLI_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(CLI_BIN) $(DESTDIR)$(PREFIX)/bin/pgjq
uninstall-client: uninstall-cli
uninstall-cli:
	rm -f $(DESTDIR)$(PREFIX)/bin/pgjq
clean-client: clean-cli
clean-cli:
	rm -rf build/cli $(CLI_BIN)
