// http_serving.cpp: see http_serving.hpp.
#include "http_serving.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <pthread.h>
#include <sys/socket.h>
#include <thread>

namespace pgjq::cli
{

int http_status_of(failure f)
{
  switch (f)
  {
  case failure::not_found:
    return 404;
  case failure::denied:
    return 403;
  case failure::usage:
    return 400;
  case failure::unavailable:
    return 503;
  case failure::failed:
    break;
  }
  return 409; // refused by the server for a reason of state (wrong state, queue full, ...): not our fault
}

std::optional<listen_address> parse_listen(const std::string &text, int example_port)
{
  const auto colon = text.rfind(':');
  if (colon != std::string::npos && colon > 0 && colon + 1 < text.size() && text.size() - colon <= 6 &&
      text.find_first_not_of("0123456789", colon + 1) == std::string::npos)
  {
    listen_address a;
    a.port = std::stoi(text.substr(colon + 1));
    a.host = text.substr(0, colon);
    if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']')
      a.host = a.host.substr(1, a.host.size() - 2);
    if (a.port <= 65535 && !a.host.empty())
      return a;
  }
  std::cerr << "pgjq: --listen takes HOST:PORT (e.g. 127.0.0.1:" << example_port << "; port 0 picks a free one), not \""
            << text << "\"\n";
  return std::nullopt;
}

bool is_loopback(const std::string &host) { return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0; }

std::string random_hex(std::size_t bytes)
{
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  std::string raw(bytes, '\0');
  if (!urandom.read(raw.data(), static_cast<std::streamsize>(bytes)))
    throw std::runtime_error("cannot read /dev/urandom");
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : raw)
  {
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  return hex;
}

bool same_secret(const std::string &given, const std::string &secret)
{
  if (given.size() != secret.size())
    return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < secret.size(); ++i)
    difference |= static_cast<unsigned char>(given[i] ^ secret[i]);
  return difference == 0;
}

access_token read_access_token(const std::string &token_file, const char *environment_variable)
{
  access_token token;
  if (!token_file.empty())
  {
    std::ifstream file(token_file);
    if (!file)
      throw bad_argument("cannot read the token file \"" + token_file + "\"", "22023");
    std::getline(file, token.value);
  }
  else if (const char *from_environment = std::getenv(environment_variable))
    token.value = from_environment;
  if (token.value.empty())
  {
    token.value = random_hex(16);
    token.generated = true;
    return token;
  }
  if (token.value.size() < 16 || token.value.size() > 256 ||
      token.value.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-") !=
          std::string::npos)
    throw bad_argument("the access token must be 16-256 characters of A-Z a-z 0-9 . _ ~ -", "22023");
  return token;
}

bool bears_token(const httplib::Request &request, const access_token &token)
{
  return same_secret(request.get_header_value("Authorization"), "Bearer " + token.value);
}

stop_signals::stop_signals()
{
  sigemptyset(&m_set);
  sigaddset(&m_set, SIGINT);
  sigaddset(&m_set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &m_set, nullptr);
}

void stop_signals::wait()
{
  int signal = 0;
  sigwait(&m_set, &signal);
}

namespace
{

// A connection whose next bytes do not arrive within this time is closed (each read waits at most this long).
constexpr time_t k_read_timeout_seconds = 2;
constexpr time_t k_write_timeout_seconds = 5;
// Connections served at once: far more than a handful of idle or slow clients can hold, each held at most
// as long as it keeps sending within the read timeout. All local users share the loopback address, so a
// cap per client address would let one of them lock the operator out: the token, these limits and the
// pool size are the defence instead.
constexpr std::size_t k_connection_threads = 64;

void limit_connections(httplib::Server &server)
{
  server.set_read_timeout(k_read_timeout_seconds, 0);
  server.set_write_timeout(k_write_timeout_seconds, 0);
  server.set_keep_alive_timeout(k_read_timeout_seconds);
  server.set_keep_alive_max_count(100);
  server.new_task_queue = [] { return new httplib::ThreadPool(k_connection_threads); };
  // SO_REUSEADDR only (cpp-httplib also sets SO_REUSEPORT, with which a second server on the same port
  // starts and the kernel splits the requests between the two).
  server.set_socket_options(
      [](socket_t sock)
      {
        const int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      });
}

} // namespace

int serve_until_stopped(httplib::Server &server, stop_signals &signals, const listen_address &at,
                        const access_token &token, const std::string &what, const std::string &path,
                        const std::function<void(int port)> &on_bound)
{
  limit_connections(server);
  errno = 0;
  const int bound = at.port == 0 ? server.bind_to_any_port(at.host.c_str())
                                 : (server.bind_to_port(at.host.c_str(), at.port) ? at.port : -1);
  if (bound < 0)
  {
    const int why = errno;
    std::cerr << "pgjq: could not listen on " << at.host << ':' << at.port
              << (why != 0 ? std::string(": ") + std::strerror(why) : std::string()) << '\n';
    return k_exit_failed;
  }
  if (on_bound)
    on_bound(bound);
  std::thread stopper(
      [&]
      {
        signals.wait();
        server.stop();
      });
  const std::string host = at.host.find(':') != std::string::npos ? "[" + at.host + "]" : at.host;
  std::cerr << "pgjq: serving " << what << " at http://" << host << ':' << bound << path << std::endl;
  if (token.generated)
    std::cerr << "pgjq: every request needs the access token " << token.value
              << " (made for this run; --token-file FILE keeps one), as Authorization: Bearer TOKEN" << std::endl;
  server.listen_after_bind();
  stopper.join();
  return k_exit_ok;
}

} // namespace pgjq::cli
