// http_serving.hpp: what `pgjq metrics --listen` and `pgjq web` share: reading HOST:PORT, the access token
// every request must carry, the limits on connections, stopping on SIGINT or SIGTERM, and the HTTP status of
// a failure (commands.hpp's classify says which failure it is).
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

// The secret every request must carry, on any address: loopback is no trust boundary on a shared host, where
// any local user can connect to it. The first line of token_file, else $environment_variable, else a random
// one made for this run and printed at start (generated is then true). Throws bad_argument for one too short
// to be a secret or holding characters a header or cookie cannot carry.
struct access_token
{
  std::string value;
  bool generated = false;
};
access_token read_access_token(const std::string &token_file, const char *environment_variable);
// Whether the request sends `Authorization: Bearer TOKEN`.
bool bears_token(const httplib::Request &request, const access_token &token);
// Compares without stopping at the first difference, so the time taken tells nothing of the secret.
bool same_secret(const std::string &given, const std::string &secret);
// Random bytes from /dev/urandom, as hex.
std::string random_hex(std::size_t bytes);

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

// Sets the limits that keep slow or idle connections from starving the others (see docs/cli.md), binds the
// server without sharing the port (a second server on a port in use fails with "address in use" instead of
// splitting the requests), calls on_bound with the port, announces "serving `what` at URL" (URL ending in
// `path`) on stderr with the token when it was generated, then serves until SIGINT or SIGTERM. Returns an
// exit code.
int serve_until_stopped(httplib::Server &server, stop_signals &signals, const listen_address &at,
                        const access_token &token, const std::string &what, const std::string &path,
                        const std::function<void(int port)> &on_bound = {});

} // namespace pgjq::cli
