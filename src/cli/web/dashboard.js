// dashboard.js: the page of `pgjq web`. It reads the server's JSON calls every few seconds and draws them.
// Every value from the database reaches the page as text (text nodes, textContent), never as markup, so a
// payload holding <script> is shown and never run; the server's Content-Security-Policy forbids inline
// scripts besides. Actions are POSTs carrying the page's CSRF token in a header.
//
// What the page shows lives in its address (#open=job:12&queue=mail&state=failed): a job, workflow or queue
// opened, and the job search with its page. Links and the back button therefore work, and a refresh
// never moves what it shows elsewhere: a table under the pointer keeps its rows until the pointer leaves.
'use strict';

const meta = (name) => document.querySelector(`meta[name="${name}"]`).content;
const csrf = meta('pgjq-csrf');
const traceUrl = meta('pgjq-trace-url');
const refreshMs = Number(meta('pgjq-refresh-ms')) || 2000;
const SVG = 'http://www.w3.org/2000/svg';
const PAGE_SIZE = 50;
const SEARCH_KEYS = ['queue', 'state', 'type', 'payload', 'before'];
const UNFINISHED = ['waiting', 'pending', 'claimed', 'running'];

// What the last overview said: the role, and per queue whether it administers it (null: cannot say).
const known = { role: null, administers: {}, queues: [] };
const view = { previous: null, workflowDrawn: null, shownOpen: null };

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children)
    node.append(child instanceof Node ? child : document.createTextNode(child == null ? '' : String(child)));
  return node;
}
const cell = (value, cls) => el('td', cls ? { class: cls } : {}, value);
const num = (value) => cell(value, 'number');
const time = (value) => value || '-';

