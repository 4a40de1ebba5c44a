// metrics_server.cpp: `pgjq metrics --listen HOST:PORT`, a Prometheus scrape endpoint (cpp-httplib, from
// Debian's libcpp-httplib-dev). Each GET /metrics reads pgjq.metrics() anew on one session, scrapes taking
// turns; a lost session is opened again at the next scrape, which meanwhile answer 503. Every scrape must
// send the access token (Prometheus: `authorization: {credentials_file: ...}`).
#include "commands.hpp"
#include "http_serving.hpp"

#include <iostream>
#include <mutex>

namespace pgjq::cli
{

int serve_metrics(connection &db, const metrics_serving &s)
{
  const std::optional<listen_address> at = parse_listen(s.listen, 9187);
  if (!at)
    return k_exit_usage;
  const access_token token = read_access_token(s.token_file, "PGJQ_METRICS_TOKEN");
  stop_signals signals;
  std::mutex session;
  httplib::Server server;
  server.Get("/metrics",
             [&](const httplib::Request &request, httplib::Response &response)
             {
               if (!bears_token(request, token))
               {
                 response.status = 401;
                 response.set_header("WWW-Authenticate", "Bearer");
                 response.set_content("pgjq: send the access token as Authorization: Bearer TOKEN\n",
                                      "text/plain; charset=utf-8");
                 return;
               }
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
  return serve_until_stopped(server, signals, *at, token, "metrics", "/metrics");
}

} // namespace pgjq::cli
