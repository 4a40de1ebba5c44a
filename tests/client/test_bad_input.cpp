// test_bad_input.cpp: the client refuses what it could not send unchanged, before it sends anything: a NUL
// byte (libpq takes C strings, so the text would end there), text that is not UTF-8, JSON values that JSON
// text cannot hold (NaN, Infinity, binary), and non-ASCII text on a session that does not speak UTF-8.
// "Nothing was sent" is checked in libpq's own protocol trace of the session, not assumed. And a timeout
// longer than the clock counts (milliseconds::max(), "forever") is kept, not wrapped into the past.
#include "fixture.hpp"

#include <cmath>
#include <cstdio>
#include <future>
#include <limits>
#include <mutex>
#include <random>

using namespace pgjq_test;

namespace
{

// A session of the test's own, which the client borrows, with libpq's protocol trace on from the moment
// the client gets it: every message the client sends (or receives) lands in the trace.
class traced_session
{
public:
  struct settings
  {
    const char *client_encoding = "UTF8";
    bool in_transaction = false; // BEGIN before the trace starts (for the calls that need a block)
    bool pooled = false;         // PgBouncer (PGJQ_POOLED_CONNINFO), with connection_options::pooled
  };

  traced_session() : traced_session(settings{}) {}
  explicit traced_session(const settings &s)
  {
    const std::string target = s.pooled ? pooled_conninfo() : conninfo();
    const char *keys[] = {"dbname", "client_encoding", nullptr};
    const char *values[] = {target.c_str(), s.client_encoding, nullptr};
    m_conn = PQconnectdbParams(keys, values, 1);
    BOOST_REQUIRE_MESSAGE(PQstatus(m_conn) == CONNECTION_OK, PQerrorMessage(m_conn));
    if (s.in_transaction)
      PQclear(PQexec(m_conn, "BEGIN"));
    m_trace = std::tmpfile();
    BOOST_REQUIRE(m_trace != nullptr);
    PQtrace(m_conn, m_trace);
    pgjq::connection_options o;
    o.pooled = s.pooled;
    m_client = std::make_unique<pgjq::connection>(m_conn, o);
  }
  traced_session(const traced_session &) = delete;
  traced_session &operator=(const traced_session &) = delete;
  ~traced_session()
  {
    m_client.reset();
    PQuntrace(m_conn);
    PQfinish(m_conn);
    std::fclose(m_trace);
  }

  pgjq::connection &client() { return *m_client; }
  PGconn *raw() { return m_conn; }
  // What libpq traced so far: empty when nothing went to the server or came back.
  std::string trace()
  {
    std::fflush(m_trace);
    std::string out;
    std::rewind(m_trace);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, m_trace)) > 0;)
      out.append(buf, n);
    std::fseek(m_trace, 0, SEEK_END);
    return out;
  }

  static std::string pooled_conninfo()
  {
    const char *value = std::getenv("PGJQ_POOLED_CONNINFO");
    BOOST_REQUIRE_MESSAGE(value != nullptr && *value != '\0', "PGJQ_POOLED_CONNINFO must name PgBouncer");
    return value;
  }

private:
  PGconn *m_conn = nullptr;
  std::FILE *m_trace = nullptr;
  std::unique_ptr<pgjq::connection> m_client;
};

// Requires that call throws pgjq::bad_argument with this SQLSTATE and a message naming the argument.
template <typename Call>
void expect_refused(const std::string &what, Call &&call, const std::string &argument, const std::string &sqlstate)
{
  try
  {
    call();
  }
  catch (const pgjq::bad_argument &e)
  {
    BOOST_TEST(e.sqlstate() == sqlstate, what << ": SQLSTATE " << e.sqlstate() << ": " << e.what());
    BOOST_TEST(std::string(e.what()).find(argument) != std::string::npos,
               what << ": the message does not name " << argument << ": " << e.what());
    return;
  }
  catch (const std::exception &e)
  {
    BOOST_ERROR(what << ": not a pgjq::bad_argument: " << e.what());
    return;
  }
  BOOST_ERROR(what << ": accepted");
}

// One text argument of one call: what the message must name, and the call with `bad` in its place.
struct text_argument
{
  const char *call;
  const char *argument;
  bool in_transaction;
  std::function<void(pgjq::connection &, const std::string &queue, const std::string &bad)> run;
};

std::vector<pgjq::job> jobs_in(pgjq::connection &db, const scoped_queue &q)
{
  pgjq::job_listing listing;
  listing.queue = q.name();
  return db.jobs(listing);
}

