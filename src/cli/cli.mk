# cli.mk: the `pgjq` command line (src/cli/), on the static client library. Included by the top Makefile after
# client.mk, whose CLIENT_ variables it uses. Needs Debian's libcli11-dev (argument parsing) and
# libcpp-httplib-dev (`pgjq metrics --listen`, `pgjq web`).
CLI_SRCS := $(sort $(wildcard src/cli/*.cpp))
CLI_OBJS := $(patsubst src/cli/%.cpp,build/cli/obj/%.o,$(CLI_SRCS))
CLI_BIN  := build/pgjq

# Its manual page and completion scripts, written by the binary from its own --help (help_formats.cpp).
CLI_MAN        := build/cli/pgjq.1
CLI_BASH_COMPL := build/cli/completion/pgjq
CLI_ZSH_COMPL  := build/cli/completion/_pgjq
CLI_HELP_FILES := $(CLI_MAN) $(CLI_BASH_COMPL) $(CLI_ZSH_COMPL)

.PHONY: cli
client: $(CLI_BIN) $(CLI_HELP_FILES)
cli: $(CLI_BIN) $(CLI_HELP_FILES)

$(CLI_MAN): $(CLI_BIN)
	$(CLI_BIN) manpage > $@.tmp && mv $@.tmp $@
$(CLI_BASH_COMPL) $(CLI_ZSH_COMPL): $(CLI_BIN)
	@mkdir -p $(dir $@)
	$(CLI_BIN) completion $(if $(filter %/_pgjq,$@),zsh,bash) > $@.tmp && mv $@.tmp $@

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
install-cli: $(CLI_BIN) $(CLI_HELP_FILES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
	install -m 755 $(CLI_BIN) $(DESTDIR)$(PREFIX)/bin/pgjq
	install -m 644 $(CLI_MAN) $(DESTDIR)$(PREFIX)/share/man/man1/pgjq.1
	install -m 644 $(CLI_BASH_COMPL) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/pgjq
	install -m 644 $(CLI_ZSH_COMPL) $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_pgjq
uninstall-client: uninstall-cli
uninstall-cli:
	rm -f $(DESTDIR)$(PREFIX)/bin/pgjq $(DESTDIR)$(PREFIX)/share/man/man1/pgjq.1 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/pgjq $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_pgjq
clean-client: clean-cli
clean-cli:
	rm -rf build/cli $(CLI_BIN)
