// The explorer's page: the view in the URL's fragment (#/lineage?column=...&dir=up&steps=3&asOf=),
// search, the drawing and the side panel. Every request goes to the explorer's own API.
import { api, APIError, query, type ColumnTags, type Config, type Direction, type Preview } from './api';
import { clear, el, short, visible } from './dom';
import { layout, warmUp } from './layout';
import { Model, type Box, type Link } from './model';
import * as panels from './panels';
import { Drawing } from './render';

const $ = <T extends Element>(id: string) => document.getElementById(id) as unknown as T;

interface View {
  column: string[];
  dataset?: string;
  dir: Direction;
  steps: number;
  asOf?: string;
}

let cfg: Config;
let model = new Model();
let view: View | null = null;
let drawing: Drawing;
let drawSeq = 0;
let tagsOf = new Map<string, ColumnTags>(); // the drawn columns' tags
let tagsOn = true; // false when the explorer has no tags (501)

function status(text: string, error = false) {
  const s = $<HTMLDivElement>('status');
  s.textContent = text;
  s.classList.toggle('error', error);
}

function side(open: boolean) {
  const el = $<HTMLElement>('side');
  const was = !el.hidden;
  el.hidden = !open;
  if (was !== open) drawing.fit(); // the canvas changed width
}

function panel(): HTMLElement {
  side(true);
  return $<HTMLElement>('panel');
}

// --- the URL fragment -----------------------------------------------------------------------