pgjq::step_options in(const std::string &queue)
{
  pgjq::step_options o;
  o.queue = queue;
  return o;
}

pgjq::enqueue_options into(const std::string &queue)
{
  pgjq::enqueue_options o;
  o.queue = queue;
  return o;
}

// Every text argument the API takes, by call.
const std::vector<text_argument> &text_arguments()
{
  using conn = pgjq::connection;
  using str = const std::string &;
  static const std::vector<text_argument> all = {
      {"enqueue", "job_type", false, [](conn &c, str q, str bad) { c.enqueue(bad, empty, into(q)); }},
      {"enqueue", "queue_name", false, [](conn &c, str, str bad) { c.enqueue("t", empty, into(bad)); }},
      {"enqueue", "unique_key", false,
       [](conn &c, str q, str bad)
       {
         pgjq::enqueue_options o = into(q);
         o.unique_key = bad;
         c.enqueue("t", empty, o);
       }},
      {"enqueue", "group_key", false,
       [](conn &c, str q, str bad)
       {
         pgjq::enqueue_options o = into(q);
         o.group_key = bad;
         c.enqueue("t", empty, o);
       }},
      {"enqueue_raw", "payload", false,
       [](conn &c, str q, str bad) { c.enqueue_raw("t", "{\"a\": \"" + bad + "\"}", into(q)); }},
      {"try_enqueue", "job_type", false, [](conn &c, str q, str bad) { c.try_enqueue(bad, empty, into(q)); }},
      {"enqueue_batch", "job_type", false, [](conn &c, str q, str bad) { c.enqueue_batch(bad, objects(2), into(q)); }},
      {"enqueue_batch", "unique_keys", false,
       [](conn &c, str q, str bad)
       {
         pgjq::enqueue_options o = into(q);
         o.unique_keys = {std::string("k"), bad};
         c.enqueue_batch("t", objects(2), o);
       }},
      {"enqueue_batch", "group_keys", false,
       [](conn &c, str q, str bad)
       {
         pgjq::enqueue_options o = into(q);
         o.group_keys = {std::nullopt, bad};
         c.enqueue_batch("t", objects(2), o);
       }},
      {"enqueue_batch_raw", "payloads", false,
       [](conn &c, str q, str bad) { c.enqueue_batch_raw("t", "[{}, {\"a\": \"" + bad + "\"}]", into(q)); }},
      {"claim", "worker_id", false, [](conn &c, str q, str bad) { c.claim(bad, {}, 1, q); }},
      {"claim", "job_types", false,
       [](conn &c, str q, str bad) {
         c.claim("w", {"t", bad}, 1, q);
       }},
      {"claim", "queue_name", false, [](conn &c, str, str bad) { c.claim("w", {}, 1, bad); }},
      {"complete_and_claim", "worker_id", false,
       [](conn &c, str q, str bad) { c.complete_and_claim(bad, {}, {}, 1, q); }},
      {"claim_in_transaction", "worker_id", true,
       [](conn &c, str q, str bad) { c.claim_in_transaction(bad, {}, 1, q); }},
      {"begin_and_claim", "worker_id", false, [](conn &c, str q, str bad) { c.begin_and_claim(bad, {}, 1, q); }},
      {"complete_in_transaction", "worker_id", true,
       [](conn &c, str, str bad) { c.complete_in_transaction({1}, bad); }},
      {"complete_and_commit", "worker_id", true, [](conn &c, str, str bad) { c.complete_and_commit({1}, bad); }},
      {"complete_commit_and_claim", "job_types", true,
       [](conn &c, str q, str bad) { c.complete_commit_and_claim({}, "w", {bad}, 1, q); }},
      {"fail_in_transaction", "error_message", true, [](conn &c, str, str bad) { c.fail_in_transaction(1, "w", bad); }},
      {"complete", "worker_id", false, [](conn &c, str, str bad) { c.complete(1, bad); }},
      {"complete_raw", "result", false, [](conn &c, str, str bad) { c.complete_raw(1, "w", "\"" + bad + "\""); }},
      {"complete_batch", "worker_id", false, [](conn &c, str, str bad) { c.complete_batch({1}, bad); }},
      {"fail", "worker_id", false, [](conn &c, str, str bad) { c.fail(1, bad, "boom"); }},
      {"fail", "error_message", false, [](conn &c, str, str bad) { c.fail(1, "w", bad); }},
      {"progress", "current_stage", false, [](conn &c, str, str bad) { c.progress(1, "w", 5, bad); }},
      {"heartbeat", "worker_id", false, [](conn &c, str, str bad) { c.heartbeat(1, bad); }},
      {"jobs", "queue_name", false,
       [](conn &c, str, str bad)
       {
         pgjq::job_listing l;
         l.queue = bad;
         c.jobs(l);
       }},
      {"jobs", "job_type", false,
       [](conn &c, str q, str bad)
       {
         pgjq::job_listing l;
         l.queue = q;
         l.job_type = bad;
         c.jobs(l);
       }},
      {"stats", "queue_name", false, [](conn &c, str, str bad) { c.stats(bad); }},
      {"create_queue", "queue_name", false, [](conn &c, str, str bad) { c.create_queue(bad); }},
      {"create_queue with settings", "queue_name", false,
       [](conn &c, str, str bad)
       {
         pgjq::queue_options o;
         o.max_pending = 10;
         c.create_queue(bad, o);
       }},
      {"alter_queue", "queue_name", false, [](conn &c, str, str bad) { c.alter_queue(bad, {}); }},
      {"drop_queue", "queue_name", false, [](conn &c, str, str bad) { c.drop_queue(bad); }},
      {"pause_queue", "queue_name", false, [](conn &c, str, str bad) { c.pause_queue(bad); }},
      {"resume_queue", "queue_name", false, [](conn &c, str, str bad) { c.resume_queue(bad); }},
      {"schedule", "schedule_name", false,
       [](conn &c, str q, str bad)
       {
         pgjq::schedule_options o;
         o.queue = q;
         c.schedule(bad, "@daily", "t", empty, o);
       }},
      {"schedule", "cron", false,
       [](conn &c, str q, str bad)
       {
         pgjq::schedule_options o;
         o.queue = q;
         c.schedule(q + "_s", bad, "t", empty, o);
       }},
      {"schedule", "job_type", false,
       [](conn &c, str q, str bad)
       {
         pgjq::schedule_options o;
         o.queue = q;
         c.schedule(q + "_s", "@daily", bad, empty, o);
       }},
      {"schedule", "queue_name", false,
       [](conn &c, str q, str bad)
       {
         pgjq::schedule_options o;
         o.queue = bad;
         c.schedule(q + "_s", "@daily", "t", empty, o);
       }},
      {"schedule", "time_zone", false,
       [](conn &c, str q, str bad)
       {
         pgjq::schedule_options o;
         o.queue = q;
         o.time_zone = bad;
         c.schedule(q + "_s", "@daily", "t", empty, o);
       }},
      {"unschedule", "schedule_name", false, [](conn &c, str, str bad) { c.unschedule(bad); }},
      {"pause_schedule", "schedule_name", false, [](conn &c, str, str bad) { c.pause_schedule(bad); }},
      {"resume_schedule", "schedule_name", false, [](conn &c, str, str bad) { c.resume_schedule(bad); }},
      {"get_schedule", "schedule_name", false, [](conn &c, str, str bad) { c.get_schedule(bad); }},
      {"next_firings", "cron", false, [](conn &c, str, str bad) { c.next_firings(bad, "UTC"); }},
      {"next_firings", "time_zone", false, [](conn &c, str, str bad) { c.next_firings("@daily", bad); }},
      {"retry_failed", "queue_name", false, [](conn &c, str, str bad) { c.retry_failed(bad); }},
      {"cancel_jobs", "job_type", false,
       [](conn &c, str q, str bad)
       {
         pgjq::job_filter f;
         f.job_type = bad;
         c.cancel_jobs(q, f);
       }},
      {"delete_jobs", "queue_name", false, [](conn &c, str, str bad) { c.delete_jobs(bad); }},
      {"start_workflow", "workflow_name", false,
       [](conn &c, str q, str bad) { c.start_workflow(pgjq::workflow_builder(bad).step("a", "t", empty, in(q))); }},
      {"start_workflow", "steps", false,
       [](conn &c, str q, str bad) { c.start_workflow(pgjq::workflow_builder("w").step(bad, "t", empty, in(q))); }},
      {"start_workflow", "steps", false,
       [](conn &c, str q, str bad) { c.start_workflow(pgjq::workflow_builder("w").step("a", bad, empty, in(q))); }},
      {"start_workflow", "steps", false,
       [](conn &c, str, str bad) { c.start_workflow(pgjq::workflow_builder("w").step("a", "t", empty, in(bad))); }},
      {"start_workflow", "steps", false,
       [](conn &c, str q, str bad)
       { c.start_workflow(pgjq::workflow_builder("w").step("a", "t", empty, in(q)).step(bad + "b", "t").after("a")); }},
      {"start_workflow", "workflow_key", false,
       [](conn &c, str q, str bad)
       { c.start_workflow(pgjq::workflow_builder("w").step("a", "t", empty, in(q)).key(bad)); }},
      {"add_steps", "worker_id", false,
       [](conn &c, str q, str bad) { c.add_steps(1, bad, pgjq::step_list().step("a", "t", empty, in(q))); }},
      {"add_steps", "steps", false,
       [](conn &c, str q, str bad) { c.add_steps(1, "w", pgjq::step_list().step("a", "t", empty, in(q)).after(bad)); }},
      {"signal", "event_name", false, [](conn &c, str q, str bad) { c.signal(bad, empty, q); }},
      {"signal", "queue_name", false, [](conn &c, str, str bad) { c.signal("e", empty, bad); }},
      {"step_results", "after_step", false, [](conn &c, str, str bad) { c.step_results(1, bad); }},
      {"checkpoint", "worker_id", false, [](conn &c, str, str bad) { c.checkpoint(1, bad, "n", 1); }},
      {"checkpoint", "name", false, [](conn &c, str, str bad) { c.checkpoint(1, "w", bad, 1); }},
      {"wait_for_event", "event_name", false, [](conn &c, str, str bad) { c.wait_for_event(1, "w", bad); }},
      {"sleep_until", "name", false, [](conn &c, str, str bad) { c.sleep_until(1, "w", bad, pgjq::clock::now()); }},
      {"listen", "channel", false, [](conn &c, str, str bad) { c.listen(bad); }},
      {"unlisten", "channel", false, [](conn &c, str, str bad) { c.unlisten(bad); }},
      {"execute", "sql", false, [](conn &c, str, str bad) { c.execute("SELECT '" + bad + "'"); }},
  };
  return all;
}

