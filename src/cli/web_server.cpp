// web_server.cpp: `pgjq web`, a live dashboard (cpp-httplib): the page and its JSON calls, on one session of
// the operator's own role, so the database's privileges decide what is shown and what may be done.
//
// Who may reach it: it listens on 127.0.0.1 unless told otherwise, and on any address only with the access
// token (a header, or a cookie set once from ?token=; http_serving.hpp says where it comes from). The Host header must name the address it listens on
// (no DNS rebinding). Every action is a POST that must carry the page's per-process CSRF token in a custom
// header and come from the same origin, which a cross-site page can neither read nor send. The page treats
// every value as text and the Content-Security-Policy forbids inline scripts, so a payload holding <script>
// is shown, never run.
#include "commands.hpp"
#include "http_serving.hpp"
#include "output.hpp"
#include "web_assets.hpp"
#include "web_requests.hpp"

#include <libpq-fe.h>

#include <condition_variable>
#include <deque>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

namespace pgjq::cli
{

namespace
{

constexpr auto k_history_span = std::chrono::hours(1);
constexpr const char *k_token_cookie = "pgjq_token";
constexpr std::size_t k_preview_bytes = 200; // of a workflow step's result, as the page shows it
// A search's count stops here: the page says "more than" past it rather than count a whole history.
constexpr std::int64_t k_max_counted = 100000;
// Jobs one bulk request handles (in batches of 1000, a transaction each) before it answers, so that the
// page shows progress and the session serves the other requests; the page asks again while more are left.
constexpr std::int64_t k_bulk_jobs_per_request = 20000;

std::string cookie(const httplib::Request &request, const std::string &name)
{
  const std::string header = request.get_header_value("Cookie");
  for (std::size_t at = 0; at < header.size();)
  {
    const std::size_t end = std::min(header.find(';', at), header.size());
    std::size_t start = header.find_first_not_of(' ', at);
    if (start < end && header.compare(start, name.size() + 1, name + "=") == 0)
      return header.substr(start + name.size() + 1, end - start - name.size() - 1);
    at = end + 1;
  }
  return {};
}

void reply(httplib::Response &response, int status, const nlohmann::json &body)
{
  response.status = status;
  response.set_content(body.dump(), "application/json; charset=utf-8");
}

void refuse(httplib::Response &response, int status, const std::string &why)
{
  reply(response, status, {{"error", why}});
}

// The id in the path (a job's or a workflow's: the pattern's first group).
std::int64_t id_of(const httplib::Request &request) { return std::stoll(request.matches[1].str()); }

class dashboard
{
public:
  dashboard(connection db, const web_serving &w, access_token token)
      : m_settings(w), m_db(std::move(db)), m_token(std::move(token)), m_csrf(random_hex(16))
  {
  }

