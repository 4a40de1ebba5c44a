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
    if (!m_open)
      return opened(m_conn->begin_and_claim(m_worker_id, m_types, batch, m_w.options.queue));
    // If this throws, batch_lost() counts the batch as rolled back. That is exact unless only the claim
    // failed after the COMMIT (a queue dropped meanwhile, a privilege revoked): then the outcomes were
    // kept but are counted as abandoned.
    std::vector<job> next = m_conn->complete_commit_and_claim(m_succeeded, m_worker_id, m_types, batch,
                                                              m_w.options.queue);
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
    catch (const connection_lost &)
    {
      throw; // the batch went with the session
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
    if (held->savepoint)
      m_conn->execute("ROLLBACK TO SAVEPOINT pgjq_job; RELEASE SAVEPOINT pgjq_job");
    else if (aborted)
      throw pgjq::error("the batch's transaction was aborted outside a handler's savepoint: " + *error,
                        std::string());
    m_conn->fail_in_transaction(j.id, m_worker_id, *error);
    ++m_failed;
  }

  // Stopping: commit the outcomes of the last batch.
  void finish() override
  {
    if (!m_open)
      return;
    try
    {
      ensure_connection();
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
    if (!m_open)
      return;
    try
    {
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
    m_open = !jobs.empty(); // with none claimed, the client has closed the transaction again
    m_claimed = jobs.size();
    return jobs;
  }

  void committed()
  {
    m_w.completed += m_succeeded.size();
    m_w.failed += m_failed;
    m_w.released += m_unstarted;
    reset();
  }

  void reset()
  {
    m_open = false;
    m_claimed = 0;
    m_succeeded.clear();
    m_failed = 0;
    m_unstarted = 0;
  }

  bool m_open = false;                 // a batch's transaction is open on m_conn
  std::size_t m_claimed = 0;           // jobs it holds
  std::vector<std::int64_t> m_succeeded; // to be completed when it commits
  std::size_t m_failed = 0;            // recorded with fail_in_transaction in it
  std::size_t m_unstarted = 0;         // not run (stopping): released untouched by its commit
};

} // namespace

std::unique_ptr<detail::runner> detail::make_transaction_runner(worker::impl &w, std::string worker_id)
{
  return std::make_unique<transaction_runner>(w, std::move(worker_id));
}

} // namespace pgjq