function age(seconds) {
  if (seconds == null) return '-';
  if (seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${Math.floor(seconds % 60)}s`;
  return `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m`;
}

function say(text, failed) {
  const box = document.getElementById('message');
  box.textContent = text;
  box.className = failed ? 'failed' : '';
  box.hidden = false;
}

async function api(path, options = {}) {
  const response = await fetch(path, { credentials: 'same-origin', ...options });
  let body = null;
  try {
    body = await response.json();
  } catch (e) {
    body = null;
  }
  if (!response.ok) throw new Error((body && body.error) || `${response.status} ${response.statusText}`);
  return body;
}

const post = (path, body) => api(path, {
  method: 'POST', headers: { 'X-PGJQ-CSRF': csrf, 'Content-Type': 'application/json' },
  body: body === undefined ? undefined : JSON.stringify(body),
});

async function act(path) {
  try {
    say((await post(path)).done, false);
  } catch (e) {
    say(e.message, true);
  }
  await refresh();
}

// The page's address ------------------------------------------------------------------------------------

function route() {
  return new URLSearchParams(location.hash.slice(1));
}
// The address with these keys changed (null or '' removes one).
function href(changes) {
  const r = route();
  for (const [key, value] of Object.entries(changes))
    if (value == null || value === '') r.delete(key);
    else r.set(key, value);
  return `#${r}`;
}
const go = (changes) => { location.hash = href(changes); };
function opened() {
  const [kind, ...rest] = (route().get('open') || '').split(':');
  return kind ? { kind, id: rest.join(':') } : null;
}
const link = (text, changes, attributes = {}) => el('a', { href: href(changes), ...attributes }, text);

// Tables --------------------------------------------------------------------------------------------------

// Replaces the table's rows, unless they are the same as shown, or the pointer is over the table and its
// rows would move (their keys differ): then they wait for the pointer to leave.
function fill(table, rows, signature) {
  const body = document.querySelector(`#${table} tbody`);
  if (signature !== undefined && body.dataset.signature === signature) return;
  const keys = (list) => list.map((r) => r.dataset.key || '').join(',');
  if (body.closest('table').matches(':hover') && keys([...body.children]) !== keys(rows)) {
    body.closest('table').dataset.held = 'true';
    return;
  }
  delete body.closest('table').dataset.held;
  body.replaceChildren(...rows);
  if (signature !== undefined) body.dataset.signature = signature;
}

// May this role act on the queue's jobs as an admin? (A database before 0.3.0 cannot say: offered.)
const administers = (queue) => known.administers[queue] !== false;

// Queues --------------------------------------------------------------------------------------------------

async function refreshQueues() {
  const o = await api('/api/overview');
  known.role = o.role;
  known.administers = o.administers || {};
  known.queues = o.queues.map((q) => q.queue);
  document.getElementById('connection').textContent = `${o.role} @ ${o.database}`;
  document.getElementById('updated').textContent = `updated ${o.at}`;
  document.getElementById('no-worker').hidden = o.maintenance_served !== false;
  const chooser = document.getElementById('job-queue');
  const choices = ['', ...known.queues];
  if ([...chooser.options].map((x) => x.value).join(',') !== choices.join(',')) {
    chooser.replaceChildren(...choices.map((q) => el('option', { value: q }, q || 'any')));
    chooser.value = route().get('queue') || '';
  }
  const now = Date.now();
  const before = view.previous;
  const latency = (queue, measure) => {
    const l = o.latency.find((x) => x.queue === queue && x.measure === measure);
    return l && l.jobs > 0 ? `${age(l.p50_seconds)} / ${age(l.p99_seconds)}` : '-';
  };
  const selected = route().get('queue');
  fill('queues', o.queues.map((q) => {
    const was = before && before.queues[q.queue];
    const elapsed = before ? (now - before.at) / 1000 : 0;
    const rate = (key) => (was && elapsed > 0 ? Math.max(0, (q[key] - was[key]) / elapsed).toFixed(1) : '-');
    const verb = q.paused ? 'resume' : 'pause';
    return el('tr', { 'data-key': q.queue, 'data-queue': q.queue, class: q.queue === selected ? 'selected' : '' },
      el('td', {}, link(q.queue, { open: `queue:${q.queue}` }, { 'data-action': 'open-queue', 'data-queue': q.queue })),
      num(q.pending), num(q.scheduled + q.waiting), num(q.claimed + q.running), num(rate('completed')),
      num(rate('failed')), num(q.completed),
      el('td', { class: 'number' }, link(q.failed, { queue: q.queue, state: 'failed', before: null })),
      num(q.cancelled), num(age(q.oldest_runnable_age_seconds)),
      num(latency(q.queue, 'wait')), num(latency(q.queue, 'run')),
      cell(q.paused ? 'paused' : 'active'),
      el('td', {}, ...(administers(q.queue) ? [el('button', {
        type: 'button', 'data-action': verb, 'data-queue': q.queue,
        onclick: () => act(`/api/queues/${encodeURIComponent(q.queue)}/${verb}`),
      }, verb)] : [])));
  }));
  view.previous = { at: now, queues: Object.fromEntries(o.queues.map((q) => [q.queue, q])) };
}

// The queue page: its settings (editable by its admins), its figures and the workers holding its jobs.
const SETTINGS = [
  ['max_running', 'jobs claimed or running at once, across workers (0 removes the cap)', 'count'],
  ['rate_limit', 'claims per rate interval, across workers (0 removes the limit)', 'count'],
  ['rate_interval_s', "the rate limit's interval, in seconds", 'seconds'],
  ['lease_s', 'how long a claim holds a job without a heartbeat, in seconds', 'seconds'],
  ['job_timeout_s', 'execution timeout of its jobs, in seconds (0 removes it)', 'seconds'],
  ['max_attempts', 'attempts before a job is dead-lettered', 'count'],
  ['retry_base_s', 'delay before the first retry, in seconds; doubles per attempt', 'seconds'],
  ['retry_cap_s', 'longest delay between retries, in seconds', 'seconds'],
  ['retention_s', 'how long finished jobs are kept, in seconds', 'seconds'],
  ['max_pending', 'unfinished jobs allowed before enqueues are refused (empty: no limit)', 'count'],
  ['group_concurrency', 'jobs of one group key live at once', 'count'],
  ['keep_completed', 'keep completed jobs for the retention (else deleted at once)', 'boolean'],
];

async function refreshQueue() {
  const panel = document.getElementById('queue-detail');
  const o = opened();
  if (!o || o.kind !== 'queue') {
    panel.hidden = true;
    return;
  }
  const shown = await api(`/api/queues/${encodeURIComponent(o.id)}`);
  const { settings: q, stats, workers } = shown;
  const mayChange = shown.administers !== false;
  document.getElementById('queue-name').textContent =
    `${q.queue} (${q.paused ? 'paused' : 'active'}${stats ? `, ${stats.pending} pending, ${stats.claimed + stats.running} in flight` : ''})`;
  const verb = q.paused ? 'resume' : 'pause';
  document.getElementById('queue-actions').replaceChildren(
    link('its failed jobs', { queue: q.queue, state: 'failed', before: null, open: null }),
    ' ', link('all its jobs', { queue: q.queue, state: null, before: null, open: null }),
    ...(mayChange ? [' ', el('button', { type: 'button', 'data-action': verb, 'data-queue': q.queue,
      onclick: () => act(`/api/queues/${encodeURIComponent(q.queue)}/${verb}`) }, verb)] : []));
  const form = document.getElementById('queue-settings');
  // The values are drawn again only when the database's changed, so that an edit in progress stays.
  const signature = JSON.stringify([q, mayChange]);
  if (form.dataset.signature !== signature) {
    form.dataset.signature = signature;
    fill('queue-settings-table', SETTINGS.map(([name, what, kind]) => {
      const value = q[name];
      const input = kind === 'boolean'
        ? el('select', { name, 'data-setting': name }, el('option', { value: 'true' }, 'yes'), el('option', { value: 'false' }, 'no'))
        : el('input', { name, 'data-setting': name, size: 10, inputmode: 'decimal', value: value == null ? '' : String(value) });
      if (kind === 'boolean') input.value = String(value);
      input.dataset.was = input.value;
      if (!mayChange) input.disabled = true;
      return el('tr', { 'data-key': name }, cell(name), el('td', {}, input), cell(what, 'note'));
    }));
    document.getElementById('queue-save').hidden = !mayChange;
    document.getElementById('queue-settings-note').textContent = mayChange
      ? 'Change a value and save: only the changed settings are sent.'
      : `Role ${known.role} does not administer this queue: its settings are shown, not changed.`;
  }
  fill('queue-workers', workers.map((w) => el('tr', { 'data-key': w.worker_id, 'data-worker': w.worker_id },
    cell(w.worker_id), cell(w.role || '-'), num(w.jobs), cell(time(w.oldest_claimed_at)),
    cell(time(w.first_lease_expires_at)))), JSON.stringify(workers));
  panel.hidden = false;
}

async function saveSettings(event) {
  event.preventDefault();
  const o = opened();
  const changed = {};
  for (const input of document.querySelectorAll('#queue-settings [data-setting]')) {
    if (input.value === input.dataset.was) continue;
    const [, , kind] = SETTINGS.find(([name]) => name === input.dataset.setting);
    const text = input.value.trim();
    if (kind === 'boolean') changed[input.dataset.setting] = text === 'true';
    else if (text === '' && input.dataset.setting === 'max_pending') changed.max_pending = null;
    else if (text === '' || !Number.isFinite(Number(text))) {
      say(`${input.dataset.setting} must be a number, not "${text}"`, true);
      return;
    } else changed[input.dataset.setting] = Number(text);
  }
  if (!Object.keys(changed).length) {
    say('nothing changed', false);
    return;
  }
  try {
    say((await post(`/api/queues/${encodeURIComponent(o.id)}/settings`, changed)).done, false);
    document.getElementById('queue-settings').dataset.signature = '';
  } catch (e) {
    say(e.message, true);
  }
  await refresh();
}

// A clock time for an axis: "14:05" (the browser's time zone, as the operator reads it).
const clockTime = (t) => new Date(t * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

// One chart: each series a polyline over the samples, scaled to the largest value shown, with its time axis
// (first, middle and last sample) and a legend naming each series in its colour with its last value.
function chart(title, unit, series) {
  const width = 300, height = 120, top = 12, axis = 14;
  const points = series.flatMap((s) => s.points);
  const figure = el('div', { class: 'chart' }, el('h3', {}, title));
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height + axis}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  const text = (x, y, content, anchor) => {
    const label = document.createElementNS(SVG, 'text');
    label.setAttribute('x', String(x));
    label.setAttribute('y', String(y));
    if (anchor) label.setAttribute('text-anchor', anchor);
    label.textContent = content;
    svg.append(label);
  };
  if (points.length > 1) {
    const t0 = Math.min(...points.map((p) => p[0])), t1 = Math.max(...points.map((p) => p[0]));
    const max = Math.max(1e-9, ...points.map((p) => p[1]));
    series.forEach((s, i) => {
      const line = document.createElementNS(SVG, 'polyline');
      line.setAttribute('class', `series-${i}`);
      line.setAttribute('points', s.points.map(([t, v]) =>
        `${(((t - t0) / Math.max(1e-9, t1 - t0)) * width).toFixed(1)},${(height - (v / max) * (height - top)).toFixed(1)}`).join(' '));
      svg.append(line);
    });
    text(2, 10, `max ${+max.toFixed(2)} ${unit}`);
    const tick = document.createElementNS(SVG, 'line');
    tick.setAttribute('x1', '0'); tick.setAttribute('x2', String(width));
    tick.setAttribute('y1', String(height)); tick.setAttribute('y2', String(height));
    tick.setAttribute('class', 'axis');
    svg.append(tick);
    text(1, height + axis - 2, clockTime(t0), 'start');
    text(width / 2, height + axis - 2, clockTime((t0 + t1) / 2), 'middle');
    text(width - 1, height + axis - 2, clockTime(t1), 'end');
  } else {
    text(width / 2, height / 2, 'collecting samples…', 'middle');
  }
  figure.append(svg, el('div', { class: 'legend' }, ...series.map((s, i) => {
    const last = s.points.length ? s.points[s.points.length - 1][1] : null;
    return el('span', { class: 'entry' }, el('span', { class: `swatch series-${i}` }),
      `${s.name}: ${last == null ? '-' : +last.toFixed(2)}`);
  })));
  return figure;
}

async function refreshCharts() {
  const h = await api('/api/history');
  const only = route().get('queue');
  const pick = (sample) => Object.entries(sample.queues).filter(([name]) => !only || name === only).map(([, q]) => q);
  const total = (sample, f) => pick(sample).reduce((sum, q) => sum + f(q), 0);
  const series = (f) => h.samples.map((s) => [s.t, total(s, f)]);
  const rate = (key) => h.samples.slice(1).map((s, i) => {
    const was = h.samples[i];
    return [s.t, Math.max(0, total(s, (q) => q[key]) - total(was, (q) => q[key])) / Math.max(1e-9, s.t - was.t)];
  });
  // Each interval's mean time of the jobs that finished in it: the histograms' sums and counts differenced.
  const mean = (measure) => h.samples.slice(1).flatMap((s, i) => {
    const jobs = total(s, (q) => q[`${measure}_jobs`] || 0) - total(h.samples[i], (q) => q[`${measure}_jobs`] || 0);
    const seconds = total(s, (q) => q[`${measure}_seconds`] || 0) - total(h.samples[i], (q) => q[`${measure}_seconds`] || 0);
    return jobs > 0 ? [[s.t, seconds / jobs]] : [];
  });
  document.getElementById('chart-scope').textContent = only ? `(queue ${only})` : '(all queues)';
  document.getElementById('charts').replaceChildren(
    // The database's samples (from before this `pgjq web` started) do not split the waiting jobs: "due now"
    // starts with the process's own.
    chart('Waiting to run', 'jobs', [{ name: 'waiting', points: series((q) => q.waiting) },
                                     { name: 'due now', points: h.samples.filter((s) => pick(s).every((q) => q.pending != null))
                                       .map((s) => [s.t, total(s, (q) => q.pending)]) }]),
    chart('Running', 'jobs', [{ name: 'claimed or running', points: series((q) => q.in_flight) }]),
    chart('Throughput', 'jobs/s', [{ name: 'completed/s', points: rate('completed') },
                                   { name: 'failed/s', points: rate('failed') }]),
    chart('Latency', 's', [{ name: 'mean wait', points: mean('wait') }, { name: 'mean run', points: mean('run') },
                           { name: 'oldest due', points: h.samples.map((s) => [s.t, Math.max(0, ...pick(s).map((q) => q.oldest_s))]) }]));
}

// Jobs: the search, its page, the actions on one job and on every job the search selects ---------------

const search = () => {
  const r = route();
  return Object.fromEntries(SEARCH_KEYS.filter((k) => r.get(k)).map((k) => [k, r.get(k)]));
};

function describe(s) {
  const parts = [s.state ? `${s.state} jobs` : 'jobs'];
  if (s.type) parts.push(`of type ${s.type}`);
  parts.push(s.queue ? `of queue ${s.queue}` : 'of every queue');
  if (s.payload) parts.push(`whose payload contains ${s.payload}`);
  return parts.join(' ');
}

async function refreshJobs() {
  const s = search();
  const query = new URLSearchParams({ ...s, limit: String(PAGE_SIZE) });
  document.getElementById('job-scope').textContent = `${describe(s)}${s.before ? `, older than job ${s.before}` : ''}`;
  const jobs = await api(`/api/jobs?${query}`);
  fill('jobs', jobs.map((j) => el('tr', { 'data-key': j.id, 'data-job': j.id },
    el('td', {}, link(j.id, { open: `job:${j.id}` }, { 'data-action': 'show', 'data-job': j.id })),
    cell(j.queue), cell(j.type), cell(j.status, `status-${j.status}`), num(`${j.attempts}/${j.max_attempts}`),
    cell(time(j.created_at)), cell(time(j.finished_at)), cell(j.last_error || '', 'error'),
    el('td', {}, ...jobActions(j)))), JSON.stringify([jobs, known.administers]));
  const older = document.getElementById('job-older');
  older.hidden = jobs.length < PAGE_SIZE;
  if (jobs.length) older.href = href({ before: jobs[jobs.length - 1].id });
  const newest = document.getElementById('job-newest');
  newest.hidden = !s.before;
  newest.href = href({ before: null });
  await refreshBulk(s);
}

// Retry is a queue admin's; a producer may cancel the jobs it enqueued (those it sees), so cancel is offered
// wherever a job is unfinished and the database decides.
function jobActions(j) {
  const buttons = [];
  if ((j.status === 'failed' || j.status === 'cancelled') && administers(j.queue))
    buttons.push(el('button', { type: 'button', 'data-action': 'retry', 'data-job': j.id, onclick: () => act(`/api/jobs/${j.id}/retry`) }, 'retry'));
  if (UNFINISHED.includes(j.status))
    buttons.push(el('button', { type: 'button', 'data-action': 'cancel', 'data-job': j.id, onclick: () => act(`/api/jobs/${j.id}/cancel`) }, 'cancel'));
  return buttons;
}

// What the selected jobs allow at once: retry failed jobs, cancel unfinished ones, delete finished ones, for
// a search by queue (and type and state), to the queue's admins.
function bulkActions(s) {
  if (!s.queue || s.payload || !s.state || !administers(s.queue)) return [];
  if (s.state === 'failed') return ['retry', 'delete'];
  if (UNFINISHED.includes(s.state)) return ['cancel'];
  return ['delete'];
}

const PAST = { retry: 'retried', cancel: 'cancelled', delete: 'deleted' };

async function refreshBulk(s) {
  const actions = bulkActions(s);
  const bar = document.getElementById('job-bulk');
  const signature = JSON.stringify([s, actions]);
  if (bar.dataset.signature === signature) return;
  bar.dataset.signature = signature;
  bar.replaceChildren(...actions.map((action) => el('button', {
    type: 'button', 'data-action': `bulk-${action}`, onclick: () => bulk(action, s),
  }, `${action} all ${describe(s)}`)));
}

// Counts what the search selects, asks with that count, then works through it request by request (each of
// at most 20 000 jobs, in transactions of 1000), showing the progress against the count.
async function bulk(action, s) {
  const filter = new URLSearchParams({ queue: s.queue, state: s.state, ...(s.type ? { type: s.type } : {}) });
  try {
    const counted = await api(`/api/jobs/count?${filter}`);
    if (counted.count === 0) {
      say(`no ${describe(s)}`, false);
      return;
    }
    const figure = counted.more ? `more than ${counted.count}` : String(counted.count);
    const what = describe(s).replace(/^(\S+ )?jobs/, (m) => `${figure} ${m}`);
    if (!window.confirm(`${action[0].toUpperCase()}${action.slice(1)} ${what}?`)) return;
    let done = 0;
    for (let more = true; more;) {
      const answer = await post(`/api/jobs/${action}?${filter}`);
      done += answer.jobs;
      more = answer.more;
      say(`${PAST[action]} ${done} of ${figure} jobs${more ? '…' : ''}`, false);
    }
  } catch (e) {
    say(e.message, true);
  }
  await refresh();
}

// The trace id of a W3C traceparent, linked to the tracing UI that `pgjq web --trace-url` names.
function traceLink(headers) {
  const parsed = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}/.exec(headers.traceparent || '');
  if (!parsed) return null;
  const id = parsed[1];
  if (!traceUrl) return el('span', { id: 'job-trace' }, id);
  return el('a', { id: 'job-trace', href: traceUrl.split('{trace_id}').join(id), target: '_blank', rel: 'noopener noreferrer' }, id);
}

