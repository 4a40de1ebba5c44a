// help_formats.hpp: the command tree main.cpp declares (its commands, options and their help text), written
// as a manual page and as bash and zsh completion scripts, so that all three say exactly what --help says
// and none can fall behind a new command or option.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace pgjq::cli
{

// The manual page pgjq(1), in roff (man -l): every command with its description, positional arguments and
// options, the global options, the exit codes and the environment.
std::string manual_page(const CLI::App &app);

// A completion script for bash or zsh (the only two `shell` may name): commands, then each command's
// subcommands and options, with their descriptions in zsh. Sourced, or installed where the shell looks.
std::string completion_script(const CLI::App &app, const std::string &shell);

} // namespace pgjq::cli