// Every text argument of every call, with `bad` (which holds `tail` after the fault) in its place: each
// must be refused as bad_argument with `sqlstate`, naming the argument, and nothing may reach the server.
void every_text_argument_refuses(const std::string &bad, const std::string &sqlstate)
{
  scoped_queue q;
  for (const text_argument &a : text_arguments())
  {
    const std::string what = std::string(a.call) + "'s " + a.argument;
    traced_session::settings s;
    s.in_transaction = a.in_transaction;
    traced_session session(s);
    expect_refused(
        what, [&] { a.run(session.client(), q.name(), bad); }, a.argument, sqlstate);
    BOOST_TEST(session.trace().empty(), what << ": the client sent something:\n" << session.trace());
  }
  pgjq::connection db(conninfo());
  BOOST_TEST(jobs_in(db, q).empty(), "a call enqueued a job");
}

// The JSON arguments (payload, payloads, result), each given `value` somewhere inside: each must be refused
// as bad_argument with `sqlstate`, naming the argument and where in it the value sits, before anything is sent.
void every_json_argument_refuses(const nlohmann::json &value, const std::string &sqlstate)
{
  scoped_queue q;
  const nlohmann::json nested = {{"a", {1, {{"b", value}}}}};
  const std::vector<nlohmann::json> batch = {empty, nested};
  struct json_call
  {
    const char *call;
    std::string names; // the argument and the place of the value in it
    std::function<void(pgjq::connection &)> run;
  };
  const std::vector<json_call> calls = {
      {"enqueue", "payload", [&](pgjq::connection &c) { c.enqueue("t", nested, q.into()); }},
      {"enqueue at the top", "payload", [&](pgjq::connection &c) { c.enqueue("t", value, q.into()); }},
      {"try_enqueue", "payload", [&](pgjq::connection &c) { c.try_enqueue("t", nested, q.into()); }},
      {"enqueue_batch", "payloads", [&](pgjq::connection &c) { c.enqueue_batch("t", batch, q.into()); }},
      {"complete", "result", [&](pgjq::connection &c) { c.complete(1, "w", nested); }},
      {"start_workflow", "steps at /1/payload",
       [&](pgjq::connection &c)
       {
         pgjq::step_options o;
         o.queue = q.name();
         c.start_workflow(pgjq::workflow_builder("w").step("a", "t", empty, o).step("b", "t", nested, o));
       }},
      {"add_steps", "steps at /0/payload",
       [&](pgjq::connection &c) { c.add_steps(1, "w", pgjq::step_list().step("b", "t", nested)); }},
      {"signal", "payload", [&](pgjq::connection &c) { c.signal("e", nested, q.name()); }},
      {"checkpoint", "value", [&](pgjq::connection &c) { c.checkpoint(1, "w", "n", nested); }},
      {"schedule", "payload",
       [&](pgjq::connection &c)
       {
         pgjq::schedule_options o;
         o.queue = q.name();
         c.schedule(q.name() + "_s", "@daily", "t", nested, o);
       }},
  };
  for (const json_call &call : calls)
  {
    traced_session session;
    expect_refused(
        call.call, [&] { call.run(session.client()); }, call.names, sqlstate);
    BOOST_TEST(session.trace().empty(), call.call << ": the client sent something:\n" << session.trace());
  }
  // Where the value sits, as a JSON pointer.
  traced_session session;
  expect_refused(
      "enqueue's place", [&] { session.client().enqueue("t", nested, q.into()); }, "/a/1/b", sqlstate);
  expect_refused(
      "enqueue_batch's place", [&] { session.client().enqueue_batch("t", batch, q.into()); }, "/1/a/1/b", sqlstate);
  pgjq::connection db(conninfo());
  BOOST_TEST(jobs_in(db, q).empty(), "a call enqueued a job");
  BOOST_TEST(!db.get_schedule(q.name() + "_s").has_value(), "the schedule was created");
  BOOST_TEST(scalar(db.native_handle(), "SELECT count(*) FROM pgjq.workflows WHERE workflow_name = 'w'") == 0,
             "a workflow was started");
}