function parseHash(): { route: string; params: URLSearchParams } {
  const h = location.hash.replace(/^#\/?/, '');
  const [route, q] = h.split('?', 2);
  return { route: route || '', params: new URLSearchParams(q ?? '') };
}

function viewHash(v: View): string {
  return `#/lineage?${query({ column: v.column, dataset: v.dataset, dir: v.dir, steps: v.steps, asOf: v.asOf })}`;
}

function go(v: View) {
  const h = viewHash(v);
  if (location.hash === h) void load(v);
  else location.hash = h;
}

async function route() {
  const { route, params } = parseHash();
  if (route === 'lineage') {
    const v: View = {
      column: params.getAll('column'), dataset: params.get('dataset') ?? undefined,
      dir: params.get('dir') === 'down' ? 'down' : 'up',
      steps: Math.min(cfg.maxSteps, Math.max(1, Number(params.get('steps')) || cfg.defaultSteps)),
      asOf: params.get('asOf') ?? undefined,
    };
    await load(v);
  } else if (route === 'job') {
    await showJob(params.get('key') ?? '');
  } else if (route === 'tags') {
    await showTags();
  } else if (route === 'impact') {
    await showImpact({ column: params.get('column') ?? undefined, dataset: params.get('dataset') ?? undefined });
  } else if (route === 'sql') {
    panels.sql(panel(), cfg, actions);
  } else {
    panels.welcome(panel());
  }
}

function controls(v: View) {
  $<HTMLButtonElement>('dir-up').classList.toggle('on', v.dir === 'up');
  $<HTMLButtonElement>('dir-down').classList.toggle('on', v.dir === 'down');
  $<HTMLInputElement>('steps').value = String(v.steps);
  $<HTMLInputElement>('asof').value = v.asOf ?? '';
}

// --- lineage --------------------------------------------------------------------------------

async function load(v: View) {
  view = v;
  controls(v);
  const seq = ++drawSeq;
  const started = performance.now();
  status('reading the graph…');
  try {
    const sg = await api.lineage({ column: v.column.length ? v.column : undefined, dataset: v.dataset, dir: v.dir, steps: v.steps, asOf: v.asOf });
    if (seq !== drawSeq) return;
    model = new Model();
    for (const k of sg.from ?? []) model.roots.add(k);
    model.merge(sg);
    await redraw(seq, started, true);
    void loadTags(seq);
    const what = v.dataset ? short(v.dataset) : v.column.map(short).join(', ');
    document.title = `colline: ${v.dir === 'up' ? 'upstream' : 'downstream'} of ${what}`;
  } catch (err) {
    if (seq === drawSeq) status((err as Error).message, true);
  }
}

/**
 * Lays out and draws the model; records the time from the request to the drawing, and its parts
 * as performance measures (colline:answer, colline:layout, colline:svg) that the bench reads.
 */
async function redraw(seq: number, started: number, fit: boolean) {
  const answered = performance.now();
  const boxes = model.boxes();
  const links = model.links();
  status(`laying out ${boxes.length} tables…`);
  const l = await layout(boxes, links);
  if (seq !== drawSeq) return;
  const laidOut = performance.now();
  drawing.draw(l);
  if (fit) drawing.fit();
  const now = performance.now();
  performance.measure('colline:answer', { start: started, end: answered });
  performance.measure('colline:layout', { start: answered, end: laidOut });
  performance.measure('colline:svg', { start: laidOut, end: now });
  const ms = now - started;
  const cols = boxes.reduce((n, b) => n + b.columns.length, 0);
  document.body.dataset.drawn = String(seq);
  document.body.dataset.drawMs = ms.toFixed(0);
  document.body.dataset.drawnAt = now.toFixed(0); // since the navigation started
  const asOf = view?.asOf ? ` · as of ${view.asOf}` : '';
  status(`${boxes.length} tables, ${cols} columns, ${links.length} links${asOf}${model.truncated ? ' · cut at the size limit: ask for fewer steps or expand a box' : ''} · drawn in ${ms.toFixed(0)} ms`);
}

async function expand(b: Box, dir: Direction) {
  const seq = ++drawSeq;
  const started = performance.now();
  status(`one more step ${dir === 'up' ? 'upstream' : 'downstream'} of ${short(b.key)}…`);
  try {
    const sg = await api.lineage({ column: b.columns.map((c) => c.key).slice(0, 500), dir, steps: 1, asOf: view?.asOf });
    if (seq !== drawSeq) return;
    model.merge(sg);
    await redraw(seq, started, false);
    drawing.focusBox(b.key);
    void loadTags(seq);
  } catch (err) {
    status((err as Error).message, true);
  }
}

/** Puts the tags of the drawn columns on their rows (one request, at most 500 columns). */
async function loadTags(seq: number) {
  if (!tagsOn) return;
  const keys = model.boxes().filter((b) => !b.fresh).flatMap((b) => b.columns.map((c) => c.key)).slice(0, 500);
  if (keys.length === 0) return;
  try {
    const ans = await api.tagsOf(keys);
    if (seq !== drawSeq) return;
    tagsOf = new Map(ans.columns.map((c) => [c.column, c]));
    drawing.setTags(tagsOf);
    document.body.dataset.tagged = String(ans.columns.filter((c) => c.tags.length > 0).length);
  } catch (err) {
    if (err instanceof APIError && err.status === 501) tagsOn = false;
    else status(`tags: ${(err as Error).message}`, true);
  }
}

function collapse(b: Box) {
  if (model.collapsed.has(b.key)) model.collapsed.delete(b.key);
  else model.collapsed.add(b.key);
  const seq = ++drawSeq;
  void redraw(seq, performance.now(), false).then(() => {
    drawing.focusBox(b.key);
    drawing.setTags(tagsOf);
  });
}

async function preview(p: Preview) {
  const seq = ++drawSeq;
  const started = performance.now();
  model = new Model();
  const known = new Set(p.known);
  for (const d of p.lineage.datasets) if (!known.has(d.key)) model.fresh.add(d.key);
  for (const st of p.statements ?? []) {
    for (const t of st.inferred ?? []) model.inferred.add(t.key);
    if (st.outcome === 'tableLevel') for (const k of [...(st.reads ?? []), ...(st.writes ?? [])]) model.tablesOnly.add(k);
  }
  model.merge(p.lineage, { preview: true });
  if (p.downstream) model.merge(p.downstream);
  view = null;
  await redraw(seq, started, true);
  status(`SQL panel: ${p.events.length} statements, not run · ${$<HTMLDivElement>('status').textContent}`);
}

// --- side panel -----------------------------------------------------------------------------

const actions: panels.Actions = {
  lineage: (p) => go({ column: p.column ? [p.column] : [], dataset: p.dataset, dir: p.dir, steps: view?.steps ?? cfg.defaultSteps, asOf: view?.asOf }),
  impact: (p) => void showImpact(p),
  job: (key) => {
    location.hash = `#/job?${query({ key })}`;
  },
  preview: (p) => void preview(p),
  csv: (p) => api.impactCSV({ ...p, asOf: view?.asOf }),
  highlight: (path) => drawing.highlightPath(path),
  reach: (tag) => void showReach(tag),
};

async function showTags() {
  try {
    panels.tagList(panel(), (await api.tags()).tags, actions);
  } catch (err) {
    showError(err);
  }
}

async function showReach(tag: string) {
  const pn = panel();
  clear(pn);
  pn.append(el('p', { class: 'muted' }, `following ${visible(tag)} downstream…`));
  try {
    panels.tagReach(panel(), await api.tagReach(tag), actions);
  } catch (err) {
    showError(err);
  }
}

async function showColumn(key: string) {
  drawing.select(key);
  drawing.highlightPath();
  try {
    const [detail, tags] = await Promise.all([api.column(key), tagsOn ? api.tagsOf([key]).then((a) => a.columns[0]).catch(() => undefined) : undefined]);
    panels.column(panel(), detail, actions, tags);
  } catch (err) {
    showError(err);
  }
}

async function showBox(key: string) {
  try {
    panels.dataset(panel(), await api.dataset(key), actions);
  } catch (err) {
    showError(err);
  }
}

async function showJob(key: string) {
  try {
    panels.job(panel(), await api.job(key), actions);
  } catch (err) {
    showError(err);
  }
}

async function showImpact(p: { column?: string; dataset?: string }) {
  if (!p.column && !p.dataset) {
    const first = view?.column[0] ?? view?.dataset;
    if (!first) return showError(new Error('Pick a column first: the impact list is of a column or a table.'));
    p = view?.dataset ? { dataset: view.dataset } : { column: first };
  }
  const pn = panel();
  clear(pn);
  pn.append(el('p', { class: 'muted' }, 'walking downstream…'));
  try {
    panels.impact(panel(), await api.impact({ ...p, asOf: view?.asOf }), p, actions);
  } catch (err) {
    showError(err);
  }
}

function showLink(l: Link) {
  drawing.select();
  void panels.link(panel(), l, actions);
}

function showError(err: unknown) {
  const pn = panel();
  clear(pn);
  const e = err as Error;
  pn.append(el('p', { class: 'error' }, e instanceof APIError && e.status === 404 ? `Not in the graph: ${e.message}` : e.message));
}

// --- search ---------------------------------------------------------------------------------

function setupSearch() {
  const input = $<HTMLInputElement>('q');
  const hits = $<HTMLUListElement>('hits');
  let ctl: AbortController | null = null;
  let timer = 0;
  let active = -1;
  const close = () => {
    hits.hidden = true;
    active = -1;
  };
  const choose = (li: HTMLElement) => {
    close();
    input.blur();
    const { kind, key } = li.dataset;
    if (!key) return;
    if (kind === 'column') go({ column: [key], dir: view?.dir ?? 'up', steps: view?.steps ?? cfg.defaultSteps, asOf: view?.asOf });
    else if (kind === 'dataset') go({ column: [], dataset: key, dir: view?.dir ?? 'up', steps: view?.steps ?? cfg.defaultSteps, asOf: view?.asOf });
    else location.hash = `#/job?${query({ key })}`;
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    delete hits.dataset.query; // the list shown is not this text's answer (yet)
    timer = window.setTimeout(async () => {
      const q = input.value.trim();
      ctl?.abort();
      if (!q) return close();
      ctl = new AbortController();
      try {
        const ans = await api.search(q, ctl.signal);
        clear(hits);
        for (const h of ans.hits) {
          const li = el('li', { role: 'option', 'data-kind': h.kind, 'data-key': h.key, class: `hit hit-${h.kind}` },
            el('span', { class: 'kind' }, h.kind), el('span', { class: 'name' }, h.kind === 'column' ? `${short(h.dataset ?? '')}.${visible(h.name)}` : short(h.key)),
            el('span', { class: 'match' }, h.match));
          li.addEventListener('mousedown', (e) => {
            e.preventDefault();
            choose(li);
          });
          hits.append(li);
        }
        if (ans.hits.length === 0) hits.append(el('li', { class: 'none' }, `nothing named like “${visible(q)}”`));
        hits.hidden = false;
        hits.dataset.query = q;
        active = -1;
      } catch (err) {
        if ((err as Error).name !== 'AbortError') status((err as Error).message, true);
      }
    }, 150);
  });
  input.addEventListener('keydown', (e) => {
    const items = [...hits.querySelectorAll<HTMLElement>('li.hit')];
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      active = (active + (e.key === 'ArrowDown' ? 1 : -1) + items.length) % Math.max(1, items.length);
      items.forEach((li, i) => li.classList.toggle('active', i === active));
    } else if (e.key === 'Enter') {
      const li = items[Math.max(0, active)];
      if (li) choose(li);
    } else if (e.key === 'Escape') {
      close();
      input.blur();
    }
  });
  input.addEventListener('blur', () => window.setTimeout(close, 100));
}

