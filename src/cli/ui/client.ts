/**
 * The console's script, served by the console itself (no bundler, no CDN). It holds the tab's sign-in:
 * the printed address's `#token=` is taken out of the address at once (`history.replaceState`) and
 * traded by a POST for a session that lives in this tab's `sessionStorage` (the browser keeps it per
 * scheme, host and port: no other port, and no other site, can read it). Every request then carries
 * it in an `Authorization` header; pages are fetched and shown in place, links and forms included.
 * On top: the live view (server-sent events read from a fetch), a run followed as it goes on, the
 * chosen file read into the command box, and pictures and downloads fetched with the session.
 */
export const APP_JS = `
'use strict';
const KEY = 'maestro-ui-session';
const tabs = 'BroadcastChannel' in window ? new BroadcastChannel('maestro-ui') : undefined;
let session = sessionStorage.getItem(KEY) || '';
let page = new AbortController();

function el(tag, cls, text) { const e = document.createElement(tag); if (cls) e.className = cls; if (text) e.textContent = text; return e; }
function remember(id) { session = id; if (id) sessionStorage.setItem(KEY, id); else sessionStorage.removeItem(KEY); }
function here() { return location.pathname + location.search; }
function request(url, init) {
  const options = Object.assign({}, init || {});
  options.headers = Object.assign({}, options.headers || {}, session ? { Authorization: 'Bearer ' + session } : {});
  return fetch(url, options);
}

async function show(res, how) {
  const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
  if (res.status === 401) { remember(''); how = 'none'; }
  page.abort(); page = new AbortController();
  document.title = doc.title;
  for (const part of ['header', 'main']) {
    const next = doc.querySelector(part); const now = document.querySelector(part);
    if (next && now) now.replaceWith(document.adoptNode(next));
  }
  const url = new URL(res.url, location.href); const target = url.pathname + url.search;
  if (how === 'push' && target !== here()) history.pushState(null, '', target);
  if (how === 'replace') history.replaceState(null, '', target);
  start();
}
async function navigate(url, how) {
  try { await show(await request(url), how || 'push'); } catch (e) { problem('The console did not answer (' + e.message + ').'); }
}
function problem(text) {
  const main = document.querySelector('main'); const p = el('p', 'notice refused', text); p.setAttribute('role', 'alert'); main.prepend(p);
}
async function submit(form, submitter) {
  const data = new FormData(form);
  if (submitter && submitter.name) data.append(submitter.name, submitter.value);
  const action = form.getAttribute('action') || location.pathname;
  if ((form.getAttribute('method') || 'get').toLowerCase() === 'get') {
    const query = new URLSearchParams([...data].filter(([, v]) => v !== ''));
    return navigate(action + (query.size ? '?' + query : ''));
  }
  const body = form.enctype === 'multipart/form-data' ? data : new URLSearchParams(data);
  try {
    const res = await request(action, { method: 'POST', body });
    await show(res, res.redirected ? 'push' : 'none');
  } catch (e) { problem('The console did not answer (' + e.message + '); nothing may have changed.'); }
}

async function signIn(token) {
  const res = await fetch('/session', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token }) });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) {
    const box = document.getElementById('sign-in-problem');
    if (box) { box.textContent = answer.error || 'The console refused the sign-in.'; box.hidden = false; }
    return;
  }
  remember(answer.session);
  await navigate(here(), 'replace');
}
function askOtherTabs() {
  if (!tabs) return Promise.resolve('');
  return new Promise((resolve) => {
    const done = (id) => { tabs.removeEventListener('message', heard); resolve(id); };
    const heard = (m) => { if (m.data && m.data.session) done(m.data.session); };
    tabs.addEventListener('message', heard);
    tabs.postMessage({ ask: true });
    setTimeout(() => done(''), 400);
  });
}
if (tabs) tabs.addEventListener('message', (m) => { if (m.data && m.data.ask && session) tabs.postMessage({ session }); });

async function events(url, onEvent, signal) {
  while (!signal.aborted) {
    try {
      const res = await request(url, { signal });
      if (!res.ok || !res.body) throw new Error('status ' + res.status);
      onEvent('open', '');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf('\\n\\n')) >= 0) {
          const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          let event = 'message'; let data = '';
          for (const line of block.split('\\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim(); else if (line.startsWith('data:')) data += line.slice(5).trim();
          }
          onEvent(event, data);
        }
      }
    } catch (e) { if (signal.aborted) return; }
    onEvent('lost', '');
    await new Promise((r) => setTimeout(r, 2000));
  }
}

const ENDED_KEPT = 10;
const STEPS_KEPT = 12;
function liveRun(box, id) {
  let run = document.getElementById('run-' + id);
  if (!run) {
    run = el('section', 'live-run'); run.id = 'run-' + id; run.dataset.run = id;
    const h = el('h2'); const a = el('a', '', id); a.href = '/runs/' + encodeURIComponent(id);
    h.append(a, ' ', el('span', 'badge s-running', 'running'));
    run.append(h, el('p', 'task'), el('div', 'live-steps')); box.prepend(run);
  }
  // The task, asked once the run has a checkpoint to read it from (asked again with its next event until then).
  const task = run.querySelector('.task');
  if (!task.textContent && !run.dataset.asking) {
    run.dataset.asking = '1';
    request('/runs/' + encodeURIComponent(id) + '/status', { signal: page.signal })
      .then((r) => (r.ok ? r.json() : undefined)).then((s) => { if (s) task.textContent = s.task; })
      .catch(() => undefined).finally(() => { delete run.dataset.asking; });
  }
  return run;
}
function startLive() {
  const box = document.getElementById('live'); const state = document.getElementById('live-state'); const ended = document.getElementById('live-ended');
  if (!box) return;
  let ready = false;
  events('/live/events', (kind, data) => {
    if (kind === 'open') { ready = false; state.textContent = 'Watching the workspace: a council appears here as it works.'; }
    if (kind === 'ready') ready = true;
    if (kind === 'lost') state.textContent = 'The connection was lost; reconnecting…';
    if (kind === 'transcript') {
      const e = JSON.parse(data); const run = liveRun(box, e.run_id); const steps = run.querySelector('.live-steps');
      if (e.kind === 'run_started') steps.append(el('p', 'how', e.mode + ' · ' + e.personas.join(', ') + ' · ' + e.rounds + ' round(s)'));
      if (e.kind === 'step_finished') steps.append(stepLine(e));
      if (e.kind === 'knowledge') steps.append(el('p', '', e.persona + ' asked ' + e.action + ' ' + e.argument + ': ' + e.status));
      // A card keeps its last steps only; the run's page has them all.
      while (steps.children.length > STEPS_KEPT) steps.firstElementChild.remove();
    }
    if (kind === 'status') {
      const e = JSON.parse(data);
      if (e.status === 'running') { liveRun(box, e.run_id).dataset.status = 'running'; return; }
      // A run that paused or ended leaves the live cards; once watching, it is named under "Just now".
      const card = document.getElementById('run-' + e.run_id); if (card) card.remove();
      if (!ready || !ended) return;
      const line = el('li', ''); line.dataset.run = e.run_id; line.dataset.status = e.status;
      const a = el('a', '', e.run_id); a.href = '/runs/' + encodeURIComponent(e.run_id);
      line.append(a, ' ', el('span', 'badge s-' + e.status, e.status), ' ', (e.reason_code ? e.reason_code + ': ' : '') + (e.summary || ''));
      ended.prepend(line);
      while (ended.children.length > ENDED_KEPT) ended.lastElementChild.remove();
    }
  }, page.signal);
}
function stepLine(e) {
  const s = el('div', 'live-step'); s.dataset.step = e.step_id;
  const body = el('div', 'reply');
  // Rendered and screened by the console itself (model-written HTML arrives as text).
  if (e.reply_html) body.innerHTML = e.reply_html; else body.textContent = e.reply;
  s.append(el('strong', '', e.persona + ' · ' + e.step + ' · ' + e.model), body);
  return s;
}
function localTimes() {
  for (const t of document.querySelectorAll('time')) {
    const iso = t.getAttribute('datetime') || t.textContent; const at = new Date(iso);
    if (!iso || Number.isNaN(at.getTime())) continue;
    t.setAttribute('datetime', iso); t.title = iso;
    t.textContent = at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  }
  const tz = document.querySelector('input[name=tz]');
  if (tz) tz.value = String(new Date().getTimezoneOffset());
}
function followRun() {
  const box = document.querySelector('[data-follow]');
  if (!box) return;
  const id = box.dataset.follow; const steps = box.querySelector('.live-steps'); const state = box.querySelector('.follow-state');
  const moved = (status) => { if (status !== 'running') navigate(here(), 'none'); };
  events('/live/events', async (kind, data) => {
    if (kind === 'ready') {
      // It may have paused or ended between the page and the stream: ask once.
      const res = await request('/runs/' + encodeURIComponent(id) + '/status', { signal: page.signal }).catch(() => undefined);
      if (res && res.ok) moved((await res.json()).status);
    }
    if (kind === 'transcript') {
      const e = JSON.parse(data);
      if (e.run_id === id && e.kind === 'step_finished' && !steps.querySelector('[data-step="' + CSS.escape(e.step_id) + '"]')) steps.append(stepLine(e));
    }
    if (kind === 'status') { const e = JSON.parse(data); if (e.run_id === id) moved(e.status); }
    if (kind === 'lost') state.textContent = 'The connection was lost; reconnecting…';
  }, page.signal);
}
function readChosenFile() {
  const input = document.querySelector('.add-form input[type=file]'); const text = document.querySelector('.add-form textarea');
  const name = document.querySelector('.add-form input[name=name]');
  if (!input || !text) return;
  input.addEventListener('change', async () => {
    const file = input.files && input.files[0]; if (!file) return;
    text.value = await file.text(); if (name && !name.value) name.value = file.name;
  });
}
async function loadPictures() {
  for (const img of document.querySelectorAll('img[data-src]')) {
    const res = await request(img.dataset.src, { signal: page.signal }).catch(() => undefined);
    if (res && res.ok) img.src = URL.createObjectURL(await res.blob());
  }
}
async function download(link) {
  const res = await request(link.getAttribute('href'));
  if (!res.ok) return problem('The download was refused (' + res.status + ').');
  const a = el('a'); a.href = URL.createObjectURL(await res.blob()); a.download = link.dataset.download; a.click();
}
function start() {
  const form = document.getElementById('sign-in');
  if (form) form.addEventListener('submit', (e) => { e.preventDefault(); signIn(new FormData(form).get('token')); });
  const out = document.getElementById('sign-out');
  if (out) out.addEventListener('click', async () => { await request('/session', { method: 'DELETE' }).catch(() => undefined); remember(''); navigate(here(), 'none'); });
  localTimes(); startLive(); followRun(); readChosenFile(); loadPictures();
  document.documentElement.dataset.shown = form ? 'sign-in' : here();
}

document.addEventListener('click', (e) => {
  const a = e.target.closest ? e.target.closest('a[href]') : null;
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || a.target) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !session) return;
  e.preventDefault();
  if (a.dataset.download !== undefined) download(a); else navigate(url.pathname + url.search);
});
document.addEventListener('submit', (e) => {
  if (e.target.id === 'sign-in' || !session) return;
  e.preventDefault(); submit(e.target, e.submitter);
});
window.addEventListener('popstate', () => navigate(here(), 'none'));
document.addEventListener('DOMContentLoaded', async () => {
  start();
  const found = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (found) {
    history.replaceState(null, '', here());
    return signIn(decodeURIComponent(found[1]));
  }
  // A sign-in made while the other tabs were asked keeps its session: only a tab still without one takes theirs.
  if (!session) {
    const shared = await askOtherTabs();
    if (!session && shared) remember(shared);
  }
  if (session) navigate(here(), 'replace');
});
`;
