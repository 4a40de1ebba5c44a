// dashboard.js: the page of `pgjq web`. It reads the server's JSON calls every few seconds and draws them.
// Every value from the database reaches the page as text (text nodes, textContent), never as markup, so a
// payload holding <script> is shown and never run; the server's Content-Security-Policy forbids inline
// scripts besides. Actions are POSTs carrying the page's CSRF token in a header.
'use strict';

const meta = (name) => document.querySelector(`meta[name="${name}"]`).content;
const csrf = meta('pgjq-csrf');
const refreshMs = Number(meta('pgjq-refresh-ms')) || 2000;
const SVG = 'http://www.w3.org/2000/svg';

const view = { queue: null, previous: null, shownJob: null, shownWorkflow: null, workflowDrawn: null };

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

async function act(path) {
  try {
    const body = await api(path, { method: 'POST', headers: { 'X-PGJQ-CSRF': csrf } });
    say(body.done, false);
  } catch (e) {
    say(e.message, true);
  }
  await refresh();
}

function fill(table, rows) {
  document.querySelector(`#${table} tbody`).replaceChildren(...rows);
}

function select(queue) {
  view.queue = view.queue === queue ? null : queue;
  refresh();
}

async function refreshQueues() {
  const o = await api('/api/overview');
  document.getElementById('connection').textContent = `${o.role} @ ${o.database}`;
  document.getElementById('updated').textContent = `updated ${o.at}`;
  document.getElementById('no-worker').hidden = o.maintenance_served !== false;
  const now = Date.now();
  const before = view.previous;
  const latency = (queue, measure) => {
    const l = o.latency.find((x) => x.queue === queue && x.measure === measure);
    return l && l.jobs > 0 ? `${age(l.p50_seconds)} / ${age(l.p99_seconds)}` : '-';
  };
  fill('queues', o.queues.map((q) => {
    const was = before && before.queues[q.queue];
    const elapsed = before ? (now - before.at) / 1000 : 0;
    const rate = (key) => (was && elapsed > 0 ? Math.max(0, (q[key] - was[key]) / elapsed).toFixed(1) : '-');
    const verb = q.paused ? 'resume' : 'pause';
    return el('tr', { 'data-queue': q.queue, class: q.queue === view.queue ? 'selected' : '' },
      el('td', {}, el('button', { class: 'link', type: 'button', onclick: () => select(q.queue) }, q.queue)),
      num(q.pending), num(q.scheduled + q.waiting), num(q.claimed + q.running), num(rate('completed')),
      num(rate('failed')), num(q.completed), num(q.failed), num(q.cancelled), num(age(q.oldest_runnable_age_seconds)),
      num(latency(q.queue, 'wait')), num(latency(q.queue, 'run')),
      cell(q.paused ? 'paused' : 'active'),
      el('td', {}, el('button', {
        type: 'button', 'data-action': verb, 'data-queue': q.queue,
        onclick: () => act(`/api/queues/${encodeURIComponent(q.queue)}/${verb}`),
      }, verb)));
  }));
  view.previous = { at: now, queues: Object.fromEntries(o.queues.map((q) => [q.queue, q])) };
}

// One chart: each series a polyline over the hour's samples, scaled to the largest value shown.
function chart(title, unit, series) {
  const width = 300, height = 120, top = 12;
  const points = series.flatMap((s) => s.points);
  const figure = el('div', { class: 'chart' }, el('h3', {}, title));
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('preserveAspectRatio', 'none');
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
    const label = document.createElementNS(SVG, 'text');
    label.setAttribute('x', '2');
    label.setAttribute('y', '10');
    label.textContent = `max ${+max.toFixed(2)} ${unit}`;
    svg.append(label);
  }
  figure.append(svg, el('div', { class: 'legend' }, series.map((s) => {
    const last = s.points.length ? s.points[s.points.length - 1][1] : null;
    return `${s.name}: ${last == null ? '-' : +last.toFixed(2)}`;
  }).join('   ')));
  return figure;
}

