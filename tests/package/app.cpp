// app.cpp: a tiny program built against the installed client, once through pkg-config and once through
// CMake's find_package(pgjq) (scripts/package_tests.sh). It uses the calls and the exception types a real
// program does, so a symbol or type information missing from the shared library fails the build or the run.
#include <pgjq/client.hpp>

#include <iostream>

int main(int argc, char **argv)
{
  if (argc != 2)
  {
    std::cerr << "usage: app CONNINFO\n";
    return 2;
  }
  try
  {
    pgjq::connection db(argv[1]);
    try
    {
      db.enqueue("t", {{"n", 1}}, pgjq::enqueue_options{"no-such-queue"});
      std::cerr << "an enqueue into a missing queue succeeded\n";
      return 1;
    }
    catch (const pgjq::unknown_queue &e)
    { // thrown inside the library, caught here: type information is shared
    }
    std::int64_t id = db.enqueue("t", {{"n", 1}});
    std::vector<pgjq::job> jobs = db.claim("app", {"t"}, 1);
    if (jobs.size() != 1 || jobs[0].id != id || jobs[0].payload()["n"] != 1)
    {
      std::cerr << "did not claim the job it enqueued\n";
      return 1;
    }
    db.complete(id, "app", nlohmann::json{{"ok", true}});
    std::optional<pgjq::job> done = db.get_job(id);
    if (!done || done->status != pgjq::job_status::completed)
    {
      std::cerr << "the job is not completed\n";
      return 1;
    }
    std::cout << "job " << id << " " << pgjq::to_string(done->status) << "\n";
    return 0;
  }
  catch (const pgjq::error &e)
  {
    std::cerr << "pgjq error " << e.sqlstate() << ": " << e.what() << "\n";
    return 1;
  }
}
