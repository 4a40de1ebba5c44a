// harness.mjs: what both peer programs share: command-line options, the clock, waiting for a count in the
// database, and the one JSON line each run prints (read by pgjq-bench, src/bench/report.cpp).
import pg from 'pg';
import { readFileSync } from 'node:fs';

// --name=value options over the given defaults (numbers stay numbers).
export function options(defaults) {
  const out = { ...defaults };
  for (const arg of process.argv.slice(2)) {
    const m = /^--([^=]+)=(.*)$/.exec(arg);
    if (m) out[m[1]] = m[2] !== '' && !Number.isNaN(Number(m[2])) ? Number(m[2]) : m[2];
  }
  return out;
}

export const seconds = () => Number(process.hrtime.bigint()) / 1e9;

export function installedVersion(pkg) {
  return JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url))).version;
}

// Polls `sql` (one row, one column `n`) until done(n), or until timeoutS; the time it held is the end of the
// measurement. The poll costs the server little next to the queue's own work (one count every 100 ms).
export async function waitUntil(conn, sql, done, timeoutS) {
  const client = new pg.Client({ connectionString: conn });
  await client.connect();
  const start = seconds();
  try {
    for (;;) {
      const n = Number((await client.query(sql)).rows[0].n);
      if (done(n)) return { n, at: seconds(), timedOut: false };
      if (seconds() - start > timeoutS) return { n, at: seconds(), timedOut: true };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await client.end();
  }
}

// The line pgjq-bench reads: enqueue, process and total rates of one run.
export function report(fields, jobs, completed, enqueueS, processS) {
  console.log(JSON.stringify({
    ...fields, jobs, completed,
    enqueue_s: +enqueueS.toFixed(3), enqueue_jobs_per_s: Math.round(jobs / enqueueS),
    process_s: +processS.toFixed(3), process_jobs_per_s: Math.round(completed / processS),
    total_jobs_per_s: Math.round(completed / (enqueueS + processS)),
  }));
}

export const timeoutSeconds = Number(process.env.PEER_TIMEOUT_S || 300);