const double not_a_number = std::numeric_limits<double>::quiet_NaN();
const double infinity = std::numeric_limits<double>::infinity();

} // namespace

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_AUTO_TEST_CASE(a_nul_byte_in_any_text_argument_is_refused_before_anything_is_sent)
{
  every_text_argument_refuses(std::string("ok\0tail", 7), "22021");
}

BOOST_AUTO_TEST_CASE(invalid_utf8_in_any_text_argument_is_refused_before_anything_is_sent)
{
  every_text_argument_refuses("ok\xff"
                              "tail",
                              "22021");
}

// The finding's example: the second key lost its tail, met the first, and enqueue returned the first job's id.
BOOST_AUTO_TEST_CASE(two_unique_keys_that_differ_after_a_nul_byte_do_not_collide)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  pgjq::enqueue_options first = q.into(), second = q.into();
  first.unique_key = std::string("key\0one", 7);
  second.unique_key = std::string("key\0two", 7);
  expect_refused(
      "first", [&] { db.enqueue("t", empty, first); }, "unique_key", "22021");
  expect_refused(
      "second", [&] { db.enqueue("t", empty, second); }, "unique_key", "22021");
  BOOST_TEST(jobs_in(db, q).empty());
}

BOOST_AUTO_TEST_CASE(a_nul_byte_in_a_conninfo_is_refused_instead_of_cutting_it)
{
  try
  {
    pgjq::connection cut(conninfo() + std::string(" \0 application_name=tail", 24));
    BOOST_ERROR("the conninfo was cut at its NUL byte and the session opened");
  }
  catch (const pgjq::bad_argument &e)
  {
    BOOST_TEST(e.sqlstate() == "22021");
    BOOST_TEST(std::string(e.what()).find("conninfo") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(nan_anywhere_in_a_payload_or_result_is_refused_before_anything_is_sent)
{
  every_json_argument_refuses(not_a_number, "22P02");
}

BOOST_AUTO_TEST_CASE(infinity_anywhere_in_a_payload_or_result_is_refused_before_anything_is_sent)
{
  every_json_argument_refuses(infinity, "22P02");
  every_json_argument_refuses(-infinity, "22P02");
}

// nlohmann::json would print a binary value as an object {"bytes": [...], "subtype": ...}.
BOOST_AUTO_TEST_CASE(a_binary_value_in_a_payload_is_refused_instead_of_becoming_an_object)
{
  every_json_argument_refuses(nlohmann::json::binary({1, 2, 3}), "22P02");
}

BOOST_AUTO_TEST_CASE(invalid_utf8_in_a_json_string_or_key_is_a_pgjq_error_before_anything_is_sent)
{
  every_json_argument_refuses("ok\xff", "22021");
  every_json_argument_refuses(nlohmann::json{{"ok\xc0\xaf", 1}}, "22021");
}

// JSON text may write NUL as \u0000, which jsonb (text underneath) cannot hold.
BOOST_AUTO_TEST_CASE(a_nul_character_in_a_json_string_is_refused_before_anything_is_sent)
{
  every_json_argument_refuses(std::string("ok\0tail", 7), "22021");
}

BOOST_AUTO_TEST_CASE(a_handlers_set_result_refuses_what_json_text_cannot_hold)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  pgjq::worker w(worker_options_for(q));
  std::mutex mutex;
  std::vector<std::string> refusals;
  w.on("t",
       [&](pgjq::job_context &job)
       {
         for (const nlohmann::json &bad : {nlohmann::json{{"x", not_a_number}}, nlohmann::json{{"x", "ok\xff"}}})
         {
           try
           {
             job.set_result(bad);
             std::lock_guard<std::mutex> lock(mutex);
             refusals.push_back("accepted");
           }
           catch (const pgjq::bad_argument &e)
           {
             std::lock_guard<std::mutex> lock(mutex);
             refusals.push_back(e.sqlstate() + " " + e.what());
           }
           catch (const std::exception &e)
           {
             std::lock_guard<std::mutex> lock(mutex);
             refusals.push_back(std::string("not a pgjq::bad_argument: ") + e.what());
           }
         }
       });
  {
    worker_thread t(w);
    BOOST_REQUIRE(wait_until([&] { return db.get_job(id)->status == pgjq::job_status::completed; }, 30s));
  }
  std::lock_guard<std::mutex> lock(mutex);
  BOOST_REQUIRE(refusals.size() == 2u);
  BOOST_TEST(refusals[0].rfind("22P02 ", 0) == 0u, refusals[0]);
  BOOST_TEST(refusals[1].rfind("22021 ", 0) == 0u, refusals[1]);
  for (const std::string &r : refusals)
    BOOST_TEST(r.find("result") != std::string::npos, r);
  BOOST_TEST(!db.get_job(id)->result_text.has_value(), "a refused result was stored");
}

// The pooled path sends with PQexecParams instead of a prepared statement: the same rule holds there.
BOOST_AUTO_TEST_CASE(a_pooled_connection_refuses_the_same_text_before_sending_it)
{
  scoped_queue q;
  traced_session::settings s;
  s.pooled = true;
  traced_session session(s);
  expect_refused(
      "pooled enqueue", [&] { session.client().enqueue(std::string("t\0ail", 5), empty, q.into()); }, "job_type",
      "22021");
  expect_refused(
      "pooled enqueue",
      [&] {
        session.client().enqueue("t", {{"x", not_a_number}}, q.into());
      },
      "payload", "22P02");
  BOOST_TEST(session.trace().empty(), session.trace());
}

// The client's UTF-8 check is held to the server's: random byte strings, some UTF-8 and some not, are
// accepted by the client exactly when the server's own conversion takes them, and refused unsent otherwise.
BOOST_AUTO_TEST_CASE(the_client_accepts_exactly_the_text_the_server_takes_as_utf8)
{
  const char *fixed = std::getenv("PGJQ_TEST_SEED");
  const std::uint64_t seed = fixed != nullptr ? std::stoull(fixed) : std::random_device{}();
  std::mt19937_64 random(seed);
  // Pieces around every edge of UTF-8: ASCII, NUL, each sequence length at its lowest and highest, overlong
  // forms, surrogates, beyond U+10FFFF, lone continuation bytes, bytes that never occur, and cut sequences.
  static const std::vector<std::string> pieces = {"a",
                                                  "~",
                                                  std::string(1, '\0'),
                                                  "\x7f",
                                                  "\xc2\x80",
                                                  "\xdf\xbf",
                                                  "\xe0\xa0\x80",
                                                  "\xed\x9f\xbf",
                                                  "\xee\x80\x80",
                                                  "\xef\xbf\xbf",
                                                  "\xf0\x90\x80\x80",
                                                  "\xf4\x8f\xbf\xbf",
                                                  "\xc0\xaf",
                                                  "\xc1\xbf",
                                                  "\xe0\x9f\xbf",
                                                  "\xed\xa0\x80",
                                                  "\xed\xbf\xbf",
                                                  "\xf0\x8f\xbf\xbf",
                                                  "\xf4\x90\x80\x80",
                                                  "\xf5\x80\x80\x80",
                                                  "\x80",
                                                  "\xbf",
                                                  "\xfe",
                                                  "\xff",
                                                  "\xc2",
                                                  "\xe2\x82",
                                                  "\xf0\x9f\x99",
                                                  "\xc3\xa9",
                                                  "\xf0\x9f\x99\x82"};
  std::uniform_int_distribution<int> length(1, 4);
  std::uniform_int_distribution<std::size_t> piece(0, pieces.size() - 1);
  pgjq::connection server(conninfo());
  int accepted = 0, refused = 0;
  for (int round = 0; round < 400; ++round)
  {
    std::string text;
    for (int n = length(random); n > 0; --n)
      text += pieces[piece(random)];
    std::string hex = "\\x";
    for (unsigned char c : text)
    {
      char byte[3];
      std::snprintf(byte, sizeof byte, "%02x", c);
      hex += byte;
    }
    PGresult *res = PQexecParams(server.native_handle(), "SELECT convert_from($1::bytea, 'UTF8')", 1, nullptr,
                                 std::vector<const char *>{hex.c_str()}.data(), nullptr, nullptr, 0);
    const bool server_takes_it = PQresultStatus(res) == PGRES_TUPLES_OK;
    PQclear(res);
    traced_session session;
    try
    {
      session.client().stats(text); // a call with no side effect, whose one argument is this text
      BOOST_TEST(server_takes_it, "seed " << seed << ": the client sent " << hex << ", which the server refuses");
      ++accepted;
    }
    catch (const pgjq::bad_argument &e)
    {
      BOOST_TEST(!server_takes_it, "seed " << seed << ": the client refused " << hex << ": " << e.what());
      BOOST_TEST(session.trace().empty(), "seed " << seed << ": " << hex << " was refused after sending");
      ++refused;
    }
  }
  BOOST_TEST(accepted > 0);
  BOOST_TEST(refused > 0);
}

BOOST_AUTO_TEST_CASE(multibyte_text_and_json_reach_the_server_unchanged)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::string type = "t\xc3\xa9\xf0\x9f\x99\x82\xf4\x8f\xbf\xbf";
  const nlohmann::json payload = {{"k\xc3\xa9", "v\xf0\x9f\x99\x82"}, {"n", 1.5}};
  const std::int64_t id = db.enqueue(type, payload, q.into());
  const std::optional<pgjq::job> j = db.get_job(id);
  BOOST_REQUIRE(j.has_value());
  BOOST_TEST(j->type == type);
  BOOST_TEST(j->payload() == payload);
}

// A borrowed session may speak another encoding: the server would read the client's UTF-8 bytes as that
// encoding and store other characters. ASCII reads the same in every encoding the server offers a client.
BOOST_AUTO_TEST_CASE(a_session_that_does_not_speak_utf8_refuses_non_ascii_text_before_sending_it)
{
  scoped_queue q;
  traced_session::settings s;
  s.client_encoding = "LATIN1";
  traced_session session(s);
  const auto refuses = [&](const std::string &what, const std::function<void()> &call)
  {
    try
    {
      call();
      BOOST_ERROR(what << ": accepted on a LATIN1 session");
    }
    catch (const pgjq::usage_error &e)
    {
      BOOST_TEST(std::string(e.what()).find("LATIN1") != std::string::npos, what << ": " << e.what());
    }
    catch (const std::exception &e)
    {
      BOOST_ERROR(what << ": not a pgjq::usage_error: " << e.what());
    }
  };
  refuses("job_type", [&] { session.client().enqueue("caf\xc3\xa9", empty, q.into()); });
  refuses("payload", [&] { session.client().enqueue("t", {{"name", "caf\xc3\xa9"}}, q.into()); });
  refuses("sql", [&] { session.client().execute("SELECT 'caf\xc3\xa9'"); });
  BOOST_TEST(session.trace().empty(), session.trace());
  const std::int64_t id = session.client().enqueue("plain", {{"name", "cafe"}}, q.into());
  pgjq::connection db(conninfo());
  BOOST_TEST(db.get_job(id)->type == "plain");
  BOOST_TEST(jobs_in(db, q).size() == 1u);
}

// milliseconds::max() in the steady clock's nanoseconds wraps round to -1 ms: the wait ended at once.
constexpr std::chrono::milliseconds forever = std::chrono::milliseconds::max();

BOOST_AUTO_TEST_CASE(a_wait_for_completion_of_milliseconds_max_waits_for_the_job)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  std::future<std::optional<pgjq::job>> waited = std::async(std::launch::async,
                                                            [&]
                                                            {
                                                              pgjq::connection waiter(conninfo());
                                                              return waiter.wait_for_completion(id, forever);
                                                            });
  // The wait must still be going on once it had time to read the job and sleep.
  BOOST_TEST((waited.wait_for(1500ms) == std::future_status::timeout), "the wait returned before the job ended");
  BOOST_REQUIRE(db.claim("w", {}, 1, q.name()).size() == 1u);
  db.complete(id, "w");
  BOOST_REQUIRE((waited.wait_for(30s) == std::future_status::ready));
  const std::optional<pgjq::job> done = waited.get();
  BOOST_REQUIRE(done.has_value());
  BOOST_TEST((done->status == pgjq::job_status::completed));
}

