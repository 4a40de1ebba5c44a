// pgboss.mjs: pg-boss end to end: insert N no-op jobs in chunks, then work them off with its high-throughput
// settings (batches, local concurrency, burst fetching), timed until the database says all completed.
//   node pgboss.mjs --conn=postgresql://... --jobs=100000 --chunk=1000 --concurrency=10 --batch=100
import { PgBoss } from 'pg-boss';
import { options, seconds, installedVersion, waitUntil, report, timeoutSeconds } from './harness.mjs';

const o = options({ conn: '', jobs: 100000, chunk: 1000, concurrency: 10, batch: 100 });
const queue = 'bench';
const boss = new PgBoss({ connectionString: o.conn, max: o.concurrency + 4, schedule: false, supervise: true });
boss.on('error', (e) => console.error(`pg-boss: ${e.message}`));
await boss.start();
await boss.createQueue(queue);

const enqueueStart = seconds();
for (let first = 0; first < o.jobs; first += o.chunk) {
  const n = Math.min(o.chunk, o.jobs - first);
  await boss.insert(queue, Array.from({ length: n }, (_, k) => ({ data: { i: first + k, template: 'welcome' } })));
}
const enqueueS = seconds() - enqueueStart;

const processStart = seconds();
await boss.work(queue, {
  localConcurrency: o.concurrency, batchSize: o.batch, burstWhenBatchFull: o.batch > 1, pollingIntervalSeconds: 0.5,
}, async () => {});
const end = await waitUntil(o.conn, `SELECT count(*) AS n FROM pgboss.job WHERE name = '${queue}' AND state = 'completed'`,
  (n) => n >= o.jobs, timeoutSeconds);
await boss.stop({ graceful: true, timeout: 5000, close: true });

report({ peer: 'pg-boss', version: installedVersion('pg-boss'), concurrency: o.concurrency, batch: o.batch,
         timedOut: end.timedOut }, o.jobs, end.n, enqueueS, end.at - processStart);
process.exit(0);