async function refreshCharts() {
  const h = await api('/api/history');
  const pick = (sample) => Object.entries(sample.queues).filter(([name]) => !view.queue || name === view.queue).map(([, q]) => q);
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
  document.getElementById('chart-scope').textContent = view.queue ? `(queue ${view.queue})` : '(all queues)';
  document.getElementById('charts').replaceChildren(
    chart('Waiting to run', 'jobs', [{ name: 'due now', points: series((q) => q.pending) },
                                     { name: 'later', points: series((q) => q.later) }]),
    chart('Running', 'jobs', [{ name: 'claimed or running', points: series((q) => q.in_flight) }]),
    chart('Throughput', 'jobs/s', [{ name: 'completed/s', points: rate('completed') },
                                   { name: 'failed/s', points: rate('failed') }]),
    chart('Latency', 's', [{ name: 'mean wait', points: mean('wait') }, { name: 'mean run', points: mean('run') },
                           { name: 'oldest due', points: h.samples.map((s) => [s.t, Math.max(0, ...pick(s).map((q) => q.oldest_s))]) }]));
}

async function refreshJobs() {
  const state = document.getElementById('job-state').value;
  const query = new URLSearchParams({ state, limit: '50' });
  if (view.queue) query.set('queue', view.queue);
  document.getElementById('job-scope').textContent = view.queue ? `in queue ${view.queue}` : 'in every queue';
  const jobs = await api(`/api/jobs?${query}`);
  fill('jobs', jobs.map((j) => el('tr', { 'data-job': j.id },
    el('td', {}, el('button', { class: 'link', type: 'button', 'data-action': 'show', 'data-job': j.id, onclick: () => showJob(j.id) }, j.id)),
    cell(j.queue), cell(j.type), num(`${j.attempts}/${j.max_attempts}`), cell(time(j.created_at)),
    cell(time(j.finished_at)), cell(j.last_error || '', 'error'), el('td', {}, ...jobActions(j)))));
}

function jobActions(j) {
  const buttons = [];
  if (j.status === 'failed' || j.status === 'cancelled')
    buttons.push(el('button', { type: 'button', 'data-action': 'retry', 'data-job': j.id, onclick: () => act(`/api/jobs/${j.id}/retry`) }, 'retry'));
  if (!['completed', 'failed', 'cancelled'].includes(j.status))
    buttons.push(el('button', { type: 'button', 'data-action': 'cancel', 'data-job': j.id, onclick: () => act(`/api/jobs/${j.id}/cancel`) }, 'cancel'));
  return buttons;
}

async function showJob(id) {
  view.shownJob = id;
  await refreshJob();
}

async function refreshJob() {
  const panel = document.getElementById('job-detail');
  if (view.shownJob == null) {
    panel.hidden = true;
    return;
  }
  const j = await api(`/api/jobs/${view.shownJob}`);
  document.getElementById('job-id').textContent = `${j.id} (${j.status})`;
  const fields = [['queue', j.queue], ['type', j.type], ['priority', j.priority],
    ['attempts', `${j.attempts} of ${j.max_attempts}`], ['enqueued', time(j.created_at)], ['due', time(j.run_at)],
    ['leased until', j.lease_expires_at && `${time(j.lease_expires_at)} by ${j.worker_id}`],
    ['progress', j.progress != null && `${j.progress}% ${j.current_stage || ''}`],
    ['finished', j.finished_at && `${time(j.finished_at)}${j.worker_id ? ` by ${j.worker_id}` : ''}`],
    ['unique key', j.unique_key], ['group key', j.group_key], ['last error', j.last_error]];
  document.getElementById('job-fields').replaceChildren(...fields.filter(([, v]) => v)
    .flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  const errors = j.errors || [];
  const dropped = errors.length ? errors[0].failures_not_kept : 0;
  document.getElementById('job-errors-note').textContent =
    errors.length ? `(${errors.length}${dropped ? `; ${dropped} older not kept` : ''})` : '(none)';
  fill('job-errors', errors.map((e) => el('tr', {},
    num(e.failure), num(e.attempt), cell(e.worker_id || '-'), cell(time(e.started_at)), cell(time(e.failed_at)),
    cell(e.error, 'error'))));
  document.getElementById('job-payload').textContent = JSON.stringify(j.payload, null, 2);
  document.getElementById('job-result').textContent = j.result == null ? '-' : JSON.stringify(j.result, null, 2);
  document.getElementById('job-actions').replaceChildren(...jobActions(j));
  panel.hidden = false;
}

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
  fill('workflows', workflows.map((w) => el('tr', { 'data-workflow': w.id, class: w.id === view.shownWorkflow ? 'selected' : '' },
    el('td', {}, el('button', { class: 'link', type: 'button', 'data-action': 'show', 'data-workflow': w.id, onclick: () => showWorkflow(w.id) }, w.id)),
    cell(w.name), cell(w.key || ''), cell(w.status, `status-${w.status}`), num(`${w.steps_finished}/${w.steps_total}`),
    num(w.steps_failed), cell(w.started_by), cell(time(w.created_at)), cell(time(w.finished_at)),
    el('td', {}, ...workflowActions(w)))));
}

