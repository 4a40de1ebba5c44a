// transaction_runner.cpp: the worker's runner for in-transaction claims (worker_options::in_transaction).
// A batch is claimed by BEGIN + claim_in_transaction and held by that transaction's row locks while its
// handlers run. Every outcome is recorded in the same transaction (a failure at once with
// fail_in_transaction, the successes together with complete_in_transaction), and that completion, COMMIT,
// BEGIN and the next claim go to the server in one round trip. A handler's own writes go through
// job_context::transaction() under a savepoint, so a failing handler's writes are undone while the rest of
// its batch stands.
#include "runner.hpp"

#include <libpq-fe.h>

namespace pgjq
{
namespace
{

class transaction_runner final : public detail::runner
{
public:
  using runner::runner;

private:
  std::vector<job> next_batch() override
  {
    const int batch = m_w.options.batch_size;
    if (!batch_open())
      return opened(m_conn->begin_and_claim(m_worker_id, m_types, batch, m_w.options.queue));
    // If this throws, batch_lost() counts the batch as rolled back. That is exact unless only the claim
    // failed after the COMMIT (a queue dropped meanwhile, a privilege revoked): then the outcomes were
    // kept but are counted as abandoned.
    std::vector<job> next =
        m_conn->complete_commit_and_claim(m_succeeded, m_worker_id, m_types, batch, m_w.options.queue);
    committed();
    return opened(std::move(next));
  }

  void process(const std::vector<job> &jobs) override
  {
    std::size_t next = 0;
    for (; next < jobs.size() && !m_w.stop.requested(); ++next)
      run_one(jobs[next]);
    // Shutting down: the jobs not started are left unreported, so the COMMIT hands them back untouched.
    m_unstarted += jobs.size() - next;
  }

  void run_one(const job &j)
  {
    auto held = std::make_shared<detail::held_job>(j.id, m_worker_id, /*in_transaction=*/true);
    job_context ctx(j, *m_conn, held, m_w.stop.flag());
    std::optional<std::string> error;
    try
    {
      m_w.handlers.at(j.type)(ctx);
    }
    catch (const connection_lost &e)
    {
      if (session_lost())
        throw;          // the batch went with the session
      error = e.what(); // a session of the handler's own: an ordinary failure of its job
    }
    catch (const std::exception &e)
    {
      error = *e.what() != '\0' ? e.what() : "the handler failed";
    }
    catch (...)
    {
      error = "the handler threw an exception that is not a std::exception";
    }
    const bool aborted = PQtransactionStatus(m_conn->native_handle()) == PQTRANS_INERROR;
    if (!error && aborted)
      error = "the handler returned with its transaction aborted by an SQL error";
    if (!error)
    {
      if (held->savepoint)
        m_conn->execute("RELEASE SAVEPOINT pgjq_job");
      m_succeeded.push_back(j.id);
      return;
    }
    // The failure is recorded under the job's savepoint: the handler's writes are undone, and so is a
    // report the server refuses.
    if (held->savepoint)
      m_conn->execute("ROLLBACK TO SAVEPOINT pgjq_job");
    else if (aborted)
      throw pgjq::error("the batch's transaction was aborted outside a handler's savepoint: " + *error, std::string());
    else
      m_conn->execute("SAVEPOINT pgjq_job");
    record_failure(j.id, *error);
  }

  // fail_in_transaction inside the job's open savepoint, which it releases. If the failure cannot be
  // recorded (the server refuses the message, say), the batch would be rolled back and, with no attempt
  // counted, its jobs claimed and run again forever; so it is recorded with the server's reason instead,
  // and only if that fails too is the job left unreported (runnable again, its attempt not counted).
  void record_failure(std::int64_t id, const std::string &message)
  {
    std::string reason = message;
    for (int attempt = 0; attempt < 2; ++attempt)
    {
      try
      {
        m_conn->fail_in_transaction(id, m_worker_id, reason);
        m_conn->execute("RELEASE SAVEPOINT pgjq_job");
        ++m_failed;
        return;
      }
      catch (const connection_lost &)
      {
        throw;
      }
      catch (const std::exception &e)
      {
        m_conn->execute("ROLLBACK TO SAVEPOINT pgjq_job");
        m_w.log("fail of job " + std::to_string(id) + " refused: " + e.what());
        reason = std::string("the handler failed; its message was refused: ") + e.what();
      }
    }
    m_conn->execute("RELEASE SAVEPOINT pgjq_job");
    ++m_unreported;
  }

  bool session_lost() const { return !m_conn->is_open() || PQstatus(m_conn->native_handle()) == CONNECTION_BAD; }

  // Stopping: commit the outcomes of the last batch.
  void finish() override
  {
    if (!batch_open())
      return;
    if (m_broken || session_lost())
    {
      batch_lost(); // a new session would commit nothing of the lost one's batch
      return;
    }
    try
    {
      m_conn->complete_and_commit(m_succeeded, m_worker_id);
      committed();
    }
    catch (const std::exception &e)
    {
      m_w.log("completion of the last batch failed, its jobs are runnable again: " + std::string(e.what()));
      batch_lost();
    }
  }

  // The server rolled the batch's transaction back (or will, with the lost session): its jobs are runnable
  // again, untouched, and a handler's writes are gone with it.
  void batch_lost() override
  {
    try
    {
      // even with no batch recorded as open: a claim that failed half-way must not stay open
      if (!m_broken && m_conn && m_conn->is_open() && PQtransactionStatus(m_conn->native_handle()) != PQTRANS_IDLE)
        m_conn->execute("ROLLBACK");
    }
    catch (const std::exception &)
    {
      m_broken = true; // the next ensure_connection reconnects
    }
    m_w.abandoned += m_claimed;
    reset();
  }

  std::vector<job> opened(std::vector<job> jobs)
  {
    // with none claimed, the client has already closed the transaction again
    m_claimed = jobs.size();
    return jobs;
  }

  void committed()
  {
    m_w.completed += m_succeeded.size();
    m_w.failed += m_failed;
    m_w.released += m_unstarted;
    m_w.abandoned += m_unreported;
    reset();
  }

  void reset()
  {
    m_claimed = 0;
    m_succeeded.clear();
    m_failed = 0;
    m_unstarted = 0;
    m_unreported = 0;
  }

  // A batch's transaction is open on m_conn exactly while it holds jobs.
  bool batch_open() const noexcept { return m_claimed > 0; }

  std::size_t m_claimed = 0;             // jobs the open transaction holds
  std::vector<std::int64_t> m_succeeded; // to be completed when it commits
  std::size_t m_failed = 0;              // recorded with fail_in_transaction in it
  std::size_t m_unstarted = 0;           // not run (stopping): released untouched by its commit
  std::size_t m_unreported = 0;          // failed, but the failure could not be recorded: released likewise
};

} // namespace

std::unique_ptr<detail::runner> detail::make_transaction_runner(worker::impl &w, std::string worker_id)
{
  return std::make_unique<transaction_runner>(w, std::move(worker_id));
}

} // namespace pgjq
