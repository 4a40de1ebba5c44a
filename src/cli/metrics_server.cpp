// metrics_server.cpp: `pgjq metrics --listen HOST:PORT`, a Prometheus scrape endpoint (cpp-httplib, from
// Debian's libcpp-httplib-dev). Each GET /metrics reads pgjq.metrics() anew on one session, scrapes taking
// turns; a lost session is opened again at the next scrape, which meanwhile answer 503.
#include "commands.hpp"

#include <httplib.h>

#include <csignal>
#include <iostream>
#include <mutex>
#include <pthread.h>
#include <thread>

namespace pgjq::cli
{

int serve_metrics(const options &o, const metrics_serving &s)
{
  const auto colon = s.listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos && colon + 1 < s.listen.size() &&
      s.listen.find_first_not_of("0123456789", colon + 1) == std::string::npos && s.listen.size() - colon <= 6)
    port = std::stoi(s.listen.substr(colon + 1));
  if (port < 0 || port > 65535 || colon == 0)
  {
    std::cerr << "pgjq: --listen takes HOST:PORT (e.g. 127.0.0.1:9187; port 0 picks a free one), not \"" << s.listen
              << "\"\n";
    return k_exit_usage;
  }
  const std::string host = s.listen.substr(0, colon);

  // SIGINT and SIGTERM go to one thread, which stops the server: the handlers' threads never see them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  connection db(o.conninfo);
  std::mutex session;
  httplib::Server server;
  server.Get("/metrics",
             [&](const httplib::Request &, httplib::Response &response)
             {
               std::lock_guard<std::mutex> turn(session);
               try
               {
                 if (!db.is_open())
                   db.reconnect();
                 response.set_content(db.metrics(), "text/plain; version=0.0.4; charset=utf-8");
               }
               catch (const std::exception &e)
               {
                 response.status = 503;
                 response.set_content(std::string("pgjq: ") + e.what() + "\n", "text/plain; charset=utf-8");
               }
             });

  const int bound =
      port == 0 ? server.bind_to_any_port(host.c_str()) : (server.bind_to_port(host.c_str(), port) ? port : -1);
  if (bound < 0)
  {
    std::cerr << "pgjq: could not listen on " << s.listen << '\n';
    return k_exit_failed;
  }
  std::thread stopper(
      [&]
      {
        int signal = 0;
        sigwait(&stop_signals, &signal);
        server.stop();
      });
  std::cerr << "pgjq: serving metrics at http://" << host << ':' << bound << "/metrics" << std::endl;
  server.listen_after_bind();
  stopper.join();
  return k_exit_ok;
}

} // namespace pgjq::cli