async function refreshJob() {
  const panel = document.getElementById('job-detail');
  const o = opened();
  if (!o || o.kind !== 'job') {
    panel.hidden = true;
    return;
  }
  const j = await api(`/api/jobs/${encodeURIComponent(o.id)}`);
  document.getElementById('job-id').textContent = `${j.id} (${j.status})`;
  const fields = [['queue', link(j.queue, { open: `queue:${j.queue}` })], ['type', j.type], ['priority', j.priority],
    ['attempts', `${j.attempts} of ${j.max_attempts}`], ['enqueued', time(j.created_at)], ['due', time(j.run_at)],
    ['leased until', j.lease_expires_at && `${time(j.lease_expires_at)} by ${j.worker_id}`],
    ['progress', j.progress != null && `${j.progress}% ${j.current_stage || ''}`],
    ['finished', j.finished_at && `${time(j.finished_at)}${j.worker_id ? ` by ${j.worker_id}` : ''}`],
    ['unique key', j.unique_key], ['group key', j.group_key], ['last error', j.last_error],
    ['trace', traceLink(j.headers || {})],
    ...Object.entries(j.headers || {}).map(([name, value]) => [`header ${name}`, value])];
  document.getElementById('job-fields').replaceChildren(...fields.filter(([, v]) => v)
    .flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  const errors = j.errors || [];
  const dropped = errors.length ? errors[0].failures_not_kept : 0;
  document.getElementById('job-errors-note').textContent =
    errors.length ? `(${errors.length}${dropped ? `; ${dropped} older not kept` : ''})` : '(none)';
  fill('job-errors', errors.map((e) => el('tr', { 'data-key': e.failure },
    num(e.failure), num(e.attempt), cell(e.worker_id || '-'), cell(time(e.started_at)), cell(time(e.failed_at)),
    cell(e.error, 'error'))));
  document.getElementById('job-payload').textContent = JSON.stringify(j.payload, null, 2);
  document.getElementById('job-result').textContent = j.result == null ? '-' : JSON.stringify(j.result, null, 2);
  document.getElementById('job-actions').replaceChildren(...jobActions(j));
  panel.hidden = false;
}

// Workflows ---------------------------------------------------------------------------------------------

async function refreshWorkflows() {
  const note = document.getElementById('workflows-note');
  let workflows;
  try {
    workflows = await api('/api/workflows?limit=50');
    note.hidden = true;
  } catch (e) {
    // e.g. a database whose pgjq predates workflows (0.3.0): said here, the rest of the page goes on
    note.textContent = e.message;
    note.hidden = false;
    fill('workflows', []);
    return;
  }
  const o = opened();
  const shown = o && o.kind === 'workflow' ? Number(o.id) : null;
  fill('workflows', workflows.map((w) => el('tr', { 'data-key': w.id, 'data-workflow': w.id, class: w.id === shown ? 'selected' : '' },
    el('td', {}, link(w.id, { open: `workflow:${w.id}` }, { 'data-action': 'show', 'data-workflow': w.id })),
    cell(w.name), cell(w.key || ''), cell(w.status, `status-${w.status}`), num(`${w.steps_finished}/${w.steps_total}`),
    num(w.steps_failed), cell(w.started_by), cell(time(w.created_at)), cell(time(w.finished_at)),
    el('td', {}, ...workflowActions(w)))), JSON.stringify([workflows, shown, known.administers]));
}

// Cancel while it runs, retry once steps failed or were cancelled; each asks first, as both change many jobs.
// Offered to the role that started it and to roles that administer a queue (the database decides which).
function workflowActions(w) {
  if (w.started_by !== known.role && !Object.values(known.administers).some((a) => a !== false)) return [];
  const button = (action, question) => el('button', {
    type: 'button', 'data-action': action, 'data-workflow': w.id,
    onclick: () => {
      if (window.confirm(question)) act(`/api/workflows/${w.id}/${action}`);
    },
  }, action);
  const buttons = [];
  if (w.status === 'running' || w.status === 'waiting')
    buttons.push(button('cancel', `Cancel workflow ${w.id} (${w.name})? Its ${w.steps_total - w.steps_finished} unfinished steps are cancelled.`));
  if (w.status === 'failed' || w.status === 'cancelled' || w.steps_failed > 0)
    buttons.push(button('retry', `Retry workflow ${w.id} (${w.name})? Its failed and cancelled steps run again, and the steps after them wait for them again.`));
  return buttons;
}

async function refreshWorkflow() {
  const panel = document.getElementById('workflow-detail');
  const o = opened();
  if (!o || o.kind !== 'workflow') {
    panel.hidden = true;
    return;
  }
  const shown = await api(`/api/workflows/${encodeURIComponent(o.id)}`);
  // Drawn again only when something changed, so that a box under the pointer keeps its tooltip.
  const drawn = JSON.stringify([shown, known.administers]);
  if (drawn === view.workflowDrawn && !panel.hidden) return;
  view.workflowDrawn = drawn;
  const { workflow: w, steps } = shown;
  document.getElementById('workflow-id').textContent = `${w.id} ${w.name} (${w.status}, ${w.steps_finished} of ${w.steps_total} steps done)`;
  document.getElementById('workflow-actions').replaceChildren(...workflowActions(w));
  document.getElementById('workflow-graph').replaceChildren(graph(steps));
  fill('workflow-steps', steps.map((s) => el('tr', { 'data-key': s.name, 'data-step': s.name, 'data-state': s.status },
    cell(s.name),
    el('td', {}, link(s.job_id, { open: `job:${s.job_id}` })),
    cell(s.queue), cell(s.type), cell(s.status, `status-${s.status}`), num(`${s.attempts}/${s.max_attempts}`),
    cell(s.waiting_for || ''), cell(s.depends_on.join(', ')), cell(s.last_error || '', 'error'),
    cell(s.result == null ? '' : s.result, 'result'))));
  panel.hidden = false;
}

// Workflow graphs ---------------------------------------------------------------------------------------

const GRAPH_MAX_STEPS = 400; // beyond, the table alone lists them: a drawing that large shows nothing

// Each step's depth: 0 for one that waits for nothing, else one more than its deepest dependency.
function depths(steps) {
  const byName = new Map(steps.map((s) => [s.name, s]));
  const depth = new Map();
  const visit = (s, path) => {
    if (depth.has(s.name)) return depth.get(s.name);
    if (path.has(s.name)) return 0; // a cycle, which start_workflow refuses: drawn flat rather than looping
    path.add(s.name);
    const parents = s.depends_on.filter((n) => byName.has(n)).map((n) => visit(byName.get(n), path));
    path.delete(s.name);
    const d = parents.length ? Math.max(...parents) + 1 : 0;
    depth.set(s.name, d);
    return d;
  };
  steps.forEach((s) => visit(s, new Set()));
  return depth;
}

// The steps as boxes coloured by state, one column per depth (left to right), each column ordered by where
// its steps' dependencies stand (fewer crossings), and an arrow from each dependency to the step after it.
function graph(steps) {
  if (steps.length > GRAPH_MAX_STEPS)
    return el('p', { class: 'note' }, `${steps.length} steps: too many to draw; the table lists them.`);
  const W = 170, H = 44, GAP_X = 56, GAP_Y = 12, PAD = 8;
  const depth = depths(steps);
  const columns = [];
  steps.forEach((s) => (columns[depth.get(s.name)] ||= []).push(s));
  const row = new Map();
  columns.forEach((column) => {
    const weight = (s) => {
      const at = s.depends_on.filter((n) => row.has(n)).map((n) => row.get(n));
      return at.length ? at.reduce((a, b) => a + b, 0) / at.length : -1;
    };
    column.sort((a, b) => weight(a) - weight(b) || a.job_id - b.job_id);
    column.forEach((s, i) => row.set(s.name, i));
  });
  const tallest = Math.max(1, ...columns.map((c) => c.length));
  const place = new Map();
  columns.forEach((column, d) => {
    const offset = ((tallest - column.length) * (H + GAP_Y)) / 2;
    column.forEach((s, i) => place.set(s.name, { x: PAD + d * (W + GAP_X), y: PAD + offset + i * (H + GAP_Y) }));
  });
  const width = PAD * 2 + columns.length * (W + GAP_X) - GAP_X, height = PAD * 2 + tallest * (H + GAP_Y) - GAP_Y;
  const svg = svgEl('svg', { class: 'workflow-graph', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': `${steps.length} steps` });
  const defs = svgEl('defs');
  const marker = svgEl('marker', { id: 'workflow-arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: 'auto-start-reverse' });
  marker.append(svgEl('path', { d: 'M0,0 L10,5 L0,10 z' }));
  defs.append(marker);
  svg.append(defs);
  const byName = new Map(steps.map((s) => [s.name, s]));
  for (const s of steps)
    for (const parent of s.depends_on.filter((n) => place.has(n))) {
      const a = place.get(parent), b = place.get(s.name);
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mid = (x1 + x2) / 2;
      svg.append(svgEl('path', {
        class: `edge${byName.get(parent).status === 'completed' ? ' done' : ''}`, 'data-from': parent, 'data-to': s.name,
        d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`, 'marker-end': 'url(#workflow-arrow)',
      }));
    }
  for (const s of steps) {
    const { x, y } = place.get(s.name);
    const box = svgEl('g', { class: `step state-${s.status}`, 'data-step': s.name, 'data-state': s.status,
      transform: `translate(${x},${y})` });
    box.addEventListener('click', () => go({ open: `job:${s.job_id}` }));
    const tip = svgEl('title');
    tip.textContent = `${s.name}: ${s.status}${s.waiting_for ? `, waiting for ${s.waiting_for}` : ''} (job ${s.job_id})`;
    const name = svgEl('text', { x: 8, y: 18, class: 'name' });
    name.textContent = s.name.length > 24 ? `${s.name.slice(0, 23)}…` : s.name;
    const state = svgEl('text', { x: 8, y: 35, class: 'state' });
    state.textContent = [s.status, s.waiting_for, s.attempts > 1 ? `attempt ${s.attempts}/${s.max_attempts}` : null]
      .filter(Boolean).join(' · ');
    box.append(tip, svgEl('rect', { width: W, height: H, rx: 5 }), name, state);
    svg.append(box);
  }
  return el('div', { class: 'graph' }, svg);
}

function svgEl(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  return node;
}

async function refreshSchedules() {
  const schedules = await api('/api/schedules');
  fill('schedules', schedules.map((s) => el('tr', { 'data-key': s.name }, cell(s.name), cell(s.cron), cell(s.time_zone), cell(s.queue),
    cell(s.job_type), cell(s.next_run ? time(s.next_run) : (s.paused ? 'paused' : '-')), cell(time(s.last_run)),
    num(s.jobs_enqueued), cell(s.last_error || '', 'error'))));
}

async function refreshMaintenance() {
  const note = document.getElementById('maintenance-note');
  try {
    const duties = await api('/api/maintenance');
    note.hidden = true;
    fill('maintenance', duties.map((d) => el('tr', { 'data-key': `${d.database}/${d.duty}` }, cell(d.database), cell(d.state), cell(d.duty), num(d.runs),
      num(d.done), num(d.errors), cell(time(d.last_run)), cell(time(d.next_run)), cell(d.last_error || '', 'error'))));
  } catch (e) {
    note.textContent = e.message;
    note.hidden = false;
    fill('maintenance', []);
  }
}

let refreshing = null;
async function refresh() {
  if (refreshing) return refreshing;
  refreshing = (async () => {
    // The overview first: which queues this role administers decides the buttons the others draw.
    const first = await Promise.allSettled([refreshQueues()]);
    const results = first.concat(await Promise.allSettled([refreshCharts(), refreshJobs(), refreshJob(), refreshQueue(),
      refreshWorkflows(), refreshWorkflow(), refreshSchedules(), refreshMaintenance()]));
    const failure = results.find((r) => r.status === 'rejected');
    if (failure) say(failure.reason.message, true);
    document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
  })();
  try {
    await refreshing;
  } finally {
    refreshing = null;
  }
}

// A new address: the search form shows it, the close links keep the search, and a newly opened job,
// workflow or queue is scrolled into view.
async function navigate() {
  const r = route();
  for (const [id, key] of [['job-state', 'state'], ['job-queue', 'queue'], ['job-type', 'type'], ['job-payload-filter', 'payload']])
    document.getElementById(id).value = r.get(key) || '';
  for (const id of ['job-close', 'workflow-close', 'queue-close'])
    document.getElementById(id).href = href({ open: null });
  const o = opened();
  const key = o ? `${o.kind}:${o.id}` : null;
  const scroll = key !== view.shownOpen;
  view.shownOpen = key;
  view.workflowDrawn = null;
  await refresh();
  if (o && scroll) {
    const panel = document.getElementById(`${o.kind}-detail`);
    if (panel && !panel.hidden) panel.scrollIntoView({ block: 'start' });
  }
}

document.getElementById('job-search').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const id = String(form.get('id') || '').trim();
  if (id) {
    document.getElementById('job-goto').value = '';
    go({ open: `job:${id}` });
    return;
  }
  go({ state: form.get('state'), queue: form.get('queue'), type: String(form.get('type') || '').trim(),
    payload: String(form.get('payload') || '').trim(), before: null });
});
// A state or queue chosen searches at once, with what the other fields hold.
for (const id of ['job-state', 'job-queue'])
  document.getElementById(id).addEventListener('change', () => document.getElementById('job-search').requestSubmit());
document.getElementById('queue-settings').addEventListener('submit', saveSettings);
// A table held while the pointer was over it catches up as soon as the pointer leaves.
for (const table of document.querySelectorAll('table'))
  table.addEventListener('mouseleave', () => { if (table.dataset.held) refresh(); });
window.addEventListener('hashchange', navigate);
if (!location.hash) history.replaceState(null, '', '#state=failed');
navigate();
setInterval(refresh, refreshMs);