BOOST_AUTO_TEST_CASE(a_wait_for_notification_of_milliseconds_max_waits_for_the_notification)
{
  pgjq::connection listener(conninfo());
  const std::string channel = "pgjq_test_forever_" + std::to_string(getpid());
  listener.listen(channel);
  std::future<std::optional<pgjq::notification>> waited =
      std::async(std::launch::async, [&] { return listener.wait_for_notification(forever); });
  BOOST_TEST((waited.wait_for(1500ms) == std::future_status::timeout), "the wait returned without a notification");
  pgjq::connection sender(conninfo());
  sender.execute("NOTIFY " + channel + ", 'hello'");
  BOOST_REQUIRE((waited.wait_for(30s) == std::future_status::ready));
  const std::optional<pgjq::notification> n = waited.get();
  BOOST_REQUIRE(n.has_value());
  BOOST_TEST(n->payload == "hello");
}

BOOST_AUTO_TEST_CASE(a_worker_idle_timeout_of_milliseconds_max_sleeps_until_woken)
{
  scoped_queue q;
  pgjq::worker_options o = worker_options_for(q);
  o.idle_timeout = forever;
  pgjq::worker w(o);
  w.on("t", [](pgjq::job_context &) {});
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return w.stats().idle_waits >= 1; }, 30s));
  std::this_thread::sleep_for(1500ms); // a window in which a wrapped timeout claims again and again
  BOOST_TEST(w.stats().idle_waits == 1u, "the runner woke " << w.stats().idle_waits << " times with nothing to do");
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into()); // its NOTIFY wakes the runner
  BOOST_TEST(wait_until([&] { return db.get_job(id)->status == pgjq::job_status::completed; }, 30s));
  t.stop();
  BOOST_TEST(t.error().empty(), t.error());
}

