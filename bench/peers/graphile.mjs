// graphile.mjs: graphile-worker end to end: add N no-op jobs in chunks, then run them off with its
// high-throughput settings (concurrency, a local queue, batched completion), timed until its jobs table is
// empty.
//   node graphile.mjs --conn=postgresql://... --jobs=100000 --chunk=1000 --concurrency=10 --localQueue=100
import { makeWorkerUtils, run, Logger } from 'graphile-worker';
import { options, seconds, installedVersion, waitUntil, report, timeoutSeconds } from './harness.mjs';

const o = options({ conn: '', jobs: 100000, chunk: 1000, concurrency: 10, localQueue: 100, completeDelay: 0 });
// It logs every job at info level: only warnings and errors here, so that logging does not skew the figure.
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`graphile-worker ${level}: ${message}`);
});
const utils = await makeWorkerUtils({ connectionString: o.conn, logger });
await utils.migrate();

const enqueueStart = seconds();
for (let first = 0; first < o.jobs; first += o.chunk) {
  const n = Math.min(o.chunk, o.jobs - first);
  await utils.addJobs(Array.from({ length: n }, (_, k) => ({ identifier: 'noop', payload: { i: first + k, template: 'welcome' } })));
}
const enqueueS = seconds() - enqueueStart;
await utils.release();

const processStart = seconds();
const runner = await run({
  connectionString: o.conn, concurrency: o.concurrency, maxPoolSize: o.concurrency + 2, noHandleSignals: true, logger,
  taskList: { noop: async () => {} },
  preset: { worker: { concurrentJobs: o.concurrency, localQueue: { size: o.localQueue }, completeJobBatchDelay: o.completeDelay } },
});
const end = await waitUntil(o.conn, 'SELECT count(*) AS n FROM graphile_worker._private_jobs', (n) => n === 0, timeoutSeconds);
await runner.stop();

report({ peer: 'graphile-worker', version: installedVersion('graphile-worker'), concurrency: o.concurrency,
         localQueue: o.localQueue, completeJobBatchDelay: o.completeDelay, timedOut: end.timedOut },
       o.jobs, o.jobs - end.n, enqueueS, end.at - processStart);
process.exit(0);