  void route(httplib::Server &server)
  {
    server.set_default_headers(
        {{"Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                     "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
         {"X-Content-Type-Options", "nosniff"},
         {"Referrer-Policy", "no-referrer"},
         {"Cache-Control", "no-store"}});
    server.set_pre_routing_handler([this](const httplib::Request &rq, httplib::Response &rs) { return guard(rq, rs); });

    server.Get("/", [this](const httplib::Request &, httplib::Response &rs) { page(rs); });
    server.Get("/favicon.ico", [](const httplib::Request &, httplib::Response &rs) { rs.status = 204; });
    for (const char *path : {"/dashboard.js", "/dashboard.css"})
      server.Get(path,
                 [](const httplib::Request &rq, httplib::Response &rs)
                 {
                   const auto asset = find_web_asset(rq.path);
                   rs.set_content(std::string(asset->content), asset->content_type);
                 });
    get(server, "/api/overview",
        [](connection &db, const httplib::Request &) -> nlohmann::json
        {
          const std::optional<bool> served = db.maintenance_served();
          const std::vector<queue_stats> queues = db.stats();
          // Which queues this role administers, so the page offers their actions to it alone (null: a
          // database before 0.3.0, which cannot say; the page offers them and the database decides).
          nlohmann::json administers = nlohmann::json::object();
          for (const queue_stats &q : queues)
          {
            const std::optional<bool> admin = db.holds_capability("admin", q.queue);
            administers[q.queue] = admin ? nlohmann::json(*admin) : nlohmann::json(nullptr);
          }
          return {{"role", PQuser(db.native_handle())},
                  {"database", PQdb(db.native_handle())},
                  {"maintenance_served", served ? nlohmann::json(*served) : nlohmann::json(nullptr)},
                  {"at", format_time(clock::now())},
                  {"queues", json_array(queues)},
                  {"administers", administers},
                  {"latency", json_array(db.latency())}};
        });
    server.Get("/api/history", [this](const httplib::Request &, httplib::Response &rs) { history(rs); });
    get(server, "/api/jobs",
        [](connection &db, const httplib::Request &rq) { return json_array(db.jobs(listing_of(rq))); });
    get(server, "/api/jobs/count",
        [](connection &db, const httplib::Request &rq) -> nlohmann::json
        {
          const std::int64_t n = db.count_jobs(listing_of(rq), k_max_counted);
          return {{"count", n}, {"more", n >= k_max_counted}};
        });
    post(server, "/api/jobs/(retry|cancel|delete)",
         [](connection &db, const httplib::Request &rq) { return bulk(db, rq, rq.matches[1].str()); });
    get(server, R"(/api/jobs/(\d{1,18}))",
        [](connection &db, const httplib::Request &rq) -> nlohmann::json
        {
          const std::optional<job> j = db.get_job(id_of(rq));
          if (!j)
            throw job_not_found("job " + rq.matches[1].str() + " does not exist (or this role may not read it)",
                                "P0002");
          return to_json(*j, db.job_errors(j->id));
        });
    post(server, R"(/api/jobs/(\d{1,18})/retry)",
         [](connection &db, const httplib::Request &rq) -> nlohmann::json
         {
           db.retry(id_of(rq));
           return {{"done", "job " + rq.matches[1].str() + " is pending again"}};
         });
    post(server, R"(/api/jobs/(\d{1,18})/cancel)",
         [](connection &db, const httplib::Request &rq) -> nlohmann::json
         {
           if (!db.cancel(id_of(rq)))
             throw wrong_state("job " + rq.matches[1].str() + " had already finished", "55000");
           return {{"done", "job " + rq.matches[1].str() + " is cancelled"}};
         });
    get(server, R"(/api/queues/([^/]+))",
        [](connection &db, const httplib::Request &rq) -> nlohmann::json
        {
          const std::string queue = rq.matches[1].str();
          const std::optional<queue_info> settings = db.get_queue(queue);
          if (!settings)
            throw unknown_queue("queue " + queue + " does not exist (or this role may not see it)", "P0002");
          const std::optional<queue_stats> stats = db.stats(queue);
          const std::optional<bool> admin = db.holds_capability("admin", queue);
          nlohmann::json workers = nlohmann::json::array();
          for (const queue_worker &w : db.queue_workers(queue))
            workers.push_back(
                {{"worker_id", w.worker_id},
                 {"role", w.role ? nlohmann::json(*w.role) : nlohmann::json(nullptr)},
                 {"jobs", w.jobs},
                 {"oldest_claimed_at",
                  w.oldest_claimed_at ? nlohmann::json(format_time(*w.oldest_claimed_at)) : nlohmann::json(nullptr)},
                 {"first_lease_expires_at", w.first_lease_expires_at
                                                ? nlohmann::json(format_time(*w.first_lease_expires_at))
                                                : nlohmann::json(nullptr)}});
          return {{"settings", to_json(*settings)},
                  {"stats", stats ? to_json(*stats) : nlohmann::json(nullptr)},
                  {"workers", workers},
                  {"administers", admin ? nlohmann::json(*admin) : nlohmann::json(nullptr)}};
        });
    post(server, R"(/api/queues/([^/]+)/settings)",
         [](connection &db, const httplib::Request &rq) -> nlohmann::json
         {
           const std::string queue = rq.matches[1].str();
           db.alter_queue(queue, settings_of(rq.body));
           return {{"done", "queue " + queue + ": settings changed"}};
         });
    post(server, R"(/api/queues/([^/]+)/(pause|resume))", // the server checks the name
         [](connection &db, const httplib::Request &rq) -> nlohmann::json
         {
           const std::string queue = rq.matches[1].str();
           const bool pause = rq.matches[2].str() == "pause";
           pause ? db.pause_queue(queue) : db.resume_queue(queue);
           return {{"done", "queue " + queue + (pause ? " paused" : " resumed")}};
         });
    get(server, "/api/workflows", [](connection &db, const httplib::Request &rq) { return list_workflows(db, rq); });
    get(server, R"(/api/workflows/(\d{1,18}))",
        [](connection &db, const httplib::Request &rq) { return show_workflow(db, id_of(rq)); });
    post(server, R"(/api/workflows/(\d{1,18})/cancel)",
         [](connection &db, const httplib::Request &rq) -> nlohmann::json
         {
           const std::int64_t steps = db.cancel_workflow(id_of(rq));
           return {{"done", "workflow " + rq.matches[1].str() + " is cancelled (" + std::to_string(steps) +
                                " unfinished steps cancelled)"}};
         });
    post(server, R"(/api/workflows/(\d{1,18})/retry)",
         [](connection &db, const httplib::Request &rq) -> nlohmann::json
         {
           const std::int64_t steps = db.retry_workflow(id_of(rq));
           return {{"done", "workflow " + rq.matches[1].str() + ": " + std::to_string(steps) +
                                " failed or cancelled steps are pending again"}};
         });
    get(server, "/api/schedules", [](connection &db, const httplib::Request &) { return json_array(db.schedules()); });
    get(server, "/api/maintenance",
        [](connection &db, const httplib::Request &) { return json_array(db.maintenance()); });
    server.Get("/metrics",
               [this](const httplib::Request &, httplib::Response &rs)
               {
                 with_session(rs, [&](connection &db)
                              { rs.set_content(db.metrics(), "text/plain; version=0.0.4; charset=utf-8"); });
               });
  }

  // Only these Host headers are served (empty: any, behind the access token).
  void allow_hosts(const listen_address &at, int port)
  {
    if (!is_loopback(at.host))
      return;
    const std::string suffix = ":" + std::to_string(port);
    for (const char *name : {"127.0.0.1", "localhost", "[::1]"})
      m_hosts.insert(name + suffix);
    if (at.host != "localhost" && at.host != "::1")
      m_hosts.insert(at.host + suffix);
  }

  // Samples every queue's figures each interval for the charts, until stop().
  void sample_until_stopped()
  {
    std::unique_lock<std::mutex> lock(m_history_lock);
    const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::duration<double>(m_settings.sample_interval_s));
    while (!m_stopping)
    {
      lock.unlock();
      std::optional<nlohmann::json> taken = sample();
      lock.lock();
      if (taken)
      {
        m_samples.push_back(std::move(*taken));
        const double oldest =
            m_samples.back()["t"].get<double>() - std::chrono::duration<double>(k_history_span).count();
        while (m_samples.front()["t"].get<double>() < oldest)
          m_samples.pop_front();
      }
      m_wake.wait_for(lock, interval, [this] { return m_stopping; });
    }
  }