BOOST_AUTO_TEST_CASE(a_heartbeat_interval_of_milliseconds_max_sends_no_heartbeats)
{
  scoped_queue q;
  pgjq::connection db(conninfo());
  const std::int64_t id = db.enqueue("t", empty, q.into());
  pgjq::worker_options o = worker_options_for(q);
  o.heartbeat_interval = forever;
  pgjq::worker w(o);
  std::atomic<bool> started{false}, let_go{false};
  w.on("t",
       [&](pgjq::job_context &)
       {
         started = true;
         while (!let_go)
           std::this_thread::sleep_for(10ms);
       });
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return started.load(); }, 30s));
  std::this_thread::sleep_for(2500ms); // the lease keeper looks every second
  BOOST_TEST(w.stats().heartbeats == 0u);
  let_go = true;
  BOOST_TEST(wait_until([&] { return db.get_job(id)->status == pgjq::job_status::completed; }, 30s));
}

BOOST_AUTO_TEST_CASE(a_reconnect_backoff_of_milliseconds_max_waits_instead_of_retrying_at_once)
{
  scoped_queue q;
  pgjq::worker_options o = worker_options_for(q);
  o.conninfo = "host=/nonexistent-pgjq-socket-dir connect_timeout=2";
  o.reconnect_min = forever;
  o.reconnect_max = forever;
  std::atomic<int> attempts{0};
  o.log = [&](const std::string &) { ++attempts; };
  pgjq::worker w(o);
  w.on("t", [](pgjq::job_context &) {});
  worker_thread t(w);
  BOOST_REQUIRE(wait_until([&] { return attempts.load() >= 1; }, 30s));
  std::this_thread::sleep_for(1500ms); // a window in which a wrapped backoff tries again and again
  BOOST_TEST(attempts.load() == 1, "the runner tried " << attempts.load() << " times");
  t.stop(); // the stop wakes the backoff's sleep
  BOOST_TEST(t.error().empty(), t.error());
}

BOOST_AUTO_TEST_SUITE_END()
