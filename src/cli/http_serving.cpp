// http_serving.cpp: see http_serving.hpp.
#include "http_serving.hpp"

#include <iostream>
#include <pthread.h>
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

int serve_until_stopped(httplib::Server &server, stop_signals &signals, const listen_address &at,
                        const std::string &what, const std::string &path, const std::function<void(int port)> &on_bound)
{
  const int bound = at.port == 0 ? server.bind_to_any_port(at.host.c_str())
                                 : (server.bind_to_port(at.host.c_str(), at.port) ? at.port : -1);
  if (bound < 0)
  {
    std::cerr << "pgjq: could not listen on " << at.host << ':' << at.port << '\n';
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
  server.listen_after_bind();
  stopper.join();
  return k_exit_ok;
}

} // namespace pgjq::cli