// Cancel while it runs, retry once steps failed or were cancelled; each asks first, as both change many jobs.
// Shown to every role, as the job buttons are: the database decides, and refuses a role that is no admin.
function workflowActions(w) {
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

async function showWorkflow(id) {
  view.shownWorkflow = id;
  try {
    await refreshWorkflow();
  } catch (e) {
    say(e.message, true);
  }
}

// A step's job, in the job panel (further up the page).
async function showStepJob(id) {
  await showJob(id);
  document.getElementById('job-detail').scrollIntoView();
}

async function refreshWorkflow() {
  const panel = document.getElementById('workflow-detail');
  if (view.shownWorkflow == null) {
    panel.hidden = true;
    return;
  }
  const shown = await api(`/api/workflows/${view.shownWorkflow}`);
  // Drawn again only when something changed, so that a box under the pointer keeps its tooltip.
  const drawn = JSON.stringify(shown);
  if (drawn === view.workflowDrawn && !panel.hidden) return;
  view.workflowDrawn = drawn;
  const { workflow: w, steps } = shown;
  document.getElementById('workflow-id').textContent = `${w.id} ${w.name} (${w.status}, ${w.steps_finished} of ${w.steps_total} steps done)`;
  document.getElementById('workflow-actions').replaceChildren(...workflowActions(w));
  document.getElementById('workflow-graph').replaceChildren(graph(steps));
  fill('workflow-steps', steps.map((s) => el('tr', { 'data-step': s.name, 'data-state': s.status },
    cell(s.name),
    el('td', {}, el('button', { class: 'link', type: 'button', onclick: () => showStepJob(s.job_id) }, s.job_id)),
    cell(s.queue), cell(s.type), cell(s.status, `status-${s.status}`), num(`${s.attempts}/${s.max_attempts}`),
    cell(s.waiting_for || ''), cell(s.depends_on.join(', ')), cell(s.last_error || '', 'error'),
    cell(s.result == null ? '' : s.result, 'result'))));
  panel.hidden = false;
}

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
    box.addEventListener('click', () => showStepJob(s.job_id));
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
  fill('schedules', schedules.map((s) => el('tr', {}, cell(s.name), cell(s.cron), cell(s.time_zone), cell(s.queue),
    cell(s.job_type), cell(s.next_run ? time(s.next_run) : (s.paused ? 'paused' : '-')), cell(time(s.last_run)),
    num(s.jobs_enqueued), cell(s.last_error || '', 'error'))));
}

async function refreshMaintenance() {
  const note = document.getElementById('maintenance-note');
  try {
    const duties = await api('/api/maintenance');
    note.hidden = true;
    fill('maintenance', duties.map((d) => el('tr', {}, cell(d.database), cell(d.state), cell(d.duty), num(d.runs),
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
    const results = await Promise.allSettled([refreshQueues(), refreshCharts(), refreshJobs(), refreshJob(),
      refreshWorkflows(), refreshWorkflow(), refreshSchedules(), refreshMaintenance()]);
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

document.getElementById('job-state').addEventListener('change', refresh);
document.getElementById('job-close').addEventListener('click', () => {
  view.shownJob = null;
  refresh();
});
document.getElementById('workflow-close').addEventListener('click', () => {
  view.shownWorkflow = null;
  refresh();
});
refresh();
setInterval(refresh, refreshMs);