  void stop()
  {
    std::lock_guard<std::mutex> lock(m_history_lock);
    m_stopping = true;
    m_wake.notify_all();
  }

private:
  using call = std::function<nlohmann::json(connection &, const httplib::Request &)>;

  httplib::Server::HandlerResponse guard(const httplib::Request &rq, httplib::Response &rs)
  {
    if (!m_hosts.empty() && !m_hosts.count(rq.get_header_value("Host")))
    {
      refuse(rs, 421, "this dashboard answers only to the address it listens on");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!same_secret(cookie(rq, k_token_cookie), m_token.value) && !bears_token(rq, m_token))
    {
      if (rq.method == "GET" && rq.path == "/" && same_secret(rq.get_param_value("token"), m_token.value))
      {
        // Once: the token moves from the address bar into a cookie scripts cannot read.
        rs.set_header("Set-Cookie",
                      std::string(k_token_cookie) + "=" + m_token.value + "; HttpOnly; SameSite=Strict; Path=/");
        rs.set_redirect("/");
        return httplib::Server::HandlerResponse::Handled;
      }
      refuse(rs, 401, "an access token is required: open /?token=... or send Authorization: Bearer ...");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (rq.method != "GET" && rq.method != "HEAD")
    {
      const std::string origin = rq.get_header_value("Origin"), site = rq.get_header_value("Sec-Fetch-Site");
      if (!same_secret(rq.get_header_value("X-PGJQ-CSRF"), m_csrf) ||
          (!origin.empty() && origin != "http://" + rq.get_header_value("Host")) ||
          (!site.empty() && site != "same-origin"))
      {
        refuse(rs, 403, "cross-site request refused: actions come from the dashboard's own page");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  // `text` as the value of an HTML attribute in double quotes.
  static std::string attribute_text(const std::string &text)
  {
    std::string out;
    for (char c : text)
      switch (c)
      {
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out += c;
      }
    return out;
  }

  void page(httplib::Response &rs) const
  {
    std::string html(find_web_asset("/")->content);
    for (const auto &[placeholder, value] :
         {std::pair<std::string, std::string>{"{{csrf}}", m_csrf},
          {"{{refresh_ms}}", std::to_string(static_cast<long>(m_settings.refresh_s * 1000))},
          {"{{sample_ms}}", std::to_string(static_cast<long>(m_settings.sample_interval_s * 1000))},
          {"{{trace_url}}", attribute_text(m_settings.trace_url)}})
      for (std::size_t at; (at = html.find(placeholder)) != std::string::npos;)
        html.replace(at, placeholder.size(), value);
    rs.set_content(html, "text/html; charset=utf-8");
  }

  // The charts' samples over the last k_history_span: this process's own, after those the maintenance
  // worker recorded in the database (pgjq.queue_history, 0.3.0) before the first of them, so that a restart
  // of `pgjq web` keeps what came before it. Both in the form of sample(); the database's are coarser
  // (pgjq.queue_sample_interval) and split no waiting job into due now and later.
  void history(httplib::Response &rs)
  {
    nlohmann::json samples = nlohmann::json::array();
    std::deque<nlohmann::json> own;
    {
      std::lock_guard<std::mutex> lock(m_history_lock);
      own = m_samples;
    }
    const time_point now = clock::now();
    const time_point first_own = own.empty() ? now
                                             : time_point(std::chrono::duration_cast<time_point::duration>(
                                                   std::chrono::duration<double>(own.front()["t"].get<double>())));
    with_session(rs,
                 [&](connection &db)
                 {
                   for (const queue_sample &q : db.queue_history(now - k_history_span, first_own))
                   {
                     const double t = std::chrono::duration<double>(q.sampled_at.time_since_epoch()).count();
                     if (samples.empty() || samples.back()["t"].get<double>() != t)
                       samples.push_back({{"t", t}, {"queues", nlohmann::json::object()}});
                     samples.back()["queues"][q.queue] = {
                         {"waiting", q.unfinished - q.in_flight},
                         {"in_flight", q.in_flight},
                         {"completed", q.completed},
                         {"failed", q.failed},
                         {"cancelled", q.cancelled},
                         {"oldest_s", q.next_job_age ? static_cast<double>(q.next_job_age->count()) / 1e6 : 0.0},
                         {"wait_jobs", q.wait_jobs.value_or(0)},
                         {"wait_seconds", q.wait_seconds.value_or(0)},
                         {"run_jobs", q.run_jobs.value_or(0)},
                         {"run_seconds", q.run_seconds.value_or(0)}};
                   }
                 });
    if (rs.status >= 400)
      samples = nlohmann::json::array(); // the database's are missed: this process's are still shown
    for (nlohmann::json &sample : own)
      samples.push_back(std::move(sample));
    reply(rs, 200, {{"interval_s", m_settings.sample_interval_s}, {"samples", samples}});
  }

  // Retry, cancel or delete the jobs a search selects, which must name a queue and no payload (the server's
  // bulk functions select by queue, type and state): up to k_bulk_jobs_per_request of them, then says
  // how many it handled and whether it stopped with more left.
  static nlohmann::json bulk(connection &db, const httplib::Request &rq, const std::string &action)
  {
    const job_listing l = listing_of(rq);
    if (!l.queue)
      throw bad_argument("a bulk " + action + " needs a queue", "22023");
    if (l.payload_contains)
      throw bad_argument("a bulk " + action + " selects by queue, type and state, not by payload", "22023");
    job_filter f;
    f.job_type = l.job_type;
    f.max_jobs = 1000;
    if (action != "retry")
      f.status = l.status;
    else if (l.status && *l.status != job_status::failed)
      throw bad_argument("retry takes failed jobs, not " + std::string(to_string(*l.status)) + " ones", "22023");
    std::int64_t handled = 0;
    for (std::int64_t n = 1; n > 0 && handled < k_bulk_jobs_per_request;)
    {
      n = action == "retry"    ? db.retry_failed(*l.queue, f)
          : action == "cancel" ? db.cancel_jobs(*l.queue, f)
                               : db.delete_jobs(*l.queue, f);
      handled += n;
    }
    const char *verb = action == "retry" ? "retried" : action == "cancel" ? "cancelled" : "deleted";
    return {{"done", std::string(verb) + " " + std::to_string(handled) + " jobs of queue " + *l.queue},
            {"jobs", handled},
            {"more", handled >= k_bulk_jobs_per_request}};
  }

  static nlohmann::json list_workflows(connection &db, const httplib::Request &rq)
  {
    int limit = 50;
    try
    {
      if (rq.has_param("limit"))
        limit = std::stoi(rq.get_param_value("limit"));
    }
    catch (const std::logic_error &)
    {
      throw bad_argument("limit is a whole number", "22023");
    }
    return json_array(db.workflows(std::nullopt, limit));
  }

  // The workflow and its steps, each step's result cut to a preview of its text as the server wrote it: a
  // fan-out of many steps with large results would otherwise make every refresh of the page carry them all.
  static nlohmann::json show_workflow(connection &db, std::int64_t id)
  {
    const std::optional<workflow_info> w = db.get_workflow(id);
    if (!w)
      throw job_not_found("workflow " + std::to_string(id) + " does not exist (or this role may not read it)", "P0002");
    nlohmann::json steps = nlohmann::json::array();
    for (const workflow_step &s : db.workflow_steps(id))
    {
      nlohmann::json step = to_json(s);
      step["result"] = s.result_text ? nlohmann::json(preview(*s.result_text)) : nlohmann::json(nullptr);
      steps.push_back(std::move(step));
    }
    return {{"workflow", to_json(*w)}, {"steps", steps}};
  }

  // The first k_preview_bytes of text, cut at a character boundary, with "…" when cut.
  static std::string preview(const std::string &text)
  {
    if (text.size() <= k_preview_bytes)
      return text;
    std::size_t end = k_preview_bytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
      --end; // a continuation byte: back to the start of its character
    return text.substr(0, end) + "\u2026";
  }

  void get(httplib::Server &server, const std::string &pattern, call what)
  {
    server.Get(pattern, [this, what](const httplib::Request &rq, httplib::Response &rs) { answer(rq, rs, what); });
  }
  void post(httplib::Server &server, const std::string &pattern, call what)
  {
    server.Post(pattern, [this, what](const httplib::Request &rq, httplib::Response &rs) { answer(rq, rs, what); });
  }
  void answer(const httplib::Request &rq, httplib::Response &rs, const call &what)
  {
    with_session(rs, [&](connection &db) { reply(rs, 200, what(db, rq)); });
  }

  // Runs `use` on the session, one request at a time; a failure becomes its HTTP status and message. A lost
  // session is opened again by the next request.
  void with_session(httplib::Response &rs, const std::function<void(connection &)> &use)
  {
    std::lock_guard<std::mutex> turn(m_session);
    try
    {
      if (!m_db.is_open())
        m_db.reconnect();
      use(m_db);
    }
    catch (const std::exception &e)
    {
      refuse(rs, http_status_of(classify(e)), e.what());
    }
  }

  std::optional<nlohmann::json> sample()
  {
    std::lock_guard<std::mutex> turn(m_session);
    try
    {
      if (!m_db.is_open())
        m_db.reconnect();
      nlohmann::json queues = nlohmann::json::object();
      for (const queue_stats &s : m_db.stats())
        queues[s.queue] = {{"pending", s.pending},
                           {"later", s.scheduled + s.waiting},
                           {"waiting", s.pending + s.scheduled + s.waiting},
                           {"in_flight", s.claimed + s.running},
                           {"completed", s.completed},
                           {"failed", s.failed},
                           {"cancelled", s.cancelled},
                           {"oldest_s", s.oldest_runnable_age
                                            ? nlohmann::json(static_cast<double>(s.oldest_runnable_age->count()) / 1e6)
                                            : nlohmann::json(0)}};
      // Totals of the histograms: the page draws each interval's mean (difference of sums over difference
      // of counts).
      for (const queue_latency &l : m_db.latency())
        if (queues.contains(l.queue))
        {
          queues[l.queue][l.measure + "_jobs"] = l.jobs;
          queues[l.queue][l.measure + "_seconds"] = l.sum_seconds;
        }
      const double now = std::chrono::duration<double>(clock::now().time_since_epoch()).count();
      return nlohmann::json{{"t", now}, {"queues", queues}};
    }
    catch (const std::exception &e)
    {
      return std::nullopt; // a gap in the charts; the page shows the error of its own next call
    }
  }

  const web_serving m_settings;
  std::mutex m_session;
  connection m_db;
  const access_token m_token;
  const std::string m_csrf;
  std::set<std::string> m_hosts;

  std::mutex m_history_lock;
  std::condition_variable m_wake;
  std::deque<nlohmann::json> m_samples;
  bool m_stopping = false;
};

} // namespace

int serve_web(connection &db, const web_serving &w)
{
  const std::optional<listen_address> at = parse_listen(w.listen, 9188);
  if (!at)
    return k_exit_usage;
  const access_token token = read_access_token(w.token_file, "PGJQ_WEB_TOKEN");
  stop_signals signals;
  dashboard board(std::move(db), w, token);
  httplib::Server server;
  board.route(server);
  std::thread sampler([&] { board.sample_until_stopped(); });
  const int code = serve_until_stopped(server, signals, *at, token, "the dashboard",
                                       token.generated ? "/?token=" + token.value : "/",
                                       [&](int port) { board.allow_hosts(*at, port); });
  board.stop();
  sampler.join();
  return code;
}

} // namespace pgjq::cli