// --- controls and keys ----------------------------------------------------------------------

function setupControls() {
  const change = (f: (v: View) => View) => {
    if (view) go(f(view));
  };
  $<HTMLButtonElement>('dir-up').addEventListener('click', () => change((v) => ({ ...v, dir: 'up' })));
  $<HTMLButtonElement>('dir-down').addEventListener('click', () => change((v) => ({ ...v, dir: 'down' })));
  $<HTMLInputElement>('steps').addEventListener('change', (e) => change((v) => ({ ...v, steps: Math.min(cfg.maxSteps, Math.max(1, Number((e.target as HTMLInputElement).value) || 1)) })));
  $<HTMLInputElement>('asof').addEventListener('change', (e) => change((v) => ({ ...v, asOf: (e.target as HTMLInputElement).value || undefined })));
  $<HTMLInputElement>('steps').max = String(cfg.maxSteps);
  $<HTMLButtonElement>('fit').addEventListener('click', () => drawing.fit());
  $<HTMLButtonElement>('impact').addEventListener('click', () => void showImpact({}));
  $<HTMLButtonElement>('sql').addEventListener('click', () => panels.sql(panel(), cfg, actions));
  $<HTMLButtonElement>('tags').addEventListener('click', () => void showTags());
  $<HTMLButtonElement>('close').addEventListener('click', () => side(false));
  document.addEventListener('keydown', (e) => {
    const t = e.target as HTMLElement;
    if (t.matches('input, textarea, select') || e.ctrlKey || e.metaKey || e.altKey) {
      if (e.key === 'Escape') t.blur();
      return;
    }
    const keys: Record<string, () => void> = {
      '/': () => $<HTMLInputElement>('q').focus(),
      f: () => drawing.fit(),
      '+': () => drawing.zoomAt(1.25),
      '=': () => drawing.zoomAt(1.25),
      '-': () => drawing.zoomAt(0.8),
      ArrowLeft: () => drawing.pan(60, 0),
      ArrowRight: () => drawing.pan(-60, 0),
      ArrowUp: () => drawing.pan(0, 60),
      ArrowDown: () => drawing.pan(0, -60),
      u: () => change((v) => ({ ...v, dir: 'up' })),
      d: () => change((v) => ({ ...v, dir: 'down' })),
      i: () => void showImpact({}),
      s: () => panels.sql(panel(), cfg, actions),
      t: () => void showTags(),
      Escape: () => {
        side(false);
        drawing.select();
      },
    };
    const f = keys[e.key];
    if (f) {
      e.preventDefault();
      f();
    }
  });
  window.addEventListener('resize', () => drawing.fit());
}

async function main() {
  drawing = new Drawing($<SVGSVGElement>('drawing'), $<SVGGElement>('viewport'), {
    column: (k) => void showColumn(k),
    box: (k) => void showBox(k),
    link: showLink,
    expand: (b, d) => void expand(b, d),
    collapse,
  });
  $<HTMLDivElement>('legend').append(panels.legend());
  const warm = warmUp();
  try {
    cfg = await api.config();
  } catch (err) {
    status(`the explorer's API does not answer: ${(err as Error).message}`, true);
    return;
  }
  setupSearch();
  setupControls();
  window.addEventListener('hashchange', () => void route());
  await Promise.all([route(), warm]);
  document.body.dataset.ready = 'true';
}

void main();
