// http_serving.hpp: what `pgjq metrics --listen` and `pgjq web` share: reading HOST:PORT, stopping on SIGINT or
// SIGTERM, and the HTTP status of a failure (commands.hpp's classify says which failure it is).
#pragma once

#include "commands.hpp"

#include <httplib.h>

#include <csignal>
#include <optional>
#include <string>

namespace pgjq::cli
{

// The HTTP status a failure answers with.
int http_status_of(failure f);

struct listen_address
{
  std::string host;
  int port = 0; // 0: a free one, chosen when bound
};
// "HOST:PORT", e.g. "127.0.0.1:9187" or "[::1]:0"; when the text is not one, says so on stderr (with an
// example on the command's own port) and returns empty.
std::optional<listen_address> parse_listen(const std::string &text, int example_port);
// 127.0.0.0/8, ::1 and "localhost": only this machine can connect.
bool is_loopback(const std::string &host);

// SIGINT and SIGTERM blocked from construction on, so every thread started afterwards inherits the mask and
// only wait() sees them. Construct it before starting any thread.
class stop_signals
{
public:
  stop_signals();
  void wait();

private:
  sigset_t m_set;
};

// Binds the server (port 0: a free one), calls on_bound with the port, announces "serving `what` at URL"
// (URL ending in `path`) on stderr, then serves until SIGINT or SIGTERM. Returns an exit code.
int serve_until_stopped(httplib::Server &server, stop_signals &signals, const listen_address &at,
                        const std::string &what, const std::string &path,
                        const std::function<void(int port)> &on_bound = {});

} // namespace pgjq::cli
